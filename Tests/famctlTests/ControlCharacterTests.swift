import Envelope
@testable import famctl
import Foundation
import Projections
import Testing

/// Names and fields are shown on every member's screen: a name with a
/// control character is refused wherever one is given, and text with control
/// characters that is already in the log (a field, another device's name)
/// is printed with them escaped, never raw. JSON keeps the exact text.
struct ControlCharacterTests {
    static let title = "a\nb\u{1b}[31mred\u{202e}x\tz"
    static let shownTitle = #"title=a\nb\u{1b}[31mred\u{202e}x\tz"#

    /// No control character other than the newlines that end lines.
    static func expectPlain(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let raw = text.unicodeScalars.filter { $0 != "\n" && PlainText.isControl($0) }.map(PlainText.escape)
        #expect(raw.count == 0, "\(what) printed raw control characters: \(raw)", sourceLocation: sourceLocation)
    }

    @Test func namesWithControlCharactersAreRefusedEverywhere() throws {
        let mum = FamctlRunner()
        #expect(try mum.run("init", "--name", "Mum\u{1b}[2J").stderr.contains(#"--name must not contain control characters (it has \u{1b})"#))
        try mum.ok("init", "--name", "Mum")
        let family = try mum.run("family", "create", "--name", "The\nLins", "--dir", mum.root + "/shared")
        #expect(family.code == 65 && family.stderr.contains(#"--name must not contain control characters (it has \n)"#), "\(family.stderr)")
        try mum.ok("family", "create", "--name", "The Lins", "--dir", mum.root + "/shared")
        let dad = FamctlRunner()
        let accept = try dad.run("accept", try mum.ok("invite"), "--name", "Dad\u{1b}]0;owned\u{7}")
        #expect(accept.code == 65 && accept.stderr.contains(#"--name must not contain control characters (it has \u{1b})"#), "\(accept.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dad.home), "a refused accept created a home")
        for kind in ["baby", "newMom"] {
            let r = try mum.run("subject", "add", kind, "--name", "Li\u{1b}[31mly")
            #expect(r.code == 65 && r.stderr.contains(#"subject.name: must not contain control characters (it has \u{1b})"#), "\(kind): \(r.stderr)")
        }
        let dir = mum.root + "/in"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try #"[{"focus":"newMom","name":"Mum\u2028Two"}]"#.write(toFile: dir + "/subjects.json", atomically: true, encoding: .utf8)
        let imported = try mum.run("import", "stores", dir)
        #expect(imported.code == 65 && imported.stderr.contains(#"subjects.json[0]: subject.name: must not contain control characters (it has \u{2028})"#), "\(imported.stderr)")
        #expect(try mum.ok("subject", "list").isEmpty)
        #expect(try mum.ok("members").contains("  Mum (this device)"))
        for r in [family, accept, imported] { Self.expectPlain(r.stderr, "an error") }
    }

    @Test func textFromOtherDevicesIsShownEscaped() throws {
        let mum = FamctlRunner(), dad = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        // A device name stored by an earlier famctl, which did not check it.
        try Home.open(mum.home).state.set(.deviceName, "Mum\u{1b}]0;owned\u{7}")
        try mum.ok("family", "create", "--name", "The Lins", "--dir", mum.root + "/shared")
        try dad.ok("accept", try mum.ok("invite"), "--name", "Dad")
        // Dad writes a field with control characters, and a subject whose name has them.
        let baby = FocusKey.baby(UUID())
        try Home.open(dad.home).append([SubjectEvent(focus: baby, fields: ["name": .string("Li\nly\u{1b}[0m")]).body])
        let record = try dad.ok("record", "add", "--focus", baby.description, "--store", "milestone", "title=" + Self.title)
        for _ in 0..<2 { for r in [mum, dad] { try r.ok("sync") } }

        let list = try mum.ok("record", "list")
        #expect(list.split(separator: "\n").count == 1 && list.hasSuffix(Self.shownTitle), "\(list)")
        let show = try mum.ok("record", "show", "--history", record)
        #expect(show.split(separator: "\n").count == 2 && show.contains(Self.shownTitle))
        let log = try mum.ok("log")
        #expect(log.contains(#"name=Li\nly\u{1b}[0m"#) && log.contains(Self.shownTitle))
        let replay = try mum.ok("replay", "--record", record)
        #expect(replay.contains("now: " + Self.shownTitle))
        let members = try dad.ok("members")
        #expect(members.contains(#"  Mum\u{1b}]0;owned\u{7}  "#), "\(members)")
        let status = try dad.ok("status")
        #expect(status.contains(#" Mum\u{1b}]0;owned\u{7}  seq"#), "\(status)")
        for (what, text) in [("record list", list), ("record show", show), ("log", log), ("replay", replay), ("members", members), ("status", status),
                             ("subject list", try mum.ok("subject", "list")), ("members", try mum.ok("members")), ("status", try mum.ok("status"))] {
            Self.expectPlain(text, what)
        }

        // JSON is the exact text.
        let rows = try JSONSerialization.jsonObject(with: Data(try mum.ok("record", "list", "--json").utf8)) as! [[String: Any]]
        #expect((rows.first?["fields"] as? [String: Any])?["title"] as? String == Self.title)
        let subjects = try JSONSerialization.jsonObject(with: Data(try mum.ok("subject", "list", "--json").utf8)) as! [[String: Any]]
        #expect(subjects.contains { $0["name"] as? String == "Li\nly\u{1b}[0m" })
        let roster = try JSONSerialization.jsonObject(with: Data(try dad.ok("members", "--json").utf8)) as! [String: Any]
        #expect((roster["members"] as! [[String: Any]]).contains { $0["name"] as? String == "Mum\u{1b}]0;owned\u{7}" })
    }
}

/// An argument that is not UTF-8 (a terminal set to Latin-1) is refused,
/// saying which and what to do, rather than taken with its bytes replaced
/// (a name stored as "Zo\u{FFFD}" and synced to everyone); UTF-8 text,
/// accents and all, is taken as given.
struct NonUTF8ArgumentTests {
    @Test func anArgumentThatIsNotUTF8IsRefusedNotRepaired() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let before = try f.ok("record", "list")
        let dir = FamctlRunner.binary.deletingLastPathComponent().path
        let latin1 = try f.run(["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2"],
                               throughPath: "PATH='\(dir)':$PATH; set -- \"$@\" \"note=$(printf 'Zo\\353')\"")
        #expect(latin1.code == 65 && latin1.stderr.contains("argument 9 (note=Zo\u{FFFD}) is not UTF-8 text; nothing was done")
                && latin1.stderr.contains("LANG=C.UTF-8"), "exit \(latin1.code): \(latin1.stderr)")
        #expect(try f.ok("record", "list") == before, "a record was written from a repaired argument")
        let id = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2", "note=Zoë")
        #expect(try f.ok("record", "show", id).contains("note=Zoë"))
    }
}

/// What one member writes cannot pass for more columns of another's lines:
/// a field's name with a space or an `=` (refused on the command line and
/// by an import, quoted when another device's event brings one), a
/// member's name with spaces (quoted), and JSON keeps the C1 controls and
/// the bidirectional overrides escaped (`\u009b`), as a terminal showing it
/// would otherwise act on them.
struct SpoofedColumnsTests {
    @Test func aFieldNameOrAMemberNameCannotPassForMoreColumns() throws {
        let family = try SharedFamily(["Dad (this device)  fa2fe00487a1  owner"])
        let (mum, dad) = (family.mum, family.dad)
        let baby = try mum.ok("subject", "add", "baby", "--name", "Lily")
        for r in [mum, dad] { try r.ok("sync") }
        // An import refuses a name 'record add' refuses, naming it.
        let dir = dad.root + "/in"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let spoof = "zz  2026-12-07T06:00:00Z  milestone  \(baby)  title"
        try #"[{"at":"2026-12-07T06:00:00Z","focus":"\#(baby)","id":"01a24f1e-03a4-7ba8-93cb-cda2cf183e9c","fields":{"title":"Rolled over","\#(spoof)":"First steps"}}]"#
            .write(toFile: dir + "/milestone.json", atomically: true, encoding: .utf8)
        let imported = try dad.run("import", "stores", dir)
        #expect(imported.code == 65 && imported.stderr.contains(#"milestone.json[0]: "fields" has "zz  2026-12-07T06:00:00Z"#)
                && imported.stderr.contains("not a field name (letters, digits and _, starting with a letter)"), "\(imported.stderr)")
        // Written by another build (an event this one would not write): quoted where it is shown.
        let home = try Home.open(dad.home)
        let id = UUID()
        try home.append([RecordEvent(kind: .put, record: id, store: "milestone", focus: baby, at: "2026-12-07T06:00:00Z",
                                     fields: ["title": .string("Rolled over"), spoof: .string("First steps"), "a=b": .int(1)]).body])
        for r in [dad, mum] { try r.ok("sync") }
        let line = try mum.ok("record", "show", id.lowercasedText)
        #expect(line.hasSuffix(#"  milestone  Lily  "a=b"=1 title="Rolled over" "zz  2026-12-07T06:00:00Z  milestone  \#(baby)  title"="First steps""#), "\(line)")
        #expect(try mum.ok("log").contains(#""a=b"=1 title="Rolled over""#))
        // A member's name with spaces, quoted in `members` and `status`.
        let members = try mum.ok("members")
        #expect(members.contains(#"  "Dad (this device)  fa2fe00487a1  owner"  "#) && members.contains("  Mum (this device)  "), "\(members)")
        let status = try mum.ok("status")
        #expect(status.contains(#" "Dad (this device)  fa2fe00487a1  owner"  seq "#), "\(status)")
        let history = try mum.ok("record", "show", id.lowercasedText, "--history")
        #expect(history.contains(#" "Dad (this device)  fa2fe00487a1  owner"  put  event "#), "\(history)")
    }

    @Test func jsonEscapesTheControlsATerminalActsOn() throws {
        let mum = try FamctlRunner.mum()
        let note = "\u{9b}2J\u{9d}0;TITLE\u{9c}\u{202e}é\u{7f}"
        let id = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--json-fields", #"{"note":"\u009b2J\u009d0;TITLE\u009c\u202eé\u007f"}"#)
        let json = try mum.ok("record", "show", id, "--json")
        #expect(json.contains(#""note" : "\u009b2J\u009d0;TITLE\u009c\u202eé\u007f""#), "\(json)")
        ControlCharacterTests.expectPlain(json, "record show --json")
        // The same text to a reader.
        let read = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        #expect((read["fields"] as? [String: Any])?["note"] as? String == note)
        // And in an export, read back by an import as it was.
        let out = mum.root + "/out"
        try mum.ok("export", "stores", out)
        let file = try String(contentsOfFile: out + "/postpartum.json", encoding: .utf8)
        #expect(file.contains(#"\u009b2J"#) && !file.unicodeScalars.contains("\u{9b}"), "\(file)")
    }
}
