import Envelope
import Foundation

/// A photo's metadata, as a library event: `photo.put` {photo, record, size,
/// mediaType (jpeg, png, heic, webp), hash (BLAKE2b-256 of the plaintext), key (the per-photo key), blob
/// (BLAKE2b-256 of the encrypted blob, its name in the blob area)}, or
/// `photo.delete` {photo}. Field-level last-writer-wins, like records.
public struct PhotoEvent: Sendable, Hashable {
    public enum Kind: String, Sendable { case put = "photo.put", delete = "photo.delete" }
    public static let schema = 1

    public let kind: Kind
    public let photo: UUID
    public let fields: [String: JSONValue]

    public init(kind: Kind, photo: UUID, fields: [String: JSONValue] = [:]) {
        self.kind = kind
        self.photo = photo
        self.fields = fields
    }

    public var body: EventBody {
        var o = fields
        o["photo"] = .string(photo.lowercasedText)
        return EventBody(type: kind.rawValue, schema: Self.schema, fields: o)
    }

    public init?(_ body: EventBody) throws(EnvelopeError) {
        guard let kind = Kind(rawValue: body.type) else { return nil }
        guard let p = body["photo"]?.stringValue, let id = UUIDText.parse(p) else { throw .badBody("\(body.type) without a valid \"photo\" id") }
        self.kind = kind
        self.photo = id
        self.fields = body.object.filter { !["photo", "type", "schema"].contains($0.key) }
    }

    /// Why a `photo.put`'s metadata is not usable, or `nil`: the checks `replay` makes.
    public static func problem(_ f: [String: JSONValue]) -> String? {
        guard case .int(let size)? = f["size"], size > 0 else { return "size missing or not positive" }
        guard let t = f["mediaType"]?.stringValue, ["jpeg", "png", "heic", "webp"].contains(t) else { return "media type missing or unknown" }
        guard let h = f["hash"]?.stringValue, Hex.decode(h)?.count == 32 else { return "plaintext hash missing or not 32 bytes" }
        guard let k = f["key"]?.stringValue, Hex.decode(k)?.count == 32 else { return "photo key missing or not 32 bytes" }
        guard let b = f["blob"]?.stringValue, Hex.decode(b)?.count == 32 else { return "blob name missing or not 32 bytes" }
        guard let r = f["record"]?.stringValue, UUID(text: r) != nil else { return "record id missing" }
        return nil
    }
}

/// A photo as projected.
public struct PhotoState: Sendable, Equatable {
    public let id: UUID
    public let record: UUID?
    public let size: Int
    public let mediaType: String
    public let hash: [UInt8]
    public let key: [UInt8]
    public let blob: String
    public let creator: DeviceID
    public let deleted: Bool
}

extension PhotoState {
    /// The fields of the `photo.put` that makes this photo (as `photo add`
    /// writes them): what `accept` writes again when it carries the photo
    /// into a family.
    public var putFields: [String: JSONValue] {
        var o: [String: JSONValue] = [
            "size": .int(Int64(size)), "mediaType": .string(mediaType), "hash": .string(Hex.encode(hash)),
            "key": .string(Hex.encode(key)), "blob": .string(blob),
        ]
        if let record { o["record"] = .string(record.lowercasedText) }
        return o
    }
}
