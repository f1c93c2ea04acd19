import Envelope
import Foundation

/// One field of a store: its name (the contract), type, and whether a record needs it.
public struct FieldSpec: Sendable {
    public let name: String
    public let type: FieldType
    public let required: Bool

    init(_ name: String, _ type: FieldType, required: Bool = false) {
        self.name = name
        self.type = type
        self.required = required
    }
}

/// A store's schema: which subjects it may hold, its fields, and its
/// cross-field rules. Fields not listed are kept as they are (forward
/// compatibility) and typed without a schema on the command line.
public struct StoreSchema: Sendable {
    /// The newest record schema this famctl reads: 2 is schema 1 with a
    /// put's `carried` (an `accept`'s; ``PreparedChange/carried(_:since:)``),
    /// 3 with a put's `focusSince` (a change that does not move the record;
    /// ``PreparedChange/keepingFocus(_:since:)``). Records are written at
    /// schema 1 otherwise.
    public static let version = 3
    /// How far in the future `at`/`start` may be at entry.
    public static let futureAllowance: TimeInterval = 5 * 60
    public static let maxDuration: TimeInterval = 24 * 3600

    public let store: StoreName
    public let subjects: Set<SubjectKind>
    public let fields: [FieldSpec]
    /// Cross-field rules over the complete (merged) field set.
    let rules: [Rule]

    /// A rule between a store's fields, with what it asks in words
    /// (`record fields` shows them).
    struct Rule: Sendable {
        let text: String
        let check: @Sendable (StoreName, [String: JSONValue]) -> ValidationError?
        init(_ text: String, _ check: @escaping @Sendable (StoreName, [String: JSONValue]) -> ValidationError?) {
            self.text = text
            self.check = check
        }
    }

    /// The rules between this store's fields, in words.
    public var ruleTexts: [String] { rules.map(\.text) }

    /// Fields every store accepts.
    static let common: [FieldSpec] = [
        FieldSpec("note", .text(maxLength: 2000)),
        FieldSpec("source", .source),
        // Any record takes photos (`photo add`): their ids, checked as such
        // in every store, not only those whose table names them.
        FieldSpec("photos", .photoList(maxCount: 10)),
    ]

    /// Its own fields, then those every store takes (``common``) that it
    /// does not define itself, as ``field(_:)`` finds them.
    public var allFields: [FieldSpec] { fields + Self.common.filter { c in !fields.contains { $0.name == c.name } } }

    public func field(_ name: String) -> FieldSpec? { (fields + Self.common).first { $0.name == name } }

    /// The names of every field this store defines, its own and the common ones.
    public var fieldNames: [String] { (fields + Self.common).map(\.name) }

    /// Types a `field=value` text by this schema; unknown fields are typed
    /// generically (integers, decimals, true/false, else text).
    public func parse(field name: String, text: String) throws(ValidationError) -> JSONValue {
        if text.isEmpty { return .null }
        guard let spec = field(name) else { return Self.generic(text) }
        // A number that would be rounded (or become 0) is refused as such,
        // not stored rounded nor called out of range.
        if case .number = spec.type, DecimalText.isDecimal(text), JSONValue.firstInexactNumber(in: Array(text.utf8)) != nil {
            let why = JSONValue.inexactReason(text)
            throw ValidationError(store: store.rawValue, field: name,
                                  rule: "\(text) cannot be kept as written (\(why.reason))\(why.fewerDigits ? "; give fewer digits" : "")")
        }
        guard let v = spec.type.parse(text) else {
            // `37,4`: a decimal comma, as many locales write it.
            if case .number = spec.type, let comma = text.firstIndex(of: ","), text.filter({ $0 == "," }).count == 1,
               DecimalText.isDecimal(text.replacingCharacters(in: comma...comma, with: ".")) {
                let point = text.replacingCharacters(in: comma...comma, with: ".")
                // Three digits after it: a thousands separator as likely (`1,000` IU).
                if text[text.index(after: comma)...].count == 3 {
                    throw ValidationError(store: store.rawValue, field: name,
                                          rule: "must be \(spec.type.expectation), without a comma: \(text.replacingOccurrences(of: ",", with: "")) for \(text) as a whole number, "
                                              + "or \(DecimalText.parse(point).map { JSONValue.double($0).jsonText } ?? point) for a decimal comma; not \(text)")
                }
                throw ValidationError(store: store.rawValue, field: name,
                                      rule: "must be \(spec.type.expectation), written with a decimal point: \(point), not \(text)")
            }
            throw ValidationError(store: store.rawValue, field: name, rule: "must be \(spec.type.expectation)")
        }
        return v
    }

    /// A field the store does not define, typed from its text: `true`,
    /// `false`, or a number when it reads back as typed; anything else
    /// (`007`, `1.50`, `1e3`, digits beyond a 64-bit integer, a number too
    /// small for a double to keep exactly, `1e-310`) stays the text given,
    /// so that an unknown field keeps what was written (and its export is
    /// imported again: the store files' reader refuses such a number).
    static func generic(_ s: String) -> JSONValue {
        if s == "true" { return .bool(true) }
        if s == "false" { return .bool(false) }
        if let i = Int64(s), String(i) == s { return .int(i) }
        if let d = DecimalText.parse(s), JSONValue.double(d).jsonText == s, JSONValue.firstInexactNumber(in: Array(s.utf8)) == nil { return .double(d) }
        return .string(s)
    }

    /// Checks a complete record: every field's type and range, required
    /// fields, the subject kind, the entry-time rules and the cross-field rules.
    /// Throws the first of ``violations(fields:focus:at:now:)``.
    ///
    /// - Parameters:
    ///   - fields: the record's fields after the change (cleared fields absent).
    ///   - at: the record's `at`, when it parsed (the caller reports one that does not).
    ///   - now: the entry time; `nil` skips the "not in the future" rule (merges, imports of old data still check it).
    public func validate(fields: [String: JSONValue], focus: FocusKey, at: Date?, now: Date?) throws(ValidationError) {
        if let first = violations(fields: fields, focus: focus, at: at, now: now).first { throw first }
    }

    /// How deep a field's arrays and objects may nest. The event's body
    /// and the store files wrap a value in levels of their own, and their
    /// reader takes 256 in all (`JSONParser.maximumDepth`): a value allowed
    /// deeper was written, then refused by every device reading the event
    /// (and by a rebuild, on the writer's own), and its export refused by
    /// `import stores`. No care record comes near.
    public static let maximumNesting = 64

    /// The depth of `value`'s arrays and objects: 0 for a plain value.
    public static func nesting(_ value: JSONValue) -> Int {
        switch value {
        case .array(let a): 1 + (a.map(nesting).max() ?? 0)
        case .object(let o): 1 + (o.values.map(nesting).max() ?? 0)
        default: 0
        }
    }

    /// Every rule of this store the record breaks, in the order
    /// ``validate(fields:focus:at:now:)`` checks them: the subject kind, each
    /// field's type and range (by name), the required fields, the entry-time
    /// rules, the cross-field rules. Empty for a valid record. A merged
    /// record may break some (two concurrent updates may each be valid and
    /// not together).
    public func violations(fields: [String: JSONValue], focus: FocusKey, at: Date?, now: Date?) -> [ValidationError] {
        let s = store.rawValue
        var out: [ValidationError] = []
        if !subjects.contains(SubjectKind(focus)) {
            let allowed = SubjectKind.allCases.filter { subjects.contains($0) }.map(\.rawValue).joined(separator: ", ")
            out.append(ValidationError(store: s, field: "focus", rule: "\(s) records are for \(allowed), not \(SubjectKind(focus).rawValue)"))
        }
        for spec in fields.keys.sorted().compactMap({ field($0) }) {
            if let why = spec.type.violation(fields[spec.name]!) { out.append(ValidationError(store: s, field: spec.name, rule: why)) }
        }
        for name in fields.keys.sorted() where Self.nesting(fields[name]!) > Self.maximumNesting {
            out.append(ValidationError(store: s, field: name, rule: "arrays and objects nested more than \(Self.maximumNesting) deep"))
        }
        out += missingRequired(fields)
        if let now {
            if let start = Self.time(fields["start"]), start > now.addingTimeInterval(Self.futureAllowance) {
                out.append(ValidationError(store: s, field: "start", rule: "must not be more than 5 minutes in the future"))
            }
            // An end too: a sleep or a feeding given an end still to come
            // (a typo, or planned) would be taken as finished then.
            if let end = Self.time(fields["end"]), end > now.addingTimeInterval(Self.futureAllowance) {
                out.append(ValidationError(store: s, field: "end", rule: "must not be more than 5 minutes in the future"))
            }
            if let at, at > now.addingTimeInterval(Self.futureAllowance) {
                out.append(ValidationError(store: s, field: "at", rule: "must not be more than 5 minutes in the future"))
            }
        }
        out += brokenRules(fields)
        return out
    }

    /// The rules a merge of valid changes can leave broken: the cross-field
    /// rules (concurrent updates, each valid alone), and a required field
    /// missing (no merge leaves one now that an update outliving a
    /// concurrent delete brings the record back whole, but exports made
    /// before list it, and import still takes them). A value's type or range, the subject
    /// kind and the entry-time rules hold for every change a writer checked,
    /// and so for any merge of them.
    public func mergeViolations(fields: [String: JSONValue]) -> [ValidationError] {
        missingRequired(fields) + brokenRules(fields)
    }

    private func missingRequired(_ fields: [String: JSONValue]) -> [ValidationError] {
        self.fields.filter { $0.required && fields[$0.name] == nil }.map { ValidationError(store: store.rawValue, field: $0.name, rule: "is required") }
    }

    private func brokenRules(_ fields: [String: JSONValue]) -> [ValidationError] {
        rules.compactMap { $0.check(store, fields) }
    }

    public static func time(_ v: JSONValue?) -> Date? { v?.stringValue.flatMap(TimeValue.parse) }

    /// A text that is empty or only white space.
    static func isBlank(_ v: JSONValue?) -> Bool { v?.stringValue.map { $0.allSatisfy(\.isWhitespace) } ?? false }

    /// The texts among `written` (the fields a change writes; all of a new
    /// record's) that the record needs (a required text, or the symptom or
    /// medication its kind needs) and that say nothing: empty or only
    /// spaces. An entry rule, checked where a text is entered (`record
    /// add`, `record update`, a new record of `import stores`): records
    /// stored so before it are read, merged, exported and imported again
    /// as they are.
    public func blankNeededTexts(fields: [String: JSONValue], written: Set<String>) -> [ValidationError] {
        var needed = Set(self.fields.filter { if case .text = $0.type { $0.required } else { false } }.map(\.name))
        if store == .health, let kind = fields["kind"]?.stringValue, ["symptom", "medication"].contains(kind) { needed.insert(kind) }
        return needed.intersection(written).sorted().filter { Self.isBlank(fields[$0]) }
            .map { ValidationError(store: store.rawValue, field: $0, rule: "must not be empty") }
    }

    public static func schema(for store: StoreName) -> StoreSchema { all[store]! }

    /// Every name a field of some store has (`note`, `wet`, `amountMl`…).
    public static let anyFieldNames: Set<String> = Set(all.values.flatMap { $0.allFields.map(\.name) })

    // MARK: - Rules shared by several stores

    static let endAfterStart = Rule("end, when given, is not before start and within 24 hours of it") { store, f in
        guard let start = time(f["start"]), let end = time(f["end"]) else { return nil }
        if end < start { return ValidationError(store: store.rawValue, field: "end", rule: "must not be before start") }
        if end.timeIntervalSince(start) > maxDuration {
            return ValidationError(store: store.rawValue, field: "end", rule: "must be within 24 hours of start")
        }
        return nil
    }

    static func atLeastOne(_ names: [String], _ rule: String) -> Rule {
        Rule(rule) { store, f in
            names.contains { f[$0] != nil } ? nil : ValidationError(store: store.rawValue, field: names.joined(separator: ","), rule: rule)
        }
    }

    // MARK: - The ten stores (the field names are the contract)

    public static let all: [StoreName: StoreSchema] = {
        let baby: Set<SubjectKind> = [.baby]
        var out: [StoreName: StoreSchema] = [:]
        func add(_ s: StoreName, _ subjects: Set<SubjectKind>, _ fields: [FieldSpec], _ rules: [Rule] = []) {
            out[s] = StoreSchema(store: s, subjects: subjects, fields: fields, rules: rules)
        }
        add(.feeding, baby, [
            FieldSpec("kind", .choice(["breast", "bottle"]), required: true),
            FieldSpec("start", .time, required: true),
            FieldSpec("end", .time),
            FieldSpec("side", .choice(["left", "right", "both"])),
            FieldSpec("leftSec", .integer(0...86_400)),
            FieldSpec("rightSec", .integer(0...86_400)),
            FieldSpec("milk", .choice(["breastMilk", "formula", "mixed"])),
            FieldSpec("amountMl", .number(0...500)),
        ], [endAfterStart])
        add(.solidFood, baby, [
            FieldSpec("foods", .textList(minCount: 1, maxCount: 100), required: true),
            FieldSpec("amountG", .number(0...1000)),
            FieldSpec("reaction", .choice(["loved", "liked", "neutral", "disliked", "refused"])),
            FieldSpec("allergens", .textList(minCount: 0, maxCount: 100)),
            FieldSpec("photos", .photoList(maxCount: 10)),
        ])
        add(.sleep, baby, [
            FieldSpec("start", .time, required: true),
            FieldSpec("end", .time),
            FieldSpec("nap", .bool),
            FieldSpec("location", .text(maxLength: 200)),
        ], [endAfterStart])
        add(.diaper, baby, [
            FieldSpec("wet", .bool),
            FieldSpec("dirty", .bool),
            FieldSpec("color", .choice(["yellow", "green", "brown", "black", "red", "white"])),
            FieldSpec("rash", .bool),
        ], [Rule("at least one of wet and dirty is true") { store, f in
            f["wet"] == .bool(true) || f["dirty"] == .bool(true)
                ? nil : ValidationError(store: store.rawValue, field: "wet,dirty", rule: "at least one of wet and dirty must be true")
        }])
        add(.growth, [.baby, .newMom, .pregnancy], [
            FieldSpec("weightKg", .number(0.3...250)),
            FieldSpec("lengthCm", .number(20...220)),
            FieldSpec("headCm", .number(20...60)),
        ], [atLeastOne(["weightKg", "lengthCm", "headCm"], "at least one of weightKg, lengthCm and headCm is required")])
        add(.health, Set(SubjectKind.allCases), [
            FieldSpec("kind", .choice(["temperature", "symptom", "medication"]), required: true),
            FieldSpec("temperatureC", .number(30...45)),
            FieldSpec("symptom", .text(maxLength: 200)),
            FieldSpec("severity", .integer(0...10)),
            FieldSpec("medication", .text(maxLength: 200)),
            FieldSpec("dose", .number(0...100_000, positive: true)),
            FieldSpec("doseUnit", .choice(["mg", "ml", "drops", "tablets", "IU"])),
        ], [Rule("temperatureC is required when kind is temperature, symptom when kind is symptom, medication when kind is medication") { store, f in
            switch f["kind"]?.stringValue {
            case "temperature" where f["temperatureC"] == nil:
                ValidationError(store: store.rawValue, field: "temperatureC", rule: "is required when kind is temperature")
            case "symptom" where f["symptom"] == nil:
                ValidationError(store: store.rawValue, field: "symptom", rule: "is required when kind is symptom")
            case "medication" where f["medication"] == nil:
                ValidationError(store: store.rawValue, field: "medication", rule: "is required when kind is medication")
            default: nil
            }
        }])
        add(.vaccination, [.baby, .newMom], [
            FieldSpec("vaccine", .text(maxLength: 200), required: true),
            FieldSpec("dose", .integer(1...10)),
            FieldSpec("lot", .text(maxLength: 100)),
            FieldSpec("site", .text(maxLength: 100)),
            FieldSpec("reaction", .text(maxLength: 500)),
        ])
        add(.milestone, baby, [
            FieldSpec("title", .text(maxLength: 200), required: true),
            FieldSpec("category", .choice(["motor", "cognitive", "social", "language", "custom"])),
            FieldSpec("photos", .photoList(maxCount: 10)),
        ])
        add(.pregnancy, [.pregnancy], [
            FieldSpec("kind", .choice(["kicks", "contraction", "checkup", "symptom"]), required: true),
            FieldSpec("count", .integer(0...200)),
            FieldSpec("durationSec", .integer(5...300)),
            FieldSpec("intensity", .integer(1...5)),
            FieldSpec("provider", .text(maxLength: 200)),
            FieldSpec("notes", .text(maxLength: 2000)),
        ])
        add(.postpartum, [.newMom], [
            FieldSpec("kind", .choice(["mood", "epds", "bleeding", "pain", "pumping"]), required: true),
            FieldSpec("mood", .integer(1...5)),
            FieldSpec("epds", .intList(count: 10, range: 0...3)),
            FieldSpec("lochia", .choice(["rubra", "serosa", "alba"])),
            FieldSpec("pain", .integer(0...10)),
            FieldSpec("leftMl", .number(0...500)),
            FieldSpec("rightMl", .number(0...500)),
        ], [Rule("epds is required when kind is epds (10 answers, 0-3 each)") { store, f in
            f["kind"]?.stringValue == "epds" && f["epds"] == nil
                ? ValidationError(store: store.rawValue, field: "epds", rule: "is required when kind is epds (10 answers, 0-3 each)") : nil
        }])
        return out
    }()

    /// The names ``derived(store:fields:)`` gives its values in a store.
    public static func derivedNames(store: String) -> [String] {
        store == StoreName.postpartum.rawValue ? ["epdsScore", "epdsFlag"] : []
    }

    /// Values derived for display, never stored: the EPDS score (0–30) and
    /// whether it needs attention (score ≥ 13, or any thought of self-harm:
    /// item 10 > 0).
    public static func derived(store: String, fields: [String: JSONValue]) -> [String: JSONValue] {
        guard store == StoreName.postpartum.rawValue, case .array(let items)? = fields["epds"], items.count == 10 else { return [:] }
        let answers = items.compactMap { if case .int(let i) = $0 { i } else { nil } }
        guard answers.count == 10 else { return [:] }
        let score = answers.reduce(0, +)
        return ["epdsScore": .int(score), "epdsFlag": .bool(score >= 13 || answers[9] > 0)]
    }
}
