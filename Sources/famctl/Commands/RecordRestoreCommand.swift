import Envelope
import Foundation
import Projections

/// `famctl record restore ID…`
enum RecordRestoreCommand: Command {
    static let spec = CommandSpec(
        path: ["record", "restore"],
        abstract: "Bring back deleted records, with the fields they had.",
        discussion: """
            Each is written again (a put newer than its delete), so it is live on every
            device once synced, as it was before the delete. Its care subject must be
            there ('famctl subject restore' first, for records deleted with it); a sleep
            must not overlap another. 'famctl record list --include-deleted' lists the
            deleted records. All or none: one that cannot come back stops them all.
            """,
        positionals: [PositionalSpec(name: "ID", help: "A deleted record's id, or 6 hex digits or more of its start or end.", repeating: true)])

    static func run(_ inv: Invocation) throws {
        for text in inv.positionals { try RecordInput.checkRecordText(text) }
        let home = try Home.open(Home.location(inv))
        // A viewer (or a removed device) is told so first (a review).
        try home.checkCanWrite(quietly: true)
        let ids = try inv.positionals.map { try RecordInput.record($0, home: home, deleted: true) }
        var seen = Set<UUID>()
        var records: [RecordState] = []
        for id in ids where seen.insert(id).inserted {
            guard let r = try home.projector.record(id) else { throw CLIError.noRecord(id, in: home) }
            guard r.deleted else { throw CLIError.data("record \(id.lowercasedText) is not deleted; nothing was written") }
            records.append(r)
        }
        // A photo deleted while its record was deleted (`photo delete` then
        // leaves the record alone) is not listed again; the lists are made
        // again should a photo be deleted while the restore waits for the
        // write lock (another process, a sync).
        let envs = try home.appendAsRead({ try records.map { try Self.restoredPhotoList($0.id, home: home) } }, same: ==,
                                         changing: "the records' photos", check: { try Self.checkCanComeBack(records, home: home) }) { lists in
            // A put that keeps the record's subject, as every change that
            // does not move it: it never undoes a move its writer had not
            // seen, and says schema 3, so that a device whose famctl reads
            // a put after a delete by the older rule (only the fields it
            // writes come back) keeps it until upgraded rather than show
            // the record without its fields (an upgrade review).
            try zip(records, lists).map { r, fields in
                try RecordInput.keepingFocus(RecordEvent(kind: .put, record: r.id, store: r.store, focus: r.focus, at: nil, fields: fields).body, of: r.id, home: home)
            }
        }
        // A delete dated later than this restore keeps the record deleted.
        for r in records where try home.projector.record(r.id)?.deleted == true {
            OutdoneWrite.warn("record \(r.id.lowercasedText)", stays: "stays deleted", write: "restore", kind: "record", id: r.id.lowercasedText, home: home)
        }
        if inv.json {
            Console.json(zip(records, envs).map { ["id": $0.id.lowercasedText, "event": $1.id.hex] })
        } else {
            for r in records { Console.out(r.id.lowercasedText) }
        }
    }

    /// Whether `records` may come back, checked under the write lock: each
    /// deleted still (not brought back meanwhile, by a sync), its subject
    /// there, a sleep overlapping none (those restored with it included).
    static func checkCanComeBack(_ records: [RecordState], home: Home) throws {
        // The batch's sleeps, each checked against those restored before it
        // in the batch too: the projection does not hold them yet.
        var restoredSleeps: [(id: UUID, focus: String, start: Date, end: Date)] = []
        for r in records {
            // Deleted still (not brought back meanwhile, by a sync), and fit
            // to come back: its subject there, a sleep overlapping none.
            guard try home.projector.record(r.id)?.deleted == true else {
                throw CLIError(.tempFail, "record \(r.id.lowercasedText) was brought back meanwhile (a sync); nothing was written", hint: "Run the same command again without it.")
            }
            guard let store = StoreName(rawValue: r.store), let focus = FocusKey(r.focus) else { continue }
            let fields = try home.projector.heldFields(r.id)
            do {
                try RecordInput.validate(home: home, id: r.id, store: store, focus: focus, at: r.at ?? TimeText.formatLocal(Date()),
                                         fields: fields, now: nil, checkWriting: false, restoring: true)
                if store == .sleep, let start = StoreSchema.time(fields["start"]) {
                    let end = StoreSchema.time(fields["end"]) ?? .distantFuture
                    if let other = restoredSleeps.first(where: { $0.focus == r.focus && (start < $0.end && $0.start < end || $0.start == start) }) {
                        throw CLIError.data("sleep.start: overlaps sleep \(other.id.lowercasedText), restored with it, of the same baby",
                                            hint: "Restore one of the two: 'famctl record show ID' shows each.")
                    }
                    restoredSleeps.append((r.id, r.focus, start, end))
                }
            } catch let e as CLIError {
                throw CLIError(e.code, "record \(r.id.lowercasedText) cannot come back: \(e.message); nothing was written",
                               hint: (try? home.projector.subject(focus)) == nil
                                   ? "Bring its care subject back first: famctl subject restore \(focus)" : e.hint)
            }
        }
    }

    /// The `photos` field a restore writes: the list the record held
    /// without the photos deleted since (none when there are none).
    static func restoredPhotoList(_ id: UUID, home: Home) throws -> [String: JSONValue] {
        guard case .array(let list)? = try home.projector.heldFields(id)["photos"] else { return [:] }
        let kept = try home.withoutDeletedPhotos(list)
        return kept.count == list.count ? [:] : ["photos": .array(kept)]
    }
}
