import Envelope
@testable import famctl
import Foundation
import Replicator
import Testing

/// A device's own segment damaged in the shared folder (a byte flipped,
/// cut short) holds up its events for everyone else: the author finds it
/// changed at its next round, reads it back, and writes it again from its
/// log; the others then take its events. A segment read back whole is
/// not read again while its file stays as it was.
struct OwnSegmentRepairTests {
    enum Damage: CaseIterable { case flippedByte, cutShort }

    @Test(arguments: Damage.allCases)
    func theAuthorWritesADamagedSegmentAgain(damage: Damage) throws {
        let family = try SharedFamily()
        let (mum, dad, dir) = (family.mum, family.dad, family.dir)
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try dad.ok("sync")
        let dadHome = try Home.open(dad.home)
        let folder = dir + "/" + dadHome.family.description + "/" + dadHome.deviceID.hex
        let newest = try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.sorted().last!
        let path = folder + "/" + newest
        var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        switch damage {
        case .flippedByte: bytes[bytes.count / 2] ^= 0xFF
        case .cutShort: bytes.removeLast(bytes.count / 3)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // Mum cannot take it: not yet arrived.
        #expect(try mum.ok("sync").contains("not yet arrived"))
        // Dad's next round finds his file changed, and writes it again.
        let repaired = try dad.ok("sync")
        #expect(repaired.contains("repaired 1 of this device's segment(s)"), "\(repaired)")
        #expect(try dad.ok("sync").contains("repaired") == false, "a segment read back whole was repaired again")
        try mum.ok("sync")
        #expect(try mum.ok("digest") == dad.ok("digest"))
        #expect(try mum.ok("replay").hasSuffix("result: OK"))
    }

    /// A segment is read back once after it is written, then only when its
    /// file changes: a round with nothing new reads no file.
    @Test func aSegmentReadBackWholeIsNotReadAgain() throws {
        let family = try SharedFamily()
        let dad = family.dad
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try dad.ok("sync")
        let home = try Home.open(dad.home)
        let peer = CountingPeer(try home.replicator().peer)
        let pulled = try Replicator(log: home.log, peer: peer, family: home.family, me: home.deviceID)
            .pull { try home.ingest(batches: $0, onIngested: $1) }
        #expect(pulled.repaired == 0)
        #expect(peer.reads == 0, "a round with nothing new read \(peer.reads) file(s)")
    }
}

/// A peer that counts the objects read through it.
final class CountingPeer: Peer, @unchecked Sendable {
    let inner: any Peer
    private(set) var reads = 0
    init(_ inner: any Peer) { self.inner = inner }
    var label: String { inner.label }
    func changes(since token: String?, limit: Int) throws(PeerError) -> ChangePage { try inner.changes(since: token, limit: limit) }
    func create(_ path: String, _ bytes: [UInt8]) throws(PeerError) { try inner.create(path, bytes) }
    func replace(_ path: String, _ bytes: [UInt8], expected: String?) throws(PeerError) -> String { try inner.replace(path, bytes, expected: expected) }
    func get(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) { reads += 1; return try inner.get(path) }
    func getOnce(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) { reads += 1; return try inner.getOnce(path) }
    func deleteOnce(_ path: String) throws(PeerError) { try inner.deleteOnce(path) }
    func delete(_ path: String) throws(PeerError) { try inner.delete(path) }
}

/// A segment that verifies as a file (its name, its structure) but holds
/// an event whose signature does not: the round says so, naming the file,
/// and takes its other events.
struct RefusedEventsTests {
    @Test func aForgedEventInAWellFormedSegmentIsReported() throws {
        let family = try SharedFamily()
        let (mum, dad, dir) = (family.mum, family.dad, family.dir)
        for i in 0..<3 { try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i + 1)") }
        try dad.ok("sync")
        let home = try Home.open(dad.home)
        let head = try home.log.head(of: home.deviceID, in: home.family).seq
        let envs = try home.log.chain(of: home.deviceID, in: home.family, seqs: (head - 2)...head)
        var bytes = envs[2].bytes
        bytes[SyncEnvelope.headerCount + 4] ^= 0x01   // in the ciphertext: the signature no longer holds
        let forged = Segment(envelopes: Array(envs.prefix(2)) + [try SyncEnvelope(decoding: bytes)])
        let encoded = forged.encoded()
        let name = forged.name(for: encoded).description
        try Data(encoded).write(to: URL(fileURLWithPath: dir + "/" + home.family.description + "/" + home.deviceID.hex + "/" + name))
        let out = try mum.ok("sync")
        #expect(out.contains("refused: \(home.deviceID.hex)/\(name): 1 event(s) that do not verify"), "\(out)")
        let json = try mum.ok("sync", "--json")
        #expect(json.contains("\"refused\""))
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }
}
