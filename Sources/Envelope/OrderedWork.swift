import Dispatch
import Foundation

/// Work spread over every core in blocks, consumed in order on the
/// caller's thread as the blocks are done (an ``OrderedStream`` fed a
/// window ahead): the workers never wait for one another, only for the
/// consumer when they are ``forEach(count:block:window:workers:_:consume:)``'s
/// window ahead.
///
/// A two-stage pipeline, which hands the workers one chunk at a time and
/// spreads it over the cores, ends every chunk with a barrier: the last
/// run's core works alone while the others (and the consumer, waiting for
/// the chunk) sit idle. Here each worker takes the next block as soon as
/// it is done with one, and the consumer starts on a block as soon as it
/// is done.
public enum OrderedWork {
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
    public static func forEach<Result: Sendable>(
        count: Int, block: Int, window: Int = 32, workers: Int = Parallel.cores > 1 ? Parallel.cores : 0,
        _ work: @escaping @Sendable (Range<Int>) -> Result,
        consume: (Result) throws -> Void
    ) rethrows {
        precondition(block >= 1 && window >= 1, "blocks of at least one item, at least one ahead")
        guard count > 0 else { return }
        let blocks = (count + block - 1) / block
        func range(_ b: Int) -> Range<Int> { (b * block)..<min(count, (b + 1) * block) }
        guard workers > 0, blocks > 1 else {
            for b in 0..<blocks { try consume(work(range(b))) }
            return
        }
        let stream = OrderedStream<Range<Int>, Result>(workers: workers, work)
        // The workers are done before this returns, whatever happens.
        defer { stream.close() }
        var next = 0
        for _ in 0..<blocks {
            while next < blocks, stream.pending <= window {
                stream.submit(range(next))
                next += 1
            }
            let result = stream.take()
            try consume(result)
            stream.release(result)
        }
    }
}
