@testable import famctl
import EventLog
import Replicator
import Foundation
import Testing

/// A home damaged where SQLite's own checks do not look, or missing a
/// file: commands say what is wrong and what to do, and neither skip
/// what they cannot read nor make a new file in its place.
struct DamagedHomeTests {
    /// A home with the `newMom` subject and two records; returns their ids.
    static func homeWithRecords(_ r: FamctlRunner) throws -> (String, String) {
        try r.ok("init", "--name", "Mum")
        try r.ok("subject", "add", "newMom")
        let a = try r.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let b = try r.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=pain", "pain=2")
        return (a, b)
    }

    static func projectionFile(_ r: FamctlRunner) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: r.home).filter { $0.hasPrefix("projection.") && $0.hasSuffix(".sqlite") }
        #expect(names.count == 1)
        return r.home + "/" + (names.first ?? "")
    }

    /// One value of one row altered (pages sound, `quick_check` passes): every
    /// command that reads the row fails naming the file and `rebuild`, none
    /// leaves the record out in silence; `rebuild` makes the stores whole.
    @Test(arguments: ["fields", "put_version", "id"])
    func aDamagedValueInTheStoresIsNeverSkippedInSilence(column: String) throws {
        let r = FamctlRunner()
        let (a, b) = try Self.homeWithRecords(r)
        let file = try Self.projectionFile(r)
        let before = try r.ok("digest")
        do {
            let db = try Database(path: file)
            let value: SQLValue = column == "id" ? .text("not-a-uuid") : .blob([2, 3])
            try db.run("UPDATE p_entities SET \(column) = ?1 WHERE kind = 'record' AND id = ?2", [value, .text(a)])
            #expect(db.changes == 1)
        }
        var reads: [[String]] = [["record", "list"], ["record", "list", "--json"], ["export", "stores", r.root + "/export"], ["digest"]]
        if column != "id" { reads += [["record", "show", a], ["record", "update", a, "mood=4"]] }
        for args in reads {
            let out = try r.run(args)
            #expect(out.code == 65, "famctl \(args.joined(separator: " ")) exited \(out.code): \(out.stdout) \(out.stderr)")
            #expect(out.stderr.contains("the stores' file \(file) is damaged"), "\(out.stderr)")
            #expect(out.stderr.contains("famctl rebuild"))
            if args[0] == "export" {
                // What it wrote before stopping is said, not left to pass for an export (a review).
                #expect(out.stderr.contains("This export stopped after writing subjects.json") && out.stderr.contains("do not import that folder as it is"), "\(out.stderr)")
            }
            if args.starts(with: ["record", "list"]) {
                // A streamed list prints the records before the damaged one,
                // never as if they were all: the text ends saying it is
                // incomplete, the JSON array is left open. With its id
                // intact the damaged record is the first listed (ids grow
                // with time): nothing comes before it.
                if args.last == "--json" {
                    #expect((try? JSONSerialization.jsonObject(with: Data(out.stdout.utf8))) == nil, "a partial array that parses: \(out.stdout)")
                    #expect(out.stdout.hasPrefix("["), "\(out.stdout)")
                    if column != "id" { #expect(out.stdout == "[", "\(out.stdout)") }
                } else if column != "id" {
                    #expect(out.stdout == "(list incomplete: reading it failed after 0 records; the error follows)\n", "\(out.stdout)")
                } else {
                    #expect(out.stdout.hasSuffix("records; the error follows)\n") || out.stdout.hasSuffix("record; the error follows)\n"), "\(out.stdout)")
                }
            } else {
                #expect(!out.stdout.contains(b), "famctl \(args.joined(separator: " ")) printed a partial answer")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: r.root + "/export/postpartum.json"))
        try r.ok("rebuild")
        let listed = try r.ok("record", "list")
        #expect(listed.contains(a) && listed.contains(b))
        #expect(try r.ok("digest") == before)
    }

    /// Flips the first 64 bytes of the root page of the last table or
    /// index of database `file` that `condition` (on `sqlite_master`)
    /// picks, its write-ahead log checkpointed into it first.
    static func damageRootPage(of file: String, where condition: String) throws {
        var page = 0, size = 0
        do {
            let db = try Database(path: file)
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            page = try #require(try db.statement("SELECT rootpage FROM sqlite_master WHERE \(condition) AND rootpage > 1 ORDER BY rootpage DESC LIMIT 1").first([]) { Int($0.int(0)) })
            size = try #require(try db.statement("PRAGMA page_size").first([]) { Int($0.int(0)) })
        }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        for i in 0..<64 { bytes[(page - 1) * size + i] ^= 0x5A }
        try bytes.write(to: URL(fileURLWithPath: file))
    }

    /// A damaged page the digest does not read (an index of the stores):
    /// `replay` says the projection's file is damaged and fails (3), as
    /// SQLite's check finds, instead of "result: OK"; `rebuild` mends it.
    /// One the digest reads (the records' table) too: the audit is still
    /// reported whole (it stopped with exit 65 and no report).
    @Test(arguments: ["index", "table"])
    func replaySeesADamagedPageOfTheStores(_ kind: String) throws {
        let r = FamctlRunner()
        _ = try Self.homeWithRecords(r)
        let file = try Self.projectionFile(r)
        try Self.damageRootPage(of: file, where: kind == "index" ? "type = 'index'" : "type = 'table' AND name = 'p_entities'")
        let replay = try r.run("replay")
        #expect(replay.code == 3 && replay.stdout.contains("projection file: \(file) is damaged") && replay.stdout.hasSuffix("result: FAILED\n")
                && replay.stdout.contains("integrity failures: 0") && replay.stderr.contains("famctl rebuild"), "\(replay.stdout) \(replay.stderr)")
        try r.ok("rebuild")
        #expect(try r.ok("replay").hasSuffix("result: OK"))
    }

    /// A damaged page of the log's own file that the audit does not read
    /// (an index of its events): `replay` says so and fails (3), instead
    /// of "result: OK" while the next `log --since` fails on it.
    @Test func replaySeesADamagedPageOfTheLogFile() throws {
        let r = FamctlRunner()
        _ = try Self.homeWithRecords(r)
        let file = r.home + "/famctl.sqlite"
        try Self.damageRootPage(of: file, where: "type = 'index' AND name = 'events_hlc'")
        let replay = try r.run("replay")
        #expect(replay.code == 3 && replay.stdout.contains("log file: \(file) is damaged") && replay.stdout.hasSuffix("result: FAILED\n")
                && replay.stderr.contains("Restore famctl.sqlite from a backup"), "\(replay.stdout) \(replay.stderr)")
        let json = try r.run("replay", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(json.code == 3 && object?["ok"] as? Bool == false && object?["logFileDamage"] is String, "\(json.stdout)")
        // `status` says it too: the commands that never read those pages go on.
        let status = try r.run("status")
        #expect(status.code == 0 && status.stdout.contains("warning  this device's log file \(file) is damaged (") && status.stdout.contains("Restore famctl.sqlite from a backup"),
                "\(status.stdout) \(status.stderr)")
        let statusJSON = try JSONSerialization.jsonObject(with: Data(try r.ok("status", "--json").utf8)) as? [String: Any]
        #expect(statusJSON?["logFileDamage"] is String)
        // A whole home says nothing of it.
        let whole = FamctlRunner()
        _ = try Self.homeWithRecords(whole)
        #expect(!(try whole.ok("status")).contains("is damaged"))
        #expect((try JSONSerialization.jsonObject(with: Data(try whole.ok("status", "--json").utf8)) as? [String: Any])?["logFileDamage"] is NSNull)
    }

    /// This device's last event taken out of its log after it was
    /// published: writing would take its seq again (a fork the family
    /// refuses); the write is refused, saying what happened, until a sync
    /// reads the event back from its folder.
    @Test func aLogMissingWhatItPublishedRefusesToWrite() throws {
        let r = try FamctlRunner.mum(shared: true)
        try r.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        try r.ok("sync")
        do {
            let db = try Database(path: r.home + "/famctl.sqlite")
            try db.execute("DROP TRIGGER events_no_delete")
            try db.run("DELETE FROM events WHERE pos = (SELECT max(pos) FROM events)")
            #expect(db.changes == 1)
        }
        let refused = try r.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        #expect(refused.code == 75 && refused.stderr.contains("this device published its events up to seq 3, but its log ends at seq 2")
                && refused.stderr.contains("famctl replay"), "\(refused.stderr)")
        #expect(try r.ok("sync").contains("pulled 1 new event(s)"))
        try r.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        #expect(try r.ok("replay").hasSuffix("result: OK"))
    }

    /// A log that is damaged, empty or gone, with no backup: `export stores`
    /// still writes what the stores hold, those records never synced
    /// included, from a copy of the stores' file, and says so; the home is
    /// not touched, and a new home imports the export (a review: every
    /// command refused, the unsynced records reachable only with sqlite3).
    @Test(arguments: ["truncated", "empty", "missing"])
    func aLostLogStillExportsWhatTheStoresHold(_ how: String) throws {
        let r = FamctlRunner()
        let (a, b) = try Self.homeWithRecords(r)
        try r.ok("rebuild")   // the log's pages written into its file, its write-ahead log emptied
        let log = r.home + "/famctl.sqlite"
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: log + suffix) }
        switch how {
        case "truncated": #expect(truncate(log, off_t(FileIO.size(log)! - 32_768)) == 0)
        case "empty": #expect(truncate(log, 0) == 0)
        default: try FileManager.default.removeItem(atPath: log)
        }
        let refused = try r.run("record", "list")
        #expect(refused.code != 0 && refused.stderr.contains("'famctl export stores DIR' still writes the records the stores hold"), "\(refused.stderr)")
        let projection = try Self.projectionFile(r)
        let before = try Data(contentsOf: URL(fileURLWithPath: projection))
        let dir = r.root + "/rescued"
        let export = try r.run("export", "stores", dir)
        #expect(export.code == 0 && export.stdout.contains("exported 2 records and 1 subjects"), "\(export.stdout) \(export.stderr)")
        #expect(export.stderr.contains("this home cannot be opened (") && export.stderr.contains("the files are written from the stores' file projection."), "\(export.stderr)")
        #expect(export.stderr.contains("read from a copy: nothing in the home is changed"), "\(export.stderr)")
        // What the new home cannot get back from it is said (a review: an unsynced deletion came back live).
        #expect(export.stderr.contains("a record deleted here and not yet synced is in no export") && export.stderr.contains("--overwrite-newer"), "\(export.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: projection)) == before, "the stores' file was changed")
        let fresh = FamctlRunner()
        try fresh.ok("init", "--name", "Mum again")
        try fresh.ok("import", "stores", dir)
        let list = try fresh.ok("record", "list")
        #expect(list.contains(a) && list.contains(b) && list.contains("mood=3") && list.contains("pain=2"), "\(list)")
    }

    /// A damaged `identity.key` (a byte changed): every command is refused
    /// with what to do, and `export stores` writes the records the stores
    /// hold, saying that the photos must come from elsewhere (a review: the
    /// export was refused, and the hint named `init`, which no member uses).
    @Test func aDamagedKeyStillExportsWhatTheStoresHold() throws {
        let r = FamctlRunner()
        let (a, b) = try Self.homeWithRecords(r)
        let (file, _) = try PhotoTests.jpegFile(r, 1_000, marker: "key")
        try r.ok("photo", "add", a, file)
        let key = r.home + "/identity.key"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: key)))
        bytes[60] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: key))
        let refused = try r.run("record", "list")
        #expect(refused.code == 65 && refused.stderr.contains("identity.key is damaged") && refused.stderr.contains("'famctl export stores DIR --home")
                && refused.stderr.contains("'famctl accept' with a new invitation"), "\(refused.stderr)")
        let dir = r.root + "/rescued"
        let export = try r.run("export", "stores", dir)
        #expect(export.code == 0 && export.stdout.contains("exported 2 records and 1 subjects"), "\(export.stdout) \(export.stderr)")
        #expect(export.stderr.contains("this home cannot be opened (") && export.stderr.contains("identity.key is damaged")
                && export.stderr.contains("this home cannot write them out now; 'famctl photo get ID --out FILE' on another device"), "\(export.stderr)")
        let fresh = FamctlRunner()
        try fresh.ok("init", "--name", "Mum again")
        try fresh.ok("import", "stores", dir)
        let list = try fresh.ok("record", "list")
        #expect(list.contains(a) && list.contains(b), "\(list)")
    }

    /// A home whose key and log are lost but whose stores file holds
    /// records: `init` does not wipe them (it took the home for an
    /// interrupted init, and the error's own hint said to run it), and
    /// `export stores` writes them (a review); with the stores file damaged
    /// too, the export says nothing can be read, not to run itself.
    @Test func aHomeWithoutItsKeyKeepsItsRecordsForTheExport() throws {
        let r = FamctlRunner()
        let (a, _) = try Self.homeWithRecords(r)
        let projection = try Self.projectionFile(r)
        try FileManager.default.removeItem(atPath: r.home + "/identity.key")
        #expect(truncate(r.home + "/famctl.sqlite", 0) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: projection))
        let status = try r.run("status")
        #expect(status.code == 66 && status.stderr.contains("has no identity.key (this device's key), but holds projection.") && status.stderr.contains("'famctl export stores DIR"), "\(status.stderr)")
        let initialised = try r.run("init", "--name", "Again")
        #expect(initialised.code == 73 && initialised.stderr.contains("record(s) but no identity.key, and its log holds no events") && initialised.stderr.contains("nothing was written"), "\(initialised.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: projection)) == before, "init wiped the stores file")
        let dir = r.root + "/rescued"
        let export = try r.run("export", "stores", dir)
        #expect(export.code == 0 && export.stdout.contains("exported 2 records") && export.stderr.contains("'famctl family create', a new family"), "\(export.stdout) \(export.stderr)")
        #expect(try String(contentsOfFile: dir + "/postpartum.json", encoding: .utf8).contains(a))
        // Log and stores both gone: said so, not "export stores still writes them".
        let both = FamctlRunner()
        _ = try Self.homeWithRecords(both)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: both.home + "/famctl.sqlite" + suffix) }
        #expect(truncate(both.home + "/famctl.sqlite", 0) == 0)
        try Data(repeating: 0x5a, count: 65_536).write(to: URL(fileURLWithPath: try Self.projectionFile(both)))
        let none = try both.run("export", "stores", both.root + "/nothing")
        #expect(none.code == 65 && none.stderr.contains("no stores' file of this home can be read either") && !none.stderr.contains("still writes"), "\(none.stderr)")
    }

    /// Only the log's own file, found damaged, is said as the log lost (and
    /// lets `export stores` write from the stores' file): a damaged stores'
    /// file is not (either SQLite code, corrupt or not a database).
    @Test(arguments: [11, 26] as [Int32])
    func onlyTheLogsFileIsSaidAsTheLogLost(_ code: Int32) {
        let log = CLIError.fromSQLite(SQLiteError(code: code, message: "database disk image is malformed"), path: "/h/famctl.sqlite")
        #expect(log.logUnreadable && log.hint?.contains("'famctl export stores DIR' still writes") == true, "\(log)")
        let stores = CLIError.fromSQLite(SQLiteError(code: code, message: "database disk image is malformed"), path: "/h/projection.3.sqlite")
        #expect(!stores.logUnreadable && stores.hint == "The database file cannot be read; restore it from a backup of this home.", "\(stores)")
    }

    /// `init` writes the device key last, so a home with a key had a log:
    /// without it, a command refuses (66) and makes no empty log in its place.
    @Test func aHomeWithoutItsLogIsRefusedAndNoEmptyLogIsMade() throws {
        let r = FamctlRunner()
        _ = try Self.homeWithRecords(r)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: r.home + "/famctl.sqlite" + suffix) }
        for args in [["status"], ["record", "list"], ["sync"]] {
            let out = try r.run(args)
            #expect(out.code == 66, "famctl \(args.joined(separator: " ")) exited \(out.code)")
            #expect(out.stderr.contains("famctl.sqlite is missing"), "\(out.stderr)")
            #expect(out.stderr.contains("Restore famctl.sqlite"))
        }
        #expect(!FileManager.default.fileExists(atPath: r.home + "/famctl.sqlite"))
        // `init` still refuses the home: it has a device key.
        #expect(try r.run("init", "--name", "Again").code == 73)
    }

    /// An empty log file (0 bytes, no write-ahead log beside it) holds no
    /// log either: refused (65), and SQLite is not let write a new, empty
    /// log into it.
    @Test func anEmptyLogFileIsRefusedAndLeftEmpty() throws {
        let r = FamctlRunner()
        _ = try Self.homeWithRecords(r)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: r.home + "/famctl.sqlite" + suffix) }
        #expect(FileManager.default.createFile(atPath: r.home + "/famctl.sqlite", contents: Data()))
        for args in [["status"], ["record", "list"], ["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3"]] {
            let out = try r.run(args)
            #expect(out.code == 65, "famctl \(args.joined(separator: " ")) exited \(out.code)")
            #expect(out.stderr.contains("famctl.sqlite is empty (0 bytes)") && out.stderr.contains("Restore famctl.sqlite"), "\(out.stderr)")
        }
        #expect(FileIO.size(r.home + "/famctl.sqlite") == 0, "something was written into the empty log file")
    }

    /// An `identity.key` that is a symbolic link is refused for what it is
    /// (its mode is the link's; a `chmod` of it would change its target),
    /// and the target is left as it was.
    @Test func anIdentityKeyThatIsALinkIsRefusedForWhatItIs() throws {
        let r = FamctlRunner()
        _ = try Self.homeWithRecords(r)
        let key = r.home + "/identity.key", elsewhere = r.root + "/identity.key"
        let fm = FileManager.default
        try fm.moveItem(atPath: key, toPath: elsewhere)
        try fm.createSymbolicLink(atPath: key, withDestinationPath: elsewhere)
        for target in [elsewhere, r.root + "/nowhere"] {
            try fm.removeItem(atPath: key)
            try fm.createSymbolicLink(atPath: key, withDestinationPath: target)
            let out = try r.run("record", "list")
            #expect(out.code == 65 && out.stderr.contains("identity.key is a symbolic link") && !out.stderr.contains("chmod 600 \(key)"), "\(out.stderr)")
        }
        #expect((try fm.attributesOfItem(atPath: elsewhere)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        try fm.removeItem(atPath: key)
        try fm.moveItem(atPath: elsewhere, toPath: key)
        #expect(try r.ok("record", "list").contains("mood=3"))
    }

    /// Another device's `identity.key` put in a home (a backup restored to
    /// the wrong place) is refused before anything is signed with it: it
    /// would fork that device's chain. The home's own key works again once
    /// back. A home made before the device id was kept learns it at open.
    @Test func anotherDevicesKeyIsRefusedAndNothingIsSigned() throws {
        let mum = FamctlRunner(), dad = FamctlRunner()
        _ = try Self.homeWithRecords(mum)
        try dad.ok("init", "--name", "Dad")
        let key = mum.home + "/identity.key", own = mum.root + "/own.key"
        let fm = FileManager.default
        let mumID = try #require(try mum.ok("status", "--json").data(using: .utf8).flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] }?["device"] as? String)
        let dadID = try #require(try dad.ok("status", "--json").data(using: .utf8).flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] }?["device"] as? String)
        let events = try mum.ok("log").split(separator: "\n").count
        try fm.moveItem(atPath: key, toPath: own)
        try fm.copyItem(atPath: dad.home + "/identity.key", toPath: key)
        for args in [["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4"], ["status"], ["record", "list"]] {
            let out = try mum.run(args)
            #expect(out.code == 65 && out.stderr.contains("identity.key is the key of device \(dadID.prefix(12)), but this home's log and settings are device \(mumID.prefix(12))'s (\"Mum\")")
                    && out.stderr.contains("Put back this home's own identity.key"), "\(args): \(out.stderr)")
        }
        try fm.removeItem(atPath: key)
        try fm.moveItem(atPath: own, toPath: key)
        #expect(try mum.ok("log").split(separator: "\n").count == events, "nothing was signed with the other key")
        #expect(try mum.ok("record", "list").contains("mood=3"))

        // A home without the kept id (made before it was kept) learns it from its key, then holds to it.
        let db = try Database(path: mum.home + "/famctl.sqlite")
        try db.execute("DELETE FROM device_settings WHERE key = 'device.id'")
        // Not from another device's key put in place meanwhile: the log
        // holds none of its events (a review: it was adopted, and signed).
        try fm.moveItem(atPath: key, toPath: own)
        try fm.copyItem(atPath: dad.home + "/identity.key", toPath: key)
        let other = try mum.run("status")
        #expect(other.code == 65 && other.stderr.contains("identity.key is the key of device \(dadID.prefix(12)), but this home's log and settings are device"), "\(other.stderr)")
        #expect(try db.statement("SELECT value FROM device_settings WHERE key = 'device.id'").first { $0.text(0) } == nil)
        try fm.removeItem(atPath: key)
        try fm.moveItem(atPath: own, toPath: key)
        _ = try mum.ok("status")
        #expect(try db.statement("SELECT value FROM device_settings WHERE key = 'device.id'").first { $0.text(0) } == mumID)
    }

    /// An update that leaves every value as it is writes no event (64, as an
    /// empty one); one that changes anything is written.
    @Test func anUpdateThatChangesNothingWritesNothing() throws {
        let r = FamctlRunner()
        let (a, _) = try Self.homeWithRecords(r)
        let events = try r.ok("log").split(separator: "\n").count
        let at = try r.ok("record", "show", a, "--json")
        let time = (try JSONSerialization.jsonObject(with: Data(at.utf8)) as? [String: Any])?["at"] as? String ?? ""
        #expect(!time.isEmpty)
        for args in [["mood=3"], ["nosuch="], ["mood=3", "nosuch="], ["--at", time], ["kind=mood", "--json-fields", "{\"mood\": 3}"]] {
            let out = try r.run(["record", "update", a] + args)
            #expect(out.code == 64, "record update \(args) exited \(out.code): \(out.stderr)")
            #expect(out.stderr.contains("nothing to change"))
        }
        #expect(try r.ok("log").split(separator: "\n").count == events)
        try r.ok("record", "update", a, "mood=3", "note=after lunch")
        #expect(try r.ok("log").split(separator: "\n").count == events + 1)
        #expect(try r.ok("record", "show", a).contains("note=\"after lunch\""))
    }
}

/// A family key damaged in `famctl.sqlite` where SQLite's checks do not look
/// (a flipped bit in the key's bytes): every command that needs the key
/// refuses, saying which key and what to do, rather than seal new events
/// that no other device could open or rebuild the stores without the
/// records it can no longer open. The key back as it was, all goes on.
struct DamagedKeyTests {
    static func events(_ r: FamctlRunner) throws -> Int64 {
        let db = try Database(path: r.home + "/famctl.sqlite", create: false, readOnly: true)
        return try db.statement("SELECT count(*) FROM events").first { $0.int(0) } ?? -1
    }

    @Test(arguments: [false, true])
    func aDamagedKeyIsRefusedNotUsed(homeFromBeforeTheCheck: Bool) throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let first = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try mum.ok("sync")
        let original: [UInt8]
        do {
            let db = try Database(path: mum.home + "/famctl.sqlite")
            if homeFromBeforeTheCheck {
                // As a home made before keys had a check value: the next
                // command adds it, from the key as it is.
                try db.execute("ALTER TABLE epoch_keys DROP COLUMN key_check")
            }
            original = try #require(try db.statement("SELECT key FROM epoch_keys").first { $0.blob(0) })
        }
        if homeFromBeforeTheCheck {
            try mum.ok("status")
            let db = try Database(path: mum.home + "/famctl.sqlite", create: false, readOnly: true)
            #expect(try db.statement("SELECT count(*) FROM epoch_keys WHERE key_check IS NULL").first { $0.int(0) } == 0)
        }
        var damaged = original
        damaged[7] ^= 0x10
        do {
            let db = try Database(path: mum.home + "/famctl.sqlite")
            try db.run("UPDATE epoch_keys SET key = ?1", [.blob(damaged)])
        }
        let before = try Self.events(mum)
        let listed = try mum.ok("record", "list")
        for args in [["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4"], ["rebuild"], ["sync"], ["invite"], ["replay"]] {
            let r = try mum.run(args)
            #expect(r.code == 65, "\(args): exit \(r.code): \(r.stdout)")
            #expect(r.stderr.contains("the family's key of epoch 0 in this home's famctl.sqlite is damaged") && r.stderr.contains("Restore famctl.sqlite from a backup"), "\(args): \(r.stderr)")
        }
        #expect(try Self.events(mum) == before, "an event was written with the damaged key")
        // What needs no key reads on.
        #expect(try mum.ok("record", "list") == listed, "the stores lost records")
        #expect(try mum.ok("record", "show", first).contains("mood=2"))
        do {
            let db = try Database(path: mum.home + "/famctl.sqlite")
            try db.run("UPDATE epoch_keys SET key = ?1", [.blob(original)])
        }
        let second = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5")
        try mum.ok("sync")
        try dad.ok("sync")
        #expect(try dad.ok("record", "show", second).contains("mood=5"))
        #expect(try dad.ok("record", "show", first).contains("mood=2"))
    }
}
