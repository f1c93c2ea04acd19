import Envelope
import Projections

/// The family's keys, read (never written) by the workers that open bodies
/// during one ``Home/ingest(_:)`` or ``Home/rebuildProjections(unlessRebuilt:)`` call,
/// one scratch projection of `replay` (``ScratchProjection/rebuild(from:upTo:leavingOut:until:householdHint:)``),
/// or one listing of `famctl log` (``LogEntries``), which owns them and
/// outlives them.
/// `EpochKey` is not `Sendable` so that secrets do not wander between threads
/// by accident; this is the one deliberate, bounded exception.
struct ReadOnlyKeys: @unchecked Sendable {
    let keys: [UInt32: EpochKey]

    /// Whether a key for `env`'s epoch is held and its body still does not
    /// open: damaged bytes, not a key still to come. (Asked only of events
    /// ``open(_:)`` gave no change for.)
    func failsToOpen(_ env: SyncEnvelope) -> Bool {
        guard let key = keys[env.epoch] else { return false }
        return (try? env.openBody(with: key)) == nil
    }

    /// The change the event's body makes; `nil` when no key is held for
    /// its epoch or the body does not open (``Home/openBody(_:)`` says why).
    /// A record event is read straight from its bytes; any other body, or
    /// one of an unusual shape, through an ``EventBody``.
    func open(_ env: SyncEnvelope) -> PreparedChange? {
        guard let key = keys[env.epoch], let plain = try? env.openBody(with: key) else { return nil }
        let version = Version(env)
        if let change = PreparedChange(recordBody: plain, version: version) { return change }
        guard let body = try? EventBody(decoding: plain) else { return nil }
        return PreparedChange(body, version: version)
    }
}
