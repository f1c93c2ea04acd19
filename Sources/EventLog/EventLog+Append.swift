import Dispatch
import Envelope
import Foundation

// MARK: - Appending local events

extension EventLog {
    /// Seals each body as this device's next event and appends them all in one
    /// `IMMEDIATE` transaction. When this returns, the events are on disk
    /// (fsynced WAL): the append is acknowledged.
    ///
    /// - Parameters:
    ///   - onAccepted: called for each new envelope inside the transaction; a
    ///     throw rolls the whole batch back.
    /// - Throws: ``EventLogError`` or ``SQLiteError``; nothing is stored then.
    @discardableResult
    public func append(
        bodies: [[UInt8]], as identity: DeviceIdentity, family: FamilyID, key: EpochKey,
        now: Date = Date(), onAccepted: (SyncEnvelope) throws -> Void = { _ in }
    ) throws -> [SyncEnvelope] {
        try append(sealing: bodies.map { ($0, key) }, as: identity, family: family, now: now, onAccepted: onAccepted)
    }

    /// Like ``append(bodies:as:family:key:now:onAccepted:)``, each body sealed
    /// with its own epoch key (a key rotation writes under the old and the new
    /// key in one batch).
    ///
    /// - Parameters:
    ///   - after: a clock the new events must follow even though no event of
    ///     the log carries it (a join follows its invitation).
    ///   - check: runs first, inside the write transaction, so a check against
    ///     the current state cannot race another writer; a throw appends nothing.
    @discardableResult
    public func append(
        sealing bodies: [([UInt8], EpochKey)], as identity: DeviceIdentity, family: FamilyID,
        now: Date = Date(), after: HLC = .zero, check: () throws -> Void = {},
        onAccepted: (SyncEnvelope) throws -> Void = { _ in }
    ) throws -> [SyncEnvelope] {
        try append(count: bodies.count, encoding: { bodies[$0] }, as: identity, family: family, now: now, after: { after },
                   check: check, onAccepted: { env, _ in try onAccepted(env) })
    }

    /// Appends `count` events whose bodies `encode` gives (the body's bytes
    /// and the key to seal it with), called on this thread in order, ahead
    /// of their storing: while another core signs the events handed over,
    /// this thread stores the ones signed and encodes the next, so the
    /// caller's per-body work (famctl reads each body into its projected
    /// change there) costs no time of its own.
    ///
    /// - Parameters:
    ///   - after: a clock the new events must follow, read inside the write
    ///     transaction after `check` (what it reads from the state, such as
    ///     the making of a record the events change, cannot change before
    ///     they are stored).
    ///   - onAccepted: called with each new envelope and its index,
    ///     inside the transaction, after `encode` of that index (the envelopes
    ///     signed with it, up to 63 more, are in the log by then: they are
    ///     inserted a chunk at a time).
    @discardableResult
    public func append(
        count: Int, encoding encode: (Int) throws -> ([UInt8], EpochKey), as identity: DeviceIdentity, family: FamilyID,
        now: Date = Date(), after: () throws -> HLC = { .zero }, check: () throws -> Void = {},
        onAccepted: (SyncEnvelope, Int) throws -> Void = { _, _ in }
    ) throws -> [SyncEnvelope] {
        var out: [SyncEnvelope] = []
        try append(sizes: [count], encoding: encode, as: identity, family: family, now: { now }, after: { _ in try after() }, check: check,
                   onAccepted: onAccepted, onCommitted: { out = $0 })
        return out
    }

    /// Appends events in batches, one after another, each batch in an
    /// `IMMEDIATE` transaction of its own, acknowledged (on disk) at its
    /// commit: a long import writes a bounded write-ahead log, and what was
    /// committed stays should a later batch fail.
    ///
    /// The events are numbered across the batches (`encode(i)`, and the
    /// index `onAccepted` receives). While a batch commits — its
    /// write-ahead-log writes and fsync, a fifth of a batch of 1 000 — the
    /// signing thread goes on with the next batch's first events, encoded
    /// ahead; they are kept only if, once the next transaction holds the
    /// write lock, this device's chain still ends at the batch just
    /// committed and no event with a later clock has entered the log
    /// meanwhile (another process's append or ingest): otherwise they are
    /// thrown away and sealed again after what is there.
    ///
    /// `encode` is called in order, but an index may be asked for again:
    /// events thrown away after a commit are encoded anew, and an event of
    /// a later batch that cannot be made (`encode` throws while the batch
    /// before is being stored) is asked for again in its own batch, which
    /// then fails.
    ///
    /// - Parameters:
    ///   - sizes: the number of events of each batch.
    ///   - check: runs first in each batch's transaction (the write lock
    ///     held), before any event of the batch is stored (some may be
    ///     sealed already, and are thrown away); a throw ends the append
    ///     there.
    ///   - after: a clock the batch's events must follow, read in its
    ///     transaction after `check`, with the indices of its events.
    ///     Events of the batch encoded ahead before an earlier clock are
    ///     thrown away and sealed again after it.
    ///   - onCommitted: called after each batch's commit, with its
    ///     envelopes; a throw ends the append, that batch stored.
    /// - Throws: the error of the batch that failed, which stored nothing;
    ///   the batches before it are committed (and were passed to
    ///   `onCommitted`).
    public func append(
        batches sizes: [Int], encoding encode: (Int) throws -> ([UInt8], EpochKey), as identity: DeviceIdentity, family: FamilyID,
        check: () throws -> Void = {}, after: (Range<Int>) throws -> HLC = { _ in .zero },
        onAccepted: (SyncEnvelope, Int) throws -> Void = { _, _ in },
        onCommitted: ([SyncEnvelope]) throws -> Void
    ) throws {
        try append(sizes: sizes, encoding: encode, as: identity, family: family, now: { Date() }, after: after, check: check,
                   onAccepted: onAccepted, onCommitted: onCommitted)
    }

    /// After a write transaction that threw: whether it ended (no
    /// transaction left open) with `first`, the first event it stored, in
    /// the log all the same — a transaction that also wrote an attached
    /// database commits the log's file first, and its commit may then fail
    /// on the other file.
    /// Such a failure is kept (``takeFailureAfterCommit()``): the attached
    /// database's writer is behind the log, and should say so.
    func storedDespiteFailedCommit(first: EventID?, error: any Error) -> Bool {
        guard database.isAutocommit, let first, (try? contains(first)) == true else { return false }
        failureAfterCommit = error
        return true
    }

    /// The error of the last commit that stored the log's events and then
    /// failed on an attached database (see ``storedDespiteFailedCommit(first:error:)``),
    /// once: what that database holds is behind the log.
    public func takeFailureAfterCommit() -> (any Error)? {
        defer { failureAfterCommit = nil }
        return failureAfterCommit
    }

    /// Events encoded and handed to the signer but not stored yet, at most:
    /// enough to keep the signer busy through a commit (about 2.5 ms at
    /// 1 000 events a batch, but 15–25 ms for one that checkpoints the
    /// write-ahead log: some 30 ms of signing at 14–17 µs an event), few
    /// enough to keep little in memory (about 2 MB of the household's
    /// records; see also ``sealingLeadBytes``).
    static let sealingLead = 2048

    /// The plaintext bytes of the events handed to the signer and not
    /// stored yet, at most, besides their number: large bodies (up to 1 MiB
    /// each) must not hold gigabytes ahead.
    static let sealingLeadBytes = 8 << 20

    private func append(
        sizes: [Int], encoding encode: (Int) throws -> ([UInt8], EpochKey), as identity: DeviceIdentity, family: FamilyID,
        now: () -> Date, after: (Range<Int>) throws -> HLC, check: () throws -> Void, onAccepted: (SyncEnvelope, Int) throws -> Void,
        onCommitted: ([SyncEnvelope]) throws -> Void
    ) throws {
        let me = identity.deviceID
        // Where each batch ends, and the batch of the next event to encode.
        let ends = sizes.reduce(into: [Int]()) { $0.append(($0.last ?? 0) + $1) }
        let total = ends.last ?? 0
        var batchOfNext = 0
        // Each event names the id of the one before, and an id does not
        // cover the signature: this thread encodes, encrypts and names the
        // events in chain order, a chunk ahead, and hands them to another
        // core to be signed, which is most of the work; meanwhile it stores
        // the events signed before.
        let signing = SigningQueue(signer: identity.signing)
        // Nothing may still run on the signing key once this returns.
        defer { signing.discardAll() }
        var encoded = 0
        var clock = HybridClock()
        // The chain's end after the last event encoded.
        var chain = Head.empty
        var step = 8
        // The chain's end after the batch last committed, when events past
        // it were handed over before the next transaction began.
        var committedHead: Head?
        var start = 0
        for size in sizes {
            let end = start + size
            var out: [SyncEnvelope] = []
            out.reserveCapacity(size)
            var headBefore: Head?
            do {
                try database.transaction(.immediate) {
                    try willBegin()
                    try check()
                    let following = try after(start ..< end)
                    if try isForked(me, in: family) { throw EventLogError.ownChainForked(me) }
                    let head = try head(of: me, in: family)
                    headBefore = head
                    // (One held for a gap below the head does not stop the chain.)
                    let waiting = try pendingCount(of: me, in: family, above: head.seq)
                    if waiting > 0 { throw EventLogError.ownEventsPending(count: waiting, waitingFor: head.seq + 1) }
                    let date = now()
                    let limitMs = min(HLC.milliseconds(of: date.addingTimeInterval(Self.clockFollowLimit)), HLC.maxMilliseconds)
                    let last = max(try maxHLC(notAfter: HLC(milliseconds: limitMs, counter: .max)), head.hlc)
                    if encoded > start, !(committedHead == head && max(last, following) <= head.hlc) {
                        // Encoded ahead on a chain or a clock that moved since,
                        // or before the clock this batch must follow.
                        signing.discardAll()
                        encoded = start
                        batchOfNext = 0
                    }
                    if encoded == start {
                        precondition(signing.isIdle, "events still being signed")
                        chain = head
                        clock = HybridClock(last: last)
                        clock.receive(following)
                        step = 8
                    }
                    let received = Self.millis(date)

                    /// Encodes, encrypts and chains the next events, a chunk at a
                    /// time, and hands them to be signed, while fewer than
                    /// ``sealingLead`` wait to be stored. Chunks start small
                    /// (the signer starts sooner), never span two batches, and
                    /// shrink at the very end (the signer idles while the last
                    /// is stored).
                    var aheadFailed = false
                    func feed(stored: Int) throws {
                        while encoded < total, encoded - stored < Self.sealingLead, signing.bytesWaiting < Self.sealingLeadBytes,
                              !(aheadFailed && encoded >= end) {
                            while ends[batchOfNext] <= encoded { batchOfNext += 1 }
                            let boundary = ends[batchOfNext]
                            let left = total - encoded
                            let n = min(step, boundary - encoded, left > 64 ? 64 : max(8, (left + 1) / 2), left)
                            // The chunk's random bytes in one call: libsodium asks
                            // the kernel (getrandom) once per call. Each nonce
                            // hashes its event's seq, clock and body with them
                            // (see `hedgedNonce`); they are secret, and wiped
                            // when the chunk is made.
                            let random = randomSecret(32 * n)
                            let first = encoded
                            var next = chain
                            var nextClock = clock
                            let chunk: [SyncEnvelope.Unsigned]
                            var chunkBytes = 0
                            do {
                                chunk = try random.withUnsafeBytes { random in
                                    try (0..<n).map { j in
                                        let (body, key) = try encode(first + j)
                                        chunkBytes += body.count
                                        let hlc: HLC
                                        do { hlc = try nextClock.tick(now: date) } catch { throw EventLogError.clockExhausted }
                                        let mine = UnsafeRawBufferPointer(rebasing: random[(32 * j)..<(32 * j + 32)])
                                        let seq = next.seq + 1
                                        let nonce = SyncEnvelope.hedgedNonce(random: mine, seq: seq, hlc: hlc, body: body)
                                        let unsigned: SyncEnvelope.Unsigned
                                        do throws(EnvelopeError) {
                                            unsigned = try SyncEnvelope.prepare(
                                                body: body, family: family, author: me, seq: seq, previous: next.id, hlc: hlc, key: key, nonce: nonce)
                                        } catch {
                                            throw EventLogError.envelope(error)
                                        }
                                        next = Head(seq: seq, id: unsigned.id, hlc: hlc)
                                        return unsigned
                                    }
                                }
                            } catch where first >= end {
                                // An event of a later batch cannot be made: not this
                                // batch's failure. Its own batch meets it again.
                                aheadFailed = true
                                return
                            }
                            signing.submit(chunk, bytes: chunkBytes)
                            chain = next
                            clock = nextClock
                            encoded += n
                            step = min(step * 2, 64)
                        }
                    }

                    var stored = start
                    while stored < end {
                        try feed(stored: stored)
                        // The chunk's rows in one statement, then each event applied.
                        let chunk = signing.take()
                        try insert(chunk, receivedAt: received)
                        for env in chunk {
                            try onAccepted(env, stored)
                            out.append(env)
                            stored += 1
                        }
                    }
                    // The signer goes on with the next batch while this one commits.
                    try feed(stored: stored)
                    try willCommit()
                }
            } catch {
                // A transaction that also wrote an attached database (famctl's
                // projection) commits the log's file first: should the commit
                // then fail on the other file, the events are stored all the
                // same, and the append must say so rather than invite a retry
                // that would write them twice.
                guard storedDespiteFailedCommit(first: out.first?.id, error: error) else { throw error }
            }
            // The chain's end now: an empty batch leaves it where it was.
            committedHead = out.last.map { Head(seq: $0.seq, id: $0.id, hlc: $0.hlc) } ?? headBefore
            try onCommitted(out)
            start = end
        }
    }

    /// Chunks of envelopes signed in the order they were handed over, one
    /// after another, on a serial queue (the signing thread), while the
    /// caller goes on: the signer is never idle while chunks wait, whatever
    /// the caller does meanwhile (a commit, say). Only the signatures are
    /// made there: an event's id does not cover its signature, so the
    /// caller chains, encrypts and names each event itself, and nothing
    /// signed depends on a signature made before it. Submitting and taking
    /// happen on the caller's thread only. The signing key is owned by the
    /// `append` call, which outlives every use here (``discardAll()``
    /// before it returns), and only read: the one crossing of key material
    /// to another thread.
    private final class SigningQueue: @unchecked Sendable {
        private let queue = DispatchQueue(label: "famctl.eventlog.sign", qos: .userInitiated)
        private let ready = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        /// Signed chunks not taken yet, oldest first (under `lock`).
        private var done: [[SyncEnvelope]] = []
        /// Bumped by ``discardAll()`` (under `lock`): chunks submitted
        /// before are thrown away unsigned.
        private var generation = 0
        /// Chunks submitted and not taken yet (the caller's thread only).
        private var waiting = 0
        /// The bytes of each chunk submitted and not taken yet, and their
        /// sum (the caller's thread only).
        private var sizes: [Int] = []
        private(set) var bytesWaiting = 0
        private let signer: UncheckedKey

        init(signer: SigningKey) { self.signer = UncheckedKey(key: signer) }

        /// Whether every chunk submitted was taken.
        var isIdle: Bool { waiting == 0 }

        func submit(_ unsigned: [SyncEnvelope.Unsigned], bytes: Int) {
            waiting += 1
            sizes.append(bytes)
            bytesWaiting += bytes
            let submitted = lock.withLock { generation }
            queue.async { [self] in
                let discarded = lock.withLock { generation != submitted }
                let signed = discarded ? [] : unsigned.map { $0.signed(by: signer.key) }
                lock.withLock { done.append(signed) }
                ready.signal()
            }
        }

        /// The oldest chunk submitted, once signed.
        func take() -> [SyncEnvelope] {
            precondition(waiting > 0, "nothing handed over to take")
            ready.wait()
            waiting -= 1
            bytesWaiting -= sizes.removeFirst()
            return lock.withLock { done.removeFirst() }
        }

        /// Throws away every chunk submitted, those not signed yet without
        /// signing them, once the signing thread is done with them.
        func discardAll() {
            lock.withLock { generation += 1 }
            while waiting > 0 { _ = take() }
        }

        /// The signing key, read on the signing thread while the append
        /// that owns it waits for it.
        private struct UncheckedKey: @unchecked Sendable { let key: SigningKey }
    }
}
