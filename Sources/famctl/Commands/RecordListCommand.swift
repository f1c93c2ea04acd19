import Envelope
import Foundation
import Projections

/// `famctl record list [--focus F] [--store S] [--since TIME] [--until TIME] [--last N] [--include-deleted]`
enum RecordListCommand: Command {
    static let spec = CommandSpec(
        path: ["record", "list"],
        abstract: "List records, oldest first by when they happened.",
        discussion: """
            With 'settings include-shared off' only this device's own records are listed.
            --json prints an array of objects: id, store, focus, at, fields, author,
            deleted, updated, updatedBy (and derived values such as the EPDS score).
            --since and --until take a time with its offset or a date (its midnight
            where this device is, TZ): '--since 2026-12-04T00:00:00+01:00 --until 2026-12-05T00:00:00+01:00'
            lists one day in Paris, each record by when it happened.
            '--store feeding --focus Ada --last 1' shows the latest feeding.
            """,
        options: [
            .value("--focus", "F", "Only records of this care subject (its focus key or name)."),
            .value("--store", "S", "Only records of this store."),
            .value("--since", "TIME", "Only records that happened at or after this time (a date alone: its midnight here)."),
            .value("--until", "TIME", "Only records that happened before this time (a date alone: its midnight here)."),
            .value("--last", "N", "Only the N most recent of those records (still oldest first)."),
            .flag("--include-deleted", "Also list deleted records."),
        ])

    static func run(_ inv: Invocation) throws {
        let store = try inv.value("--store").map { try RecordInput.store($0).rawValue }
        let since = try inv.value("--since").map { try TimeText.parse($0, option: "--since") }
        let until = try inv.value("--until").map { try TimeText.parse($0, option: "--until") }
        if let since, let until, until <= since {
            throw CLIError.usage("--until \(inv.value("--until") ?? "") is not after --since \(inv.value("--since") ?? ""): no record can be in between",
                                 hint: "--until names the end of the range, which is left out: '--since 2026-12-04 --until 2026-12-05' is the 4th.")
        }
        let last = try inv.value("--last").map { s -> Int in
            // A whole number too large to count (a review: called not a whole number) lists them all.
            if s.allSatisfy({ ("0"..."9").contains($0) }), s.contains(where: { $0 != "0" }), Int(s) == nil { return .max }
            guard let n = Int(s), n > 0 else {
                throw CLIError.data("--last '\(s)' is not a whole number of records, 1 or more", hint: "For example --last 5: the five most recent.")
            }
            return n
        }
        let home = try Home.open(Home.location(inv))
        if let note = home.unfinishedJoinNote { Console.err(note) }
        let focus = try inv.value("--focus").map { try RecordInput.focus($0, home: home, removed: true).description }
        let query = Projector.RecordQuery(focus: focus, store: store, includeDeleted: inv.flag("--include-deleted"),
                                          creator: home.includeShared ? nil : home.deviceID, since: since, until: until)
        // Streamed: rows read here, each made into its line or JSON item on
        // every core, printed in order as they are ready (a million
        // records held until the end took 409 MB, 4.4 GB as JSON). A
        // damaged row ends the listing with a line saying it is incomplete
        // (the JSON array left open), never a partial list that looks whole.
        let json = inv.json
        // A baby by its name where the name names it alone (`--focus` takes either).
        let labels = json ? [:] : RecordView.focusLabels(try home.projector.subjects())
        let printed = try StreamedListing(json: json, name: "list", unit: "record", empty: nil) { (row: StoredRecordRow) in
            guard let r = try row.state(), query.admits(r) else { return nil }
            return json ? StreamedEntry.item(RecordView.json(r)) : StreamedEntry.line(RecordView.line(r, labels: labels))
        }.print { add in
            if let last {
                // The most recent first, until enough, then printed in order.
                for row in try home.projector.lastRecordRows(query, count: last) { try add(row) }
            } else {
                try home.projector.forEachRecordRow(query) { try add($0) }
            }
        }
        // Nothing listed: said on stderr (standard output stays empty for
        // scripts), so that "no records" is not mistaken for a command that
        // did nothing.
        if printed == 0, !json {
            let filtered = focus != nil || store != nil || since != nil || until != nil
            Console.err("famctl: no records" + (filtered ? " match" : "") + (home.includeShared ? "" : " (the view shows this device's own records only: 'famctl settings include-shared on' shows the family's)"))
        }
    }
}

/// `famctl record show ID [--history]`
enum RecordShowCommand: Command {
    static let spec = CommandSpec(
        path: ["record", "show"],
        abstract: "Show one record; with --history, every version of it.",
        options: [.flag("--history", "Also show each version: who wrote it, when, and which fields.")],
        positionals: [PositionalSpec(name: "ID", help: "The record's id, or 6 hex digits or more of its start or end.")])

    static func run(_ inv: Invocation) throws {
        try RecordInput.checkRecordText(inv.positionals[0])
        let home = try Home.open(Home.location(inv))
        let id = try RecordInput.record(inv.positionals[0], home: home)
        guard let r = try home.projector.record(id) else { throw CLIError.noRecord(id, in: home) }
        let history = inv.flag("--history") ? try home.projector.history(id) : []
        var problems = RecordView.brokenRules(r)
        // A sleep a merge left overlapping another of the same baby (both kept).
        if !r.deleted, r.store == StoreName.sleep.rawValue, let start = StoreSchema.time(r.fields["start"]),
           let other = try home.projector.overlappingSleep(focus: r.focus, start: start, end: StoreSchema.time(r.fields["end"]), excluding: id) {
            problems.append("sleep.start,end: overlaps sleep \(other.id.lowercasedText) of the same baby (\(other.fields["start"]?.description ?? "?") – \(other.fields["end"]?.description ?? "open"))")
        }
        // The record's photos list is one field: two devices adding a photo
        // at once each wrote a list, and one list won. The photo the other
        // names is still the record's (its photo.put says so).
        // The family's photos, read once (deleted ones too).
        let photos = r.deleted ? [] : try home.projector.photos(includeDeleted: true)
        let unlisted = Home.photosNotListed(by: r, id: id, among: photos).sorted()
        // A photo deleted on one device while another brought the record
        // back: the restore's list, which names it, won (the delete wrote
        // no list). It takes no room, and the next list written drops it.
        let deletedIDs = Set(photos.filter(\.deleted).map(\.id.lowercasedText)), known = Set(photos.map(\.id.lowercasedText))
        let listedTexts = r.deleted ? [] : Home.photoList(r).compactMap(\.stringValue)
        let deletedListed = listedTexts.filter { deletedIDs.contains($0.lowercased()) }
        // Ids that name no photo here (a record imported from another
        // home's export, or a photo whose metadata has not arrived yet).
        let unknownListed = listedTexts.filter { !known.contains($0.lowercased()) }
        // A deleted record shows no fields; what a restore brings back is shown beside it.
        let before = r.deleted ? try home.projector.heldFields(id) : [:]
        if inv.json {
            var o = RecordView.json(r)
            if r.deleted { o["fieldsBeforeDeletion"] = before.mapValues(RecordView.any) }
            if inv.flag("--history") { o["history"] = history.map(HistoryView.json) }
            if !problems.isEmpty { o["brokenRules"] = problems }
            if !unlisted.isEmpty { o["photosNotListed"] = unlisted }
            if !deletedListed.isEmpty { o["photosDeleted"] = deletedListed }
            if !unknownListed.isEmpty { o["photosUnknown"] = unknownListed }
            Console.json(o)
            return
        }
        let labels = RecordView.focusLabels(try home.projector.subjects())
        Console.out(RecordView.line(r, labels: labels))
        if r.deleted, !before.isEmpty {
            // Its subject removed since: the restore waits for it.
            let subjectRemoved = FocusKey(r.focus).map { focus in ((try? home.projector.subject(focus)) ?? nil) == nil } ?? false
            Console.err("famctl: note: deleted; its fields before: \(RecordView.fieldsText(RecordView.shownHere(before, store: r.store))) ("
                        + (subjectRemoved ? "its care subject \(r.focus) is removed: 'famctl subject restore \(r.focus)', then 'famctl record restore \(id.lowercasedText)' brings them back)"
                                          : "'famctl record restore \(id.lowercasedText)' brings them back)"))
        }
        let moves = try HistoryView.moves(history, home: home)
        for (i, h) in history.enumerated() {
            // The subject moved to named as the record line names it (a review).
            Console.out("  " + HistoryView.line(h, home: home, store: r.store, after: i > 0 ? history[i - 1] : nil) + (moves[i].map { "  (moved to \(labels[$0] ?? $0))" } ?? ""))
        }
        // Each change was checked when it was written; changes made on two
        // devices at once can merge into a record that breaks a rule, and so
        // can a change left without the record's first one, which the family
        // does not count (its author's join refused, or its author removed).
        if !problems.isEmpty {
            if let first = try Self.uncountedChange(of: id, home: home) {
                Console.err("famctl: warning: the record breaks its store's rules: \(problems.joined(separator: "; ")): the change that created it, by \(first.author.short), "
                            + "does not count in the family (\(first.reason)), and what is left is the later changes alone. "
                            + "'famctl replay --record \(id.lowercasedText)' shows what that change wrote; write it again with 'famctl record update \(id.lowercasedText) field=value …', "
                            + "or remove what is left with 'famctl record delete \(id.lowercasedText)'.")
            } else {
                // Two sleeps written on two devices before they synced overlap
                // with no record's changes merged (a review: "merged" misled).
                let overlapOnly = problems.allSatisfy { $0.hasPrefix("sleep.start,end: overlaps sleep ") }
                let why = overlapOnly ? "sleeps written on two devices before they synced" : "changes made on two devices merged"
                Console.err("famctl: warning: the record breaks its store's rules (\(why)): \(problems.joined(separator: "; ")); "
                            + "fix it with 'famctl record update \(id.lowercasedText) field=value …'.")
            }
        }
        let live = listedTexts.filter { !deletedIDs.contains($0.lowercased()) }
        if !unknownListed.isEmpty {
            let one = unknownListed.count == 1
            Console.err("famctl: note: \(unknownListed.count) id\(one ? "" : "s") in this record's photos list name\(one ? "s" : "") no photo on this device "
                        + "(\(unknownListed.joined(separator: ", "))): brought by 'import stores' from another home's export, whose photos it does not bring, or not arrived yet "
                        + "('famctl sync' brings those). 'famctl record update \(id.lowercasedText) photos=\(Self.once(live.filter { known.contains($0.lowercased()) }).joined(separator: ","))' drops \(one ? "it" : "them").")
        }
        if !deletedListed.isEmpty {
            let one = deletedListed.count == 1
            Console.err("famctl: warning: photo\(one ? "" : "s") \(deletedListed.joined(separator: ", ")) in this record's photos list \(one ? "was" : "were") deleted "
                        + "(the list was written where the deletion had not arrived: on another device before it saw it, or by an import): 'famctl record update \(id.lowercasedText) photos=\(Self.once(live + unlisted).joined(separator: ","))' "
                        + "drops \(one ? "it" : "them") from the list, and so does the record's next 'photo add' or 'photo delete'.")
        }
        if !unlisted.isEmpty {
            let all = Self.once(live + unlisted)
            Console.err("famctl: warning: photo\(unlisted.count == 1 ? "" : "s") \(unlisted.joined(separator: ", ")) of this record \(unlisted.count == 1 ? "is" : "are") not in its photos list "
                        + "(a list was written without \(unlisted.count == 1 ? "it" : "them"): by 'record update … photos=' or an import, or by two devices adding photos at once, where one list won): "
                        + Self.putBack(id, store: r.store, all: all, one: unlisted.count == 1) + ", and 'famctl photo delete ID' deletes a photo for good.")
        }
    }
}

extension RecordShowCommand {
    /// The `record update` that lists `all` the record's photos again, or,
    /// when they are more than its store's list holds (two devices each
    /// added the last place's photo), what to delete first (a review: the
    /// command given was refused).
    static func putBack(_ id: UUID, store: String, all: [String], one: Bool) -> String {
        guard let max = Home.photoLimit(store: store), all.count > max else {
            return "'famctl record update \(id.lowercasedText) photos=\(all.joined(separator: ","))' puts \(one ? "it" : "them") back"
        }
        return "a \(store) record lists at most \(max) photos, and it has \(all.count): 'famctl photo delete ID' \(all.count - max) of them first "
            + "('famctl photo list --record \(id.lowercasedText)' lists them), then 'famctl record update \(id.lowercasedText) photos=ID,…' with the \(max) to keep puts \(one ? "it" : "them") back"
    }
    /// `ids` without repeats (a list an older famctl or a merge wrote may
    /// name a photo twice), first place kept.
    static func once(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0.lowercased()).inserted }
    }

    /// A change of record `id` that the family does not count and that
    /// created it (a put older than every counted one), with why: read from
    /// the rejected events' bodies, the first 1 000 of them at most.
    static func uncountedChange(of id: UUID, home: Home) throws -> (author: DeviceID, reason: String)? {
        let created = try home.projector.record(id)?.created
        func creates(_ env: SyncEnvelope, _ body: EventBody) -> Bool {
            guard let change = try? RecordEvent(body) else { return false }
            return change.record == id && change.kind == .put && (created.map { Version(env) < $0 } ?? true)
        }
        if let rejected = try home.firstUncountedChange(where: creates) { return rejected }
        // Or left out past its author's fork point (kept in the log, in no
        // projection): a security review found the record's breach blamed
        // on a merge. The forked chains' events past their points are few.
        for (author, point) in home.forkPoints.sorted(by: { $0.key.hex < $1.key.hex }) {
            let head = try home.log.head(of: author, in: home.family).seq
            guard head >= point else { continue }
            for env in try home.log.chain(of: author, in: home.family, seqs: point ... min(head, point + 9_999)) {
                guard case .body(let body)? = try? home.openBody(env), creates(env, body) else { continue }
                return (author, "its author's chain is forked from seq \(point) on, and its events from there are left out on every device")
            }
        }
        return nil
    }
}

/// A record's trail, as `record show --history` and `replay --record` print it.
enum HistoryView {
    /// The versions of a trail (oldest first) that moved the record to
    /// another subject, each with that subject: a put naming another subject
    /// than the one the record had, that does not say it keeps the subject
    /// it names (``PreparedChange/focusSince``: an edit made on a device that
    /// had not yet seen a move names the subject from before it, and moves
    /// nothing). The bodies say which: read from the log in one pass over
    /// it, and only for a trail whose puts name more than one subject.
    static func moves(_ history: [HistoryEntry], home: Home) throws -> [Int: String] {
        func focus(_ h: HistoryEntry) -> String? { if case .string(let f)? = h.changes["$focus"] { f } else { nil } }
        // A trail whose puts all name one subject moved nothing; otherwise
        // each put after the first may have (the bodies say which did).
        let puts = history.indices.filter { history[$0].operation == .put && focus(history[$0]) != nil }
        guard Set(puts.compactMap { focus(history[$0]) }).count > 1 else { return [:] }
        // Which of them keep their subject (a body with `focusSince`).
        var keeps = Set<EventID>()
        let wanted = Set(puts.dropFirst().map { history[$0].event })
        for env in try home.log.envelopes(wanted) {
            guard case .body(let body)? = try? home.openBody(env) else { continue }
            if body.object[PreparedChange.focusSinceKey] != nil { keeps.insert(env.id) }
        }
        var out: [Int: String] = [:]
        var current: String?
        for (i, h) in history.enumerated() where h.operation == .put {
            guard let f = focus(h) else { continue }
            guard let c = current else { current = f; continue }
            if c != f, !keeps.contains(h.event) { out[i] = f; current = f }
        }
        return out
    }

    static func json(_ h: HistoryEntry) -> [String: Any] {
        ["event": h.event.hex, "author": h.version.author.hex, "hlc": TimeText.format(h.version.hlc.date),
         "counter": Int(h.version.hlc.counter), "op": h.operation.rawValue,
         "fields": h.changes.filter { !$0.key.hasPrefix("$") }.mapValues(RecordView.any),
         "at": { if case .string(let at)? = h.changes["$at"] { at } else { NSNull() } }() as Any,
         "focus": { if case .string(let f)? = h.changes["$focus"] { f } else { NSNull() } }() as Any]
    }

    /// - Parameter after: the version before it in the trail (a put after
    ///   a delete that changes nothing brought the record back: said so).
    /// - Parameter store: the record's, whose time fields are shown in this
    ///   device's time zone, as its `at` is.
    static func line(_ h: HistoryEntry, home: Home?, store: String? = nil, after previous: HistoryEntry? = nil) -> String {
        var who = h.version.author.short
        if let name = home?.projector.household.members[h.version.author]?.name { who += " \(TerminalText.name(name))" }
        if h.version.author == home?.deviceID { who += " (this device)" }
        var s = "\(TimeText.format(h.version.hlc.date))  \(who)  \(h.operation.rawValue)  event \(h.event.short)"
        let f = h.changes.filter { !$0.key.hasPrefix("$") }
        if h.operation == .put {
            // When it happened, as this version says (a change of `--at` alone is a change too).
            if case .string(let at)? = h.changes["$at"] { s += "  at \(TimeText.shownHere(at))" }
            let restore = previous?.operation == .delete ? "brought back, with the fields it had" : nil
            let shown = store.map { RecordView.shownHere(f, store: $0) } ?? f
            s += "  " + (f.isEmpty ? "(\(restore ?? "no field changes"))" : RecordView.fieldsText(shown, cleared: " (cleared)") + (restore.map { "  (\($0))" } ?? ""))
        }
        return s
    }
}
