import Envelope
import Replicator
import Testing

/// A segment's reader checks every envelope in place and hashes the file
/// once (``Segment/Hashes``, ``SyncEnvelope/checkStructure(of:)``): these
/// compare it, on random segments and random damage, with the plain way
/// (each hash on its own, each envelope decoded whole).
struct SegmentDecodingTests {

    /// `count` consecutive events of `signer` in `family`, from seq `first`.
    static func chain(_ signer: SigningKey, in family: FamilyID, from first: UInt64 = 1, count: Int, rng: inout SplitMixRNG) throws -> [SyncEnvelope] {
        let key = EpochKey.generate(epoch: 0)
        var out: [SyncEnvelope] = []
        var previous = EventID.none
        for i in 0..<count {
            let seq = first + UInt64(i)
            let body = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let env = try SyncEnvelope.seal(body: body, family: family, signer: signer, seq: seq,
                                            previous: seq == 1 ? .none : (i == 0 ? EventID(bytes: [UInt8](repeating: 7, count: 32)) : previous),
                                            hlc: HLC(milliseconds: 1_000 + seq, counter: 0), key: key)
            out.append(env)
            previous = env.id
        }
        return out
    }

    /// What `Segment(decoding:)` did before it checked envelopes in place:
    /// the same checks, each envelope decoded whole.
    static func reference(_ b: [UInt8]) -> Result<[[UInt8]], SegmentError> {
        func get(_ at: Int, _ n: Int) -> UInt64 { (at..<(at + n)).reduce(0) { $0 << 8 | UInt64(b[$1]) } }
        guard b.count >= 78 + 32 else { return .failure(.truncated(b.count)) }
        guard Array(b[0..<8]) == Segment.tag else { return .failure(.notASegment) }
        guard b[8] == Segment.version else { return .failure(.unsupportedVersion(b[8])) }
        guard b[9] == 0 else { return .failure(.notASegment) }
        guard Sodium.blake2b256(Array(b[0..<(b.count - 32)])) == Array(b[(b.count - 32)...]) else { return .failure(.checksum) }
        let family = FamilyID(bytes: Array(b[10..<26])), author = DeviceID(bytes: Array(b[26..<58]))
        let first = get(58, 8), last = get(66, 8), n = get(74, 4)
        guard first >= 1, last >= first, last - first + 1 == n, n <= UInt64(Segment.maximumEvents), last <= UInt64(Int64.max) else {
            return .failure(.badRange(first: first, last: last, count: n))
        }
        var events: [[UInt8]] = []
        var at = 78
        let end = b.count - 32
        for i in 0..<Int(n) {
            guard at + 4 <= end else { return .failure(.truncated(b.count)) }
            let len = Int(get(at, 4))
            at += 4
            guard len <= end - at else { return .failure(.truncated(b.count)) }
            let bytes = Array(b[at..<(at + len)])
            at += len
            let seq: UInt64
            switch referenceEnvelope(bytes) {
            case .success(let s): seq = s
            case .failure(let error): return .failure(.badEvent(index: i, error))
            }
            guard FamilyID(bytes: Array(bytes[10..<26])) == family else { return .failure(.misplacedEvent(index: i, why: "is of another family than the segment's")) }
            guard DeviceID(bytes: Array(bytes[26..<58])) == author else { return .failure(.misplacedEvent(index: i, why: "is another author's than the segment's")) }
            guard seq == first + UInt64(i) else { return .failure(.misplacedEvent(index: i, why: "has seq \(seq), not \(first + UInt64(i))")) }
            events.append(bytes)
        }
        return at == end ? .success(events) : .failure(.trailingBytes)
    }

    /// The events a decoding gave (their count and a hash of them), or its error.
    static func summary(_ result: Result<[[UInt8]], SegmentError>) -> String {
        switch result {
        case .success(let events): "\(events.count) events, \(Hex.encode(Array(Sodium.blake2b256(events.flatMap { $0 }).prefix(8))))"
        case .failure(let error): "\(error)"
        }
    }

    /// An error's case, without what it carries.
    static func kind(_ error: some Error) -> String {
        Mirror(reflecting: error).children.first?.label ?? "\(error)"
    }

    /// The structural checks `SyncEnvelope(decoding:)` made before they
    /// were factored out (copied, so that the tests do not compare the new
    /// code with itself): the seq, or the first check that fails.
    static func referenceEnvelope(_ bytes: [UInt8]) -> Result<UInt64, EnvelopeError> {
        func uint(_ at: Int, _ n: Int) -> UInt64 { (at..<(at + n)).reduce(0) { $0 << 8 | UInt64(bytes[$1]) } }
        guard bytes.count >= 138 + 16 + 64 else { return .failure(.truncated(count: bytes.count)) }
        guard Array(bytes[0..<8]) == Array("famctlev".utf8) else { return .failure(.badTag) }
        guard (1...2).contains(bytes[8]) else { return .failure(.unsupportedVersion(bytes[8])) }
        guard bytes[9] == 0 else { return .failure(.reservedFlags(bytes[9])) }
        let declared = Int(uint(134, 4))
        let actual = bytes.count - 138 - 64
        guard declared <= 1 << 20 else { return .failure(.tooLarge(declared)) }
        guard declared == actual else { return .failure(.lengthMismatch(declared: declared, actual: actual)) }
        let seq = uint(58, 8)
        guard seq >= 1 else { return .failure(.zeroSequence) }
        guard seq <= UInt64(Int64.max) else { return .failure(.sequenceTooLarge(seq)) }
        guard (seq == 1) == bytes[66..<98].allSatisfy({ $0 == 0 }) else { return .failure(.previousMismatch(seq: seq)) }
        return .success(seq)
    }

    static func decoded(_ b: [UInt8]) -> Result<[[UInt8]], SegmentError> {
        do throws(SegmentError) { return .success(try Segment(decoding: b).events) } catch { return .failure(error) }
    }

    /// The segment's bytes with their checksum made right again.
    static func resealed(_ b: [UInt8]) -> [UInt8] {
        guard b.count >= 32 else { return b }
        let body = Array(b[..<(b.count - 32)])
        return body + Sodium.blake2b256(body)
    }

    /// A segment holds at most ``Segment/maximumEvents`` events: one of
    /// more, however well formed, is refused by its reader.
    @Test func aSegmentOfMoreThanTheMostEventsIsRefused() throws {
        let signer = SigningKey(seed: [UInt8](repeating: 61, count: 32))
        let family = FamilyID.owned(by: signer.publicKey)
        let key = EpochKey.generate(epoch: 0)
        var envelopes: [SyncEnvelope] = []
        var previous = EventID.none
        for seq in 1...UInt64(Segment.maximumEvents + 1) {
            let env = try SyncEnvelope.seal(body: [], family: family, signer: signer, seq: seq, previous: previous,
                                            hlc: HLC(milliseconds: 1_000 + seq, counter: 0), key: key)
            envelopes.append(env)
            previous = env.id
        }
        let bytes = Segment(envelopes: envelopes).encoded()
        #expect(throws: SegmentError.badRange(first: 1, last: UInt64(Segment.maximumEvents + 1), count: UInt64(Segment.maximumEvents + 1))) {
            _ = try Segment(decoding: bytes)
        }
        #expect(try Segment(decoding: Segment(envelopes: Array(envelopes.dropLast())).encoded()).events.count == Segment.maximumEvents)
    }

    @Test func hashingOnceGivesTheHashOfTheFileAndOfAllButItsTail() {
        var rng = SplitMixRNG(seed: 91)
        // Around BLAKE2b's 128-byte blocks, where the state copy matters.
        let lengths = [0, 1, 31, 32, 33, 127, 128, 129, 160, 255, 256, 257, 384, 1_000] + (0..<20).map { _ in Int.random(in: 0...5_000, using: &rng) }
        for n in lengths {
            let data = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            for k in Set([0, n, max(0, n - 32), n / 2, Int.random(in: 0...n, using: &rng)]) {
                let (all, first) = data.withUnsafeBytes { Sodium.blake2b256($0, andOfFirst: k) }
                #expect(all == Sodium.blake2b256(data), "whole hash, n \(n), k \(k)")
                #expect(first == Sodium.blake2b256(Array(data[..<k])), "prefix hash, n \(n), k \(k)")
            }
        }
    }

    @Test func theInPlaceCheckOfAnEnvelopeNamesEachKindOfDamage() throws {
        var rng = SplitMixRNG(seed: 17)
        let events = try Self.chain(SigningKey(seed: [UInt8](repeating: 3, count: 32)), in: FamilyID.random(), count: 30, rng: &rng)
        func inPlace(_ b: [UInt8]) -> Result<UInt64, EnvelopeError> {
            b.withUnsafeBytes { raw in
                do throws(EnvelopeError) { return .success(try SyncEnvelope.checkStructure(of: raw)) } catch { return .failure(error) }
            }
        }
        func whole(_ b: [UInt8]) -> Result<UInt64, EnvelopeError> {
            do throws(EnvelopeError) { return .success(try SyncEnvelope(decoding: b).seq) } catch { return .failure(error) }
        }
        for (round, env) in events.enumerated() {
            let good = env.bytes
            #expect(inPlace(good) == .success(env.seq))
            let n = good.count - 138 - 64
            var cases: [([UInt8], EnvelopeError)] = []
            var b = good; b[Int.random(in: 0..<8, using: &rng)] ^= 0x20; cases.append((b, .badTag))
            b = good; b[8] = 3; cases.append((b, .unsupportedVersion(3)))
            b = good; b[9] = UInt8.random(in: 1...255, using: &rng); cases.append((b, .reservedFlags(b[9])))
            b = good; for i in 58..<66 { b[i] = 0 }; cases.append((b, .zeroSequence))
            b = good; b[58] |= 0x80; cases.append((b, .sequenceTooLarge(env.seq | 1 << 63)))
            b = good; for i in 66..<98 { b[i] = env.seq == 1 ? 9 : 0 }; cases.append((b, .previousMismatch(seq: env.seq)))
            b = good; b += [0]; cases.append((b, .lengthMismatch(declared: n, actual: n + 1)))
            b = good; b[134] = 0x7f; cases.append((b, .tooLarge(0x7f00_0000 + n)))
            let cut = Int.random(in: 0..<218, using: &rng)
            cases.append((Array(good[..<cut]), .truncated(count: cut)))
            for (damaged, error) in cases {
                #expect(inPlace(damaged) == .failure(error), "event \(round): \(error)")
                #expect(whole(damaged) == .failure(error), "event \(round): \(error)")
            }
        }
        // Several faults at once: the first check that fails names it, as
        // the checks did before they were factored out.
        for round in 0..<2_000 {
            var b = events[round % events.count].bytes
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: b[Int.random(in: 0..<min(b.count, 140), using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                case 1: if !b.isEmpty { b.removeLast(Int.random(in: 1...b.count, using: &rng)) }
                case 2: b += (0..<Int.random(in: 1...40, using: &rng)).map { UInt8(truncatingIfNeeded: $0) }
                default: for i in 58..<66 where i < b.count { b[i] = 0 }
                }
            }
            let expected = Self.referenceEnvelope(b)
            #expect(inPlace(b) == expected, "round \(round)")
            #expect(whole(b) == expected, "round \(round)")
        }
    }

    @Test func aDamagedSegmentFailsAsWhenEveryEnvelopeWasDecodedWhole() throws {
        var rng = SplitMixRNG(seed: 5)
        let family = FamilyID.random(), stranger = FamilyID.random()
        let mum = SigningKey(seed: [UInt8](repeating: 1, count: 32)), dad = SigningKey(seed: [UInt8](repeating: 2, count: 32))
        let mine = try Self.chain(mum, in: family, count: 12, rng: &rng)
        let dads = try Self.chain(dad, in: family, count: 12, rng: &rng)
        let elsewhere = try Self.chain(mum, in: stranger, count: 12, rng: &rng)
        var seen = Set<String>()
        for round in 0..<600 {
            let start = Int.random(in: 0..<6, using: &rng)
            var run = Array(mine[start..<(start + Int.random(in: 1...6, using: &rng))])
            // Damage the run of events (the header still says Mum's seqs).
            let i = Int.random(in: 0..<run.count, using: &rng)
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: run[i] = dads[Int(run[i].seq) - 1]                   // another author's event at the place
            case 1: run[i] = elsewhere[Int(run[i].seq) - 1]              // another family's
            case 2: if run.count > 1 { run.swapAt(0, run.count - 1) }    // out of order
            case 3: run[i] = mine[(Int(run[i].seq) + 6) % 12]            // Mum's, another seq
            default: break
            }
            var b = Segment(envelopes: [run[0]]).encoded()
            // Written by hand after the header, so that any run can be put in.
            b = Array(b[..<78])
            for e in run {
                b += withUnsafeBytes(of: UInt32(e.bytes.count).bigEndian) { Array($0) }
                b += e.bytes
            }
            for k in 66..<74 { b[k] = UInt8(truncatingIfNeeded: (run[0].seq + UInt64(run.count) - 1) >> (8 * UInt64(73 - k))) }
            for k in 74..<78 { b[k] = UInt8(truncatingIfNeeded: UInt64(run.count) >> (8 * UInt64(77 - k))) }
            b += Sodium.blake2b256(b)
            // And damage the bytes: a flipped byte anywhere, cut short,
            // bytes added; the checksum made right again or not.
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: b[Int.random(in: 0..<b.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            case 3: b[Int.random(in: 0..<78, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)   // the header
            case 1: b.removeLast(Int.random(in: 1...min(b.count, 200), using: &rng))
            case 2: b.insert(contentsOf: [0, 0, 0, 9], at: b.count - 32)
            default: break
            }
            if Bool.random(using: &rng) { b = Self.resealed(b) }
            let expected = Self.reference(b)
            let got = Self.decoded(b)
            let same = got == expected
            #expect(same, "round \(round): \(Self.summary(got)), where the former decoding gave \(Self.summary(expected))")
            switch expected {
            case .success: seen.insert("accepted")
            case .failure(.checksum): seen.insert("checksum")
            case .failure(.trailingBytes): seen.insert("trailingBytes")
            case .failure(.notASegment): seen.insert("notASegment")
            case .failure(let e): seen.insert(Self.kind(e))
            }
        }
        // Accepted runs and each kind of refusal came up.
        #expect(seen.isSuperset(of: ["accepted", "badEvent", "misplacedEvent", "checksum", "truncated", "trailingBytes", "notASegment", "badRange"]), "\(seen)")
    }

    @Test func aReaderChecksTheNameAndTheChecksumFromOnePass() throws {
        var rng = SplitMixRNG(seed: 8)
        let mum = SigningKey(seed: [UInt8](repeating: 1, count: 32))
        let segment = Segment(envelopes: try Self.chain(mum, in: FamilyID.random(), count: 40, rng: &rng))
        let bytes = segment.encoded()
        let name = segment.name(for: bytes)
        let hashes = Segment.Hashes(of: bytes)
        #expect(hashes.checksumMatches)
        #expect(name.matches(fileHash: hashes.file))
        #expect(try Segment(decoding: bytes, hashes: hashes).events == segment.events)
        var damaged = bytes
        damaged[200] ^= 1
        let after = Segment.Hashes(of: damaged)
        #expect(!after.checksumMatches)
        #expect(!name.matches(fileHash: after.file))
        #expect(throws: SegmentError.checksum) { try Segment(decoding: damaged, hashes: after) }
        #expect(!Segment.Hashes(of: Array(bytes[..<31])).checksumMatches)
    }
}
