import Envelope
import Foundation
import Projections

/// `famctl record add --focus FOCUS --store STORE [--at TIME] [field=value ...]`
enum RecordAddCommand: Command {
    static let spec = CommandSpec(
        path: ["record", "add"],
        abstract: "Record something that happened (a feeding, a sleep, a diaper…) and print its id.",
        discussion: """
            Values are typed: numbers, true/false; anything else is text. 'field=' with
            nothing after the '=' leaves the field empty. The event is signed, encrypted
            and durably appended before the id is printed.
            """,
        options: [
            .value("--focus", "FOCUS", "(required) The care subject: baby:<UUID>, pregnancy or newMom."),
            .value("--store", "STORE", "(required) One of: \(StoreName.list)."),
            .value("--at", "TIME", "When it happened, ISO-8601 with offset (default: now)."),
        ],
        positionals: [PositionalSpec(name: "field=value", help: "A field of the record.", optional: true, repeating: true)])

    static func run(_ inv: Invocation) throws {
        let focusText = try inv.required("--focus")
        guard let focus = FocusKey(focusText) else {
            throw CLIError.data("--focus '\(focusText)' is not a care subject", hint: "Use baby:<UUID>, pregnancy or newMom.")
        }
        let storeText = try inv.required("--store")
        guard StoreName(rawValue: storeText) != nil else {
            throw CLIError.data("--store '\(storeText)' is not a store", hint: "Use one of: \(StoreName.list).")
        }
        var at = TimeText.formatLocal(Date())
        if let a = inv.value("--at") {
            guard TimeText.parse(a) != nil, TimeText.hasOffset(a) else {
                throw CLIError.data("--at '\(a)' is not an ISO-8601 time with offset", hint: "For example 2026-11-29T08:15:00+01:00.")
            }
            at = a
        }
        let fields = try FieldAssignment.parse(inv.positionals)
        let event = RecordEvent(kind: .put, record: UUID(), store: storeText, focus: focus.description, at: at, fields: fields)

        let home = try Home.open(Home.location(inv))
        let (family, key) = try home.currentKey()
        let envs = try home.log.append(bodies: [event.body.encoded()], as: home.identity, family: family, key: key)
        let id = event.record.uuidString.lowercased()
        if inv.json {
            Console.json(["id": id, "event": envs[0].id.hex])
        } else {
            Console.out(id)
        }
    }
}

/// `field=value` arguments, typed without a schema: integers, decimals,
/// `true`/`false`, else text; an empty value is `null`.
enum FieldAssignment {
    static func parse(_ args: [String]) throws(CLIError) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for a in args {
            guard let eq = a.firstIndex(of: "=") else {
                throw .data("'\(a)' is not field=value")
            }
            let name = String(a[..<eq])
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), name.first!.isLetter else {
                throw .data("'\(name)' is not a field name (letters, digits and _, starting with a letter)")
            }
            guard out[name] == nil else { throw .data("field '\(name)' given twice") }
            out[name] = value(String(a[a.index(after: eq)...]))
        }
        return out
    }

    static func value(_ s: String) -> JSONValue {
        if s.isEmpty { return .null }
        if s == "true" { return .bool(true) }
        if s == "false" { return .bool(false) }
        if let i = Int64(s) { return .int(i) }
        if let d = Double(s), d.isFinite, s.contains(where: \.isNumber) { return .double(d) }
        return .string(s)
    }
}
