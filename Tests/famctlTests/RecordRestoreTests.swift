@testable import famctl
import Foundation
import Testing

/// `record restore` undoes a `record delete`: a put newer than the delete
/// brings the record back with the fields it had, on every device; what
/// cannot come back (its subject removed, a sleep overlapping another, a
/// record not deleted) is refused, and nothing of the batch is written.
struct RecordRestoreTests {
    @Test func aDeletedRecordComesBackWithItsFieldsOnEveryDevice() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let id = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2", "note=after lunch")
        try dad.ok("sync"); try mum.ok("sync"); try dad.ok("sync")
        try dad.ok("record", "update", id, "mood=3")
        let before = try dad.ok("record", "show", id)
        try dad.ok("record", "delete", id)
        for r in [dad, mum] { try r.ok("sync") }
        #expect(try mum.ok("record", "show", id).hasSuffix("(deleted)"))
        // What a restore brings back is shown beside the deleted record (a review: only --history showed it).
        let shown = try mum.run("record", "show", id)
        #expect(shown.stderr == "famctl: note: deleted; its fields before: kind=mood mood=3 note=\"after lunch\" ('famctl record restore \(id)' brings them back)\n", "\(shown.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(try mum.ok("record", "show", id, "--json").utf8)) as? [String: Any]
        #expect((json?["fieldsBeforeDeletion"] as? [String: Any])?["mood"] as? Int == 3, "\(String(describing: json))")

        #expect(try mum.ok("record", "restore", id) == id)
        #expect(try mum.ok("record", "show", id) == before, "back with the fields it had, the later edit included")
        // Schema 3, keeping the subject: a famctl that reads a put after a
        // delete by the older rule keeps it until upgraded (an upgrade
        // review: it showed the record with no fields).
        let home = try Home.open(mum.home)
        let head = try home.log.head(of: home.deviceID, in: home.family)
        let restore = try #require(try home.log.chain(of: home.deviceID, in: home.family, seqs: head.seq...head.seq).first)
        guard case .body(let body) = try home.openBody(restore) else { Issue.record("the restore cannot be opened"); return }
        #expect(body.type == "record.put" && body.schema == 3 && body["focusSince"] != nil, "\(body)")
        let trail = try mum.ok("record", "show", id, "--history").split(separator: "\n").map(String.init)
        #expect(trail.last?.contains("  put  ") == true && trail.last?.hasSuffix("(brought back, with the fields it had)") == true, "\(trail)")
        for r in [mum, dad, mum] { try r.ok("sync") }
        #expect(try dad.ok("record", "show", id) == before)
        #expect(try dad.ok("digest") == mum.ok("digest"))
        let again = try mum.run("record", "restore", id)
        #expect(again.code == 65 && again.stderr.contains("record \(id) is not deleted; nothing was written"), "\(again.stderr)")
        #expect(try mum.run("record", "restore", UUID().uuidString.lowercased()).code == 66)
    }

    @Test func aRecordOfARemovedSubjectWaitsForTheSubject() throws {
        let mum = try FamctlRunner.mum()
        let id = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try mum.ok("subject", "remove", "newMom", "--with-records")
        let refused = try mum.run("record", "restore", id)
        #expect(refused.code == 65, "\(refused.stdout)")
        #expect(refused.stderr.contains("record \(id) cannot come back: postpartum.focus: care subject newMom is removed; nothing was written"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Bring its care subject back first: famctl subject restore newMom"))
        #expect(try mum.ok("record", "show", id).hasSuffix("(deleted)"))
        let back = try mum.run("subject", "restore", "newMom")
        #expect(back.code == 0 && back.stderr.contains("famctl: note: its 1 deleted record(s) stay deleted; 'famctl record list --focus newMom --include-deleted' lists them"), "\(back.stderr)")
        try mum.ok("record", "restore", id)
        #expect(try mum.ok("record", "list").contains("mood=4"))
    }

    /// `record delete` takes several ids too, all or none.
    @Test func severalRecordsAreDeletedAndRestoredTogether() throws {
        let mum = try FamctlRunner.mum()
        let ids = try (1...3).map { try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\($0)") }
        try mum.ok("record", "delete", ids[0])
        let refused = try mum.run("record", "delete", ids[1], ids[0])
        #expect(refused.code == 65 && refused.stderr.contains("record \(ids[0]) is already deleted; nothing was written"), "\(refused.stderr)")
        #expect(!(try mum.ok("record", "show", ids[1])).hasSuffix("(deleted)"))
        let deleted = try mum.run("record", "delete", ids[1], ids[2], ids[1])
        #expect(deleted.stdout == ids[1] + "\n" + ids[2] + "\n")
        #expect(deleted.stderr.contains("famctl: deleted 2 records; 'famctl record restore \(ids[1]) \(ids[2])' brings them back"), "\(deleted.stderr)")
        #expect(try mum.ok("record", "list").isEmpty)
        #expect(try mum.ok("record", "restore", ids[0], ids[1], ids[2]).split(separator: "\n").count == 3)
        #expect(try mum.ok("record", "list").split(separator: "\n").count == 3)
    }

    /// `record delete --json` prints an array for one id as for several,
    /// as `record restore` does (a user review: one id gave an object).
    @Test func deleteAndRestorePrintArraysWhateverTheCount() throws {
        let mum = try FamctlRunner.mum()
        let ids = try (1...3).map { try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\($0)") }
        for (command, batch) in [("delete", [ids[0]]), ("delete", [ids[1], ids[2]]), ("restore", [ids[0]]), ("restore", [ids[1], ids[2]])] {
            let printed = try JSONSerialization.jsonObject(with: Data(try mum.ok(["record", command] + batch + ["--json"]).utf8))
            let rows = try #require(printed as? [[String: Any]], "\(command) \(batch.count): \(printed)")
            #expect(rows.map { $0["id"] as? String } == batch && rows.allSatisfy { $0["event"] is String }, "\(rows)")
            if command == "delete" { #expect(rows.allSatisfy { $0["photosKept"] is [Any] }, "\(rows)") }
        }
    }

    /// All or none: a sleep that would overlap one recorded since stops the
    /// batch, the other record in it included.
    @Test func aBatchWithOneThatCannotComeBackWritesNothing() throws {
        let mum = try FamctlRunner.mum()
        let baby = try mum.ok("subject", "add", "baby", "--name", "Lily")
        let sleep = try mum.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-28T20:00:00+01:00", "end=2026-11-28T22:00:00+01:00")
        let diaper = try mum.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true")
        try mum.ok("record", "delete", sleep)
        try mum.ok("record", "delete", diaper)
        try mum.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-28T21:00:00+01:00", "end=2026-11-28T23:00:00+01:00")
        let head = try Home.open(mum.home).log.count()
        let refused = try mum.run("record", "restore", diaper, sleep)
        #expect(refused.code == 65 && refused.stderr.contains("record \(sleep) cannot come back: sleep.end: overlaps sleep "), "\(refused.stderr)")
        // Its own times cannot be changed while it is deleted: the hint is the other sleep's.
        #expect(refused.stderr.contains("famctl: A deleted record's times cannot be changed: correct the other sleep first")
                && !refused.stderr.contains("Give this sleep times"), "\(refused.stderr)")
        #expect(try Home.open(mum.home).log.count() == head, "nothing written")
        #expect(try mum.ok("record", "show", diaper).hasSuffix("(deleted)"))
        #expect(try mum.ok("record", "restore", diaper, diaper) == diaper, "each id once")
        #expect(try mum.ok("record", "show", diaper).contains("wet=true"))
    }

    /// Two deleted sleeps that overlap each other do not come back together:
    /// each is checked against those restored before it in the batch too.
    @Test func twoOverlappingSleepsDoNotComeBackTogether() throws {
        let mum = try FamctlRunner.mum()
        let baby = try mum.ok("subject", "add", "baby", "--name", "Max")
        let a = try mum.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-12-04T09:00:00Z", "end=2026-12-04T10:30:00Z")
        try mum.ok("record", "delete", a)
        let b = try mum.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-12-04T09:30:00Z", "end=2026-12-04T10:00:00Z")
        try mum.ok("record", "delete", b)
        let both = try mum.run("record", "restore", a, b)
        #expect(both.code == 65 && both.stderr.contains("record \(b) cannot come back: sleep.start: overlaps sleep \(a), restored with it, of the same baby; nothing was written"), "\(both.stderr)")
        #expect(try mum.ok("record", "show", a).hasSuffix("(deleted)"))
        #expect(try mum.ok("record", "restore", b) == b)
        #expect(!(try mum.ok("status")).contains("overlap"))
    }

    /// A photo deleted while its record was deleted (`photo delete` leaves
    /// a deleted record alone) is not listed again when the record comes
    /// back; the other photos are.
    @Test func aPhotoDeletedMeanwhileIsNotListedAgain() throws {
        let mum = try FamctlRunner.mum()
        let id = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        let photos = try (0..<2).map { i -> String in
            let file = mum.root + "/p\(i).jpg"
            try Data(PhotoTests.jpeg(1_000, marker: "restore\(i)")).write(to: URL(fileURLWithPath: file))
            return try mum.ok("photo", "add", id, file)
        }
        try mum.ok("record", "delete", id)
        try mum.ok("photo", "delete", photos[0])
        #expect(try mum.ok("record", "restore", id) == id)
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(try mum.ok("record", "show", id, "--json").utf8)) as? [String: Any])
        #expect((shown["fields"] as? [String: Any])?["photos"] as? [String] == [photos[1]], "\(shown)")
        let trail = try mum.ok("record", "show", id, "--history").split(separator: "\n").map(String.init)
        #expect(trail.last?.hasSuffix("(brought back, with the fields it had)") == true && trail.last?.contains("photos=") == true, "\(trail)")
        // With no photo deleted, the restore writes no field.
        try mum.ok("record", "delete", id)
        #expect(try mum.ok("record", "restore", id) == id)
        let again = try mum.ok("record", "show", id, "--history").split(separator: "\n").map(String.init)
        #expect(again.last?.hasSuffix("(brought back, with the fields it had)") == true && again.last?.contains("photos=") == false, "\(again)")
    }
}

/// A record named by the start or the end of its id (at least 6 hex
/// digits) when that names one record: the last digits tell apart ids
/// made the same minute, whose first ones are alike.
struct ShortRecordIDTests {
    @Test func theEndOrStartOfAnIdNamesItsRecord() throws {
        let mum = try FamctlRunner.mum()
        let a = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let b = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        let end = String(a.suffix(8))
        #expect(try mum.ok("record", "show", end).hasPrefix(a))
        #expect(try mum.ok("record", "update", end, "mood=5") == a)
        #expect(try mum.ok("record", "show", a.replacingOccurrences(of: "-", with: "")).hasPrefix(a), "a whole id without its dashes")
        // The same minute's ids share their start: several named, and said.
        let start = String(a.prefix(6))
        let both = try mum.run("record", "show", start)
        #expect(both.code == 65 && both.stderr.contains("2 records' ids start or end with \(start): \(min(a, b)), \(max(a, b))"), "\(both.stderr)")
        let none = try mum.run("record", "show", "ffffff00")
        #expect(none.code == 66 && none.stderr.contains("no record's id starts or ends with ffffff00"), "\(none.stderr)")
        // Every command that takes a record's id.
        #expect(try mum.ok("record", "delete", end) == a)
        #expect(try mum.ok("record", "restore", end) == a)
        let photo = try mum.ok("photo", "add", String(b.suffix(10)), try PhotoTests.jpegFile(mum, 2_000, marker: "SHORT").path)
        #expect(try mum.ok("photo", "list", "--record", String(b.suffix(10))).contains(photo))
        // The audit matches a part against every event's record (counted or
        // not, in the stores or not): one record, or the ones it names.
        let audit = try mum.ok("replay", "--record", end)
        #expect(audit.hasPrefix("record \(a)  postpartum  newMom") && audit.contains("mood=5"), "\(audit)")
        #expect(try mum.ok("replay", "--record", a).contains(a))
        let auditBoth = try mum.run("replay", "--record", start)
        #expect(auditBoth.code == 65 && auditBoth.stderr.contains("2 records' ids start or end with \(start): \(min(a, b)), \(max(a, b))"), "\(auditBoth.stderr)")
        let auditNone = try mum.run("replay", "--record", "ffffff00")
        #expect(auditNone.code == 66 && auditNone.stderr.contains("no event of the family names a record whose id starts or ends with ffffff00"), "\(auditNone.stderr)")
        let notAnID = try mum.run("replay", "--record", "feed")
        #expect(notAnID.code == 65 && notAnID.stderr.contains("--record 'feed' is not a record id"), "\(notAnID.stderr)")
        // A part a deleted record shares: the live one for an update or a
        // delete, the deleted one for a restore; listed, with which is deleted, otherwise.
        try mum.ok("record", "delete", b)
        #expect(try mum.ok("record", "update", start, "mood=2") == a)
        #expect(try mum.ok("record", "restore", start) == b)
        try mum.ok("record", "delete", b)
        let shown = try mum.run("record", "show", start)
        #expect(shown.code == 65 && shown.stderr.contains("\(b) (deleted)"), "\(shown.stderr)")
        // Not hex, or too short: not an id, said before any home is read.
        let other = FamctlRunner()
        #expect(try other.run("record", "show", "zzzz").stderr.contains("'zzzz' is not a record id"))
        #expect(try mum.run("record", "show", "abcde").code == 65)
    }

    /// A viewer is told it may not write before a short id is looked up.
    @Test func aViewerIsRefusedBeforeAShortIdIsLookedUp() throws {
        let (_, _, gran, _, _) = try PhotoTests.household()
        for command in ["delete", "restore"] {
            let r = try gran.run("record", command, "123456")
            #expect(r.code == 65 && r.stderr.contains("this device cannot change the family's records"), "\(command): \(r.stderr)")
        }
    }
}
