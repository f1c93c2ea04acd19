import Envelope
@testable import famctl
import Foundation
import Projections
import Testing

/// A date the calendar does not have (2026-02-30) is refused wherever famctl
/// takes one, naming the date; one that arrives in another device's event is
/// shown and judged like any other text, without failing a command.
struct ImpossibleDateTests {
    static let februaryThirtieth = "the date 2026-02-30 does not exist (February 2026 has 28 days)"

    @Test func refusedOnTheCommandLineNamingTheDate() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let baby = try f.ok("subject", "add", "baby", "--birth", "2024-02-29")
        for (args, message) in [
            (["subject", "add", "baby", "--birth", "2026-02-30"], "subject.birth: " + Self.februaryThirtieth),
            (["subject", "add", "baby", "--birth", "2026-04-31"], "subject.birth: the date 2026-04-31 does not exist (April 2026 has 30 days)"),
            (["subject", "add", "pregnancy", "--due", "2026-02-30"], "subject.due: " + Self.februaryThirtieth),
            (["record", "add", "--focus", baby, "--store", "milestone", "title=x", "--at", "2026-02-30T00:00:00Z"],
             "--at '2026-02-30T00:00:00Z': " + Self.februaryThirtieth),
            (["record", "add", "--focus", baby, "--store", "feeding", "kind=bottle", "start=2026-02-30T08:00:00+01:00"],
             "feeding.start: " + Self.februaryThirtieth),
            (["log", "--since", "2026-02-30"], "--since '2026-02-30': " + Self.februaryThirtieth),
            (["replay", "--until", "2026-02-30T00:00:00Z"], "--until '2026-02-30T00:00:00Z': " + Self.februaryThirtieth),
            // Second 60 (a leap second), in any minute, wherever a time is taken.
            (["record", "add", "--focus", baby, "--store", "diaper", "wet=true", "--at", "2026-11-01T10:30:60Z"],
             "--at '2026-11-01T10:30:60Z': the time 10:30:60 does not exist here"),
            (["record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-05T23:59:60Z"], "sleep.start: the time 23:59:60 does not exist here"),
            (["log", "--since", "2026-11-01T10:30:60Z"], "--since '2026-11-01T10:30:60Z': the time 10:30:60 does not exist here"),
            (["replay", "--until", "2026-11-01T10:30:60+01:00"], "--until '2026-11-01T10:30:60+01:00': the time 10:30:60 does not exist here"),
        ] {
            let r = try f.run(args)
            #expect(r.code == 65, "\(args): \(r.code) \(r.stderr)")
            #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
        }
        #expect(try f.ok("subject", "list", "--long") == baby + "  born 2024-02-29")
        #expect(try f.ok("record", "list").isEmpty)
    }

    /// `log --since` and `replay --until` read a time as strictly as a
    /// record's (with its offset, nothing after it) or exactly a date: a
    /// time without an offset was read as midnight of its date, and text
    /// after a time was ignored.
    @Test func sinceAndUntilTakeWholeTimesOnly() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        for bad in ["2026-12-01T23:00:00", "2026-12-01T04:22:51Zjunk", "2026-12-01xyz", "2026-12-01T99:99:99Z", "yesterday"] {
            for (command, option) in [("log", "--since"), ("replay", "--until")] {
                let r = try f.run([command, option, bad])
                #expect(r.code == 65 && r.stderr.contains("is not an ISO-8601 time with offset, nor a date"), "\(command) \(bad): \(r.code) \(r.stderr)")
            }
        }
        for good in ["2026-12-01", "2026-12-01T04:22:51.029Z", "2026-12-01T05:00:00+01:00"] {
            #expect(try f.run(["log", "--since", good]).code == 0, "\(good)")
            #expect(try f.run(["replay", "--until", good]).code == 0, "\(good)")
        }
    }

    @Test func refusedByImportNamingTheRow() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let dir = f.root + "/in"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try #"[{"focus":"baby:0f8e2d4c-5b6a-4978-8c1d-2e3f4a5b6c7d","birth":"2026-02-31"}]"#
            .write(toFile: dir + "/subjects.json", atomically: true, encoding: .utf8)
        try #"[{"id":"11111111-1111-4111-8111-111111111111","focus":"newMom","at":"2026-02-30T08:00:00+01:00","fields":{"kind":"mood","mood":3}}]"#
            .write(toFile: dir + "/postpartum.json", atomically: true, encoding: .utf8)
        let r = try f.run("import", "stores", dir)
        #expect(r.code == 65)
        #expect(r.stderr.contains("subjects.json[0]: subject.birth: the date 2026-02-31 does not exist (February 2026 has 28 days)"), "\(r.stderr)")
        #expect(r.stderr.contains(#"postpartum.json[0]: "at": "# + Self.februaryThirtieth), "\(r.stderr)")
        #expect(try f.ok("subject", "list") == "newMom")
        #expect(try f.ok("record", "list").isEmpty)
    }

    /// Another device's events carry what its famctl wrote: impossible dates
    /// in a birth, a record's `at` and a time field are kept as text.
    @Test func foreignEventsWithImpossibleDatesFailNothing() throws {
        let family = try SharedFamily(["Dad"])
        let baby = FocusKey.baby(UUID())
        let record = UUID()
        do {
            let dad = try Home.open(family.dad.home)
            try dad.append([
                SubjectEvent(focus: baby, fields: ["name": .string("Lily"), "birth": .string("2026-02-31")]).body,
                RecordEvent(kind: .put, record: record, store: "feeding", focus: baby.description, at: "2026-02-30T08:00:00Z",
                            fields: ["kind": .string("bottle"), "start": .string("2026-02-30T08:00:00Z")]).body,
            ])
        }
        try family.dad.ok("sync")
        try family.mum.ok("sync")
        let subjects = try JSONSerialization.jsonObject(with: Data(try family.mum.ok("subject", "list", "--json").utf8)) as! [[String: Any]]
        #expect(subjects.contains { $0["birth"] as? String == "2026-02-31" })
        let listed = try family.mum.ok("record", "list")
        #expect(listed.contains(record.uuidString.lowercased()) && listed.contains("start=2026-02-30T08:00:00Z"))
        try family.mum.ok("record", "show", "--history", record.uuidString)
        try family.mum.ok("log")
        try family.mum.ok("status")
        #expect(try family.mum.ok("replay").hasSuffix("result: OK"))
        #expect(try family.mum.ok("digest") == family.dad.ok("digest"))
    }
}
