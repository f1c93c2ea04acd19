import Envelope
import Foundation
import Projections

/// How records are shown: one line for people, an object for `--json`.
enum RecordView {
    /// A field's value as `--json` prints it: the ``JSONValue`` itself, so
    /// that a decimal stays a decimal (``PrettyJSON/value(_:)``).
    static func any(_ v: JSONValue) -> Any { v }

    /// The object `record list --json` prints: id, store, focus, at, fields,
    /// author (the creator's device id), deleted, updated, updatedBy (the
    /// device that wrote the last version), and derived values.
    static func json(_ r: RecordState) -> [String: Any] {
        var o: [String: Any] = [
            "id": r.id.lowercasedText, "store": r.store, "focus": r.focus, "at": r.at ?? NSNull(),
            "fields": r.fields.mapValues(any), "author": r.creator.hex, "deleted": r.deleted,
            "updated": TimeText.format(r.updated.hlc.date), "updatedBy": r.updated.author.hex,
        ]
        let derived = StoreSchema.derived(store: r.store, fields: r.fields)
        if !derived.isEmpty { o["derived"] = derived.mapValues(any) }
        return o
    }

    /// Fields as people read them: `key=value` pairs, sorted, separated by
    /// spaces; a list's items separated by commas. A text that would read
    /// as something else (empty, or holding a space, a double quote or, in
    /// a list, a comma) is printed in double quotes, with a backslash before
    /// each double quote and backslash in it, so that `foods="a,b",c` is
    /// two items and `note="fed well" side=left` two fields. (Control
    /// characters are shown escaped, quoted or not: ``Console``.) `cleared` stands for a
    /// null (a field a change removes), when given.
    static func fieldsText(_ f: [String: JSONValue], cleared: String? = nil) -> String {
        f.keys.sorted().map { k in nameText(k) + "=" + valueText(f[k]!, cleared: cleared) }.joined(separator: " ")
    }

    /// A field's name as ``fieldsText(_:cleared:)`` prints it: as it is
    /// when it is one `record add` takes (letters, digits and `_`), else in
    /// double quotes as a text is (a name another device or an older build
    /// wrote with a space or an `=` in it would read as more fields).
    static func nameText(_ k: String) -> String {
        if let first = k.first, first.isLetter || first == "$", k.dropFirst().allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { return k }
        return "\"" + k.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// One field's value as ``fieldsText(_:cleared:)`` prints it.
    static func valueText(_ v: JSONValue, cleared: String? = nil) -> String {
        switch v {
        case .string(let s): return text(s, inList: false)
        case .array(let items):
            // An empty list, not taken for a cleared field (`photos=`).
            if items.isEmpty { return "[]" }
            return items.map { if case .string(let s) = $0 { text(s, inList: true) } else { $0.jsonText } }.joined(separator: ",")
        case .null: return cleared ?? v.jsonText
        default: return v.jsonText
        }
    }

    private static func text(_ s: String, inList: Bool) -> String {
        if !needsQuotes(s, inList: inList) { return s }
        return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Whether ``valueText(_:cleared:)`` quotes the text `s`: empty, `[]`
    /// (how an empty list shows), or holding a double quote, in a list a
    /// comma or a backslash (`rice\,mashed` read as one item), or a space of any kind but a control character (those are
    /// shown escaped).
    static func needsQuotes(_ s: String, inList: Bool) -> Bool {
        // ASCII, most texts: the one space that is no control character is
        // U+0020 (tabs and line breaks are controls), so the bytes tell.
        let utf8 = s.utf8
        if utf8.allSatisfy({ $0 < 0x80 }) {
            return utf8.isEmpty || s == "[]" || utf8.contains { $0 == 0x22 || $0 == 0x20 || (inList && ($0 == 0x2C || $0 == 0x5C)) }
        }
        return needsQuotesByScalars(s, inList: inList)
    }

    /// ``needsQuotes(_:inList:)`` judged scalar by scalar, by their Unicode
    /// properties (what it does for any text that is not all ASCII).
    static func needsQuotesByScalars(_ s: String, inList: Bool) -> Bool {
        s.isEmpty || s == "[]" || s.unicodeScalars.contains {
            $0 == "\"" || (inList && ($0 == "," || $0 == "\\")) || ($0.properties.isWhitespace && !PlainText.isControl($0))
        }
    }

    /// The store rules a live record breaks as it stands (a merge of
    /// changes each valid alone), each as `store.field: rule`; none for a
    /// deleted record, or one of a store this famctl does not know.
    static func brokenRules(_ r: RecordState) -> [String] {
        guard !r.deleted, let store = StoreName(rawValue: r.store), let focus = FocusKey(r.focus) else { return [] }
        return StoreSchema.schema(for: store).violations(fields: r.fields, focus: focus, at: nil, now: nil).map { "\($0)" }
    }

    /// `fields` with the values of the store's time fields as text output
    /// shows them, in this device's time zone (``TimeText/shownHere(_:in:)``).
    static func shownHere(_ fields: [String: JSONValue], store: String) -> [String: JSONValue] {
        guard let name = StoreName(rawValue: store) else { return fields }
        let schema = StoreSchema.schema(for: name)
        var out = fields
        for (key, value) in fields {
            if case .string(let text) = value, schema.field(key)?.type == .time { out[key] = .string(TimeText.shownHere(text)) }
        }
        return out
    }

    /// What a record line shows for each care subject: a baby's name
    /// where `--focus` with that name names it and nothing else (no other
    /// live subject's name in any letters' case, not a key itself), quoted
    /// when it holds a space, else its focus key (`pregnancy` and `newMom`
    /// are their own).
    static func focusLabels(_ subjects: [SubjectState]) -> [String: String] {
        let live = subjects.filter { !$0.removed }
        var uses: [String: Int] = [:]
        for s in live { if let n = s.name { uses[n.lowercased(), default: 0] += 1 } }
        var out: [String: String] = [:]
        for s in live where s.kind == .baby {
            // (One with an '=' could read as a field: its key. One with a
            // space is quoted, as a member's name is: `"Rose  (deleted)"`
            // cannot pass for more columns.)
            guard let n = s.name, !n.isEmpty, uses[n.lowercased()] == 1, FocusKey(n) == nil, !n.contains("="),
                  n.trimmingCharacters(in: .whitespaces) == n else { continue }
            out[s.focus.description] = TerminalText.name(n)
        }
        return out
    }

    /// - Parameter labels: ``focusLabels(_:)``; a subject not in it is shown by its key.
    static func line(_ r: RecordState, labels: [String: String] = [:]) -> String {
        var s = "\(r.id.lowercasedText)  \(r.at.map { TimeText.shownHere($0) } ?? "-")  \(r.store)  \(labels[r.focus] ?? r.focus)"
        if r.deleted { s += "  (deleted)" }
        let f = fieldsText(shownHere(r.fields, store: r.store).merging(StoreSchema.derived(store: r.store, fields: r.fields)) { a, _ in a })
        if !f.isEmpty { s += "  " + f }
        // A sleep still going on (or one never ended), told apart from the
        // others at a glance (a review: one left open for days looked like any).
        if r.store == StoreName.sleep.rawValue, !r.deleted, r.fields["start"] != nil, r.fields["end"] == nil || r.fields["end"] == .null { s += "  (no end yet)" }
        return s
    }
}
