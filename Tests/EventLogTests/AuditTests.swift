import Envelope
@testable import EventLog
import Foundation
import PropertySeeds
import Testing

/// `replay`'s audit checks the events' ids and signatures on every core, a
/// block at a time, and judges them in chain order on one thread: on logs
/// longer than its window, with damage at random places, it must blame
/// exactly the damaged events, each for what is wrong with it, and hand the
/// intact ones to its caller in chain order.
struct AuditTests {
    /// A stored fork proof whose two halves are one event proves nothing
    /// (a file altered by hand): the audit says it does not verify.
    @Test func aForkProofOfOneEventTwiceDoesNotVerify() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let a = Author(seed: 9)
        let a1 = a.next()
        _ = try log.ingest([a1.bytes], family: Author.family)
        #expect(try log.audit(family: Author.family).isIntact)
        try log.database.run("INSERT INTO forks(family, author, seq, first_id, second_id, first, second, detected_at) VALUES(?1, ?2, 1, ?3, ?3, ?4, ?4, 0)",
                             [.blob(Author.family.bytes), .blob(a.id.bytes), .blob(a1.id.bytes), .blob(a1.bytes)])
        #expect(try log.audit(family: Author.family).failures.map(\.reason) == ["stored fork proof does not verify"])
    }

    @Test(arguments: PropertySeeds.range(0..<3))
    func damageAnywhereInALongLogIsBlamedOnExactlyThoseEvents(seed: UInt64) throws {
        var rng = SplitMixRNG(seed: seed)
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let authors = (0..<3).map { _ in DeviceIdentity.generate() }
        // More events than the audit's blocks times its window, so that it
        // reads ahead, waits and takes blocks back many times.
        let total = EventLog.auditBlock * (EventLog.auditWindow + 2) + Int(rng.next() % 300)
        for i in 0..<total / 100 {
            let count = i == total / 100 - 1 ? total - 100 * i : 100
            _ = try log.append(bodies: (0..<count).map { Array("{\"type\":\"t\",\"schema\":1,\"n\":\($0)}".utf8) },
                               as: authors[Int(rng.next() % 3)], family: Author.family, key: Author.key)
        }
        var chainOrder: [(id: EventID, bytes: [UInt8])] = []
        try log.forEachEvent(order: .chain, in: Author.family) { chainOrder.append(($0.id, $0.bytes)) }
        #expect(chainOrder.count == total)

        // Damage: a ciphertext byte (the id no longer matches), a signature
        // byte (the id still does: it names the signed bytes), or the row cut
        // short (not an envelope).
        try log.database.execute("DROP TRIGGER events_no_update")
        var expected: [EventID: String] = [:]
        for _ in 0..<12 {
            let k = Int(rng.next() % UInt64(total))
            let (id, original) = chainOrder[k]
            guard expected[id] == nil else { continue }
            var bytes = original
            switch rng.next() % 3 {
            case 0:
                bytes[150] ^= 0x01
                expected[id] = "content does not hash to its id"
            case 1:
                bytes[bytes.count - 1 - Int(rng.next() % 64)] ^= 0x10
                expected[id] = "signature does not verify"
            default:
                bytes = Array(bytes.prefix(10))
                expected[id] = "stored bytes are not an envelope"
            }
            try log.database.run("UPDATE events SET bytes = ?1 WHERE id = ?2", [.blob(bytes), .blob(id.bytes)])
        }

        var visited: [EventID] = []
        let report = try log.audit(family: Author.family) { env in
            visited.append(env.id)
            return nil
        }
        #expect(report.eventCount == total)
        #expect(report.authors.reduce(0) { $0 + $1.events } == total)
        let blamed = Dictionary(report.failures.map { ($0.id!, $0.reason) }, uniquingKeysWith: { a, b in a + " / " + b })
        #expect(Set(blamed.keys) == Set(expected.keys), "seed \(seed): blamed \(blamed.count), damaged \(expected.count)")
        for (id, reason) in expected {
            #expect(blamed[id]?.hasPrefix(reason) == true, "seed \(seed): \(id.short) blamed for \(blamed[id] ?? "nothing"), not \(reason)")
        }
        // The intact events, the successors of damaged ones among them, in chain order.
        #expect(visited == chainOrder.map(\.id).filter { expected[$0] == nil }, "seed \(seed)")
    }

    /// Large events make shorter blocks (``EventLog/auditBlockBytes``): all
    /// are checked, in order, a damaged one among them blamed alone.
    @Test func largeEventsAreAuditedInShorterBlocks() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let author = DeviceIdentity.generate()
        let big = String(repeating: "n", count: 300_000)
        for _ in 0..<4 {
            _ = try log.append(bodies: (0..<10).map { Array("{\"type\":\"t\",\"schema\":1,\"n\":\"\(big)\($0)\"}".utf8) },
                               as: author, family: Author.family, key: Author.key)
        }
        var chain: [(id: EventID, bytes: [UInt8])] = []
        try log.forEachEvent(order: .chain, in: Author.family) { chain.append(($0.id, $0.bytes)) }
        #expect(chain.count == 40 && chain[0].bytes.count > 300_000)
        try log.database.execute("DROP TRIGGER events_no_update")
        var damaged = chain[23].bytes
        damaged[damaged.count - 5] ^= 0x01
        try log.database.run("UPDATE events SET bytes = ?1 WHERE id = ?2", [.blob(damaged), .blob(chain[23].id.bytes)])
        var visited: [EventID] = []
        let report = try log.audit(family: Author.family) { env in
            visited.append(env.id)
            return nil
        }
        #expect(report.eventCount == 40)
        #expect(report.failures.map(\.id) == [chain[23].id])
        #expect(report.failures.first?.reason.hasPrefix("signature does not verify") == true)
        #expect(visited == chain.map(\.id).filter { $0 != chain[23].id })
    }
}
