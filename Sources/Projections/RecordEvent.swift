import Envelope
import Foundation

/// A change to one record, as carried in an event body.
///
/// `record.put` creates or updates (only the fields it names; a `null` value
/// clears a field); `record.delete` writes a tombstone. Body keys:
/// `record` (UUID), `store`, `focus`, `at` (ISO-8601 with offset, put only),
/// `fields` (object, put only). Unknown keys are kept by ``EventBody``.
public struct RecordEvent: Sendable, Hashable {
    public enum Kind: String, Sendable { case put = "record.put", delete = "record.delete" }

    public static let schema = 1

    public let kind: Kind
    public let record: UUID
    public let store: String
    public let focus: String
    public let at: String?
    public let fields: [String: JSONValue]

    public init(kind: Kind, record: UUID, store: String, focus: String, at: String?, fields: [String: JSONValue]) {
        self.kind = kind
        self.record = record
        self.store = store
        self.focus = focus
        self.at = at
        self.fields = fields
    }

    public var body: EventBody {
        var o: [String: JSONValue] = [
            "record": .string(record.lowercasedText), "store": .string(store), "focus": .string(focus),
        ]
        if kind == .put {
            o["fields"] = .object(fields)
            if let at { o["at"] = .string(at) }
        }
        return EventBody(type: kind.rawValue, schema: Self.schema, fields: o)
    }

    /// Reads a record event from a body; `nil` when the body is another type.
    /// - Throws: ``EnvelopeError/badBody(_:)`` when it is a record event with missing keys.
    public init?(_ body: EventBody) throws(EnvelopeError) {
        guard let kind = Kind(rawValue: body.type) else { return nil }
        guard let r = body["record"]?.stringValue, let id = UUIDText.parse(r) else { throw .badBody("record event without a valid \"record\" id") }
        guard let store = body["store"]?.stringValue else { throw .badBody("record event without \"store\"") }
        guard let focus = body["focus"]?.stringValue else { throw .badBody("record event without \"focus\"") }
        self.kind = kind
        self.record = id
        self.store = store
        self.focus = focus
        self.at = body["at"]?.stringValue
        self.fields = body["fields"]?.objectValue ?? [:]
    }
}
