import Envelope
import EventLog
import Foundation
import Replicator
import Projections

/// `famctl status`
enum StatusCommand: Command {
    static let spec = CommandSpec(
        path: ["status"],
        abstract: "Show this device, its family, and the state of its log.")

    /// What status says of sleeps that overlap (a merge of two devices'
    /// changes left them so): a sleep in several pairs (most often one
    /// left without an end) once, with what to do; the other pairs each
    /// on a line, a pair of one sleep logged twice (the same start and
    /// end) with the delete that keeps one; the baby by its name, each
    /// sleep with its start here (a review: six lines of ids for one
    /// forgotten sleep). At most ``overlapLinesShown`` lines, then how
    /// many more and where all are listed (a review: both parents logging
    /// the same naps for a month gave a line a nap).
    static func overlapLines(_ overlaps: [Projector.SleepOverlap], home: Home, subjects: [SubjectState]) -> [String] {
        var partners: [UUID: Set<UUID>] = [:]
        for o in overlaps { partners[o.first, default: []].insert(o.second); partners[o.second, default: []].insert(o.first) }
        func name(_ focus: String) -> String {
            subjects.first { $0.focus.description == focus }?.name.map { "\($0) (\(focus))" } ?? focus
        }
        var records: [UUID: RecordState?] = [:]
        func record(_ id: UUID) -> RecordState? {
            if let known = records[id] { return known }
            let found = try? home.projector.record(id)
            records[id] = found
            return found
        }
        func time(_ id: UUID, _ field: String) -> String? { record(id)?.fields[field]?.stringValue }
        func started(_ id: UUID) -> String { time(id, "start").map { "started \(TimeText.shownHere($0))" } ?? "started ?" }
        // One sleep written on two devices: the same moments, whatever
        // offsets they were written with.
        func moment(_ text: String?) -> Date? { text.flatMap(TimeText.parse) }
        func loggedTwice(_ o: Projector.SleepOverlap) -> Bool {
            guard let start = moment(time(o.first, "start")), start == moment(time(o.second, "start")) else { return false }
            return moment(time(o.first, "end")) == moment(time(o.second, "end"))
        }
        var lines: [String] = [], said = Set<UUID>(), shownMany = Set<UUID>()
        let many = partners.filter { $0.value.count > 1 }.sorted { $0.value.count != $1.value.count ? $0.value.count > $1.value.count : $0.key.lowercasedText < $1.key.lowercasedText }
        for (id, others) in many where !said.contains(id) {
            said.insert(id)
            guard lines.count < Self.overlapLinesShown else { continue }
            shownMany.insert(id)
            let open = record(id).map { $0.fields["end"] == nil || $0.fields["end"] == .null } ?? false
            let focus = record(id)?.focus ?? overlaps.first { $0.first == id || $0.second == id }?.focus ?? "?"
            lines.append("sleeps overlap for \(name(focus)): \(id.lowercasedText) (\(started(id))\(open ? ", no end" : "")) overlaps \(others.count) other sleeps (all kept)"
                + (open ? "; if it ended long before: famctl record update \(id.lowercasedText) end=TIME" : "; 'famctl record show \(id.lowercasedText)' shows it"))
        }
        var hidden = 0, hiddenTwice = 0
        for o in overlaps where !shownMany.contains(o.first) && !shownMany.contains(o.second) {
            let alone = !said.contains(o.first) && !said.contains(o.second)
            if alone && lines.count < Self.overlapLinesShown {
                lines.append("sleeps overlap for \(name(o.focus)): \(o.first.lowercasedText) (\(started(o.first))) and \(o.second.lowercasedText) (\(started(o.second))) (both kept)"
                    + (loggedTwice(o) ? "; one sleep logged twice? keep one: famctl record delete \(o.second.lowercasedText)" : ""))
                continue
            }
            hidden += 1
            if loggedTwice(o) { hiddenTwice += 1 }
        }
        guard hidden > 0 else { return lines }
        let twice = hiddenTwice == 0 ? "" : hiddenTwice == hidden ? (hidden == 1 ? ", one sleep logged twice" : ", each one sleep logged twice") : ", \(hiddenTwice) of them one sleep logged twice"
        return lines + ["… and \(hidden) more pair\(hidden == 1 ? "" : "s") of overlapping sleeps\(twice) (all kept): 'famctl status --json' lists every pair (sleepOverlaps)"]
    }

    /// What an older famctl on another device means, and what to do.
    static let olderFamctlText = "an older famctl keeps the changes it cannot read unapplied until it is upgraded (record changes this one writes among them: it shows their values from before, and its own changes may write over them) and does not follow a move of the family ('famctl settings sync'): upgrade famctl on the devices named"

    /// How another device's famctl compares with this one (its format level).
    enum FamctlAge: String { case older, same, newer }

    /// The famctl each active member other than this device runs, as the
    /// last full listing of the family's location showed it
    /// (``Replicator/versionsSeen()``): its version and level (`nil`: its
    /// folder held segments and no note) and how it compares.
    static func famctlOf(_ home: Home, seenBy replicator: Replicator?) -> [DeviceID: (version: String?, level: UInt32?, age: FamctlAge)] {
        let seen = (try? replicator?.versionsSeen()) ?? [:]
        var out: [DeviceID: (version: String?, level: UInt32?, age: FamctlAge)] = [:]
        for (device, member) in home.projector.household.members where member.isActive && device != home.deviceID {
            guard let known = seen[device.hex] else { continue }
            guard let note = known else { out[device] = (nil, nil, .older); continue }
            let age: FamctlAge = note.level < VersionNote.currentLevel ? .older : note.level > VersionNote.currentLevel ? .newer : .same
            out[device] = (note.version, note.level, age)
        }
        return out
    }

    /// How many lines of overlapping sleeps `status` shows before it counts the rest.
    static let overlapLinesShown = 5

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let (family, key) = try home.currentKey()
        let heads = try home.log.heads(in: family)
        let forks = try home.log.forkProofs()
        let rejected = try home.log.rejectedEvents()
        let pending = try home.log.pendingCount()
        let total = try home.log.count()
        let authors = heads.keys.sorted()
        let subjects = try home.projector.subjects()
        // Records a device added (or changed) for a subject while another
        // removed it, neither having seen the other's change.
        let removedSubjects = Set(try home.projector.subjects(includeRemoved: true).filter(\.removed).map(\.focus.description))
        // Babies of one name (letters' case aside): most often one baby
        // added on two devices before either synced.
        let recordCounts = try home.projector.liveRecordCounts()
        let sameName = try home.sameNameBabies(subjects: subjects, recordCounts: recordCounts)
        let recordCount = recordCounts.values.reduce(0, +)
        let removedCounts = recordCounts.filter { removedSubjects.contains($0.key) }
        let overlaps = try home.projector.sleepOverlaps()
        let deferred = try home.projector.deferredCount()
        let household = home.projector.household
        let denied = try home.projector.rejections()
        let myRole = household.members[home.deviceID].map { $0.isActive ? $0.role.rawValue : "removed" }
        let pendingBy = try home.log.pendingByAuthor(in: family)
        // Where the family syncs, and when it last did, even when the
        // peer's login cannot be read (said beside it: a review found the
        // line gone, as if no peer were set).
        var loginProblem: String?
        let replicator: Replicator? = {
            do { return try home.replicator(probe: false) } catch {
                guard let bare = try? home.replicator(probe: false, withCredentials: false) else { return nil }
                loginProblem = CLIError(error, path: home.path).message
                return bare
            }
        }()
        let unverifiable = (try? replicator?.unverifiable()) ?? []
        // Files read whose events did not all verify, and files read whole
        // that are misplaced (their events taken: nothing was refused) or
        // damaged conflict copies (nothing in them read).
        let filesOfNote = ((try? replicator?.filesOfNote()) ?? []).map { (path: $0.path, reason: $0.note.reason, kind: $0.note.kind, removal: $0.note.removal) }
        let partlyRefused = filesOfNote.filter { $0.kind == .refusedEvents }
        let misplaced = filesOfNote.filter { $0.kind != .refusedEvents }
        // Its own events taken out of its log after they were published.
        let publishedPastLog = try home.publishedPastLog()
        let lastSync = (try? replicator?.lastSync()) ?? nil
        // This device's events not yet in the shared folder or peer.
        let unpublished: Int = replicator == nil ? 0 : {
            var head = (try? home.log.head(of: home.deviceID, in: home.family).seq) ?? 0
            // A copy of this home forked: what it wrote from the fork on never
            // goes out (said below), as `sync` counts it (a review: "the next
            // sync sends them", which published none).
            if let point = try? home.log.forkPoint(of: home.deviceID, in: home.family) { head = min(head, point - 1) }
            let published = (try? Replicator.publishedSeq(log: home.log, family: home.family)) ?? 0
            return head > published ? Int(head - published) : 0
        }()
        let lastError = (try? replicator?.lastError()) ?? nil
        let versions = Self.famctlOf(home, seenBy: replicator)
        // This device's photos whose bytes have not gone out (a review:
        // a failed upload showed as the last error alone).
        let photosWaiting: Int = replicator == nil ? 0 : {
            let live = Set(((try? home.projector.photos()) ?? []).map(\.blob))
            var blobs: [String] = []
            try? home.photoCacheTable()
            try? home.log.database.statement("SELECT blob FROM ph_cache WHERE unpublished = 1").forEachRow { blobs.append($0.text(0)) }
            return blobs.count { live.contains($0) }
        }()
        // Authors of which only events waiting for earlier ones are here
        // (their first event has not arrived): named too, not left out.
        let waitingOnly = pendingBy.filter { heads[$0.key] == nil && $0.value > 0 }.keys.sorted()
        /// How many of `a`'s files have not arrived whole yet.
        func notArrived(_ a: DeviceID) -> Int { unverifiable.count { $0.path.hasPrefix(a.hex) } }
        func name(_ d: DeviceID) -> String { household.members[d]?.name ?? household.refusedJoins[d]?.name ?? (d == home.deviceID ? home.deviceName : "?") }

        // The log's file checked whole (SQLite's quick_check: about 0.3 s
        // at a million events): damaged pages a command never reads let
        // the others go on, and only `replay` said so (a review).
        let logFile = home.path + "/" + Home.databaseFile
        let logDamage = home.log.database.lockedExclusively ? nil : Home.damage(of: logFile)
        if inv.json {
            Console.json([
                "home": home.path, "device": home.deviceID.hex, "name": home.deviceName,
                "logFileDamage": logDamage ?? NSNull(),
                "family": family.description, "epoch": Int(key.epoch), "events": total, "pending": pending,
                "authors": authors.map { a in
                    ["author": a.hex, "name": name(a), "seq": heads[a]!.seq, "last": TimeText.format(heads[a]!.hlc.date), "me": a == home.deviceID,
                     "pending": pendingBy[a] ?? 0, "unverifiable": notArrived(a),
                     "forkedAt": home.forkPoints[a].map { Int($0) as Any } ?? NSNull(),
                     "removedAfter": household.members[a]?.cutoff.map { Int($0) as Any } ?? NSNull(),
                     "famctl": versions[a].map { ["version": $0.version ?? NSNull(), "level": $0.level.map { Int($0) as Any } ?? NSNull(), "compared": $0.age.rawValue] as [String: Any] } ?? NSNull()] as [String: Any]
                } + waitingOnly.map { a in
                    ["author": a.hex, "name": name(a), "seq": 0, "last": NSNull(), "me": false, "pending": pendingBy[a] ?? 0,
                     "unverifiable": notArrived(a), "forkedAt": NSNull(), "removedAfter": NSNull(), "famctl": NSNull()] as [String: Any]
                },
                "lastSync": lastSync ?? NSNull(), "peer": replicator?.peer.label ?? NSNull(), "lastError": lastError ?? NSNull(), "peerLoginProblem": loginProblem ?? NSNull(), "unpublished": unpublished, "photosUnpublished": photosWaiting,
                "storesSetAside": home.storesSetAside(),
                "movedAway": home.movedAway().map { ["author": $0.author.hex, "at": TimeText.format($0.at), "location": $0.location ?? NSNull()] as [String: Any] },
                "notYetArrived": unverifiable.map { ["file": $0.path, "reason": $0.reason] },
                "refusedEvents": partlyRefused.map { ["file": $0.path, "reason": $0.reason] },
                "misplacedFiles": misplaced.map { ["file": $0.path, "reason": $0.reason] },
                "forks": forks.map { ["author": $0.author.hex, "seq": $0.seq] as [String: Any] },
                "forkPoints": home.forkPoints.sorted { $0.key < $1.key }.map { ["author": $0.key.hex, "seq": $0.value] as [String: Any] },
                "rejected": rejected.map { ["id": $0.id.hex, "author": $0.author.hex, "seq": $0.seq, "reason": $0.reason] as [String: Any] },
                "publishedPastLog": publishedPastLog.map { ["published": Int($0.published), "head": Int($0.head)] as Any } ?? NSNull(),
                "rulesRemovedFoundAt": ReplayCommand.rulesRemovedFoundAt(home),
                "subjects": subjects.count, "records": recordCount, "includeShared": home.includeShared,
                "sameNameBabies": sameName,
                "recordsOfRemovedSubjects": removedCounts,
                "sleepOverlaps": overlaps.map { [$0.first.lowercasedText, $0.second.lowercasedText] },
                "deferred": deferred,
                "familyName": household.name ?? NSNull(), "owner": household.owner?.hex ?? NSNull(), "role": myRole ?? NSNull(), "awaitsInvitation": home.awaitsInvitation, "invitationNotMade": home.invitationNeverMade, "joinUnfinished": home.joinIsUnfinished,
                "members": household.members.values.filter(\.isActive).count,
                "unauthorized": denied.map { ["id": $0.event.hex, "author": $0.author.hex, "reason": $0.reason] },
            ] as [String: Any])
            return
        }
        Console.out("device   \(home.deviceID.short) \"\(home.deviceName)\"")
        Console.out("home     \(home.path)")
        if let name = household.name {
            Console.out("family   \"\(name)\" \(family) (key epoch \(key.epoch)); this device: \(myRole ?? (home.invitationMadeByNonOwner.map { "not a member: the invitation it joined with was made by \($0.short), not the owner, and never counts" } ?? (home.invitationNeverMade ? "not a member: " + Home.invitationNotMadeText : home.awaitsInvitation ? "joined, waiting for its invitation" : home.joinIsUnfinished ? "not a member yet: its join is not written (its 'famctl accept' stopped midway; run it again: the records it made before come back with it)" : "not a member"))), \(household.members.values.filter(\.isActive).count) active member(s)")
            if myRole == nil, home.awaitsInvitation { Console.out("waiting  " + Home.awaitingInvitation) }
        } else if home.knownOwner != nil {
            Console.out("family   \(family) (key epoch \(key.epoch)); " + (home.joinIsUnfinished
                ? "not a member yet: its join is not written (its 'famctl accept' stopped midway; run it again: the records it made before come back with it)"
                : "joined, waiting for the family's events"))
        } else {
            Console.out("family   private to this device \(family) (key epoch \(key.epoch)); 'famctl family create' or 'famctl accept' to share")
        }
        Console.out("events   \(total) in the log, \(pending) waiting for earlier events")
        for a in authors {
            let h = heads[a]!
            var line = "  \(a.short) \(TerminalText.name(name(a)))\(a == home.deviceID ? " (this device)" : "")"
            // (Refused for good: not a join waiting for the family's first event or its invitation.)
            if household.members[a] == nil, a != home.deviceID, household.refusedJoin(of: a) != nil { line += " (its join was refused: not a member)" }
            // (As `members` says it: a user review found it only there.)
            if let cutoff = household.members[a]?.cutoff { line += " (removed: its events after seq \(cutoff) do not count)" }
            line += "  seq \(h.seq), last event \(TimeText.format(h.hlc.date))"
            if let p = pendingBy[a], p > 0 { line += ", \(p) waiting for earlier events" }
            // Its key signed two histories: what it signed from there on counts on no device.
            if let point = home.forkPoints[a] { line += ", FORKED at seq \(point) (nothing from there on counts)" }
            if case let u = notArrived(a), u > 0 { line += ", \(u) file(s) not yet arrived" }
            if let v = versions[a], v.age != .same {
                line += v.version.map { ", runs \($0) of format level \(v.level ?? 0), \(v.age.rawValue) than this one (\(VersionNote.currentLevel))" }
                    ?? ", runs an older famctl (its folder holds no note of which: one from before the notes, or the note has not arrived yet)"
            }
            Console.out(line)
        }
        if versions.values.contains(where: { $0.age == .older }) {
            Console.out("  " + Self.olderFamctlText)
        }
        if versions.values.contains(where: { $0.age == .newer }) {
            Console.out("  a newer famctl may write changes this one keeps unapplied until it is upgraded (counted below as record events for stores or schemas this famctl does not know yet): upgrade famctl here")
        }
        for a in waitingOnly {
            var line = "  \(a.short) \(name(a))  no event yet, \(pendingBy[a]!) waiting for earlier events (its first event, seq 1, has not arrived)"
            if case let u = notArrived(a), u > 0 { line += ", \(u) file(s) not yet arrived" }
            Console.out(line)
        }
        if let logDamage {
            Console.out("warning  this device's log file \(logFile) is damaged (\(logDamage)): what its damaged pages hold cannot be read, and 'famctl replay' fails. "
                        + ReplayCommand.logDamageHint)
        }
        if let point = home.forkPoints[home.deviceID] {
            Console.out("warning  " + home.ownForkText(at: point) + ". " + home.ownForkHint(at: point))
        } else if let lost = publishedPastLog {
            Console.out("warning  this device published its events up to seq \(lost.published), but its log ends at seq \(lost.head): events were taken out of its log; "
                        + "it cannot write until 'famctl sync' reads them back from its folder")
        }
        // Stores a rebuild set aside, which may hold changes of this device
        // its log lost: said until the file is removed (a review: said once,
        // by whatever command met the loss, a cron job's sync say).
        for kept in home.storesSetAside() {
            Console.out("warning  \(kept) holds the stores as they were before a rebuild, which may hold changes of this device that its log lost: "
                        + "'famctl sync' first brings back what it had published; then 'famctl export stores DIR --from \(ShellWord.quoted(kept))' writes the records the home still does not hold, "
                        + "for 'famctl import stores DIR', and names those that differ. Remove the file once done.")
        }
        let moved = home.movedAway()
        for m in moved { Console.out("warning  " + home.movedAwayText(m)) }
        if moved.isEmpty, let silence = try? home.familySilence() { Console.out("warning  " + home.familySilenceText(silence)) }
        if let r = replicator {
            // Whether this device's changes are out: after a failed round (a
            // review), and after days offline too, when the others miss them
            // without a word (a review: only JSON said it).
            let waiting = (unpublished == 0 ? "" : "; \(unpublished) event(s) of this device wait to go out" + (lastError == nil ? " (the next 'famctl sync' sends them)" : ""))
                + (photosWaiting == 0 ? "" : "; \(photosWaiting) photo(s) of this device wait to be uploaded")
            Console.out("sync     \(r.peer.label), last round \(lastSync ?? "never")\(lastError.map { "; last error: \($0)" } ?? "")" + waiting
                        + (loginProblem.map { "; its login cannot be read: \($0)" } ?? ""))
        }
        for u in unverifiable { Console.out("  not yet arrived: \(u.path): \(u.reason)") }
        // Someone with the folder wrote (or damaged) events that no member signed.
        for u in partlyRefused {
            // Its seqs all held whole since (its author wrote them again):
            // nothing waits for it any more (a review: "wait for a good
            // copy" went on being said after the repair).
            let waiting = Replicator.waitsForGoodCopy
            if u.reason.hasSuffix(waiting), let name = SegmentName(parsing: String(u.path.split(separator: "/").last ?? "")),
               ((try? home.log.head(of: name.author, in: home.family).seq) ?? 0) >= name.lastSeq {
                Console.out("  refused: \(u.path): \(u.reason.dropLast(waiting.count)); this device holds a good copy of each of its seqs since: "
                            + "the file can be removed from the shared folder: \(SyncCommand.location(of: u.path, home: home))")
                continue
            }
            Console.out("  refused: \(u.path): \(u.reason) (the file is in the shared folder; see docs/security.md)")
        }
        for u in misplaced {
            // A damaged conflict copy is a leftover, its reason says what to do.
            if u.kind == .damagedConflictCopy { Console.out("  leftover: \(u.path): \(u.reason) (\(SyncCommand.location(of: u.path, home: home)))"); continue }
            Console.out("  misplaced: \(u.path): \(u.reason) (nothing in it was refused; \(u.removal) from the shared folder: \(SyncCommand.location(of: u.path, home: home)))")
        }
        Console.out("records  \(recordCount) live, \(subjects.count) care subject\(subjects.count == 1 ? "" : "s"); view: \(home.includeShared ? "whole family" : "this device's own only")")
        for keys in sameName { Console.out("  " + Home.sameNameText(keys, subjects: subjects, recordCounts: recordCounts)) }
        for (focus, n) in removedCounts.sorted(by: { $0.key < $1.key }) {
            Console.out("  \(n) record(s) of the removed care subject \(focus) (written or moved there where its removal had not arrived): "
                        + "'famctl record list --focus \(focus)' lists them; move them with 'famctl record update ID --focus OTHER', or bring it back: famctl subject restore \(focus)")
        }
        for line in Self.overlapLines(overlaps, home: home, subjects: subjects) { Console.out("  " + line) }
        if deferred > 0 { Console.out("  \(deferred) record events for stores or schemas this famctl does not know yet (kept; applied after an upgrade)") }
        // Before the family's first event arrives nothing is decided: the
        // events are judged again when it does (a review over Syncthing,
        // which delivers files in any order).
        // A join whose invitation has not arrived (the sync engine still
        // copying it, or the owner not synced since), and what its device
        // wrote: not counted yet, not denied (a review over Syncthing).
        // Not on the owner's device, which holds every invitation it made;
        // not of an invitation another device made (it never counts); and
        // of this device's own, only while it does wait for it (a review).
        let waitsForInvitation = { (d: Projector.Rejection) -> Bool in
            guard household.owner != home.deviceID, let join = household.refusedJoins[d.author], join.reason.hasPrefix("no such invite"),
                  d.reason.hasPrefix("no such invite") || d.reason == Household.notAMember,
                  home.inviteMadeByNonOwner(join.invite) == nil else { return false }
            return d.author != home.deviceID || home.awaitsInvitation
        }
        let waiting = household.owner == nil ? [] : denied.filter(waitsForInvitation)
        let refused = household.owner == nil ? denied : denied.filter { !waitsForInvitation($0) }
        Console.out("denied   \(refused.isEmpty ? "none" : household.owner == nil ? "\(refused.count) event(s) not counted yet: the family's first event has not arrived (they are judged again when it does)" : "\(refused.count) event(s) not authorized (kept in the log)")")
        for d in refused { Console.out("  \(d.event.short) by \(d.author.short): \(d.reason)") }
        if !waiting.isEmpty {
            Console.out("waiting  \(waiting.count) event(s) not counted yet: of a device whose join names an invitation that has not arrived here (judged again when it does)")
            for d in waiting { Console.out("  \(d.event.short) by \(d.author.short): \(d.reason)") }
        }
        Console.out("forks    \(forks.isEmpty ? "none" : "\(forks.count)")")
        for f in forks { Console.out("  author \(f.author.short) signed two events at seq \(f.seq)") }
        for (author, point) in home.forkPoints.sorted(by: { $0.key < $1.key }) {
            Console.out("  author \(author.short): nothing from seq \(point) on is accepted or shown (what arrived is kept in the log)")
        }
        Console.out("rejected \(rejected.isEmpty ? "none" : "\(rejected.count)")")
        for r in rejected { Console.out("  \(r.id.short) by \(r.author.short) #\(r.seq): \(r.reason)") }
        if case let rules = ReplayCommand.rulesText(home), rules != "in place" { Console.out("warning  the log's append-only rules: " + rules) }
    }
}
