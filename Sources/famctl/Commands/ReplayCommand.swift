import Envelope
import EventLog
import Foundation
import Projections

/// `famctl replay`
enum ReplayCommand: Command {
    static let spec = CommandSpec(
        path: ["replay"],
        abstract: "Audit the whole log: re-verify every event's bytes, id, signature and chain, and open its body.",
        discussion: """
            Every verified event is applied to a scratch projection, whose digest must
            equal the live one. Exits 0 when everything verifies and agrees, 3 when
            anything does not (each failure is named by its event id). Forks, rejected
            events and far-future clocks are reported; they are findings about other
            devices, not damage to this log.
            """,
        options: [
            .value("--until", "TIME", "Show the state as of this moment, a time with its offset or a date (its midnight here): events with a clock after it are left out."),
            .value("--record", "ID", "Print that record's full trail: every version, who, when, which fields (the id, or 6 hex digits or more of its start or end)."),
        ])

    /// What is wrong with the live projection's changes not counted (the
    /// events it holds as rejected) against those the log makes, or `nil`
    /// when they are the same events: a row added, removed or altered in
    /// the file would name an honest member's change as denied, or hide a
    /// forged one (a review).
    static func rejectionsMismatch(_ home: Home, rebuilt: [Projector.Rejection]) -> String? {
        let live: [Projector.Rejection]
        do { live = try home.projector.rejections() } catch { return "its changes not counted cannot be read (\(error))" }
        let (held, made) = (Set(live.map(\.event)), Set(rebuilt.map(\.event)))
        guard held != made else { return nil }
        let extra = held.subtracting(made).count, missing = made.subtracting(held).count
        return "it holds \(extra) change(s) as not counted that the log does not make so, and misses \(missing) the log makes so"
    }

    /// The live projection's digest, and the digest of a scratch projection
    /// rebuilt from the verified events it reflects: as the live projection
    /// is built, household events first, then the rest (a forked author's
    /// only up to its fork point), leaving out `failed` ones and, with
    /// `until`, those after it.
    ///
    /// Another process (a `sync --watch`) may write the log and the
    /// projection while this one reads them, or rebuild the projection into
    /// a new file: the live state is read in one read transaction (the
    /// current file, its household folded again, its mark: the log position
    /// it reflects), the rebuild takes the events up to that mark, and a
    /// comparison that differs while the log moved, or that read a
    /// projection owing a rebuild, is made again (a few times, a fifth of a
    /// second apart) before it counts.
    /// - Returns: also how many of the log's last events the live stores do
    ///   not show yet (`behind`: no room to write them, a full disk); the
    ///   state is rebuilt up to the same place, so it compares the rest.
    static func compare(_ home: Home, failed: Set<EventID>, until: HLC?) throws -> (ScratchProjection, live: String, rebuilt: String, behind: Int64) {
        var attempt = 0
        while true {
            attempt += 1
            if try home.state.get(.projectionFile) != home.projectionName { try home.followCurrentProjection() }
            // Events in the log that the stores do not show (another famctl
            // stopped between its two commits while this one ran, or a full
            // disk): applied first, as every command does when it opens the
            // home (a review: a sync killed beside a replay was reported as
            // a full disk).
            if until == nil, try home.storesBehind() > 0 { try? home.rebuildProjectionsIfOutdated() }
            let live: String, mark: Int64, last: Int64, current: Bool
            do {
                (live, mark, last, current) = try home.log.database.transaction(.deferred) { () throws -> (String, Int64, Int64, Bool) in
                    // The projection file first: a writer commits the log's file before it.
                    try home.projector.refresh()
                    let digest = Hex.encode(try home.projector.digest())
                    let mark = try home.projector.mark()
                    let current = try home.state.get(.projectionFile) == home.projectionName && (try home.projectionSettingsMatch())
                    return (digest, mark, try home.log.lastPosition(), current)
                }
            } catch let e as SQLiteError where e.code == .corrupt || e.code == .notADatabase {
                // A damaged page of the live projection that its digest reads:
                // a finding, reported with the audit (its file's check says
                // where), not the end of the replay. The state is rebuilt from
                // the whole log to show what it should hold.
                let end = try home.log.lastPosition()
                (live, mark, last, current) = ("unreadable (\(e.message))", end, end, true)
            }
            // The hint: the live projection's household events, and the
            // events it rejected (among them household events of a malformed
            // body, which never reach the household), read on their own
            // (any moment will do). None when they cannot be read (a damaged
            // page of the file, which would also fail the read transaction
            // above at its commit): the damage is the finding, reported
            // below, and the scratch is made without a hint.
            let hint = try? home.projector.libraryEventIDs().union(home.projector.rejections().map(\.event))
            // The live projection's household events say which events to
            // open first (a hint: see `ScratchProjection.rebuild`).
            var (scratch, made) = try ScratchProjection.built(family: home.family, home: home) {
                try $0.rebuild(from: home, upTo: mark, leavingOut: failed, until: until, householdHint: hint)
            }
            if !made {
                // Without a hint the first pass opens every event: the second
                // cannot meet a household event it did not apply.
                (scratch, made) = try ScratchProjection.built(family: home.family, home: home, inMemory: scratch.directory == nil) {
                    try $0.rebuild(from: home, upTo: mark, leavingOut: failed, until: until, householdHint: nil)
                }
                guard made else {
                    throw CLIError(.failure, "replay could not rebuild the state from the log: a household event appeared between its two passes over the log",
                                   hint: "Run 'famctl replay' again.")
                }
            }
            let rebuilt = Hex.encode(try scratch.projector.digest())
            let lastNow = try home.log.lastPosition(), fileNow = try home.state.get(.projectionFile)
            let moved = !current || lastNow != last || fileNow != home.projectionName
            if until != nil || rebuilt == live || !moved || attempt >= compareAttempts { return (scratch, live, rebuilt, current ? max(0, last - mark) : 0) }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }

    /// How many times ``compare(_:failed:until:)`` reads a moving home at most.
    static let compareAttempts = 10

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        // A body that does not open is the author's doing, never damage here:
        // the signature already proved these are the bytes the author wrote.
        var until: HLC?, untilMoment: Date?
        if let u = inv.value("--until") {
            let d = try TimeText.parse(u, option: "--until")
            until = HLC(milliseconds: HLC.milliseconds(of: d), counter: .max)
            untilMoment = d
        }
        // The whole id, or a part (6 hex digits or more of its start or
        // end) matched against every event's record, counted or not: the
        // audit looks for records the family does not count too, which the
        // stores do not hold (a review: a part two ids shared picked the
        // counted one without a word).
        let wanted = try inv.value("--record").map { text throws(CLIError) -> RecordInput.IDPart in
            if let u = UUID(text: text) { return RecordInput.IDPart(whole: u) }
            guard let hex = RecordInput.idDigits(text), let part = RecordInput.IDPart(hex: hex) else {
                throw .data("--record '\(text)' is not a record id", hint: "Give the record's id, or at least 6 hex digits of its start or its end, as 'famctl record list' or the event that names it shows it.")
            }
            return part
        }

        // 1. Verify every chain of the log, and what each body holds.
        var findings = BodyFindings()
        // With --record: every event of the family that names the record, projected or not.
        var naming: [RecordEventSeen] = []
        // The log is read once, front to back: a small page cache does (as a
        // rebuild's), leaving the memory to the scratch projection's.
        // So are the live projection's rows, for its digest and its copied columns.
        try home.log.database.execute("PRAGMA main.cache_size=-4096; PRAGMA \(Home.projectionSchema).cache_size=-4096")
        let report = try home.log.audit(family: nil, localAuthor: home.deviceID) { env in
            switch try home.openBody(env) {
            case .body(let body):
                if let wanted, env.family == home.family, let r = try? RecordEvent(body), wanted.matches(r.record) {
                    naming.append(RecordEventSeen(id: env.id, author: env.author, hlc: env.hlc, type: body.type, seq: env.seq, change: r))
                }
                if body.type == PhotoEvent.Kind.put.rawValue {
                    findings.photos += 1
                    if let why = PhotoEvent.problem(body.object) { findings.badPhotos.append((env.id, why)) }
                }
            case .noKey(let epoch):
                findings.noKey += 1
                findings.noKeyBy[env.author, default: (0, [])].count += 1
                findings.noKeyBy[env.author]!.epochs.insert(epoch)
            case .failed(let e): findings.unreadable.append((env.id, e))
            }
            return nil
        }
        let recordID = try wanted.map { w -> UUID in
            if let whole = w.whole { return whole }
            let ids = Set(naming.compactMap(\.change?.record)).sorted { $0.lowercasedText < $1.lowercasedText }
            guard ids.count == 1 else {
                if ids.isEmpty { throw CLIError(.noInput, "no event of the family names a record whose id starts or ends with \(w.hex)", hint: "'famctl record list --include-deleted' shows the records with their ids.") }
                throw CLIError.data("\(ids.count) records' ids start or end with \(w.hex): " + ids.prefix(6).map(\.lowercasedText).joined(separator: ", ") + (ids.count > 6 ? ", …" : ""),
                                    hint: "Give more of the id, or all of it.")
            }
            return ids[0]
        }
        // Events missing from the middle of a chain: the next sync looks for
        // them in the shared folder (noted without waiting for another
        // process's lock: a replay never waits to write; nor on a read-only file).
        // (Those of the family's chains only: a sync reads no other's. A
        // private chain kept after joining has no copy to read back.)
        let gapsSyncFills = report.failures.contains(where: \.gap) && Self.syncFillsGaps(home)
        if gapsSyncFills { try? home.log.database.withoutWaiting { try home.log.noteChainGapsFound() } }
        // 2. Rebuild the family's state from the verified events alone, and
        //    compare it with the live projection.
        let failed = Set(report.failures.compactMap(\.id))
        var (scratch, live, rebuilt, behind) = try compare(home, failed: failed, until: until)
        // A lag seen there may be a write's commit halfway (its log's file
        // committed, its stores' not yet): read again, under the write lock.
        // The comparison up to the stores' mark holds either way.
        if behind > 0 { behind = min(behind, try home.storesBehind()) }
        // The stores behind the log (no room to write its last events): the
        // audit of the log stands, the comparison leaves those out, and the
        // result cannot be called OK (a review: it was, with a digest that
        // left out a record `record add` had acknowledged).
        let storesBehind = behind > 0
            ? CLIError(.cantCreate, "the stores do not show the last \(behind) event(s) of the log (there was no room to write them, or another famctl holds the stores): the state was compared up to the event before them, not with them",
                       hint: "Free some space on the disk holding \(home.path) if it is full, then run 'famctl replay' again: the first command with room applies them.")
            : nil
        let denied = try scratch.projector.rejections()
        // Pages the digest does not read (an index) can be damaged too: the
        // file is checked as SQLite checks it.
        let projectionFile = home.path + "/" + home.projectionName
        // So can the columns copied out of each record's fields for lists
        // (its moment, its store), which the digest does not cover.
        // (Unreadable when the live projection is: its damage is the finding.)
        let copies = until == nil ? (try? home.projector.copiedColumnsMismatch()) ?? nil : nil
        // And the changes it holds as not counted (what `status` lists as
        // denied), which the digest does not cover either.
        let rejections = until == nil ? Self.rejectionsMismatch(home, rebuilt: denied) : nil
        let damage = until == nil ? (Self.projectionFileDamage(home) ?? copies ?? rejections).map { (file: projectionFile, finding: $0) } : nil
        let agrees = until != nil || (rebuilt == live && damage == nil)
        // The log's own file, as SQLite checks it: a damaged page the audit
        // does not read (an index) fails the next command that does.
        let logFile = home.path + "/" + Home.databaseFile
        let logDamage = until == nil && recordID == nil && !home.log.database.lockedExclusively ? Home.damage(of: logFile) : nil

        if let recordID {
            let reasons = Dictionary(denied.map { ($0.event, $0.reason) }, uniquingKeysWith: { a, _ in a })
            // Past its author's fork point: in the log, in no view (a review:
            // a forked copy's own record was said to be named by no event).
            let forks = try home.log.forkPoints(in: home.family)
            let refused = naming.compactMap { n -> (event: RecordEventSeen, reason: String)? in
                if let reason = reasons[n.id] { return (n, reason) }
                if let point = forks[n.author], n.seq >= point {
                    return (n, "past its author's fork point (seq \(point)): its key signed two histories, and nothing of it from there on counts")
                }
                return nil
            }.sorted { $0.event.hlc < $1.event.hlc }
            // The state rebuilt stops where the stores do: its trail could
            // miss the record's last events (a review: the record `record
            // add` had acknowledged was said to be named by no event).
            if let storesBehind { throw storesBehind }
            try printTrail(recordID, projector: scratch.projector, home: home, refused: refused, json: inv.json, asOf: inv.value("--until"))
            if !report.isIntact || !agrees { throw failure(report, agrees: agrees, damage: damage, gapsSyncFills: gapsSyncFills) }
            return
        }
        if until != nil {
            let records = try scratch.projector.records()
            if inv.json {
                Console.json(["ok": report.isIntact, "until": inv.value("--until")!, "untilMoment": untilMoment.map(TimeText.format) ?? NSNull(),
                              "digest": rebuilt, "records": records.map(RecordView.json)] as [String: Any])
            } else {
                Console.out("state as of \(inv.value("--until")!): \(records.count) live records, digest \(rebuilt)")
                let labels = RecordView.focusLabels(try scratch.projector.subjects())
                for r in records { Console.out("  " + RecordView.line(r, labels: labels)) }
            }
            if !report.isIntact { throw failure(report, agrees: true, gapsSyncFills: gapsSyncFills) }
            if let storesBehind { throw storesBehind }
            return
        }
        if inv.json {
            Console.json([
                "ok": report.isIntact && agrees && logDamage == nil && behind == 0, "storesBehind": behind, "logIntact": report.isIntact, "events": report.eventCount, "pending": report.pending,
                "authors": report.authors.map { ["author": $0.author.hex, "events": $0.events] as [String: Any] },
                "failures": report.failures.map { ["id": $0.id?.hex ?? NSNull(), "author": $0.author?.hex ?? NSNull(), "seq": $0.seq.map { Int($0) as Any } ?? NSNull(), "reason": $0.reason] as [String: Any] },
                "forks": report.forks.map { ["author": $0.author.hex, "seq": $0.seq] as [String: Any] },
                "rejected": report.rejected.map { ["id": $0.id.hex, "reason": $0.reason] as [String: Any] },
                "farFuture": report.farFuture.map { $0.id.hex },
                "undecryptable": findings.noKey,
                "undecryptableBy": findings.noKeyBy.sorted(by: { $0.key.hex < $1.key.hex }).map {
                    ["author": $0.key.hex, "events": $0.value.count, "epochs": $0.value.epochs.sorted().map(Int.init)] as [String: Any] },
                "photosChecked": findings.photos,
                "malformedPhotos": findings.badPhotos.map { ["id": $0.0.hex, "reason": $0.1] },
                "digest": live, "rebuiltDigest": rebuilt, "digestsAgree": rebuilt == live, "projectionDamage": damage?.finding ?? NSNull(),
                "logFileDamage": logDamage ?? NSNull(),
                "rulesRemovedFoundAt": rulesRemovedFoundAt(home),
                "unauthorized": denied.map { ["id": $0.event.hex, "author": $0.author.hex, "reason": $0.reason] },
                "unreadable": findings.unreadable.map { ["id": $0.0.hex, "reason": $0.1.description] },
            ] as [String: Any])
        } else {
            print(report, home: home, findings: findings, live: live, rebuilt: rebuilt, denied: denied, damage: damage, logDamage: logDamage.map { (logFile, $0) }, behind: behind)
        }
        if !report.isIntact || !agrees { throw failure(report, agrees: agrees, damage: damage, publishedPastLog: try? home.publishedPastLog(), gapsSyncFills: gapsSyncFills) }
        if let logDamage {
            throw CLIError(.integrity, "this device's log file \(logFile) is damaged (\(logDamage))",
                           hint: "Its events verify as far as they can be read. " + Self.logDamageHint)
        }
        if let storesBehind { throw storesBehind }
    }

    /// What to do about a damaged page of the log's file (`replay`, `status`).
    static let logDamageHint = "Restore \(Home.databaseFile) from a backup made before the damage, "
        + "or join the family again as a new device from a new home ('famctl accept CODE --name NAME --home NEWDIR', with an invitation from the owner)."

    /// What SQLite's `quick_check` finds wrong with the projection file the
    /// comparison read, or `nil`. Checked on a connection of its own (what
    /// is on disk, not pages this one holds), unless this process holds the
    /// home exclusively; but when another process has rebuilt the stores
    /// into a new file meanwhile and removed this one (a review found
    /// replay failing with "damaged (it cannot be opened)" whenever a
    /// `rebuild` ran during it), on this connection, which still has it open.
    static func projectionFileDamage(_ home: Home) -> String? {
        if home.log.database.lockedExclusively || home.log.database.attachedExclusively { return home.projectionDamage() }
        let file = home.path + "/" + home.projectionName
        guard let finding = Home.damage(of: file) else { return nil }
        let moved = (try? home.state.get(.projectionFile)) != home.projectionName || !FileManager.default.fileExists(atPath: file)
        return moved ? home.projectionDamage() : finding
    }

    /// Whether the family's chains have gaps that a sync looks for: the
    /// home syncs somewhere, and its family's chains (a sync reads no
    /// other) miss events.
    static func syncFillsGaps(_ home: Home) -> Bool {
        if case .none = Location.stored(in: home) { return false }
        return !((try? home.log.fillableChainGaps(in: home.family).isEmpty) ?? true)
    }

    static func failure(_ report: AuditReport, agrees: Bool, damage: (file: String, finding: String)? = nil, publishedPastLog: (published: UInt64, head: UInt64)? = nil,
                        gapsSyncFills: Bool = false) -> CLIError {
        // Only events missing from the middle of the family's chains: the
        // copies in the shared folder fill them.
        if gapsSyncFills, !report.failures.isEmpty, report.failures.allSatisfy(\.gap) {
            return CLIError(.integrity, "replay found \(report.failures.count) integrity failure\(report.failures.count == 1 ? "" : "s"): events missing from the middle of their chains",
                            hint: "Events were taken out of the log; the stores still hold what they said. Run 'famctl sync': it reads them back from the files in the shared folder that hold them, puts each back in its place, and makes the stores again. "
                                + "Do not rebuild first: a rebuild drops what they said. Should the shared folder no longer hold them (sync says how many are still missing), restore this home's \(Home.databaseFile) from a backup made before they were taken out.")
        }
        if !report.isIntact {
            return CLIError(.integrity, "replay found \(report.failures.count) integrity failure\(report.failures.count == 1 ? "" : "s")",
                            hint: "The events named above do not verify, or are missing from their chains; the log has been altered or damaged. 'famctl rebuild' does not mend it (a rebuild trusts the log). "
                                + "Restore this home's \(Home.databaseFile) from a backup made before the damage; or join the family again as a new device from a new home "
                                + "('famctl accept CODE --name NAME --home NEWDIR', with an invitation from the owner): the other devices' copies of the events are whole.")
        }
        if let damage {
            return CLIError(.integrity, "the live projection's file \(damage.file) is damaged (\(damage.finding))",
                            hint: "The log itself verifies. 'famctl rebuild' builds the stores again from the log.")
        }
        // This device's own published events taken out of its log: the
        // stores still hold what they said, and a sync brings them back (a
        // review over WebDAV: the hint said to rebuild, which drops them).
        if let lost = publishedPastLog {
            return CLIError(.integrity, "the live projection differs from the state the log rebuilds to: this device published its events up to seq \(lost.published), but its log ends at seq \(lost.head)",
                            hint: "Events were taken out of the log; the stores still hold what they said. Run 'famctl sync': it reads them back from this device's folder. Do not rebuild first: a rebuild drops what they said.")
        }
        return CLIError(.integrity, "the live projection differs from the state the log rebuilds to",
                        hint: "The projection tables were altered or damaged; the log itself verifies. 'famctl rebuild' rebuilds them from the log.")
    }

    /// The record's trail: every version that counts, then the events
    /// naming it that the household rules reject (a removed device's, a
    /// viewer's…), kept in the log but in no version of it.
    /// - Parameter asOf: `--until`'s time, when the trail stops there: its
    ///   last state is then the record as of that time, not now.
    static func printTrail(_ id: UUID, projector: Projector, home: Home,
                           refused: [(event: RecordEventSeen, reason: String)], json: Bool, asOf: String? = nil) throws {
        let history = try projector.history(id)
        let state = history.isEmpty ? nil : try projector.record(id)
        guard state != nil || !refused.isEmpty else {
            if let asOf {
                throw CLIError(.noInput, "no event of the family up to \(asOf) names record \(id.lowercasedText)",
                               hint: "Its events may all be later: 'famctl replay --record \(id.lowercasedText)' without --until shows them.")
            }
            throw CLIError(.noInput, "no event of the family names record \(id.lowercasedText)",
                           hint: "'famctl log' lists every event of the log, those this device wrote before it joined the family too "
                               + "(a private chain of its own, verified by replay but in no view).")
        }
        let refusedJSON = refused.map { n, reason in
            // The time and the counter apart, as every other `hlc` of famctl's JSON.
            ["event": n.id.hex, "author": n.author.hex, "type": n.type, "hlc": TimeText.format(n.hlc.date), "counter": Int(n.hlc.counter),
             "reason": reason, "store": n.change?.store ?? NSNull(), "focus": n.change?.focus ?? NSNull(), "at": n.change?.at ?? NSNull(),
             "fields": (n.change?.fields ?? [:]).mapValues(RecordView.any)] as [String: Any]
        }
        if json {
            var o: [String: Any] = state.map(RecordView.json) ?? ["id": id.lowercasedText]
            o["history"] = history.map(HistoryView.json)
            o["notAuthorized"] = refusedJSON
            Console.json(o)
            return
        }
        if let state {
            Console.out("record \(id.lowercasedText)  \(state.store)  \(state.focus)\(state.deleted ? "  (deleted)" : "")")
            let moves = try HistoryView.moves(history, home: home)
            let labels = RecordView.focusLabels(try projector.subjects())
            for (i, h) in history.enumerated() {
                Console.out("  " + HistoryView.line(h, home: home, store: state.store, after: i > 0 ? history[i - 1] : nil) + (moves[i].map { "  (moved to \(labels[$0] ?? $0))" } ?? ""))
            }
        } else {
            Console.out("record \(id.lowercasedText): no event naming it counts")
        }
        for (n, reason) in refused {
            Console.out("  not authorized: \(n.hlc)  \(n.type)  \(n.id.short) by \(n.author.short): \(reason)")
            // What it would have written, to write it again from a device that may.
            if let c = n.change, c.kind == .put {
                Console.out("    it wrote: \(c.store)  \(c.focus)" + (c.at.map { "  at \(TimeText.shownHere($0))" } ?? "") + "  " + RecordView.fieldsText(RecordView.shownHere(c.fields, store: c.store), cleared: " (cleared)"))
            }
        }
        if let state { Console.out((asOf.map { "as of \($0): " } ?? "now: ") + (state.deleted ? "deleted" : RecordView.fieldsText(RecordView.shownHere(state.fields, store: state.store)))) }
    }

    /// An event of the family whose body names a record (`replay --record`).
    struct RecordEventSeen {
        let id: EventID
        let author: DeviceID
        let hlc: HLC
        let type: String
        /// Its place in its author's chain.
        var seq: UInt64 = 0
        /// What the event says of the record: a change that does not count
        /// is shown with it, so that it can be written again.
        var change: RecordEvent? = nil
    }

    /// Whether the log's append-only rules were ever found removed (made
    /// again then): rows deleted or changed before cannot be ruled out.
    static func rulesText(_ home: Home) -> String {
        // Missing now, and not put back by this open (a read-only file, or locked).
        if !home.log.rulesFoundMissing.isEmpty, !home.log.rulesPutBack {
            return "missing (\(home.log.rulesFoundMissing.joined(separator: ", "))): removed outside famctl, not put back yet; events, fork proofs or rejected events deleted or changed cannot be ruled out"
        }
        guard let at = try? home.log.rulesRestoredAt() else { return "in place" }
        return "found removed outside famctl on \(TimeText.format(at)) and put back: events, fork proofs or rejected events deleted or changed before then cannot be ruled out "
            + "(the others' copies are whole: 'famctl sync' reads back the last events of a chain taken out of this log)"
    }

    /// When the rules were found removed, for `--json`: the time they were
    /// put back, `"now"` when they are missing still, or `nil`.
    static func rulesRemovedFoundAt(_ home: Home) -> Any {
        if !home.log.rulesFoundMissing.isEmpty, !home.log.rulesPutBack { return "now" }
        return ((try? home.log.rulesRestoredAt()) ?? nil).map { TimeText.format($0) as Any } ?? NSNull()
    }

    struct BodyFindings {
        var photos = 0
        var badPhotos: [(EventID, String)] = []
        var noKey = 0
        /// Who wrote the events not decrypted, and under which epochs: a
        /// member writing under a key the family does not hold shows here.
        var noKeyBy: [DeviceID: (count: Int, epochs: Set<UInt32>)] = [:]
        var unreadable: [(EventID, EnvelopeError)] = []
    }

    static func print(_ r: AuditReport, home: Home, findings: BodyFindings, live: String, rebuilt: String, denied: [Projector.Rejection],
                      damage: (file: String, finding: String)? = nil, logDamage: (file: String, finding: String)? = nil, behind: Int64 = 0) {
        Console.out("replay: \(r.eventCount) event\(r.eventCount == 1 ? "" : "s") from \(r.authors.count) author\(r.authors.count == 1 ? "" : "s") re-verified (bytes, ids, signatures, chains, bodies)")
        let household = home.projector.household
        for a in r.authors {
            // Named as `status` names them.
            let name = household.members[a.author]?.name ?? household.refusedJoins[a.author]?.name ?? (a.author == home.deviceID ? home.deviceName : nil)
            let me = a.author == home.deviceID ? " (this device)" : ""
            Console.out("  \(a.author.short)\(name.map { " " + TerminalText.name($0) } ?? "")\(me): \(a.events) event\(a.events == 1 ? "" : "s"), \(TimeText.format(a.firstHLC.date)) … \(TimeText.format(a.lastHLC.date))")
        }
        Console.out("forks: \(r.forks.isEmpty ? "none" : "\(r.forks.count)")")
        for f in r.forks {
            // What the fork takes out of every view: its author's events from
            // the fork point on (those held here), its records and, at seq 1, its join.
            let head = (try? home.log.head(of: f.author, in: f.family).seq) ?? 0
            let left = head >= f.seq ? head - f.seq + 1 : 0
            let name = household.members[f.author]?.name ?? household.refusedJoins[f.author]?.name
            Console.out("  author \(f.author.short)\(name.map { " " + TerminalText.name($0) } ?? "") signed two events at seq \(f.seq) (proof kept): "
                        + "its \(left) event\(left == 1 ? "" : "s") from seq \(f.seq) on held here \(left == 1 ? "is" : "are") left out of every view"
                        + (f.seq == 1 ? ", its join among them" : ""))
        }
        Console.out("rejected: \(r.rejected.isEmpty ? "none" : "\(r.rejected.count)")")
        for x in r.rejected { Console.out("  \(x.id.hex) by \(x.author.short) #\(x.seq): \(x.reason)") }
        Console.out("not authorized: \(denied.isEmpty ? "none" : "\(denied.count) (kept in the log; the household rules reject them)")")
        for d in denied { Console.out("  \(d.event.hex) by \(d.author.short): \(d.reason)") }
        Console.out("pending: \(r.pending)")
        Console.out("append-only rules: " + rulesText(home))
        Console.out("far-future clocks: \(r.farFuture.isEmpty ? "none" : "\(r.farFuture.count)")")
        for f in r.farFuture { Console.out("  \(f.id.hex) stamped \(TimeText.format(f.hlc.date)), arrived \(TimeText.format(f.receivedAt))") }
        if findings.noKey > 0 {
            Console.out("not decrypted (no key held): \(findings.noKey)")
            for (author, n) in findings.noKeyBy.sorted(by: { $0.key.hex < $1.key.hex }) {
                let name = household.members[author]?.name ?? household.refusedJoins[author]?.name
                let epochs = n.epochs.sorted().map(String.init).joined(separator: ", ")
                Console.out("  \(author.short)\(name.map { " " + TerminalText.name($0) } ?? " (not a member)"): \(n.count) under key epoch\(n.epochs.count == 1 ? "" : "s") \(epochs)")
            }
        }
        if findings.photos > 0 || !findings.badPhotos.isEmpty {
            Console.out("photo metadata: \(findings.photos) checked, \(findings.badPhotos.isEmpty ? "all well-formed" : "\(findings.badPhotos.count) malformed (ignored)")")
            for (id, why) in findings.badPhotos { Console.out("  \(id.hex): \(why)") }
        }
        if !findings.unreadable.isEmpty {
            Console.out("unreadable bodies (validly signed, but not for our key or not an event body): \(findings.unreadable.count)")
            for (id, e) in findings.unreadable { Console.out("  \(id.hex): \(e)") }
        }
        if live == rebuilt, behind > 0 {
            Console.out("digest: \(live) (live projection = rebuilt from the log, both without its last \(behind) event(s), which the stores do not show yet)")
        } else if live == rebuilt {
            Console.out("digest: \(live) (live projection = rebuilt from the log)")
        } else {
            // Events missing from a chain (a gap, named by its place): the
            // live projection still holds what they said, which a rebuild
            // from the log would drop (a review).
            let gaps = r.failures.contains(where: \.gap)
            let syncFills = gaps && Self.syncFillsGaps(home)
            Console.out(r.isIntact
                ? "digest: live \(live) ≠ rebuilt \(rebuilt): the live projection does not match the log"
                : gaps
                ? "digest: live \(live) ≠ rebuilt \(rebuilt): the live projection still holds what the events missing from the log (below) said; 'famctl rebuild' would drop it: " + (syncFills ? "'famctl sync' reads them back from the shared folder first" : "restore \(Home.databaseFile) from a backup first")
                // The live projection holds what the log holds; the audit's
                // leaves out what does not verify. A rebuild keeps what still
                // opens, and refuses while anything does not.
                : "digest: live \(live) ≠ rebuilt \(rebuilt): the rebuilt state leaves out the events that do not verify (below), which the live projection holds; "
                    + "'famctl rebuild' keeps those whose body still opens, and keeps the stores as they are while any does not ('famctl export stores DIR' saves what they hold)")
        }
        if let damage { Console.out("projection file: \(damage.file) is damaged (\(damage.finding))") }
        if let logDamage { Console.out("log file: \(logDamage.file) is damaged (\(logDamage.finding))") }
        if r.isIntact && live == rebuilt && damage == nil && logDamage == nil && behind > 0 {
            Console.out("result: the log is intact; the stores are behind it (below)")
        } else if r.isIntact && live == rebuilt && damage == nil && logDamage == nil {
            Console.out("result: OK")
        } else {
            Console.out("integrity failures: \(r.failures.count)")
            for f in r.failures { Console.out("  \(f)") }
            Console.out("result: FAILED")
        }
    }
}
