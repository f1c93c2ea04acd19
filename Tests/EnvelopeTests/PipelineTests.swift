import Envelope
import Foundation
import Testing

/// ``Pipeline`` transforms each chunk on another core while the caller
/// consumes the one before: outputs must come back whole and in order,
/// whichever side waits, and for how long.
struct PipelineTests {
    /// Random chunks (empty ones too), with the worker and the consumer
    /// each pausing at random, so that either side waits for the other,
    /// must come out as a plain `map` would.
    @Test(arguments: [1, 2, 3])
    func outputsComeBackWholeAndInOrder(seed: UInt64) {
        var rng = SplitMixRNG(seed: seed)
        // Pauses in microseconds.
        let pauses: [UInt32] = [0, 0, 50, 300, 6_000]
        let pipeline = Pipeline<Int, Int> { chunk in
            var local = SplitMixRNG(seed: UInt64(chunk.first ?? 0) &+ seed)
            usleep(pauses[Int(local.next() % UInt64(pauses.count))])
            return chunk.map { $0 &* 3 &+ 1 }
        }
        var next = 0
        var out: [Int] = []
        for _ in 0..<40 {
            let n = Int(rng.next() % 50)
            let chunk = Array(next..<(next + n))
            next += n
            if let done = pipeline.push(chunk) { out += done }
            usleep(pauses[Int(rng.next() % UInt64(pauses.count))])
        }
        if let done = pipeline.finish() { out += done }
        let expected = (0..<next).map { $0 &* 3 &+ 1 }
        #expect(out.count == expected.count)
        #expect(out.elementsEqual(expected), "first difference at \(Array(zip(out, expected)).firstIndex { $0.0 != $0.1 } ?? min(out.count, expected.count))")
        #expect(pipeline.finish() == nil, "nothing is left once the last output was taken")
    }
}
