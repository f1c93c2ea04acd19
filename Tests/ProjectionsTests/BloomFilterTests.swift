import Envelope
@testable import Projections
import Testing

/// The filter a bulk rebuild uses to skip lookups of entities it has not
/// written: a "no" must always be right (or a record would be written as
/// new over an existing one); a "maybe" only costs a lookup.
struct BloomFilterTests {
    @Test func neverForgetsAKeyAndRarelyClaimsOneItNeverSaw() {
        var rng = SplitMixRNG(seed: 42)
        var filter = BloomFilter(capacity: 20_000)
        var seen: [String] = []
        for _ in 0..<20_000 {
            let key = "record\u{1F}" + UUIDText.lowercase(RecordIdentifier.make(now: .init(timeIntervalSince1970: Double(rng.next() % 1_000_000_000))))
            filter.insert(key)
            seen.append(key)
        }
        #expect(seen.allSatisfy { filter.mayContain($0) }, "no false negatives")
        var falsePositives = 0
        for i in 0..<20_000 where filter.mayContain("subject\u{1F}never-\(i)-\(rng.next())") { falsePositives += 1 }
        #expect(falsePositives < 600, "about 1 % expected, \(falsePositives) of 20 000")
    }

    /// The one-hash forms a rebuild uses agree with `mayContain` then `insert`.
    @Test func insertReportingPresenceIsMayContainThenInsert() {
        var rng = SplitMixRNG(seed: 9)
        var a = BloomFilter(capacity: 1_000), b = BloomFilter(capacity: 1_000), c = BloomFilter(capacity: 1_000)
        for _ in 0..<5_000 {
            // Keys repeat, so both answers occur.
            let id = "\(rng.next() % 2_000)"
            let key = "record\u{1F}" + id
            let before = a.mayContain(key)
            a.insert(key)
            #expect(b.insertReportingPresence(of: key) == before)
            #expect(b.mayContain(key))
            // Hashed in parts, as a rebuild does: the same key.
            #expect(c.insertReportingPresence(kind: "record", id: id) == before)
            #expect(c.mayContain(key))
        }
    }
}
