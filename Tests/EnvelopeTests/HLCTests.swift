import Envelope
import Foundation
import PropertySeeds
import Testing

struct HLCTests {
    @Test func packing() {
        let h = HLC(milliseconds: 0xABCD_EF01_2345, counter: 0x6789)
        #expect(h.rawValue == 0xABCD_EF01_2345_6789)
        #expect(h.milliseconds == 0xABCD_EF01_2345)
        #expect(h.counter == 0x6789)
        #expect(HLC(bigEndianBytes: h.bigEndianBytes) == h)
        #expect(h.bigEndianBytes == [0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89])
    }

    @Test func tickFollowsWallClockAndCountsWithinAMillisecond() throws {
        var c = HybridClock()
        let t = Date(timeIntervalSince1970: 1_795_000_000)
        let a = try c.tick(now: t)
        let b = try c.tick(now: t)
        #expect(a.milliseconds == 1_795_000_000_000 && a.counter == 0)
        #expect(b.milliseconds == a.milliseconds && b.counter == 1)
        // Wall clock going backwards never makes the clock go back.
        let d = try c.tick(now: t.addingTimeInterval(-3600))
        #expect(d > b)
    }

    @Test func counterCarriesIntoMilliseconds() throws {
        var c = HybridClock(last: HLC(milliseconds: 5000, counter: .max))
        let next = try c.tick(now: Date(timeIntervalSince1970: 1))
        #expect(next == HLC(milliseconds: 5001, counter: 0))
    }

    @Test func farFutureRemoteIsFollowedNotRejected() throws {
        var c = HybridClock()
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let remote = HLC(milliseconds: HLC.milliseconds(of: now) + 86_400_000 * 365, counter: 3)
        c.receive(remote)
        let next = try c.tick(now: now)
        #expect(next > remote)
    }

    @Test func exhaustedClockIsAnError() {
        var c = HybridClock(last: HLC(rawValue: .max))
        #expect(throws: HLCError.exhausted) { try c.tick(now: Date()) }
    }

    /// Property: over random interleavings of local ticks (with a wall clock
    /// that jumps both ways) and remote receives, every tick is greater than
    /// everything seen before it.
    @Test(arguments: PropertySeeds.range(0..<20))
    func ticksAlwaysExceedEverythingSeen(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        var c = HybridClock()
        var seen = HLC.zero
        var wall: Double = 1_795_000_000
        for _ in 0..<2_000 {
            wall += Double(Int(rng.next() % 2001) - 1000) / 1000
            if rng.next() % 3 == 0 {
                let r = HLC(milliseconds: UInt64(max(0, wall * 1000 + Double(Int(rng.next() % 20_000) - 10_000))), counter: UInt16(rng.next() % 5))
                c.receive(r)
                seen = max(seen, r)
            } else {
                let t = try c.tick(now: Date(timeIntervalSince1970: wall))
                #expect(t > seen)
                seen = t
            }
        }
    }
}


/// The tests' seeded generator.
typealias SplitMix = SplitMixRNG
