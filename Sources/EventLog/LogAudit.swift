import Envelope
import Foundation

/// One integrity failure found by ``EventLog/audit(family:visit:)``.
public struct AuditFailure: Sendable, CustomStringConvertible {
    /// The stored id of the event (as the row claims it).
    public let id: EventID?
    public let author: DeviceID?
    public let seq: UInt64?
    public let reason: String
    /// A gap: events missing from the chain at `seq` (no event to name).
    public var gap = false

    public var description: String {
        // Not an event's (a gap, a fork proof): its place in the chain.
        guard let id else { return (author.map { "author \($0.short)" } ?? "?") + (seq.map { ", seq \($0)" } ?? "") + ": " + reason }
        var s = "event \(id.hex)"
        if let author, let seq { s += " (author \(author.short), seq \(seq))" }
        return s + ": " + reason
    }
}

/// What a full audit of the log found.
public struct AuditReport: Sendable {
    /// One chain: an author's events in one family.
    public struct AuthorSummary: Sendable {
        public let family: FamilyID
        public let author: DeviceID
        public var events: Int
        public var firstHLC: HLC
        public var lastHLC: HLC
    }

    public var eventCount = 0
    public var authors: [AuthorSummary] = []
    /// Integrity failures: any one makes the log untrustworthy (exit 3).
    public var failures: [AuditFailure] = []
    public var forks: [EventLog.ForkProof] = []
    public var rejected: [EventLog.RejectedEvent] = []
    public var pending = 0
    /// Events whose clock was more than five minutes ahead of this device's
    /// clock when they arrived: accepted, flagged.
    public var farFuture: [(id: EventID, hlc: HLC, receivedAt: Date)] = []

    public var isIntact: Bool { failures.isEmpty }
}

/// One stored event as an audit's workers leave it: decoded (its id
/// hashed) and its signature checked.
struct AuditedEvent: Sendable {
    let stored: EventLog.StoredEvent
    let decoded: Result<SyncEnvelope, EnvelopeError>
    let signatureValid: Bool
}

extension EventLog {
    /// Events an audit's worker checks at a time (fewer when they pass
    /// `auditBlockBytes`), and how many such blocks may be checked or under
    /// way past the one being judged.
    static let auditBlock = 64
    static let auditBlockBytes = 1 << 20
    static let auditWindow = 16

    /// How far ahead of arrival an event's clock may be before it is flagged.
    public static let futureSkewAllowance: TimeInterval = 5 * 60

    /// Re-verifies every stored event from its bytes: structure, id (BLAKE2b of
    /// the signed bytes, or of all of them for version 1), signature, the row's columns against the header, the family,
    /// and each author's chain (seq from 1 without gaps, previous ids, clock
    /// strictly increasing). Fork proofs are re-verified too.
    ///
    /// Streams the log in chain order; memory does not grow with its size.
    ///
    /// - Parameters:
    ///   - family: when given, only that family's chains are audited.
    ///   - localAuthor: this device; its own events are not flagged for
    ///     far-future clocks (they only carry a clock merged from others).
    ///   - visit: called for each event that passed; returns a failure reason
    ///     of its own (e.g. a body that does not decrypt), or `nil`.
    public func audit(family: FamilyID?, localAuthor: DeviceID? = nil, visit: (SyncEnvelope) throws -> String? = { _ in nil }) throws -> AuditReport {
        var report = AuditReport()
        var current: AuditReport.AuthorSummary?
        var head = Head.empty

        func fail(_ e: StoredEvent, _ reason: String) {
            report.failures.append(AuditFailure(id: e.id, author: e.author, seq: e.seq, reason: reason))
        }

        /// One event's checks, in chain order.
        func judge(_ audited: AuditedEvent) throws {
            let stored = audited.stored
            report.eventCount += 1
            if current?.author != stored.author || current?.family != stored.family {
                if let c = current { report.authors.append(c) }
                current = .init(family: stored.family, author: stored.author, events: 0, firstHLC: stored.hlc, lastHLC: stored.hlc)
                head = .empty
            }
            current!.events += 1
            current!.lastHLC = max(current!.lastHLC, stored.hlc)

            let env: SyncEnvelope
            switch audited.decoded {
            case .success(let e): env = e
            case .failure(let error):
                fail(stored, "stored bytes are not an envelope: \(error)")
                head = Head(seq: stored.seq, id: stored.id, hlc: stored.hlc)
                return
            }
            var problems: [String] = []
            if env.id != stored.id { problems.append("content does not hash to its id (bytes altered; hash is \(env.id.short))") }
            if !audited.signatureValid { problems.append("signature does not verify") }
            if env.author != stored.author || env.seq != stored.seq || env.hlc != stored.hlc || env.family != stored.family {
                problems.append("index columns disagree with the signed header")
            }
            if env.seq > head.seq + 1 {
                // The events between are missing, not this one's doing: the
                // gap is blamed on its place, and this event is judged on
                // its own (an audit review: an intact event was named).
                let missing = env.seq - head.seq == 2 ? "seq \(head.seq + 1) is" : "seqs \(head.seq + 1)–\(env.seq - 1) are"
                report.failures.append(AuditFailure(id: nil, author: stored.author, seq: head.seq + 1,
                                                    reason: "chain gap: \(missing) missing from the log (seq \(env.seq) follows seq \(head.seq)): taken out of it, or lost", gap: true))
            } else if env.seq != head.seq + 1 {
                problems.append("chain gap: seq \(env.seq) follows seq \(head.seq)")
            } else if let v = chainViolation(env, after: head) {
                problems.append(v)
            }
            if problems.isEmpty, let own = try visit(env) { problems.append(own) }
            if !problems.isEmpty { fail(stored, problems.joined(separator: "; ")) }

            if env.author != localAuthor, Double(env.hlc.milliseconds) / 1000 > stored.receivedAt.timeIntervalSince1970 + Self.futureSkewAllowance {
                report.farFuture.append((env.id, env.hlc, stored.receivedAt))
            }
            // Chain on the stored id: an altered event is blamed once, not its intact successor too.
            head = Head(seq: stored.seq, id: stored.id, hlc: stored.hlc)
        }
        // Decoding (the id's hash) and the signature check of each event do
        // not depend on the others: they run on every core, a block of
        // events at a time, a window of blocks ahead, while this thread
        // judges each event in chain order as it comes back. (One core
        // checked the 100 003 events of the bench's home in 6 s of `replay`'s 10.)
        let stream = OrderedStream<[StoredEvent], [AuditedEvent]>(workers: Parallel.cores > 1 ? Parallel.cores : 0) { block in
            block.map { stored in
                do throws(EnvelopeError) {
                    let env = try SyncEnvelope(decoding: stored.bytes)
                    return AuditedEvent(stored: stored, decoded: .success(env), signatureValid: env.hasValidSignature)
                } catch {
                    return AuditedEvent(stored: stored, decoded: .failure(error), signatureValid: false)
                }
            }
        }
        defer { stream.close() }
        // Large events (bodies up to 1 MiB) make shorter blocks: what is
        // held ahead stays within the window's blocks of `auditBlockBytes`.
        try stream.streamBlocks(of: Self.auditBlock, window: Self.auditWindow, blockWeight: Self.auditBlockBytes, weight: { $0.bytes.count },
                                feed: { add in try forEachEvent(order: .chain, in: family, add) },
                                consume: { for audited in $0 { try judge(audited) } })

        if let c = current { report.authors.append(c) }

        report.forks = try forkProofs().filter { family == nil || $0.family == family }
        for proof in report.forks {
            let a = try? SyncEnvelope(decoding: proof.first)
            let b = try? SyncEnvelope(decoding: proof.second)
            guard let a, let b, a.hasValidSignature, b.hasValidSignature, a.author == proof.author, b.author == proof.author,
                  a.family == proof.family, b.family == proof.family,
                  a.seq == proof.seq, b.seq == proof.seq, a.id != b.id else {
                report.failures.append(AuditFailure(id: nil, author: proof.author, seq: proof.seq, reason: "stored fork proof does not verify"))
                continue
            }
        }
        report.rejected = try rejectedEvents().filter { family == nil || $0.family == family }
        report.pending = try pendingCount()
        return report
    }
}
