@testable import Envelope
@testable import EventLog
import Foundation
import PropertySeeds
import Testing

/// `ingest(batches:…)`: each batch is a transaction of its own, judged as
/// one `ingest` call, while the next batches' checks run ahead.
struct IngestBatchesTests {
    struct Stop: Error {}

    /// Property: random chains of several authors, with duplicates, forks,
    /// chain breakers and bytes that do not decode or verify, shuffled and
    /// cut into random batches (some spanning several check blocks), give
    /// the same reports batch by batch, the same events handed over (each
    /// with what `prepare` made of it) and the same log, whether the batches
    /// go in one call or one call each.
    @Test(arguments: PropertySeeds.range(0..<8))
    func batchesInOneCallAreJudgedAsOneCallEach(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let authors = (0..<Int(rng.next() % 3 + 1)).map { Author(seed: UInt8($0 + 1)) }
        var all: [[UInt8]] = []
        for a in authors {
            for _ in 0..<Int(rng.next() % 120 + 1) {
                let env = a.next()
                all.append(env.bytes)
                switch rng.next() % 48 {
                case 0, 5, 6: all.append(env.bytes)   // a duplicate
                case 1: all.append(a.forged(seq: env.seq, previous: env.previous, hlcMs: a.clock).bytes)   // a fork
                case 2: all.append(a.forged(seq: env.seq + 1, previous: EventID.of(signedBytes: [UInt8(env.seq % 256)]), hlcMs: a.clock + 1).bytes)   // breaks the chain
                case 3: var bad = env.bytes; bad[bad.count - 1] ^= 1; all.append(bad)   // a bad signature
                case 4: all.append(Array(env.bytes.prefix(40)))   // does not decode
                default: break
                }
            }
        }
        all.shuffle(using: &rng)
        var batches: [[[UInt8]]] = []
        var i = 0
        while i < all.count {
            let n = Int(rng.next() % 100 + 1)
            batches.append(Array(all[i..<min(i + n, all.count)]))
            i += n
        }
        let prepare: @Sendable (SyncEnvelope) -> String? = { "\($0.author.short)/\($0.seq)/\($0.id.short)" }
        func summary(_ r: IngestReport) -> [String] { r.outcomes.map { "\($0.id?.short ?? "-") \($0.outcome)" } }

        let oneDir = TempDir(), eachDir = TempDir()
        let one = try EventLog(path: oneDir.path + "/log.sqlite"), each = try EventLog(path: eachDir.path + "/log.sqlite")
        var oneReports: [[String]] = [], oneSeen: [String] = []
        try one.ingest(batches: batches, family: Author.family, prepare: prepare,
                       onAccepted: { env, made in oneSeen.append("\(env.id.short) \(made ?? "nil")") },
                       onCommitted: { b, r in
                           #expect(b == oneReports.count, "batch \(b) reported out of order")
                           oneReports.append(summary(r))
                       })
        var eachReports: [[String]] = [], eachSeen: [String] = []
        for batch in batches {
            let r = try each.ingest(batch, family: Author.family, prepare: prepare,
                                    onAccepted: { env, made in eachSeen.append("\(env.id.short) \(made ?? "nil")") })
            eachReports.append(summary(r))
        }
        #expect(oneReports == eachReports)
        #expect(oneSeen == eachSeen)
        // What an event is handed is its own (or nothing: one held in an
        // earlier batch and released in this one is opened by the caller).
        let handed = oneSeen.map { $0.split(separator: " ") }
        #expect(handed.allSatisfy { $0[1] == "nil" || $0[1].hasSuffix("/" + $0[0]) })
        #expect(try one.count() == each.count())
        #expect(try one.pendingCount() == each.pendingCount())
        #expect(try one.heads(in: Author.family) == each.heads(in: Author.family))
        #expect(try one.forkPoints(in: Author.family) == each.forkPoints(in: Author.family))
        #expect(try one.audit(family: Author.family).isIntact)
    }

    /// A batch that fails is rolled back; the batches before it stay
    /// committed, none after it is ingested, and the same call again takes
    /// up what is left.
    @Test func aFailedBatchKeepsTheOnesBeforeAndStopsThere() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let a = Author(seed: 1)
        let batches = (0..<4).map { _ in (0..<70).map { _ in a.next().bytes } }
        let failing = try SyncEnvelope(decoding: batches[2][40]).id
        var committed: [Int] = []
        #expect(throws: Stop.self) {
            try log.ingest(batches: batches, family: Author.family, prepare: { _ in () },
                           onAccepted: { env, _ in if env.id == failing { throw Stop() } },
                           onCommitted: { b, _ in committed.append(b) })
        }
        #expect(committed == [0, 1])
        #expect(try log.head(of: a.id, in: Author.family).seq == 140)
        #expect(try log.pendingCount() == 0)
        committed = []
        try log.ingest(batches: batches, family: Author.family, prepare: { _ in () }, onAccepted: { _, _ in },
                       onCommitted: { b, r in
                           committed.append(b)
                           #expect(r.accepted.count == (b < 2 ? 0 : 70), "batch \(b)")
                       })
        #expect(committed == [0, 1, 2, 3])
        #expect(try log.head(of: a.id, in: Author.family).seq == 280)
        #expect(try log.audit(family: Author.family).isIntact)
    }

    /// `onCommitted` runs after its batch's commit: what it does is outside
    /// the batch (a throw there leaves the batch in the log), and nothing
    /// after it is ingested.
    @Test func onCommittedRunsAfterTheCommit() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let a = Author(seed: 2)
        let batches = (0..<3).map { _ in (0..<40).map { _ in a.next().bytes } }
        #expect(throws: Stop.self) {
            try log.ingest(batches: batches, family: Author.family, prepare: { _ in () }, onAccepted: { _, _ in },
                           onCommitted: { b, _ in
                               #expect(log.database.isAutocommit, "batch \(b) reported inside its transaction")
                               if b == 1 { throw Stop() }
                           })
        }
        #expect(try log.head(of: a.id, in: Author.family).seq == 80)
    }
}
