import Envelope
import EventLog
import Foundation
import Projections

/// `famctl record add --focus FOCUS --store STORE [--at TIME] [field=value ...]`
enum RecordAddCommand: Command {
    static let spec = CommandSpec(
        path: ["record", "add"],
        abstract: "Record something that happened (a feeding, a sleep, a diaper…) and print its id.",
        discussion: """
            Values are typed by the store's schema (numbers, true/false, lists as a,b,c);
            fields a store does not define are kept as given, with a warning (one a
            letter or two off a field it defines is refused as a typo as field=value;
            --json-fields keeps it). The record is checked
            against the store's rules, then signed, encrypted and durably appended
            before the id is printed. 'famctl record fields' lists every store's fields.
            """,
        options: [
            .value("--focus", "FOCUS", "(required) The care subject: baby:<UUID>, pregnancy, newMom, or its name."),
            .value("--store", "STORE", "(required) One of: \(StoreName.list)."),
            .value("--at", "TIME", "When it happened, ISO-8601 with offset (default: the start field, else now)."),
            RecordInput.jsonFieldsOption,
        ],
        positionals: [PositionalSpec(name: "field=value", help: "A field of the record.", optional: true, repeating: true)])

    static func run(_ inv: Invocation) throws {
        let focusText = try inv.required("--focus")
        let store = try RecordInput.store(try inv.required("--store"))
        let fields = RecordInput.present(try RecordInput.fields(inv, schema: StoreSchema.schema(for: store)))
        let now = Date()
        let at = RecordInput.at(inv) ?? fields["start"]?.stringValue ?? TimeText.formatLocal(now)
        let home = try Home.open(Home.location(inv))
        // Before the subject is looked for: one of this device's own is not
        // shown until its join is written, and a device that may not write
        // (a viewer, a removed one) is told that, not of a subject it got
        // wrong (checked again with the write).
        try home.checkCanWrite(quietly: true)
        let focus = try RecordInput.focus(focusText, home: home)
        let id = RecordIdentifier.make()
        let event = RecordEvent(kind: .put, record: id, store: store.rawValue, focus: focus.description, at: at, fields: fields)
        let envs = try home.append([event.body]) {
            try RecordInput.validate(home: home, id: nil, store: store, focus: focus, at: at, fields: fields, now: now, written: Set(fields.keys))
            try RecordInput.checkFitsOneEvent(event.body)
        }
        if let note = RecordInput.atStartNote(at: RecordInput.at(inv), start: fields["start"]?.stringValue) { Console.err(note) }
        for note in RecordInput.offsetNotes(record: id, given: RecordInput.givenTimes(fields, store: store, at: RecordInput.at(inv))) { Console.err(note) }
        if let note = RecordInput.epdsNote(store: store, fields: fields, given: fields["epds"] != nil) { Console.err(note) }
        // Placed at this device's clock while both its own first change (its
        // join, dated after its invitation whatever its clock) and another
        // device's are dated more than a day past it: said, with how to give
        // the record its time (a clock review: a device set to 1970 recorded
        // there without a word). Not a clock that was ahead at an earlier
        // change, or another device's ahead, taken for this one's behind;
        // and neither clock is called the wrong one, since one device's fast
        // clock is followed by every other device's changes (a review:
        // devices whose clocks were right were told theirs were behind).
        let dayAhead = HLC(milliseconds: HLC.milliseconds(of: now.addingTimeInterval(EventLog.clockFollowLimit)), counter: .max)
        if RecordInput.at(inv) == nil, fields["start"] == nil, envs.count == 1, envs[0].seq > 1,
           let first = try? home.log.chain(of: home.deviceID, in: home.family, seqs: 1...1).first, first.hlc > dayAhead,
           (try? home.log.hasEvent(in: home.family, after: dayAhead, notBy: home.deviceID)) == true {
            Console.err("famctl: note: the record is placed at \(TimeText.shownHere(at)), by this device's clock, more than a day before the family's changes are dated (this device's first one \(TimeText.format(first.hlc.date))). "
                        + "If this device's clock is wrong, set it right and give the record its time: 'famctl record update \(id.lowercasedText) --at TIME'; if it is right, another device's clock is ahead, and the record's time stands.")
        }
        // A source names one outside record: a second record of it is most
        // likely the same one entered again.
        if let key = RecordInput.sourceKey(fields["source"]),
           let first = try RecordInput.recordsBySource(store: store, home: home, excluding: [id])[key] {
            let text = RecordInput.sourceText(fields["source"])
            Console.err("famctl: warning: record \(first.lowercasedText) of \(store.rawValue) already has source \(text); this is a second one. "
                        + "'famctl record delete \(id.lowercasedText)' takes it back; 'famctl record update \(first.lowercasedText) …' changes the first.")
        }
        if inv.json {
            Console.json(["id": id.lowercasedText, "event": envs[0].id.hex])
        } else {
            Console.out(id.lowercasedText)
        }
    }
}
