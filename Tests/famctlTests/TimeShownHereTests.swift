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
                      ("America/New_York", "-05:00", "-04:00"), (":/usr/share/zoneinfo/Europe/Paris", "+01:00", "+02:00")])
    func tzIsReadAsTheSystemReadsIt(_ tz: String, _ winter: String, _ summer: String) throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let baby = try f.ok("subject", "add", "baby")
        try f.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true", "--at", "2026-12-06T12:00:00Z")
        try f.ok("record", "add", "--focus", baby, "--store", "diaper", "dirty=true", "--at", "2026-07-06T12:00:00Z")
        let listed = try f.run(["record", "list"], env: ["TZ": tz])
        #expect(listed.code == 0 && listed.stdout.contains(winter + "  diaper") && listed.stdout.contains(summer + "  diaper"), "\(tz): \(listed.stdout)")
    }
}
