@testable import Envelope
@testable import EventLog
import Foundation
import PropertySeeds
import Testing

/// Events taken out of the middle of a chain (past the log's append-only
/// rules) and read again: each is put back in its place when it chains
/// both ways, and nothing else fills the place.
struct ChainGapTests {
    /// A log holding `envs`, then the events at `seqs` deleted past the rules.
    func logWithGap(_ dir: TempDir, _ envs: [SyncEnvelope], taking seqs: ClosedRange<Int>) throws -> EventLog {
        let log = try EventLog(path: dir.path + "/log.sqlite")
        #expect(try log.ingest(envs.map(\.bytes), family: Author.family).accepted.count == envs.count)
        try log.database.execute("DROP TRIGGER events_no_delete")
        try log.database.run("DELETE FROM events WHERE seq BETWEEN ?1 AND ?2", [.integer(Int64(seqs.lowerBound)), .integer(Int64(seqs.upperBound))])
        try log.database.execute("CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only: delete refused'); END;")
        return log
    }

    @Test func anEventTakenOutOfTheMiddleIsPutBackWhenReadAgain() throws {
        let dir = TempDir()
        let a = Author(seed: 21)
        let envs = (0..<6).map { _ in a.next() }
        let log = try logWithGap(dir, envs, taking: 3...3)
        #expect(try log.chainGaps(in: Author.family) == [a.id: [3...3]])
        #expect(!(try log.audit(family: Author.family).isIntact))

        let report = try log.ingest(envs.map(\.bytes), family: Author.family)
        #expect(report.outcomes.map(\.outcome) == [.duplicate, .duplicate, .accepted, .duplicate, .duplicate, .duplicate])
        #expect(report.gapsFilled == 1 && report.accepted.map(\.id) == [envs[2].id])
        #expect(try log.chainGaps(in: Author.family).isEmpty)
        #expect(try log.audit(family: Author.family).isIntact)
        #expect(try log.rejectedEvents().isEmpty)
    }

    /// The events of a longer gap, read last first: each waits for the
    /// one before it, and all are put back once the first is.
    @Test func aLongerGapFillsWhateverOrderItsEventsComeIn() throws {
        let dir = TempDir()
        let a = Author(seed: 22)
        let envs = (0..<7).map { _ in a.next() }
        let log = try logWithGap(dir, envs, taking: 2...5)
        #expect(try log.chainGaps(in: Author.family) == [a.id: [2...5]])

        let report = try log.ingest([envs[4], envs[3], envs[2], envs[1]].map(\.bytes), family: Author.family)
        #expect(report.outcomes.map(\.outcome) == [.held(waitingFor: 4), .held(waitingFor: 3), .held(waitingFor: 2), .accepted])
        #expect(report.gapsFilled == 4)
        #expect(report.accepted.map(\.seq) == [2, 3, 4, 5])
        #expect(try log.chainGaps(in: Author.family).isEmpty)
        #expect(try log.pendingByAuthor(in: Author.family).isEmpty)
        #expect(try log.audit(family: Author.family).isIntact)
    }

    /// Another event signed for the empty place (it follows the event
    /// before, but the event after names the one taken out) is another
    /// branch: rejected, and the place stays empty for the real one.
    @Test func anotherBranchDoesNotFillTheGap() throws {
        let dir = TempDir()
        let a = Author(seed: 23)
        let envs = (0..<5).map { _ in a.next() }
        let log = try logWithGap(dir, envs, taking: 3...3)
        let branch = a.forged(seq: 3, previous: envs[1].id, hlcMs: envs[1].hlc.milliseconds + 1)

        let report = try log.ingest([branch.bytes], family: Author.family)
        guard case .rejected(let reason) = report.outcomes.first?.outcome else { Issue.record("\(report.outcomes)"); return }
        #expect(reason.contains("not the event that seq 4 follows"), "\(reason)")
        #expect(report.gapsFilled == 0)
        #expect(try log.chainGaps(in: Author.family) == [a.id: [3...3]])
        // Nor one that does not follow the event before it (in a log of its
        // own: a second event signed for seq 3 would be a fork proof here).
        let otherDir = TempDir()
        let other = try logWithGap(otherDir, envs, taking: 3...3)
        let astray = a.forged(seq: 3, previous: envs[0].id, hlcMs: envs[1].hlc.milliseconds + 1, text: "astray")
        guard case .rejected(let why) = try other.ingest([astray.bytes], family: Author.family).outcomes.first?.outcome else { Issue.record("not rejected"); return }
        #expect(why.contains("previous id"), "\(why)")
        #expect(try other.chainGaps(in: Author.family) == [a.id: [3...3]])
    }

    /// A waiting event whose signature was altered (a version-2 id does not
    /// cover the signature, so the copy keeps the real event's id and link)
    /// is not taken into the log when the gap before it fills: it is
    /// dropped, and its place stays empty for the real one.
    @Test func aWaitingCopyWithAnAlteredSignatureDoesNotFillTheGap() throws {
        let dir = TempDir()
        let a = Author(seed: 24)
        let envs = (0..<5).map { _ in a.next() }
        let log = try logWithGap(dir, envs, taking: 3...4)
        var forged = envs[3].bytes
        forged[forged.count - 1] ^= 0x01
        try log.database.run("INSERT INTO pending(id, family, author, seq, received_at, bytes) VALUES(?1, ?2, ?3, 4, 0, ?4)",
                             [.blob(envs[3].id.bytes), .blob(Author.family.bytes), .blob(a.id.bytes), .blob(forged)])
        let report = try log.ingest([envs[2].bytes], family: Author.family)
        #expect(report.accepted.map(\.seq) == [3])
        #expect(try log.chainGaps(in: Author.family) == [a.id: [4...4]])
        let failures = try log.audit(family: Author.family).failures.map(\.reason)
        #expect(!failures.contains { $0.hasPrefix("signature does not verify") }, "an event whose signature does not verify entered the log: \(failures)")
        // The real one fills it.
        #expect(try log.ingest([envs[3].bytes], family: Author.family).accepted.map(\.seq) == [4])
        #expect(try log.audit(family: Author.family).isIntact)
    }

    /// A gap that runs into its author's fork point: only the seqs below
    /// the fork point are asked for, and filling the gap stops there.
    @Test func aGapStopsAtItsAuthorsForkPoint() throws {
        let dir = TempDir()
        let a = Author(seed: 25)
        let envs = (0..<6).map { _ in a.next() }
        let log = try logWithGap(dir, envs, taking: 3...5)
        #expect(try log.fillableChainGaps(in: Author.family) == [a.id: [3...5]])
        // Two events signed for seq 4, both following 3: a fork at 4.
        let branch = a.forged(seq: 4, previous: envs[2].id, hlcMs: envs[2].hlc.milliseconds + 1)
        _ = try log.ingest([envs[3].bytes, branch.bytes], family: Author.family)
        #expect(try log.forkPoint(of: a.id, in: Author.family) == 4)
        #expect(try log.fillableChainGaps(in: Author.family) == [a.id: [3...3]])
        // 3 comes back: it fills its place, and nothing at or past the fork point follows it.
        #expect(try log.ingest([envs[2].bytes], family: Author.family).accepted.map(\.seq) == [3])
        #expect(try log.chainGaps(in: Author.family) == [a.id: [4...5]])
        #expect(try log.fillableChainGaps(in: Author.family).isEmpty)
    }

    /// Property: three authors' chains, random events taken out of them
    /// (heads kept), then every event read again in a random order and in
    /// random batches: the log ends holding exactly what it held, with
    /// nothing rejected, no fork proof, nothing waiting, and its audit intact.
    @Test(arguments: PropertySeeds.range(0..<12)) func gapsFillToTheSameLogWhateverTheOrder(seed: UInt64) throws {
        var rng = SplitMixRNG(seed: seed)
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let authors = (0..<3).map { Author(seed: UInt8(40 + $0)) }
        var all: [SyncEnvelope] = []
        for a in authors { all += (0..<Int.random(in: 3...12, using: &rng)).map { _ in a.next() } }
        #expect(try log.ingest(all.map(\.bytes), family: Author.family).accepted.count == all.count)
        let before = try Self.chains(log)
        // Some of each chain's events below its head.
        var taken = 0
        try log.database.execute("DROP TRIGGER events_no_delete")
        for a in authors {
            let head = try log.head(of: a.id, in: Author.family).seq
            for seq in 1..<head where Bool.random(using: &rng) {
                try log.database.run("DELETE FROM events WHERE author = ?1 AND seq = ?2", [.blob(a.id.bytes), .integer(Int64(seq))])
                taken += 1
            }
        }
        let gaps = try log.chainGaps(in: Author.family)
        #expect(gaps.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } } == taken)
        var shuffled = all.shuffled(using: &rng)
        var filled = 0
        while !shuffled.isEmpty {
            let n = Int.random(in: 1...shuffled.count, using: &rng)
            filled += try log.ingest(shuffled.prefix(n).map(\.bytes), family: Author.family).gapsFilled
            shuffled.removeFirst(n)
        }
        #expect(filled == taken, "seed \(seed)")
        #expect(try Self.chains(log) == before, "seed \(seed)")
        #expect(try log.chainGaps(in: Author.family).isEmpty && log.rejectedEvents().isEmpty && log.forkProofs().isEmpty)
        #expect(try log.pendingByAuthor(in: Author.family).isEmpty)
        #expect(try log.audit(family: Author.family).isIntact, "seed \(seed)")
    }

    /// Each (author, seq) with the id the log holds there.
    static func chains(_ log: EventLog) throws -> [String: EventID] {
        var out: [String: EventID] = [:]
        try log.forEachEvent(order: .chain) { out["\($0.author.hex):\($0.seq)"] = $0.id }
        return out
    }

    /// What asks a pull to look for gaps: the rules found removed, or an
    /// audit that found one.
    @Test func gapsAreAskedForWhenTheRulesWereRemovedOrAnAuditFoundOne() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        #expect(try log.chainGapsAsked() == nil)
        try log.noteChainGapsFound()
        let first = try #require(try log.chainGapsAsked())
        try log.noteChainGapsFound()
        #expect(try log.chainGapsAsked() != first, "two finds within a second are two asks")

        let other = TempDir()
        do {
            let log = try EventLog(path: other.path + "/log.sqlite")
            try log.database.execute("DROP TRIGGER events_no_delete")
        }
        let reopened = try EventLog(path: other.path + "/log.sqlite")
        #expect(try reopened.chainGapsAsked() != nil)
    }
}
