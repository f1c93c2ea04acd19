import Envelope
@testable import Replicator
import Testing

/// `Replicator.gaps(in:covered:)` finds the seqs no listed segment holds,
/// which decide what a member writes back into another member's folder.
struct GapsTests {
    @Test func gapsAreExactlyTheSeqsNoRangeCovers() {
        var rng = SplitMixRNG(seed: 8)
        for _ in 0..<2_000 {
            let last = UInt64.random(in: 1...40, using: &rng)
            let covered = (0..<Int.random(in: 0...6, using: &rng)).map { _ -> ClosedRange<UInt64> in
                let a = UInt64.random(in: 1...45, using: &rng)
                return a...(a + UInt64.random(in: 0...12, using: &rng))
            }
            let gaps = Replicator.gaps(in: 1...last, covered: covered)
            let expected = (1...last).filter { s in !covered.contains { $0.contains(s) } }
            #expect(gaps.flatMap { Array($0) } == expected, "\(covered) up to \(last): \(gaps)")
            // Maximal runs: two gaps never touch.
            #expect(zip(gaps, gaps.dropFirst()).allSatisfy { $0.upperBound + 1 < $1.lowerBound })
        }
    }

    @Test func aRangeReachingTheLastSeqLeavesNothingAfterIt() {
        #expect(Replicator.gaps(in: 1...10, covered: [3...UInt64.max]) == [1...2])
        #expect(Replicator.gaps(in: 1...10, covered: []) == [1...10])
        #expect(Replicator.gaps(in: 1...10, covered: [1...10]) == [])
    }
}
