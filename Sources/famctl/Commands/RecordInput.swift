import Envelope
import Foundation
import Projections

/// Turns `field=value` arguments and `--json-fields` into typed field values,
/// by the store's schema.
enum RecordInput {
    static let jsonFieldsOption = OptionSpec.value("--json-fields", "JSON", "The fields as one JSON object, instead of (or with) field=value.")

    static func fields(_ inv: Invocation, schema: StoreSchema) throws(CLIError) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        var jsonNames: Set<String> = []
        if let text = inv.value("--json-fields") {
            // The strict reader: a key given twice is refused, not one of the
            // two kept; 38.0 stays a decimal, as in the stores' files.
            switch JSONValue.parseKeepingNumbers(Array(text.utf8)) {
            case .success(.object(let o)):
                for name in o.keys.sorted() {
                    // Clearing one (null) may name any field a record holds but
                    // one of the body's own keys: an import or another
                    // implementation may have stored it under such a name.
                    if o[name] == .null, !name.hasPrefix("$") { continue }
                    try checkFieldName(name)
                    if o[name] != .null { try checkNotReserved(name, schema: schema) }
                }
                out = o
                jsonNames = Set(o.keys)
            case .success: throw .data("--json-fields is not a JSON object (valid JSON, each key once)")
            case .failure(.inexactNumber(let n)):
                let why = JSONValue.inexactReason(n)
                throw .data("--json-fields: the number \(n) cannot be kept as written (\(why.reason))",
                            hint: why.fewerDigits ? "Give fewer digits; in a field the store does not define, a string (\"\(n)\") keeps every digit."
                                : "In a field the store does not define, a string (\"\(n)\") keeps it as written.")
            case .failure(.invalid(let why)): throw .data("--json-fields is not valid JSON: \(why)")
            }
        }
        for (i, a) in inv.positionals.enumerated() {
            guard let eq = a.firstIndex(of: "=") else {
                // A field of the store's own name, its value given apart
                // (`mood 3`, `wet true`): `=` between them (a review: told to
                // join it to the value before it).
                let next = i + 1 < inv.positionals.count && !inv.positionals[i + 1].contains("=") ? inv.positionals[i + 1] : "VALUE"
                let asField = schema.field(a) == nil ? nil : "\(a)=\(ShellWord.quoted(next))"
                // A word after field=value most often belongs to its value,
                // split by the shell (`note=after lunch`): quote the value.
                if i > 0, let before = inv.positionals[..<i].last(where: { $0.contains("=") }) {
                    let words = inv.positionals[inv.positionals[..<i].lastIndex(of: before)!...i].joined(separator: " ")
                    let name = before[..<before.firstIndex(of: "=")!]
                    // (`kind=mood mood 3`: the store's own field, its value given apart, more likely.)
                    throw .data("'\(a)' is not field=value",
                                hint: (asField.map { "If it is the field \(a), join its value with '=': \($0). " } ?? "")
                                    + "If it belongs to the value before it, quote the whole value, as the shell otherwise splits it at spaces: "
                                    + "\(name)=\(ShellWord.quoted(String(words.dropFirst(name.count + 1)))). Each field is name=value, with no space around '='.")
                }
                // A field of the store's own name, its value given apart (`mood 3`, `wet true`).
                if let asField {
                    throw .data("'\(a)' is not field=value", hint: "Give the field and its value joined by '=', with no space around it: \(asField).")
                }
                throw .data("'\(a)' is not field=value",
                            hint: "Give each field as name=value, with no space around '=' (for example \(a)=VALUE); 'famctl record fields' lists the fields of each store.")
            }
            let name = String(a[..<eq])
            try checkFieldName(name)
            // (Clearing one, `at=`, is allowed: a field of that name written before.)
            if a.index(after: eq) != a.endIndex { try checkNotReserved(name, schema: schema) }
            guard out[name] == nil else { throw .data("field '\(name)' given twice") }
            let value = String(a[a.index(after: eq)...])
            do throws(ValidationError) {
                out[name] = try schema.parse(field: name, text: value)
            } catch {
                throw .data("\(error)", hint: schema.field(name).flatMap { ValueHint.forField($0, text: value, in: schema) })
            }
        }
        // Fields the store does not define, set (clearing one, `amountML=` to
        // undo a typo, keeps nothing: not a concern).
        let undefined = out.keys.sorted().filter { out[$0] != .null && schema.field($0) == nil }
        // A defined field's name in other letters' case (`Note`, `amountML`)
        // is a typo, not a field of its own: refused, naming the field.
        try checkFieldCase(undefined, schema: schema)
        // As `field=value`, one a letter or two off a defined field
        // (`amuontMl=120`) is a typo too: kept, the record would miss the
        // amount, with a warning easy to miss at 3 a.m. Refused; a field of
        // that name on purpose goes through `--json-fields`.
        for name in undefined where name != "photos" && !jsonNames.contains(name) {
            let near = nearestAll(name, among: schema.fieldNames)
            if let first = near.first {
                // Two fields as near (`kide`: kind or side): both named.
                let meant = near.count == 1 ? first : near.dropLast().joined(separator: ", ") + " or " + near.last!
                throw .data("\(schema.store.rawValue) does not define '\(name)': did you mean \(meant)?",
                            hint: "Give it as \(first)=…; a field of its own named '\(name)' is given with --json-fields '{\"\(name)\": …}' ('famctl record fields --store \(schema.store.rawValue)' lists the store's fields).")
            }
            // A letter or two off a record's own property (`att=`, `fcus=`).
            if let property = nearest(name, among: Array(reservedNames.keys)), let what = reservedNames[property] {
                throw .data("'\(name)' is not a field of \(schema.store.rawValue): did you mean '\(property)', \(what)?",
                            hint: property == "at" ? "For example: --at 2026-11-29T08:15:00+01:00." : "A field of its own named '\(name)' is given with --json-fields.")
            }
        }
        // Any record takes a photo list.
        for name in undefined where name != "photos" { Console.err(undefinedFieldWarning(name, schema: schema)) }
        return out
    }

    /// What to say of a field the store does not define: kept as given (a
    /// newer famctl's field, a family's own), but most often a typo, which
    /// would otherwise leave the real field unset without a word.
    static func undefinedFieldWarning(_ name: String, schema: StoreSchema) -> String {
        "famctl: warning: " + undefinedField(name, schema: schema)
    }

    /// ``undefinedFieldWarning(_:schema:)`` without its prefix.
    static func undefinedField(_ name: String, schema: StoreSchema) -> String {
        // A record's own property given as a field (`"deleted": true` in an
        // import's row): said as what it is, not as a typo of a field (a
        // review: the record was imported live with a field named so).
        if let (_, what) = reservedNames.first(where: { $0.key.lowercased() == name.lowercased() }) {
            return "'\(name)' is not a field of \(schema.store.rawValue): it is \(what); it is kept as a field of that name, and changes nothing of the record."
        }
        let near = nearest(name, among: schema.fieldNames)
        return "\(schema.store.rawValue) does not define '\(name)'\(near.map { " (did you mean \($0)?)" } ?? ""); it is kept as given "
            + "('famctl record fields --store \(schema.store.rawValue)' lists the store's fields)."
    }

    /// A defined field's name in other letters' case (`Note`, `amountML`):
    /// a typo, not a field of its own, refused naming the field.
    static func checkFieldCase(_ names: some Sequence<String>, schema: StoreSchema) throws(CLIError) {
        for name in names where schema.field(name) == nil {
            if let defined = schema.fieldNames.first(where: { $0.lowercased() == name.lowercased() }) {
                throw .data("\(schema.store.rawValue).\(name): the store's field is '\(defined)' (field names are matched exactly)",
                            hint: "Give it as \(defined)=…; a field of another name is kept as given, with a warning.")
            }
        }
    }

    /// The word of `candidates` fewest edits from `word` (letters' case
    /// aside), when at most `within`; of several as near, the first in
    /// sorted order: what a "did you mean" suggests.
    /// Every candidate as near to `word` as the nearest (``nearest(_:among:within:)``'s
    /// rule), sorted: `kide` is as near to kind as to side.
    static func nearestAll(_ word: String, among candidates: [String], within: Int = 2) -> [String] {
        guard let best = nearest(word, among: candidates, within: within) else { return [] }
        let d = editDistance(best.lowercased(), word.lowercased())
        return Set(candidates).filter { editDistance($0.lowercased(), word.lowercased()) == d && d < $0.count }.sorted()
    }

    static func nearest(_ word: String, among candidates: [String], within: Int = 2) -> String? {
        // A short word is a letter or two off almost any short name: the
        // edits allowed grow with its length (none for one or two letters
        // but case, one for three or four), and leave some of the name.
        let limit = min(within, max(0, (word.count - 1) / 2))
        var near: String?
        var nearest = limit + 1
        for candidate in Set(candidates).sorted() {
            let d = editDistance(candidate.lowercased(), word.lowercased())
            if d < nearest, d < candidate.count { near = candidate; nearest = d }
        }
        return near
    }

    /// Edit distance with adjacent transpositions (optimal string
    /// alignment): `sied` is one from `side`. Names are short.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    /// A field's name: letters, digits and `_`, starting with a letter (so
    /// never one of the body's own keys, `$at` and the like).
    static func checkFieldName(_ name: String) throws(CLIError) {
        guard let first = name.first, first.isLetter, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            throw .data("'\(name)' is not a field name (letters, digits and _, starting with a letter)")
        }
    }

    /// The names a record's view gives its own properties (`record list`
    /// prints `id store focus at` before the fields, `--json` has them as
    /// keys beside `fields`) and the values a store derives: a field of one
    /// of these names would read as the property, or be hidden by it. Most
    /// often the property was meant (`at=…` for `--at`): refused, saying how
    /// to give it.
    static let reservedNames: [String: String] = [
        "id": "the record's id: 'famctl record add' makes one, 'famctl record update ID …' names it",
        "store": "the record's store, given with --store",
        "focus": "the record's care subject, given with --focus",
        "at": "the record's time, given with --at",
        "deleted": "whether the record is deleted: 'famctl record delete ID' deletes it",
        "author": "the device that created the record, set by famctl",
        "updated": "the time of the record's last change, set by famctl",
        "updatedBy": "the device that wrote the record's last change, set by famctl",
        "derived": "the values a store computes from the fields",
    ]

    static func checkNotReserved(_ name: String, schema: StoreSchema) throws(CLIError) {
        guard schema.field(name) == nil else { return }
        // (In any letters' case: `AT=…` is the time mistyped, not a field.)
        if let (reserved, what) = reservedNames.first(where: { $0.key.lowercased() == name.lowercased() }) {
            throw .data("'\(name)' is not a field: it is \(what)",
                        hint: reserved == "at" ? "For example: --at 2026-11-29T08:15:00+01:00." : "Give the record's fields as field=value; docs/cli.md, \"The ten stores\", lists them.")
        }
        // A value the store computes (postpartum's epdsScore from epds).
        if StoreSchema.derivedNames(store: schema.store.rawValue).contains(where: { $0.lowercased() == name.lowercased() }) {
            throw .data("'\(name)' is not a field: \(schema.store.rawValue) computes it from the fields it is derived from",
                        hint: "Give those fields; 'famctl record show ID' prints the value.")
        }
    }

    static func focus(_ text: String) throws(CLIError) -> FocusKey {
        guard let f = FocusKey(text) else { throw .data("--focus '\(text)' is not a care subject", hint: "Use baby:<UUID>, pregnancy or newMom; 'famctl subject list' shows them.") }
        return f
    }

    /// `--focus`: a focus key, or the name of a care subject this device
    /// knows (live; `removed` too, for a listing of what is left of one).
    /// The name of a removed subject alone gives its key even when
    /// `removed` is false, so that the change is refused as one for a removed
    /// subject, with how to restore it, as its key would be.
    static func focus(_ text: String, home: Home, removed: Bool = false) throws -> FocusKey {
        if let f = FocusKey(text) { return f }
        let live = try home.projector.subjects()
        // A live subject of that name (in any letters' case) before a removed
        // one (a baby added twice, one removed into the other).
        let liveNamed = SubjectInput.named(text, in: live)
        if liveNamed.count == 1 { return liveNamed[0].focus }
        let all = try home.projector.subjects(includeRemoved: true)
        let named = removed ? SubjectInput.named(text, in: all) : liveNamed
        if named.count > 1 {
            // Which is which, and how to make one of them (a review: a parent
            // at 3 a.m. was given two keys and nothing to tell them apart).
            let counts = (try? home.projector.liveRecordCounts()) ?? [:]
            let ordered = named.sorted { Home.keptFirst($0, $1, recordCounts: counts) }
            let each = ordered.map { s in
                "\(s.focus) (" + ([s.fields["birth"]?.stringValue.map { "born \($0)" }, "\(counts[s.focus.description] ?? 0) record(s)", s.removed ? "removed" : nil]
                    .compactMap { $0 }.joined(separator: ", ")) + ")"
            }
            let merge = ordered.count == 2 && ordered.allSatisfy({ $0.kind == .baby && !$0.removed })
                ? " If one baby was added twice: 'famctl subject remove \(ordered[1].focus) --move-records-to \(ordered[0].focus)' merges them, and --focus \(text) then names the one kept." : ""
            throw SubjectInput.ambiguous(text, named, hint: "Give --focus one of the keys: \(each.joined(separator: ", ")).\(merge)")
        }
        let gone = SubjectInput.named(text, in: all)
        if gone.count == 1 { return gone[0].focus }
        // A name a letter or two off (Lilly for Lily), or a key in other letters' case (newmom).
        let candidates = live.compactMap(\.name) + live.map(\.focus.description)
        if let near = nearest(text, among: candidates) {
            throw CLIError.data("--focus '\(text)' is not a care subject; did you mean '\(near)'?", hint: "'famctl subject list' shows the care subjects.")
        }
        throw CLIError.data("--focus '\(text)' is not a care subject", hint: "Use baby:<UUID>, pregnancy, newMom or a subject's name; 'famctl subject list --json' shows them.")
    }

    static func store(_ text: String) throws(CLIError) -> StoreName {
        guard let s = StoreName(rawValue: text) else {
            if let near = StoreName.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) {
                throw .data("--store '\(text)' is not a store; did you mean '\(near.rawValue)'?", hint: "Store names are written as listed: \(StoreName.list).")
            }
            if let near = nearest(text, among: StoreName.allCases.map(\.rawValue)) {
                throw .data("--store '\(text)' is not a store; did you mean '\(near)'?", hint: "Store names are written as listed: \(StoreName.list).")
            }
            // A kind of record some store keeps (`medication`, `temperature`, `bottle`…),
            // every store that keeps it (`symptom`: health and pregnancy).
            let keeping = StoreName.allCases.compactMap { store -> (StoreName, String)? in
                guard let spec = StoreSchema.schema(for: store).field("kind"), case .choice(let kinds) = spec.type,
                      let kind = kinds.first(where: { $0.lowercased() == text.lowercased() }) else { return nil }
                return (store, kind)
            }
            if let (first, kind) = keeping.first {
                throw .data("--store '\(text)' is not a store; kind=\(kind) is a kind of record of "
                                + keeping.map { "\($0.0.rawValue) (--store \($0.0.rawValue) kind=\(kind))" }.joined(separator: " and of "),
                            hint: "'famctl record fields --store \(first.rawValue)' lists its fields. The stores: \(StoreName.list).")
            }
            throw .data("--store '\(text)' is not a store", hint: "Use one of: \(StoreName.list).")
        }
        return s
    }

    /// `--at` as given, its `t` and `z` upper-cased as stored
    /// (``TimeValue/canonical(_:)``).
    static func at(_ inv: Invocation) -> String? { inv.value("--at").map(TimeValue.canonical) }

    /// A note when a record's `--at` (the moment lists place it at) and
    /// its `start` name different moments: a record whose `at` is not its
    /// start is listed apart from it, most often a slip (a feeding's start
    /// typed in both, one of them wrong).
    static func atStartNote(at: String?, start: String?) -> String? {
        guard let at, let start, let a = TimeValue.parse(at), let s = TimeValue.parse(start), a != s else { return nil }
        // Each also as lists show it, in this zone, when written with
        // another offset (a review: `Z` beside `+01:00` hid that the two
        // were an hour apart, not a day).
        func here(_ t: String) -> String { let shown = TimeText.shownHere(t); return shown == t ? t : "\(t) (\(shown) here)" }
        return "famctl: note: --at \(here(at)) and start=\(here(start)) name different moments: lists place the record at --at, and start stays as given. "
            + "Without --at, a record is listed at its start."
    }

    /// Notes for the times a change gave with an offset that is not this
    /// device's zone's on that day (``ValueHint/offsetNotHere(_:in:)``):
    /// stored as written, which is another moment than the same wall time
    /// here (a review: a bottle stored an hour late without a word, the
    /// examples' `+01:00` copied after the clocks went forward).
    /// - Parameter given: each time given, `(name, text)`; `--at` as `at`.
    static func offsetNotes(record id: UUID, given: [(String, String)]) -> [String] {
        let off = given.compactMap { name, text in ValueHint.offsetNotHere(text).map { (name, text, $0) } }
        guard !off.isEmpty else { return [] }
        // Each time said; one command puts them all right together (one at a
        // time, an end could come before its start: a review).
        let said = off.map { name, text, other in
            "\(name == "at" ? "--at" : name) \(text) has the offset \(ValueHint.offsetText(text)), not this device's on that day (\(ValueHint.offsetText(other.meant))): it is \(other.shown) here"
        }
        let fix = off.map { name, _, other in name == "at" ? "--at \(other.meant)" : "\(name)=\(other.meant)" }.joined(separator: " ")
        let wall = off.map { _, text, _ in String(text.dropFirst(11).prefix(5)) }
        return ["famctl: note: " + said.joined(separator: "; ") + "; stored so. If \(wall.count == 1 ? wall[0] : wall.joined(separator: ", ")) here \(wall.count == 1 ? "was" : "were") meant: famctl record update \(id.lowercasedText) \(fix)"]
    }

    /// A note when a change gives EPDS answers whose score is flagged (13
    /// or more, or item 10, thoughts of self-harm, above 0): said when it
    /// is written, not only later in a list (a review: saved without a word).
    static func epdsNote(store: StoreName, fields: [String: JSONValue], given: Bool) -> String? {
        guard given, case let derived = StoreSchema.derived(store: store.rawValue, fields: fields),
              case .bool(true)? = derived["epdsFlag"], case .int(let score)? = derived["epdsScore"] else { return nil }
        let selfHarm: Bool = if case .array(let items)? = fields["epds"], items.count == 10, case .int(let last) = items[9] { last > 0 } else { false }
        let why = [score >= 13 ? "the score is 13 or more" : nil, selfHarm ? "item 10, thoughts of self-harm, is above 0" : nil].compactMap { $0 }.joined(separator: ", and ")
        return "famctl: note: EPDS score \(score): flagged (\(why)). The EPDS is a screening, not a diagnosis: a flagged score is one to talk over with a midwife, health visitor or doctor soon"
            + (selfHarm ? "; thoughts of self-harm, the same day." : ".")
    }

    /// The times among `fields` (of `store`) and `at`, as ``offsetNotes(record:given:)`` takes them.
    static func givenTimes(_ fields: [String: JSONValue], store: StoreName, at: String?) -> [(String, String)] {
        let schema = StoreSchema.schema(for: store)
        return fields.keys.sorted().compactMap { name -> (String, String)? in
            guard let spec = schema.field(name), case .time = spec.type, let text = fields[name]?.stringValue else { return nil }
            return (name, text)
        } + (at.map { [("at", $0)] } ?? [])
    }

    static func time(_ text: String, option: String) throws(CLIError) -> Date {
        if let why = CalendarDate.impossibility(in: text) { throw .data("\(option) '\(text)': \(why)") }
        guard let d = TimeValue.parse(text) else {
            throw .data("\(option) '\(text)' is not an ISO-8601 time with offset", hint: ValueHint.forOption(option, text) ?? "For example 2026-11-29T08:15:00+01:00.")
        }
        return d
    }

    /// The earliest year of a record's `at` or `start` taken at entry
    /// (`record add`, and `record update` when it changes them): a care
    /// record before it is a mistyped year (`0026` for `2026`), which would
    /// sort before everything, for good, on every device. Records already
    /// stored so (by an older famctl) are left alone: merges, imports and
    /// updates of their other fields do not check it.
    static let earliestYear = 1900

    /// The year a time's text begins with (`YYYY-`), as written: at its
    /// own offset, not in UTC.
    static func yearAsWritten(_ text: String) -> Int? {
        let u = Array(text.utf8.prefix(5))
        guard u.count == 5, u[4] == UInt8(ascii: "-"), u[..<4].allSatisfy({ (48...57).contains($0) }) else { return nil }
        return u[..<4].reduce(0) { $0 * 10 + Int($1 - 48) }
    }

    /// A `photos` list given by hand (`photos=ID,…`): each photo once, and
    /// none that is deleted or another record's (a photo belongs to the
    /// record it was added to, and its deletion takes it out of that
    /// record's list alone). Ids that name no photo here are let through:
    /// a photo whose metadata has not arrived yet, or one an import names
    /// (`record show` notes them).
    /// Ids the list held before (`listedBefore`) are kept without these
    /// checks but the first: a list written before them, or by an import,
    /// may name another record's photo, and `record show`'s own advice
    /// keeps them (a code review).
    static func checkPhotoList(_ items: [JSONValue], of record: UUID?, store: StoreName, home: Home, listedBefore: Set<String> = []) throws {
        let ids = items.compactMap(\.stringValue).map { $0.lowercased() }
        var seen = Set<String>()
        if let twice = ids.first(where: { !seen.insert($0).inserted }) {
            throw CLIError.data("\(store.rawValue).photos: photo \(twice) is listed twice", hint: "List each photo once.")
        }
        let photos = try home.projector.photos(includeDeleted: true)
        for id in ids where !listedBefore.contains(id) {
            guard let p = photos.first(where: { $0.id.lowercasedText == id }) else { continue }
            if p.deleted {
                throw CLIError.data("\(store.rawValue).photos: photo \(id) is deleted", hint: "Leave it out of the list; 'famctl photo list --record ID' shows the record's photos.")
            }
            if let other = p.record, other != record {
                throw CLIError.data("\(store.rawValue).photos: photo \(id) is record \(other.lowercasedText)'s",
                                    hint: "A photo stays with the record it was added to: to show the same picture here, add its file to this record with 'famctl photo add'.")
            }
        }
    }

    /// The offsets, in minutes, that places' clocks have from UTC (from
    /// -12:00 to Kiribati's +14:00): a time given with an offset past them
    /// is a slip (`+23:59`, which ISO 8601's grammar takes), refused at
    /// entry, as a year before ``earliestYear`` is.
    static let offsets = (-12 * 60)...(14 * 60)

    /// The offset a time's text ends with (`±HH:MM`), in minutes, as
    /// written; `nil` for `Z` or another ending.
    static func offsetAsWritten(_ text: String) -> Int? {
        let u = Array(text.utf8.suffix(6))
        guard u.count == 6, u[0] == UInt8(ascii: "+") || u[0] == UInt8(ascii: "-"), u[3] == UInt8(ascii: ":"),
              [1, 2, 4, 5].allSatisfy({ (48...57).contains(u[$0]) }) else { return nil }
        let minutes = (Int(u[1] - 48) * 10 + Int(u[2] - 48)) * 60 + Int(u[4] - 48) * 10 + Int(u[5] - 48)
        return u[0] == UInt8(ascii: "-") ? -minutes : minutes
    }

    /// `text` with this year in place of its own, as an example.
    static func earliestExample(_ text: String) -> String {
        let year = Calendar(identifier: .gregorian).component(.year, from: Date())
        return String(year) + text.dropFirst(4)
    }

    /// - Parameter changesFollow: the id comes before `field=value`
    ///   changes (`record update`): one given in its place is a mistake of
    ///   order (64), said as such.
    /// A record's id, whole (with its dashes or without), or its start or
    /// its end (at least 6 hex digits, dashes where ids have them or none:
    /// `019ce28f`, or the last digits, which are random where the first are
    /// those of every id made that minute) when that names one record of
    /// this home: typing 36 characters at 3 a.m. is no one's job (a review).
    /// One that names several, or none, is said as such.
    /// - Parameter deleted: `false` for a command that acts on a live record
    ///   (update, delete), `true` for one that acts on a deleted one
    ///   (restore): a part the other kind shares is not ambiguous for it.
    /// A record's id, or 6 to 31 hex digits of its start or its end, as
    /// ids are written (dashes after the 8th, 12th, 16th and 20th digit).
    struct IDPart {
        let hex: String, prefix: String, suffix: String
        let whole: UUID?

        init(whole: UUID) {
            self.init(hex: whole.lowercasedText.filter { $0 != "-" }, prefix: whole.lowercasedText, suffix: whole.lowercasedText, whole: whole)
        }

        private init(hex: String, prefix: String, suffix: String, whole: UUID?) {
            (self.hex, self.prefix, self.suffix, self.whole) = (hex, prefix, suffix, whole)
        }

        /// `nil` for 32 digits that are no UUID.
        init?(hex: String) {
            let dashes: Set<Int> = [8, 12, 16, 20]
            let prefix = String(hex.enumerated().flatMap { i, c in dashes.contains(i) ? ["-", c] : [c] })
            if hex.count == 32 {
                guard let u = UUID(text: prefix) else { return nil }
                self.init(whole: u)
                return
            }
            let start = 32 - hex.count
            let suffix = String(hex.enumerated().flatMap { i, c in dashes.contains(start + i) && i > 0 ? ["-", c] : [c] })
            self.init(hex: hex, prefix: prefix, suffix: suffix, whole: nil)
        }

        func matches(_ id: UUID) -> Bool {
            if let whole { return id == whole }
            let text = id.lowercasedText
            return text.hasPrefix(prefix) || text.hasSuffix(suffix)
        }
    }

    static func record(_ text: String, home: Home, changesFollow: Bool = false, deleted: Bool? = nil) throws -> UUID {
        if let u = UUID(text: text) { return u }
        guard let hex = idDigits(text) else { return try record(text, changesFollow: changesFollow) }
        guard let part = IDPart(hex: hex) else { return try record(text, changesFollow: changesFollow) }
        if let whole = part.whole { return whole }
        var found = try home.projector.recordIDs(startingWith: part.prefix, limit: 7)
        for id in try home.projector.recordIDs(endingWith: part.suffix, limit: 7) where !found.contains(id) { found.append(id) }
        let isDeleted = Dictionary(uniqueKeysWithValues: try found.map { ($0, try home.projector.record($0)?.deleted ?? false) })
        // Those of the kind the command acts on, when some are.
        if let deleted, found.contains(where: { isDeleted[$0] == deleted }) { found = found.filter { isDeleted[$0] == deleted } }
        switch found.count {
        case 1: return found[0]
        case 0: throw CLIError(.noInput, "no record's id starts or ends with \(hex)", hint: "'famctl record list' shows the records with their ids (--include-deleted: the deleted ones too).")
        default:
            throw CLIError.data("\(found.count < 7 ? "\(found.count)" : "several") records' ids start or end with \(hex): "
                                + found.prefix(6).map { $0.lowercasedText + (isDeleted[$0] == true ? " (deleted)" : "") }.joined(separator: ", ") + (found.count > 6 ? ", …" : ""),
                                hint: "Give more of the id (its last digits tell ids made the same minute apart), or all of it.")
        }
    }

    /// Refuses, before the home is opened, a text that can be neither a
    /// record's id nor the start of one (``record(_:home:changesFollow:)``
    /// reads it after).
    static func checkRecordText(_ text: String, changesFollow: Bool = false) throws(CLIError) {
        if UUID(text: text) != nil || idDigits(text) != nil { return }
        _ = try record(text, changesFollow: changesFollow)
    }

    /// The hex digits of `text` (its dashes left out, lower case) when it
    /// can be a part of a record's id: 6 to 32 of them, nothing else.
    static func idDigits(_ text: String) -> String? {
        let hex = text.lowercased().filter { $0 != "-" }
        return hex.count >= 6 && hex.count <= 32 && hex.allSatisfy({ $0.isHexDigit && $0.isASCII }) ? hex : nil
    }

    static func record(_ text: String, changesFollow: Bool = false) throws(CLIError) -> UUID {
        guard let u = UUID(text: text) else {
            if changesFollow, text.contains("=") {
                throw .usage("'\(text)' is not a record id (a UUID): give the record's id first, then the changes: famctl record update ID field=value …")
            }
            throw .data("'\(text)' is not a record id (a UUID)", hint: "A record is named by its whole id, or by at least 6 hex digits of its start or its end ('famctl record list' shows the ids).")
        }
        return u
    }

    /// Validates a record's full field set and the rules that need the
    /// projection (the subject exists; sleeps of one baby do not overlap).
    /// - Parameter overlap: whether to check that a sleep does not overlap
    ///   another of the same baby (an update that leaves its times and its
    ///   subject as they are does not: two sleeps a merge left overlapping
    ///   can still have their other fields changed).
    /// - Parameter written: the fields the change writes (all of a new
    ///   record's), checked for texts the record needs given empty.
    /// - Parameter checkWriting: whether to check that this device may write
    ///   (`false` for the second record on of a batch that checked it once).
    /// - Parameter atGiven: whether `at` is being written (given, or
    ///   following a new start), not the time the record already had.
    /// - Parameter photosBefore: the ids the record's photos list held
    ///   before the change (lower-cased), which a new list may keep as they are.
    static func validate(home: Home, id: UUID?, store: StoreName, focus: FocusKey, at: String, atGiven: Bool = true, photosBefore: Set<String> = [],
                         fields: [String: JSONValue], now: Date?,
                         overlap: Bool = true, written: Set<String> = [], checkWriting: Bool = true, restoring: Bool = false) throws {
        if checkWriting { try home.checkCanWrite() }
        let schema = StoreSchema.schema(for: store)
        let violations = schema.violations(fields: fields, focus: focus, at: TimeValue.parse(at), now: now)
        if let first = violations.first {
            // Every required field missing is named at once (a review: one
            // per try); any other rule, the first, with its hint.
            let missing = violations.filter { $0.rule == "is required" }
            let message = missing.count > 1 && missing.first == first ? missing.map(\.description).joined(separator: "; ") : "\(first)"
            throw CLIError.data(message, hint: ValueHint.forViolation(first, fields: fields, in: schema, at: at))
        }
        if let blank = schema.blankNeededTexts(fields: fields, written: written).first { throw CLIError.data("\(blank)") }
        if written.contains("photos"), case .array(let items)? = fields["photos"] { try checkPhotoList(items, of: id, store: store, home: home, listedBefore: photosBefore) }
        _ = try time(at, option: "--at")
        if now != nil {
            for (name, text) in [("start", fields["start"]?.stringValue), ("at", at)] {
                guard let text, let year = yearAsWritten(text), year < earliestYear else { continue }
                throw CLIError.data("\(store.rawValue).\(name): must not be before \(earliestYear) (is the year mistyped?)",
                                    hint: "'\(text)' is in the year \(year); give the time again with the year in full, for example \(earliestExample(text)).")
            }
            // The times given (not those the record already had, which an
            // older famctl or an import may have stored so).
            let given = written.sorted().compactMap { name -> (String, String)? in
                guard let spec = schema.field(name), case .time = spec.type, let text = fields[name]?.stringValue else { return nil }
                return ("\(store.rawValue).\(name)", text)
            } + (atGiven ? [("--at", at)] : [])
            for (name, text) in given {
                guard let minutes = offsetAsWritten(text), !offsets.contains(minutes) else { continue }
                throw CLIError.data("\(name) '\(text)': no place's clock is \(text.suffix(6)) from UTC (offsets run from -12:00 to +14:00; is it mistyped?)",
                                    hint: "Give the time with its place's offset, for example \(text.dropLast(6))+01:00, or in UTC with Z.")
            }
        }
        if try home.projector.subject(focus) == nil {
            // The family's key moved on and this device has not received the
            // new one: the subject may well be in the events it cannot open yet.
            let announced = home.projector.household.epoch
            let held = try home.state.keyring.current(family: home.family)?.epoch ?? 0
            if announced > held {
                throw CLIError.data("\(store.rawValue).focus: no care subject \(focus) in what this device can read: the family's key is at epoch \(announced), and this device holds only epoch \(held) so far",
                                    hint: "The subject may be in events sealed under the new key. Run 'famctl sync' later: the owner's next rounds seal the key to this device.")
            }
            if try home.projector.subjects(includeRemoved: true).contains(where: { $0.focus == focus }) {
                throw CLIError.data("\(store.rawValue).focus: care subject \(focus) is removed",
                                    hint: id == nil ? "'famctl subject list' shows the care subjects; 'famctl subject restore \(focus)' brings it back."
                                        : "Move the record to another subject ('famctl record update \(id!.lowercasedText) --focus OTHER … '), or bring this one back: famctl subject restore \(focus).")
            }
            // Added by a device whose changes the family does not count (its
            // join refused, a viewer, removed before it wrote): syncing brings
            // nothing more; the record is to move, or the subject to be added.
            if let uncounted = try uncountedSubjectAdd(focus, home: home) {
                throw CLIError.data("\(store.rawValue).focus: care subject \(focus) was added by \(uncounted.author.short), whose change does not count in the family (\(uncounted.reason))",
                                    hint: id == nil ? "'famctl subject list' shows the care subjects this family has; add this one here with 'famctl subject add \(SubjectKind(focus).rawValue) …' if it is missing."
                                        : "Move the record to a subject the family has: famctl record update \(id!.lowercasedText) --focus OTHER ('famctl subject list' shows them).")
            }
            // In a family, a subject with an id was most likely added on
            // another device: a new one here would be another baby.
            let inFamily = !home.projector.household.isPrivate || home.knownOwner != nil
            if inFamily, case .baby = SubjectKind(focus) {
                throw CLIError.data("\(store.rawValue).focus: no care subject \(focus) on this device",
                                    hint: "If another device added it, run 'famctl sync' to get it; 'famctl subject list' shows the subjects this device knows.")
            }
            throw CLIError.data("\(store.rawValue).focus: no care subject \(focus)", hint: "Add it first: famctl subject add \(SubjectKind(focus).rawValue) …")
        }
        if overlap, let (_, error) = try overlappingSleep(home: home, id: id, store: store, focus: focus, fields: fields, restoring: restoring) { throw error }
    }

    /// The sleep of the same baby that a sleep with `fields` would overlap
    /// (record `id` itself left out), with the error that says so.
    static func overlappingSleep(home: Home, id: UUID?, store: StoreName, focus: FocusKey, fields: [String: JSONValue],
                                 restoring: Bool = false) throws -> (other: UUID, error: CLIError)? {
        guard store == .sleep, let start = StoreSchema.time(fields["start"]),
              let other = try home.projector.overlappingSleep(focus: focus.description, start: start, end: StoreSchema.time(fields["end"]), excluding: id) else { return nil }
        // The field that runs into the other sleep: the start when it lies
        // inside it, else the end (or its absence: still going on).
        let field = (StoreSchema.time(other.fields["start"]).map { $0 > start } ?? false) ? "end" : "start"
        return (other.id, CLIError.data("sleep.\(field): overlaps sleep \(other.id.lowercasedText) of the same baby (\(other.fields["start"]?.description ?? "?") – \(other.fields["end"]?.description ?? "open"))",
                                        hint: overlapHint(other: other, start: fields["start"], restoring: restoring)))
    }

    /// What to do about a sleep that overlaps `other`: a sleep still going
    /// on that began before this one (an end not written when the baby woke,
    /// the usual case) is ended where this one starts; otherwise one of the
    /// two has its times put right (the other's alone when `restoring` a
    /// deleted record, whose own times cannot be changed).
    static func overlapHint(other: RecordState, start: JSONValue?, restoring: Bool = false) -> String {
        let id = other.id.lowercasedText
        if restoring {
            return "A deleted record's times cannot be changed: correct the other sleep first "
                + "('famctl record show \(id)', then 'famctl record update \(id) start=… end=…'), then restore this one."
        }
        if other.fields["end"] == nil || other.fields["end"] == .null, let start,
           let otherStart = StoreSchema.time(other.fields["start"]), let thisStart = StoreSchema.time(start), otherStart < thisStart {
            // An end a day past its start is refused (a sleep lasts at most
            // 24 hours): then the advice asks when it ended (a review: the
            // end offered was one the update refuses).
            if thisStart.timeIntervalSince(otherStart) > 86_400 {
                let started = other.fields["start"]?.stringValue.map { TimeText.shownHere($0) } ?? "?"
                return "Sleep \(id), started \(started), has no end yet, and this one starts more than 24 hours after it, longer than a sleep may last: "
                    + "give it the time it really ended ('famctl record update \(id) end=TIME', within 24 hours of its start), or delete it if it was never one ('famctl record delete \(id)'), then try again."
            }
            return "Sleep \(id) has no end yet: end it first with 'famctl record update \(id) end=\(start.description)', then try again."
        }
        return "Give this sleep times outside the other, or correct that one: 'famctl record show \(id)', then 'famctl record update \(id) start=… end=…'."
    }

    /// Refuses a record change whose body does not fit in one event (at
    /// most ``SyncEnvelope/maximumBody`` bytes, encoded): sealing it would
    /// fail, so it is bad data, said before anything is written.
    ///
    /// - Throws: ``CLIError`` (exit 65) naming the size and the limit.
    static func checkFitsOneEvent(_ body: EventBody, reserve: Int = 0) throws(CLIError) {
        let count = body.encoded().count + reserve
        guard count > SyncEnvelope.maximumBody else { return }
        throw .data("the record is too large for one event: \(count) bytes encoded, over the limit of \(SyncEnvelope.maximumBody) bytes",
                    hint: "Shorten its longest fields; pictures go through 'famctl photo add'.")
    }

    /// A record's put as events that each fit in one: the put itself when
    /// it does; else its fields spread over several puts of the same record
    /// (the first with its time), each setting some and leaving the others
    /// (a record grown past one event by merged changes, carried into a
    /// family or imported). A single field too large for one event is
    /// refused.
    /// - Parameter reserve: bytes each put must leave for keys added to it
    ///   afterwards (`accept`'s `carried`).
    static func fittingPuts(_ event: RecordEvent, reserve: Int = 0) throws(CLIError) -> [EventBody] {
        let limit = SyncEnvelope.maximumBody - reserve
        if event.body.encoded().count <= limit { return [event.body] }
        var out: [EventBody] = []
        var current: [String: JSONValue] = [:]
        func put(_ fields: [String: JSONValue]) -> EventBody {
            RecordEvent(kind: .put, record: event.record, store: event.store, focus: event.focus, at: out.isEmpty ? event.at : nil, fields: fields).body
        }
        for name in event.fields.keys.sorted() {
            var trial = current
            trial[name] = event.fields[name]
            if put(trial).encoded().count <= limit { current = trial; continue }
            if !current.isEmpty { out.append(put(current)) }
            current = [name: event.fields[name]!]
            try checkFitsOneEvent(put(current), reserve: reserve)
        }
        out.append(put(current))
        return out
    }

    /// `body`, a put of a record that already names `focus`, said to keep
    /// that subject (``PreparedChange/keepingFocus(_:since:)``): its
    /// `$focus` is written at the version this device holds, so that it
    /// never undoes a move to another subject made elsewhere that has not
    /// reached this device. A put that moves the record, or creates it,
    /// is left as it is.
    static func keepingFocus(_ body: EventBody, of id: UUID, home: Home) throws -> EventBody {
        guard let current = try home.projector.record(id), body["focus"]?.stringValue == current.focus,
              let since = try home.projector.focusVersion(id) else { return body }
        return PreparedChange.keepingFocus(body, since: since)
    }

    /// The bytes ``keepingFocus(_:of:home:)`` adds to a body, at most.
    static let keepingFocusBytes = PreparedChange.keepingFocus(EventBody(type: "x", fields: [:]), since: Version(hlc: .zero, author: DeviceID(bytes: [UInt8](repeating: 0, count: 32))))
        .encoded().count - EventBody(type: "x", fields: [:]).encoded().count

    /// Fields with `null` (cleared) removed.
    static func present(_ f: [String: JSONValue]) -> [String: JSONValue] { f.filter { $0.value != .null } }

    /// A record's `source` (`{provider, recordId}`) as one key, when it
    /// gives both: what makes an import of an outside record idempotent.
    /// The provider's length comes first: two different sources never make
    /// one key, whatever their texts hold (a review: with the two joined
    /// by a NUL, `a\0b`+`1` and `a`+`b\01` were one, and an import wrote
    /// a row over an unrelated record).
    static func sourceKey(_ value: JSONValue?) -> String? {
        guard case .object(let o)? = value, let p = o["provider"]?.stringValue, let r = o["recordId"]?.stringValue,
              !p.isEmpty, !r.isEmpty else { return nil }
        return "\(p.utf8.count)\u{0}\(p)\u{0}\(r)"
    }

    /// A ``sourceKey(_:)`` as the command line writes a source: `provider:recordId`.
    static func sourceShown(key: String) -> String {
        let u = Array(key.utf8)
        guard let z = u.firstIndex(of: 0), let n = Int(String(decoding: u[..<z], as: UTF8.self)), z + 1 + n < u.count else { return key }
        return String(decoding: u[(z + 1) ..< (z + 1 + n)], as: UTF8.self) + ":" + String(decoding: u[(z + 2 + n)...], as: UTF8.self)
    }

    /// `source` as the command line writes it: `provider:recordId`.
    static func sourceText(_ value: JSONValue?) -> String {
        guard case .object(let o)? = value else { return "" }
        return (o["provider"]?.stringValue ?? "") + ":" + (o["recordId"]?.stringValue ?? "")
    }

    /// The live records of `store` that name a source, by its key
    /// (``sourceKey(_:)``), but those `excluding`; of several naming one,
    /// the first listed.
    static func recordsBySource(store: StoreName, home: Home, excluding: Set<UUID> = []) throws -> [String: UUID] {
        var out: [String: UUID] = [:]
        try home.projector.forEachRecord(Projector.RecordQuery(store: store.rawValue)) { r in
            if let key = sourceKey(r.fields["source"]), out[key] == nil, !excluding.contains(r.id) { out[key] = r.id }
        }
        return out
    }
}

extension RecordInput {
    /// A change adding care subject `focus` that the family does not count,
    /// with its author and why (``Home/firstUncountedChange(where:)``).
    static func uncountedSubjectAdd(_ focus: FocusKey, home: Home) throws -> (author: DeviceID, reason: String)? {
        try home.firstUncountedChange { _, body in
            guard let change = try? SubjectEvent(body) else { return false }
            return change.focus == focus && change.kind == .put
        }
    }
}

extension CLIError {
    /// No record with that id in the stores: never written, not arrived
    /// yet, or written by a device whose changes the family does not count
    /// (a removed one, a viewer), which the audit of the id explains.
    /// On a removed device, what the family writes after its removal is
    /// said never to arrive, not to come with a sync.
    static func noRecord(_ id: UUID, in home: Home) -> CLIError {
        home.notShownYet("record \(id.lowercasedText)") ?? CLIError(.noInput, "no record \(id.lowercasedText)",
                 hint: "'famctl replay --record \(id.lowercasedText)' shows every event naming it in this device's log, and why none counts; "
                     + (home.isRemoved ? Home.removedReadsNothingNew : "one written elsewhere arrives with 'famctl sync'."))
    }
}
