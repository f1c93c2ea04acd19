import Envelope

/// Failures of the log itself (SQLite failures arrive as ``SQLiteError``).
public enum EventLogError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The database was written by a newer famctl.
    case newerSchema(found: Int, supported: Int)
    /// This device's own chain holds a fork proof: it must not write more.
    case ownChainForked(DeviceID)
    /// Events of this device's own chain wait in `pending` for earlier ones
    /// (a home restored from an older backup, its later events still
    /// arriving): its next seq is taken already, and writing it again would
    /// fork the chain.
    case ownEventsPending(count: Int, waitingFor: UInt64)
    /// The clock cannot advance (a forged end-of-range HLC was merged).
    case clockExhausted
    /// A local body could not be sealed.
    case envelope(EnvelopeError)
    /// An event the log holds no longer is what it stored: its bytes do not
    /// hash to the id stored with them, or no longer decode (a damaged disk,
    /// an edited database file). Never handed out to be published.
    case damagedEvent(author: DeviceID, seq: UInt64)
    /// An event below its chain's head is not in the log at all (taken out
    /// of it past its rules), where a segment of the chain was to start.
    case missingEvent(author: DeviceID, seq: UInt64)
    /// An insert stored fewer events than it was given: a rule of the
    /// file that famctl did not make (a trigger put in after this open)
    /// dropped them. The transaction is rolled back.
    case notStored(given: Int, stored: Int)

    public var description: String {
        switch self {
        case .newerSchema(let f, let s):
            "the log uses schema \(f) but this famctl reads up to log schema \(s): a later famctl has opened this home, and upgrading a home is one-way. "
                + "Run a famctl whose 'famctl --version' says log schema \(f) or later (nothing was changed)"
        case .ownChainForked(let d):
            "this device's chain (\(d.short)) has a fork proof; it must not append. Join again as a new device"
        case .ownEventsPending(let n, let seq):
            "\(n) of this device's own later events are waiting for its event at seq \(seq); writing now would fork its chain"
        case .clockExhausted: "the hybrid logical clock is at the end of its range; a forged timestamp was merged"
        case .envelope(let e): "cannot seal event: \(e)"
        case .damagedEvent(let a, let seq): "the event at seq \(seq) of device \(a.short) is damaged in this log: its bytes no longer match the id stored with them"
        case .missingEvent(let a, let seq): "the event at seq \(seq) of device \(a.short) is missing from this log (taken out of it), though later ones are there"
        case .notStored(let given, let stored):
            "the log stored \(stored) of \(given) event(s): a rule put into famctl.sqlite outside famctl drops what it writes; nothing was written (the next famctl command removes such rules)"
        }
    }
}
