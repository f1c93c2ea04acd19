import Foundation

/// The plaintext inside an envelope: a UTF-8 JSON object whose `type` names
/// the change (`record.put`, `record.delete`, `family.create`, …) and whose
/// `schema` names the version of that type's fields.
///
/// The body is never re-serialised for verification (the signature covers
/// the ciphertext), so JSON is safe here. Keys a reader does not know are
/// kept in ``object`` untouched.
public struct EventBody: Sendable, Hashable {
    public let type: String
    public let schema: Int
    /// The whole object, `type` and `schema` included.
    public let object: [String: JSONValue]

    public init(type: String, schema: Int = 1, fields: [String: JSONValue]) {
        var o = fields
        o["type"] = .string(type)
        o["schema"] = .int(Int64(schema))
        self.type = type
        self.schema = schema
        self.object = o
    }

    /// - Throws: ``EnvelopeError/badBody(_:)`` when the bytes are not a JSON
    ///   object with a string `type` and an integer `schema`.
    public init(decoding bytes: [UInt8]) throws(EnvelopeError) {
        guard let value = JSONValue.parse(bytes) else { throw .badBody("not JSON") }
        guard case .object(let o) = value else { throw .badBody("not a JSON object") }
        guard case .string(let t)? = o["type"], !t.isEmpty else { throw .badBody("missing \"type\"") }
        guard let given = o["schema"] else { throw .badBody("missing \"schema\"") }
        guard case .int(let s) = given, s >= 1, s <= Int64(Int32.max) else { throw .badBody("\"schema\" is \(String("\(given)".prefix(40))), not a whole number from 1 to \(Int32.max)") }
        type = t
        schema = Int(s)
        object = o
    }

    /// Compact JSON with sorted keys.
    public func encoded() -> [UInt8] { JSONValue.object(object).jsonBytes }

    public subscript(key: String) -> JSONValue? { object[key] }
}
