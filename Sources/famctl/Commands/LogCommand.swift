import Envelope
import EventLog
import Foundation
import Projections

/// `famctl log [--author A] [--focus F] [--since TIME]`
enum LogCommand: Command {
    static let spec = CommandSpec(
        path: ["log"],
        abstract: "List the events in this device's log, oldest first by their clock.",
        options: [
            .value("--author", "A", "Only events by this device: a member's name, a device id or a prefix of one, or 'me'."),
            .value("--focus", "F", "Only events about this care subject (its focus key or name): its records and the subject itself."),
            .value("--since", "TIME", "Only events at or after this time (ISO-8601; a date alone: its midnight here)."),
        ])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        var authorPrefix: String?
        if let given = inv.value("--author") {
            // As names are kept: trimmed.
            let a = given.trimmingCharacters(in: .whitespaces)
            // The members' names, and this device's own (in a family of its
            // own it is no member, but has a name).
            var names = home.projector.household.members.values.map { (name: $0.name, device: $0.device) }
            if let own = try home.state.get(.deviceName), !names.contains(where: { $0.device == home.deviceID }) { names.append((own, home.deviceID)) }
            let named = names.filter { $0.name == a }
            let folded = names.filter { $0.name.lowercased() == a.lowercased() }
            if a.lowercased() == "me" {
                authorPrefix = home.deviceID.hex
            } else if named.count == 1 {
                // A member's name, as the member commands take it.
                authorPrefix = named[0].device.hex
            } else if named.isEmpty, folded.count == 1 {
                authorPrefix = folded[0].device.hex
            } else if named.count > 1 || folded.count > 1 {
                // Which ones, as `member remove` says it (a review: the ids were not given).
                let ids = (named.count > 1 ? named : folded).map(\.device).sorted { $0.hex < $1.hex }
                throw CLIError.data("\(ids.count) members are called \"\(a)\" (devices \(ids.map(\.short).joined(separator: ", "))); give the device id",
                                    hint: "A start of it is enough, for example '--author \(ids[0].hex.prefix(4))'; 'famctl members' lists them.")
            } else if !a.isEmpty, a.allSatisfy(\.isHexDigit) {
                authorPrefix = a.lowercased()
                // "Dad" is hex too: a prefix no device id has is most
                // likely the start of a name, not an author with no events.
                let devices = Set(try home.log.heads(in: home.family).keys).union(names.map(\.device))
                if !devices.contains(where: { $0.hex.hasPrefix(a.lowercased()) }) {
                    let like = Self.namesHolding(a, names.map(\.name))
                    throw CLIError.data("--author '\(a)' is the start of no device id\(like.isEmpty ? " and no member's name" : "; did you mean \(like.joined(separator: " or "))?")",
                                        hint: "Give a member's whole name (quoted), a device id or a prefix of one, or 'me'; 'famctl members' lists them.")
                }
            } else {
                // The start or a part of a name ("Gran" for "Grandma").
                let like = Self.namesHolding(a, names.map(\.name))
                throw CLIError.data("--author '\(a)' is not a device id (hex), a member's name or 'me'\(like.isEmpty ? "" : "; did you mean \(like.joined(separator: " or "))?")",
                                    hint: "'famctl members' lists them.")
            }
        }
        // Events the family's rules do not count (a removed device's, a
        // viewer's…): listed as all are, marked with the reason.
        let notCounted = Dictionary(try home.projector.rejections().map { ($0.event, $0.reason) }, uniquingKeysWith: { a, _ in a })
        var focus: String?
        // The records that are the subject's now, deleted ones too: their
        // events written while they were another's, or by a device that had
        // not seen a move (naming the subject it knew), are about it too (a
        // review: a moved record's deletion was listed under its old baby).
        var focusRecords: Set<UUID> = []
        if let f = inv.value("--focus") {
            focus = try RecordInput.focus(f, home: home, removed: true).description
            try home.projector.forEachRecord(Projector.RecordQuery(focus: focus, includeDeleted: true)) { focusRecords.insert($0.id) }
        }
        var since: HLC?
        if let s = inv.value("--since") {
            let d = try TimeText.parse(s, option: "--since")
            since = HLC(milliseconds: HLC.milliseconds(of: d), counter: 0)
        }

        let entries = LogEntries(
            keys: try Dictionary(home.log.families().map { ($0, ReadOnlyKeys(keys: try home.state.keyring.keys(family: $0))) }, uniquingKeysWith: { a, _ in a }),
            notCounted: notCounted, forkPoints: home.forkPoints, family: home.family, authorPrefix: authorPrefix, since: since, focus: focus, focusRecords: focusRecords, json: inv.json)
        try StreamedListing(json: inv.json, name: "log", unit: "event", empty: "(no events)", make: entries.entry)
            .print { add in try home.log.forEachEvent(order: .hlc, since: since) { try add($0) } }
    }

    /// The names that hold `word` (letters' case aside), each once, quoted:
    /// what a `--author` that is no name nor device id may have meant.
    static func namesHolding(_ word: String, _ names: [String]) -> [String] {
        guard !word.isEmpty else { return [] }
        return Set(names.filter { $0.lowercased().contains(word.lowercased()) }).sorted().map { "\"\($0)\"" }
    }

    /// One event's line of text output.
    static func line(_ r: [String: Any]) -> String {
        let author = (r["author"] as! String).prefix(12)
        var line = "\(r["hlc"]!)  \(author) #\(r["seq"]!)  \(String((r["id"] as! String).prefix(12)))  \(r["type"]!)"
        if let subject = r["subject"] as? String {
            line += "  \(subject)"
            if let text = r["fieldsText"] as? String, !text.isEmpty { line += " " + text }
        }
        if let store = r["store"] as? String {
            // The whole record id: new ids begin with their creation
            // time, so records made within a minute share their first
            // eight characters, and the id is what `record show` takes.
            line += "  \(store) \(r["focus"]!) \(r["record"]!)"
            // When it happened, as the put says it (a diaper's only time: a
            // review found what a forked copy wrote could not be written
            // again from its line).
            let at = r["type"] as? String == RecordEvent.Kind.put.rawValue ? r["at"] as? String : nil
            if let text = r["fieldsText"] as? String, !text.isEmpty {
                line += (at.map { " at \($0)" } ?? "") + " " + text
            } else if let at {
                // A put that moves the record in time alone: what it changed.
                line += " at \(at) (no field changes)"
            }
        }
        if let why = r["notCounted"] as? String { line += "  (not counted: \(why))" }
        return line
    }
}

/// What `famctl log` prints of each event: made from the event's stored
/// bytes alone, on any thread (``StreamedListing`` makes them on every
/// core), with the keys and verdicts read before.
struct LogEntries: Sendable {
    /// Each family's keys the log's events may be sealed with.
    let keys: [FamilyID: ReadOnlyKeys]
    /// Events the family's rules do not count, with the reason.
    let notCounted: [EventID: String]
    /// The family's forked chains, each with its fork point: their events
    /// from there on count on no device.
    let forkPoints: [DeviceID: UInt64]
    let family: FamilyID
    let authorPrefix: String?
    let since: HLC?
    let focus: String?
    /// The records that are ``focus``'s now, whatever subject their events name.
    let focusRecords: Set<UUID>
    let json: Bool

    /// The event's line (escaped, without its newline) or its JSON object
    /// (as an item of the top-level array), or `nil` when the filters leave
    /// it out or its bytes do not decode.
    func entry(_ stored: EventLog.StoredEvent) throws -> [UInt8]? {
        if let authorPrefix, !stored.author.hex.hasPrefix(authorPrefix) { return nil }
        if let since, stored.hlc < since { return nil }
        guard let env = try? SyncEnvelope(decoding: stored.bytes) else { return nil }
        var row: [String: Any] = [
            "id": env.id.hex, "author": env.author.hex, "seq": env.seq,
            "hlc": TimeText.format(env.hlc.date), "counter": Int(env.hlc.counter), "epoch": Int(env.epoch),
        ]
        if let why = notCounted[env.id] { row["notCounted"] = why } else if env.family == family, let point = forkPoints[env.author], env.seq >= point {
            // Past a fork point: kept in the log, in no projection (as `replay --record` says it).
            row["notCounted"] = "past its author's fork point (seq \(point)): its key signed two histories, and nothing of it from there on counts"
        }
        switch Home.openBody(env, with: keys[env.family]?.keys[env.epoch]) {
        case .body(let body):
            row["type"] = body.type
            if let r = try? RecordEvent(body) {
                if let focus, r.focus != focus, !focusRecords.contains(r.record) { return nil }
                row["record"] = r.record.lowercasedText
                row["store"] = r.store
                row["focus"] = r.focus
                if let at = r.at { row["at"] = json ? at : TimeText.shownHere(at) }
                if json {
                    // As written (read back through JSONSerialization, a 1
                    // and a 0 printed as true and false: a clock review).
                    row["fields"] = r.fields.mapValues(RecordView.any)
                } else {
                    row["fieldsText"] = RecordView.fieldsText(RecordView.shownHere(r.fields, store: r.store))
                }
            } else if let sub = try? SubjectEvent(body) {
                if let focus, sub.focus.description != focus { return nil }
                row["subject"] = sub.focus.description
                if json {
                    if sub.kind == .put { row["fields"] = sub.fields.mapValues(RecordView.any) }
                } else {
                    row["fieldsText"] = RecordView.fieldsText(sub.fields)
                }
            } else if focus != nil { return nil }
        case .noKey(let epoch):
            if focus != nil { return nil }
            // In JSON the type is not known (null), and why apart: a script
            // that filters on `type` meets no made-up value.
            if json { row["type"] = NSNull(); row["unopened"] = "no key for epoch \(epoch)" } else { row["type"] = "(encrypted: no key for epoch \(epoch))" }
        case .failed(let e):
            if focus != nil { return nil }
            if json { row["type"] = NSNull(); row["unopened"] = "unreadable: \(e)" } else { row["type"] = "(unreadable: \(e))" }
        }
        return json ? StreamedEntry.item(row) : StreamedEntry.line(LogCommand.line(row))
    }
}
