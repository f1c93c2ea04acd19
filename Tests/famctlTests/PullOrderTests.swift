import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Replicator
import Testing

/// A pull takes each author's segments in seq order, however the peer lists
/// them: a directory lists its files in the file system's hash order, and a
/// later segment read first would hold all its events as waiting, to be
/// taken out of `pending` one by one afterwards.
struct PullOrderTests {
    /// A peer that lists what another lists, last first.
    final class ReversedListing: Peer {
        let inner: any Peer
        init(_ inner: any Peer) { self.inner = inner }
        var label: String { inner.label }
        func changes(since token: String?, limit: Int) throws(PeerError) -> ChangePage {
            let page = try inner.changes(since: token, limit: limit)
            return ChangePage(objects: page.objects.reversed(), token: page.token, moreComing: page.moreComing)
        }
        func create(_ path: String, _ bytes: [UInt8]) throws(PeerError) { try inner.create(path, bytes) }
        func replace(_ path: String, _ bytes: [UInt8], expected: String?) throws(PeerError) -> String { try inner.replace(path, bytes, expected: expected) }
        func get(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) { try inner.get(path) }
        func delete(_ path: String) throws(PeerError) { try inner.delete(path) }
    }

    @Test func anAuthorsSegmentsAreIngestedInSeqOrderWhateverTheListing() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        try mum.ok("sync")
        // Dad publishes his events in four segments.
        let dadHome = try Home.open(dad.home)
        for round in 0..<4 {
            try dadHome.append((0..<50).map { i in
                RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z",
                            fields: ["kind": .string("mood"), "mood": .int(Int64((round + i) % 5 + 1))]).body
            })
            try dad.ok("sync")
        }
        let folder = family.dir + "/" + dadHome.family.description + "/" + dadHome.deviceID.hex
        let segments = try FileIO.list(folder).filter { $0.hasSuffix(".seg") }
        #expect(segments.count >= 4, "\(segments)")

        let home = try Home.open(mum.home)
        let staging = NSTemporaryDirectory() + "famctl-order-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: staging) }
        let peer = ReversedListing(DirectoryPeer(SharedDirectory(root: family.dir, family: home.family, staging: staging)))
        let replicator = try Replicator(log: home.log, peer: peer, family: home.family, me: home.deviceID)
        var firstSeqs: [UInt64] = []
        var held = 0
        let pulled = try replicator.pull { batches, onIngested in
            for events in batches {
                guard let first = events.first, let env = try? SyncEnvelope(decoding: first), env.author == dadHome.deviceID else { continue }
                firstSeqs.append(env.seq)
            }
            try home.ingest(batches: batches) { i, report in
                held += report.outcomes.count { if case .held = $0.outcome { true } else { false } }
                try onIngested(i, report)
            }
        }
        #expect(firstSeqs.count >= 4 && firstSeqs == firstSeqs.sorted(), "Dad's segments were ingested starting at seqs \(firstSeqs)")
        #expect(held == 0, "\(held) events waited for earlier ones")
        #expect(pulled.accepted >= 200)
        #expect(try home.log.pendingCount() == 0)
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }
}
