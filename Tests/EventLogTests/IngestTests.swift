@testable import Envelope
@testable import EventLog
import Foundation
import PropertySeeds
import Testing

struct IngestTests {
    func makeLog(_ dir: TempDir) throws -> EventLog { try EventLog(path: dir.path + "/log.sqlite") }

    @Test func inOrderChainIsAccepted() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1)
        let envs = (0..<5).map { _ in a.next() }
        let report = try log.ingest(envs.map(\.bytes), family: Author.family)
        #expect(report.outcomes.map(\.outcome) == Array(repeating: .accepted, count: 5))
        #expect(report.accepted.map(\.id) == envs.map(\.id))
        #expect(try log.head(of: a.id, in: Author.family).seq == 5)
    }

    /// A home written by an earlier famctl holds version-1 events (whose
    /// ids hash their signatures too): its device's chain goes on in
    /// version 2, naming the last version-1 id, and another log takes the
    /// whole chain; both audits pass.
    @Test func aChainOfVersion1EventsGoesOnInVersion2() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 3)
        var old: [SyncEnvelope] = []
        for _ in 0..<3 {
            a.seq += 1
            a.clock += 1000
            let env = try SyncEnvelope.sealVersion1(
                body: EventBody(type: "test", fields: ["text": .string("v1")]).encoded(), family: a.family, signer: a.signer,
                seq: a.seq, previous: a.previous, hlc: HLC(milliseconds: a.clock, counter: 0), key: a.key)
            a.previous = env.id
            old.append(env)
        }
        #expect(old.allSatisfy { $0.version == 1 && $0.id == EventID.of(signedBytes: $0.bytes) })
        #expect(try log.ingest(old.map(\.bytes), family: Author.family).accepted.count == 3)
        let identity = DeviceIdentity(signing: a.signer, box: BoxKey(seed: SecretBytes([UInt8](repeating: 3, count: 32))))
        let new = try log.append(bodies: [EventBody(type: "test", fields: [:]).encoded(), EventBody(type: "test", fields: [:]).encoded()],
                                 as: identity, family: Author.family, key: Author.key)
        #expect(new.map(\.version) == [2, 2])
        #expect(new.map(\.seq) == [4, 5])
        #expect(new[0].previous == old[2].id)
        #expect(new.allSatisfy { $0.id == EventID.of(signedBytes: Array($0.bytes.dropLast(64))) })
        #expect(try log.audit(family: Author.family).isIntact)

        let otherDir = TempDir(); let other = try makeLog(otherDir)
        let report = try other.ingest((old + new).reversed().map(\.bytes), family: Author.family)
        #expect(report.accepted.count == 5)
        #expect(try other.head(of: a.id, in: Author.family) == log.head(of: a.id, in: Author.family))
        #expect(try other.audit(family: Author.family).isIntact)
    }

    /// A version-2 id does not cover the signature: a copy whose signature
    /// was altered has the id of the real event, and is refused for its
    /// signature whether it comes before the real one or after it; the
    /// real one is taken, once.
    @Test func aCopyWithAnAlteredSignatureIsRefusedBeforeAndAfterTheRealEvent() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 4)
        let envs = (0..<2).map { _ in a.next() }
        var forged = envs[1].bytes
        forged[forged.count - 1] ^= 0x01
        #expect(try SyncEnvelope(decoding: forged).id == envs[1].id)
        let r1 = try log.ingest([envs[0].bytes, forged], family: Author.family)
        #expect(r1.outcomes.map(\.outcome) == [.accepted, .badSignature])
        let r2 = try log.ingest([envs[1].bytes, forged], family: Author.family)
        #expect(r2.outcomes.map(\.outcome) == [.accepted, .badSignature])
        #expect(try log.count() == 2)
        #expect(try log.forkProofs().isEmpty)
        #expect(try log.audit(family: Author.family).isIntact)
    }

    @Test func gapsAreHeldThenReleasedInChainOrder() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1)
        let envs = (0..<4).map { _ in a.next() }
        let r1 = try log.ingest([envs[3].bytes, envs[2].bytes], family: Author.family)
        #expect(r1.outcomes.map(\.outcome) == [.held(waitingFor: 1), .held(waitingFor: 1)])
        #expect(try log.count() == 0)
        #expect(try log.pendingCount() == 2)
        var applied: [UInt64] = []
        let r2 = try log.ingest([envs[0].bytes, envs[1].bytes], family: Author.family) { applied.append($0.seq) }
        #expect(r2.outcomes.map(\.outcome) == [.accepted, .accepted])
        #expect(applied == [1, 2, 3, 4])
        #expect(try log.pendingCount() == 0)
        #expect(try log.count() == 4)
    }

    /// What `prepare` made reaches `onAccepted` with its own event, on the
    /// fast path and for an event held and released later in the same batch,
    /// across chunk boundaries (600 inputs make chunks of 256, 256, 64, 16 and 8).
    @Test func preparedValuesReachTheirOwnEvents() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1), b = Author(seed: 2)
        let aEvents = (0..<300).map { _ in a.next() }
        let bEvents = (0..<300).map { _ in b.next() }
        // b's chain arrives backwards within each half: held, then released.
        var inputs: [SyncEnvelope] = []
        for i in 0..<300 {
            inputs.append(aEvents[i])
            inputs.append(i < 150 ? bEvents[149 - i] : bEvents[i])
        }
        var seen: [(EventID, String?)] = []
        let report = try log.ingest(inputs.map(\.bytes), family: Author.family,
                                    prepare: { env in "\(env.author.short)/\(env.seq)" },
                                    onAccepted: { env, ready in seen.append((env.id, ready)) })
        #expect(report.accepted.count == 600)
        #expect(seen.count == 600)
        let byID = Dictionary(uniqueKeysWithValues: (aEvents + bEvents).map { ($0.id, "\($0.author.short)/\($0.seq)") })
        for (id, ready) in seen { #expect(ready == byID[id]) }
        #expect(try log.pendingCount() == 0)
    }

    @Test func duplicatesAreNoOps() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1)
        let e = a.next()
        _ = try log.ingest([e.bytes], family: Author.family)
        var called = false
        let r = try log.ingest([e.bytes, e.bytes], family: Author.family) { _ in called = true }
        #expect(r.outcomes.map(\.outcome) == [.duplicate, .duplicate])
        #expect(!called)
        #expect(try log.count() == 1)
    }

    @Test func forkIsProvenKeptAndStopsTheAuthor() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1)
        let e1 = a.next(), e2 = a.next()
        let twin = a.forged(seq: 2, previous: e1.id, hlcMs: a.clock + 5, text: "other branch")
        let e3 = a.next()
        _ = try log.ingest([e1.bytes, e2.bytes], family: Author.family)
        let r = try log.ingest([twin.bytes, e3.bytes], family: Author.family)
        #expect(r.outcomes.map(\.outcome) == [.fork(seq: 2), .authorForked])
        #expect(try log.isForked(a.id, in: Author.family))
        // The same pair read again (a conflict copy read twice) is no new proof.
        #expect(try log.ingest([twin.bytes], family: Author.family).outcomes.map(\.outcome) == [.authorForked])
        let proofs = try log.forkProofs()
        #expect(proofs.count == 1)
        #expect(Set([proofs[0].first, proofs[0].second]) == Set([e2.bytes, twin.bytes]))
        #expect(try log.count() == 2)
        // Another author is unaffected.
        let b = Author(seed: 2)
        #expect(try log.ingest([b.next().bytes], family: Author.family).outcomes[0].outcome == .accepted)
        let audit = try log.audit(family: Author.family)
        #expect(audit.isIntact)
        #expect(audit.forks.count == 1)
    }

    /// A conflict below the first proof lowers the fork point; the chain
    /// below the point still fills in, and nothing at or past it enters the
    /// log, not even events waiting in `pending` when the gap closes.
    @Test func theForkPointIsTheLowestConflictAndNothingPastItEntersTheLog() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1)
        let e1 = a.next(), e2 = a.next(), e3 = a.next(), e4 = a.next(), e5 = a.next()
        // The other branch parts at seq 3.
        let b3 = a.forged(seq: 3, previous: e2.id, hlcMs: a.clock + 5, text: "b3")
        let b4 = a.forged(seq: 4, previous: b3.id, hlcMs: a.clock + 6, text: "b4")
        // e4 and e5 wait for e2, e3; b4 meets e4 there: a proof at 4.
        var r = try log.ingest([e1.bytes, e4.bytes, e5.bytes, b4.bytes], family: Author.family)
        #expect(r.outcomes.map(\.outcome) == [.accepted, .held(waitingFor: 2), .held(waitingFor: 2), .fork(seq: 4)])
        #expect(try log.forkPoints(in: Author.family) == [a.id: 4])
        // Below the point the chain fills in; e4, e5 stay out of the log (e4 is at the point).
        r = try log.ingest([e2.bytes, e3.bytes], family: Author.family)
        #expect(r.outcomes.map(\.outcome) == [.accepted, .accepted])
        #expect(try log.head(of: a.id, in: Author.family).seq == 3)
        // The branch's seq 3 meets e3: the point moves down to 3, whatever came first.
        r = try log.ingest([b3.bytes, e5.bytes], family: Author.family)
        #expect(r.outcomes.map(\.outcome) == [.fork(seq: 3), .authorForked])
        #expect(try log.forkPoints(in: Author.family) == [a.id: 3])
        #expect(try log.count() == 3)
        #expect(try log.forkProofs().count == 2)
    }

    @Test func forkAmongHeldEventsIsProvenToo() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1)
        _ = a.next(); let e2 = a.next(); let e3 = a.next()
        let twin3 = a.forged(seq: 3, previous: e2.id, hlcMs: a.clock + 7)
        let r = try log.ingest([e3.bytes, twin3.bytes], family: Author.family)
        #expect(r.outcomes.map(\.outcome) == [.held(waitingFor: 1), .fork(seq: 3)])
        #expect(try log.isForked(a.id, in: Author.family))
    }

    @Test func chainBreakersAreRejectedAndKeptForTheAudit() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1), b = Author(seed: 2)
        let a1 = a.next(), b1 = b.next()
        _ = try log.ingest([a1.bytes, b1.bytes], family: Author.family)
        let wrongPrev = a.forged(seq: 2, previous: EventID(bytes: [UInt8](repeating: 7, count: 32)), hlcMs: a.clock + 10)
        let backwards = b.forged(seq: 2, previous: b1.id, hlcMs: b.clock - 500)
        let r = try log.ingest([wrongPrev.bytes, backwards.bytes], family: Author.family)
        guard case .rejected(let why1) = r.outcomes[0].outcome, case .rejected(let why2) = r.outcomes[1].outcome else {
            Issue.record("expected two rejections, got \(r.outcomes.map(\.outcome))"); return
        }
        #expect(why1.contains("previous id"))
        #expect(why2.contains("clock goes back"))
        #expect(try log.rejectedEvents().count == 2)
        #expect(try log.count() == 2)
        // Seen again: still rejected, nothing new stored.
        let again = try log.ingest([wrongPrev.bytes], family: Author.family)
        guard case .rejected = again.outcomes[0].outcome else { Issue.record("not rejected again"); return }
        #expect(try log.rejectedEvents().count == 2)
        #expect(!(try log.isForked(a.id, in: Author.family)))
    }

    /// A clock equal to the event before it is no step forward: rejected
    /// as going back, as one 500 ms back is.
    @Test func aClockEqualToTheEventBeforeIsRejected() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 5)
        let a1 = a.next()
        _ = try log.ingest([a1.bytes], family: Author.family)
        let same = a.forged(seq: 2, previous: a1.id, hlcMs: a1.hlc.milliseconds)
        guard case .rejected(let why) = try log.ingest([same.bytes], family: Author.family).outcomes[0].outcome else {
            Issue.record("an event at its predecessor's clock was not rejected"); return
        }
        #expect(why.contains("clock goes back"), "\(why)")
        #expect(try log.count() == 1)
    }

    /// A copy in `rejected` whose signature does not verify (altered on
    /// disk, or stored by an older build) proves nothing: the real event at
    /// its seq is taken, and its honest author is not called forked.
    @Test func aRejectedCopyThatDoesNotVerifyIsNoForkProof() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 6)
        let a1 = a.next(), a2 = a.next()
        _ = try log.ingest([a1.bytes], family: Author.family)
        var altered = a2.bytes
        altered[altered.count - 65] ^= 0x01   // the last byte before the signature: another id, a signature that fails
        let copy = try SyncEnvelope(decoding: altered)
        #expect(copy.id != a2.id && !copy.hasValidSignature)
        try log.database.run("INSERT INTO rejected(id, family, author, seq, reason, received_at, bytes) VALUES(?1, ?2, ?3, 2, 'test', 0, ?4)",
                             [.blob(copy.id.bytes), .blob(Author.family.bytes), .blob(a.id.bytes), .blob(altered)])
        #expect(try log.ingest([a2.bytes], family: Author.family).outcomes.map(\.outcome) == [.accepted])
        #expect(try log.forkProofs().isEmpty)
        #expect(!(try log.isForked(a.id, in: Author.family)))
    }

    /// A validly signed chain-breaker and a good event at the same (author,
    /// seq) prove a fork whichever arrives first.
    @Test(arguments: [false, true])
    func forkVerdictDoesNotDependOnArrivalOrder(badFirst: Bool) throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1)
        let e1 = a.next()
        let good = a.next()
        let bad = a.forged(seq: 2, previous: e1.id, hlcMs: a.clock - 5_000)   // clock goes back
        _ = try log.ingest([e1.bytes], family: Author.family)
        let order = badFirst ? [bad, good] : [good, bad]
        let r = try log.ingest(order.map(\.bytes), family: Author.family)
        #expect(r.outcomes[1].outcome == .fork(seq: 2))
        #expect(try log.isForked(a.id, in: Author.family))
        #expect(try log.forkProofs().count == 1)
    }

    @Test func oneDeviceHasOneChainPerFamily() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let me = DeviceIdentity.generate()
        let privateFamily = FamilyID(string: "c0c0c0c0-0000-4000-8000-000000000003")!
        let own = try log.append(bodies: [Array("{\"type\":\"t\",\"schema\":1}".utf8)], as: me, family: privateFamily, key: Author.key)
        let shared = try log.append(bodies: [Array("{\"type\":\"t\",\"schema\":1}".utf8)], as: me, family: Author.family, key: Author.key)
        #expect(own[0].seq == 1 && shared[0].seq == 1)
        #expect(shared[0].hlc > own[0].hlc)
        #expect(try log.head(of: me.deviceID, in: privateFamily).id == own[0].id)
        #expect(try log.count(in: Author.family) == 1)
        let report = try log.audit(family: nil)
        #expect(report.isIntact)
        #expect(report.authors.count == 2)
    }

    @Test func badInputIsReportedAndNothingStoredIsTouched() throws {
        let dir = TempDir(); let log = try makeLog(dir)
        let a = Author(seed: 1)
        let e1 = a.next()
        _ = try log.ingest([e1.bytes], family: Author.family)
        let e2 = a.next()
        var forged = e2.bytes; forged[forged.count - 1] ^= 0x40
        let stranger = Author(seed: 9, family: FamilyID(string: "b0b0b0b0-0000-4000-8000-000000000002")!)
        let r = try log.ingest([[1, 2, 3], forged, stranger.next().bytes, Array(e2.bytes.dropLast(3))], family: Author.family)
        #expect(r.outcomes[0].outcome == .malformed(.truncated(count: 3)))
        #expect(r.outcomes[1].outcome == .badSignature)
        guard case .foreignFamily = r.outcomes[2].outcome, case .malformed = r.outcomes[3].outcome else {
            Issue.record("unexpected: \(r.outcomes.map(\.outcome))"); return
        }
        #expect(try log.count() == 1)
        #expect(try log.envelope(e1.id)?.bytes == e1.bytes)
        // The genuine event still goes in afterwards.
        #expect(try log.ingest([e2.bytes], family: Author.family).outcomes[0].outcome == .accepted)
    }

    /// Property: for random sets of chains from several authors, delivered in
    /// random order with duplicates and in random batches, every log ends with
    /// every event, nothing pending, heads equal, and an intact audit.
    static var otherFamily: FamilyID { FamilyID(string: "a0a0a0a0-0000-4000-8000-0000000000f2")! }

    @Test(arguments: PropertySeeds.range(0..<12))
    func anyDeliveryOrderConverges(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let authors = (0..<Int(rng.next() % 4 + 1)).map { Author(seed: UInt8($0 + 1)) }
        var all: [SyncEnvelope] = []
        for a in authors { for _ in 0..<Int(rng.next() % 25 + 1) { all.append(a.next()) } }
        var heads: [[DeviceID: EventLog.Head]] = []
        for replica in 0..<3 {
            let dir = TempDir(); let log = try makeLog(dir)
            var deliveries = all + all.filter { _ in rng.next() % 4 == 0 }
            deliveries.shuffle(using: &rng)
            var appliedIDs = Set<EventID>()
            var i = 0
            while i < deliveries.count {
                let n = Int(rng.next() % 7 + 1)
                let batch = deliveries[i..<min(i + n, deliveries.count)]
                let r = try log.ingest(batch.map(\.bytes), family: Author.family) { env in
                    #expect(appliedIDs.insert(env.id).inserted, "applied twice (replica \(replica))")
                }
                for o in r.outcomes {
                    switch o.outcome {
                    case .accepted, .duplicate, .held: break
                    default: Issue.record("unexpected outcome \(o.outcome)")
                    }
                }
                i += n
            }
            #expect(appliedIDs == Set(all.map(\.id)))
            #expect(try log.count() == all.count)
            #expect(try log.pendingCount() == 0)
            #expect(try log.audit(family: Author.family).isIntact)
            // The first author also writes a longer chain in another family,
            // which the family's heads must not see.
            let elsewhere = Author(seed: 1, family: Self.otherFamily)
            let other = (0..<30).map { _ in elsewhere.next() }
            #expect(try log.ingest(other.map(\.bytes), family: Self.otherFamily).outcomes.allSatisfy { $0.outcome == .accepted })
            #expect(try log.heads(in: Self.otherFamily) == [elsewhere.id: EventLog.Head(seq: 30, id: other[29].id, hlc: other[29].hlc)])
            heads.append(try log.heads(in: Author.family))
        }
        #expect(heads.allSatisfy { $0 == heads[0] })
        // Each author's head: the last event of its chain.
        var expected: [DeviceID: EventLog.Head] = [:]
        for e in all where e.seq > expected[e.author]?.seq ?? 0 { expected[e.author] = EventLog.Head(seq: e.seq, id: e.id, hlc: e.hlc) }
        #expect(heads[0] == expected, "seed \(seed)")
    }
}


typealias SplitMix = SplitMixRNG
