import Envelope

/// The version of a write: the total order (hlc, author key) used for
/// last-writer-wins. Stored as 40 bytes (HLC big-endian ‖ author), whose byte
/// order is the version order, so SQLite can compare them with `max()`.
public struct Version: Hashable, Sendable, Comparable {
    public let hlc: HLC
    public let author: DeviceID

    public init(hlc: HLC, author: DeviceID) {
        self.hlc = hlc
        self.author = author
    }

    public init(_ env: SyncEnvelope) { self.init(hlc: env.hlc, author: env.author) }

    public var bytes: [UInt8] { hlc.bigEndianBytes + author.bytes }

    public init?(bytes b: [UInt8]) {
        guard b.count == 40, let h = HLC(bigEndianBytes: b[0..<8]) else { return nil }
        hlc = h
        author = DeviceID(bytes: Array(b[8..<40]))
    }

    public static func < (a: Version, b: Version) -> Bool { (a.hlc, a.author) < (b.hlc, b.author) }
}
