import Envelope
import Foundation
import Projections

/// `famctl subject add baby|pregnancy|newMom [--name N] [--birth DATE] [--sex S] [--due DATE]`
enum SubjectAddCommand: Command {
    static let spec = CommandSpec(
        path: ["subject", "add"],
        abstract: "Add a care subject (a baby, the pregnancy, the new mom) and print its focus key.",
        discussion: """
            A baby gets a new key baby:<UUID>; 'pregnancy' and 'newMom' have fixed keys
            (adding one again updates it). Records can only be added for a subject
            that exists. 'famctl subject update' changes a subject, 'famctl subject
            remove' removes one.
            """,
        options: SubjectInput.options,
        positionals: [PositionalSpec(name: "KIND", help: "baby, pregnancy or newMom.")])

    static func run(_ inv: Invocation) throws {
        guard let kind = SubjectKind(rawValue: inv.positionals[0]) else {
            // Words a parent uses for a kind (a review: `mom` got no suggestion).
            let word = inv.positionals[0].lowercased()
            let meant = ["mom", "mum", "mother", "mama", "mommy", "mummy", "postpartum"].contains(word) ? "newMom"
                : ["pregnant", "bump", "expecting"].contains(word) ? "pregnancy"
                : ["infant", "newborn", "child", "kid", "toddler", "son", "daughter"].contains(word) ? "baby" : nil
            throw CLIError.data("'\(inv.positionals[0])' is not a kind of care subject",
                                hint: ValueHint.otherCase(inv.positionals[0], among: SubjectKind.allCases.map(\.rawValue))
                                    ?? meant.map { "Did you mean \($0)? The kinds are baby, pregnancy and newMom (the mother after the birth)." }
                                    ?? "Use baby, pregnancy or newMom.")
        }
        let fields = try SubjectInput.fields(inv, kind: kind, clearing: false)
        let focus: FocusKey = switch kind {
        case .baby: .baby(UUID())
        case .pregnancy: .pregnancy
        case .newMom: .newMom
        }
        let home = try Home.open(Home.location(inv))
        // A second baby of the same name is most often the first one added
        // again (on another device, or by a second try): said, not refused
        // (twins' names may be alike in a nickname).
        // (The one of exactly that name first, then one in other letters' case.)
        let same = kind == .baby ? try fields["name"]?.stringValue.flatMap { name in
            let babies = try home.projector.subjects().filter { $0.kind == .baby }
            return babies.first { $0.name == name } ?? babies.first { $0.name?.lowercased() == name.lowercased() }
        } : nil
        // The pregnancy or the new mom added again after a removal: a new
        // one, not the old one back (a put brings a subject back whole, so
        // the fields it held and this add does not give are cleared).
        // Added again while it is there: an update, said when it changes a
        // value the subject had (a second phone's 'subject add newMom --name
        // Mom' renamed "Mei" without a word).
        let live = kind == .baby ? nil : try home.projector.subject(focus)
        let changed = live.map { s in fields.keys.sorted().filter { s.fields[$0] != nil && s.fields[$0] != fields[$0] } } ?? []
        var written = fields
        if kind != .baby, let old = try home.projector.subjects(includeRemoved: true).first(where: { $0.focus == focus && $0.removed }) {
            for name in old.fields.keys where written[name] == nil { written[name] = .null }
        }
        try home.append([SubjectEvent(focus: focus, fields: written).body]) { try home.checkCanWrite() }
        if let same {
            Console.err("famctl: warning: a baby named \(same.name ?? "") was already a care subject (\(same.focus)); this added another, \(focus). "
                        + "If it is the same baby: famctl subject remove \(focus)")
        }
        if let live, !changed.isEmpty {
            Console.err("famctl: warning: \(focus) was already a care subject; adding it again changed its "
                        + changed.map { "\($0) from \(live.fields[$0]!.stringValue ?? live.fields[$0]!.jsonText) to \(fields[$0]!.stringValue ?? fields[$0]!.jsonText)" }.joined(separator: ", ")
                        + " ('famctl subject update \(focus) …' is the way to change it; the change is in the log)")
        }
        // A new due date on the pregnancy that has records: one pregnancy at
        // a time, so those of the one before are listed as this one's (a
        // review: nothing said so).
        if focus == .pregnancy, live != nil, changed.contains("due") { try Self.warnOfEarlierPregnancyRecords(home) }
        if inv.json { Console.json(["focus": focus.description, "kind": kind.rawValue]) } else { Console.out(focus.description) }
    }
}

extension SubjectAddCommand {
    /// A new due date on the pregnancy that has records: one pregnancy at
    /// a time, so those of the one before are listed as this one's (a
    /// review: nothing said so), whether `subject add` or `subject update`
    /// gave it.
    static func warnOfEarlierPregnancyRecords(_ home: Home) throws {
        let earlier = try home.projector.records(.init(focus: FocusKey.pregnancy.description))
        guard !earlier.isEmpty else { return }
        Console.err("famctl: warning: the pregnancy has \(earlier.count) record(s) written before this due date (kicks, checkups…); they stay under it and are listed as this pregnancy's. "
                    + "To keep them apart: 'famctl export stores DIR' keeps a copy of them, then 'famctl subject remove pregnancy --with-records' and 'famctl subject add pregnancy --due DATE' start the new one without them.")
    }
}

/// `famctl subject update FOCUS [--name N] [--birth DATE] [--sex S] [--due DATE]`
enum SubjectUpdateCommand: Command {
    static let spec = CommandSpec(
        path: ["subject", "update"],
        abstract: "Change a care subject's name, birth date, sex or due date; an empty value clears one.",
        discussion: """
            Only the changed fields are written; concurrent changes of different fields
            by different family members both survive, as with records.
            """,
        options: SubjectInput.options,
        positionals: [PositionalSpec(name: "SUBJECT", help: "Its focus key (baby:<UUID>, pregnancy, newMom) or its name.")])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        try home.checkJoinFinished()
        let subject = try SubjectInput.subject(inv.positionals[0], home: home)
        let changes = try SubjectInput.fields(inv, kind: subject.kind, clearing: true)
        try home.checkCanWrite()
        guard !changes.isEmpty else {
            throw CLIError.usage("famctl subject update: nothing to change", hint: "Give \(SubjectInput.optionNames(subject.kind)); an empty value ('--name \"\"') clears one.")
        }
        guard !changes.allSatisfy({ name, value in value == .null ? subject.fields[name] == nil : subject.fields[name] == value }) else {
            throw CLIError.usage("famctl subject update: nothing to change: \(subject.focus) already has those values",
                                 hint: "'famctl subject list --json' shows them.")
        }
        let envs = try home.append([SubjectEvent(focus: subject.focus, fields: changes).body]) {
            try home.checkCanWrite()
            guard try home.projector.subject(subject.focus) != nil else { throw SubjectInput.removedMeanwhile(subject.focus) }
        }
        if subject.focus == .pregnancy, let due = changes["due"], due != .null, subject.fields["due"] != nil, subject.fields["due"] != due {
            try SubjectAddCommand.warnOfEarlierPregnancyRecords(home)
        }
        // A baby renamed to another baby's name: most often a slip (`add` says the same).
        if subject.kind == .baby, let name = changes["name"]?.stringValue,
           let same = try home.projector.subjects().first(where: { $0.focus != subject.focus && $0.kind == .baby && $0.name?.lowercased() == name.lowercased() }) {
            Console.err("famctl: warning: \(same.focus) is a baby named \(same.name ?? name) too; the two are told apart by their keys.")
        }
        // A field whose last write is dated later than this change keeps that value.
        if let after = try home.projector.subject(subject.focus),
           !changes.allSatisfy({ name, value in (after.fields[name] ?? .null) == value }) {
            OutdoneWrite.warn(subject.focus.description, stays: "keeps its values", write: "change", kind: "subject", id: subject.focus.description, home: home)
        }
        if inv.json { Console.json(["focus": subject.focus.description, "event": envs[0].id.hex]) } else { Console.out(subject.focus.description) }
    }
}

/// `famctl subject restore SUBJECT`
enum SubjectRestoreCommand: Command {
    static let spec = CommandSpec(
        path: ["subject", "restore"],
        abstract: "Bring back a removed care subject, with the fields it had.",
        discussion: """
            The records deleted with it ('subject remove --with-records') stay deleted;
            'famctl record list --focus KEY --include-deleted' lists them, and
            'famctl record restore ID …' brings them back.
            """,
        positionals: [PositionalSpec(name: "SUBJECT", help: "Its focus key or its name ('famctl subject list --removed' shows them).")])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        try home.checkJoinFinished()
        let subject = try SubjectInput.removedSubject(inv.positionals[0], home: home)
        // A put newer than the removal: the subject is back, whole.
        let envs = try home.append([SubjectEvent(focus: subject.focus, fields: [:]).body]) {
            try home.checkCanWrite()
            guard try home.projector.subject(subject.focus) == nil else {
                throw CLIError(.tempFail, "care subject \(subject.focus) was brought back meanwhile (a sync); nothing was written")
            }
        }
        if try home.projector.subject(subject.focus) == nil {
            OutdoneWrite.warn(subject.focus.description, stays: "stays removed", write: "restore", kind: "subject", id: subject.focus.description, home: home)
        }
        if inv.json { Console.json(["focus": subject.focus.description, "event": envs[0].id.hex]) } else { Console.out(subject.focus.description) }
        // Brought back beside a live baby of its name (a review: said nothing).
        for w in home.sameNameWarnings() where w.contains(subject.focus.description) { Console.err(w) }
        // Its deleted records stay deleted: said, with the way back.
        let deleted = try home.projector.records(.init(focus: subject.focus.description, includeDeleted: true)).filter(\.deleted)
        if !deleted.isEmpty {
            Console.err("famctl: note: its \(deleted.count) deleted record(s) stay deleted; 'famctl record list --focus \(subject.focus) --include-deleted' lists them, "
                        + "and 'famctl record restore ID …' brings back those you want.")
        }
    }
}

/// `famctl subject remove FOCUS [--with-records]`
enum SubjectRemoveCommand: Command {
    static let spec = CommandSpec(
        path: ["subject", "remove"],
        abstract: "Remove a care subject (a tombstone event, kept in the log for the audit).",
        discussion: """
            A subject that still has records is kept unless --with-records is given,
            which deletes its records in the same step, or --move-records-to, which
            moves them to another subject (a baby added twice: its records go to the
            one kept). Adding the pregnancy or the new mom again adds a new one; a
            change of the subject written on a device that had not seen the removal,
            dated after it, brings the old one back ('famctl subject restore' too).
            """,
        options: [
            .flag("--with-records", "Delete the subject's records too."),
            .value("--move-records-to", "SUBJECT", "Move the subject's records to this one (its focus key or name)."),
        ],
        positionals: [PositionalSpec(name: "SUBJECT", help: "Its focus key (baby:<UUID>, pregnancy, newMom) or its name.")],
        choices: [OptionChoice(names: ["--with-records", "--move-records-to"])])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        try home.checkJoinFinished()
        let subject = try SubjectInput.subject(inv.positionals[0], home: home)
        func liveRecords() throws -> [RecordState] { try home.projector.records(.init(focus: subject.focus.description)) }
        let withRecords = inv.flag("--with-records")
        let target = try inv.value("--move-records-to").map { try SubjectInput.subject($0, home: home, excluding: subject.focus) }
        if let target, target.focus == subject.focus {
            throw CLIError.usage("--move-records-to names \(subject.focus), the subject being removed", hint: "Name the subject its records go to.")
        }
        // A viewer (or a removed device) is told so first, not how to deal with the records.
        try home.checkCanWrite()
        // Its records as read, or read again and the removal made anew: a
        // record added to the subject, changed, deleted or moved meanwhile (another
        // process, a sync) would be left out or undone (it used to give
        // up at once, exit 75).
        var records: [RecordState] = []
        let envs = try home.appendAsRead({ try liveRecords() }, same: ==, changing: "the records of \(subject.focus)") { read in
            records = read
            if !records.isEmpty, !withRecords, target == nil {
                throw CLIError.data("\(subject.focus) has \(records.count) record(s); it is not removed",
                                    hint: "Give --with-records to delete them too, or --move-records-to OTHER to move them to another subject "
                                        + "('famctl record list --focus \(subject.focus)' lists them"
                                        + (home.includeShared ? ")." : ", those of other devices once 'famctl settings include-shared on' shows the family's: the view shows this device's own only)."))
            }
            let recordBodies = records.map { r in
                if let target {
                    // A put naming the other subject, every field as it is.
                    RecordEvent(kind: .put, record: r.id, store: r.store, focus: target.focus.description, at: nil, fields: [:]).body
                } else {
                    RecordEvent(kind: .delete, record: r.id, store: r.store, focus: r.focus, at: nil, fields: [:]).body
                }
            }
            return (recordBodies + [SubjectEvent.delete(subject.focus).body], {
                guard try home.projector.subject(subject.focus) != nil else { throw SubjectInput.removedMeanwhile(subject.focus) }
                // Each record must suit its new subject (its kind; a sleep not
                // overlapping one of the other baby's): checked as a move by
                // `record update --focus` is, the first that does not named.
                if let target {
                    guard try home.projector.subject(target.focus) != nil else { throw SubjectInput.removedMeanwhile(target.focus) }
                    for r in records {
                        guard let store = StoreName(rawValue: r.store) else { continue }
                        let schema = StoreSchema.schema(for: store)
                        // A store the other subject's kind does not take (the
                        // pregnancy's records, for the new mom): no record of it
                        // can move there, which moving it first would not change.
                        guard schema.subjects.contains(SubjectKind(target.focus)) else {
                            let allowed = SubjectKind.allCases.filter { schema.subjects.contains($0) }.map(\.rawValue).joined(separator: ", ")
                            // (No other subject can take them when the store is for this one's kind alone, and it has one key.)
                            let elsewhere = schema.subjects != [subject.kind] || subject.kind == .baby
                            throw CLIError.data("record \(r.id.lowercasedText) cannot move to \(target.focus): \(store.rawValue) records are for \(allowed) only; nothing was written",
                                                hint: (elsewhere ? "Give --move-records-to a subject \(store.rawValue) records are for, or keep" : "Keep")
                                                    + " \(subject.focus): its records stay listed under it. Or remove it with --with-records, which deletes them "
                                                    + "(the log keeps them for the audit: 'famctl export stores DIR' first keeps a copy you can read).")
                        }
                        // A rule a merge left broken is not the move's doing, and
                        // the move writes no field: moved as it is (a review: the
                        // removal was refused, advising a move that is refused
                        // too); a sleep must still not overlap one of the other's.
                        if !RecordView.brokenRules(r).isEmpty {
                            if let (_, error) = try RecordInput.overlappingSleep(home: home, id: r.id, store: store, focus: target.focus, fields: r.fields) {
                                throw CLIError(error.code, "record \(r.id.lowercasedText) cannot move to \(target.focus): \(error.message); nothing was written",
                                               hint: "Give it other times first ('famctl record update \(r.id.lowercasedText) start=… end=…'), or delete it ('famctl record delete \(r.id.lowercasedText)').")
                            }
                            continue
                        }
                        do {
                            try RecordInput.validate(home: home, id: r.id, store: store, focus: target.focus, at: r.at ?? TimeText.formatLocal(Date()),
                                                     fields: r.fields, now: nil, checkWriting: false)
                        } catch let e as CLIError {
                            throw CLIError(e.code, "record \(r.id.lowercasedText) cannot move to \(target.focus): \(e.message); nothing was written",
                                           hint: "Move or delete that record first ('famctl record update \(r.id.lowercasedText) --focus …', 'famctl record delete \(r.id.lowercasedText)').")
                        }
                    }
                }
            })
        }
        let ids = records.map(\.id.lowercasedText)
        // Changes dated later than this removal keep what they wrote.
        if try home.projector.subject(subject.focus) != nil {
            OutdoneWrite.warn(subject.focus.description, stays: "stays", write: "removal", kind: "subject", id: subject.focus.description, home: home)
        }
        // Records a change dated later keeps where they were: not counted
        // as moved or deleted below.
        var stayed: [String] = []
        for r in records {
            guard let now = try home.projector.record(r.id) else { continue }
            if let target, now.focus != target.focus.description {
                OutdoneWrite.warn("record \(r.id.lowercasedText)", stays: "stays with \(now.focus)", write: "move", kind: "record", id: r.id.lowercasedText, home: home)
                stayed.append(r.id.lowercasedText)
            } else if target == nil, !now.deleted {
                OutdoneWrite.warn("record \(r.id.lowercasedText)", stays: "stays live", write: "delete", kind: "record", id: r.id.lowercasedText, home: home)
                stayed.append(r.id.lowercasedText)
            }
        }
        let outdone = stayed.count
        if inv.json {
            var o: [String: Any] = ["focus": subject.focus.description, "event": envs.last!.id.hex]
            // Those a later-dated change kept where they were apart (a review).
            let done = ids.filter { !stayed.contains($0) }
            if let target { o["movedRecords"] = done; o["movedTo"] = target.focus.description } else { o["deletedRecords"] = done }
            o["stayedRecords"] = stayed
            Console.json(o)
            return
        }
        Console.out(subject.focus.description)
        if records.isEmpty { return }
        let done = records.count - outdone
        let above = "the warning\(outdone == 1 ? "" : "s") above"
        if done == 0 {
            let verb = target == nil ? "deleted" : "moved"
            Console.err("famctl: " + (records.count == 1 ? "its record was not \(verb)" : "none of its \(records.count) records was \(verb)") + " (\(above)).")
            return
        }
        let kept = outdone == 0 ? "" : " (\(outdone) not: \(above))"
        if let target {
            Console.err("famctl: moved \(done) record(s) of \(subject.focus) to \(target.focus)\(kept).")
        } else {
            Console.err("famctl: deleted \(done) record(s) of \(subject.focus) with it\(kept).")
        }
    }
}

/// `famctl subject list`
enum SubjectListCommand: Command {
    static let spec = CommandSpec(
        path: ["subject", "list"],
        abstract: "List the care subjects' focus keys, one per line.",
        discussion: """
            Each line is a subject's focus key, the word --focus takes. --long follows each key
            with what tells subjects apart (its name, birth or due date and sex), two spaces
            after it; --json prints every field.
            """,
        options: [.flag("--removed", "List the removed subjects too, marked so."),
                  .flag("--long", "Follow each key with the subject's name, birth or due date and sex."),
                  .flag("--keys", "The keys alone, one per line: the default (kept for scripts).")])

    static func run(_ inv: Invocation) throws {
        if inv.flag("--keys") && inv.flag("--long") {
            throw CLIError.usage("--keys and --long ask for two different lists", hint: "Give one of them.")
        }
        let home = try Home.open(Home.location(inv))
        if let note = home.unfinishedJoinNote { Console.err(note) }
        let subjects = try home.projector.subjects(includeRemoved: inv.flag("--removed"))
        if inv.json {
            Console.json(subjects.map { s -> [String: Any] in
                var o: [String: Any] = ["focus": s.focus.description, "kind": s.kind.rawValue, "addedBy": s.creator.hex]
                if inv.flag("--removed") { o["removed"] = s.removed }
                for (k, v) in s.fields { o[k] = RecordView.any(v) }
                return o
            })
            return
        }
        for s in subjects {
            let about = inv.flag("--long") ? Self.description(s) : ""
            Console.out(s.focus.description + (about.isEmpty ? "" : "  " + about) + (s.removed ? "  (removed)" : ""))
        }
    }

    /// `Lily, born 2026-06-01, female`: the fields a person tells
    /// subjects apart by, those set; empty when none is.
    static func description(_ s: SubjectState) -> String {
        var parts: [String] = []
        if let name = s.name { parts.append(name) }
        if let birth = s.fields["birth"]?.stringValue { parts.append("born " + birth) }
        if let due = s.fields["due"]?.stringValue { parts.append("due " + due) }
        if let sex = s.fields["sex"]?.stringValue { parts.append(sex) }
        return parts.joined(separator: ", ")
    }
}

/// `famctl digest`
enum DigestCommand: Command {
    static let spec = CommandSpec(
        path: ["digest"],
        abstract: "Print a hash of the family's projected state: members holding the same events print the same.")

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let d = Hex.encode(try home.projector.digest())
        if inv.json { Console.json(["digest": d]) } else { Console.out(d) }
    }
}

/// `famctl settings include-shared on|off`
enum SettingsIncludeSharedCommand: Command {
    static let spec = CommandSpec(
        path: ["settings", "include-shared"],
        abstract: "Show the whole family's records (on) or only this device's own (off). A view filter only.",
        positionals: [PositionalSpec(name: "on|off", help: "Omit to print the current setting.", optional: true)])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        if let v = inv.positionals.first {
            guard v == "on" || v == "off" else {
                throw CLIError.data("'\(v)' is neither on nor off", hint: ValueHint.otherCase(v, among: ["on", "off"]) ?? "Give on (the whole family's records) or off (this device's own).")
            }
            try home.state.set(.includeShared, v)
        }
        let now = home.includeShared ? "on" : "off"
        if inv.json { Console.json(["includeShared": home.includeShared]) } else { Console.out("include-shared \(now)") }
    }
}
