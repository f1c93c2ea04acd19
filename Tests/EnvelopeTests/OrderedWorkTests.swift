import Envelope
import Foundation
import Testing

/// ``OrderedWork`` runs blocks on every core and hands their results to
/// the caller in order: every block exactly once, in order, never more
/// than the window ahead, nothing running once it returns, and nothing
/// lost or leaked when the consumer throws.
struct OrderedWorkTests {
    /// A result that counts how many of its kind are alive.
    /// A result that counts how many of its kind are alive, and how many
    /// were freed on another thread than `consumer`'s.
    final class Counted: Sendable {
        let range: Range<Int>
        let alive: Tally
        let freedElsewhere: Tally
        let consumer: pthread_t
        init(_ range: Range<Int>, alive: Tally, freedElsewhere: Tally, consumer: pthread_t) {
            self.range = range
            self.alive = alive
            self.freedElsewhere = freedElsewhere
            self.consumer = consumer
            alive.add(1)
        }
        deinit {
            alive.add(-1)
            if pthread_equal(pthread_self(), consumer) == 0 { freedElsewhere.add(1) }
        }
    }

    /// A counter shared between threads, with its highest value.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        private var highest = 0
        func add(_ n: Int) { lock.withLock { value += n; highest = max(highest, value) } }
        func set(_ n: Int) { lock.withLock { value = n; highest = max(highest, n) } }
        var current: Int { lock.withLock { value } }
        var peak: Int { lock.withLock { highest } }
    }

    struct Stop: Error {}

    /// Random counts, block sizes and windows, the workers and the consumer
    /// each pausing at random so that either side waits for the other: the
    /// blocks come back in order, each exactly once, covering `0..<count`;
    /// no worker starts a block more than `window` past the one consumed;
    /// and every result is freed once the call returns.
    @Test(arguments: [1, 2, 3, 4])
    func blocksComeBackInOrderWithinTheWindow(seed: UInt64) {
        var rng = SplitMixRNG(seed: seed)
        let pauses: [UInt32] = [0, 0, 20, 200, 2_000]
        for _ in 0..<12 {
            let count = Int(rng.next() % 400)
            let block = 1 + Int(rng.next() % 40)
            let window = 1 + Int(rng.next() % 6)
            let alive = Tally()
            let freedElsewhere = Tally()
            let me = pthread_self()
            let consumed = Tally()   // the index of the block being consumed
            let ahead = Tally()      // how far past it a block was started
            consumed.set(-1)
            var ranges: [Range<Int>] = []
            OrderedWork.forEach(count: count, block: block, window: window, workers: 2, { range in
                let b = range.lowerBound / block
                ahead.set(b - consumed.current)
                var local = SplitMixRNG(seed: UInt64(range.lowerBound) &+ seed)
                usleep(pauses[Int(local.next() % UInt64(pauses.count))])
                return Counted(range, alive: alive, freedElsewhere: freedElsewhere, consumer: me)
            }, consume: { result in
                consumed.set(ranges.count)
                ranges.append(result.range)
                usleep(pauses[Int(rng.next() % UInt64(pauses.count))])
            })
            let expected = stride(from: 0, to: count, by: block).map { $0..<min(count, $0 + block) }
            #expect(ranges == expected, "count \(count), block \(block)")
            // One more than the window: the block being consumed is counted
            // here on entering `consume`, just after it was taken.
            #expect(ahead.peak <= window + 1, "a block was started \(ahead.peak) past the one being consumed (window \(window))")
            #expect(alive.current == 0, "\(alive.current) results still alive after the call")
            // Results given back while the workers still run are freed by
            // them (those of the last blocks, once they are gone, here).
            if expected.count > window + 8 {
                #expect(freedElsewhere.current > 0, "every result was freed on the consumer's thread")
            }
        }
    }

    /// A consumer that throws at a random block: the error comes out, the
    /// blocks before it were consumed in order, no work runs after the call
    /// returns, and every result made, consumed or not, is freed.
    @Test(arguments: [1, 2, 3])
    func aThrowingConsumerStopsTheWorkAndLosesNothing(seed: UInt64) {
        var rng = SplitMixRNG(seed: seed)
        for _ in 0..<12 {
            let count = 1 + Int(rng.next() % 300)
            let block = 1 + Int(rng.next() % 16)
            let blocks = (count + block - 1) / block
            let stopAt = Int(rng.next() % UInt64(blocks))
            let alive = Tally()
            let started = Tally()
            let running = Tally()
            let freedElsewhere = Tally()
            let me = pthread_self()
            var seen = 0
            #expect(throws: Stop.self) {
                try OrderedWork.forEach(count: count, block: block, window: 3, workers: 2, { range in
                    started.add(1)
                    running.add(1)
                    defer { running.add(-1) }
                    usleep(UInt32(1 + range.lowerBound % 3) * 500)
                    return Counted(range, alive: alive, freedElsewhere: freedElsewhere, consumer: me)
                }, consume: { result in
                    #expect(result.range.lowerBound == seen * block)
                    if seen == stopAt { throw Stop() }
                    seen += 1
                })
            }
            #expect(seen == stopAt)
            #expect(running.current == 0, "a block was still being worked on when the call returned")
            let after = started.current
            usleep(5_000)
            #expect(started.current == after, "work ran after the call returned")
            #expect(alive.current == 0, "\(alive.current) results still alive after the call")
        }
    }
}

/// Blocks of a range through an ``OrderedWork``, as a caller runs one:
/// each result taken in order, consumed, given back; the work closed
/// whatever happens.
extension OrderedWork where Item == Range<Int> {
    /// Runs `work` for each block of `0..<count` (`block` items long, the
    /// last shorter) on every core, and `consume` with each block's result
    /// on this thread, in order. A result `consume` is done with is freed
    /// on a worker's core.
    ///
    /// With no workers, or a count of one block, everything runs on this
    /// thread. Should `consume` throw, the blocks not consumed are thrown
    /// away once the workers are done with the ones they hold; nothing runs
    /// after this returns or throws.
    ///
    /// - Parameters:
    ///   - window: how many blocks past the one being consumed may be done
    ///     or under way, at most: what is held in memory.
    ///   - workers: the threads that do the work: by default one per core,
    ///     and none (everything on this thread) on a machine of one core.
    static func forEach(
        count: Int, block: Int, window: Int = 32, workers: Int = Parallel.cores > 1 ? Parallel.cores : 0,
        _ work: @escaping @Sendable (Range<Int>) -> Result,
        consume: (Result) throws -> Void
    ) rethrows {
        precondition(block >= 1, "blocks of at least one item")
        guard count > 0 else { return }
        let blocks = stride(from: 0, to: count, by: block).map { $0..<min(count, $0 + block) }
        guard workers > 0, blocks.count > 1 else {
            for b in blocks { try consume(work(b)) }
            return
        }
        let ordered = OrderedWork(blocks, window: window, workers: workers, work)
        // The workers are done before this returns, whatever happens.
        defer { ordered.close() }
        while ordered.remaining > 0 {
            let result = ordered.next()
            try consume(result)
            ordered.release(result)
        }
    }
}
