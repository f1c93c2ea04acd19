import Envelope

/// Failures of the log itself (SQLite failures arrive as ``SQLiteError``).
public enum EventLogError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The database was written by a newer famctl.
    case newerSchema(found: Int, supported: Int)
    /// This device's own chain holds a fork proof: it must not write more.
    case ownChainForked(DeviceID)
    /// The clock cannot advance (a forged end-of-range HLC was merged).
    case clockExhausted
    /// A local body could not be sealed.
    case envelope(EnvelopeError)

    public var description: String {
        switch self {
        case .newerSchema(let f, let s):
            "the log uses schema \(f) but this famctl supports up to \(s); upgrade famctl"
        case .ownChainForked(let d):
            "this device's chain (\(d.short)) has a fork proof; it must not append. Join again as a new device"
        case .clockExhausted: "the hybrid logical clock is at the end of its range; a forged timestamp was merged"
        case .envelope(let e): "cannot seal event: \(e)"
        }
    }
}
