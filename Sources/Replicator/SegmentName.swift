import Envelope

/// The file name of a segment: an immutable run of one author's events.
///
/// `<author>-<first>-<last>-<hash>.seg`: the author's key (64 lowercase hex),
/// the first and last sequence numbers (16 hex digits each, so names sort by
/// position), and the first 32 hex digits of the BLAKE2b-256 of the file's
/// bytes. Only lowercase `[0-9a-f-.]`: portable on every file system and sync
/// engine. Parsing accepts exact names only, so temporary files, conflict
/// copies and placeholders left by sync engines (`.syncthing.*.tmp`,
/// `*.sync-conflict-*`, `… (conflicted copy …)`, `.name.icloud`) are never
/// mistaken for segments.
public struct SegmentName: Hashable, Sendable, CustomStringConvertible {
    public static let suffix = ".seg"
    public static let hashHexCount = 32

    public let author: DeviceID
    public let firstSeq: UInt64
    public let lastSeq: UInt64
    /// 16 bytes: the prefix of BLAKE2b-256 of the segment's bytes.
    public let contentHash: [UInt8]

    /// - Precondition: `firstSeq ≥ 1`, `lastSeq ≥ firstSeq`, `contentHash` is 16 bytes.
    public init(author: DeviceID, firstSeq: UInt64, lastSeq: UInt64, contentHash: [UInt8]) {
        precondition(firstSeq >= 1 && lastSeq >= firstSeq && contentHash.count == Self.hashHexCount / 2)
        self.author = author
        self.firstSeq = firstSeq
        self.lastSeq = lastSeq
        self.contentHash = contentHash
    }

    /// The name for a segment of `bytes` covering `firstSeq…lastSeq` of `author`.
    public init(author: DeviceID, firstSeq: UInt64, lastSeq: UInt64, bytes: [UInt8]) {
        self.init(author: author, firstSeq: firstSeq, lastSeq: lastSeq,
                  contentHash: Array(Sodium.blake2b256(bytes).prefix(Self.hashHexCount / 2)))
    }

    /// Parses an exact segment name; `nil` for anything else.
    public init?(parsing name: String) {
        guard name.hasSuffix(Self.suffix) else { return nil }
        let parts = name.dropLast(Self.suffix.count).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 4,
              parts[0].count == 64, parts[1].count == 16, parts[2].count == 16, parts[3].count == Self.hashHexCount,
              parts.allSatisfy({ $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }),
              let author = DeviceID(hex: String(parts[0])),
              let first = UInt64(parts[1], radix: 16), let last = UInt64(parts[2], radix: 16),
              first >= 1, last >= first, last <= SyncEnvelope.maximumSeq,
              let hash = Hex.decode(parts[3])
        else { return nil }
        self.init(author: author, firstSeq: first, lastSeq: last, contentHash: hash)
    }

    public var description: String {
        [author.hex, Self.hex16(firstSeq), Self.hex16(lastSeq), Hex.encode(contentHash)].joined(separator: "-") + Self.suffix
    }

    /// Whether `bytes` are the content this name promises.
    public func matches(_ bytes: [UInt8]) -> Bool { matches(fileHash: Sodium.blake2b256(bytes)) }

    /// ``matches(_:)`` with the file's BLAKE2b-256 found already (``Segment/Hashes``).
    public func matches(fileHash: [UInt8]) -> Bool {
        Sodium.constantTimeEqual(Array(fileHash.prefix(Self.hashHexCount / 2)), contentHash)
    }

    static func hex16(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
