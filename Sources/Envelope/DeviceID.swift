/// A device: the 32-byte Ed25519 public key of one install.
///
/// Written as 64 lowercase hex characters; ``short`` is the first 12 for display.
public struct DeviceID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Compared a word at a time (``ByteEquality``).
    public static func == (a: DeviceID, b: DeviceID) -> Bool { ByteEquality.equal(a.bytes, b.bytes) }

    /// - Precondition: `bytes.count == 32`.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 32, "a DeviceID is 32 bytes")
        self.bytes = bytes
    }

    public init?(hex: String) {
        guard let b = Hex.decode(hex), b.count == 32 else { return nil }
        bytes = b
    }

    public var hex: String { Hex.encode(bytes) }
    public var short: String { String(hex.prefix(12)) }
    public var description: String { hex }

    /// Byte-wise order: the tie-break of the LWW total order (hlc, author).
    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    /// Hashes the bytes in one go (an array's own hash feeds them one by one,
    /// which topped the projection's profile).
    public func hash(into h: inout Hasher) { bytes.withUnsafeBytes { h.combine(bytes: $0) } }
}
