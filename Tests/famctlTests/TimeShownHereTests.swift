@testable import famctl
import Foundation
import Testing

/// Text output shows a record's times in the reader's time zone (`TZ`);
/// JSON and exports keep them as written (a user review: a family across
/// time zones read each record in its author's offset, 06:08+01:00 listed
/// before 00:09-05:00).
struct TimeShownHereTests {
    static func zone(_ id: String) throws -> TimeZone { try #require(TimeZone(identifier: id)) }

    @Test func theSameMomentInThisZoneWithTheFractionAsWritten() throws {
        let cases: [(String, String, String)] = [
            ("2026-12-06T06:08:43.5+01:00", "America/New_York", "2026-12-06T00:08:43.5-05:00"),
            ("2026-12-06T06:08:43.5+01:00", "UTC", "2026-12-06T05:08:43.5Z"),
            ("2026-12-06T00:09:33-05:00", "Europe/Paris", "2026-12-06T06:09:33+01:00"),
            // Across a year's end, and a summer-time change (01:00 UTC that day in Paris).
            ("2027-01-01T02:00:00.123+01:00", "America/New_York", "2026-12-31T20:00:00.123-05:00"),
            ("2026-03-29T01:30:00Z", "Europe/Paris", "2026-03-29T03:30:00+02:00"),
            ("2026-03-29T00:30:00Z", "Europe/Paris", "2026-03-29T01:30:00+01:00"),
            // Before 1970, and a zone ahead by hours and a half.
            ("1965-06-01T00:00:00Z", "Asia/Kolkata", "1965-06-01T05:30:00+05:30"),
        ]
        for (written, id, shown) in cases {
            #expect(TimeText.shownHere(written, in: try Self.zone(id)) == shown, "\(written) in \(id)")
            // The same moment, whatever the text.
            #expect(TimeText.parse(shown) == TimeText.parse(written))
        }
    }

    @Test func whatIsAlreadyInThisZoneOrNoTimeIsShownAsWritten() throws {
        let paris = try Self.zone("Europe/Paris")
        for kept in ["2026-12-06T06:08:43+01:00", "2026-12-06T06:08:43.120+01:00", "tomorrow", "2026-12-06", "2026-12-06T06:08:43", ""] {
            #expect(TimeText.shownHere(kept, in: paris) == kept)
        }
        // UTC written as `+00:00` or `Z`, read where the offset is 0: as written.
        let utc = try Self.zone("UTC")
        for kept in ["2026-12-06T05:00:00+00:00", "2026-12-06T05:00:00Z"] { #expect(TimeText.shownHere(kept, in: utc) == kept) }
    }

    /// Mum in Paris and Dad in New York list the same records, each in
    /// their own zone, ordered as they happened; JSON holds what was written.
    @Test func aFamilyAcrossTimeZonesReadsEachRecordInItsOwnZone() throws {
        let (mum, others) = try HouseholdTests.family([("Dad", "member")])
        let dad = others[0]
        let (paris, newYork) = (["TZ": "Europe/Paris"], ["TZ": "America/New_York"])
        let baby = try mum.ok("subject", "add", "baby")
        try HouseholdTests.exchange([mum, dad])
        let early = try mum.run(["record", "add", "--focus", baby, "--store", "sleep", "start=2026-12-06T06:08:43+01:00", "end=2026-12-06T06:40:00+01:00"], env: paris)
        let late = try dad.run(["record", "add", "--focus", baby, "--store", "diaper", "wet=true", "--at", "2026-12-06T00:09:33-05:00"], env: newYork)
        #expect(early.code == 0 && late.code == 0, "\(early.stderr)\(late.stderr)")
        try HouseholdTests.exchange([mum, dad])
        let inParis = try mum.run(["record", "list"], env: paris).stdout.split(separator: "\n")
        #expect(inParis.count == 2 && inParis[0].contains("  2026-12-06T06:08:43+01:00  sleep") && inParis[0].contains("end=2026-12-06T06:40:00+01:00")
                && inParis[1].contains("  2026-12-06T06:09:33+01:00  diaper"), "\(inParis)")
        let inNewYork = try dad.run(["record", "list"], env: newYork).stdout.split(separator: "\n")
        #expect(inNewYork.count == 2 && inNewYork[0].contains("  2026-12-06T00:08:43-05:00  sleep") && inNewYork[0].contains("start=2026-12-06T00:08:43-05:00")
                && inNewYork[0].contains("end=2026-12-06T00:40:00-05:00") && inNewYork[1].contains("  2026-12-06T00:09:33-05:00  diaper"), "\(inNewYork)")
        let shown = try dad.run(["record", "show", early.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "--history"], env: newYork).stdout
        #expect(shown.contains("start=2026-12-06T00:08:43-05:00") && !shown.contains("+01:00"), "\(shown)")
        // As written, for programs and exports.
        let json = try dad.run(["record", "list", "--json"], env: newYork).stdout
        #expect(json.contains("\"2026-12-06T06:08:43+01:00\"") && json.contains("\"2026-12-06T00:09:33-05:00\""), "\(json)")
    }

    /// `TZ` as the system reads it (what `date` shows): a zone named with
    /// glibc's leading colon, and POSIX rules, `UTC+3` being three hours
    /// west (a clock review: the first was read as UTC, the second as
    /// three hours east).
    /// A zone named by the path of its file keeps its summer time (a
    /// review: it was kept at the offset of the day famctl ran).
    @Test(arguments: [(":America/New_York", "-05:00", "-04:00"), ("UTC+3", "-03:00", "-03:00"), ("<+0530>-5:30", "+05:30", "+05:30"),
                      ("America/New_York", "-05:00", "-04:00"), (":/usr/share/zoneinfo/Europe/Paris", "+01:00", "+02:00"),
                      // A rule with summer time, as a zone's present rule (a review: kept at the offset of the day famctl ran).
                      ("CET-1CEST,M3.5.0,M10.5.0/3", "+01:00", "+02:00"), ("EST5EDT,M3.2.0,M11.1.0", "-05:00", "-04:00")])
    func tzIsReadAsTheSystemReadsIt(_ tz: String, _ winter: String, _ summer: String) throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let baby = try f.ok("subject", "add", "baby")
        try f.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true", "--at", "2026-12-06T12:00:00Z")
        try f.ok("record", "add", "--focus", baby, "--store", "diaper", "dirty=true", "--at", "2026-07-06T12:00:00Z")
        let listed = try f.run(["record", "list"], env: ["TZ": tz])
        #expect(listed.code == 0 && listed.stdout.contains(winter + "  diaper") && listed.stdout.contains(summer + "  diaper"), "\(tz): \(listed.stdout)")
    }

    /// A rule with summer time that no zone has is kept at its offset now,
    /// and says so on every command rather than listing a summer night's
    /// records under the wrong day unsaid.
    @Test func aRuleNoZoneHasIsSaid() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let baby = try f.ok("subject", "add", "baby")
        try f.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true", "--at", "2026-07-06T12:00:00Z")
        let listed = try f.run(["record", "list"], env: ["TZ": "XYZ-3ABC,M3.5.0,M10.5.0/3"])
        // Its offset now: +03:00 in the northern winter, +04:00 in summer.
        let hour = listed.stderr.contains("at +04:00, its offset now") ? 16 : 15
        #expect(listed.code == 0 && listed.stdout.contains("2026-07-06T\(hour):00:00+0\(hour - 12):00  diaper"), "\(listed.stdout)")
        #expect(listed.stderr.contains("famctl: note: TZ=XYZ-3ABC,M3.5.0,M10.5.0/3 has summer time that famctl cannot follow") && listed.stderr.contains("at +0\(hour - 12):00, its offset now"), "\(listed.stderr)")
        // A rule without summer time says nothing.
        let plain = try f.run(["record", "list"], env: ["TZ": "XYZ-3"])
        #expect(plain.code == 0 && plain.stderr.isEmpty && plain.stdout.contains("+03:00  diaper"), "\(plain.stderr)")
    }
}

/// A time written with an offset that is not this device's zone's on that
/// day (an example's `+01:00` copied after the clocks went forward) is
/// stored as written, which is an hour off the wall time meant: said, with
/// the command that puts it right; and a time it makes later than now is
/// refused saying the offset, not that the clock is wrong.
struct OffsetNotHereTests {
    @Test func anOffsetNotThisZonesIsSaid() throws {
        let f = try FamctlRunner.mum()
        let berlin = ["TZ": "Europe/Berlin"]
        let summer = try f.run(["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--at", "2026-07-01T06:00:00+01:00"], env: berlin)
        let id = summer.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(summer.code == 0 && summer.stderr.contains("famctl: note: --at 2026-07-01T06:00:00+01:00 has the offset +01:00, not this device's on that day (+02:00): it is 2026-07-01T07:00:00+02:00 here")
                && summer.stderr.contains("If 06:00 here was meant: famctl record update \(id) --at 2026-07-01T06:00:00+02:00"), "\(summer.stderr)")
        // The zone's own offset, UTC, or another zone's device: nothing to say.
        for (at, env) in [("2026-12-01T06:00:00+01:00", berlin), ("2026-07-01T06:00:00Z", berlin), ("2026-07-01T06:00:00+01:00", ["TZ": "Europe/London"])] {
            let r = try f.run(["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--at", at], env: env)
            #expect(r.code == 0 && !r.stderr.contains("has the offset"), "\(at) \(env): \(r.stderr)")
        }
        // A field's time too, given by record update.
        let feed = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=pumping", "leftMl=30")
        let updated = try f.run(["record", "update", feed, "--at", "2026-07-02T08:30:00+01:00"], env: berlin)
        #expect(updated.code == 0 && updated.stderr.contains("If 08:30 here was meant: famctl record update \(feed) --at 2026-07-02T08:30:00+02:00"), "\(updated.stderr)")
        // Several such times: one note, one command for them all (an end
        // put right alone could come before its start).
        let sleepF = try FamctlRunner.mum()
        let baby = try sleepF.ok("subject", "add", "baby")
        let sleep = try sleepF.run(["record", "add", "--focus", baby, "--store", "sleep", "start=2026-07-01T06:00:00+01:00", "end=2026-07-01T06:30:00+01:00"], env: berlin)
        let sid = sleep.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(sleep.stderr.split(separator: "\n").filter { $0.contains("has the offset") }.count == 1
                && sleep.stderr.contains("If 06:30, 06:00 here were meant: famctl record update \(sid) end=2026-07-01T06:30:00+02:00 start=2026-07-01T06:00:00+02:00"), "\(sleep.stderr)")
        let fixed = try sleepF.run(["record", "update", sid, "end=2026-07-01T06:30:00+02:00", "start=2026-07-01T06:00:00+02:00"], env: berlin)
        #expect(fixed.code == 0 && !fixed.stderr.contains("has the offset"), "\(fixed.stderr)")
        // A zone at UTC that day is said as Z.
        let london = try f.run(["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--at", "2026-12-01T06:00:00+01:00"], env: ["TZ": "Europe/London"])
        #expect(london.stderr.contains("not this device's on that day (Z)"), "\(london.stderr)")
        // A time the wrong offset puts ahead of now: refused, saying the offset.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let earlier = Date().addingTimeInterval(-600)
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: earlier)
        let wall = String(format: "%04d-%02d-%02dT%02d:%02d:00", c.year!, c.month!, c.day!, c.hour!, c.minute!)
        let ahead = try f.run(["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--at", wall + "-05:00"], env: berlin)
        let here = calendar.timeZone.secondsFromGMT(for: earlier) / 3600
        #expect(ahead.code == 65 && ahead.stderr.contains("is written with the offset -05:00, which is not this device's on that day (+0\(here):00)")
                && ahead.stderr.contains("If \(wall.dropFirst(11).prefix(5)) here was meant: --at \(wall)+0\(here):00.") && !ahead.stderr.contains("set the clock right"), "\(ahead.stderr)")
    }
}
