import Dispatch
import Foundation

/// Work spread over every core, item by item, its results taken in order
/// on the owner's thread as they are done (an ``OrderedStream`` fed a
/// window ahead): the workers never wait for one another, only for the
/// owner when they are `window` items ahead.
///
/// A two-stage pipeline, which hands the workers one chunk at a time and
/// spreads it over the cores, ends every chunk with a barrier: the last
/// run's core works alone while the others (and the consumer, waiting for
/// the chunk) sit idle. Here each worker takes the next item as soon as
/// it is done with one, and the owner starts on a result as soon as it
/// is done.
public final class OrderedWork<Item: Sendable, Result: Sendable> {
    private let items: [Item]
    private let window: Int
    private let stream: OrderedStream<Item, Result>
    private var submitted = 0
    private var taken = 0

    /// Starts nothing yet: the first ``next()`` hands the first items over.
    ///
    /// - Parameters:
    ///   - window: how many items past the one whose result was taken last
    ///     may be done or under way, at most: what is held in memory.
    ///   - workers: the threads that do the work: by default one per core,
    ///     and none (everything on the owner's thread, in ``next()``) on a
    ///     machine of one core.
    public init(_ items: [Item], window: Int = 32, workers: Int = Parallel.cores > 1 ? Parallel.cores : 0,
                _ work: @escaping @Sendable (Item) -> Result) {
        precondition(window >= 1, "at least one item ahead")
        self.items = items
        self.window = window
        stream = OrderedStream(workers: workers, work)
    }

    /// Items whose results were not taken yet.
    public var remaining: Int { items.count - taken }

    /// The result of the next item, in order, once it is done (after
    /// handing over what the window lets through).
    public func next() -> Result {
        precondition(taken < items.count, "no item left")
        while submitted < items.count, stream.pending <= window {
            stream.submit(items[submitted])
            submitted += 1
        }
        taken += 1
        return stream.take()
    }

    /// Gives back a result the owner is done with, for a worker to free.
    public func release(_ result: Result) { stream.release(result) }

    /// Stops the workers once they are done with the items they hold; the
    /// items not started are dropped. Nothing runs after this returns.
    public func close() { stream.close() }

    deinit { close() }
}
