import Envelope
import Foundation

extension EventLog {
    /// Ingests foreign envelopes in one transaction.
    ///
    /// Each input is decoded, checked against `family`, its signature verified,
    /// and then: a duplicate is a no-op; the author's next event is chained
    /// (previous id and strictly increasing HLC) and stored; a later one waits
    /// in `pending` until the gap fills; a second validly signed event for a
    /// taken (author, seq) becomes a fork proof, after which nothing more of
    /// that author is accepted at or past the lowest forked seq (its fork
    /// point). Nothing already stored is ever changed.
    ///
    /// - Parameter onAccepted: called inside the transaction for every envelope
    ///   that enters the log, in chain order.
    /// - Throws: ``SQLiteError`` (the whole batch is rolled back). Bad input is
    ///   reported per envelope in the ``IngestReport``, never thrown.
    public func ingest(
        _ inputs: [[UInt8]], family: FamilyID, now: Date = Date(),
        onAccepted: (SyncEnvelope) throws -> Void = { _ in }
    ) throws -> IngestReport {
        try ingest(inputs, family: family, now: now, prepare: { _ -> Bool? in nil }, onAccepted: { env, _ in try onAccepted(env) })
    }

    /// Like ``ingest(_:family:now:onAccepted:)``, with a `prepare` step run
    /// for every validly signed envelope of `family` off this thread; its
    /// result is handed to `onAccepted` should the envelope enter the log (the
    /// caller decrypts there, say).
    public func ingest<Prepared: Sendable>(
        _ inputs: [[UInt8]], family: FamilyID, now: Date = Date(),
        prepare: @escaping @Sendable (SyncEnvelope) -> Prepared?,
        onAccepted: (SyncEnvelope, Prepared?) throws -> Void
    ) throws -> IngestReport {
        var report = IngestReport()
        try ingest(batches: [inputs], family: family, now: now, prepare: prepare, onAccepted: onAccepted,
                   onCommitted: { _, r in report = r })
        return report
    }

    /// Ingests batches of foreign envelopes (the segment files of a pull),
    /// each in a transaction of its own, in order, as
    /// ``ingest(_:family:now:prepare:onAccepted:)`` ingests one: the checks
    /// of the batches that follow run on every core while one batch is
    /// stored and committed, so the cores do not wait through the commit.
    ///
    /// - Parameter onCommitted: called after each batch's commit, with the
    ///   batch's index and report. Should it throw, or a batch fail, the
    ///   batches before stay committed and none after is ingested.
    public func ingest<Prepared: Sendable>(
        batches: [[[UInt8]]], family: FamilyID, now: Date = Date(),
        prepare: @escaping @Sendable (SyncEnvelope) -> Prepared?,
        onAccepted: (SyncEnvelope, Prepared?) throws -> Void,
        onCommitted: (Int, IngestReport) throws -> Void
    ) throws {
        // Decoding, signature checks and `prepare` do not depend on one another
        // or on the log: they run on every core, in blocks, up to
        // `checkWindow` blocks ahead (of this batch or the next ones), while
        // this thread does the sequential part (chains, inserts, projection)
        // of each block done, in input order, and the commits
        // (``OrderedWork``; a block never spans two batches).
        // A block keeps what `prepare` made apart from the checks, so the
        // sequential loop works on concrete types: iterating tuples of a
        // generic `Prepared` (and keying every one by id) cost this thread a
        // sixth of its instructions, in the runtime's generic paths.
        @Sendable func check(_ block: Block) -> CheckedBlock<Prepared> {
            let range = block.range
            var checked: [Checked] = []
            var made: [Prepared?] = []
            checked.reserveCapacity(range.count)
            made.reserveCapacity(range.count)
            for raw in batches[block.batch][range] {
                do throws(EnvelopeError) {
                    let env = try SyncEnvelope(decoding: raw)
                    let valid = env.family == family && env.hasValidSignature
                    checked.append(Checked(decoded: .success(env), signatureValid: valid))
                    made.append(valid ? prepare(env) : nil)
                } catch {
                    checked.append(Checked(decoded: .failure(error), signatureValid: false))
                    made.append(nil)
                }
            }
            return CheckedBlock(checked: checked, prepared: made)
        }
        var blocks: [Block] = []
        for (b, inputs) in batches.enumerated() {
            for start in stride(from: 0, to: inputs.count, by: Self.checkBlock) {
                blocks.append(Block(batch: b, range: start..<min(inputs.count, start + Self.checkBlock)))
            }
        }
        // One block (an incremental sync's event) is checked on this thread:
        // starting workers would cost more than the check.
        let checked = OrderedWork(blocks, window: Self.checkWindow, workers: blocks.count > 1 && Parallel.cores > 1 ? Parallel.cores : 0, check)
        // The workers are done before this returns, whatever happens.
        defer { checked.close() }
        var taken = 0
        for b in batches.indices {
            var count = 0
            while taken + count < blocks.count, blocks[taken + count].batch == b { count += 1 }
            let report = try ingestBatch(blocks: count, family: family, now: now, onAccepted: onAccepted,
                                         next: checked.next, done: checked.release)
            taken += count
            try onCommitted(b, report)
        }
    }

    /// One batch's transaction: its `blocks` checked blocks, each taken
    /// in order from `next`, judged, stored and applied, then handed to
    /// `done`.
    private func ingestBatch<Prepared: Sendable>(
        blocks: Int, family: FamilyID, now: Date, onAccepted: (SyncEnvelope, Prepared?) throws -> Void,
        next: () -> CheckedBlock<Prepared>, done: (CheckedBlock<Prepared>) -> Void
    ) throws -> IngestReport {
        var report = IngestReport()
        do {
            return try database.transaction(.immediate) {
                try willBegin()
                report = IngestReport()
                let received = Self.millis(now)
                // What `prepare` made for the events that took the slow path, kept
                // across blocks: one held there and released later in the batch
                // finds its own. (An event accepted at once is handed its own.)
                var prepared: [EventID: Prepared] = [:]
                func accepted(_ env: SyncEnvelope) throws { try onAccepted(env, prepared[env.id]) }
                var chains = ChainCache()
                // The common case's events of a block, in order, not stored
                // yet (and their places in the block): stored together in one
                // statement (``insert(_:receivedAt:)``), then applied in
                // order, before anything else reads or writes the log (the
                // next event that takes the slow path, the block's end).
                var ready: [SyncEnvelope] = []
                var readyAt: [Int] = []
                ready.reserveCapacity(Self.checkBlock)
                readyAt.reserveCapacity(Self.checkBlock)
                func storeReady(of block: CheckedBlock<Prepared>) throws {
                    guard !ready.isEmpty else { return }
                    try insert(ready, receivedAt: received)
                    report.accepted.append(contentsOf: ready)
                    for (env, i) in zip(ready, readyAt) { try onAccepted(env, block.prepared[i]) }
                    ready.removeAll(keepingCapacity: true)
                    readyAt.removeAll(keepingCapacity: true)
                }
                func consume(_ block: CheckedBlock<Prepared>) throws {
                    for (i, item) in block.checked.enumerated() {
                        let env: SyncEnvelope
                        switch item.decoded {
                        case .success(let e): env = e
                        case .failure(let error):
                            report.outcomes.append((nil, .malformed(error)))
                            continue
                        }
                        let outcome: IngestOutcome
                        if item.signatureValid, env.family == family,
                           let head = try chains.quietHead(of: env.author, in: family, log: self),
                           env.seq == head.seq + 1, chainViolation(env, after: head) == nil {
                            // The common case: the author's next event, nothing of that
                            // author waiting, rejected or forked. It cannot be a
                            // duplicate (its seq is past the head) nor a fork.
                            // (A head read from the log for another author
                            // meanwhile is not changed by what waits here.)
                            ready.append(env)
                            readyAt.append(i)
                            chains.advance(env)
                            outcome = .accepted
                        } else {
                            try storeReady(of: block)
                            if item.signatureValid, let p = block.prepared[i] { prepared[env.id] = p }
                            outcome = try ingestOne(env, family: family, signatureValid: item.signatureValid, received: received,
                                                    report: &report, onAccepted: accepted)
                            chains.forget(env.author)
                        }
                        report.outcomes.append((env.id, outcome))
                    }
                    try storeReady(of: block)
                }
                for _ in 0..<blocks {
                    let block = next()
                    try consume(block)
                    done(block)
                }
                try willCommit()
                return report
            }
        } catch {
            if storedDespiteFailedCommit(first: report.outcomes.first(where: { $0.outcome == .accepted })?.id, error: error) { return report }
            throw error
        }
    }

    /// Which inputs a block holds: a range of one batch's.
    private struct Block: Sendable {
        let batch: Int
        let range: Range<Int>
    }

    /// Inputs checked together: about a millisecond of checks, so that the
    /// sequential part of the last block (the only time the other cores have
    /// nothing to do) is short.
    static let checkBlock = 32

    /// How many blocks past the one being stored may be checked or under
    /// way, at most (about 1 000 envelopes: a segment file's, so that the
    /// next batch's checks go on through a commit).
    static let checkWindow = 32

    /// One input's decoding and signature check.
    private struct Checked: Sendable {
        let decoded: Result<SyncEnvelope, EnvelopeError>
        let signatureValid: Bool
    }

    /// A block of inputs checked off the sequential thread, and what
    /// `prepare` made of each validly signed one (in a separate array, so
    /// that walking the checks needs no generic code).
    private final class CheckedBlock<Prepared: Sendable>: Sendable {
        let checked: [Checked]
        let prepared: [Prepared?]

        init(checked: [Checked], prepared: [Prepared?]) {
            self.checked = checked
            self.prepared = prepared
        }
    }

    private func ingestOne(
        _ env: SyncEnvelope, family: FamilyID, signatureValid: Bool, received: Int64, report: inout IngestReport,
        onAccepted: (SyncEnvelope) throws -> Void
    ) throws -> IngestOutcome {
        guard env.family == family else { return .foreignFamily(env.family) }
        guard signatureValid else { return .badSignature }
        if try contains(env) { return .duplicate }
        if let reason = try rejectionReason(env.id) { return .rejected(reason: reason) }

        // A different, validly signed event at a taken (author, seq) is a fork,
        // wherever the first one sits: in the log, waiting, or rejected for
        // breaking its chain. So the verdict does not depend on arrival order.
        // It is recorded even once the author is known to be forked: the
        // lowest forked seq (``forkPoints(in:)``), where the projection stops
        // following the author, must come out the same on every replica
        // that sees both branches, whichever reached it first.
        // A waiting or rejected copy that does not verify is damage in this
        // file (those tables are trusted as checked on the way in), not a
        // second signed event: it is dropped, never made a fork proof
        // against an honest author (an audit review).
        // (The rejected table keeps what it holds: such a copy is passed over.)
        while let other = try storedEnvelope(env, table: "pending"), !other.hasValidSignature {
            // By its bytes: its id column may have been altered too.
            try dropPending(other)
        }
        if let other = try storedEnvelope(env, table: "events")
            ?? storedEnvelope(env, table: "pending")
            ?? storedEnvelope(env, table: "rejected").flatMap({ $0.hasValidSignature ? $0 : nil }) {
            // A proof already stored (the same pair read again) is no news.
            return try recordFork(first: other, second: env, detected: received) ? .fork(seq: env.seq) : .authorForked
        }
        // Past its fork point nothing more of the author enters the log;
        // before it, its branches are one, and the chain goes on filling in.
        if let point = try forkPoint(of: env.author, in: env.family), env.seq >= point { return .authorForked }

        let head = try head(of: env.author, in: env.family)
        // Below the head, with nothing at its place: an event missing from
        // the middle of the chain (taken out of the log past its rules),
        // read back.
        if env.seq <= head.seq { return try fillGap(env, received: received, report: &report, onAccepted: onAccepted) }
        if env.seq > head.seq + 1 {
            try hold(env, received: received)
            return .held(waitingFor: head.seq + 1)
        }
        // seq == head.seq + 1 here: seq ≤ head.seq was either a duplicate or a fork.
        if let reason = chainViolation(env, after: head) {
            try reject(env, reason: reason, received: received)
            return .rejected(reason: reason)
        }
        try accept(env, received: received, report: &report, onAccepted: onAccepted)
        try releasePending(after: env, received: received, report: &report, onAccepted: onAccepted)
        return .accepted
    }

    /// Puts `env`, whose place in its author's chain is empty below the
    /// chain's head, back in its place when it chains both ways: it follows
    /// the event before it (its previous id and an earlier clock), and the
    /// event after it, when the log holds that one, names it as its
    /// previous (a later clock). The link to the event after is what makes
    /// it the very event that was taken out: another event signed for that
    /// place is another branch, rejected here. One whose event before is
    /// missing too waits in `pending`, and is put back once that one is
    /// (the gap's events in any order).
    private func fillGap(
        _ env: SyncEnvelope, received: Int64, report: inout IngestReport, onAccepted: (SyncEnvelope) throws -> Void
    ) throws -> IngestOutcome {
        guard let before = env.seq == 1 ? Head.empty : try storedHead(of: env.author, in: env.family, seq: env.seq - 1) else {
            try hold(env, received: received)
            return .held(waitingFor: env.seq - 1)
        }
        var next: SyncEnvelope? = env
        var outcome = IngestOutcome.accepted
        var previous = before
        // Nothing at or past the author's fork point enters the log (the
        // first was checked by the caller).
        let point = try forkPoint(of: env.author, in: env.family) ?? .max
        while let current = next, current.seq < point {
            if let reason = try gapViolation(current, after: previous) {
                try database.run("DELETE FROM pending WHERE id = ?1", [.blob(current.id.bytes)])
                try reject(current, reason: reason, received: received)
                if current.id == env.id { outcome = .rejected(reason: reason) }
                break
            }
            try accept(current, received: received, report: &report, onAccepted: onAccepted)
            report.gapsFilled += 1
            previous = Head(seq: current.seq, id: current.id, hlc: current.hlc)
            // The gap's next event, should it wait for this one.
            next = nil
            guard try storedHead(of: env.author, in: env.family, seq: current.seq + 1) == nil,
                  let bytes = try pendingBytes(family: env.family, author: env.author, seq: current.seq + 1),
                  let waiting = try? SyncEnvelope(decoding: bytes) else { break }
            guard waiting.hasValidSignature else { try dropPending(waiting); break }
            next = waiting
        }
        return outcome
    }

    /// Keeps `env` in `pending` until the event before it arrives.
    private func hold(_ env: SyncEnvelope, received: Int64) throws {
        try database.run(
            "INSERT OR IGNORE INTO pending(id, family, author, seq, received_at, bytes) VALUES(?1, ?6, ?2, ?3, ?4, ?5)",
            [.blob(env.id.bytes), .blob(env.author.bytes), .integer(Int64(env.seq)), .integer(received), .blob(env.bytes), .blob(env.family.bytes)])
    }

    /// Why `env` cannot fill its empty place after `head`, if it cannot:
    /// it does not follow `head`, or the event after its place does not
    /// name it.
    private func gapViolation(_ env: SyncEnvelope, after head: Head) throws -> String? {
        if let v = chainViolation(env, after: head) { return v }
        guard let bytes = try database.statement("SELECT bytes FROM events WHERE family = ?1 AND author = ?2 AND seq = ?3")
            .first([.blob(env.family.bytes), .blob(env.author.bytes), .integer(Int64(env.seq + 1))], { $0.blob(0) }) else { return nil }
        // The stored event after it, as it was signed: the chain's own link.
        guard let after = try? SyncEnvelope(decoding: bytes) else {
            return "the event after its place (seq \(env.seq + 1)) cannot be read to check the link"
        }
        if after.previous != env.id {
            return "not the event that seq \(env.seq + 1) follows (it names \(after.previous.short) as its previous): another branch of seq \(env.seq)"
        }
        if after.hlc <= env.hlc { return "clock goes back along the chain (\(after.hlc) after \(env.hlc))" }
        return nil
    }

    /// The log's event of `author` at `seq`, as a chain head.
    private func storedHead(of author: DeviceID, in family: FamilyID, seq: UInt64) throws -> Head? {
        try database.statement("SELECT id, hlc FROM events WHERE family = ?1 AND author = ?2 AND seq = ?3")
            .first([.blob(family.bytes), .blob(author.bytes), .integer(Int64(seq))]) { r in
                Head(seq: seq, id: EventID(bytes: r.blob(0)), hlc: HLC(bigEndianBytes: r.blob(1)) ?? .zero)
            }
    }

    /// What one ingest batch knows of the chains it touches, so the common
    /// case (an author's next event) costs one insert, not a dozen lookups.
    /// Entries are dropped whenever the slow path runs for an author.
    struct ChainCache {
        /// Heads of authors with nothing waiting, rejected or forked;
        /// `nil` value: the author is not quiet.
        private var heads: [DeviceID: Head?] = [:]

        /// The head of `author`'s chain when no event of that author waits in
        /// `pending`, was rejected, or is part of a fork proof; `nil` otherwise.
        mutating func quietHead(of author: DeviceID, in family: FamilyID, log: EventLog) throws -> Head? {
            if let known = heads[author] { return known }
            let args: [SQLValue] = [.blob(family.bytes), .blob(author.bytes)]
            let noisy = try log.database.statement("""
                SELECT EXISTS(SELECT 1 FROM pending WHERE family = ?1 AND author = ?2)
                    OR EXISTS(SELECT 1 FROM rejected WHERE family = ?1 AND author = ?2)
                    OR EXISTS(SELECT 1 FROM forks WHERE family = ?1 AND author = ?2)
                """).first(args) { $0.int(0) != 0 } ?? true
            let head: Head? = noisy ? nil : try log.head(of: author, in: family)
            heads[author] = .some(head)
            return head
        }

        mutating func advance(_ env: SyncEnvelope) {
            heads[env.author] = .some(Head(seq: env.seq, id: env.id, hlc: env.hlc))
        }

        mutating func forget(_ author: DeviceID) { heads[author] = nil }
    }

    /// Why `env` cannot follow `head` in its author's chain, if it cannot.
    func chainViolation(_ env: SyncEnvelope, after head: Head) -> String? {
        if env.previous != head.id {
            return "previous id \(env.previous.short) is not the id of seq \(head.seq) (\(head.id.short))"
        }
        if env.hlc <= head.hlc {
            return "clock goes back along the chain (\(env.hlc) after \(head.hlc))"
        }
        return nil
    }

    private func accept(
        _ env: SyncEnvelope, received: Int64, report: inout IngestReport,
        onAccepted: (SyncEnvelope) throws -> Void
    ) throws {
        try insert(env, receivedAt: received)
        try database.run("DELETE FROM pending WHERE id = ?1", [.blob(env.id.bytes)])
        report.accepted.append(env)
        try onAccepted(env)
    }

    /// Moves the author's held successors into the log while they chain.
    private func releasePending(
        after start: SyncEnvelope, received: Int64, report: inout IngestReport, onAccepted: (SyncEnvelope) throws -> Void
    ) throws {
        var head = Head(seq: start.seq, id: start.id, hlc: start.hlc)
        let point = try forkPoint(of: start.author, in: start.family) ?? .max
        while head.seq + 1 < point {
            guard let bytes = try pendingBytes(family: start.family, author: start.author, seq: head.seq + 1),
                  let next = try? SyncEnvelope(decoding: bytes) else { return }
            // Checked on the way in; one that does not verify now was altered
            // in this file: dropped, not taken into the log (the good copy
            // is read again from its file).
            guard next.hasValidSignature else {
                try dropPending(next)
                return
            }
            if let reason = chainViolation(next, after: head) {
                try database.run("DELETE FROM pending WHERE id = ?1", [.blob(next.id.bytes)])
                try reject(next, reason: reason, received: received)
                return
            }
            try accept(next, received: received, report: &report, onAccepted: onAccepted)
            head = Head(seq: next.seq, id: next.id, hlc: next.hlc)
        }
    }

    /// Another stored event at `env`'s (family, author, seq), in `table`.
    private func storedEnvelope(_ env: SyncEnvelope, table: String) throws -> SyncEnvelope? {
        try database.statement("SELECT bytes FROM \(table) WHERE family = ?1 AND author = ?2 AND seq = ?3 AND id != ?4 LIMIT 1")
            .first([.blob(env.family.bytes), .blob(env.author.bytes), .integer(Int64(env.seq)), .blob(env.id.bytes)]) { r in
                try SyncEnvelope(decoding: r.blob(0))
            }
    }

    /// Removes the waiting copy `env` (found by its place and bytes).
    private func dropPending(_ env: SyncEnvelope) throws {
        try database.run("DELETE FROM pending WHERE family = ?1 AND author = ?2 AND seq = ?3 AND bytes = ?4",
                         [.blob(env.family.bytes), .blob(env.author.bytes), .integer(Int64(env.seq)), .blob(env.bytes)])
        guard database.changes > 0 else { throw EventLogError.damagedEvent(author: env.author, seq: env.seq) }
    }

    private func pendingBytes(family: FamilyID, author: DeviceID, seq: UInt64) throws -> [UInt8]? {
        try database.statement("SELECT bytes FROM pending WHERE family = ?1 AND author = ?2 AND seq = ?3 ORDER BY id LIMIT 1")
            .first([.blob(family.bytes), .blob(author.bytes), .integer(Int64(seq))]) { $0.blob(0) }
    }

    /// Stores the pair; whether it was not stored yet.
    private func recordFork(first: SyncEnvelope, second: SyncEnvelope, detected: Int64) throws -> Bool {
        try database.run(
            "INSERT OR IGNORE INTO forks(family, author, seq, first_id, second_id, first, second, detected_at) VALUES(?8, ?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            [.blob(first.author.bytes), .integer(Int64(first.seq)), .blob(first.id.bytes), .blob(second.id.bytes),
             .blob(first.bytes), .blob(second.bytes), .integer(detected), .blob(first.family.bytes)])
        return database.changes > 0
    }

    private func reject(_ env: SyncEnvelope, reason: String, received: Int64) throws {
        try database.run(
            "INSERT OR IGNORE INTO rejected(id, family, author, seq, reason, received_at, bytes) VALUES(?1, ?7, ?2, ?3, ?4, ?5, ?6)",
            [.blob(env.id.bytes), .blob(env.author.bytes), .integer(Int64(env.seq)), .text(reason), .integer(received), .blob(env.bytes),
             .blob(env.family.bytes)])
    }

    private func rejectionReason(_ id: EventID) throws -> String? {
        try database.statement("SELECT reason FROM rejected WHERE id = ?1").first([.blob(id.bytes)]) { $0.text(0) }
    }

    /// A proven fork: two validly signed events by one author at one seq.
    public struct ForkProof: Sendable {
        public let family: FamilyID
        public let author: DeviceID
        public let seq: UInt64
        public let first: [UInt8]
        public let second: [UInt8]
        public let detectedAt: Date
    }

    /// The lowest seq at which this log holds two events of `author`, if any.
    public func forkPoint(of author: DeviceID, in family: FamilyID) throws -> UInt64? {
        try database.statement("SELECT min(seq) FROM forks WHERE family = ?1 AND author = ?2")
            .first([.blob(family.bytes), .blob(author.bytes)]) { $0.isNull(0) ? nil : UInt64($0.int(0)) } ?? nil
    }

    /// Each forked author of `family` and the lowest seq at which this log
    /// holds two of its events: where its branches part, once both have
    /// been seen that far.
    public func forkPoints(in family: FamilyID) throws -> [DeviceID: UInt64] {
        var out: [DeviceID: UInt64] = [:]
        try database.statement("SELECT author, min(seq) FROM forks WHERE family = ?1 GROUP BY author").forEachRow([.blob(family.bytes)]) {
            out[DeviceID(bytes: $0.blob(0))] = UInt64($0.int(1))
        }
        return out
    }

    public func forkProofs() throws -> [ForkProof] {
        var out: [ForkProof] = []
        try database.statement("SELECT family, author, seq, first, second, detected_at FROM forks ORDER BY family, author, seq").forEachRow { r in
            out.append(ForkProof(family: FamilyID(bytes: r.blob(0)), author: DeviceID(bytes: r.blob(1)), seq: UInt64(r.int(2)),
                                 first: r.blob(3), second: r.blob(4), detectedAt: Date(timeIntervalSince1970: Double(r.int(5)) / 1000)))
        }
        return out
    }

    /// A validly signed event kept out of the log, with its reason.
    public struct RejectedEvent: Sendable {
        public let id: EventID
        public let family: FamilyID
        public let author: DeviceID
        public let seq: UInt64
        public let reason: String
    }

    public func rejectedEvents() throws -> [RejectedEvent] {
        var out: [RejectedEvent] = []
        try database.statement("SELECT id, family, author, seq, reason FROM rejected ORDER BY family, author, seq").forEachRow { r in
            out.append(RejectedEvent(id: EventID(bytes: r.blob(0)), family: FamilyID(bytes: r.blob(1)), author: DeviceID(bytes: r.blob(2)),
                                     seq: UInt64(r.int(3)), reason: r.text(4)))
        }
        return out
    }
}
