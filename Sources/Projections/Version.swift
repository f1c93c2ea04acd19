import Envelope

/// The version of a write: the total order (hlc, author key) used for
/// last-writer-wins. Stored as 40 bytes (HLC big-endian ‖ author), whose byte
/// order is the version order, so SQLite can compare them with `max()`.
public struct Version: Hashable, Sendable, Comparable {
    public let hlc: HLC
    public let author: DeviceID

    /// HLC big-endian ‖ author: computed once, since every projected write
    /// stores it.
    public let bytes: [UInt8]

    public init(hlc: HLC, author: DeviceID) {
        self.hlc = hlc
        self.author = author
        var b = [UInt8]()
        b.reserveCapacity(40)
        withUnsafeBytes(of: hlc.rawValue.bigEndian) { b += $0 }
        b += author.bytes
        bytes = b
    }

    public init(_ env: SyncEnvelope) { self.init(hlc: env.hlc, author: env.author) }

    public init?(bytes b: [UInt8]) {
        guard b.count == 40, let h = HLC(bigEndianBytes: b[0..<8]) else { return nil }
        hlc = h
        author = DeviceID(bytes: Array(b[8..<40]))
        bytes = b
    }

    public static func < (a: Version, b: Version) -> Bool { (a.hlc, a.author) < (b.hlc, b.author) }
    public static func == (a: Version, b: Version) -> Bool { a.bytes == b.bytes }
    public func hash(into h: inout Hasher) { bytes.withUnsafeBytes { h.combine(bytes: $0) } }
}
