import Envelope
import Projections
import Synchronization

/// An event a worker of ``Home/forEachOpened(keys:upTo:unopened:skip:_:)`` opened. A class, so that the projecting
/// thread takes each out of its block with one retain rather than one for
/// every array and string inside (atomic operations on memory the other
/// core wrote, about a fifth of that thread's time in `perf`).
final class OpenedEvent: Sendable {
    let env: SyncEnvelope
    let prepared: PreparedChange

    init(env: SyncEnvelope, prepared: PreparedChange) {
        self.env = env
        self.prepared = prepared
    }
}

/// Events the workers of ``Home/forEachOpened(keys:upTo:unopened:skip:_:)`` could not open, counted across threads.
final class UnopenedCount: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
