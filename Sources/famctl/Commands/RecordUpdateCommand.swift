import Envelope
import Foundation
import Projections

/// `famctl record update ID field=value ...`
enum RecordUpdateCommand: Command {
    static let spec = CommandSpec(
        path: ["record", "update"],
        abstract: "Change fields of a record; 'field=' clears one. Only the changed fields are written.",
        discussion: """
            Concurrent updates of different fields by different family members both
            survive; for one field the newest write wins (hybrid clock, then device id).
            """,
        options: [
            .value("--at", "TIME", "Change when it happened (ISO-8601 with offset)."),
            .value("--focus", "SUBJECT", "Move the record to another care subject (its focus key or name)."),
            RecordInput.jsonFieldsOption,
        ],
        positionals: [
            PositionalSpec(name: "ID", help: "The record's id, or 6 hex digits or more of its start or end."),
            PositionalSpec(name: "field=value", help: "A field to set, or 'field=' to clear it.", optional: true, repeating: true),
        ])

    /// `a`, `a and b`, `a, b and c`.
    static func joined(_ items: [String]) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + items.last!
    }

    static func run(_ inv: Invocation) throws {
        var inv = inv
        let idText = inv.positionals.removeFirst()
        try RecordInput.checkRecordText(idText, changesFollow: true)
        let home = try Home.open(Home.location(inv))
        let id = try RecordInput.record(idText, home: home, changesFollow: true, deleted: false)
        try home.checkJoinFinished()
        // Under the write lock, the record as read, or it is read again and
        // the change made anew: another process (or a sync) changed it
        // between the read and the lock, and a change checked against the
        // record as it was could bring a deleted record back, or two
        // changes each valid alone leave it breaking its store's rules (a
        // review).
        var (changes, merged): ([String: JSONValue], [String: JSONValue]) = ([:], [:])
        let envs = try home.appendAsRead({ try home.projector.record(id) }, same: ==, changing: "record \(id.lowercasedText)") { (read: RecordState?) in
            guard let current = read else { throw CLIError.noRecord(id, in: home) }
            guard !current.deleted else {
                throw CLIError.data("record \(id.lowercasedText) is deleted", hint: "Bring it back first with 'famctl record restore \(id.lowercasedText)', then update it (or add a new record).")
            }
            let store = try RecordInput.store(current.store)
            // A viewer (or a removed device) is told so first, not that its
            // change changes nothing, nor warned of a field it cannot write.
            try home.checkCanWrite()
            let schema = StoreSchema.schema(for: store)
            let fieldChanges = try RecordInput.fields(inv, schema: schema)
            guard !fieldChanges.isEmpty || inv.value("--at") != nil || inv.value("--focus") != nil else {
                throw CLIError.usage("famctl record update: nothing to change", hint: "Give field=value, field=, --at or --focus.")
            }
            let moveTo = try inv.value("--focus").map { try SubjectInput.subject($0, home: home).focus }
            let newFocus = moveTo.map(\.description).flatMap { $0 == current.focus ? nil : $0 }
            // A change that leaves every value as it is would still be an event
            // (and a version in the record's history): refused, as an empty one is.
            // (A time is the same as the record's when it names the same
            // moment, whatever its offset: this device shows them alike.)
            func same(_ given: JSONValue, _ had: JSONValue?, isTime: Bool) -> Bool {
                guard given != had else { return true }
                guard isTime, let a = given.stringValue.flatMap(TimeValue.parse), let b = had?.stringValue.flatMap(TimeValue.parse) else { return false }
                return a == b
            }
            let sameAt = RecordInput.at(inv).map { same(.string($0), current.at.map(JSONValue.string), isTime: true) } ?? true
            if sameAt, newFocus == nil, fieldChanges.allSatisfy({ name, value in
                if value == .null { return current.fields[name] == nil }
                let isTime = if let spec = schema.field(name), case .time = spec.type { true } else { false }
                return same(value, current.fields[name], isTime: isTime)
            }) {
                // Each field as given (`dirty=true and wet=true, and no note`).
                let had = fieldChanges.keys.sorted().filter { fieldChanges[$0] != .null }.map { "\($0)=\(fieldChanges[$0]!.stringValue ?? fieldChanges[$0]!.jsonText)" }
                let lacked = fieldChanges.keys.sorted().filter { fieldChanges[$0] == .null }.map { $0.isEmpty ? "''" : $0 }
                let listed = [had, lacked.isEmpty ? [] : ["no " + lacked.joined(separator: ", no ")]].filter { !$0.isEmpty }.map(Self.joined)
                throw CLIError.usage("famctl record update: nothing to change: record \(id.lowercasedText) already has "
                                     + (fieldChanges.isEmpty ? (moveTo != nil ? "that care subject" : "that time") : listed.joined(separator: ", and ")),
                                     hint: "'famctl record show \(id.lowercasedText)' shows its values.")
            }
            var all = current.fields
            for (k, v) in fieldChanges { all[k] = v == .null ? nil : v }
            // `at` defaults to `start` (record add): while it still is the old
            // start, it follows a new one, so that lists keep the record in place.
            var newAt = RecordInput.at(inv)
            // (The same moment, written with another offset, is the old start too.)
            if newAt == nil, let start = fieldChanges["start"]?.stringValue, let old = current.fields["start"]?.stringValue, start != old,
               current.at == old || (current.at.flatMap(TimeValue.parse).map { $0 == TimeValue.parse(old) } ?? false) {
                newAt = start
            }
            let at = newAt ?? current.at ?? TimeText.formatLocal(Date())
            let timeChanged = newAt != nil || fieldChanges["start"] != nil || fieldChanges["end"] != nil
            guard let focus = FocusKey(newFocus ?? current.focus) else { throw CLIError.data("record has an invalid focus '\(current.focus)'") }
            let event = RecordEvent(kind: .put, record: id, store: current.store, focus: focus.description, at: newAt, fields: fieldChanges)
            let body = try RecordInput.keepingFocus(event.body, of: id, home: home)
            let brokenBefore = RecordView.brokenRules(current)
            // A sleep a merge left overlapping another: its overlap is not this change's doing either.
            var overlappedBefore: UUID?
            if let currentFocus = FocusKey(current.focus) {
                overlappedBefore = try RecordInput.overlappingSleep(home: home, id: id, store: store, focus: currentFocus, fields: current.fields)?.other
            }
            (changes, merged) = (fieldChanges, all)
            return ([body], {
                do {
                    try RecordInput.validate(home: home, id: id, store: store, focus: focus, at: at, atGiven: newAt != nil,
                                             photosBefore: Set(Home.photoList(current).compactMap { $0.stringValue?.lowercased() }), fields: all, now: timeChanged ? Date() : nil,
                                             overlap: false, written: Set(fieldChanges.keys))
                } catch let e as CLIError where brokenBefore.contains(e.message) {
                    // Not this change's doing: the record broke the rule before
                    // (a merge, or a creating change the family does not count),
                    // and a change must leave it valid.
                    let why = try RecordShowCommand.uncountedChange(of: id, home: home).map { "the change that created it, by \($0.author.short), does not count in the family (\($0.reason))" }
                        ?? "changes made on two devices merged"
                    throw CLIError(e.code, e.message + " (the record already broke this rule: \(why))",
                                   hint: "Give the fields the rule names with this change, e.g. 'famctl record update \(id.lowercasedText) field=value …', to make the record valid.")
                }
                // A sleep a merge left overlapping another: the same overlap is
                // not this change's doing; a new one is refused as usual.
                if fieldChanges["start"] != nil || fieldChanges["end"] != nil || newFocus != nil,
                   let (other, error) = try RecordInput.overlappingSleep(home: home, id: id, store: store, focus: focus, fields: all) {
                    guard other == overlappedBefore else { throw error }
                    throw CLIError(error.code, error.message + " (the record already overlapped it: sleeps written on two devices before they synced)",
                                   hint: "Give this sleep times outside the other with this change (start=… end=…), or correct the other: 'famctl record update \(other.lowercasedText) start=… end=…'.")
                }
                try RecordInput.checkFitsOneEvent(body)
                // The record as a whole must fit in one event too: its export is
                // imported, and it is carried into a family, as one put.
                let whole = RecordEvent(kind: .put, record: id, store: current.store, focus: focus.description, at: at, fields: all).body.encoded().count
                guard whole <= SyncEnvelope.maximumBody else {
                    throw CLIError.data("the record would be too large for one event as a whole: \(whole) bytes encoded, over the limit of \(SyncEnvelope.maximumBody) bytes",
                                        hint: "Shorten its longest fields; pictures go through 'famctl photo add'.")
                }
            })
        }
        // A field whose last write is dated later than this change (a device
        // whose clock is ahead wrote it) keeps that value on every device:
        // the change is written, and said not to show.
        if let after = try home.projector.record(id) {
            var outdone = changes.keys.sorted().filter { name in (after.fields[name] ?? .null) != changes[name]! }
            // Its time too (a clock review: a corrected --at that did not show was said nowhere).
            if let given = RecordInput.at(inv), after.at.flatMap(TimeValue.parse) != TimeValue.parse(given) { outdone.append("its time (--at)") }
            if !outdone.isEmpty {
                let by = OutdoneWrite.author(after.updated.author, home: home)
                Console.err("famctl: warning: \(outdone.joined(separator: ", ")) keep\(outdone.count == 1 ? "s" : "") \(outdone.count == 1 ? "its" : "their") value: the record's last change, by \(by), is dated \(TimeText.format(after.updated.hlc.date)), later than this one; "
                            + "a device whose clock is ahead wrote it (or this device's clock is behind), and the later-dated write wins on every device. This change is in the log ('famctl record show --history')."
                            + (OutdoneWrite.yearsAhead(after.updated.hlc.date, what: "that value").map { " " + $0 } ?? ""))
            }
        }
        // Said when this command gives --at: a start changed alone moves an
        // `at` that followed it, and one set apart before was set so on purpose.
        if let note = RecordInput.atStartNote(at: RecordInput.at(inv), start: merged["start"]?.stringValue) { Console.err(note) }
        if let store = try home.projector.record(id).flatMap({ StoreName(rawValue: $0.store) }) {
            for note in RecordInput.offsetNotes(record: id, given: RecordInput.givenTimes(changes, store: store, at: RecordInput.at(inv))) { Console.err(note) }
            if let note = RecordInput.epdsNote(store: store, fields: merged, given: changes["epds"] != nil && changes["epds"] != .null) { Console.err(note) }
        }
        if inv.json { Console.json(["id": id.lowercasedText, "event": envs[0].id.hex]) } else { Console.out(id.lowercasedText) }
    }
}

/// `famctl record delete ID…`
enum RecordDeleteCommand: Command {
    static let spec = CommandSpec(
        path: ["record", "delete"],
        abstract: "Delete a record: a tombstone event, kept in the log for the audit.",
        discussion: "Several ids are deleted in one step, all or none. 'famctl record restore ID' brings one back, with the fields it had.",
        positionals: [PositionalSpec(name: "ID", help: "The record's id, or 6 hex digits or more of its start or end.", repeating: true)])

    static func run(_ inv: Invocation) throws {
        for text in inv.positionals { try RecordInput.checkRecordText(text) }
        let home = try Home.open(Home.location(inv))
        // A viewer (or a removed device) is told so first, not that a record
        // it has not received is unknown (a review).
        try home.checkCanWrite(quietly: true)
        var ids: [UUID] = []
        for text in inv.positionals {
            let id = try RecordInput.record(text, home: home, deleted: false)
            if !ids.contains(id) { ids.append(id) }
        }
        var records: [RecordState] = []
        for id in ids {
            guard let current = try home.projector.record(id) else { throw CLIError.noRecord(id, in: home) }
            guard !current.deleted else {
                throw CLIError.data("record \(id.lowercasedText) is already deleted" + (ids.count > 1 ? "; nothing was written" : ""))
            }
            records.append(current)
        }
        let events = records.map { RecordEvent(kind: .delete, record: $0.id, store: $0.store, focus: $0.focus, at: nil, fields: [:]).body }
        let envs = try home.append(events) {
            try home.checkCanWrite()
            // Under the write lock: one deleted meanwhile (by another
            // process, or a sync) is not deleted twice.
            for id in ids where try home.projector.record(id)?.deleted != false {
                throw CLIError.data("record \(id.lowercasedText) is already deleted (another famctl process or a sync deleted it meanwhile); nothing was written")
            }
        }
        // Its photos are photos of their own (a photo.put each): they stay,
        // and are still shared, until deleted. Said, not left to be found.
        var kept: [[String]] = []
        for id in ids { kept.append(try home.projector.photos(record: id).map(\.id.lowercasedText).sorted()) }
        // A record whose last change is dated later than this delete stays live.
        let live = try ids.filter { try home.projector.record($0)?.deleted == false }
        for id in live {
            OutdoneWrite.warn("record \(id.lowercasedText)", stays: "stays live", write: "delete", kind: "record", id: id.lowercasedText, home: home)
        }
        if inv.json {
            // `deleted`: false for one a later-dated change keeps live (the warning above).
            let objects = zip(ids, zip(envs, kept)).map { ["id": $0.lowercasedText, "event": $1.0.id.hex, "photosKept": $1.1, "deleted": !live.contains($0)] as [String: Any] }
            // An array whatever the count, as `record restore` prints (a
            // user review: one id gave an object, several an array).
            Console.json(objects)
        } else {
            for id in ids { Console.out(id.lowercasedText) }
            // Said as done, with the way back (a review: the id alone, as
            // `record add` prints, said nothing of a delete) — of the
            // records it deleted only: one that stays live was not (a
            // review: "deleted the record" followed its warning).
            let deleted = ids.filter { !live.contains($0) }
            if !deleted.isEmpty {
                Console.err("famctl: deleted \(deleted.count == 1 ? (ids.count == 1 ? "the record" : "1 record") : "\(deleted.count) records"); 'famctl record restore \(deleted.map(\.lowercasedText).joined(separator: " "))' brings \(deleted.count == 1 ? "it" : "them") back, with \(deleted.count == 1 ? "its" : "their") fields.")
            }
            if !live.isEmpty {
                Console.err("famctl: \(live.count == 1 ? (ids.count == 1 ? "the record was" : "1 record was") : "\(live.count) records were") not deleted (the warning above): \(live.map(\.lowercasedText).joined(separator: " ")).")
            }
        }
        let photos = kept.flatMap { $0 }
        if !photos.isEmpty {
            Console.err("famctl: note: the \(ids.count == 1 ? "record's" : "records'") \(photos.count) photo(s) are not deleted with \(ids.count == 1 ? "it" : "them"); they stay in the family's photos until deleted: "
                        + photos.map { "famctl photo delete \($0)" }.joined(separator: "; "))
        }
    }
}
