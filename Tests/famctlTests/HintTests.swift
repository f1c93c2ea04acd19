import Foundation
import Testing

/// Mistakes a new user makes get a hint that says what to do (a review of
/// the docs against the tool found these with none).
struct HintTests {
    @Test func badValuesSayWhereTheGoodOnesAre() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("family", "create", "--name", "F", "--dir", f.root + "/shared")
        let cases: [([String], String)] = [
            (["settings", "include-shared", "maybe"], "Give on (the whole family's records) or off (this device's own)."),
            (["settings", "photos", "--prefetch", "maybe"], "Give --prefetch on or --prefetch off."),
            (["invite", "--revoke", "abcd"], "'famctl invite --list' lists the open invitations with their ids; for one that expired, give its code"),
            (["photo", "delete", "not-a-uuid"], "'famctl photo list' lists the photos with their ids."),
        ]
        for (args, hint) in cases {
            let r = try f.run(args)
            #expect(r.code == 65 && r.stderr.contains(hint), "\(args): \(r.stderr)")
        }
        let one = FamctlRunner()
        try one.ok("init", "--name", "Solo")
        try one.ok("subject", "add", "newMom")
        let replay = try one.ok("replay")
        #expect(replay.contains(": 1 event, ") && !replay.contains("1 events"), "\(replay)")
    }

    /// Plain-text store files exported into the family's shared folder
    /// (which its sync engine copies everywhere) are said; elsewhere not.
    @Test func anExportIntoTheSharedFolderIsSaid() throws {
        let family = try SharedFamily()
        let mum = family.mum
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let inside = try mum.run("export", "stores", family.dir + "/plain")
        #expect(inside.code == 0 && inside.stderr.contains("lies in the shared folder \(family.dir)") && inside.stderr.contains("plain text"), "\(inside.stderr)")
        let elsewhere = try mum.run("export", "stores", mum.root + "/mine")
        #expect(elsewhere.code == 0 && !elsewhere.stderr.contains("shared folder"), "\(elsewhere.stderr)")
    }

    /// Slips of a new user's walk-through (a review): each says what is
    /// wrong in its own terms and what to do.
    @Test func slipsOfAWalkThrough() throws {
        let solo = FamctlRunner()
        let spaces = try solo.run("init", "--name", "   ")
        #expect(spaces.code == 65 && spaces.stderr.contains("--name '   ' is only spaces"), "\(spaces.stderr)")
        try solo.ok("init", "--name", "Solo")
        try solo.ok("subject", "add", "newMom")
        // No family: sync names what to do, not a location that syncs with nobody.
        let sync = try solo.run("sync")
        #expect(sync.code == 64 && sync.stderr.contains("this device is in no family yet") && sync.stderr.contains("famctl family create") && sync.stderr.contains("famctl accept"), "\(sync.stderr)")
        // A location set all the same: still nobody to sync with (a review: exit 0, nothing done).
        _ = try solo.run("settings", "sync", "--dir", solo.root + "/somewhere")
        let located = try solo.run("sync")
        #expect(located.code == 64 && located.stderr.contains("this device is in no family yet"), "\(located.stdout) \(located.stderr)")
        // An hour no clock shows: named, in a field and in an option.
        let hour = try solo.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--at", "2026-12-06T25:00:00Z")
        #expect(hour.code == 65 && hour.stderr.contains("25 is not an hour: hours run from 00 to 23"), "\(hour.stderr)")
        let minute = try solo.run("record", "list", "--since", "2026-12-06T08:61:00+01:00")
        #expect(minute.code != 0 && minute.stderr.contains("61 is not a minute"), "\(minute.stderr)")
        // A whole number of records too large to count lists them all.
        try solo.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        #expect(try solo.ok("record", "list", "--last", "99999999999999999999").contains("mood=3"))
        // A kind of record given as the store.
        let store = try solo.run("record", "add", "--focus", "newMom", "--store", "medication", "medication=ibuprofen")
        #expect(store.code == 65 && store.stderr.contains("kind=medication is a kind of record of health (--store health kind=medication)"), "\(store.stderr)")
        let spaced = try solo.run("record", "add", "--focus", "newMom", "--store", "postpartum", "feelings", "kind=mood")
        #expect(spaced.code == 65 && spaced.stderr.contains("'famctl record fields' lists the fields of each store"), "\(spaced.stderr)")
        try solo.ok("family", "create", "--name", "F", "--dir", solo.root + "/shared")
        // Everyday words for a kind of subject and a sex.
        let mom = try solo.run("subject", "add", "mom")
        #expect(mom.code == 65 && mom.stderr.contains("Did you mean newMom?"), "\(mom.stderr)")
        let boy = try solo.run("subject", "add", "baby", "--name", "Leo", "--sex", "boy")
        #expect(boy.code == 65 && boy.stderr.contains("'boy' is written --sex male"), "\(boy.stderr)")
        // A duration below the least: said as such, not "not a duration".
        let zero = try solo.run("invite", "--expires", "0m")
        #expect(zero.code == 65 && zero.stderr.contains("--expires is at least 1m") && !zero.stderr.contains("not a duration"), "\(zero.stderr)")
    }
}
