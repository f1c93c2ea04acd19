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

    static func fieldsText(_ f: [String: JSONValue]) -> String {
        f.keys.sorted().map { k in
            if case .array(let a) = f[k]! { return "\(k)=" + a.map(\.description).joined(separator: ",") }
            return "\(k)=\(f[k]!)"
        }.joined(separator: " ")
    }

    static func line(_ r: RecordState) -> String {
        var s = "\(r.id.lowercasedText)  \(r.at ?? "-")  \(r.store)  \(r.focus)"
        if r.deleted { s += "  (deleted)" }
        let f = fieldsText(r.fields.merging(StoreSchema.derived(store: r.store, fields: r.fields)) { a, _ in a })
        if !f.isEmpty { s += "  " + f }
        return s
    }
}
