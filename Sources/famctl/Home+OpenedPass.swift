import Envelope
import EventLog
import Projections

extension Home {
    /// Events a pass opens together (a block of ``OrderedStream``).
    static let openBlock = 32

    /// How many blocks a pass opens ahead of the projection, at most, when a
    /// worker opens them (none when they are opened inline, on one core).
    static var openWindow: Int { Parallel.cores > 1 ? 16 : 0 }

    /// One pass over the family's events in chain order (author, then seq):
    /// each event's bytes decoded, its body opened with `keys` and read into
    /// the change it makes, and handed to `project` on this thread, in
    /// order. Events that do not decode or open are counted in `unopened`
    /// (those under a key not held are left out uncounted).
    ///
    /// Bodies are opened on another core, in blocks of ``openBlock``, up to
    /// ``openWindow`` blocks ahead of `project` (each block given back to
    /// the worker to free: deallocating what another core made was a
    /// measurable part of the projecting thread's work). One worker: the projecting
    /// thread, which the pass waits for, does about as much work as the
    /// opening, and with a worker on every core it got two thirds of a core.
    ///
    /// - Parameters:
    ///   - mark: only events at or before this log position.
    ///   - skip: events left out before they are opened.
    ///   - of: the family whose events are opened (this home's by default).
    ///   - ownWithoutKey: counts this device's own events whose epoch's
    ///     key is not held (it wrote them with it: its key table lost it).
    func forEachOpened(keys: ReadOnlyKeys, upTo mark: Int64 = .max, unopened: AtomicCount, ownWithoutKey: AtomicCount? = nil, of chosen: FamilyID? = nil,
                       skip: (EventLog.StoredBytes) -> Bool, _ project: (OpenedEvent) throws -> Void) throws {
        let family = chosen ?? family
        let me = deviceID
        let opener = OrderedStream<[EventLog.StoredBytes], [OpenedEvent?]>(workers: Parallel.cores - 1) { block in
            var last: SyncEnvelope?
            return block.map { stored in
                guard let env = try? SyncEnvelope(decoding: stored.bytes, storedID: stored.id, sharingWith: last) else {
                    unopened.add()
                    return nil
                }
                last = env
                guard let prepared = keys.open(env) else {
                    if keys.failsToOpen(env) { unopened.add() }
                    if env.author == me, keys.keys[env.epoch] == nil { ownWithoutKey?.add() }
                    return nil
                }
                return OpenedEvent(env: env, prepared: prepared)
            }
        }
        defer { opener.close() }
        try opener.streamBlocks(of: Self.openBlock, window: Self.openWindow,
                                feed: { add in try log.forEachEventBytes(in: family, upTo: mark) { if !skip($0) { try add($0) } } },
                                consume: { for case let event? in $0 { try project(event) } })
    }
}
