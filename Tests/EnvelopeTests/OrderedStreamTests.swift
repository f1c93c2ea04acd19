import Envelope
import Foundation
import Testing

/// ``OrderedStream`` transforms its inputs on worker threads and gives the
/// outputs back in the order the inputs came, however the owner
/// interleaves submitting and taking, with any number of workers (none:
/// inline), and stops cleanly when closed with inputs still waiting.
struct OrderedStreamTests {
    /// Random runs of submits and takes (the owner keeping at most a
    /// random number pending, as a rebuild does), the transform and the
    /// owner pausing at random: the outputs must be a plain `map` of the
    /// inputs, in order.
    /// Items streamed in blocks (``OrderedStream/streamBlocks(of:window:blockWeight:weight:feed:consume:)``),
    /// with random block sizes, weights and windows: every item is consumed
    /// once, in order; a block is cut at its count or once its weight
    /// reaches the limit, never later; no more than the window is pending.
    @Test(arguments: [(1, 0), (2, 1), (3, 2), (4, 3)])
    func blocksStreamEveryItemInOrder(seed: UInt64, workers: Int) throws {
        var rng = SplitMixRNG(seed: seed)
        for _ in 0..<20 {
            let items = (0..<Int(rng.next() % 300)).map { _ in Int(rng.next() % 50) }
            let count = Int(rng.next() % 8) + 1, limit = Int(rng.next() % 120) + 1, window = Int(rng.next() % 4)
            let stream = OrderedStream<[Int], [Int]>(workers: workers) { $0 }
            defer { stream.close() }
            var consumed: [Int] = []
            var blocks: [[Int]] = []
            try stream.streamBlocks(of: count, window: window, blockWeight: limit, weight: { $0 },
                                    feed: { add in for x in items { try add(x) } },
                                    consume: { block in
                                        #expect(stream.pending <= window, "\(stream.pending) blocks pending past a window of \(window)")
                                        blocks.append(block)
                                        consumed += block
                                    })
            #expect(consumed == items)
            for (k, b) in blocks.enumerated() {
                #expect(!b.isEmpty && b.count <= count)
                // Every block but the last was cut exactly at its count or at the weight limit.
                if k < blocks.count - 1 { #expect(b.count == count || b.reduce(0, +) >= limit) }
                #expect(b.dropLast().reduce(0, +) < limit, "a block went on past its weight limit")
            }
        }
    }

    @Test(arguments: [(1, 0), (2, 1), (3, 2), (4, 3)])
    func outputsComeBackInOrder(seed: UInt64, workers: Int) {
        var rng = SplitMixRNG(seed: seed)
        let pauses: [UInt32] = [0, 0, 30, 300, 3_000]
        let stream = OrderedStream<Int, Int>(workers: workers) { x in
            var local = SplitMixRNG(seed: UInt64(x) &+ seed)
            usleep(pauses[Int(local.next() % UInt64(pauses.count))])
            return x &* 7 &+ 3
        }
        defer { stream.close() }
        let count = 300 + Int(rng.next() % 300)
        let limit = 1 + Int(rng.next() % 8)
        var out: [Int] = []
        for x in 0..<count {
            stream.submit(x)
            while stream.pending > limit || (stream.pending > 0 && rng.next() % 4 == 0) {
                out.append(stream.take())
                if rng.next() % 8 == 0 { usleep(pauses[Int(rng.next() % UInt64(pauses.count))]) }
            }
        }
        while stream.pending > 0 { out.append(stream.take()) }
        let expected = (0..<count).map { $0 &* 7 &+ 3 }
        #expect(out.count == expected.count)
        let same = out == expected
        #expect(same, "first difference at \(Array(zip(out, expected)).firstIndex { $0.0 != $0.1 } ?? min(out.count, expected.count))")
    }

    /// Closing with inputs waiting: the workers finish the inputs they
    /// hold, take no other, and nothing runs once `close` returns.
    @Test(arguments: [1, 2])
    func closingStopsTheWorkers(workers: Int) {
        let lock = NSLock()
        nonisolated(unsafe) var running = 0
        nonisolated(unsafe) var started = 0
        let stream = OrderedStream<Int, Int>(workers: workers) { x in
            lock.withLock { running += 1; started += 1 }
            usleep(2_000)
            lock.withLock { running -= 1 }
            return x
        }
        for x in 0..<50 { stream.submit(x) }
        _ = stream.take()
        stream.close()
        let (now, before) = lock.withLock { (running, started) }
        #expect(now == 0, "a transform was still running after close returned")
        #expect(before < 50, "every input was transformed although the stream was closed early")
        usleep(10_000)
        #expect(lock.withLock { started } == before, "a transform started after close returned")
    }
}
