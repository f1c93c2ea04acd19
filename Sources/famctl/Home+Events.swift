import Envelope
import EventLog
import Foundation
import Projections
import Synchronization

/// The one place events reach the projections: local appends, ingested
/// events and rebuilds all go through ``Home/apply(_:)``.
extension Home {
    /// Opens and applies one event that has just entered the log (inside the
    /// log's transaction). Events of another family (this device's private
    /// history after it joined a family) are kept in the log, not projected.
    /// Events this device cannot open yet (no key) wait for a rebuild once the
    /// key arrives; unreadable bodies are reported by `replay`.
    ///
    /// - Parameters:
    ///   - prepared: the change its body makes, when the caller made it
    ///     ahead; the body is opened here otherwise.
    ///   - deferringToRebuild: leave a record's or subject's change to the
    ///     rebuild once one is due (``needsRebuild``), rather than project
    ///     it twice. Only for an ingest: nothing reads the projection
    ///     between its events and that rebuild, whereas an append's checks
    ///     read it.
    func apply(_ env: SyncEnvelope, prepared: PreparedChange? = nil, deferringToRebuild: Bool = false) throws {
        guard env.family == family, !isPastForkPoint(env) else { return }
        let change: PreparedChange
        if let prepared { change = prepared } else {
            switch try openBody(env) {
            case .body(let opened): change = PreparedChange(opened)
            case .noKey(let epoch):
                // Kept in the log for the rebuild that the key's arrival makes;
                // the owner may not make a key of that epoch meanwhile (see
                // ``noteUnopened(author:epoch:)``).
                try noteUnopened(author: env.author, epoch: epoch)
                return
            case .failed: return
            }
        }
        // Dated far ahead by another device: kept for `sync` to say (a
        // security review: a delete and a rename dated in 2100 arrived
        // without a word, and could not be outdone). Only those the family
        // counts (below): a viewer's or a removed member's win nothing.
        func noteIfFarAhead() {
            guard env.author != deviceID, env.hlc.date.timeIntervalSinceNow > Self.farAheadArrival else { return }
            let was = arrivedFarAhead[env.author]
            arrivedFarAhead[env.author] = ((was?.count ?? 0) + 1, max(was?.latest ?? .zero, env.hlc))
        }
        // Another device's put of a record or subject: kept for `sync` to
        // say which of this device's deletions it undid (left to the
        // rebuild or not).
        if env.author != deviceID, let (kind, id) = change.putEntity, kind == "record" || kind == "subject",
           changedByOthers.count < Self.changedByOthersLimit || changedByOthers[EntityKey(kind: kind, id: id)] != nil {
            changedByOthers[EntityKey(kind: kind, id: id), default: []].insert(Version(env))
        }
        // A rebuild follows this ingest (a household event came before): it
        // projects every record again, so a record's change is left to it
        // rather than projected twice (a new device's first sync begins with
        // the family's first event, then holds the whole history). Household
        // events are still applied, so that the rebuild's pass knows them
        // all and runs once.
        if deferringToRebuild, needsRebuild, !change.isLibraryType {
            leftToRebuild += 1
            // Judged by the rebuild: noted when its author may write now.
            if let m = projector.household.members[env.author], m.removed == nil, m.role(at: Version(env)) != .viewer { noteIfFarAhead() }
            return
        }
        // A key new to this device may open events it could not open before
        // (they were skipped, not kept): the rebuild opens them. (A key this
        // device makes is stored, and noted in the projection, before its
        // key event is applied: see ``appendRotatingKey(after:excluding:)``.)
        let learned = try change.libraryEvent.map { try learnKey(from: $0, author: env.author) } ?? false
        let applied = try projector.apply(env, prepared: change)
        switch applied {
        case .rejected, .ignored, .deferred: break
        default: noteIfFarAhead()
        }
        if case .library(_, let verdictsChange) = applied, verdictsChange || learned {
            // A verdict of a change already projected may differ now, or a
            // key was learned: rebuild after this operation. Until then the
            // stored version says so, should the process die first.
            try state.set(.projectionVersion, "stale")
            needsRebuild = true
        }
    }

    /// Seals, appends and applies local changes in one transaction, each body
    /// with the current epoch key.
    ///
    /// - Parameter check: validation against the current projection, run
    ///   inside the write transaction (two processes cannot both pass it).
    @discardableResult
    func append(_ bodies: [EventBody], check: () throws -> Void = {}) throws -> [SyncEnvelope] {
        let (_, key) = try currentKey()
        return try append(bodies.map { ($0, key) }, check: check)
    }

    /// Appends bodies sealed with the given keys (a key rotation writes under
    /// the old and the new key in one batch).
    @discardableResult
    func append(_ bodies: [(EventBody, EpochKey)], after: HLC = .zero, check: () throws -> Void = {}) throws -> [SyncEnvelope] {
        // Local bodies are applied as written: no need to decrypt what was just
        // sealed. Each is encoded and read into its change on this thread
        // while another core signs the chunk before (the log calls `encoding`
        // a chunk ahead of `onAccepted`). A record put is read from its
        // canonical bytes (copied, not read value by value); anything else
        // from the body.
        try checkNotBehindOwnFolder()
        let envs = try onCurrentProjection {
            // Read in the write transaction, after the check: a sync that
            // stores the put of what these bodies change meanwhile is then
            // seen by both.
            try appendOnce(bodies, after: { max(after, try createdVersionChanged(by: bodies.map(\.0))) }, check: check)
        }
        warnIfStoresBehind(envs.count)
        try settle()
        if let first = envs.first, let last = envs.last { warnIfDatedAhead(last.hlc, first: first.hlc) }
        return envs
    }

    /// The latest first put this home holds of the records, care subjects
    /// and photos `bodies` change (``HLC/zero`` for none), that a change
    /// of them is dated after. The log's clock follows the family's events
    /// only up to a day ahead of this device's clock
    /// (``EventLog/clockFollowLimit``): a device two days behind dated its
    /// edits before the records they changed, and its first put, the
    /// earliest, made it their creator (a clock review; "records it created
    /// stay visible whoever changed them later"). Followed only up to a
    /// day past the later of this device's clock and its own last event
    /// in the family (a device behind still holds its join, dated after
    /// its invitation): a put dated further ahead, by a device whose clock
    /// is ahead or a forged one, would pull the clock of every device that
    /// changes it that far ahead, for good (a code review: 300 days). Not
    /// the newest version either: a write dated ahead keeps winning (the
    /// others are told) rather than pull every clock after it.
    func createdVersionChanged(by bodies: [EventBody], now: Date = Date()) throws -> HLC {
        try createdVersionChanged(of: bodies.compactMap { body -> (kind: String, id: String)? in
            switch body.type {
            case RecordEvent.Kind.put.rawValue, RecordEvent.Kind.delete.rawValue: body["record"]?.stringValue.map { ("record", $0) }
            case SubjectEvent.Kind.put.rawValue, SubjectEvent.Kind.delete.rawValue: body["subject"]?.stringValue.map { ("subject", $0) }
            case PhotoEvent.Kind.put.rawValue, PhotoEvent.Kind.delete.rawValue: body["photo"]?.stringValue.map { ("photo", $0) }
            default: nil
            }
        }, now: now)
    }

    /// ``createdVersionChanged(by:now:)`` of the entities named (kind and
    /// lowercased id): what an import that changes records already here
    /// knows of its rows without reading its bodies again.
    ///
    /// - Parameter ownHead: this device's last event as it was before the
    ///   command began (an import's batches: each would otherwise allow a
    ///   day past the one before, a review); `nil` reads it now.
    func createdVersionChanged(of entities: [(kind: String, id: String)], now: Date = Date(), ownHead: HLC? = nil) throws -> HLC {
        guard !entities.isEmpty else { return .zero }
        let own = try ownHead ?? log.head(of: deviceID, in: family).hlc
        let base = max(own, HLC(milliseconds: HLC.milliseconds(of: now), counter: 0))
        let limit = HLC(milliseconds: min(base.milliseconds + UInt64(EventLog.clockFollowLimit * 1000), HLC.maxMilliseconds), counter: .max)
        var latest = HLC.zero
        for entity in entities {
            guard let created = try projector.createdVersion(kind: entity.kind, id: entity.id), created.hlc <= limit else { continue }
            latest = max(latest, created.hlc)
        }
        return latest
    }

    /// How far ahead of this device's clock its writes may be dated before
    /// it says so (a clock merged from another device a little ahead is not
    /// worth a word).
    static let datedAheadWarning: TimeInterval = 3600

    /// Says on stderr when this device's writes are dated well ahead of its
    /// clock. When another device's change is dated that far ahead too,
    /// this device followed it: its clock is most likely behind, and its
    /// changes, dated just after what it has seen, lose to what the others
    /// change before its next sync (a review: it was told they win). Else
    /// its clock was set ahead at an earlier write and the hybrid clock
    /// never goes back: until that moment passes, its changes win over
    /// what the others write now, and they are the ones warned ("keeps its
    /// value"); this device is told.
    /// - Parameters:
    ///   - hlc: the date of the write's last event.
    ///   - first: the date of its first (what it followed is dated before).
    func warnIfDatedAhead(_ hlc: HLC, first: HLC? = nil, now: Date = Date()) {
        let ahead = hlc.date.timeIntervalSince(now)
        guard ahead > Self.datedAheadWarning else { return }
        func span(_ seconds: TimeInterval) -> String {
            seconds >= 1.5 * 86_400 ? "\(Int((seconds / 86_400).rounded())) days" : seconds >= 1.5 * 3600 ? "\(Int((seconds / 3600).rounded())) hours" : "over an hour"
        }
        // What the write followed: the earliest change of the run leading up
        // to it, dated within the warning's span before its first event.
        // Another device's dated that far ahead of this clock: this device
        // followed it (its clock is behind). Its own: its clock was ahead
        // then, and the hybrid clock never goes back. Not the first change
        // dated ahead at all (a clock review: a device whose own clock had
        // been years ahead was told it was behind a device 20 hours ahead).
        let start = first ?? hlc, window = UInt64(Self.datedAheadWarning * 1000)
        let band = HLC(milliseconds: start.milliseconds > window ? start.milliseconds - window : 0, counter: 0)
        if let other = try? log.earliestEvent(in: family, after: band), other.hlc < start, other.author != deviceID,
           other.hlc.date.timeIntervalSince(now) > Self.datedAheadWarning {
            let by = OutdoneWrite.author(other.author, home: self)
            // A change dated past the day within which this clock follows
            // the family's events is not followed: dated after this write,
            // it wins over it (a clock review: a device that had followed
            // one 20 hours ahead was told it followed none).
            let beyond = (try? log.earliestEvent(in: family, after: hlc)).flatMap { $0.author == deviceID ? nil : $0 }
            // Said in full once for what it follows (and what it does not).
            if saidRecently(other.author.hex + (beyond.map { "+" + $0.author.hex } ?? "") + " " + Self.day(of: other.hlc), now: now) {
                Console.err("famctl: warning: this device's clock is still \(span(other.hlc.date.timeIntervalSince(now))) behind the family's changes (\(by)'s, dated \(TimeText.format(other.hlc.date))): "
                    + "its changes are dated after them, not by its clock (said in full at an earlier change); set its clock right.")
                return
            }
            // Followed though more than a day ahead: only as the making of
            // what the write changes (``createdVersionChanged(of:now:ownHead:)``).
            let pastTheDay = other.hlc.date.timeIntervalSince(now) > EventLog.clockFollowLimit
            let how = pastTheDay
                ? "more than a day behind, its changes are dated by neither its clock nor the family's latest change, but just after its own last change and after the making of what they change; any change the family made later wins over them, whatever the order. "
                : "its changes are dated just after that change, not by its clock, and what the others change before this device's next sync is dated later and wins over them, whatever the order. "
                    + (beyond.map { b in
                        "A change dated further ahead (\(OutdoneWrite.author(b.author, home: self))'s, dated \(TimeText.format(b.hlc.date)), more than a day past this device's clock) is not followed: it wins over them too. "
                    } ?? "")
            Console.err("famctl: warning: this device's clock is \(span(other.hlc.date.timeIntervalSince(now))) behind the family's changes it holds (its changes follow \(by)'s, dated \(TimeText.format(other.hlc.date))): "
                + how + "Set this device's clock right (or, should \(by)'s clock be the one that is ahead, that one's).")
            return
        }
        if saidRecently("own " + Self.day(of: hlc), now: now) {
            Console.err("famctl: warning: this device's changes are still dated \(span(ahead)) ahead of its clock (\(TimeText.format(hlc.date))), "
                + "as said in full at an earlier change: until its clock reaches that moment, they win over the family's changes made meanwhile.")
            return
        }
        Console.err("famctl: warning: this device's changes are dated \(TimeText.format(hlc.date)), \(span(ahead)) ahead of its clock: a clock set ahead at an earlier change "
            + "(or another device's, which it followed) keeps them so, since its dates never go back. Until then they win over the family's changes made meanwhile, "
            + "whatever their order; nothing is lost, and once its clock reaches that moment its changes are dated by it again. 'famctl replay' lists events dated far ahead.")
    }

    /// Whether the clock warning about `what` was given in full within the
    /// last six hours; if not, notes that it is given now (without waiting
    /// for another process's lock: a warning never holds a command up). A
    /// warning on every write is one users learn to skip (a review: 86
    /// times in one afternoon's use).
    /// - Parameter what: what the warning is about: the device followed
    ///   (or `own`) and the day of the change dated ahead, so that a clock
    ///   set further ahead, or another device followed, is said in full
    ///   (a review: a jump from 5 hours to 400 days was said in one line).
    func saidRecently(_ what: String, now: Date) -> Bool {
        let seconds = Int(now.timeIntervalSince1970)
        if let said = try? state.get(.datedAheadSaid), let space = said.lastIndex(of: " "),
           said[..<space] == what, let at = Int(said[said.index(after: space)...]), at <= seconds, seconds - at < 6 * 3600 {
            return true
        }
        try? log.database.withoutWaiting { try state.set(.datedAheadSaid, "\(what) \(seconds)") }
        return false
    }

    /// The UTC day of `hlc`, `YYYY-MM-DD`.
    static func day(of hlc: HLC) -> String { String(TimeText.format(hlc.date).prefix(10)) }

    /// Appends many bodies in batches of `size` events, each batch a
    /// transaction of its own (``EventLog/append(batches:encoding:as:family:check:onAccepted:onCommitted:)``):
    /// an import of years of records writes a bounded write-ahead log, and
    /// the signing thread goes on with the next batch while one commits.
    /// Should a batch fail, the batches before it stay committed: the
    /// caller's work must be safe to run again (`import stores` is, by
    /// record id).
    ///
    /// - Parameter onCommitted: the number of events committed so far,
    ///   after each batch.
    func append(batches bodies: [EventBody], size: Int = 1_000, onCommitted: (Int) -> Void = { _ in }) throws {
        try append(count: bodies.count, size: size, onCommitted: onCommitted) { Self.encodedAndPrepared(bodies[$0]) }
    }

    /// ``append(batches:size:onCommitted:)`` of bodies already encoded
    /// (``EventBody/encoded()``), a few hundred bytes each where the body's
    /// values take several times that: what `import stores` holds of a
    /// file's changes until all its rows are checked.
    ///
    /// - Parameter check: run under the write lock before each batch is
    ///   stored, with the indices of the bodies the batch holds (what the
    ///   caller read them from may have changed since: another process, a
    ///   sync).
    ///   - after: a clock the batch's events must follow (read after
    ///     `check`, in the same transaction), with the indices of its
    ///     bodies: the making of the records they change
    ///     (``createdVersionChanged(of:now:)``).
    func append(encodedBatches encoded: [[UInt8]], size: Int = 1_000, check: (Range<Int>) throws -> Void = { _ in },
                after: (Range<Int>) throws -> HLC = { _ in .zero }) throws {
        try append(count: encoded.count, size: size, check: check, after: after) { i in
            let bytes = encoded[i]
            if let change = PreparedChange(canonicalRecordPut: bytes, version: nil) { return (bytes, change) }
            return (bytes, PreparedChange(try EventBody(decoding: bytes)))
        }
    }

    private func append(count: Int, size: Int, onCommitted: (Int) -> Void = { _ in }, check batchCheck: (Range<Int>) throws -> Void = { _ in },
                        after batchAfter: (Range<Int>) throws -> HLC = { _ in .zero },
                        _ encodedAndPrepared: (Int) throws -> ([UInt8], PreparedChange)) throws {
        precondition(size > 0, "batches of at least one event")
        let (_, key) = try currentKey()
        try checkNotBehindOwnFolder()
        var done = 0
        // Should the projection have moved (another process rebuilt it), the
        // retry goes on after the batches committed, not from the start.
        do {
            try onCurrentProjection {
                let base = done
                let rest = count - base
                guard rest > 0 else { return }
                var sizes = [Int](repeating: size, count: rest / size)
                if rest % size > 0 { sizes.append(rest % size) }
                // The changes read from the bodies encoded and not yet applied
                // (at most the signer's lead, not one slot per body).
                var prepared: [Int: PreparedChange] = [:]
                try log.append(batches: sizes, encoding: { i in
                    let bytes: [UInt8]
                    (bytes, prepared[i]) = try encodedAndPrepared(base + i)
                    return (bytes, key)
                }, as: identity, family: family, check: {
                    // A key rotated meanwhile (a member removed by another
                    // process): nothing more is stored under the old one (what
                    // was sealed ahead under it is thrown away).
                    guard try currentKey().1.epoch == key.epoch else {
                        throw CLIError(.tempFail, "the family's key was rotated while these records were being written",
                                       hint: "Run the command again.")
                    }
                    // The batch about to be stored: those after the ones committed.
                    try batchCheck(done ..< min(done + size, count))
                }, after: { batch in
                    try batchAfter(batch.lowerBound + base ..< batch.upperBound + base)
                }, onAccepted: { env, i in
                    try apply(env, prepared: prepared.removeValue(forKey: i))
                }, onCommitted: { envs in
                    done += envs.count
                    onCommitted(done)
                })
            }
        } catch {
            // What was committed stays: say so, and do what follows a commit.
            guard done > 0 else { throw error }
            try? settle()
            let failure = CLIError(error, path: path)
            let message = failure.message.replacingOccurrences(of: "nothing was written", with: "nothing more was written")
            throw CLIError(failure.code, "\(message) (the first \(done) of \(count) events were stored before this failure)", hint: failure.hint)
        }
        warnIfStoresBehind(done)
        try settle()
    }

    /// After an append the log reported stored: when its commit then failed
    /// on the stores' file (a disk that filled between the two), the events
    /// are in the log and the stores do not show them yet. Said, as `sync`
    /// says it; what the command prints (a new record's id) stays true.
    func warnIfStoresBehind(_ stored: Int) {
        guard let error = log.takeFailureAfterCommit() else { return }
        let cause = CLIError(error, path: path).message.replacingOccurrences(of: "; nothing was written", with: "")
        Console.err("famctl: warning: \(stored == 1 ? "the event was" : "the \(stored) events were") stored in the log, then: \(cause). "
            + "The stores do not show \(stored == 1 ? "it" : "them") yet; the next famctl command with room to write brings them up to date from the log (free some space).")
    }

    /// A local body's bytes, and the change it makes read from them: a
    /// record put from its canonical bytes (copied, not read value by
    /// value), anything else from the body.
    private static func encodedAndPrepared(_ body: EventBody) -> ([UInt8], PreparedChange) {
        let bytes = body.encoded()
        return (bytes, PreparedChange(canonicalRecordPut: bytes, version: nil) ?? PreparedChange(body))
    }

    private func appendOnce(_ bodies: [(EventBody, EpochKey)], after: () throws -> HLC, check: () throws -> Void) throws -> [SyncEnvelope] {
        var prepared = [PreparedChange?](repeating: nil, count: bodies.count)
        return try log.append(count: bodies.count, encoding: { i in
            let bytes: [UInt8]
            (bytes, prepared[i]) = Self.encodedAndPrepared(bodies[i].0)
            return (bytes, bodies[i].1)
        }, as: identity, family: family, after: after, check: check) { env, i in
            try apply(env, prepared: prepared[i].take())
        }
    }

    /// Ingests foreign envelopes and applies what enters the log.
    func ingest(_ inputs: [[UInt8]]) throws -> IngestReport {
        var report = IngestReport()
        try ingest(batches: [inputs]) { _, r in report = r }
        return report
    }

    /// Ingests batches of foreign envelopes (a pull's segment files), each
    /// in a transaction of its own, and applies what enters the log; the
    /// next batches' signatures are checked while one is stored
    /// (``EventLog/ingest(batches:family:now:prepare:onAccepted:onCommitted:)``).
    ///
    /// - Parameter onIngested: called after each batch is committed and
    ///   settled, with its index and report. Should a batch fail, those
    ///   before it stay ingested.
    func ingest(batches: [[[UInt8]]], onIngested: (Int, IngestReport) throws -> Void) throws {
        var done = 0
        var stored = 0
        // Should the projection have moved (another process rebuilt it), the
        // retry goes on after the batches committed, not from the start.
        try onCurrentProjection {
            guard done < batches.count else { return }
            // Bodies are opened on every core along with the signature checks
            // (with the keys held now); an event whose key is not held yet
            // is opened again in `apply`.
            let keys = ReadOnlyKeys(keys: try state.keyring.keys(family: family))
            let base = done
            do {
                try log.ingest(batches: Array(batches[base...]), family: family, prepare: { keys.open($0) },
                               onAccepted: { env, ready in try apply(env, prepared: ready, deferringToRebuild: true) },
                               onCommitted: { i, report in
                                   done = base + i + 1
                                   stored += report.accepted.count
                                   // Stored in the log, then the stores' file failed: said below.
                                   if let failure = log.takeFailureAfterCommit() { throw failure }
                                   // A new fork, or one found to start earlier: events projected
                                   // before it was known may now be past their author's fork point.
                                   let points = try log.forkPoints(in: family)
                                   if points != forkPoints {
                                       forkPoints = points
                                       needsRebuild = true
                                   }
                                   // Events put back into the middle of a chain: what came after
                                   // them was applied without them (a household event among them
                                   // may change how it is judged), so the stores are made again,
                                   // once no event is missing: a rebuild before would drop what
                                   // those still missing said, which the stores hold (a review).
                                   if report.gapsFilled > 0, try log.fillableChainGaps(in: family).isEmpty { needsRebuild = true }
                                   try settle()
                                   try onIngested(base + i, report)
                               })
            } catch where stored > 0 && (error is SQLiteError || error is EventLogError || error is CLIError) {
                // What the batches committed so far stored stays: a failure of
                // the log, the stores or a rebuild after them (a full disk)
                // says so. The caller's own errors go on as they are.
                throw Self.failedAfterStoring(stored, error, home: path)
            }
        }
    }

    /// What follows an ingest's commit failed (a rebuild of the stores on a
    /// full disk, say): the events are in the log all the same, and the
    /// stores are rebuilt by the next command (the rebuild stays due: the
    /// projection file is marked stale, or its keys no longer match).
    static func failedAfterStoring(_ stored: Int, _ error: any Error, home: String) -> CLIError {
        let failure = CLIError(error, path: home)
        guard stored > 0 else { return failure }
        let cause = failure.message.replacingOccurrences(of: "; nothing was written", with: "")
        return CLIError(failure.code, "\(stored) new event(s) were stored in the log, then: \(cause). "
                            + "They stay in the log; the next famctl command brings the stores up to date from it",
                        hint: failure.hint ?? "Run 'famctl sync' again.")
    }

    /// Whether `env` is at or past its author's fork point: kept in the log,
    /// left out of every projection. Every replica that has seen both
    /// branches that far finds the same point, whichever branch it met
    /// first, so their projections agree (never "whichever came first").
    func isPastForkPoint(_ env: SyncEnvelope) -> Bool {
        guard !forkPoints.isEmpty, let point = forkPoints[env.author] else { return false }
        return env.seq >= point
    }

    /// ``forkPoints`` as text, sorted: what `projection.forks` records.
    var forkPointsText: String {
        forkPoints.map { "\($0.key.hex):\($0.value)" }.sorted().joined(separator: ",")
    }

    /// After a log operation: rebuild if membership changed, then do what the
    /// owner owes the family (seal the current key to members who lack it),
    /// unless a pull is still reading (``pulling(_:)``).
    func settle() throws {
        if try needsRebuild || !projectionKeysMatch() { try rebuildProjections(unlessRebuilt: true, afterCommit: true) }
        if !isPulling { try shareKeysIfOwner() }
    }

    /// Runs a pull, the files of which each reach ``ingest(_:)``: the owner's
    /// key shares wait until the pull is done. Written in the middle of it,
    /// a share could take a seq that this device's own folder, not read yet,
    /// already holds (a home restored from an older backup): a fork.
    func pulling<T>(_ body: () throws -> T) throws -> T {
        let result = try {
            isPulling = true
            defer { isPulling = false }
            return try body()
        }()
        try shareKeysIfOwner()
        return result
    }

    /// A rebuild's work inside its transaction (``rebuildProjections(unlessRebuilt:)``
    /// makes the file it writes to): keys
    /// first, then the household (all library events, in version order), then
    /// records and care subjects judged against it.
    ///
    /// The household events already in the projection are folded first (and
    /// the keys they reveal learned), and one pass opens every other event
    /// once. Should that pass meet a household event the projection did not
    /// hold, or learn a key (a key arrived, a projection from scratch), the
    /// records it judged so far were judged against an incomplete household,
    /// or events under that key were skipped: the pass runs again.
    func rebuildPass() throws {
        forkPoints = try log.forkPoints(in: family)
        // Household events projected before their author's fork was known
        // leave the household (and are skipped by the pass below).
        for (author, point) in forkPoints { try projector.forgetLibraryEvents(of: author, from: point) }
        try learnKeysFromProjection()
        var complete = false
        while !complete {
            let known = try projector.libraryEventIDs()
            try projector.reset(keepingLibrary: true)
            complete = true
            let held = try state.keyring.keys(family: family)
            // The pass opens with these: the projection it builds reflects them.
            try projector.noteKeys(held.keys)
            let unopened = AtomicCount(), ownWithoutKey = AtomicCount()
            // The log's last position bounds the family's events (a count
            // would read the whole log once more).
            try projector.bulk(expected: Int(try log.lastPosition())) {
                try forEachOpened(keys: ReadOnlyKeys(keys: held), unopened: unopened, ownWithoutKey: ownWithoutKey, skip: { known.contains($0.id) }) { opened in
                    guard !isPastForkPoint(opened.env) else { return }
                    if opened.prepared.isLibraryType {
                        if let event = opened.prepared.libraryEvent, try learnKey(from: event, author: opened.env.author) { complete = false }
                        if case .library = try projector.apply(opened.env, prepared: opened.prepared) { complete = false }
                    } else if complete {
                        try projector.apply(opened.env, prepared: opened.prepared)
                    }
                }
            }
            unopenedInRebuild = unopened.value
            if keepStoresWhenDamaged, unopened.value > 0 {
                throw CLIError(.dataError, "\(unopened.value) event(s) in the log could not be opened although this device holds their key: their bytes are damaged. "
                               + "The stores were not rebuilt: they still hold what those events said, which stores rebuilt from this log would drop",
                               hint: "'famctl replay' names them. Save what the stores hold first: 'famctl export stores DIR'. Then restore \(Self.databaseFile) "
                                   + "from a backup of this home that holds them whole, or rebuild without them: 'famctl rebuild --drop-damaged'.")
            }
            // This device wrote those events with keys it held: a key table
            // that lacks one was altered or damaged, and stores built
            // without them would drop their records without a word (an
            // audit review: `rebuild` emptied the stores). Refused; the
            // stores stay as they were.
            if ownWithoutKey.value > 0 {
                throw CLIError(.dataError, "\(ownWithoutKey.value) of this device's own event(s) cannot be opened: the family's key they were sealed with is missing from this home's key table (\(Self.databaseFile) altered or damaged); the stores were not rebuilt",
                               hint: "Restore \(Self.databaseFile) from a backup of this home; 'famctl export stores DIR' writes the records the stores hold meanwhile.")
            }
        }
        needsRebuild = false
    }

    /// Stores that reflect events the log no longer holds (its last
    /// commits lost: a write-ahead log deleted, an older copy of the
    /// database put in place) are copied aside before the rebuild replaces
    /// them, and said: this device's own changes not yet synced are then
    /// in that copy alone (an audit review: the rebuild deleted the last
    /// copy of acknowledged records without a word). The other devices'
    /// events come back at the next sync (files that promise them are read
    /// again).
    private func keepStoresAheadOfLog() {
        do {
            let kept = try copyStoresAside(as: "ahead-of-log")
            // (No count: positions past the end are not events lost, the
            // others' interleaved with this device's.)
            Console.err("famctl: warning: the stores reflect events past the end of the log: its last commits are lost (a write-ahead log deleted, or an older copy of \(Self.databaseFile) put in place). "
                + "The stores are built again from the log; the events the shared folder holds (the other devices', and those this device published) come back at the next 'famctl sync', but this device's own changes not yet synced are gone from the log. "
                + "The former stores are kept in \(kept) (an SQLite file): after 'famctl sync', 'famctl export stores DIR --from \(ShellWord.quoted(kept))' writes the records they held that the home still does not hold, "
                + "for 'famctl import stores DIR', and names those that differ, to make again ('famctl status' says so until the file is removed).")
        } catch {
            Console.err("famctl: warning: the stores reflect events past the end of the log (its last commits are lost); they are built again from the log, and could not be kept aside (\(error)): "
                + "this device's own changes not yet synced are gone.")
        }
    }

    /// The stores' files a rebuild set aside in the home, by path: those of
    /// a log that lost its last commits (`ahead-of-log`), and those from
    /// before damaged events were dropped (`before-damaged-dropped`).
    func storesSetAside() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { $0.hasPrefix("projection.") && ($0.contains(".ahead-of-log-") || $0.contains(".before-damaged-dropped-")) }
            .sorted().map { path + "/" + $0 }
    }

    /// Copies the current stores into the home as
    /// `projection.N.sqlite.REASON-TIME` (an SQLite file, mode 0600), before
    /// a rebuild replaces them: their path.
    func copyStoresAside(as reason: String) throws -> String {
        let kept = "\(path)/\(projectionName).\(reason)-\(Int(Date().timeIntervalSince1970))"
        try log.database.execute("VACUUM \(Self.projectionSchema) INTO '\(kept.replacingOccurrences(of: "'", with: "''"))'")
        chmod(kept, 0o600)
        return kept
    }

    /// A home written by an older famctl, or interrupted before a rebuild
    /// (after a household event, or a fork found by an ingest), is rebuilt
    /// from its log on open.
    func rebuildProjectionsIfOutdated() throws {
        let (mark, last) = (try projector.mark(), try log.lastPosition())
        // Past the log's end because an event was taken out of the middle of
        // a chain (the one put in last, a gap filled before): the stores
        // hold what it said, and a sync reads it back; no commit was lost.
        // Rebuilt, they would drop it (a review).
        if mark > last, try projectionSettingsMatch(), try !log.chainGaps(in: family).isEmpty {
            try log.database.transaction(.immediate) {
                try projector.setMark(last)
                try log.noteChainGapsFound()
            }
            Console.err("famctl: warning: events were taken out of the middle of this log's chains (past its append-only rules); the stores keep what they said. "
                        + "'famctl sync' reads them back from the shared folder; do not rebuild meanwhile ('famctl replay' names them).")
            return
        }
        if try !projectionSettingsMatch() || mark < 0 || mark > last {
            if mark > last { keepStoresAheadOfLog() }
            try rebuildProjections(unlessRebuilt: true)
        } else if mark < last {
            // Its last commits lost (a power failure, or a full disk that let
            // the log's commit through but not the stores'): the events after
            // its mark are applied again.
            let (points, rebuild) = (forkPoints, needsRebuild)
            do {
                try log.database.transaction(.immediate) { try catchUpProjection() }
            } catch let e as SQLiteError where e.isOutOfSpace {
                // No room to write them: what only reads goes on with the
                // stores as they are, said, as on any full disk (the events
                // are in the log; the first command with room applies them).
                (forkPoints, needsRebuild) = (points, rebuild)
                try projector.refresh()
                guard !storesBehindSaid else { return }
                storesBehindSaid = true
                if !log.database.lockedExclusively {
                    Console.err("famctl: warning: the disk holding \(path) is full (or a file-size limit was reached): what only reads goes on, "
                        + "nothing can be written until space is freed.")
                }
                Console.err("famctl: note: the stores do not show the last \(last - mark) event(s) of the log yet (there is no room to write them); "
                    + "they are shown once space is freed and a command runs again.")
                return
            }
            if needsRebuild { try rebuildProjections(unlessRebuilt: true) }
        }
    }

    /// How many of the log's last events the stores do not show yet (a
    /// full disk kept them from being applied); 0 when they show them all.
    ///
    /// The log's file and the stores' commit one after the other, so a read
    /// may see a write's log commit and not yet its stores' (a review: a
    /// replay beside a loop of `record add` said the stores were behind,
    /// on a disk with room). A lag seen is read again under the write lock,
    /// where no write is halfway; inside a transaction, as it stands.
    func storesBehind() throws -> Int64 {
        func read() throws -> Int64 { max(0, try log.lastPosition() - projector.mark()) }
        guard log.database.isAutocommit else { return try read() }
        guard try log.database.transaction(.deferred, read) > 0 else { return 0 }
        return try log.database.transaction(.immediate, read)
    }

    /// Fails (73) when the stores are behind the log, after one more try
    /// to bring them up (another process may just be applying what it
    /// wrote): for a command whose answer needs them whole (an export),
    /// `what` saying what it would miss (a review: an export left out a
    /// record `record add` had acknowledged, and said nothing).
    func checkStoresCaughtUp(_ what: String) throws {
        guard try storesBehind() > 0 else { return }
        try rebuildProjectionsIfOutdated()
        let behind = try storesBehind()
        guard behind > 0 else { return }
        throw CLIError(.cantCreate, "the stores do not show the last \(behind) event(s) of the log yet (there is no room to write them): \(what)",
                       hint: "Free some space on the disk holding \(path), then run the command again: the first command with room applies them.")
    }

    /// For a record or photo not found: when the stores are behind the
    /// log, it may be among the events they do not show yet (a review: an
    /// id `record add` had just printed was said to be no record, and would
    /// have been entered again). Exit 73.
    func notShownYet(_ what: String) -> CLIError? {
        guard let behind = try? storesBehind(), behind > 0 else { return nil }
        return CLIError(.cantCreate, "\(what) is not in the stores, which do not show the last \(behind) event(s) of the log yet (there is no room to write them): it may be among them",
                        hint: "Free some space on the disk holding \(path), then run the command again: the first command with room applies them. Do not enter it again meanwhile.")
    }

    /// Whether the settings say the current projection was built with this
    /// famctl's layout, not marked stale, and with the log's fork points.
    func projectionSettingsMatch() throws -> Bool {
        try state.get(.projectionVersion) == String(Projector.schemaVersion) && (try state.get(.projectionForks) ?? "") == forkPointsText
            && projectionKeysMatch()
    }

    /// Whether the projection opened events with every key this device holds
    /// of its family (``Projector/storedKeyEpochs()``). A key held beyond them (learned
    /// by this process or another, from a key event or a restored backup) may
    /// open events that were skipped for want of it.
    func projectionKeysMatch() throws -> Bool {
        try state.keyring.epochs(family: family).isSubset(of: projector.storedKeyEpochs())
    }

    /// Appends the events `make` writes from what `read` returns, and makes
    /// them again should `read` return something else (`same` says) once
    /// the write lock is held: another process or a sync changed it between
    /// the read and the lock. At most ``writeAttempts`` reads, then exit 75
    /// (`changing` names what kept changing), nothing written.
    /// - Parameter check: run under the write lock too, after the comparison.
    @discardableResult
    func appendAsRead<Read>(_ read: () throws -> Read, same: (Read, Read) -> Bool, changing: String,
                            check: () throws -> Void = {}, _ make: (Read) throws -> [EventBody]) throws -> [SyncEnvelope] {
        try withoutActuallyEscaping(check) { check in
            try appendAsRead(read, same: same, changing: changing, checked: { (try make($0), check) })
        }
    }

    /// ``appendAsRead(_:same:changing:check:_:)`` whose check under the
    /// write lock is made from what was read too (`make` returns it with
    /// the bodies): a change validated against the record it was made from.
    func appendAsRead<Read>(_ read: () throws -> Read, same: (Read, Read) -> Bool, changing: String,
                            checked make: (Read) throws -> (bodies: [EventBody], check: () throws -> Void)) throws -> [SyncEnvelope] {
        for _ in 0..<Self.writeAttempts {
            let seen = try read()
            let (bodies, check) = try make(seen)
            do {
                return try append(bodies) {
                    try checkCanWrite()
                    guard same(try read(), seen) else { throw ReadMoved() }
                    try check()
                }
            } catch is ReadMoved {
                continue
            }
        }
        throw CLIError(.tempFail, "\(changing) kept changing while this was written (\(Self.writeAttempts) tries); nothing was written",
                       hint: "Run the command again.")
    }

    /// How many times ``appendAsRead(_:same:changing:check:_:)`` reads what others keep changing.
    static let writeAttempts = 50

    /// What ``appendAsRead(_:same:changing:check:_:)`` read changed before the write lock.
    private struct ReadMoved: Error {}

    /// The first change the family does not count (a rejected event) whose
    /// body `matches`, with its author and why: the rejected events' bodies
    /// read in turn, the first 1 000 of them at most.
    func firstUncountedChange(where matches: (SyncEnvelope, EventBody) -> Bool) throws -> (author: DeviceID, reason: String)? {
        for r in try projector.rejections().prefix(1_000) {
            guard let seq = r.seq, let env = try? log.chain(of: r.author, in: family, seqs: seq...seq).first,
                  case .body(let body)? = try? openBody(env), matches(env, body) else { continue }
            return (r.author, r.reason)
        }
        return nil
    }

    /// Whether this device is in a family it joined (not created) without
    /// an event of its own there: the join, always a device's first event
    /// in the family, is not written (an `accept` killed or failed midway).
    /// Its records from before stay out of every view until it is.
    var joinIsUnfinished: Bool {
        guard let owner = knownOwner, owner != deviceID else { return false }
        return ((try? log.head(of: deviceID, in: family).seq) ?? 1) == 0
    }

    /// Refuses a change while ``joinIsUnfinished``, saying what to do.
    func checkJoinFinished() throws {
        if joinIsUnfinished {
            throw CLIError.data("this device has not finished joining the family",
                                hint: "Run the same 'famctl accept' again: it writes the join (and the records it carries).")
        }
    }

    /// What a listing says on stderr while ``joinIsUnfinished``: the
    /// records this device made before joining are not shown yet.
    var unfinishedJoinNote: String? {
        joinIsUnfinished ? "famctl: note: this device has not finished joining the family (its 'famctl accept' stopped before writing the join): "
            + "the records it made before are not shown until it does; run the same 'famctl accept' again." : nil
    }

    /// Refuses a change this device is not allowed to make (a viewer's, a
    /// removed device's), before it is written and then rejected everywhere.
    /// - Parameter quietly: without the warning of an invitation not
    ///   arrived yet (an early check, before the one under the write lock).
    func checkCanWrite(quietly: Bool = false) throws {
        try checkJoinFinished()
        let h = projector.household
        if !h.isPrivate, h.owner == deviceID || h.members[deviceID] != nil {
            let next = try log.head(of: deviceID, in: family).seq + 1
            if isRemoved {
                // Removed: whatever it writes from now on is rejected everywhere.
                throw CLIError.data("this device was removed from the family: it cannot change the family's records any more; nothing was written",
                                    hint: Self.joinAgainHint)
            }
            if let why = h.writeVerdict(author: deviceID, seq: next, version: Version(hlc: HLC(rawValue: .max), author: deviceID), needsWrite: true) {
                let viewer = h.members[deviceID].map { !$0.role(at: Version(hlc: HLC(rawValue: .max), author: deviceID)).canWrite } ?? false
                throw CLIError.data("this device cannot change the family's records: \(why); nothing was written",
                                    hint: viewer ? "A viewer reads the family's records; the owner can make it a member ('famctl member role MEMBER member'), and 'famctl sync' brings that change here once it is made." : nil)
            }
        } else if let refused = refusedJoin {
            // Its join is in its own log, and the family's events refuse it:
            // everything it wrote would be rejected everywhere.
            throw CLIError.data("this device cannot change the family's records: it is not a member, its join was refused (\(refused.reason))",
                                hint: Self.joinAgainHint)
        } else if try state.get(.joinedRole) == Role.viewer.rawValue {
            // Joined, but the events that confirm it have not all arrived: the invitation decides.
            throw CLIError.data("this device joined as a viewer: it reads the family's records but cannot change them")
        } else if invitationNeverMade {
            throw CLIError.data("this device cannot change the family's records: " + Self.invitationNotMadeText + "; nothing was written", hint: Self.joinAgainHint)
        } else if let forger = invitationMadeByNonOwner {
            throw CLIError.data("this device cannot change the family's records: the invitation it joined with was made by \(forger.short), not the family's owner, and never counts; nothing was written",
                                hint: Self.joinAgainHint)
        } else if awaitsInvitation, !quietly {
            Console.err("famctl: warning: " + Self.awaitingInvitation + "; what this device records counts, and is listed, once it arrives")
        }
    }

    /// The device that made the invitation this device joined with, when
    /// the family's events hold that invitation made by someone other than
    /// the owner (refused: "only the owner may invite"): the join never
    /// counts, however long it waits. `nil` otherwise.
    var invitationMadeByNonOwner: DeviceID? {
        let h = projector.household
        guard !h.isPrivate, h.members[deviceID] == nil, let join = h.refusedJoins[deviceID] else { return nil }
        return inviteMadeByNonOwner(join.invite)
    }

    /// Who made invitation `invite`, when the family's events hold it made
    /// by someone other than the owner (an `invite.create` the household
    /// refused) and not by the owner; `nil` otherwise.
    func inviteMadeByNonOwner(_ invite: InviteID) -> DeviceID? {
        let h = projector.household
        guard h.invites[invite] == nil else { return nil }
        for id in h.rejected.keys {
            guard let env = try? log.envelope(id), case .body(let body)? = try? openBody(env),
                  case .inviteCreate(let made, _, _, _, _)? = (try? LibraryEvent(body)) ?? nil, made == invite else { continue }
            return env.author
        }
        return nil
    }

    /// Whether the family's events are here but not the invitation this
    /// device's join names: the owner made it and has not shared it yet.
    /// The join is judged (and this device's changes with it) once it arrives.
    var awaitsInvitation: Bool {
        let h = projector.household
        guard !h.isPrivate, h.owner != deviceID, h.members[deviceID] == nil, let join = h.refusedJoins[deviceID] else { return false }
        return h.invites[join.invite] == nil && invitationMadeByNonOwner == nil && !invitationNeverMade
    }

    /// Whether the invitation this device joined with is in none of the
    /// owner's events here although they reach past its join: the owner's
    /// chain arrives in order, and the invitation comes in it before
    /// anything the owner wrote later, so the code's invitation id was
    /// altered on its way (a review: such a device waited for its
    /// invitation for good, while the owner's `status` already denied the
    /// join). The join never counts.
    var invitationNeverMade: Bool {
        let h = projector.household
        // Compared with the invitation's own clock (the owner's, from the
        // code), not the join's (this device's): an owner's clock ahead
        // would otherwise make its earlier events look later (a code review).
        guard !h.isPrivate, let owner = h.owner, owner != deviceID, h.members[deviceID] == nil, let join = h.refusedJoins[deviceID],
              h.invites[join.invite] == nil, inviteMadeByNonOwner(join.invite) == nil,
              let issued = (try? state.get(.inviteIssued)).flatMap({ $0 }).flatMap(UInt64.init),
              let head = try? log.head(of: owner, in: family) else { return false }
        return head.hlc > HLC(rawValue: issued)
    }

    /// What `status` and the commands that write say of ``invitationNeverMade``.
    static let invitationNotMadeText = "the invitation it joined with is in none of the owner's events, which reach past its join "
        + "(its code's invitation id was altered on its way), and the join never counts"

    /// What `status` and the commands that write say while ``awaitsInvitation``.
    static let awaitingInvitation = "the invitation this device joined with has not reached it yet (the owner's 'famctl sync' shares it, and the shared folder's sync program, if one copies it, delivers it; this device's next sync then brings it)"

    /// Why this device's join did not count, once the family's events held
    /// decide it (``Household/refusedJoin(of:)``); `nil` for a member, and
    /// while the owner's events that judge the join have not arrived.
    var refusedJoin: Household.RefusedJoin? { projector.household.refusedJoin(of: deviceID) }

    /// A removed device's hint for a record or photo it does not hold.
    static let removedReadsNothingNew = "this device was removed from the family: what the family writes under the key its removal made, or a later one, is sealed under keys it was not given, and never reaches it."

    /// Whether the owner's removal of this device has arrived: nothing it
    /// writes from now on counts, and later keys are not sealed to it.
    var isRemoved: Bool { projector.household.members[deviceID].map { !$0.isActive } ?? false }

    /// What `sync` and `status` say of this device's own chain forked at `point`.
    static func ownChainForked(at point: UInt64) -> String {
        "this device's own chain is forked at seq \(point) (its key signed two histories: its home was copied, or restored from a backup and written on): "
            + "its events from there on count on no device, and it cannot write any more"
    }

    /// What a device that can no longer write in its family (forked) can do.
    var writeAgainHint: String {
        isOwner ? "This device is the family's owner, whom nobody can invite or replace: members go on recording, but nobody can invite or remove any more. "
                    + "To go on, " + Self.ownerStartsAgain + "."
                : "To write again, ask the owner for an invitation and accept it in a new home: 'famctl accept CODE --name NAME --home NEWDIR'."
    }

    /// How a device that cannot go on with its chain takes part again, as
    /// the end of a hint: a member joins again; the owner, whom nobody can
    /// invite (a review: the owner was told to ask the owner), starts a
    /// new family with its records.
    var joinAgainClause: String {
        isOwner ? Self.ownerStartsAgain + " (this device is the family's owner, whom nobody can invite)"
                : "join again as a new device from a new home ('famctl accept CODE --name NAME --home NEWDIR', with an invitation from the owner)"
    }

    static let ownerStartsAgain = "start a new family with this home's records: 'famctl export stores DIR' here, then in a new home 'famctl init --name NAME', "
        + "'famctl family create --name FAMILY --dir FOLDER' and 'famctl import stores DIR', and invite the others into it"

    /// How many days none of the family's other devices' events have
    /// reached this device although it has written well after the last
    /// one arrived: a family that moved its shared folder or peer
    /// (`settings sync` on its other devices) leaves a device still set to
    /// the old one syncing without an error, its changes read by nobody
    /// (a review). `nil` while they arrive, for a family of one device,
    /// and before anything of theirs arrived.
    func familySilence(now: Date = Date()) throws -> (days: Int, lastArrived: Date)? {
        let h = projector.household
        guard !h.isPrivate else { return nil }
        // The devices that write: a viewer, or a member that has written
        // nothing past its join, sends nothing however long it reads (a
        // code review: an owner with a viewer alone was warned for good).
        var others = Set(h.members.values.filter { $0.isActive && $0.role == .member }.map(\.device))
        if let owner = h.owner { others.insert(owner) }
        others.remove(deviceID)
        let heads = try log.heads(in: family)
        var latest: Date?
        for author in others {
            guard let head = heads[author], head.seq > 1, let at = try log.receivedAt(of: author, seq: head.seq, in: family) else { continue }
            latest = max(latest ?? at, at)
        }
        guard let latest, let own = heads[deviceID], own.hlc.date > latest.addingTimeInterval(86_400),
              now.timeIntervalSince(latest) >= Self.familySilenceLimit else { return nil }
        return (Int(now.timeIntervalSince(latest) / 86_400), latest)
    }

    /// How long a family may stay silent before ``familySilence(now:)`` says so.
    static let familySilenceLimit: TimeInterval = 14 * 86_400

    /// What `sync` and `status` say of ``familySilence(now:)``.
    func familySilenceText(_ silence: (days: Int, lastArrived: Date)) -> String {
        let place = switch Location.stored(in: self) {
        case .directory(let dir): "the shared folder \(dir)"
        case .peer(let url): "the peer \(url)"
        case .none: "no shared folder or peer"
        }
        return "none of the family's other devices' events have reached this device for \(silence.days) days (the last arrived \(TimeText.format(silence.lastArrived))), "
            + "though it has written since: if the family moved its shared folder or peer, this device still syncs with \(place), where nobody reads what it writes; "
            + "'famctl settings sync --dir PATH' (or --peer URL) points it at the family's new one."
    }

    /// Whether this device is its family's owner.
    var isOwner: Bool { projector.household.owner == deviceID }

    /// What a device whose join was refused can do.
    static let joinAgainHint = "Ask the family's owner for a new invitation and accept it in a new home: "
        + "'famctl accept CODE --name NAME --home NEWDIR' (this home's join is written and cannot be replaced). "
        + "What this device recorded before it joined: 'famctl export stores DIR --before-joining' here, then 'famctl import stores DIR --home NEWDIR'. "
        + "Its changes the family did not count are in no export: 'famctl status' counts them, 'famctl replay --record ID' shows what each wrote; write them again in the new home."

    /// Whether the view shows the whole family's records (default) or only this device's.
    var includeShared: Bool { (try? state.get(.includeShared)) != "off" }
}
