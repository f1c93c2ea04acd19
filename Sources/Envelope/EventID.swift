import Foundation
/// An event: BLAKE2b-256 of the bytes its signature covers (see
/// ``SyncEnvelope``; version 1 hashed the signature too).
public struct EventID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Compared a word at a time (``ByteEquality``).
    public static func == (a: EventID, b: EventID) -> Bool { ByteEquality.equal(a.bytes, b.bytes) }

    /// The "previous event" of an author's first event: 32 zero bytes.
    public static let none = EventID(bytes: [UInt8](repeating: 0, count: 32))

    /// - Precondition: `bytes.count == 32`.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 32, "an EventID is 32 bytes")
        self.bytes = bytes
    }

    public init?(hex: String) {
        guard let b = Hex.decode(hex), b.count == 32 else { return nil }
        bytes = b
    }

    /// BLAKE2b-256 of the given bytes: an envelope's signed bytes
    /// (``SyncEnvelope``'s id says which).
    public static func of(signedBytes: some ContiguousBytes) -> EventID {
        EventID(bytes: Sodium.blake2b256(signedBytes))
    }

    public var hex: String { Hex.encode(bytes) }
    public var short: String { String(hex.prefix(12)) }
    public var description: String { hex }

    /// Hashes the bytes in one go (an array's own hash feeds them one by one,
    /// which topped the projection's profile).
    public func hash(into h: inout Hasher) { bytes.withUnsafeBytes { h.combine(bytes: $0) } }
}
