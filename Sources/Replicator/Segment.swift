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

    /// The two hashes a reader checks, found in one pass over a file's
    /// bytes: the BLAKE2b-256 of the whole file (its name holds a prefix of
    /// it) and whether the last 32 bytes are the BLAKE2b-256 of the rest.
    public struct Hashes: Sendable {
        public let file: [UInt8]
        public let checksumMatches: Bool
        /// The length and last bytes of the file they are the hashes of
        /// (``Segment/init(decoding:hashes:)`` checks it was given that file's).
        let count: Int
        let tail: [UInt8]

        public init(of b: [UInt8]) {
            let end = max(0, b.count - 32)
            let (all, first) = b.withUnsafeBytes { Sodium.blake2b256($0, andOfFirst: end) }
            file = all
            count = b.count
            tail = Array(b[end...])
            checksumMatches = b.count >= 32 && Sodium.constantTimeEqual(first, tail)
        }

        func areOf(_ b: [UInt8]) -> Bool { b.count == count && b[max(0, b.count - 32)...].elementsEqual(tail) }
    }

    /// Parses and checks a segment's structure: tag, version, checksum, counts,
    /// and that every envelope decodes and is the author's event at its place.
    /// - Throws: ``SegmentError`` saying what is wrong.
    public init(decoding b: [UInt8]) throws(SegmentError) {
        try self.init(decoding: b, hashes: Hashes(of: b))
    }

    /// ``init(decoding:)`` with the file's ``Hashes`` found already (a
    /// reader checks the file's name with them first).
    ///
    /// Each envelope is checked in place (``SyncEnvelope/checkStructure(of:)``,
    /// its family, author and seq) and copied out; its id is not hashed
    /// here, since ingest decodes each envelope again. (Hashing each id, the
    /// whole file twice and copying it for its checksum made up two thirds
    /// of a read's instructions, on the thread that ingests, while the
    /// other cores waited for the next files.)
    /// - Precondition: `hashes` are those of `b`.
    public init(decoding b: [UInt8], hashes: Hashes) throws(SegmentError) {
        precondition(hashes.areOf(b), "the hashes of another file")
        guard b.count >= Self.headerCount + 32 else { throw .truncated(b.count) }
        guard Array(b[0..<8]) == Self.tag else { throw .notASegment }
        guard b[8] == Self.version else { throw .unsupportedVersion(b[8]) }
        guard b[9] == 0 else { throw .notASegment }
        guard hashes.checksumMatches else { throw .checksum }
        family = FamilyID(bytes: Array(b[10..<26]))
        author = DeviceID(bytes: Array(b[26..<58]))
        firstSeq = Self.get(b, 58, 8)
        lastSeq = Self.get(b, 66, 8)
        let n = Self.get(b, 74, 4)
        guard firstSeq >= 1, lastSeq >= firstSeq, lastSeq - firstSeq + 1 == n, n <= UInt64(Self.maximumEvents), lastSeq <= SyncEnvelope.maximumSeq else {
            throw .badRange(first: firstSeq, last: lastSeq, count: n)
        }
        let firstSeq = firstSeq
        let read = b.withUnsafeBytes { raw -> Result<[[UInt8]], SegmentError> in
            /// Whether the envelope at `at` holds the header's bytes at `offset` (family or author).
            func same(_ at: Int, _ offset: Int) -> Bool {
                stride(from: 0, to: offset == 10 ? 16 : 32, by: 8).allSatisfy {
                    raw.loadUnaligned(fromByteOffset: at + offset + $0, as: UInt64.self) == raw.loadUnaligned(fromByteOffset: offset + $0, as: UInt64.self)
                }
            }
            var events: [[UInt8]] = []
            events.reserveCapacity(Int(n))
            var at = Self.headerCount
            let end = raw.count - 32
            for i in 0..<Int(n) {
                guard at + 4 <= end else { return .failure(.truncated(raw.count)) }
                let len = Int(Self.get(raw, at, 4))
                at += 4
                guard len <= end - at else { return .failure(.truncated(raw.count)) }
                let envelope = UnsafeRawBufferPointer(rebasing: raw[at..<(at + len)])
                let seq: UInt64
                do throws(EnvelopeError) { seq = try SyncEnvelope.checkStructure(of: envelope) } catch { return .failure(.badEvent(index: i, error)) }
                // The envelope's family (10..<26) and author (26..<58) sit
                // at the same offsets as the segment header's.
                guard same(at, 10) else { return .failure(.misplacedEvent(index: i, why: "is of another family than the segment's")) }
                guard same(at, 26) else { return .failure(.misplacedEvent(index: i, why: "is another author's than the segment's")) }
                guard seq == firstSeq + UInt64(i) else { return .failure(.misplacedEvent(index: i, why: "has seq \(seq), not \(firstSeq + UInt64(i))")) }
                events.append(Array(envelope))
                at += len
            }
            return at == end ? .success(events) : .failure(.trailingBytes)
        }
        events = try read.get()
    }

    static func put(_ v: UInt64, _ n: Int, _ out: inout [UInt8]) {
        for i in stride(from: n - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    static func get<Bytes: RandomAccessCollection<UInt8>>(_ b: Bytes, _ at: Int, _ n: Int) -> UInt64 where Bytes.Index == Int {
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
    /// `why`: of another family, another author's, or the seq it has.
    case misplacedEvent(index: Int, why: String)
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
        case .badRange(let f, let l, let n):
            f >= 1 && l >= f && l - f + 1 == n && n > UInt64(Segment.maximumEvents)
                ? "range \(f)…\(l) holds \(n) events, more than a segment may (\(Segment.maximumEvents))"
                : l > SyncEnvelope.maximumSeq ? "range \(f)…\(l) ends beyond the largest seq a chain may reach (2^63 - 1)"
                : "inconsistent range \(f)…\(l) with \(n) events"
        // Counted from 1, as a user counts (a review: "event 0").
        case .badEvent(let i, let e): "event \(i + 1) is malformed: \(e)"
        case .misplacedEvent(let i, let why): "event \(i + 1) \(why): not the author's event at its place"
        case .trailingBytes: "bytes after the last event"
        case .nameMismatch: "content does not match its name (still arriving, or damaged)"
        case .wrongFolder: "belongs to another author's or family's folder"
        }
    }
}
