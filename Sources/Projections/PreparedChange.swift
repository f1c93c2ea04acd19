import Envelope

/// The part of applying an event that needs no projection state: reading the
/// body into the change it makes and writing its values as canonical JSON.
/// Pure and `Sendable`, so a caller can make it on another core ahead of
/// ``Projector/apply(_:body:prepared:)``, which does the rest (the household's
/// verdict, the merge, the writes).
public struct PreparedChange: Sendable {
    /// A field set by a put: its value, and that value as canonical JSON
    /// (`nil`: cleared by a `null`), written once for the row and the history.
    public typealias Written = (name: String, value: JSONValue, text: [UInt8]?)

    enum Change: Sendable {
        case library(LibraryEvent)
        /// A known type with missing or invalid keys.
        case malformed(EnvelopeError)
        case deferred(String)
        case put(kind: String, id: String, written: [Written], trail: String, result: Projector.Applied)
        case delete(kind: String, id: String, result: Projector.Applied)
        case ignored
    }

    /// A record, photo or care-subject change: the household must allow its author to write.
    let isChange: Bool
    let change: Change

    public init(_ body: EventBody) {
        isChange = RecordEvent.Kind(rawValue: body.type) != nil || body.type == SubjectEvent.type || PhotoEvent.Kind(rawValue: body.type) != nil
        do throws(EnvelopeError) {
            change = try Self.read(body)
        } catch {
            change = .malformed(error)
        }
    }

    private static func read(_ body: EventBody) throws(EnvelopeError) -> Change {
        if let lib = try LibraryEvent(body) { return .library(lib) }
        if let r = try RecordEvent(body) {
            guard StoreName(rawValue: r.store) != nil else { return .deferred("unknown store '\(r.store)'") }
            guard body.schema <= StoreSchema.version else { return .deferred("\(r.store) schema \(body.schema) is newer than \(StoreSchema.version)") }
            let id = UUIDText.lowercase(r.record)
            switch r.kind {
            case .put:
                var changes = r.fields
                changes["$store"] = .string(r.store)
                changes["$focus"] = .string(r.focus)
                if let at = r.at { changes["$at"] = .string(at) }
                return put("record", id, changes, .record(r.record))
            case .delete:
                return .delete(kind: "record", id: id, result: .record(r.record))
            }
        }
        if let p = try PhotoEvent(body) {
            let id = UUIDText.lowercase(p.photo)
            switch p.kind {
            case .put: return put("photo", id, p.fields, .photo(p.photo))
            case .delete: return .delete(kind: "photo", id: id, result: .photo(p.photo))
            }
        }
        if let s = try SubjectEvent(body) {
            var changes = s.fields
            changes["$kind"] = .string(SubjectKind(s.focus).rawValue)
            return put("subject", s.focus.description, changes, .subject(s.focus))
        }
        return .ignored
    }

    private static func put(_ kind: String, _ id: String, _ changes: [String: JSONValue], _ result: Projector.Applied) -> Change {
        let written = changes.map { (name: $0.key, value: $0.value, text: $0.value == .null ? nil : $0.value.jsonBytes) }
        let trail = JSONValue.objectBytes(written.map { ($0.name, $0.text ?? Array("null".utf8)) })
        return .put(kind: kind, id: id, written: written, trail: String(decoding: trail, as: UTF8.self), result: result)
    }
}
