import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Replicator
import Testing

/// `export stores` streams each store's file (``StreamedListing`` into an
/// ``AtomicFile``): what it writes must be the records sorted by time, then
/// id, exactly, although SQLite reads them by whole milliseconds; and a
/// store that cannot be read to its end must leave its file as it was.
struct ExportStreamTests {
    /// A home with `n` mood records whose times are picked to need the exact
    /// order: many share a millisecond but not a moment (fractions below
    /// it), some are one moment written with two offsets, and their ids run
    /// against their times.
    static func homeWithCloseMoods(_ n: Int, seed: UInt64) throws -> FamctlRunner {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let dir = f.root + "/in"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var rng = SplitMixRNG(seed: seed)
        let rows: [[String: Any]] = (0..<n).map { i in
            let second = Int.random(in: 0..<40, using: &rng)
            let millisecond = Int.random(in: 0..<3, using: &rng)
            let below = Int.random(in: 0..<10, using: &rng)
            // The same moment, at +01:00 or at Z an hour earlier.
            let at = Bool.random(using: &rng)
                ? String(format: "2026-11-29T08:00:%02d.%03d%d+01:00", second, millisecond, below)
                : String(format: "2026-11-29T07:00:%02d.%03d%dZ", second, millisecond, below)
            return ["id": UUID().uuidString.lowercased(), "focus": "newMom", "at": at,
                    "fields": ["kind": "mood", "mood": i % 5 + 1] as [String: Any]]
        }
        try JSONSerialization.data(withJSONObject: rows).write(to: URL(fileURLWithPath: dir + "/postpartum.json"))
        try f.ok("import", "stores", dir)
        try f.ok("record", "add", "--focus", "newMom", "--store", "growth", "weightKg=61.5")
        return f
    }

    /// Thousands of records, hundreds of them in each millisecond: every
    /// store file equals the records read one by one, sorted by moment then
    /// id, written as one array; its ids are in that order, and an empty
    /// store is `[]`.
    @Test(arguments: [1, 2] as [UInt64])
    func eachFileIsItsRecordsByMomentThenId(seed: UInt64) throws {
        let f = try Self.homeWithCloseMoods(4_000, seed: seed)
        let dir = f.root + "/export"
        let out = try f.ok("export", "stores", dir)
        #expect(out.contains("postpartum.json: 4000") && out.contains("growth.json: 1"), "\(out)")
        let home = try Home.open(f.home)
        for store in StoreName.allCases {
            // Those without a time first, then by moment, then by id.
            func key(_ r: RecordState) -> (Int, Date, String) {
                let moment = r.at.flatMap(TimeValue.parse)
                return (moment == nil ? 0 : 1, moment ?? .distantPast, r.id.lowercasedText)
            }
            let records = try home.projector.records(.init(store: store.rawValue)).sorted { key($0) < key($1) }
            let expected = PrettyJSON.bytes(.array(records.map { ExportStoresCommand.row($0, problems: []) })) + [0x0A]
            let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/\(store.rawValue).json")))
            let differsAt = written.indices.first { $0 < expected.count && written[$0] != expected[$0] } ?? (written.count == expected.count ? nil : min(written.count, expected.count))
            #expect(differsAt == nil, "\(store.rawValue).json differs from the records in order at byte \(differsAt ?? 0) of \(written.count)")
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(written)) as? [[String: Any]])
            let moments = parsed.map { (TimeValue.parse($0["at"] as! String)!, $0["id"] as! String) }
            #expect(zip(moments, moments.dropFirst()).allSatisfy { $0 < $1 }, "\(store.rawValue).json is in order")
        }
        let moods = try ExportProblemsTests.rows(dir, "postpartum")
        let milliseconds = moods.map { EntityState.milliseconds(TimeValue.parse($0["at"] as! String)!) }
        #expect(Set(milliseconds).count < 150, "many records share a millisecond")
        // What SQLite's order alone (whole milliseconds, then id) would give
        // differs: the exact order within a millisecond is what is tested.
        let ids = moods.map { $0["id"] as! String }
        let byMillisecond = zip(milliseconds, ids).sorted { $0 < $1 }.map(\.1)
        #expect(ids != byMillisecond, "the whole milliseconds alone would order them otherwise")
        #expect(try String(contentsOfFile: dir + "/sleep.json", encoding: .utf8) == "[]\n")
    }

    /// A row damaged in the middle of a store: the export fails naming the
    /// stores' file and `rebuild`, and that store's file keeps what the
    /// export before wrote, byte for byte; no temporary file is left, and
    /// one a killed export left (ten minutes untouched) is removed by the next.
    @Test func aStoreThatCannotBeReadKeepsItsFile() throws {
        let f = try Self.homeWithCloseMoods(3_000, seed: 3)
        let dir = f.root + "/export"
        try f.ok("export", "stores", dir)
        let before = try Data(contentsOf: URL(fileURLWithPath: dir + "/postpartum.json"))
        try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let home = try Home.open(f.home)
        let damaged = try home.projector.records(.init(store: "postpartum"))[2_000].id.lowercasedText
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: f.home).first { $0.hasPrefix("projection.") && $0.hasSuffix(".sqlite") })
        do {
            let db = try Database(path: f.home + "/" + file)
            try db.run("UPDATE p_entities SET fields = ?1 WHERE kind = 'record' AND id = ?2", [.blob([2, 3]), .text(damaged)])
            #expect(db.changes == 1)
        }
        let failed = try f.run("export", "stores", dir)
        #expect(failed.code == 65, "\(failed.code) \(failed.stderr)")
        #expect(failed.stderr.contains("the stores' file") && failed.stderr.contains("famctl rebuild"), "\(failed.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/postpartum.json")) == before)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(!names.contains { $0.contains(".tmp-") }, "\(names)")
        // What an export killed halfway leaves: its temporary file, removed
        // by the next export once its process is gone; a file of the user's
        // with a name like it is left alone.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let leftover = dir + "/sleep.json.tmp-\(gone.processIdentifier)", mine = dir + "/notes.txt.tmp-\(gone.processIdentifier)"
        let recent = dir + "/growth.json.tmp-\(gone.processIdentifier)"
        for path in [leftover, mine, recent] { try Data("{".utf8).write(to: URL(fileURLWithPath: path)) }
        for path in [leftover, mine] {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3_600)], ofItemAtPath: path)
        }
        try f.ok("rebuild")
        try f.ok("export", "stores", dir)
        #expect(try ExportProblemsTests.rows(dir, "postpartum").count == 3_001)
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(FileManager.default.fileExists(atPath: mine), "a file of the user's")
        #expect(FileManager.default.fileExists(atPath: recent), "perhaps another machine's export, writing")
    }

    /// A file that cannot be written to its end (a size limit, as a full
    /// disk would): the export fails with 73 naming the file, which keeps
    /// what the export before wrote; no temporary file is left.
    @Test func aFileThatCannotBeWrittenKeepsWhatItHeld() throws {
        let f = try Self.homeWithCloseMoods(3_000, seed: 4)
        let dir = f.root + "/export"
        try f.ok("export", "stores", dir)
        let before = try Data(contentsOf: URL(fileURLWithPath: dir + "/postpartum.json"))
        #expect(before.count > 200 * 512)
        try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        // Files of at most 100 KiB; writing past it fails with EFBIG (SIGXFSZ ignored).
        let limited = try Subprocess.run("/bin/sh", ["-c", "trap '' XFSZ; ulimit -f 200; exec \"$0\" \"$@\"",
                                                     FamctlRunner.binary.path, "export", "stores", dir], env: ["FAMCTL_HOME": f.home])
        #expect(limited.0 == 73, "\(limited.0) \(limited.1)")
        #expect(limited.1.contains("cannot write \(dir)/postpartum.json"), "\(limited.1)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/postpartum.json")) == before)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(!names.contains { $0.contains(".tmp-") }, "\(names)")
        try f.ok("export", "stores", dir)
        #expect(try ExportProblemsTests.rows(dir, "postpartum").count == 3_001)
    }

    /// An ``AtomicFile`` is in place only once committed: written in pieces,
    /// the path keeps what it held until then; abandoned (or dropped), its
    /// temporary file is gone and the path unchanged.
    @Test func anAtomicFileIsSeenWholeOrNotAtAll() throws {
        let dir = NSTemporaryDirectory() + "atomic-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/file.json"
        try FileIO.writeAtomically(Array("old\n".utf8), to: path, mode: 0o600)
        do {
            let file = try AtomicFile(path: path, mode: 0o600)
            try file.write(Array("new, ".utf8))
            try file.write(Array("in two pieces\n".utf8))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
            try file.commit()
            #expect(throws: FileIO.Failure.self) { try file.write(Array("more".utf8)) }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new, in two pieces\n")
        do {
            let file = try AtomicFile(path: path, mode: 0o600)
            try file.write(Array("lost".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).count == 2)
            file.abandon()
        }
        do {
            let file = try AtomicFile(path: path, mode: 0o600)
            try file.write(Array("dropped".utf8))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["file.json"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new, in two pieces\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }
}
