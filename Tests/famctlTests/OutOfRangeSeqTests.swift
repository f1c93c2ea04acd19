import Envelope
import EventLog
@testable import famctl
import Foundation
import Replicator
import Testing

/// Anyone who can write to the shared folder can plant a validly signed
/// event of a key of their own with a seq beyond what the log's signed
/// 64-bit integers hold (a review found `sync` and `accept` of every
/// member trapping on it, round after round). It is refused as a file,
/// and the family's events go on flowing.
struct OutOfRangeSeqTests {
    static let seq = UInt64(1) << 63

    /// A segment of one event at seq 2^63, signed by a key of the planter's
    /// own (famctl builds no such envelope: one at seq 5 has its seq
    /// written over, then is signed again, and the segment's header and
    /// checksum made to match).
    static func planted(family: FamilyID) throws -> (name: String, bytes: [UInt8], author: DeviceID) {
        let stranger = SigningKey(seed: [UInt8](repeating: 0x5a, count: 32))
        let env = try SyncEnvelope.seal(body: EventBody(type: "x", fields: [:]).encoded(), family: family, signer: stranger, seq: 5,
                                        previous: EventID(bytes: [UInt8](repeating: 7, count: 32)), hlc: HLC(milliseconds: 1_795_000_000_000, counter: 0),
                                        key: EpochKey(epoch: 0, key: SecretBytes([UInt8](repeating: 9, count: 32))))
        var e = Array(env.bytes.dropLast(64))
        for i in 0..<8 { e[58 + i] = UInt8(truncatingIfNeeded: seq >> (56 - 8 * UInt64(i))) }
        e += e.withUnsafeBytes { stranger.sign($0) }
        var b = Segment(envelopes: [env]).encoded().dropLast(32).map { $0 }
        for field in [58, 66] { for i in 0..<8 { b[field + i] = UInt8(truncatingIfNeeded: seq >> (56 - 8 * UInt64(i))) } }
        b.replaceSubrange((78 + 4)..., with: e)   // after the header and the event's length
        b += Sodium.blake2b256(b)
        return (SegmentName(author: stranger.publicKey, firstSeq: seq, lastSeq: seq, bytes: b).description, b, stranger.publicKey)
    }

    @Test func anEnvelopeOrSegmentBeyondTheLargestSeqIsRefused() throws {
        let (name, bytes, _) = try Self.planted(family: FamilyID(bytes: [UInt8](repeating: 1, count: 16)))
        #expect(SegmentName(parsing: name) == nil, "a name beyond the largest seq is no segment's")
        #expect(throws: SegmentError.self) { try Segment(decoding: bytes) }
        let env = Array(bytes[(78 + 4)..<(bytes.count - 32)])   // after the header (78 bytes) and the event's length
        #expect(throws: EnvelopeError.sequenceTooLarge(Self.seq)) { try SyncEnvelope(decoding: env) }
        #expect("\(SegmentError.badRange(first: Self.seq, last: Self.seq, count: 1))".contains("beyond the largest seq"))
        #expect("\(SegmentError.badRange(first: 1, last: 30_000, count: 30_000))".contains("more than a segment may (20000)"))
    }

    @Test func aPlantedSegmentBeyondTheLargestSeqStopsNoSync() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let home = try Home.open(mum.home)
        let (name, bytes, author) = try Self.planted(family: home.family)
        let folder = family.dir + "/" + home.family.description + "/" + author.hex
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + name))
        // Under a name whose seqs are in range too: refused by its content.
        let inRange = SegmentName(author: author, firstSeq: 1, lastSeq: 1, bytes: bytes).description
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + inRange))
        let id = try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        for r in [dad, mum, dad, mum] {
            let round = try r.run("sync")
            #expect(round.code == 0, "\(round.stderr)")
        }
        #expect(try mum.ok("record", "show", id).contains("mood=4"))
        let newcomer = FamctlRunner()
        let joined = try newcomer.run("accept", try mum.ok("invite"), "--name", "Gran", "--dir", family.dir)
        #expect(joined.code == 0, "\(joined.stderr)")
        #expect(try newcomer.ok("record", "list").contains(id))
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }
}
