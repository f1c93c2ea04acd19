import Envelope
import EventLog
@testable import famctl
import Foundation
import PropertySeeds
import Projections
import Testing

/// Membership events mixed into random record traffic, exchanged partially
/// and in random orders: every replica that holds the events agrees on the
/// members, their roles, the rejections and the digest; so does a fresh
/// observer that ingests everything in a random order.
struct HouseholdPropertyTests {
    @Test(arguments: PropertySeeds.range(0..<4))
    func replicasAgreeWhateverTheDeliveryOrder(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let (mum, joined) = try HouseholdTests.family([("Dad", "member"), ("Grandma", "viewer"), ("Uncle", "member")])
        var devices = [mum] + joined
        try mum.ok("subject", "add", "newMom")
        try HouseholdTests.exchange(devices)
        var recordIDs: [UUID] = []
        var removed = Set<Int>()

        for step in 0..<40 {
            let i = Int(rng.next() % UInt64(devices.count))
            let home = try Home.open(devices[i].home)
            switch rng.next() % 10 {
            case 0...4:
                let id = recordIDs.isEmpty || rng.next() % 2 == 0 ? UUID() : recordIDs[Int(rng.next() % UInt64(recordIDs.count))]
                if !recordIDs.contains(id) { recordIDs.append(id) }
                let fields: [String: JSONValue] = ["mood": .int(Int64(rng.next() % 5 + 1)), "note": rng.next() % 3 == 0 ? .null : .string("n\(step)")]
                try home.append([RecordEvent(kind: .put, record: id, store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z", fields: fields).body])
            case 5:
                if let id = recordIDs.randomElement(using: &rng) {
                    try home.append([RecordEvent(kind: .delete, record: id, store: "postpartum", focus: "newMom", at: nil, fields: [:]).body])
                }
            case 6:
                // The owner changes a role or removes someone.
                let target = Int(rng.next() % UInt64(devices.count - 1)) + 1
                let name = try Home.open(devices[target].home).deviceName
                if rng.next() % 3 == 0 && !removed.contains(target) {
                    if try mum.run("member", "remove", name).code == 0 { removed.insert(target) }
                } else {
                    _ = try mum.run("member", "role", name, rng.next() % 2 == 0 ? "viewer" : "member")
                }
            case 7 where devices.count < 7:
                let newcomer = FamctlRunner()
                try newcomer.ok("accept", try mum.ok("invite"), "--name", "Guest\(step)")
                devices.append(newcomer)
            default:
                // A partial exchange between two random devices.
                let j = Int(rng.next() % UInt64(devices.count))
                if i != j { try HouseholdTests.send(devices[i], to: devices[j]) }
            }
        }
        #expect(devices.count > 4 || !removed.isEmpty, "seed \(seed): the run exercised no membership change")
        try HouseholdTests.exchange(devices)
        try HouseholdTests.exchange(devices)   // key shares written during the first round travel in the second

        // Replicas that were never removed hold every key: identical state.
        let current = devices.indices.filter { !removed.contains($0) }.map { devices[$0] }
        let digests = try current.map { try $0.ok("digest") }
        #expect(Set(digests).count == 1, "seed \(seed): digests differ: \(digests)")
        let memberSets = try current.map { r in Set(try HouseholdTests.members(r).map { "\($0["device"] ?? "-")|\($0["role"]!)|\($0["state"]!)" }) }
        #expect(Set(memberSets).count == 1, "seed \(seed): member lists differ")
        if Set(memberSets).count != 1 {
            for (r, m) in zip(current, memberSets) { print("replica \(try Home.open(r.home).deviceName): \(m.sorted())\n\(try r.ok("status"))") }
        }
        let rejections = try current.map { try HouseholdTests.denied($0) }
        #expect(rejections.allSatisfy { $0 == rejections[0] }, "seed \(seed): rejections differ")
        for r in current { #expect(try r.ok("replay").hasSuffix("result: OK")) }
        // Replay's scratch projection, whatever household events its hint names.
        for r in current.prefix(2) { try ReplayScratchTests.hintsAgree(r, rng: &rng) }

        // A fresh observer with the owner's keys ingests everything in random batches.
        let observer = FamctlRunner()
        try observer.ok("init", "--name", "Observer")
        let owner = try Home.open(mum.home)
        do {
            let obs = try Home.open(observer.home)
            try obs.state.set(.family, owner.family.description)
            try obs.state.set(.owner, owner.deviceID.hex)
            for e in 0...10 { if let k = try owner.state.keyring.key(family: owner.family, epoch: UInt32(e)) { try obs.state.keyring.store(k, family: owner.family) } }
            try obs.state.set(.projectionVersion, "stale")
        }
        var events: [[UInt8]] = []
        try owner.log.forEachEvent(in: owner.family) { events.append($0.bytes) }
        events.shuffle(using: &rng)
        let obs = try Home.open(observer.home)
        var k = 0
        while k < events.count {
            let n = Int(rng.next() % 9 + 1)
            _ = try obs.ingest(Array(events[k..<min(k + n, events.count)]))
            k += n
        }
        #expect(try observer.ok("digest") == digests[0], "seed \(seed): the observer's digest differs")
        let audit = try JSONSerialization.jsonObject(with: Data(try observer.ok("replay", "--json").utf8)) as? [String: Any]
        #expect(audit?["digestsAgree"] as? Bool == true, "seed \(seed): the observer's live projection differs from a rebuild")
        #expect(try HouseholdTests.denied(observer) == rejections[0])
    }
}


typealias SplitMix = SplitMixRNG
