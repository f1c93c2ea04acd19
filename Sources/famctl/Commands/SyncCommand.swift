import Envelope
import EventLog
import Foundation
import Projections
import Replicator
import Synchronization

/// `famctl sync [--watch] [--interval SECONDS]`
enum SyncCommand: Command {
    static let spec = CommandSpec(
        path: ["sync"],
        abstract: "Exchange events with the family through its shared directory or WebDAV peer: publish, then pull.",
        discussion: """
            One round writes this device's new events as segments into its own folder
            and reads what the others wrote since the last round. Files that cannot be
            verified yet (still arriving, damaged, placeholders) are retried next time and
            never deleted. --watch keeps going: it publishes shortly after each change
            (0.6 s of quiet) and pulls every --interval seconds; Ctrl-C stops it cleanly.

            Environment: FAMCTL_SYNC_RETRY_SECONDS, about how long a folder or server
            that keeps failing is retried (0 to 40, default 25; 0 asks each request
            once); FAMCTL_PEER_TIMEOUT, the seconds a WebDAV request may go without a
            byte (1 to 600, default 20); FAMCTL_PEER_CA_FILE, the server's CA certificate
            (PEM); FAMCTL_PEER_USER and FAMCTL_PEER_PASSWORD, or FAMCTL_NETRC, its
            login; FAMCTL_PEER_ALLOW_HTTP=1, to send a login over http://.
            """,
        options: [
            .flag("--watch", "Keep syncing until interrupted."),
            .value("--interval", "SECONDS", "With --watch, how often to pull (default 2)."),
        ])

    /// Set by SIGINT/SIGTERM; the watch loop stops at its next check.
    static let stop = Atomic<Bool>(false)
    static let debounce: TimeInterval = 0.6
    /// How often a watch whose rounds take in nothing writes the time of
    /// its last round (what `status` says), in seconds.
    static let watchRecordsIdleRoundsEvery: TimeInterval = 60

    /// What to do about an own event damaged in the log that the others miss.
    static let damagedOwnHint = "'famctl replay' audits the whole log. The event cannot be made again. First save what the stores hold, this device's records after it included, which did not go out: 'famctl export stores DIR'. Then restore \(Home.databaseFile) from a backup of this home "
        + "that holds it whole, or join again as a new device ('famctl accept CODE --name NAME --home NEWDIR', then 'famctl import stores DIR --home NEWDIR')."

    static func run(_ inv: Invocation) throws {
        let interval = try inv.value("--interval").map { s -> Double in
            guard let v = DecimalText.parse(s), v >= 0.1, v <= 3600 else { throw CLIError.data("--interval '\(s)' is not a number of seconds from 0.1 to 3600") }
            return v
        } ?? 2
        if inv.value("--interval") != nil && !inv.flag("--watch") { throw CLIError.usage("--interval only applies with --watch") }
        let path = try Home.location(inv)
        if !inv.flag("--watch") {
            let home = try Home.open(path)
            let r = try round(home)
            try report(r, home: home, json: inv.json)
            if let failed = r.publishFailure { throw failed }
            if let damaged = r.pulled.ownDamagedInLog.first {
                throw CLIError(.dataError, "this device's events from seq \(damaged.seq) cannot reach the others: the event at that seq is damaged in this log and its segment is not in the shared folder (see above)",
                               hint: Self.damagedOwnHint)
            }
            return
        }
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { sig -> any DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler {
                SyncCommand.stop.store(true, ordering: .relaxed)
                // A round waiting for another process's lock stops waiting.
                Database.cancelLockWaits()
                FileIO.cancelLockWaits()
            }
            s.resume()
            return s
        }
        defer { sources.forEach { $0.cancel() } }
        var lastPull = Date.distantPast
        var warnedOwn = Set<String>()
        var saidOwnFolder: String?   // why its own folder could not be read, as said this watch
        var netrcAtRefusal: (path: String, stamp: String?)?   // the netrc file as it was when its login was refused
        // A file not yet arrived for the same reason round after round (an
        // iCloud placeholder, a folder that cannot be read) is said once a watch.
        var saidNotYet = Set<String>(), saidWarnings = Set<String>()
        var seenHead: UInt64 = 0
        var changedAt: Date?
        // The log's files as they stood before the last pass, when it ran no round.
        var unchangedLog: Home.LogStamp?
        // A round that fails for a while (the folder unmounted, the server
        // down, the database busy) does not end the watch: it is said on
        // stderr and tried again, after a wait that doubles up to a minute.
        var failures = 0
        var retryAt = Date.distantPast
        // Whether a round has gone through: from then on, a folder or home
        // that cannot be read or written (exit 73: its permissions changed,
        // a remount, a full disk) is taken as passing too, and waited out,
        // rather than end the watch (a review: the family folder briefly
        // unreadable ended it). Before, it is most likely a set-up to fix.
        var worked = false
        // The WebDAV server whose conditional writes a round of this watch
        // checked, and when: the next rounds do not check it again (five
        // requests every interval, a review), unless a round failed since,
        // the family's peer changed, or an hour went by (a server
        // reconfigured).
        var probed: (location: String, at: Date)?
        /// - Parameter forFile: the wait is for the netrc file to change,
        ///   not for a time: no "next try in" then (a review: the two contradicted).
        func warnAndWait(_ message: String, forFile: Bool = false) {
            failures += 1
            let wait = min(interval * pow(2, Double(min(failures - 1, 10))), max(interval, 60))
            Console.err("famctl: warning: \(message); the watch goes on" + (forFile ? "" : ", next try in \(String(format: "%.1f", wait)) s"))
            retryAt = Date().addingTimeInterval(wait)
        }
        // With --json, stdout carries only the rounds' objects, one a line.
        let say: (String) -> Void = inv.json ? { Console.err("famctl: " + $0) } : { Console.out($0) }
        say("syncing every \(interval) s; Ctrl-C stops")
        while !stop.load(ordering: .relaxed) {
            // Its reader gone (`sync --watch | head -1`, a `jq` that ended):
            // nobody sees the rounds any more; the watch ends, exit 0.
            if Console.readerGone { break }
            defer { usleep(100_000) }
            guard Date() >= retryAt else { continue }
            // A refused login from a netrc file: no request until the file changes.
            if let refused = netrcAtRefusal {
                guard PeerCredentials.stamp(refused.path) != refused.stamp else { continue }
                netrcAtRefusal = nil
            }
            // The log as its files stand: unchanged since a pass that ran no
            // round, and no round due, the home is not opened (a review: ten
            // opens a second each made and removed its -wal and -shm files,
            // about 100 KB written a second while nothing happened).
            let stamp = Home.logStamp(path)
            let due = Date().timeIntervalSince(lastPull) >= interval || (changedAt.map { Date().timeIntervalSince($0) >= debounce } ?? false)
            if !due, let stamp, stamp == unchangedLog { continue }
            unchangedLog = nil
            do {
                // A fresh connection each pass sees what other famctl processes appended.
                let home = try Home.open(path)
                let head = try home.log.head(of: home.deviceID, in: home.family).seq
                if head != seenHead { changedAt = Date(); seenHead = head }
                let quiet = changedAt.map { Date().timeIntervalSince($0) >= debounce } ?? false
                let roundNow = quiet || Date().timeIntervalSince(lastPull) >= interval
                if !roundNow { unchangedLog = stamp }
                if roundNow {
                    let location = "\(Location.stored(in: home))"
                    let probe = probed.map { $0.location != location || Date().timeIntervalSince($0.at) > Self.probeAgainAfter } ?? true
                    var r = try round(home, probe: probe, watching: true)
                    if probe { probed = (location, Date()) }
                    // An own segment that stays unreadable is said once a watch, not every round.
                    r.pulled.ownNotRestored.removeAll { warnedOwn.contains($0.path) }
                    r.pulled.ownDamagedInLog.removeAll { warnedOwn.contains($0.path) }
                    r.pulled.ownMissingTakenOut.removeAll { warnedOwn.contains($0.path) }
                    warnedOwn.formUnion(r.pulled.ownNotRestored.map(\.path) + r.pulled.ownDamagedInLog.map(\.path) + r.pulled.ownMissingTakenOut.map(\.path))
                    // So is its own folder unreadable (while it stays so; said again should it come back).
                    if let why = r.pulled.ownFolderUnreadable {
                        if saidOwnFolder == why { r.pulled.ownFolderUnreadable = nil } else { saidOwnFolder = why }
                    } else {
                        saidOwnFolder = nil
                    }
                    r.pulled.notYetArrived = Self.unsaid(r.pulled.notYetArrived, key: { $0.0 + "\u{0}" + $0.1 }, said: &saidNotYet)
                    r.warnings = Self.unsaid(r.warnings, key: { $0 }, said: &saidWarnings)
                    if Self.hasNews(r) { try report(r, home: home, json: inv.json, oneLine: true) }
                    lastPull = Date()
                    changedAt = nil
                    if let failed = r.publishFailure {
                        probed = nil
                        // Pulling goes on; publishing is tried again, less often.
                        warnAndWait("\(failed.message) (the round still read the others' files: \(r.pulled.accepted) new event(s))")
                        continue
                    }
                    if failures > 0 { Console.err("famctl: sync works again") }
                    failures = 0
                    worked = true
                }
            } catch {
                // Ctrl-C stopped the request: not a failure to report.
                if stop.load(ordering: .relaxed) { break }
                probed = nil
                guard let temporary = Self.temporaryFailure(error, path: path, orCantCreate: worked) else { throw error }
                warnAndWait(temporary.message, forFile: temporary.loginRefused)
                if temporary.loginRefused, let netrc = PeerCredentials.netrcPath() { netrcAtRefusal = (netrc, PeerCredentials.stamp(netrc)) }
            }
        }
        say("stopped")
    }

    /// How long a watch goes without checking its WebDAV server's
    /// conditional writes again, its rounds going through.
    static let probeAgainAfter: TimeInterval = 3600

    /// `error` as the temporary failure it is (exit 75: worth retrying), or
    /// `nil` for one that retrying will not mend.
    /// - Parameter orCantCreate: exit 73 (a folder or file that cannot be
    ///   read or written, a full disk) counts as worth retrying too, and so
    ///   does a login the server refuses (a password changed on it).
    static func temporaryFailure(_ error: any Error, path: String, orCantCreate: Bool = false) -> CLIError? {
        let e = CLIError(error, path: path)
        // A login from a netrc file: the watch waits for the file to change
        // (it is read again then). One from the environment cannot change
        // while the watch runs: it ends, rather than send a refused
        // password again and again (servers lock such logins).
        if orCantCreate, e.loginRefused, let netrc = PeerCredentials.netrcPath() {
            var waiting = CLIError(e.code, e.message + " (the watch tries again once \(netrc) changes)", hint: e.hint)
            waiting.loginRefused = true
            return waiting
        }
        // (A collection gone from a server that served the watch: a share
        // renamed or unmounted there, waited out; a review: it ended every watch.)
        return e.code == .tempFail || (orCantCreate && (e.code == .cantCreate || e.placeGone)) ? e : nil
    }

    struct Round {
        let published: Replicator.PublishReport
        var pulled: Replicator.PullReport
        /// Photos (ids) whose only copy, this device's, is damaged: not uploaded.
        var damagedPhotos: [String] = []
        /// Photos of this device uploaded this round (their encrypted files).
        var photosUploaded = 0
        /// Of the other devices' events this round brought, those the
        /// family does not count (a removed member's after its removal, a
        /// viewer's change…): `status` lists them.
        var notCounted = 0
        /// Why publishing failed when the peer refused this device's writes
        /// (a read-only folder, a full disk): the round still pulled.
        var publishFailure: CLIError?
        /// What the folder shows after the round that the user should know
        /// (``SyncCommand/warnings(_:replicator:)``), said on stderr.
        var warnings: [String] = []
    }

    /// Of `items`, those not said at the round before (by `key`); `said`
    /// becomes this round's: what stays the same is said once a watch, and
    /// again once it has been gone for a round.
    static func unsaid<T>(_ items: [T], key: (T) -> String, said: inout Set<String>) -> [T] {
        let keys = items.map(key)
        defer { said = Set(keys) }
        return zip(items, keys).filter { !said.contains($0.1) }.map(\.0)
    }

    /// Warnings about the state the round leaves, said at every round that
    /// finds it so (once a watch): this device's own folder naming events
    /// past its log that no sync has read (it does not write until they
    /// are), and a shared folder that shows none of the other devices'
    /// folders it held before (a drive unmounted, its empty mount point
    /// left: what the round wrote went to the local disk).
    static func warnings(_ home: Home, replicator: Replicator, carried: Int = 0) -> [String] {
        var out: [String] = []
        if let missing = home.keyNotGiven() {
            out.append("famctl: warning: " + missing)
        }
        if let ahead = try? home.ownFolderAhead() {
            out.append("famctl: warning: \(ahead.named) in this device's folder \(ahead.files.count == 1 ? "holds" : "hold") its own events up to seq \(ahead.published), past its log (seq \(ahead.head)), "
                       + (ahead.files.count == 1 ? "and has not been read (cut short, still arriving, damaged, or a placeholder): this device does not write until it is. "
                                                 : "and have not been read (cut short, still arriving, damaged, or placeholders): this device does not write until they are. ")
                       + home.ownFolderAheadHint(head: ahead.head))
        }
        // (Not in the round that carried the others' events into a new
        // location: their folders were written after the listing.)
        if case .directory(let dir) = Location.stored(in: home), carried == 0, let listed = replicator.lastListing {
            var before = Set<String>()
            try? home.log.database.statement("SELECT DISTINCT substr(path, 1, 64) FROM r_files WHERE family = ?1 AND status = 'read'")
                .forEachRow([.blob(home.family.bytes)]) { before.insert($0.text(0)) }
            before.remove(home.deviceID.hex)
            // (A folder there that could not be read is there: said as not yet arrived.)
            let now = Set(listed.map { String($0.prefix(64)) }).union(replicator.lastUnreadFolders)
            if !before.isEmpty, before.isDisjoint(with: now) {
                out.append("famctl: warning: the shared folder \(dir) shows none of the \(before.count) other device folder(s) this device read before: "
                           + "is the shared drive not mounted (its empty mount point left)? Then what this sync wrote went to the local disk under it: mount it and sync again. "
                           + "(Or those folders were removed or replaced there: their devices write them again at their next sync.)")
            }
            // Joined, the family's events not here yet, and not even the
            // owner's folder in the shared folder: it may be the wrong one
            // (`accept --dir` naming another folder), or not copied here yet.
            if let owner = home.knownOwner, owner != home.deviceID, home.projector.household.isPrivate, !now.contains(owner.hex) {
                out.append("famctl: warning: the shared folder \(dir) holds no folder of the family's owner (\(owner.short)), so none of the family's events: "
                           + "if a sync engine is still copying them here, sync again later; otherwise this is not the family's shared folder: "
                           + "'famctl settings sync --dir PATH' points this device at the one the owner set up.")
            }
        }
        // Two babies of one name (one carried in by an `accept`, or added on
        // two devices): every `--focus NAME` is refused until they are merged.
        out += home.sameNameWarnings()
        // Devices that left this location, as their notes say: certain, so
        // said at every round (once a watch), and the silence below not then.
        home.noteMovedAway(replicator.lastPull?.movedAway)
        // Back at a location it once left, its note there could not be removed.
        if let left = replicator.lastPull?.ownMovedNoticeLeft {
            let file = home.deviceID.hex + "/" + MovedNotice.fileName
            out.append("famctl: warning: this device's note that it moved away (\(file) in the family's folder) could not be removed (\(left)): "
                       + "the devices syncing here are told it left. Remove that file (or ask the server's owner to).")
        }
        let moved = home.movedAway()
        for m in moved { out.append("famctl: warning: " + home.movedAwayText(m)) }
        // Once a day (`status` says it whenever asked): a parent away for
        // two weeks is possible too.
        if moved.isEmpty, let silence = try? home.familySilence() {
            let said = (try? home.state.get(.familySilenceSaid)).flatMap { $0 }.flatMap(Double.init) ?? 0
            if Date().timeIntervalSince1970 - said >= 86_400 {
                out.append("famctl: warning: " + home.familySilenceText(silence))
                try? home.state.set(.familySilenceSaid, String(Int(Date().timeIntervalSince1970)))
            }
        }
        return out
    }

    /// Held (`flock`) through a round: two syncs of one home (a `--watch` and
    /// a `sync` typed meanwhile) take turns, so that what one publishes the
    /// other sees as published.
    static let lockFile = "sync.lock"

    /// - Parameter probe: check a WebDAV server's conditional writes first
    ///   (``WebDAVPeer/probe()``); a watch does once, not every round.
    /// - Parameter watching: a round of `sync --watch`: a pull that takes
    ///   in nothing writes its time only once a minute (``watchRecordsIdleRoundsEvery``).
    static func round(_ home: Home, probe: Bool = true, watching: Bool = false) throws -> Round {
        // A home moved into the shared folder since (or the folder set
        // around it): its private key would be copied to every member
        // (a review: it synced without a word). Refused as `family create` refuses it.
        if case .directory(let dir) = Location.stored(in: home) { try Home.checkApart(home: home.path, shared: dir) }
        // The round's own errors are kept apart from the lock's.
        var round: Result<Round, any Error>?
        do {
            try FileIO.withExclusiveLock(home.path + "/" + lockFile, waitingAtMost: Database.busyWaitSeconds, willWait: {
                Console.err("famctl: another sync of this home is running; waiting for it to finish")
            }) { round = Result { try lockedRound(home, probe: probe, watching: watching) } }
            return try round!.get()
        } catch let e as FileIO.Failure where round == nil && e.timedOut {
            throw CLIError(.tempFail, "another sync of this home (a 'famctl sync --watch', or one still running) holds \(home.path)/\(lockFile) "
                           + "(waited \(Database.busyWaitSeconds) s for it); nothing was synced",
                           hint: "Try again once its round is done (a watch syncs this home already). " + Home.lockWaitHint)
        } catch let e as FileIO.Failure where round == nil {
            throw CLIError(.cantCreate, "cannot lock \(home.path)/\(lockFile): \(e.reason)", hint: "Check the home directory's permissions; nothing was synced.")
        }
    }

    /// Publishes this device's events not yet shared, now, without pulling
    /// (an invitation's `invite.create`, so that the code works as soon as
    /// it is sent): `nil` when done, else why not. A sync of this home
    /// running meanwhile is waited for (it publishes them as well).
    /// - Parameter once: one attempt, no retries (a server that is not
    ///   there is not waited out).
    static func publishNow(_ home: Home, once: Bool = false) -> String? {
        var failure: String?
        do {
            try FileIO.withExclusiveLock(home.path + "/" + lockFile, waitingAtMost: Database.busyWaitSeconds) {
                let replicator = try home.replicator(probe: false)
                if once { (replicator.peer as? RetryingPeer)?.singleAttempts = true }
                do {
                    // Another copy of this home may have published at these seqs: read first.
                    var held: (seq: UInt64, file: String)?
                    if home.ownFolderUnread(peer: replicator.peer) != nil {
                        defer { for w in undoneHere(home) { Console.err(w) } }
                        _ = try home.pulling { try replicator.pull { try home.ingest(batches: $0, onIngested: $1) } }
                        held = home.ownFolderUnread(peer: replicator.peer)
                    }
                    let report = try replicator.publish(below: held?.seq)
                    if let kept = report.withheld {
                        failure = Home.ownEventsWithheld(kept)
                    } else if let held, try home.log.head(of: home.deviceID, in: home.family).seq >= held.seq {
                        failure = home.unreadOwnFileText(held)
                    }
                } catch let e as PeerError {
                    failure = Self.failure(e, at: replicator.peer.label, probing: false).message
                }
            }
        } catch let e as CLIError { failure = e.message } catch let e as FileIO.Failure where e.timedOut {
            failure = Self.syncLockHeld(home)
        } catch { failure = "\(error)" }
        return failure
    }

    /// Reads the family's events already at the shared folder or peer,
    /// now, without publishing (under the sync lock, one attempt): what a
    /// command must know before it writes (`accept`: whether its invitation
    /// was used; `invite --revoke`: whether it was). `nil` when done, or
    /// there is no folder or peer; else why not.
    static func pullNow(_ home: Home) -> String? {
        if case .none = Location.stored(in: home) { return nil }
        do {
            try FileIO.withExclusiveLock(home.path + "/" + lockFile, waitingAtMost: Database.busyWaitSeconds) {
                let replicator = try home.replicator()
                (replicator.peer as? RetryingPeer)?.singleAttempts = true
                defer {
                    // What the events read undid of this device's deletions is
                    // said now: the next sync would not know they came in.
                    for w in undoneHere(home) { Console.err(w) }
                }
                _ = try home.pulling { try replicator.pull { try home.ingest(batches: $0, onIngested: $1) } }
            }
            return nil
        } catch {
            if let e = error as? FileIO.Failure, e.timedOut { return syncLockHeld(home) }
            return (error as? CLIError)?.message ?? (error as? PeerError).map { failure($0, at: "the shared folder", probing: false).message } ?? "\(error)"
        }
    }

    /// What a wait for the sync lock that ran out says (another sync's
    /// round, a watch's, held it for longer than the wait).
    static func syncLockHeld(_ home: Home) -> String {
        "another sync of this home holds \(home.path)/\(lockFile) (waited \(Database.busyWaitSeconds) s for it)"
    }

    /// Publishes a household change the others should have at once (a
    /// revoked invitation, a removed member, a new role): until it is in
    /// the shared folder, the device it concerns still looks to them as
    /// it did. Nothing to do for a family with no shared folder or peer;
    /// a failure is a warning (the change is in the log, and the next
    /// `famctl sync` sends it).
    /// - Returns: whether the change is in the shared folder (`nil`: no folder).
    /// - Throws: when the folder, read first, shows this copy of the home
    ///   forked: the change can never reach the family (a review: a removal
    ///   on such a copy said it would go out with the next sync).
    @discardableResult
    static func publishChange(_ home: Home, what: String) throws -> Bool? {
        if case .none = Location.stored(in: home) { return nil }
        let failure = publishNow(home)
        try home.refuseIfOwnChainForked(what, "it is written in this home only")
        guard let failure else { return true }
        Console.err("famctl: warning: \(what) is written here but not in the shared folder yet (\(failure)); run 'famctl sync' to send it: until then the others do not see it.")
        return false
    }

    /// This device's own changes the family does not count (its role
    /// changed, or it was removed, before they arrived): event ids and why.
    static func ownDenied(_ home: Home) -> [String: String] {
        var out: [String: String] = [:]
        for r in (try? home.projector.rejections()) ?? [] where r.author == home.deviceID { out[r.event.hex] = r.reason }
        return out
    }

    /// What a round that failed did before: its events published (this
    /// device's own, counted by how far its published seq moved) and those
    /// pulled, and the files not arrived; `nil` for nothing.
    static func doneBefore(published: UInt64, pulled: Replicator.PullReport?) -> String? {
        var done: [String] = []
        if published > 0 { done.append("published \(published) event(s) of this device") }
        if let pulled, pulled.accepted > 0 { done.append("pulled \(pulled.accepted) new event(s)") }
        var said = done.isEmpty ? [] : ["before it failed, the round " + done.joined(separator: " and ")]
        if let pulled, !pulled.notYetArrived.isEmpty { said.append("\(pulled.notYetArrived.count) file(s) not yet arrived: 'famctl status' lists them") }
        return said.isEmpty ? nil : said.joined(separator: "; ")
    }

    private static func lockedRound(_ home: Home, probe: Bool, watching: Bool) throws -> Round {
        // In no family, with a location set all the same (`settings sync`):
        // nobody to sync with, whatever the folder (a review: exit 0, nothing done).
        if home.projector.household.isPrivate, home.knownOwner == nil { throw Home.inNoFamily }
        let replicator = try home.replicator(probe: probe)
        if watching { replicator.idleRoundsRecordedEvery = watchRecordsIdleRoundsEvery }
        // A move whose note in the old location is not left yet (its process
        // killed first, or the new location not usable then): left once
        // this device reaches the new one.
        if let text = (try? home.state.get(.movedNoteOwed)) ?? nil, let old = Location(noteText: text) {
            if let warning = home.leaveMovedNotice(leaving: old, for: Location.stored(in: home)) { Console.err(warning) }
            try? home.state.remove(.movedNoteOwed)
        }
        let deniedBefore = ownDenied(home)
        // Photos left out of their records' lists: those this round leaves out are said.
        let unlistedBefore = home.unlistedPhotos()
        // The others' events the family refuses (a removed member's, a
        // viewer's): those this round brings are counted apart.
        let rejectedBefore = Set(((try? home.projector.rejections()) ?? []).map(\.event))
        let publishedBefore = try Replicator.publishedSeq(log: home.log, family: home.family)
        do {
            // A peer that refuses this device's writes (a read-only mount, a
            // full disk, a server failing on this device's folder alone)
            // still lets it read: the others' events are pulled, and the
            // failure is said after the round's report. (A peer that is not
            // there, or asks to wait, is not asked again this round.)
            var published = Replicator.PublishReport()
            var publishFailure: PeerError?
            // Another copy of this home may have published at the seqs this
            // one would: the folder is read first (``Home/ownFolderUnread(peer:)``).
            let pullFirst = home.ownFolderUnread(peer: replicator.peer) != nil
            if !pullFirst { do { published = try replicator.publish() } catch let e as PeerError where !e.isOffline && e != .tokenExpired && !e.isThrottled {
                publishFailure = e
                // The segments written before the failure went out: counted
                // (a review: a server that filled midway was said to have
                // taken nothing).
                published = replicator.lastPublish ?? published
                // Its retries waited one back-off out already: the pull asks
                // once, so a server that died since costs no second one.
                if e.isTransient { (replicator.peer as? RetryingPeer)?.singleAttempts = true }
            } }
            let publishedHead = try home.log.head(of: home.deviceID, in: home.family).seq
            var pulled = try home.pulling { try replicator.pull { try home.ingest(batches: $0, onIngested: $1) } }
            if let publishFailure {
                recordError(publishFailure, replicator)
                return Round(published: published, pulled: pulled, publishFailure: failure(publishFailure, at: replicator.peer.label, probing: false),
                             warnings: warnings(home, replicator: replicator) + undoneHere(home))
            }
            pulled.carried = try replicator.carryOthersIfAsked()
            // A photo add or get killed while writing left its file behind.
            FileIO.removeLeftoverTemporaries(in: home.photoDirectory)
            // What the pull made this device write (the owner's key shares for
            // members who joined) goes out in this round, not the next: a
            // member who joined meanwhile gets its key from this sync.
            // A file of its own folder the pull could not read still holds
            // back what it names (said in the warnings).
            let heldBehind = pullFirst ? home.ownFolderUnread(peer: replicator.peer) : nil
            if try pullFirst || home.log.head(of: home.deviceID, in: home.family).seq > publishedHead {
                let more: Replicator.PublishReport
                do { more = try replicator.publish(below: heldBehind?.seq) } catch let e as PeerError where pullFirst && !e.isOffline && e != .tokenExpired && !e.isThrottled {
                    // Refused as the round's first publish is: the report, then why
                    // (a review: read first, a refused write ended the round bare).
                    recordError(e, replicator)
                    return Round(published: replicator.lastPublish ?? published, pulled: pulled, publishFailure: failure(e, at: replicator.peer.label, probing: false),
                                 warnings: warnings(home, replicator: replicator) + undoneHere(home))
                }
                published.segments += more.segments
                published.events += more.events
                published.compacted += more.compacted
                published.compactionFailure = more.compactionFailure ?? published.compactionFailure
                published.withheld = more.withheld
            }
            // Its events held back behind a file of its own folder that did not read.
            let held = heldBehind.flatMap { h in
                published.withheld == nil && ((try? home.log.head(of: home.deviceID, in: home.family).seq) ?? 0) >= h.seq ? ["famctl: warning: " + home.unreadOwnFileText(h) + "."] : nil
            } ?? []
            // Small segments left unmerged: said, exit 0 (their events went out).
            let unmerged = held + (published.compactionFailure.map {
                ["famctl: warning: merging this device's small segments into one failed (\($0.description)); the events are published all the same, and a sync an hour from now tries the merge again"]
            } ?? []) + (pulled.writeBackFailure.map {
                ["famctl: warning: writing back the segments of another device missing from its folder failed (\($0.description)); devices joining later miss its events until a device that may write does it, and a sync an hour from now tries again"]
            } ?? [])
            let photos: (uploaded: Int, damagedOnlyCopies: [String], unreadableOnPeer: [String])
            do { photos = try home.publishPhotos(to: replicator.peer, listed: replicator.lastListing, tags: replicator.lastTags) } catch let e as PeerError where !e.isOffline && !e.isThrottled {
                // The events went out and came in: the report says so, then
                // why the photos did not (a full server, say).
                recordError(e, replicator)
                return Round(published: published, pulled: pulled, publishFailure: failure(e, at: replicator.peer.label, probing: false),
                             warnings: warnings(home, replicator: replicator, carried: pulled.carried) + unmerged + refusedHere(home, before: deniedBefore) + undoneHere(home) + home.unlistedPhotoWarnings(before: unlistedBefore))
            }
            // Photos prefetch found damaged on the peer: said (a review: they
            // stayed "not fetched yet", said nowhere but by `photo get`).
            var prefetchDamaged: [String] = []
            if home.prefetchPhotos {
                // Only what fits in the cache as it stands: a photo fetched by
                // evicting another (or one larger than the whole cache, evicted
                // at once) would be fetched again at every round.
                var room = try home.photoCacheRoom()
                for p in try home.projector.photos() where !FileManager.default.fileExists(atPath: home.photoDirectory + "/" + p.blob) {
                    // The cache keeps the sealed file: the photo and its overhead.
                    let size = p.size + PhotoBlob.overhead
                    guard size <= room else { continue }
                    do {
                        _ = try home.photoBytes(p, peer: replicator.peer)
                        // Only a photo fetched takes room: one that is not there
                        // (not arrived yet, or lost) leaves it to the next.
                        room -= size
                    } catch {
                        // Not arrived yet: next round. A stalled server: the others
                        // too, each would wait out the timeout.
                        if (replicator.peer as? RetryingPeer)?.lastError?.isOffline == true { break }
                        if let e = error as? CLIError, e.message.contains("damaged") || e.message.contains("cannot be read") { prefetchDamaged.append(e.message) }
                    }
                }
            }
            // After a move: the photos the new location lacks, from the old one.
            let carriedPhotos = try home.carryPhotosIfAsked(to: replicator.peer, listed: replicator.lastListing)
            // A photo's blob there that cannot be read and that this device
            // cannot replace (a folder in its place): said, with what to do.
            let blobs = (carriedPhotos.warning.map { [$0] } ?? []) + photos.unreadableOnPeer.map {
                "famctl: warning: \($0); this device holds a good copy but cannot write it there: remove what is in its place, and the next sync uploads it again"
            } + prefetchDamaged.map {
                "famctl: warning: \($0): not fetched; a device holding a good copy writes it again there at its next sync"
            }
            // (None before the family's first event arrives: nothing is decided yet.)
            let notCounted = home.projector.household.owner == nil ? 0
                : ((try? home.projector.rejections()) ?? []).count { !rejectedBefore.contains($0.event) && $0.author != home.deviceID }
            return Round(published: published, pulled: pulled, damagedPhotos: photos.damagedOnlyCopies, photosUploaded: photos.uploaded + carriedPhotos.carried, notCounted: notCounted,
                         warnings: warnings(home, replicator: replicator, carried: pulled.carried) + unmerged + blobs + refusedHere(home, before: deniedBefore) + undoneHere(home)
                            + home.unlistedPhotoWarnings(before: unlistedBefore))
        } catch let e as PeerError {
            // What the events pulled before the failure undid is said now:
            // the next round would not know they came in.
            for w in undoneHere(home) { Console.err(w) }
            if !stop.load(ordering: .relaxed) { recordError(e, replicator) }
            // What the round did before it failed is kept: said with the error.
            let failed = failure(e, at: replicator.peer.label, probing: false)
            let published = (try? Replicator.publishedSeq(log: home.log, family: home.family)).map { $0 > publishedBefore ? $0 - publishedBefore : 0 } ?? 0
            let before = Self.doneBefore(published: published, pulled: replicator.lastPull)
            throw before.map { CLIError(failed.code, failed.message + " (" + $0 + ")", hint: failed.hint) } ?? failed
        }
    }

    /// This device's recent changes of a record's fields (dated within the
    /// last day) that a change pulled in this process outdid while dated
    /// more than an hour ahead of this device's clock: a device whose
    /// clock is ahead (or was) wrote it, perhaps before this one in truth,
    /// and the later-dated write wins on every device (a clock-skew review:
    /// the value this device had written was gone after a sync that said
    /// only "pulled 1 new event(s)"). Said once, when that change arrives,
    /// naming the fields whose value this device wrote and no longer shows.
    static func outdoneHere(_ home: Home, now: Date = Date()) -> [String] {
        var out: [String] = []
        // Only records a change dated ahead reached are read.
        for (key, versions) in home.changedByOthers.sorted(by: { $0.key < $1.key })
        where key.kind == "record" && versions.contains(where: { $0.hlc.date.timeIntervalSince(now) > Home.datedAheadWarning }) {
            guard let uuid = UUID(text: key.id), let r = try? home.projector.record(uuid), !r.deleted,
                  let history = try? home.projector.history(kind: key.kind, id: key.id) else { continue }
            let ahead = history.filter { versions.contains($0.version) && $0.operation == .put && $0.version.hlc.date.timeIntervalSince(now) > Home.datedAheadWarning }
            guard let newest = ahead.last else { continue }
            // This device's last write of each field, within the last day.
            var mine: [String: (Version, JSONValue)] = [:]
            for entry in history where entry.version.author == home.deviceID && entry.operation == .put && now.timeIntervalSince(entry.version.hlc.date) < 86_400 {
                for (name, value) in entry.changes where !name.hasPrefix("$") { mine[name] = (entry.version, value) }
            }
            var lost = Set<String>()
            for (name, (version, value)) in mine where r.fields[name] != (value == .null ? nil : value)
                && ahead.contains(where: { $0.version > version && $0.changes[name] != nil }) {
                lost.insert(name)
            }
            guard !lost.isEmpty else { continue }
            let by = OutdoneWrite.author(newest.version.author, home: home)
            let hours = Int((newest.version.hlc.date.timeIntervalSince(now) / 3600).rounded())
            out.append("famctl: warning: record \(key.id) (\(r.store)\(r.at.map { " at \(TimeText.shownHere($0))" } ?? "")): this device's change of \(lost.sorted().joined(separator: ", ")) no longer shows: "
                       + "\(by) changed \(lost.count == 1 ? "it" : "them") in a change dated \(TimeText.format(newest.version.hlc.date)), \(hours < 2 ? "over an hour" : "\(hours) hours") ahead of this device's clock, "
                       + "and the later-dated write wins on every device. 'famctl record show \(key.id) --history' shows both; write it again if it should stand, and have \(by)'s clock set right (or this device's, should it be the one behind).")
        }
        return out
    }

    /// Other devices' events pulled in this process that are dated more
    /// than a day ahead of this device's clock, said once an author: until
    /// that moment they win over every change of what they changed, on
    /// every device, whatever the order (a security review: a deletion and
    /// a rename dated in 2100 came in without a word). A date years ahead
    /// is said to be for good in practice.
    static func arrivedFarAheadHere(_ home: Home, now: Date = Date()) -> [String] {
        defer { home.arrivedFarAhead = [:] }
        // Several devices far ahead at once: this device's clock is the
        // likelier one to be wrong (a clock review: a device set to 1970 was
        // told to have every other device's clock set right).
        let several = home.arrivedFarAhead.count >= 2
            ? ["famctl: warning: the changes of \(home.arrivedFarAhead.count) devices just pulled are all dated far ahead of this device's clock, which reads \(TimeText.format(now)): "
               + "either this device's clock is behind, or one device's clock is ahead and the others' changes followed it. Compare this device's clock with one you trust: "
               + "if it is behind, set it right (until then its changes are dated before theirs, and theirs win)."]
            : []
        return several + home.arrivedFarAhead.sorted(by: { $0.key.hex < $1.key.hex }).map { author, arrived in
            let by = OutdoneWrite.author(author, home: home)
            let ahead = arrived.latest.date.timeIntervalSince(now)
            let span = ahead >= 2 * 365 * 86_400 ? "\(Int((ahead / (365.25 * 86_400)).rounded())) years" : "\(Int((ahead / 86_400).rounded())) days"
            return "famctl: warning: \(arrived.count) change(s) by \(by) just pulled are dated far ahead of this device's clock (the latest \(TimeText.format(arrived.latest.date)), "
                + "\(span) ahead): until then they win over any change of what they changed (records, care subjects, the household), on every device, whatever the order"
                + (ahead >= OutdoneWrite.forGood ? ", which in practice is for good" : "")
                + ". Have \(by)'s clock set right" + (several.isEmpty ? "" : " (or this device's)") + "; 'famctl replay' lists the events dated far ahead."
        }
    }

    /// This device's deletions (of a record, or a care subject's removal)
    /// that a change pulled in this process undid: another device's put
    /// dated after this device's last deletion of it, the first such, came
    /// in now, and this device wrote nothing of it since (it did not bring
    /// it back itself); the later change wins on every device (a user
    /// trial: a parent's delete was undone with only "pulled 1 new
    /// event(s)" said). Said once, when that change arrives, to every
    /// device whose deletion it undid.
    static func undoneHere(_ home: Home) -> [String] {
        defer { home.changedByOthers = [:] }
        var out = outdoneHere(home) + arrivedFarAheadHere(home) + forkedHere(home)
        for (key, versions) in home.changedByOthers.sorted(by: { $0.key < $1.key }) {
            let (kind, id) = (key.kind, key.id)
            guard let history = try? home.projector.history(kind: kind, id: id),
                  let mine = history.last(where: { $0.operation == .delete && $0.version.author == home.deviceID })?.version else { continue }
            let after = history.filter { $0.version > mine }
            // Every put since came in now: one that came before brought it
            // back then (and was said then).
            guard !after.contains(where: { $0.version.author == home.deviceID || ($0.operation == .put && !versions.contains($0.version)) }),
                  let back = after.first(where: { $0.operation == .put }) else { continue }
            let by = home.projector.household.members[back.version.author].map { "\"\($0.name)\"" } ?? "device \(back.version.author.short)"
            // A restore writes no field (the record comes back with those it had).
            let how = back.changes.keys.allSatisfy { $0.hasPrefix("$") } ? "restored it," : "changed it, dated after the \(kind == "record" ? "deletion" : "removal"),"
            if kind == "record", let uuid = UUID(text: id), let r = try? home.projector.record(uuid), !r.deleted {
                out.append("famctl: warning: record \(id) (\(r.store)\(r.at.map { " at \(TimeText.shownHere($0))" } ?? "")), which this device deleted, is back: \(by) \(how) "
                           + "and the later change wins on every device. "
                           + "'famctl record show \(id) --history' shows both; 'famctl record delete \(id)' deletes it again.")
            } else if kind == "subject", let focus = FocusKey(id), let s = try? home.projector.subject(focus) {
                let name = s.name.map { "\($0) (\(id))" } ?? id
                out.append("famctl: warning: care subject \(name), which this device removed, is back: \(by) \(how) "
                           + "and the later change wins on every device. 'famctl subject remove \(id)' removes it again.")
            }
        }
        return out
    }

    /// Another device's chain found forked this round (its key signed two
    /// histories: a copy of its home, or a restored backup, written on in
    /// both): its events from the fork point on count on no device, and
    /// what they changed here is undone. Said with the records they named
    /// (a review over Syncthing: records left `record list` unnamed, the
    /// round saying only "fork proofs: 1"). Once for each fork point,
    /// whichever command took the proof in (`sync`, or the reads of
    /// `invite` and `accept`): those said are kept (a review: a per-round
    /// look missed one found by another path).
    static func forkedHere(_ home: Home) -> [String] {
        var out: [String] = []
        let said = Set(((try? home.state.get(.forksSaid)) ?? nil)?.split(separator: ",").map(String.init) ?? [])
        let now = home.forkPoints.map { "\($0.key.hex):\($0.value)" }
        defer { if Set(now) != said { try? home.state.set(.forksSaid, now.sorted().joined(separator: ",")) } }
        for (author, point) in home.forkPoints.sorted(by: { $0.key < $1.key }) where author != home.deviceID && !said.contains("\(author.hex):\(point)") {
            let head = (try? home.log.head(of: author, in: home.family).seq) ?? 0
            var records: [String] = []
            if head >= point {
                for env in (try? home.log.chain(of: author, in: home.family, seqs: point...head)) ?? [] {
                    guard case .body(let body)? = try? home.openBody(env), let r = (try? RecordEvent(body)) ?? nil else { continue }
                    let id = r.record.lowercasedText
                    if !records.contains(id) { records.append(id) }
                }
            }
            let name = home.projector.household.members[author].map { "\(TerminalText.name($0.name)) (\(author.short))" } ?? "device \(author.short)"
            let undone = records.isEmpty ? "none of them named a record"
                : "what they wrote of \(records.count) record(s) is undone here: " + records.prefix(8).joined(separator: ", ") + (records.count > 8 ? ", …" : "")
                    + " ('famctl replay --record ID' shows what each wrote)"
            out.append("famctl: warning: the key of \(name) signed two histories from seq \(point) (a copy of its home, or one restored from a backup, written on in both): "
                       + "its events from there on count on no device; \(undone). That device cannot write any more: it joins again from a new home, and can write them again there.")
        }
        return out
    }

    /// This device's changes the round's events made the family refuse (a
    /// role changed to viewer while it wrote): said, not only listed by status.
    private static func refusedHere(_ home: Home, before: [String: String]) -> [String] {
        let denied = ownDenied(home).filter { before[$0.key] == nil }
        guard !denied.isEmpty else { return [] }
        // Which changes (a user trial: the count alone did not say what to
        // write again): records, care subjects and photos, each once.
        var named: [String] = []
        var records = false
        // In the order this device wrote them.
        let mine = ((try? home.projector.rejections()) ?? []).filter { $0.author == home.deviceID && denied[$0.event.hex] != nil }.sorted { ($0.seq ?? 0) < ($1.seq ?? 0) }
        var more = false
        for r in mine {
            guard named.count < 5 else { more = true; break }
            guard let seq = r.seq,
                  let env = try? home.log.chain(of: home.deviceID, in: home.family, seqs: seq...seq).first,
                  case .body(let body)? = try? home.openBody(env) else { continue }
            let what: String
            if let change = try? RecordEvent(body) {
                records = true
                let counted = (try? home.projector.record(change.record)) ?? nil
                // A put older than every counted one of the record made it:
                // a new record, of which the later changes alone count (a
                // review: it was called "a change", the change that counts).
                let creating = counted.map { Version(env) < $0.created } ?? true
                what = "record \(change.record.lowercasedText) (\(change.store), "
                    + (change.kind == .delete ? "a deletion" : !creating ? "a change" : counted == nil ? "a new record" : "a new record; its later changes alone count") + ")"
            } else if let change = try? SubjectEvent(body) {
                let name = ((try? home.projector.subject(change.focus)) ?? nil)?.name.map { "\($0) (\(change.focus))" } ?? change.focus.description
                what = "care subject \(name) (" + (change.kind == .delete ? "its removal" : "a change") + ")"
            } else if let change = try? PhotoEvent(body) {
                what = "photo \(change.photo.lowercasedText) (" + (change.kind == .delete ? "its deletion" : "added") + ")"
            } else {
                continue
            }
            if !named.contains(what) { named.append(what) }
        }
        // One reason each: those that differ only by the seq they name
        // (one per event written after a removal) said once, counted.
        let groups = Dictionary(grouping: Set(denied.values)) { $0.components(separatedBy: " (seq ").first ?? $0 }
        let reasons = groups.map { prefix, all in all.count == 1 ? all[0] : "\(prefix) (\(all.count) events)" }.sorted()
        let which = named.isEmpty ? "" : " Not counted: " + named.joined(separator: ", ") + (more ? ", …" : "") + "."
        return ["famctl: warning: \(denied.count) of this device's change(s) are not counted by the family: "
            + reasons.joined(separator: "; ") + "." + which + " They stay in the log; 'famctl status' lists them"
            + (records ? ", and 'famctl replay --record ID' shows what a record's change wrote, for a device that may write to write it again." : ".")]
    }

    /// Whether a watch's round did something worth a line: a round that
    /// only wrote back another device's segments, uploaded photos or found
    /// a fork said nothing (a review: only rounds that moved events did).
    static func hasNews(_ r: Round) -> Bool {
        let p = r.pulled
        return !r.warnings.isEmpty || r.published.events > 0 || r.photosUploaded > 0 || p.accepted > 0 || p.forks > 0 || p.repaired > 0 || p.rewritten > 0 || p.gapsFilled > 0
            || p.restoredOthers > 0 || p.copiesRemoved > 0 || p.carried > 0 || !p.refused.isEmpty || !p.misplaced.isEmpty || !p.notYetArrived.isEmpty
            || !p.ownNotRestored.isEmpty || !p.ownDamagedInLog.isEmpty || !p.ownMissingTakenOut.isEmpty || p.ownFolderUnreadable != nil
    }

    /// What `status` shows as the last error (`r_meta.last_error`).
    private static func recordError(_ e: PeerError, _ replicator: Replicator) {
        try? replicator.setMeta("last_error", "\(ISO8601DateFormatter().string(from: Date())) \(e)")
    }

    /// A peer's failure as `sync` reports it: the exit code and what to do.
    /// `probing`: at the WebDAV probe, before the round's first request.
    static func failure(_ e: PeerError, at label: String, probing: Bool) -> CLIError {
        if e.isTransient || e.isOffline || e == .tokenExpired {
            return CLIError(.tempFail, "\(label): \(e)", hint: probing ? "Try again later; nothing was lost." : "Sync again later; nothing was lost.")
        }
        if case .homeNotWritable = e {
            return CLIError(.cantCreate, "\(e)", hint: "Check that this user may write in the home's staging folder (its permissions) and that the home's disk has room; nothing was lost.")
        }
        if let hint = hint(for: e) {
            let code: ExitCode = switch e {
            case .forbidden, .full, .denied: .cantCreate
            default: .dataError
            }
            var error = CLIError(code, "\(label): \(e)", hint: hint + (probing ? "" : " Nothing was lost."))
            if case .loginRefused = e { error.loginRefused = true }
            if case .notACollection = e { error.placeGone = true }
            return error
        }
        return probing
            ? CLIError(.dataError, "\(label): \(e)", hint: "Use a WebDAV server that honours If-Match and If-None-Match.")
            : CLIError(.cantCreate, "\(label): \(e)", hint: "Check that this device can write there (the folder's or server's permissions, a read-only mount, what is in the way); nothing was lost.")
    }

    /// What to do about a peer that refuses this device's login, is not a
    /// collection, is not trusted, forbids or redirects; `nil` for other failures.
    static func hint(for error: PeerError) -> String? {
        switch error {
        case .full:
            "Free some space there (or raise the file-size limit); the next sync writes what this one could not."
        case .loginRefused:
            "Give this server's login in FAMCTL_PEER_USER and FAMCTL_PEER_PASSWORD, or in a netrc file only you can read (FAMCTL_NETRC, else ~/.netrc)."
        case .notAFolder:
            // (famctl makes the folders inside the shared folder, never the shared folder itself: a review.)
            "Move the file or link away: a folder inside the shared folder, the next sync makes again; the shared folder itself, put back (restore or mount it). "
                + "Or give the family another folder ('famctl settings sync --dir PATH'); waiting will not help."
        case .notACollection:
            "Check the URL: it must name a WebDAV collection that exists (a folder the server shares over WebDAV)."
        case .untrustedCertificate:
            "If the server has a certificate of its own (a NAS, a home server), give its CA certificate (PEM) in FAMCTL_PEER_CA_FILE; "
                + "otherwise check that the URL names the server you meant."
        case .forbidden:
            "The server takes the login but does not let it do this: check that it may read and write the shared folder (not a read-only share)."
        case .denied:
            // (A read refused: the generic hint said to check writing.)
            "Check that this user may read the folder (its permissions, its owner: a sync program running as another user writes its files as that user); waiting will not help."
        case .redirected(let why):
            why.contains("the --peer URL to give is")
                ? "Give the family the --peer URL the message names, the collection above the family's folder (famctl follows no redirect: the login would go along): 'famctl settings sync --peer URL' on every device."
                // Somewhere that is not the family's folder (a login page): nothing to give.
                : "famctl follows no redirect (the login would go along): check the URL with the server's owner; once the family's collection has moved, 'famctl settings sync --peer URL' on every device, URL the collection above the family's folder."
        default: nil
        }
    }

    /// Where a file of the family's folder (`AUTHOR/NAME`) is, as its
    /// user finds it: a path in the shared directory, or a URL.
    static func location(of file: String, home: Home) -> String {
        switch Location.stored(in: home) {
        case .directory(let dir): dir + "/" + home.family.description + "/" + file
        case .peer(let url): url + (url.hasSuffix("/") ? "" : "/") + home.family.description + "/" + file
        case .none: file
        }
    }

    /// `oneLine`: the JSON object on one line (a watch prints one a round).
    static func report(_ r: Round, home: Home, json: Bool, oneLine: Bool = false) throws {
        // Where the family's files are, as the lines below say it.
        let (place, fromPlace) = { if case .peer = Location.stored(in: home) { ("on the server", "from the server") } else { ("in the shared folder", "from the shared folder") } }()
        for w in r.warnings { Console.err(w) }
        // The family's events can show, at any round, that this device's
        // join did not count: everything it writes is then rejected.
        let refused = home.refusedJoin
        if let refused {
            Console.err("famctl: warning: this device is not a member of the family: its join was refused (\(refused.reason)); the family rejects its changes")
            Console.err("famctl: \(Home.joinAgainHint)")
        }
        // Removed by the owner (the removal arrived with this round or an
        // earlier one): nothing it writes counts, nothing new is readable.
        let removed = home.isRemoved
        if removed {
            Console.err("famctl: warning: this device was removed from the family: the family rejects what it writes from now on, and what the others write once the new key reaches them is sealed under a key it does not have")
            Console.err("famctl: It keeps the records it had. To take part again, ask the owner for a new invitation and accept it in a new home: 'famctl accept CODE --name NAME --home NEWDIR'.")
        }
        // This device's own chain forked (a copied home, a restored backup
        // written on): its events from the fork on count nowhere, the ones
        // it just wrote included, and it cannot write any more.
        let forkedAt = try home.log.forkPoints(in: home.family)[home.deviceID]
        if let forkedAt {
            Console.err("famctl: warning: " + home.ownForkText(at: forkedAt))
            Console.err("famctl: 'famctl status' shows where they part. " + home.ownForkHint(at: forkedAt))
        }
        // Its own published events taken out of its log, and not read back
        // from its folder this round (the files gone too, or not arrived):
        // it cannot write until they are.
        if forkedAt == nil, let (published, head) = try home.publishedPastLog() {
            Console.err("famctl: warning: this device published its events up to seq \(published), but its log ends at seq \(head), and this round did not read them back \(fromPlace): "
                        + "it cannot write until they are (writing would fork its chain)")
            Console.err("famctl: A later 'famctl sync' reads them once their files are \(place) again. Should they be gone for good, restore \(Home.databaseFile) from a backup of this home that holds them, "
                        + "or \(home.joinAgainClause).")
        }
        // Its own segment is unreadable to the others (a directory in its
        // place, a file made unreadable) and could not be written again:
        // they miss those events until someone clears the way.
        if let why = r.pulled.ownFolderUnreadable {
            let folder = Self.location(of: home.deviceID.hex + "/", home: home)
            Console.err("famctl: warning: this device's own folder \(folder) cannot be read (\(why)): the others may not read the events it published either")
            let path = String(folder.dropLast(folder.hasSuffix("/") ? 1 : 0))
            let fix = if case .peer = Location.stored(in: home) { "ask the server's owner to let this login read it" }
                      else { "give it back its permissions, for example 'chmod u+rwx,go+rx \(ShellWord.quoted(path))', or as the sync engine sets them" }
            Console.err("famctl: To share them again, \(fix); nothing in it is removed or written again meanwhile.")
        }
        for (file, seqs) in r.pulled.ownMissingTakenOut {
            let named = seqs.prefix(5).map(String.init).joined(separator: ", ") + (seqs.count > 5 ? ", …" : "")
            Console.err("famctl: warning: this device's segment \(Self.location(of: file, home: home)) is missing \(fromPlace), and cannot be written again: "
                        + "its event\(seqs.count == 1 ? "" : "s") at seq \(named) \(seqs.count == 1 ? "was" : "were") taken out of this log too. "
                        + "The others miss \(seqs.count == 1 ? "it" : "them"), and wait for \(seqs.count == 1 ? "it" : "them") before any later event of this device: "
                        + "restore \(Home.databaseFile) from a backup of this home that holds \(seqs.count == 1 ? "it" : "them") ('famctl export stores DIR' first saves what the stores hold).")
        }
        for (file, why) in r.pulled.ownNotRestored {
            let location = Self.location(of: file, home: home)
            let seqs = SegmentName(parsing: String(file.split(separator: "/").last ?? "")).map { " (seqs \($0.firstSeq)–\($0.lastSeq))" } ?? ""
            // The reasons name the file and its folder again: said once, above.
            let folder = String(location[..<(location.lastIndex(of: "/") ?? location.endIndex)])
            let reason = why.replacingOccurrences(of: location, with: "the path").replacingOccurrences(of: folder, with: "its folder")
            Console.err("famctl: warning: this device's segment \(location) cannot be read by the others, who miss the events it holds\(seqs): \(reason)")
            Console.err("famctl: Remove or rename what is at that path (or ask the server's owner to): the next 'famctl sync' writes the segment again from this device's log.")
        }
        // Its own segment is gone from the shared folder (or damaged there)
        // and cannot be written again: an event of it is damaged in the log.
        for (file, seq) in r.pulled.ownDamagedInLog {
            let location = Self.location(of: file, home: home)
            let seqs = SegmentName(parsing: String(file.split(separator: "/").last ?? "")).map { " (seqs \($0.firstSeq)–\($0.lastSeq))" } ?? ""
            Console.err("famctl: warning: this device's segment \(location)\(seqs) is missing \(fromPlace) or damaged there, and cannot be written again: "
                        + "the event at seq \(seq) is damaged in this log (its bytes no longer match its id). The others miss these events, and wait for them before any later event of this device.")
            Console.err("famctl: " + damagedOwnHint)
        }
        for photo in r.damagedPhotos {
            Console.err("famctl: warning: the only copy of photo \(photo), on this device, is damaged (its bytes no longer match their hash); it was not uploaded")
            Console.err("famctl: It cannot be recovered from this device: 'famctl photo delete \(photo)', then add it again from the original file.")
        }
        // A round whose writes failed: how many of this device's events wait
        // to go out, rather than a bare "published 0" taken for nothing to send.
        var waiting = 0
        if r.publishFailure != nil {
            let head = try home.log.head(of: home.deviceID, in: home.family).seq
            let published = (try? Replicator.publishedSeq(log: home.log, family: home.family)) ?? 0
            waiting = head > published ? Int(head - published) : 0
        }
        if json {
            Console.json(["published": r.published.events, "waiting": waiting, "segments": r.published.segments, "compacted": r.published.compacted,
                          "filesRead": r.pulled.filesRead, "accepted": r.pulled.accepted, "held": r.pulled.held, "forks": r.pulled.forks, "repaired": r.pulled.repaired, "rewritten": r.pulled.rewritten, "copiesRemoved": r.pulled.copiesRemoved, "carried": r.pulled.carried, "restoredOthers": r.pulled.restoredOthers,
                          "gapsFilled": r.pulled.gapsFilled, "gapsLeft": r.pulled.gapsLeft,
                          "notYetArrived": r.pulled.notYetArrived.map { ["file": $0.0, "reason": $0.1] },
                          "refused": r.pulled.refused.map { ["file": $0.path, "events": $0.events] as [String: Any] },
                          "misplaced": r.pulled.misplaced.map { ["file": $0.path, "reason": $0.note.reason] },
                          "photosUploaded": r.photosUploaded, "notCounted": r.notCounted, "joinRefused": refused?.reason ?? NSNull(), "removed": removed, "forkedAt": forkedAt.map { Int($0) as Any } ?? NSNull(), "damagedPhotos": r.damagedPhotos,
                          "ownNotRestored": r.pulled.ownNotRestored.map { ["file": $0.path, "reason": $0.reason] },
                          "ownFolderUnreadable": r.pulled.ownFolderUnreadable ?? NSNull(),
                          "ownDamagedInLog": r.pulled.ownDamagedInLog.map { ["file": $0.path, "seq": Int($0.seq)] as [String: Any] },
                          "ownMissingTakenOut": r.pulled.ownMissingTakenOut.map { ["file": $0.path, "seqs": $0.seqs.map { Int($0) }] as [String: Any] }] as [String: Any], compact: oneLine)
            return
        }
        Console.out("published \(r.published.events) event(s)\(r.published.segments.isEmpty ? "" : " in \(r.published.segments.count) segment(s)")"
                    + (r.published.compacted > 0 ? ", compacted \(r.published.compacted) small segments" : "")
                    + (waiting > 0 ? "; \(waiting) event(s) of this device wait to go out (see below)" : "")
                    + (r.photosUploaded > 0 ? ", and \(r.photosUploaded) photo(s)" : ""))
        Console.out("pulled \(r.pulled.accepted) new event(s) from \(r.pulled.filesRead - r.pulled.filesNotWhole) file(s)"
                    + (r.pulled.held > 0 ? "; \(r.pulled.held) event(s) wait for earlier ones not arrived yet ('famctl status' shows whose)" : "")
                    + (r.notCounted > 0 ? "; \(r.notCounted) of the others' event(s) not counted by the family ('famctl status' lists why)" : ""))
        if r.pulled.forks > 0 { Console.out("fork proofs: \(r.pulled.forks) (see famctl status)") }
        if r.pulled.gapsFilled > 0 {
            Console.out("put back \(r.pulled.gapsFilled) event(s) missing from the middle of their chains (taken out of this device's log; read again \(fromPlace))")
        }
        if r.pulled.gapsLeft > 0 {
            Console.err("famctl: warning: \(r.pulled.gapsLeft) event(s) are still missing from the middle of their chains ('famctl replay' names their places): no file this round read \(place) put them back"
                        + (r.pulled.notYetArrived.isEmpty ? " (looked for again in an hour)" : " (a file not yet arrived, named above, may)") + ". The stores still hold what they said: do not rebuild. Should no device's folder hold them any more, restore \(Home.databaseFile) from a backup made before they were taken out.")
        }
        if r.pulled.carried > 0 {
            Console.out("wrote \(r.pulled.carried) segment(s) of the other devices' events into the new location (from this device's log)")
        }
        if r.pulled.restoredOthers > 0 {
            Console.out("wrote back \(r.pulled.restoredOthers) segment(s) of other devices missing or damaged \(place) (from this device's log), "
                        + "so that devices joining later get their events")
        }
        if r.pulled.rewritten > 0 {
            Console.out("wrote again \(r.pulled.rewritten) of this device's segment(s) missing \(fromPlace) (from its log)")
        }
        if r.pulled.copiesRemoved > 0 {
            // (Not always another device's doing: an older copy of the folder put back holds them too; a review.)
            Console.out("removed \(r.pulled.copiesRemoved) copy(ies) of this device's events from its folder, beside its own segments, which hold them "
                        + "(written there by other devices while it was away or as the family moved, or an older copy of the folder put back)")
        }
        if r.pulled.repaired > 0 {
            Console.out("repaired \(r.pulled.repaired) of this device's segment(s) found damaged \(place) (written again from its log)")
        }
        for (file, why) in r.pulled.notYetArrived { Console.out("not yet arrived: \(file): \(why)") }
        // The reason `status` says too (a review: the two differed).
        for (file, _, why) in r.pulled.refused { Console.out("refused: \(file): \(why)") }
        // Said once, as found (a fuzz review: only `status` named them).
        for (file, note) in r.pulled.misplaced {
            // Where the file is, whole: what to remove (a review: the path
            // was the family folder's, never named).
            Console.out(note.kind == .damagedConflictCopy ? "leftover: \(file): \(note.reason) (\(Self.location(of: file, home: home)))"
                        : "misplaced: \(file): \(note.reason) (nothing in it was refused; \(note.removal) \(fromPlace): \(Self.location(of: file, home: home)))")
        }
    }
}

extension Home {
    /// `FAMCTL_PEER_CA_FILE`: a PEM file of the certificates to trust for an
    /// `https://` peer in place of the system's (a server with a certificate
    /// of its own).
    static func peerCAFile() throws -> String? {
        // Empty counts as unset, as for FAMCTL_HOME.
        guard let path = ProcessInfo.processInfo.environment["FAMCTL_PEER_CA_FILE"], !path.isEmpty else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
              let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.usage, "FAMCTL_PEER_CA_FILE '\(path)' is not a file famctl can read", hint: "Give the path of the server's CA certificate, in PEM.")
        }
        guard String(decoding: data, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw CLIError(.usage, "FAMCTL_PEER_CA_FILE '\(path)' holds no PEM certificate (no '-----BEGIN CERTIFICATE-----')",
                           hint: "Give the server's CA certificate in PEM (text), not DER or a key.")
        }
        return Home.absolute(path)
    }

    /// How long a WebDAV request may go without a byte, or take to connect,
    /// before it fails: `FAMCTL_PEER_TIMEOUT` seconds (1 to 600), else 20.
    static func peerTimeout() throws -> TimeInterval {
        try seconds(from: "FAMCTL_PEER_TIMEOUT", in: 1...600, unset: 20)
    }

    /// The decimal number of seconds the environment variable `name` gives,
    /// `unset` when it is not set or empty; a value outside `range` (or no
    /// number) is refused with 64, `hint` saying what it sets.
    static func seconds(from name: String, in range: ClosedRange<Double>, unset: Double, hint: String? = nil) throws -> Double {
        guard let text = ProcessInfo.processInfo.environment[name], !text.isEmpty else { return unset }
        guard let s = DecimalText.parse(text), range.contains(s) else {
            throw CLIError(.usage, "\(name) '\(text)' is not a number of seconds from \(Int(range.lowerBound)) to \(Int(range.upperBound))", hint: hint)
        }
        return s
    }

    /// What `sync` says on a device in no family.
    static let inNoFamily = CLIError(.usage, "this device is in no family yet: there is nobody to sync with",
                                     hint: "Create one with 'famctl family create --name NAME --dir PATH', or join one with 'famctl accept CODE --name NAME --dir PATH' (the code from the family's owner).")

    /// The replicator over this family's shared directory or WebDAV peer,
    /// retrying transient failures with back-off.
    /// - Parameter probe: check a WebDAV server's conditional requests first
    ///   (`status` skips it: it must not need the network).
    /// - Parameter withCredentials: `false` builds it without the peer's
    ///   login (`status`, whose sync line must not depend on it).
    /// - Parameter location: another location than the stored one (the
    ///   one a device leaves, for its note).
    func replicator(probe: Bool = true, withCredentials: Bool = true, at location: Location? = nil) throws -> Replicator {
        let r = try Replicator(log: log, peer: peer(probe: probe, withCredentials: withCredentials, at: location), family: family, me: deviceID)
        // The note of the famctl this device runs: left by the rounds at the
        // family's location, not at one it leaves.
        if location == nil { r.versionNote = VersionNote.make(family: family, signer: identity.signing, at: Date(), version: CLI.version) }
        return r
    }

    /// The peer of ``replicator(probe:withCredentials:at:)``, alone (the
    /// old location a move carries photos from).
    func peer(probe: Bool = true, withCredentials: Bool = true, at location: Location? = nil) throws -> RetryingPeer {
        // Read first: a wrong setting is refused before anything is asked.
        let retry = try Self.syncRetrySeconds()
        let base: any Peer
        switch location ?? Location.stored(in: self) {
        case .directory(let dir):
            base = DirectoryPeer(SharedDirectory(root: dir, family: family, staging: path + "/staging"))
        case .peer(let url):
            guard let u = URL(string: url.hasSuffix("/") ? url : url + "/") else { throw CLIError.data("the stored peer URL \(url) is not a URL") }
            let credentials = withCredentials ? try PeerCredentials.find(for: u) : nil
            let allowPlainHTTP = ProcessInfo.processInfo.environment["FAMCTL_PEER_ALLOW_HTTP"] == "1"
            if probe, credentials != nil, !allowPlainHTTP, !WebDAVPeer.protectsCredentials(u) {
                throw CLIError(.usage, "refusing to send the peer's password in clear text over http:// to \(u.host ?? url): anyone on the network path could read it",
                               hint: "Give the family an https:// peer (--peer https://… when it is created or joined), or set FAMCTL_PEER_ALLOW_HTTP=1 to send the password anyway.")
            }
            let timeout = try Self.peerTimeout()
            let webdav = WebDAVPeer(url: u.appendingPathComponent(family.description + "/"), credentials: credentials,
                                    allowPlainHTTP: allowPlainHTTP, timeout: timeout, caFile: try Self.peerCAFile(),
                                    // Ctrl-C in `sync --watch` stops a request at once, not at its timeout.
                                    isCancelled: { SyncCommand.stop.load(ordering: .relaxed) })
            do throws(PeerError) { if probe { try webdav.probe() } } catch {
                throw SyncCommand.failure(error, at: "the peer \(url)", probing: true)
            }
            base = webdav
        case .none:
            throw CLIError(.usage, "no shared directory or peer is set for this family",
                           hint: "'famctl settings sync --dir PATH' or 'famctl settings sync --peer URL' sets one.")
        }
        // Ctrl-C in `sync --watch` also cuts short a wait between retries
        // (a server's `Retry-After`, the back-off), not only a request.
        return RetryingPeer(base, attempts: retry == 0 ? 1 : 8, initialDelay: retry / Self.backOffMultiple,
                            isCancelled: { SyncCommand.stop.load(ordering: .relaxed) })
    }

    /// How long, about, a request to the shared folder or server that keeps
    /// failing is retried with back-off: `FAMCTL_SYNC_RETRY_SECONDS` (a
    /// decimal number from 0 to 40; 0 asks each request once), else about
    /// 25 (a first wait of 0.2 s).
    static func syncRetrySeconds() throws -> Double {
        try seconds(from: "FAMCTL_SYNC_RETRY_SECONDS", in: 0...40, unset: 0.2 * backOffMultiple,
                    hint: "It is how long a sync retries a folder or server that keeps failing (25 when unset); 0 asks each request once.")
    }

    /// The back-off's seven waits, before jitter, are the first wait
    /// times 1, 2, 4 … 64: 127 first waits in all.
    static let backOffMultiple = 127.0

    /// Over a shared folder, refuses to write while this device's own folder
    /// names segments of its chain past what its log holds that no sync of
    /// this home has read: a home restored from a backup older than its last
    /// sync, or another install of this device that wrote since. Writing
    /// would take a seq already taken, a fork; a `sync` reads them back
    /// first. Files read already have their events in the log, in `pending`
    /// or in a fork proof. A file still arriving, cut short or damaged when
    /// a sync met it holds writes back as well, until it reads (a write made
    /// meanwhile forked the chain, hiding both branches' records on every
    /// device); one that never will is removed from the folder by hand, as
    /// the message says. An iCloud placeholder names its events as the file
    /// would. The listing gets a fifth of a second: a shared mount that hangs
    /// (an unreachable NFS server) must not hang an offline write, which
    /// then goes ahead unchecked. Over WebDAV nothing is checked: that would
    /// cost a request per write.
    func checkNotBehindOwnFolder() throws {
        // The log itself says it published further than it holds: events
        // were taken out of it (by hand, or a tool), not a restored backup
        // (which restores that record too).
        if let (published, head) = try publishedPastLog() {
            throw CLIError(.tempFail, "this device published its events up to seq \(published), but its log ends at seq \(head): events were taken out of its log; writing now would fork its chain, and the family would refuse what it writes",
                           hint: "Run 'famctl sync': it reads them back from this device's folder, where they were published. 'famctl replay' audits the log. "
                               + "Should they be gone from there too, restore \(Home.databaseFile) from a backup of this home that holds them, or \(joinAgainClause).")
        }
        // One of its own events not published yet taken out of the log:
        // nothing it writes after can reach the family (a review: sync
        // refused, writes went on). Looked for over the unpublished ones
        // only, and only in a log whose rules were found removed or where
        // a gap was found (no row is taken out otherwise): a write's cost
        // stays what it was.
        let published = (try? Replicator.publishedSeq(log: log, family: family)) ?? 0
        let head = try log.head(of: deviceID, in: family).seq
        if head > published + 1, try log.chainGapsAsked() != nil {
            var expected = published + 1
            var missing: UInt64?
            try log.database.statement("SELECT seq FROM events WHERE family = ?1 AND author = ?2 AND seq > ?3 ORDER BY seq")
                .forEachRow([.blob(family.bytes), .blob(deviceID.bytes), .integer(Int64(published))]) { r in
                    if missing == nil, UInt64(r.int(0)) != expected { missing = expected }
                    expected = UInt64(r.int(0)) + 1
                }
            if let missing {
                throw CLIError(.dataError, "the event at seq \(missing) of this device is missing from its log (taken out of it before it was published): "
                                   + "nothing it writes after it can reach the family; nothing was written", hint: SyncCommand.damagedOwnHint)
            }
        }
        guard let ahead = try ownFolderAhead() else { return }
        // (File names write seqs in hexadecimal: said, so that the name
        // and the number are seen to agree; a review.)
        throw CLIError(.tempFail, "this device's folder holds its events up to seq \(ahead.published) (\(String(format: "%016llx", ahead.published)) in file names: \(ahead.named)), but its log ends at seq \(ahead.head): writing now would fork its chain",
                       hint: ownFolderAheadHint(head: ahead.head))
    }

    /// The last seq this device published, and its log's head, when the
    /// first is past the second (``Replicator/publishedPastLog(log:family:device:)``).
    func publishedPastLog() throws -> (published: UInt64, head: UInt64)? {
        try Replicator.publishedPastLog(log: log, family: family, device: deviceID)
    }

    /// What to do about ``ownFolderAhead()``.
    func ownFolderAheadHint(head: UInt64) -> String {
        "Run 'famctl sync' until that file is read (a sync reads a file that failed again once it changes): this home was restored from an older backup, "
            + "or another install of this device wrote since. If a file never arrives whole (damaged for good, or not a segment at all: anyone who can write in the shared folder can put one there): if no other device read it, remove it "
            + "from the shared folder, and this device goes on from seq \(head + 1); otherwise \(joinAgainClause)."
    }

    /// This device's own folder naming events of its chain past its log
    /// that no sync of this home has read (see ``checkNotBehindOwnFolder()``):
    /// the highest seq named, the file naming it, and the log's head.
    func ownFolderAhead() throws -> FolderAhead? { try folderAhead(of: deviceID) }

    /// Files in a device's folder naming events of its chain past this log,
    /// none read yet: the highest seq they name, the log's head, and the
    /// files, the one naming the highest seq first.
    struct FolderAhead {
        var published: UInt64
        var head: UInt64
        var files: [String]
        /// The files as said: all of them, up to five named (a review: one
        /// named at a time, each removal showed the next).
        var named: String {
            files.count == 1 ? files[0]
                : files.prefix(5).joined(separator: ", ") + (files.count > 5 ? " and \(files.count - 5) more" : "")
        }
    }

    /// `device`'s folder in the shared folder naming events of its chain
    /// past this log that no sync of this home has read (`nil` over WebDAV,
    /// or when the folder cannot be listed at once).
    func folderAhead(of device: DeviceID) throws -> FolderAhead? {
        guard case .directory(let dir) = Location.stored(in: self) else { return nil }
        let folder = dir + "/" + family.description + "/" + device.hex
        guard let names = Self.listQuickly(folder), !names.isEmpty else { return nil }
        let read = Replicator.namesRead(inFolderOf: device, family: family, log: log)
        let head = try log.head(of: device, in: family).seq
        var ahead: [(seq: UInt64, name: String)] = []
        for name in names where !read.contains(name) {
            switch SharedFileName(name) {
            // A placeholder (its bytes not downloaded yet) names its events as well.
            case .segment(let s), .conflictCopy(let s), .placeholder(let s):
                if s.author == device, s.lastSeq > head { ahead.append((s.lastSeq, name)) }
            case .other: continue
            }
        }
        ahead.sort { ($0.seq, $0.name) > ($1.seq, $1.name) }
        guard let first = ahead.first else { return nil }
        return FolderAhead(published: first.seq, head: head, files: ahead.map(\.name))
    }

    /// A file in this device's own folder in the shared folder naming seqs
    /// of its chain that it has not published yet, which no sync of this
    /// home has read: another copy of this home (a backup restored, a
    /// cloned phone) may have published other events at those seqs. The
    /// lowest such seq and the file. A round then reads the folder before
    /// it publishes: should they differ, the fork is found and what this
    /// copy wrote is kept back (``Replicator/PublishReport/withheld``)
    /// rather than shown to the family, which would then stop taking this
    /// device's events from there on, the other copy's too; should the file
    /// not read (an iCloud placeholder, still arriving, damaged), nothing
    /// from that seq on is published until it does or is removed. Over
    /// WebDAV the folder is listed with one request (`peer`); `nil` when it
    /// cannot be listed at once (publishing first, as before).
    func ownFolderUnread(peer: (any Peer)? = nil) -> (seq: UInt64, file: String)? {
        guard let head = try? log.head(of: deviceID, in: family).seq,
              let published = try? Replicator.publishedSeq(log: log, family: family), head > published else { return nil }
        // Its own later events read, but waiting for earlier ones the folder
        // has not delivered: another copy's chain, which may part from this
        // one anywhere past what it published (a review: a copy's later
        // segment arrived first, and this one published its own).
        if (try? log.pendingCount(of: deviceID, in: family, above: head)) ?? 0 > 0 {
            return (published + 1, "")
        }
        // A shared folder listed at once; a WebDAV server with one request
        // (a review: over WebDAV a copy still published its branch first).
        let listed: [String]? = switch Location.stored(in: self) {
        case .directory(let dir): Self.listQuickly(dir + "/" + family.description + "/" + deviceID.hex)
        case .peer: ((try? peer?.namesOnce(in: deviceID.hex)) ?? nil)
        case .none: nil
        }
        guard let names = listed else { return nil }
        let read = Replicator.namesRead(inFolderOf: deviceID, family: family, log: log)
        // Any such file, wherever its seqs begin: the other copy's events
        // before them may not have arrived yet, and its chain may part from
        // this one's anywhere past what this one published.
        let unread = names.filter { name in
            guard !read.contains(name) else { return false }
            switch SharedFileName(name) {
            case .segment(let s), .conflictCopy(let s), .placeholder(let s): return s.author == deviceID && s.lastSeq > published
            case .other: return false
            }
        }
        return unread.min().map { (published + 1, $0) }
    }

    /// What a round or an at-once publish says of events kept back by
    /// ``ownFolderUnread(peer:)`` after the folder was read.
    func unreadOwnFileText(_ held: (seq: UInt64, file: String)) -> String {
        if held.file.isEmpty {
            return "this device's events from seq \(held.seq) on are not published: events of its own chain read from its folder wait for earlier ones that have not arrived: "
                + "another copy of this home wrote them, and publishing would fork its chain. A later sync publishes once they arrive (or finds the fork and says so)"
        }
        return "this device's events from seq \(held.seq) on are not published: its own folder holds \(SyncCommand.location(of: deviceID.hex + "/" + held.file, home: self)), "
            + "which names events of its chain past those it published and cannot be read yet (still arriving, or damaged): another copy of this home may have written them, and publishing would fork its chain. "
            + "A later sync publishes them once it reads whole; if it never does, no other device read it and no other copy of this home exists, remove it from the shared folder"
    }

    /// The names in `folder`, or `nil` when it cannot be listed within a
    /// fifth of a second (missing, unreadable, or a mount that hangs).
    static func listQuickly(_ folder: String) -> [String]? {
        final class Box: @unchecked Sendable { var names: [String]? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            box.names = try? FileIO.list(folder)
            done.signal()
        }
        guard done.wait(timeout: .now() + 0.2) == .success else { return nil }
        return box.names
    }

    /// One round (publish, then pull) over a given peer: for tests with the in-memory emulator.
    func syncRound(over peer: any Peer) throws -> (Replicator.PublishReport, Replicator.PullReport) {
        // (No note of its famctl: the objects these rounds leave are the
        // events' alone, as the tests over the emulator count them.)
        let r = try Replicator(log: log, peer: peer, family: family, me: deviceID)
        let published = try r.publish()
        return (published, try pulling { try r.pull { try ingest(batches: $0, onIngested: $1) } })
    }
}

/// Credentials for a WebDAV peer: `FAMCTL_PEER_USER` and
/// `FAMCTL_PEER_PASSWORD`, else a netrc file (`$FAMCTL_NETRC`, else
/// `~/.netrc`) that only its owner can read. Never from the command line.
enum PeerCredentials {
    /// The netrc file a login is read from (`$FAMCTL_NETRC`, else
    /// `~/.netrc`), when no login is in the environment.
    static func netrcPath(_ env: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard env["FAMCTL_PEER_USER"] == nil, env["FAMCTL_PEER_PASSWORD"] == nil else { return nil }
        if let named = env["FAMCTL_NETRC"], !named.isEmpty { return named }
        return env["HOME"].flatMap { $0.isEmpty ? nil : $0 + "/.netrc" }
    }

    /// What tells a netrc file changed: its modification and change times
    /// and size (`nil`: no such file).
    static func stamp(_ path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return "\(st.st_size)-\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)-\(st.st_ctim.tv_sec).\(st.st_ctim.tv_nsec)"
    }
    static func find(for url: URL, environment env: [String: String] = ProcessInfo.processInfo.environment) throws -> (user: String, password: String)? {
        switch (env["FAMCTL_PEER_USER"], env["FAMCTL_PEER_PASSWORD"]) {
        case (let u?, let p?): return (u, p)
        case (_?, nil), (nil, _?):
            // Half a login would send none, and the server's refusal would not say why.
            throw CLIError(.usage, "FAMCTL_PEER_\(env["FAMCTL_PEER_USER"] == nil ? "PASSWORD" : "USER") is set but FAMCTL_PEER_\(env["FAMCTL_PEER_USER"] == nil ? "USER" : "PASSWORD") is not",
                           hint: "Set both (the server's login), or neither (a netrc file, or no login).")
        case (nil, nil): break
        }
        // Empty variables count as unset (`FAMCTL_NETRC= famctl sync`), and
        // without a home directory there is no default netrc.
        let named = env["FAMCTL_NETRC"].flatMap { $0.isEmpty ? nil : $0 }
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 }
        // A file FAMCTL_NETRC names must be there and be a file: sending no
        // login because of a typo in its path would only show as the
        // server's refusal. (A missing ~/.netrc just means no login.)
        if let named, !FileIO.isRegularFile(named) {
            var isDirectory: ObjCBool = false
            let what = !FileManager.default.fileExists(atPath: named, isDirectory: &isDirectory) ? "which does not exist"
                : isDirectory.boolValue ? "which is a directory, not a netrc file" : "which is not a regular file (a device, a pipe)"
            throw CLIError(.usage, "FAMCTL_NETRC names \(named), \(what)", hint: "Give the path of the netrc file holding this server's login, or unset FAMCTL_NETRC.")
        }
        guard let path = named ?? home.map({ $0 + "/.netrc" }), FileManager.default.fileExists(atPath: path) else { return nil }
        if let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber, mode.intValue & 0o077 != 0 {
            throw CLIError(.dataError, "\(path) is readable by others (mode \(String(mode.intValue & 0o777, radix: 8))); refusing to read passwords from it",
                           hint: "Run 'chmod 600 \(path)'.")
        }
        let words = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(whereSeparator: { $0.isWhitespace }).map(String.init)
        var i = 0
        var machine: String?, login: String?, password: String?
        var found: (String, String)?
        func flush() {
            if machine == url.host || machine == "default", let l = login, let p = password, found == nil || machine == url.host { found = (l, p) }
        }
        while i < words.count {
            switch words[i] {
            case "machine", "default":
                flush()
                machine = words[i] == "default" ? "default" : (i + 1 < words.count ? words[i + 1] : nil)
                login = nil; password = nil
                if words[i] == "machine" { i += 1 }
            case "login": if i + 1 < words.count { login = words[i + 1]; i += 1 }
            case "password": if i + 1 < words.count { password = words[i + 1]; i += 1 }
            default: break
            }
            i += 1
        }
        flush()
        return found
    }
}
