import Envelope
@testable import famctl
import Foundation
import Projections
import Testing

/// Store files made to break `import stores` (a hostile-input review):
/// each is refused or said clearly, and nothing is lost or altered.
struct ImportHostileInputTests {
    /// Writes `text` as `name` in a new directory under the runner's root.
    static func dir(_ f: FamctlRunner, _ files: [String: String]) throws -> String {
        let dir = f.root + "/in-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/" + name)) }
        return dir
    }

    static func row(_ baby: String, id: String = UUID().uuidString.lowercased(), at: String = "2025-11-30T06:10:00+01:00", fields: String) -> String {
        #"{"id":"\#(id)","focus":"\#(baby)","at":"\#(at)","fields":\#(fields)}"#
    }

    static func fields(_ f: FamctlRunner, _ id: String) throws -> [String: Any] {
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(try f.ok("record", "show", id, "--json").utf8)) as? [String: Any])
        return try #require(shown["fields"] as? [String: Any])
    }

    /// A field named `$…` would be stored and never shown (the record's own
    /// keys are so named), and written again by every import: the row is refused.
    @Test func aFieldNamedWithADollarIsRefused() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let id = UUID().uuidString.lowercased()
        let dir = try Self.dir(f, ["diaper.json": "[" + Self.row(baby, id: id, fields: #"{"wet":true,"$note":"x"}"#) + "]"])
        let r = try f.run("import", "stores", dir)
        #expect(r.code == 65 && r.stderr.contains(#"diaper.json[0]: "fields" has "$note": a name beginning with $ is not a field's"#), "\(r.stderr)")
        #expect(try f.run("record", "show", id).code == 66, "the row was imported")
    }

    /// Two different sources whose texts joined by a NUL read the same: an
    /// import of one does not write over the record of the other.
    @Test func sourcesThatJoinAlikeAreNotOneRecord() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let first = try f.ok("record", "add", "--focus", baby, "--store", "diaper", "--at", "2025-11-30T05:00:00Z",
                             "--json-fields", #"{"wet":true,"note":"original","source":{"provider":"a\u0000b","recordId":"1"}}"#)
        let id = UUID().uuidString.lowercased()
        let dir = try Self.dir(f, ["diaper.json": "[" + Self.row(baby, id: id, fields: #"{"dirty":true,"note":"another","source":{"provider":"a","recordId":"b\u00001"}}"#) + "]"])
        let r = try f.run("import", "stores", dir)
        #expect(r.code == 0 && r.stdout.contains("diaper.json: 1 added"), "\(r.stdout) \(r.stderr)")
        #expect(try Self.fields(f, first)["note"] as? String == "original", "the other source's row wrote over the record")
        #expect(try Self.fields(f, id)["note"] as? String == "another")
    }

    /// A store file larger than a store file may be is refused, said with
    /// its size; the other files are imported. A link to nothing is said
    /// as such, not taken for a missing file.
    @Test func aHugeFileAndALinkToNothingAreSaid() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let id = UUID().uuidString.lowercased()
        let dir = try Self.dir(f, ["diaper.json": "[" + Self.row(baby, id: id, fields: #"{"wet":true}"#) + "]"])
        // Sparse: no disk is used.
        let huge = try FileHandle(forWritingTo: URL(fileURLWithPath: try #require(FileManager.default.createFile(atPath: dir + "/feeding.json", contents: nil) ? dir + "/feeding.json" : nil)))
        try huge.truncate(atOffset: 300 << 20)
        try huge.close()
        try FileManager.default.createSymbolicLink(atPath: dir + "/sleep.json", withDestinationPath: "/nonexistent/sleep.json")
        let r = try f.run("import", "stores", dir)
        #expect(r.code == 65 && r.stderr.contains("feeding.json: larger than the 256 MB a store file may be (300 MB)"), "\(r.stderr)")
        #expect(r.stderr.contains("sleep.json: a link to /nonexistent/sleep.json, which does not exist"), "\(r.stderr)")
        let shown = try f.run("record", "show", id)
        #expect(r.stdout.contains("diaper.json: 1 added") && shown.code == 0, "\(r.stdout)")
        // Alone in its directory, the link is said the same way (not "no store files").
        let alone = try Self.dir(f, [:])
        try FileManager.default.createSymbolicLink(atPath: alone + "/sleep.json", withDestinationPath: "/nonexistent/sleep.json")
        let a = try f.run("import", "stores", alone)
        #expect(a.code == 65 && a.stderr.contains("sleep.json: a link to /nonexistent/sleep.json, which does not exist"), "\(a.stderr)")
    }

    /// Keys of subjects.json that nothing reads are said; a birth before
    /// 1900 is imported and said, as a record's time is.
    @Test func subjectRowsSayWhatIsNotReadAndAnOddYear() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let dir = try Self.dir(f, ["subjects.json": #"[{"focus":"\#(baby)","nmae":"Typo","birth":"0000-01-01"}]"#])
        let r = try f.run("import", "stores", dir)
        #expect(r.code == 0 && r.stderr.contains(#"subjects.json: not read in its rows: "nmae" (did you mean "name"?)"#), "\(r.stderr)")
        #expect(r.stderr.contains("subjects.json[0]: subject.birth: the year 0 is before 1900 (is it mistyped?); imported as it is"), "\(r.stderr)")
    }

    /// A time whose offset no place's clock has ('record add' refuses it)
    /// is imported as it is and said, as a year before 1900 is; a field
    /// stored under a name `field=value` cannot write (another
    /// implementation's; an import refuses it) can be cleared with `--json-fields`.
    @Test func anOffsetNoClockHasIsSaidAndAnOddFieldCanBeCleared() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let id = UUID().uuidString.lowercased()
        let odd = try Self.dir(f, ["feeding.json": "[" + Self.row(baby, id: id, at: "2025-11-30T03:00:00Z", fields: #"{"kind":"bottle","start":"2025-11-30T03:00:00Z","a-b":1}"#) + "]"])
        let refused = try f.run("import", "stores", odd)
        #expect(refused.code == 65 && refused.stderr.contains(#"feeding.json[0]: "fields" has "a-b": not a field name"#), "\(refused.stderr)")
        let dir = try Self.dir(f, ["feeding.json": "[" + Self.row(baby, id: id, at: "2025-11-30T03:00:00+23:59",
                                                               fields: #"{"kind":"bottle","start":"2025-11-30T03:00:00+23:59"}"#) + "]"])
        let r = try f.run("import", "stores", dir)
        #expect(r.code == 0 && r.stdout.contains("feeding.json: 1 added"), "\(r.stdout) \(r.stderr)")
        for name in ["at", "start"] {
            #expect(r.stderr.contains("feeding.json[0]: feeding.\(name) '2025-11-30T03:00:00+23:59': no place's clock is +23:59 from UTC"), "\(name): \(r.stderr)")
        }
        // Written by another implementation.
        let record = try #require(UUID(uuidString: id))
        try Home.open(f.home).append([RecordEvent(kind: .put, record: record, store: "feeding", focus: baby, at: nil, fields: ["a-b": .int(1)]).body])
        #expect(try Self.fields(f, id)["a-b"] as? Int == 1)
        #expect(try f.ok("record", "show", id).contains(#""a-b"=1"#))
        try f.ok("record", "update", id, "--json-fields", #"{"a-b":null}"#)
        #expect(try Self.fields(f, id)["a-b"] == nil, "the field was not cleared")
        // Written, such a name is still refused; as is clearing a body's own key.
        #expect(try f.run("record", "update", id, "--json-fields", #"{"a-b":2}"#).stderr.contains("'a-b' is not a field name"))
        #expect(try f.run("record", "update", id, "--json-fields", #"{"$at":null}"#).code == 65)
    }

    /// A field the store does not define, in every row of a file: one
    /// warning, naming some rows and their number, not one line a row.
    @Test func aTypoInEveryRowIsSaidOnce() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let rows = (0..<50).map { _ in Self.row(baby, fields: #"{"wet":true,"noet":"x"}"#) }
        let dir = try Self.dir(f, ["diaper.json": "[" + rows.joined(separator: ",") + "]"])
        let r = try f.run("import", "stores", dir)
        let lines = r.stderr.split(separator: "\n").filter { $0.contains("'noet'") }
        #expect(r.code == 0 && lines.count == 1 && lines[0].contains("diaper.json (rows 0, 1, 2") && lines[0].contains("…; 50 in all): diaper does not define 'noet'"), "\(r.stderr)")
        // A row of 500 made-up fields: twenty named, and their number.
        let many = "{" + (0..<500).map { #""x\#($0)":1"# }.joined(separator: ",") + #","wet":true}"#
        let wide = try Self.dir(f, ["diaper.json": "[" + Self.row(baby, fields: many) + "]"])
        let w = try f.run("import", "stores", wide)
        let said = w.stderr.split(separator: "\n").filter { $0.contains("does not define") }
        #expect(w.code == 0 && said.count == 21 && w.stderr.contains("diaper.json: 500 fields diaper does not define, kept as given; the first 20 follow"), "\(said.count) lines: \(w.stderr.prefix(400))")
        // A record's own property given as a field is said as what it is.
        let deleted = try Self.dir(f, ["diaper.json": "[" + Self.row(baby, fields: #"{"wet":true,"deleted":true}"#) + "]"])
        let d = try f.run("import", "stores", deleted)
        #expect(d.code == 0 && d.stderr.contains("diaper.json[0]: 'deleted' is not a field of diaper: it is whether the record is deleted")
                && d.stderr.contains("changes nothing of the record"), "\(d.stderr)")
    }

    /// A time written with a small `t` and `z` is stored as `record add`
    /// stores it, with capitals.
    @Test func aSmallTAndZAreWrittenCapital() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let id = UUID().uuidString.lowercased()
        let dir = try Self.dir(f, ["diaper.json": "[" + Self.row(baby, id: id, at: "2025-11-30t06:10:00z", fields: #"{"wet":true}"#) + "]"])
        #expect(try f.run("import", "stores", dir).code == 0)
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(try f.ok("record", "show", id, "--json").utf8)) as? [String: Any])
        #expect(shown["at"] as? String == "2025-11-30T06:10:00Z", "\(shown)")
    }

    /// A decimal of 17 digits that a double does not give back is refused
    /// in a store file, not imported rounded.
    @Test func seventeenDigitsADoubleDoesNotKeepAreRefused() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let id = UUID().uuidString.lowercased()
        let dir = try Self.dir(f, ["feeding.json": "[" + Self.row(baby, id: id, fields: #"{"kind":"bottle","start":"2025-11-30T06:10:00+01:00","amountMl":99.999999999999999}"#) + "]"])
        let r = try f.run("import", "stores", dir)
        #expect(r.code == 65 && r.stderr.contains("feeding.json: the number 99.999999999999999 cannot be kept as written (more digits than a double keeps: it would become 100.0); give fewer digits"), "\(r.stderr)")
        #expect(try f.run("record", "show", id).code == 66)
    }
    /// An edit that changes a text into a canonically equivalent one of
    /// other bytes (é as one character, then as e and a combining accent)
    /// is a change: imported, not taken as "unchanged" and dropped.
    @Test func anEditToEquivalentTextOfOtherBytesIsImported() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let id = try f.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true", "note=caf\u{e9}")
        let out = f.root + "/export"
        try f.ok("export", "stores", out)
        let file = out + "/diaper.json"
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let nfc = "caf\u{e9}", nfd = "cafe\u{301}"
        try #require(text.utf8.count > 0 && String(decoding: Array(text.utf8), as: UTF8.self).contains(nfc))
        // Replaced byte for byte (Swift's own replacing would match either form).
        let edited = Data(text.utf8).replacing(Data(nfc.utf8), with: Data(nfd.utf8))
        try #require(edited != Data(text.utf8))
        try edited.write(to: URL(fileURLWithPath: file))
        let r = try f.run("import", "stores", out)
        #expect(r.code == 0 && r.stdout.contains("diaper.json: 0 added, 1 updated"), "\(r.stdout) \(r.stderr)")
        let note = try Self.fields(f, id)["note"] as? String
        #expect(note.map { Array($0.utf8) } == Array(nfd.utf8), "the note kept its old bytes: \(note.map { Array($0.utf8) } ?? [])")
    }
    /// A file saved as UTF-16 is said to be; a device given as the
    /// directory is not answered with its folder; a care subject made for
    /// rows that name it (a mistyped key, most often) is said.
    @Test func utf16ADeviceAndASubjectMadeForItsRowsAreSaid() throws {
        let (f, baby) = try StoreFileEdgeTests.homeWithBaby()
        let dir = try Self.dir(f, [:])
        try Data([0xFF, 0xFE] + Array("[]".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }).write(to: URL(fileURLWithPath: dir + "/diaper.json"))
        let r = try f.run("import", "stores", dir)
        #expect(r.code == 65 && r.stderr.contains("diaper.json: not valid JSON:") && r.stderr.contains("(the file looks like UTF-16 text: save it as UTF-8)"), "\(r.stderr)")
        let null = try f.run("import", "stores", "/dev/null")
        #expect(null.code == 66 && null.stderr.contains("/dev/null is not a file but a device or another special file, not a directory")
                && !null.stderr.contains("import stores /dev"), "\(null.stderr)")
        let other = "baby:" + UUID().uuidString.lowercased()
        let typo = try Self.dir(f, ["diaper.json": "[" + Self.row(other, fields: #"{"wet":true}"#) + "," + Self.row(baby, fields: #"{"wet":true}"#) + "]"])
        let t = try f.run("import", "stores", typo)
        #expect(t.code == 0 && t.stderr.contains("diaper.json: care subject \(other) added, which its rows name and no subjects.json row gives"), "\(t.stderr)")
        #expect(!t.stderr.contains("care subject \(baby) added"), "\(t.stderr)")
    }
    /// A new baby of the name a baby here has is imported and said: most
    /// often the same baby added on two homes.
    @Test func aSecondBabyOfTheSameNameIsSaid() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily")
        let other = "baby:" + UUID().uuidString.lowercased()
        let dir = try Self.dir(f, ["subjects.json": #"[{"focus":"\#(other)","name":"  lily "}]"#])
        let r = try f.run("import", "stores", dir)
        #expect(r.code == 0 && r.stderr.contains("subjects.json[0]: \(other) is named lily, as \(lily) here is: the same baby added twice?"), "\(r.stderr)")
        #expect(try f.ok("subject", "list").contains(other))
    }
    /// A record with no time (its creating put not counted, later changes
    /// left alone: a fork, a refused join) is exported with `"at": null`
    /// and imported as it is, not refused with its whole file (a review).
    @Test func aRecordWithNoTimeSurvivesExportAndImport() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let kept = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        let id = UUID()
        let home = try Home.open(f.home)
        try home.append([RecordEvent(kind: .put, record: id, store: "postpartum", focus: "newMom", at: nil, fields: ["kind": .string("mood"), "mood": .int(4)]).body])
        let out = f.root + "/export"
        try f.ok("export", "stores", out)
        #expect(try String(contentsOfFile: out + "/postpartum.json", encoding: .utf8).contains(#""at" : null"#))
        let g = FamctlRunner()
        try g.ok("init", "--name", "Gran")
        let r = try g.run("import", "stores", out)
        #expect(r.code == 0 && r.stdout.contains("postpartum.json: 2 added"), "\(r.stdout) \(r.stderr)")
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(try g.ok("record", "show", id.lowercasedText, "--json").utf8)) as? [String: Any])
        #expect(shown["at"] is NSNull && (shown["fields"] as? [String: Any])?["mood"] as? Int == 4, "\(shown)")
        #expect(try g.ok("record", "show", kept).contains("mood=2"))
        let again = try g.run("import", "stores", out)
        #expect(again.code == 0 && again.stdout.contains("postpartum.json: 0 added, 0 updated, 2 unchanged"), "\(again.stdout) \(again.stderr)")
        // A row without "at" at all (a file made by hand) still needs one.
        let dir = try Self.dir(g, ["diaper.json": #"[{"id":"\#(UUID().uuidString.lowercased())","focus":"newMom","fields":{"wet":true}}]"#])
        let missing = try g.run("import", "stores", dir)
        #expect(missing.code == 65 && missing.stderr.contains(#"needs "at""#), "\(missing.stderr)")
    }
}
