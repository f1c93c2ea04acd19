import Envelope
import Projections

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

