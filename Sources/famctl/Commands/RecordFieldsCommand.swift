import Foundation
import Projections

/// `famctl record fields [--store S]`: each store's fields, from the
/// schema famctl checks records against, so that the fields can be found
/// without the docs.
enum RecordFieldsCommand: Command {
    static let spec = CommandSpec(
        path: ["record", "fields"],
        abstract: "List each store's fields: name, whether required, type and range, and the care subjects it is for.",
        discussion: """
            Read from the rules famctl checks records against; needs no home. Each store's
            rules between fields (an end after its start, a diaper wet or dirty…) follow
            its fields; docs/cli.md, "The ten stores", tells more.
            """,
        options: [.value("--store", "S", "Only this store.")])

    static func run(_ inv: Invocation) throws {
        let stores = try inv.value("--store").map { [try RecordInput.store($0)] } ?? StoreName.allCases
        if inv.json {
            Console.json(stores.map { store -> [String: Any] in
                let schema = StoreSchema.schema(for: store)
                return ["store": store.rawValue, "subjects": schema.subjects.map(\.rawValue).sorted(),
                        "fields": schema.allFields.map { ["name": $0.name, "required": $0.required, "type": described($0)] as [String: Any] },
                        "rules": rules(of: store)]
            })
            return
        }
        var lines: [String] = []
        for store in stores {
            let schema = StoreSchema.schema(for: store)
            let specs = schema.allFields
            let width = specs.map(\.name.count).max() ?? 0
            if !lines.isEmpty { lines.append("") }
            lines.append("\(store.rawValue): for \(SubjectKind.allCases.filter(schema.subjects.contains).map(\.rawValue).joined(separator: ", "))")
            for spec in specs {
                let name = spec.name.padding(toLength: width, withPad: " ", startingAt: 0)
                lines.append("  \(name)  \(spec.required ? "required" : "        ")  \(described(spec))")
            }
            for rule in rules(of: store) { lines.append("  rule: \(rule)") }
        }
        for line in lines { Console.out(line) }
    }

    /// A store's rules between fields, in words: its schema's, and the one
    /// `record add` checks against the other records (a baby's sleeps).
    static func rules(of store: StoreName) -> [String] {
        StoreSchema.schema(for: store).ruleTexts + (store == .sleep ? ["a sleep does not overlap another sleep of the same baby"] : [])
    }

    /// A field's type and range as `field=value` takes it, with its unit.
    static func described(_ spec: FieldSpec) -> String {
        let unit = spec.name.hasSuffix("Sec") ? "seconds" : ValueHint.FieldUnit(field: spec.name)?.name
        let inUnit = unit.map { ", in \($0)" } ?? ""
        switch spec.type {
        case .text(let max): return "text, at most \(max) characters"
        case .integer(let r): return "an integer from \(r.lowerBound) to \(r.upperBound)\(inUnit)"
        case .number(let r, let positive):
            return (positive ? "a number greater than 0 and at most \(FieldType.formatted(r.upperBound))"
                             : "a number from \(FieldType.formatted(r.lowerBound)) to \(FieldType.formatted(r.upperBound))") + inUnit
        case .bool: return "true or false"
        case .choice(let options): return "one of " + options.joined(separator: ", ")
        case .time: return "a time with its offset, 2026-12-04T08:00:00+01:00"
        case .textList(let min, let max): return "a list of texts, a,b,c (\(min) to \(max))"
        case .photoList(let max): return "photo ids, as 'photo add' writes them (at most \(max))"
        case .intList(let count, let r): return "\(count) integers from \(r.lowerBound) to \(r.upperBound), a,b,…"
        case .source: return "provider:recordId, where an imported record came from"
        }
    }
}
