import Envelope

/// An immutable run of one author's consecutive events in one family.
///
/// Layout (version 1, integers big-endian; see `docs/format.md`):
///
/// | offset | size | field |
/// | ---: | ---: | --- |
/// | 0 | 8 | tag `famctlsg` |
/// | 8 | 1 | version = 1 |
/// | 9 | 1 | flags = 0 |
/// | 10 | 16 | family id |
/// | 26 | 32 | author key |
/// | 58 | 8 | first seq |
/// | 66 | 8 | last seq |
/// | 74 | 4 | event count *n* = last − first + 1 |
/// | 78 | … | *n* × (4-byte length, envelope bytes) |
/// | end − 32 | 32 | BLAKE2b-256 of every byte before it |
///
/// The checksum catches damage; the envelopes' own signatures are what make
/// the events trustworthy, and ingest verifies them one by one.
public struct Segment: Sendable {
    public static let tag: [UInt8] = Array("famctlsg".utf8)
    public static let version: UInt8 = 1
    static let headerCount = 78
    /// A segment holds at most this many events (publishing splits longer runs).
    public static let maximumEvents = 20_000

    public let family: FamilyID
    public let author: DeviceID
    public let firstSeq: UInt64
    public let lastSeq: UInt64
    /// The envelopes' bytes, in seq order.
    public let events: [[UInt8]]

    /// A segment of `envelopes`, which must be one author's consecutive events of one family.
    public init(envelopes: [SyncEnvelope]) {
        precondition(!envelopes.isEmpty, "a segment holds at least one event")
        let first = envelopes[0]
        precondition(envelopes.enumerated().allSatisfy { $1.family == first.family && $1.author == first.author && $1.seq == first.seq + UInt64($0) },
                     "a segment is one author's consecutive events")
        family = first.family
        author = first.author
        firstSeq = first.seq
        lastSeq = envelopes[envelopes.count - 1].seq
        events = envelopes.map(\.bytes)
    }

    public func encoded() -> [UInt8] {
        var out = Self.tag + [Self.version, 0] + family.bytes + author.bytes
        Self.put(firstSeq, 8, &out)
        Self.put(lastSeq, 8, &out)
        Self.put(UInt64(events.count), 4, &out)
        for e in events {
            Self.put(UInt64(e.count), 4, &out)
            out += e
        }
        out += Sodium.blake2b256(out)
        return out
    }

    /// The file name this segment is published under.
    public func name(for bytes: [UInt8]) -> SegmentName {
        SegmentName(author: author, firstSeq: firstSeq, lastSeq: lastSeq, bytes: bytes)
    }

    /// Parses and checks a segment's structure: tag, version, checksum, counts,
    /// and that every envelope decodes and is the author's event at its place.
    /// - Throws: ``SegmentError`` saying what is wrong.
    public init(decoding b: [UInt8]) throws(SegmentError) {
        guard b.count >= Self.headerCount + 32 else { throw .truncated(b.count) }
        guard Array(b[0..<8]) == Self.tag else { throw .notASegment }
        guard b[8] == Self.version else { throw .unsupportedVersion(b[8]) }
        guard b[9] == 0 else { throw .notASegment }
        guard Sodium.blake2b256(Array(b[0..<(b.count - 32)])) == Array(b[(b.count - 32)...]) else { throw .checksum }
        family = FamilyID(bytes: Array(b[10..<26]))
        author = DeviceID(bytes: Array(b[26..<58]))
        firstSeq = Self.get(b, 58, 8)
        lastSeq = Self.get(b, 66, 8)
        let n = Self.get(b, 74, 4)
        guard firstSeq >= 1, lastSeq >= firstSeq, lastSeq - firstSeq + 1 == n, n <= UInt64(Self.maximumEvents) else {
            throw .badRange(first: firstSeq, last: lastSeq, count: n)
        }
        var events: [[UInt8]] = []
        var at = Self.headerCount
        let end = b.count - 32
        for i in 0..<Int(n) {
            guard at + 4 <= end else { throw .truncated(b.count) }
            let len = Int(Self.get(b, at, 4))
            at += 4
            guard len <= end - at else { throw .truncated(b.count) }
            let bytes = Array(b[at..<(at + len)])
            at += len
            let env: SyncEnvelope
            do throws(EnvelopeError) { env = try SyncEnvelope(decoding: bytes) } catch { throw .badEvent(index: i, error) }
            guard env.family == family, env.author == author, env.seq == firstSeq + UInt64(i) else { throw .misplacedEvent(index: i) }
            events.append(bytes)
        }
        guard at == end else { throw .trailingBytes }
        self.events = events
    }

    static func put(_ v: UInt64, _ n: Int, _ out: inout [UInt8]) {
        for i in stride(from: n - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    static func get(_ b: [UInt8], _ at: Int, _ n: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in at..<(at + n) { v = v << 8 | UInt64(b[i]) }
        return v
    }
}

/// Why bytes are not a usable segment. Anything of this kind is "not yet
/// arrived" to a reader: it is retried later, never deleted.
public enum SegmentError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(Int)
    case notASegment
    case unsupportedVersion(UInt8)
    case checksum
    case badRange(first: UInt64, last: UInt64, count: UInt64)
    case badEvent(index: Int, EnvelopeError)
    case misplacedEvent(index: Int)
    case trailingBytes
    /// The file's content does not hash to the name it is stored under.
    case nameMismatch
    /// The header names another author or family than the folder it sits in.
    case wrongFolder

    public var description: String {
        switch self {
        case .truncated(let n): "incomplete (\(n) bytes): still arriving, or cut short"
        case .notASegment: "not a famctl segment"
        case .unsupportedVersion(let v): "segment version \(v) is newer than this famctl reads"
        case .checksum: "checksum mismatch: damaged, or still arriving"
        case .badRange(let f, let l, let n): "inconsistent range \(f)…\(l) with \(n) events"
        case .badEvent(let i, let e): "event \(i) is malformed: \(e)"
        case .misplacedEvent(let i): "event \(i) is not the author's event at its place"
        case .trailingBytes: "bytes after the last event"
        case .nameMismatch: "content does not match its name (still arriving, or damaged)"
        case .wrongFolder: "belongs to another author's or family's folder"
        }
    }
}
