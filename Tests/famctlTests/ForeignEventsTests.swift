import Envelope
import EventLog
import Foundation
import Testing

/// Events from another device put into a home's log (as sync will) show up
/// in `status`, `log` and `replay`: forks and unreadable bodies are reported,
/// and they are findings about other devices, not integrity failures.
struct ForeignEventsTests {
    @Test func forksAndUnreadableBodiesAreShownByStatusAndReplay() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let status = try JSONSerialization.jsonObject(with: Data(try f.ok("status", "--json").utf8)) as! [String: Any]
        let family = try #require(FamilyID(string: status["family"] as! String))

        // Another device of the same family, holding the family's key.
        let familyKey = try #require(try Database(path: f.home + "/famctl.sqlite").statement("SELECT key FROM epoch_keys")
            .first { EpochKey(epoch: 0, key: SecretBytes($0.blob(0))) })
        let other = SigningKey(seed: [UInt8](repeating: 0x33, count: 32))
        func seal(_ seq: UInt64, _ prev: EventID, _ ms: UInt64, _ text: String,
                  by signer: SigningKey = other, key: EpochKey = familyKey) throws -> SyncEnvelope {
            try SyncEnvelope.seal(body: EventBody(type: "test", fields: ["t": .string(text)]).encoded(), family: family,
                                  signer: signer, seq: seq, previous: prev, hlc: HLC(milliseconds: ms, counter: 0), key: key)
        }
        let e1 = try seal(1, .none, 1_795_000_000_000, "one")
        let e2 = try seal(2, e1.id, 1_795_000_001_000, "two")
        let e2b = try seal(2, e1.id, 1_795_000_002_000, "two, again")
        // A third device whose body was encrypted with a key that is not the family's.
        let stranger = SigningKey(seed: [UInt8](repeating: 0x44, count: 32))
        let s1 = try seal(1, .none, 1_795_000_000_500, "?", by: stranger, key: EpochKey(epoch: 0, key: SecretBytes([UInt8](repeating: 8, count: 32))))
        do {
            let log = try EventLog(path: f.home + "/famctl.sqlite")
            let r = try log.ingest([e1.bytes, e2.bytes, e2b.bytes, s1.bytes], family: family)
            #expect(r.outcomes.map(\.outcome) == [.accepted, .accepted, .fork(seq: 2), .accepted])
        }

        let text = try f.ok("status")
        #expect(text.contains("forks    1"))
        #expect(text.contains("author \(other.publicKey.short) signed two events at seq 2"))
        let replay = try f.run("replay")
        #expect(replay.code == 0, "a fork is a finding about another device, not damage: \(replay.stderr)")
        #expect(replay.stdout.contains("5 events from 3 authors"))
        #expect(replay.stdout.contains("forks: 1"))
        // What the fork leaves out is said (a security review: a member's fork erased its history without a word).
        #expect(replay.stdout.contains("author \(other.publicKey.short) signed two events at seq 2 (proof kept): its 1 event from seq 2 on held here is left out of every view\n"),
                "\(replay.stdout)")
        #expect(replay.stdout.contains("unreadable bodies (validly signed, but not for our key or not an event body): 1"))
        #expect(replay.stdout.contains(s1.id.hex))
        #expect(replay.stdout.hasSuffix("result: OK\n"))
        let log = try f.ok("log")
        #expect(log.contains("\(other.publicKey.short) #2  \(e2.id.short)  test"))
        #expect(log.contains("(unreadable: body does not authenticate"))
    }
}
