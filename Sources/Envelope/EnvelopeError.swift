/// Why bytes are not a well-formed envelope, or cannot be opened.
///
/// A bad *signature* is not among these: ``SyncEnvelope/hasValidSignature``
/// returns it as a result.
public enum EnvelopeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer bytes than the fixed header, ciphertext tag and signature need.
    case truncated(count: Int)
    /// The first 8 bytes are not `famctlev`: not an envelope at all.
    case badTag
    case unsupportedVersion(UInt8)
    /// Reserved flag bits are set.
    case reservedFlags(UInt8)
    /// The declared ciphertext length disagrees with the byte count.
    case lengthMismatch(declared: Int, actual: Int)
    /// The ciphertext is larger than an envelope may carry.
    case tooLarge(Int)
    /// Sequence numbers start at 1.
    case zeroSequence
    /// A sequence number beyond 2^63 − 1 (what a log's signed 64-bit
    /// integers hold): no chain grows that long.
    case sequenceTooLarge(UInt64)
    /// The first event of a chain must name no previous event, later ones must.
    case previousMismatch(seq: UInt64)
    /// Authentication of the body failed: wrong epoch key, or altered bytes.
    case decryptionFailed
    /// The body decrypted but is not a valid event body.
    case badBody(String)

    public var description: String {
        switch self {
        case .truncated(let n): "envelope truncated (\(n) bytes, less than the minimum \(SyncEnvelope.minimumCount))"
        case .badTag: "not a famctl envelope (bad tag)"
        case .unsupportedVersion(let v): "unsupported envelope version \(v) (this build reads versions 1 and 2; upgrade famctl)"
        case .reservedFlags(let f): "reserved flag bits set (0x\(String(f, radix: 16)))"
        case .lengthMismatch(let d, let a): "ciphertext length field says \(d) bytes, envelope holds \(a)"
        case .tooLarge(let n): "ciphertext of \(n) bytes exceeds the \(SyncEnvelope.maximumCiphertext)-byte limit"
        case .zeroSequence: "sequence number 0 (chains start at 1)"
        case .sequenceTooLarge(let s): "sequence number \(s) is beyond the largest a chain may reach (2^63 - 1)"
        case .previousMismatch(let s): s == 1 ? "first event names a previous event" : "event \(s) names no previous event"
        case .decryptionFailed: "body does not authenticate with the epoch key (wrong key or altered bytes)"
        case .badBody(let why): "body is not a valid event body: \(why)"
        }
    }
}
