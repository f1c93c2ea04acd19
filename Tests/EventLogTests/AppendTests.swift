import Envelope
@testable import EventLog
import Foundation
import Testing

struct AppendTests {
    /// The smallest body an append takes.
    static let plainBody = Array("{\"type\":\"t\",\"schema\":1}".utf8)

    @Test func appendsChainAndSurvivesReopen() throws {
        let dir = TempDir()
        let identity = DeviceIdentity.generate()
        let family = Author.family
        var ids: [EventID] = []
        do {
            let log = try EventLog(path: dir.path + "/log.sqlite")
            let batch = try log.append(bodies: (0..<5).map { Array("{\"type\":\"t\",\"schema\":1,\"n\":\($0)}".utf8) },
                                       as: identity, family: family, key: Author.key)
            ids = batch.map(\.id)
            #expect(batch.map(\.seq) == [1, 2, 3, 4, 5])
            #expect(batch[0].previous == .none)
            for (a, b) in zip(batch, batch.dropFirst()) {
                #expect(b.previous == a.id)
                #expect(b.hlc > a.hlc)
            }
            let one = try log.append(bodies: [Self.plainBody], as: identity, family: family, key: Author.key)
            ids += one.map(\.id)
            #expect(one[0].seq == 6 && one[0].previous == batch[4].id)
        }
        let reopened = try EventLog(path: dir.path + "/log.sqlite")
        #expect(try reopened.count() == 6)
        #expect(try reopened.head(of: identity.deviceID, in: family).id == ids.last)
        for id in ids { #expect(try reopened.contains(id)) }
        let report = try reopened.audit(family: family)
        #expect(report.isIntact)
        #expect(report.eventCount == 6)
    }

    @Test func newFileIsPrivateAndInWALMode() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let attrs = try FileManager.default.attributesOfItem(atPath: dir.path + "/log.sqlite")
        #expect((attrs[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try log.database.statement("PRAGMA journal_mode").first { $0.text(0) } == "wal")
        #expect(try log.database.statement("PRAGMA synchronous").first { $0.int(0) } == 2)  // FULL
    }

    /// A random source that repeats itself (a device restored from a
    /// virtual machine's snapshot) must not make two bodies share a nonce
    /// under one key: each nonce hashes its event's seq, clock and body with
    /// the random bytes.
    @Test func aRepeatingRandomSourceStillGivesEveryBodyItsOwnNonce() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        log.randomSecret = { SecretBytes([UInt8](repeating: 7, count: $0)) }
        let me = DeviceIdentity.generate()
        let bodies = ["{\"type\":\"t\",\"schema\":1,\"n\":1}", "{\"type\":\"t\",\"schema\":1,\"n\":2}", "{\"type\":\"t\",\"schema\":1,\"n\":2}"]
            .map { Array($0.utf8) }
        // Two appends, as a restored device would make them: the same random bytes each time.
        let envs = try log.append(bodies: Array(bodies[0..<2]), as: me, family: Author.family, key: Author.key)
            + log.append(bodies: [bodies[2]], as: me, family: Author.family, key: Author.key)
        #expect(Set(envs.map(\.nonce)).count == 3, "one nonce per event, the same body (and random bytes) at another clock too")
        for (env, body) in zip(envs, bodies) {
            #expect(try env.openBody(with: Author.key) == body)
            let expected = [UInt8](repeating: 7, count: 32).withUnsafeBytes { SyncEnvelope.hedgedNonce(random: $0, seq: env.seq, hlc: env.hlc, body: body) }
            #expect(env.nonce == expected)
        }
    }

    @Test func eventsCannotBeUpdatedOrDeleted() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let env = try log.append(bodies: [Self.plainBody], as: .generate(), family: Author.family, key: Author.key)[0]
        let update = #expect(throws: SQLiteError.self) { try log.database.run("UPDATE events SET bytes = x'00' WHERE id = ?1", [.blob(env.id.bytes)]) }
        let delete = #expect(throws: SQLiteError.self) { try log.database.run("DELETE FROM events") }
        // RAISE(ABORT) surfaces as a constraint failure, matched by code, and names the rule.
        #expect(update?.code == .constraint)
        #expect(delete?.code == .constraint)
        #expect(delete?.message.contains("append-only") == true)
        #expect(try log.count() == 1)
        #expect(try log.envelope(env.id)?.bytes == env.bytes)
    }

    @Test func forgedEndOfRangeClockDoesNotStopAppends() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let signer = SigningKey(seed: [UInt8](repeating: 5, count: 32))
        let absurd = try SyncEnvelope.seal(body: Self.plainBody, family: Author.family, signer: signer,
                                           seq: 1, previous: .none, hlc: HLC(rawValue: .max), key: Author.key)
        #expect(try log.ingest([absurd.bytes], family: Author.family).outcomes[0].outcome == .accepted)
        let mine = try log.append(bodies: [Self.plainBody], as: .generate(), family: Author.family, key: Author.key)
        #expect(mine.count == 1)
        let report = try log.audit(family: Author.family)
        #expect(report.isIntact)
        #expect(report.farFuture.map(\.id) == [absurd.id])
    }

    @Test func failedCallbackRollsBackTheWholeBatch() throws {
        struct Boom: Error {}
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        var calls = 0
        #expect(throws: Boom.self) {
            try log.append(bodies: [Self.plainBody, Self.plainBody],
                           as: .generate(), family: Author.family, key: Author.key) { _ in
                calls += 1
                if calls == 2 { throw Boom() }
            }
        }
        #expect(try log.count() == 0)
    }

    /// `append(count:encoding:)` asks for each body in order, ahead of
    /// storing it (never after its `onAccepted`), and a body that cannot be
    /// made — say the 900th of 1 000, asked for once hundreds were stored
    /// (at most ``EventLog/sealingLead`` wait unstored) — leaves nothing behind.
    @Test func encodingRunsAheadInOrderAndAFailureRollsBackEverything() throws {
        struct Boom: Error {}
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let identity = DeviceIdentity.generate()
        var encoded: [Int] = []
        var accepted: [Int] = []
        let envs = try log.append(count: 200, encoding: { i in
            encoded.append(i)
            return (Array("{\"type\":\"t\",\"schema\":1,\"n\":\(i)}".utf8), Author.key)
        }, as: identity, family: Author.family, onAccepted: { env, i in
            #expect(encoded.contains(i), "event \(i) accepted before its body was asked for")
            #expect(env.seq == UInt64(i + 1))
            accepted.append(i)
        })
        #expect(encoded == Array(0..<200) && accepted == Array(0..<200) && envs.count == 200)
        #expect(try log.audit(family: Author.family).isIntact)

        accepted = []
        #expect(throws: Boom.self) {
            try log.append(count: 1000, encoding: { i in
                if i == 900 { throw Boom() }
                return (Self.plainBody, Author.key)
            }, as: identity, family: Author.family, onAccepted: { _, i in accepted.append(i) })
        }
        #expect(accepted.count >= 900 - EventLog.sealingLead, "stored events before the failure were accepted, then rolled back")
        #expect(try log.count() == 200)
        #expect(try log.head(of: identity.deviceID, in: Author.family).seq == 200)
    }

    @Test func clockNeverGoesBackEvenWhenTheWallClockDoes() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let me = DeviceIdentity.generate()
        let t = Date(timeIntervalSince1970: 1_795_000_000)
        let a = try log.append(bodies: [Self.plainBody], as: me, family: Author.family, key: Author.key, now: t)[0]
        let b = try log.append(bodies: [Self.plainBody], as: me, family: Author.family, key: Author.key, now: t.addingTimeInterval(-86_400))[0]
        #expect(b.hlc > a.hlc)
        // A remote event two hours ahead pulls the local clock along: a later local event still comes after it.
        let ahead = Author(seed: 3, startMs: 1_795_000_000_000 + 2 * 3_600_000)
        _ = try log.ingest([ahead.next().bytes], family: Author.family, now: t)
        let c = try log.append(bodies: [Self.plainBody], as: me, family: Author.family, key: Author.key, now: t)[0]
        #expect(c.hlc.milliseconds >= ahead.clock)
        // A year ahead is beyond the follow limit: accepted and flagged, not followed.
        let absurd = Author(seed: 4, startMs: 1_795_000_000_000 + 365 * 86_400_000)
        _ = try log.ingest([absurd.next().bytes], family: Author.family, now: t)
        let d = try log.append(bodies: [Self.plainBody], as: me, family: Author.family, key: Author.key, now: t)[0]
        #expect(d.hlc > c.hlc)
        #expect(d.hlc.milliseconds < absurd.clock)
        let report = try log.audit(family: Author.family, localAuthor: me.deviceID)
        #expect(report.isIntact)
        #expect(Set(report.farFuture.map(\.id)) == [ahead.previous, absurd.previous])
    }

    /// A log holding its own device's later events in `pending` (a home
    /// restored from a backup, whose later events are arriving) refuses to
    /// append: the next seq is taken already, and appending would fork.
    @Test func anAppendWaitsForTheDevicesOwnEventsInPending() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let me = Author(seed: 9)
        let identity = DeviceIdentity(signing: me.signer, box: BoxKey(seed: SecretBytes([UInt8](repeating: 9, count: 32))))
        let published = (0..<3).map { _ in me.next() }
        _ = try log.ingest([published[0].bytes, published[2].bytes], family: Author.family)
        #expect(try log.pendingCount() == 1)
        let body = [Self.plainBody]
        #expect(throws: EventLogError.ownEventsPending(count: 1, waitingFor: 2)) {
            try log.append(bodies: body, as: identity, family: Author.family, key: Author.key)
        }
        _ = try log.ingest([published[1].bytes], family: Author.family)
        let next = try log.append(bodies: body, as: identity, family: Author.family, key: Author.key)
        #expect(next.map(\.seq) == [4])
    }

    /// `append(batches:)` commits each batch in turn, one chain across them,
    /// asking for each body once and in order, and passing every event's
    /// index across the batches (a batch may be empty).
    @Test func batchesCommitOneAfterAnotherOnOneChain() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let identity = DeviceIdentity.generate()
        let sizes = [300, 0, 1000, 7, 513]
        var encoded: [Int] = []
        var accepted: [Int] = []
        var committed: [[SyncEnvelope]] = []
        try log.append(batches: sizes, encoding: { i in
            encoded.append(i)
            return (Array("{\"type\":\"t\",\"schema\":1,\"n\":\(i)}".utf8), Author.key)
        }, as: identity, family: Author.family, onAccepted: { env, i in
            #expect(env.seq == UInt64(i + 1))
            accepted.append(i)
        }, onCommitted: { envs in
            // Each batch is in the log when it is reported, the next is not yet.
            let stored = try log.count()
            #expect(stored == committed.map(\.count).reduce(envs.count, +))
            committed.append(envs)
        })
        let total = sizes.reduce(0, +)
        #expect(encoded == Array(0..<total) && accepted == Array(0..<total))
        #expect(committed.map(\.count) == sizes)
        #expect(committed.joined().map(\.seq) == (1...UInt64(total)).map { $0 })
        #expect(try log.audit(family: Author.family).isIntact)
    }

    /// A batch's `after` clock is read in its own transaction, with its
    /// events' indices: its events follow it, those of the next batch
    /// sealed ahead before it are sealed again after it, and the chain
    /// stays whole.
    @Test func aBatchFollowsTheClockItsAfterGives() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let identity = DeviceIdentity.generate()
        // An hour ahead: within what a log's clock follows.
        let later = HLC(milliseconds: HLC.milliseconds(of: Date().addingTimeInterval(3600)), counter: 7)
        var asked: [Range<Int>] = []
        var committed: [[SyncEnvelope]] = []
        try log.append(batches: [1000, 1000, 500], encoding: { i in
            (Array("{\"type\":\"t\",\"schema\":1,\"n\":\(i)}".utf8), Author.key)
        }, as: identity, family: Author.family, after: { batch in
            asked.append(batch)
            return batch.lowerBound == 1000 ? later : .zero
        }, onAccepted: { env, i in
            #expect(env.seq == UInt64(i + 1))
        }, onCommitted: { committed.append($0) })
        #expect(asked == [0 ..< 1000, 1000 ..< 2000, 2000 ..< 2500])
        #expect(committed.count == 3 && committed[0].allSatisfy { $0.hlc < later }, "the first batch does not follow the second's clock")
        #expect(committed.dropFirst().joined().allSatisfy { $0.hlc > later }, "an event of the second batch or after is dated before its clock")
        #expect(try log.count() == 2500)
        #expect(try log.audit(family: Author.family).isIntact)
    }

    /// Large bodies are not encoded and held ahead by the thousand: besides
    /// the events' count, what waits to be signed and stored is bounded by
    /// its bytes (``EventLog/sealingLeadBytes``, overshot by one chunk at
    /// most), and the append still goes through, in order.
    @Test func largeBodiesAreHeldAheadWithinAByteBudget() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let identity = DeviceIdentity.generate()
        let bodySize = 200_000
        let filler = String(repeating: "x", count: bodySize)
        var encoded = 0, accepted = 0, mostAhead = 0
        try log.append(batches: [150, 150], encoding: { i in
            #expect(i == encoded)
            encoded += 1
            mostAhead = max(mostAhead, encoded - accepted)
            return (Array("{\"type\":\"t\",\"schema\":1,\"n\":\(i),\"f\":\"\(filler)\"}".utf8), Author.key)
        }, as: identity, family: Author.family, onAccepted: { env, i in
            #expect(env.seq == UInt64(i + 1))
            #expect(i == accepted)
            accepted += 1
        }, onCommitted: { _ in })
        #expect(accepted == 300)
        #expect(mostAhead <= EventLog.sealingLeadBytes / bodySize + 1 + 64, "\(mostAhead) events of \(bodySize) bytes held ahead")
        #expect(mostAhead >= EventLog.sealingLeadBytes / bodySize, "the budget is not that small")
        #expect(try log.count() == 300)
        #expect(try log.audit(family: Author.family).isIntact)
    }

    /// A batch that fails stores nothing of itself and leaves the batches
    /// before it committed; the chain goes on from them.
    @Test func aFailedBatchKeepsTheBatchesBeforeIt() throws {
        struct Boom: Error {}
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let identity = DeviceIdentity.generate()
        var committed = 0
        #expect(throws: Boom.self) {
            try log.append(batches: [1000, 1000, 1000], encoding: { _ in
                (Self.plainBody, Author.key)
            }, as: identity, family: Author.family, onAccepted: { _, i in
                if i == 1500 { throw Boom() }
            }, onCommitted: { committed += $0.count })
        }
        #expect(committed == 1000)
        #expect(try log.count() == 1000)
        let next = try log.append(bodies: [Self.plainBody], as: identity, family: Author.family, key: Author.key)
        #expect(next.map(\.seq) == [1001])
        #expect(try log.audit(family: Author.family).isIntact)
    }

    /// Events sealed ahead during a commit are sealed again when the chain
    /// or the clock moved before the next batch began: another process of
    /// the same device appended, or an event with a later clock came in.
    @Test func eventsSealedAheadAreSealedAgainWhenTheLogMoved() throws {
        let dir = TempDir()
        let path = dir.path + "/log.sqlite"
        let log = try EventLog(path: path)
        let other = try EventLog(path: path)
        let identity = DeviceIdentity.generate()
        let later = Author(seed: 5, startMs: UInt64(Date().timeIntervalSince1970 * 1000) + 3_600_000)
        var encodings = 0
        var batches: [[SyncEnvelope]] = []
        var foreign: SyncEnvelope?
        try log.append(batches: [1000, 1000, 1000], encoding: { _ in
            encodings += 1
            return (Self.plainBody, Author.key)
        }, as: identity, family: Author.family, onCommitted: { envs in
            batches.append(envs)
            switch batches.count {
            case 1:   // the same device, through another connection
                try other.append(bodies: [Array("{\"type\":\"u\",\"schema\":1}".utf8)], as: identity, family: Author.family, key: Author.key)
            case 2:   // another member's event, an hour ahead of this clock
                let env = later.next()
                #expect(try other.ingest([env.bytes], family: Author.family).outcomes.map(\.outcome) == [.accepted])
                foreign = env
            default: break
            }
        })
        #expect(batches.map(\.count) == [1000, 1000, 1000])
        #expect(batches[1].first?.seq == 1002, "the second batch follows the other connection's event")
        #expect(batches[2].first?.seq == 2002)
        let foreignHLC = try #require(foreign).hlc
        #expect(batches[2].allSatisfy { $0.hlc > foreignHLC }, "the third batch follows the later clock")
        #expect(encodings > 3000, "what was sealed ahead was encoded and sealed again")
        #expect(try log.count() == 3002)
        #expect(try log.audit(family: Author.family).isIntact)
    }

    /// A body of the next batch that cannot be made, asked for ahead while
    /// a batch is being stored, fails that next batch only: the batch being
    /// stored is committed. An empty batch first costs no sealing again.
    @Test func aBodyOfTheNextBatchThatFailsFailsOnlyThatBatch() throws {
        struct Boom: Error {}
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let identity = DeviceIdentity.generate()
        var committed: [Int] = []
        var asked = 0
        #expect(throws: Boom.self) {
            try log.append(batches: [1000, 1000], encoding: { i in
                asked += 1
                if i == 1100 { throw Boom() }
                return (Self.plainBody, Author.key)
            }, as: identity, family: Author.family, onCommitted: { committed.append($0.count) })
        }
        #expect(committed == [1000], "the first batch is committed")
        #expect(try log.count() == 1000)
        #expect(asked > 1101, "the failing body was asked for ahead, then again in its batch")

        var encodings: [Int] = []
        try log.append(batches: [0, 500], encoding: { i in
            encodings.append(i)
            return (Self.plainBody, Author.key)
        }, as: identity, family: Author.family, onCommitted: { committed.append($0.count) })
        #expect(encodings == Array(0..<500), "events sealed during the empty batch's commit are kept")
        #expect(committed == [1000, 0, 500])
        #expect(try log.audit(family: Author.family).isIntact)
    }
}
