import Dispatch
import Foundation

/// Work spread over every core in blocks, consumed in order on the
/// caller's thread as the blocks are done: the workers never wait for one
/// another, only for the consumer when they are ``window`` blocks ahead.
///
/// ``Pipeline`` hands a worker one chunk at a time and spreads it over the
/// cores with ``Parallel/map(_:minimumPerCore:_:)``: every chunk ends with
/// a barrier, where the last run's core works alone while the others (and
/// the consumer, waiting for the chunk) sit idle, and a batch's first and
/// last chunks leave one side waiting for the other. Here each worker takes
/// the next block as soon as it is done with one, and the consumer starts
/// on the first block as soon as it is done.
public enum OrderedWork {
    /// Runs `work` for each block of `0..<count` (`block` items long, the
    /// last shorter) on every core, and `consume` with each block's result
    /// on this thread, in order. A result `consume` is done with is freed
    /// on a worker's core.
    ///
    /// With one core, or a count of one block, everything runs on this
    /// thread. Should `consume` throw, the blocks not consumed are thrown
    /// away once the workers are done with the ones they hold; nothing runs
    /// after this returns or throws.
    ///
    /// - Parameters:
    ///   - window: how many blocks past the one being consumed may be done
    ///     or under way, at most (before the first is taken: how many may
    ///     be): what is held in memory.
    public static func forEach<Result: Sendable>(
        count: Int, block: Int, window: Int = 32,
        _ work: @escaping @Sendable (Range<Int>) -> Result,
        consume: (Result) throws -> Void
    ) rethrows {
        precondition(block >= 1 && window >= 1, "blocks of at least one item, at least one ahead")
        guard count > 0 else { return }
        let blocks = (count + block - 1) / block
        @Sendable func range(_ b: Int) -> Range<Int> { (b * block)..<min(count, (b + 1) * block) }
        guard Parallel.cores > 1, blocks > 1 else {
            for b in 0..<blocks { try consume(work(range(b))) }
            return
        }
        let state = State<Result>(blocks: blocks, window: window)
        let group = DispatchGroup()
        for _ in 0..<Parallel.cores {
            DispatchQueue.global(qos: .userInitiated).async(group: group) {
                while let b = state.claim() {
                    state.finish(b, work(range(b)))
                }
            }
        }
        // The workers are done before this returns, whatever happens.
        defer {
            state.cancel()
            group.wait()
        }
        for b in 0..<blocks {
            let result = state.take(b)
            try consume(result)
            state.release(result)
        }
    }

    /// The blocks' results and who works on what, under one lock.
    private final class State<Result: Sendable>: @unchecked Sendable {
        private let condition = NSCondition()
        private let window: Int
        /// Each block's result, from when it is done until it is taken.
        private var results: [Result?]
        /// The next block a worker claims.
        private var next = 0
        /// The block the consumer takes next (the one being consumed is the
        /// one before).
        private var taking = 0
        private var cancelled = false
        /// Results the consumer is done with, for a worker to free.
        private var garbage: [Result] = []

        init(blocks: Int, window: Int) {
            results = Array(repeating: nil, count: blocks)
            self.window = window
        }

        /// The next block to work on, once it is within the window; `nil`
        /// when every block is claimed or the work is cancelled.
        func claim() -> Int? {
            condition.lock()
            while !cancelled, next < results.count, next >= taking + window { condition.wait() }
            let claimed: Int? = cancelled || next >= results.count ? nil : next
            if claimed != nil { next += 1 }
            let freed = garbage
            garbage = []
            condition.unlock()
            withExtendedLifetime(freed) {}   // freed here, outside the lock
            return claimed
        }

        func finish(_ b: Int, _ result: Result) {
            condition.lock()
            results[b] = result
            condition.broadcast()
            condition.unlock()
        }

        /// Block `b`'s result, once done.
        func take(_ b: Int) -> Result {
            condition.lock()
            while results[b] == nil { condition.wait() }
            let result = results[b].take()!
            taking = b + 1
            condition.broadcast()
            condition.unlock()
            return result
        }

        /// Gives back a result the consumer is done with, for a worker to free.
        func release(_ result: Result) {
            condition.lock()
            garbage.append(result)
            condition.unlock()
        }

        func cancel() {
            condition.lock()
            cancelled = true
            condition.broadcast()
            condition.unlock()
        }
    }
}
