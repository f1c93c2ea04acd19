import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Replicator
import Testing

/// Every way of slipping something past a replica that we know of, each with
/// the expected and the observed verdict, printed as a table. Any mismatch fails.
struct TamperMatrixTests {
    struct Case { let name: String; let expected: String; let observed: String }

    @Test func tamperMatrix() throws {
        var cases: [Case] = []
        let (mum, others) = try HouseholdTests.family([("Dad", "member"), ("Gran", "viewer"), ("Uncle", "member")])
        let (dad, gran, uncle) = (others[0], others[1], others[2])
        try mum.ok("subject", "add", "newMom")
        try HouseholdTests.exchange([mum, dad, gran, uncle])
        let mumHome = try Home.open(mum.home)
        let (family, key) = try mumHome.currentKey()

        // An observer that holds the family's key but none of Dad's events yet.
        func observer() throws -> Home {
            let o = FamctlRunner()
            try o.ok("init", "--name", "Observer")
            let h = try Home.open(o.home)
            try h.state.set(.family, family.description)
            try h.state.set(.owner, mumHome.deviceID.hex)
            try h.state.keyring.store(key, family: family)
            try h.state.set(.projectionVersion, "stale")
            observers.append(o)
            let ready = try Home.open(o.home)
            _ = try ready.ingest(try mumHome.log.chain(of: mumHome.deviceID, in: family, seqs: 1...1000).map(\.bytes) + earlier)
            return ready
        }
        var observers: [FamctlRunner] = []

        // Dad writes one record; its segment is the specimen.
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        let dadHome = try Home.open(dad.home)
        let head = try dadHome.log.head(of: dadHome.deviceID, in: family)
        // A one-event segment (the record alone); observers get Dad's earlier events first.
        let earlier = try dadHome.log.chain(of: dadHome.deviceID, in: family, seqs: 1...(head.seq - 1)).map(\.bytes)
        let segment = Segment(envelopes: try dadHome.log.chain(of: dadHome.deviceID, in: family, seqs: head.seq...head.seq))
        let good = segment.encoded()
        let goodName = segment.name(for: good).description

        /// Puts `bytes` as `name` in `folder` of a fresh shared directory and lets `home` pull it.
        func pull(_ home: Home, _ bytes: [UInt8], name: String, folder: String) throws -> Replicator.PullReport {
            let dir = NSTemporaryDirectory() + "famctl-tamper-" + UUID().uuidString
            // The folder and its staging folder beside it (about 1 000 of each a run).
            defer { for path in [dir, dir + "-s"] { try? FileManager.default.removeItem(atPath: path) } }
            let f = dir + "/" + family.description + "/" + folder
            try FileManager.default.createDirectory(atPath: f, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: f + "/" + name))
            let r = try Replicator(log: home.log, peer: DirectoryPeer(SharedDirectory(root: dir, family: family, staging: dir + "-s")), family: family, me: home.deviceID)
            return try r.pull { try home.ingest(batches: $0, onIngested: $1) }
        }

        // 1. Every byte of the segment flipped in turn, as a sync engine would deliver it.
        let obs = try observer()
        let before = try obs.log.count()
        var slipped = 0
        for i in 0..<good.count {
            var b = good; b[i] ^= 0x5A
            let r = try pull(obs, b, name: goodName, folder: dadHome.deviceID.hex)
            if r.accepted > 0 { slipped += 1 }
        }
        cases.append(Case(name: "each of \(good.count) bytes flipped", expected: "0 accepted", observed: "\(slipped) accepted"))
        // 1b. The same, by someone who also recomputes the checksum and the name.
        slipped = 0
        for i in 0..<(good.count - 32) {
            var b = good; b[i] ^= 0x5A
            b.replaceSubrange((b.count - 32)..., with: Sodium.blake2b256(Array(b[..<(b.count - 32)])))
            let r = try pull(obs, b, name: SegmentName(author: dadHome.deviceID, firstSeq: head.seq, lastSeq: head.seq, bytes: b).description,
                             folder: dadHome.deviceID.hex)
            if r.accepted > 0 { slipped += 1 }
        }
        cases.append(Case(name: "each byte flipped, checksum and name recomputed", expected: "0 accepted", observed: "\(slipped) accepted"))
        cases.append(Case(name: "the observer's log after the flips", expected: "unchanged", observed: try obs.log.count() == before ? "unchanged" : "changed"))
        // The genuine segment still goes in afterwards.
        let genuine = try pull(obs, good, name: goodName, folder: dadHome.deviceID.hex)
        cases.append(Case(name: "the genuine segment afterwards", expected: "accepted", observed: genuine.accepted == 1 ? "accepted" : "\(genuine.accepted) accepted"))
        // 2. The same bytes renamed into another author's folder: where a
        // file lies proves nothing, each event's signature does. Its event
        // is taken as its signer's (Dad's), never as the folder's author's.
        let obs2 = try observer()
        let moved = try pull(obs2, good, name: SegmentName(author: mumHome.deviceID, firstSeq: head.seq, lastSeq: head.seq, bytes: good).description, folder: mumHome.deviceID.hex)
        let asSigner = try obs2.log.contains(head.id) && obs2.log.head(of: dadHome.deviceID, in: family).id == head.id
        cases.append(Case(name: "segment moved to another author's folder", expected: "taken as signer's",
                          observed: moved.accepted == 1 && asSigner ? "taken as signer's" : "\(moved.accepted) accepted, as signer's: \(asSigner)"))
        // 3. A segment of another family.
        let strangerFamily = FamilyID.random()
        let stranger = DeviceIdentity.generate()
        let foreign = Segment(envelopes: [try SyncEnvelope.seal(body: Array(#"{"schema":1,"type":"t"}"#.utf8), family: strangerFamily, signer: stranger.signing,
                                                                seq: 1, previous: .none, hlc: HLC(milliseconds: 1_795_000_000_000, counter: 0), key: key)]).encoded()
        let fr = try pull(obs2, foreign, name: SegmentName(author: stranger.deviceID, firstSeq: 1, lastSeq: 1, bytes: foreign).description, folder: stranger.deviceID.hex)
        cases.append(Case(name: "segment of another family", expected: "not accepted", observed: fr.accepted == 0 ? "not accepted" : "accepted"))
        // 4. An old segment replayed.
        let digestBefore = try obs.projector.digest()
        let replayed = try pull(obs, good, name: goodName, folder: dadHome.deviceID.hex)
        let digestAfter = try obs.projector.digest()
        cases.append(Case(name: "old segment replayed", expected: "no change", observed: replayed.accepted == 0 && digestAfter == digestBefore ? "no change" : "changed"))

        // 5–9. Household rules, judged by every replica.
        let stray = DeviceIdentity.generate()
        let strayRecord = try SyncEnvelope.seal(
            body: RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z", fields: ["kind": .string("mood"), "mood": .int(1)]).body.encoded(),
            family: family, signer: stray.signing, seq: 1, previous: .none, hlc: HLC(milliseconds: HLC.milliseconds(of: Date()), counter: 0), key: key)
        _ = try mumHome.ingest([strayRecord.bytes])
        try Home.open(gran.home).append([RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z",
                                                     fields: ["kind": .string("mood"), "mood": .int(2)]).body])
        try mum.ok("member", "remove", "Uncle")
        try Home.open(uncle.home).append([RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z",
                                                      fields: ["kind": .string("mood"), "mood": .int(3)]).body])
        let code = try mum.ok("invite")
        let x = FamctlRunner(), y = FamctlRunner()
        // Y accepts before X's join reaches its folder: the race a pre-read cannot see.
        try x.ok("accept", code, "--name", "X"); try y.acceptUnread(code, name: "Y")
        let revoked = try mum.ok("invite")
        try mum.ok("invite", "--revoke", String(try InviteCode(parsing: revoked).invite.hex.prefix(8)))
        let z = FamctlRunner(); try z.acceptUnread(revoked, name: "Z")
        let short = try InviteCode(parsing: try mum.ok("invite", "--expires", "1m"))
        let late = DeviceIdentity.generate()
        let lateJoin = try SyncEnvelope.seal(
            body: LibraryEvent.memberJoin(invite: short.invite, name: "Late", box: late.box.publicKey,
                                          proof: JoinProof.sign(secret: short.secret, family: family, invite: short.invite, device: late.deviceID)).body.encoded(),
            family: family, signer: late.signing, seq: 1, previous: .none, hlc: HLC(milliseconds: short.expiresMs + 60_000, counter: 0), key: short.key)
        let future = DeviceIdentity.generate()
        _ = try Home.open(mum.home).ingest([lateJoin.bytes])
        let farFuture = try SyncEnvelope.seal(body: Array(#"{"schema":1,"type":"note.future"}"#.utf8), family: family, signer: future.signing, seq: 1,
                                              previous: .none, hlc: HLC(milliseconds: HLC.milliseconds(of: Date()) + 400 * 86_400_000, counter: 0), key: key)
        _ = try Home.open(mum.home).ingest([farFuture.bytes])
        try HouseholdTests.exchange([mum, dad, gran, uncle, x, y, z])

        let reasons = Array(try HouseholdTests.denied(dad).values)
        func verdict(_ s: String) -> String { reasons.contains { $0.hasPrefix(s) } ? "rejected" : "accepted" }
        cases.append(Case(name: "record by a key that never joined", expected: "rejected", observed: verdict("not a member of the family")))
        cases.append(Case(name: "a viewer's record", expected: "rejected", observed: verdict("viewers cannot change")))
        cases.append(Case(name: "a removed member's post-cut-off write", expected: "rejected", observed: verdict("beyond its author's removal")))
        cases.append(Case(name: "a reused invitation (two joins)", expected: "rejected", observed: verdict("the invite was already used")))
        cases.append(Case(name: "a revoked invitation", expected: "rejected", observed: verdict("the invite was revoked")))
        cases.append(Case(name: "an expired invitation", expected: "rejected", observed: verdict("the invite had expired")))
        // Flagged as far-future, not merely named (replay names rejected events too).
        let replay = try #require(try JSONSerialization.jsonObject(with: Data(try mum.ok("replay", "--json").utf8)) as? [String: Any])
        let flagged = (replay["farFuture"] as? [String])?.contains(farFuture.id.hex) == true
        let held = try Home.open(mum.home).log.contains(farFuture.id)
        cases.append(Case(name: "a far-future clock", expected: "accepted, flagged",
                          observed: held && flagged ? "accepted, flagged" : "not flagged"))
        cases.append(Case(name: "every replica agrees", expected: "same digest",
                          observed: Set(try [mum, dad, gran].map { try $0.ok("digest") }).count == 1 ? "same digest" : "digests differ"))

        print("tamper matrix:")
        print("case".padding(toLength: 48, withPad: " ", startingAt: 0) + "expected".padding(toLength: 20, withPad: " ", startingAt: 0) + "observed")
        for c in cases {
            print(c.name.padding(toLength: 48, withPad: " ", startingAt: 0) + c.expected.padding(toLength: 20, withPad: " ", startingAt: 0) + c.observed
                  + (c.expected == c.observed ? "" : "   <-- MISMATCH"))
            #expect(c.expected == c.observed, "\(c.name): expected \(c.expected), observed \(c.observed)")
        }
        _ = observers
    }
}
