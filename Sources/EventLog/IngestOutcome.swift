import Envelope

/// What ingest did with one incoming envelope.
public enum IngestOutcome: Sendable, Equatable, CustomStringConvertible {
    /// Stored and chained (possibly after waiting in the pending area).
    case accepted
    /// Already in the log: nothing changed.
    case duplicate
    /// Validly signed but its predecessor has not arrived: held until the gap fills.
    case held(waitingFor: UInt64)
    /// A second validly signed event for an (author, seq) already seen: the
    /// pair is stored as a fork proof, and the author's events from its fork
    /// point (the lowest seq of its proofs) on are refused.
    case fork(seq: UInt64)
    /// The author has a fork proof and the event is at or past its fork
    /// point (or is half of a proof already stored): not accepted.
    case authorForked
    /// Validly signed but breaks its chain (wrong previous id, clock going
    /// back): kept in the rejected table with the reason, for the audit.
    case rejected(reason: String)
    /// Not a well-formed envelope.
    case malformed(EnvelopeError)
    /// The signature does not verify.
    case badSignature
    /// Signed for another family: not ours, not stored.
    case foreignFamily(FamilyID)

    public var description: String {
        switch self {
        case .accepted: "accepted"
        case .duplicate: "duplicate (already held)"
        case .held(let s): "held: waiting for seq \(s)"
        case .fork(let s): "fork proof at seq \(s)"
        case .authorForked: "refused: at or past the author's fork point"
        case .rejected(let r): "rejected: \(r)"
        case .malformed(let e): "malformed: \(e)"
        case .badSignature: "bad signature"
        case .foreignFamily(let f): "belongs to another family (\(f))"
        }
    }
}

/// The result of one ingest batch.
public struct IngestReport: Sendable {
    /// One entry per input, in input order. `id` is `nil` for malformed input.
    public var outcomes: [(id: EventID?, outcome: IngestOutcome)] = []
    /// Every envelope that entered the log in this batch, in the order applied
    /// (inputs and events released from the pending area).
    public var accepted: [SyncEnvelope] = []
    /// How many of `accepted` went into a gap in the middle of their
    /// author's chain (taken out of the log, and read back): the chain
    /// before and after them was applied without them, so the stores are
    /// to be rebuilt from the log.
    public var gapsFilled = 0

    public init() {}

    public func count(where match: (IngestOutcome) -> Bool) -> Int { outcomes.filter { match($0.outcome) }.count }
}
