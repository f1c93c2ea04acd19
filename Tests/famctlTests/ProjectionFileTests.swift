import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Testing

/// The projection lives in a file of its own, replaced whole by a rebuild;
/// whatever happens to that file, the stores come back from the log.
struct ProjectionFileTests {
    /// The current projection file's name, as the home's settings give it.
    static func currentFile(_ home: String) throws -> String {
        let db = try Database(path: home + "/famctl.sqlite")
        return try #require(try db.statement("SELECT value FROM device_settings WHERE key = 'projection.file'").first { $0.text(0) })
    }

    /// The projection files in a home (a file's `-wal` and `-shm` counted with it).
    static func projectionFiles(_ home: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: home).filter { $0.hasPrefix("projection.") && $0 != Home.projectionLockFile }
        return Set(names.map { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") ? String($0.dropLast(4)) : $0 }).sorted()
    }

    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue & 0o777
    }

    static func addMood(_ f: FamctlRunner, _ mood: Int) throws -> String {
        try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(mood)")
    }

    /// The body of a `postpartum` mood record.
    static func moodBody(_ record: UUID, _ mood: Int64) -> EventBody {
        RecordEvent(kind: .put, record: record, store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z",
                    fields: ["kind": .string("mood"), "mood": .int(mood)]).body
    }

    /// Two `Home`s open on one home, as two processes would have them, once
    /// the first has rebuilt the projection.
    static func openTwiceThenRebuild(_ home: String) throws -> (rebuilder: Home, other: Home) {
        let rebuilder = try Home.open(home)
        let other = try Home.open(home)
        try rebuilder.rebuildProjections()
        return (rebuilder, other)
    }

    /// A new home with the `newMom` subject and one record: the runner, the
    /// record's id and the home's digest.
    static func homeWithOneRecord(mood: Int = 3) throws -> (FamctlRunner, String, String) {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let id = try addMood(f, mood)
        return (f, id, try f.ok("digest"))
    }

    /// A rebuild waiting behind another process's hold of the projection
    /// lock says so (it used to wait in silence), and goes on once it is free.
    @Test func aRebuildWaitingForTheLockSaysSo() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let fd = open(f.home + "/" + Home.projectionLockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(fd >= 0 && flock(fd, LOCK_EX) == 0)
        // Past the first second of waiting, after which the note comes.
        DispatchQueue.global().asyncAfter(deadline: .now() + 2.5) { close(fd) }
        let r = try f.run("rebuild")
        #expect(r.code == 0 && r.stderr.contains("another famctl is rebuilding this home's stores (projection.lock is held); waiting for it to finish"), "\(r.stderr)")
    }

    /// What a rebuild killed midway left (a file of the next generation,
    /// with its write-ahead log) is removed by the next command, unless a
    /// rebuild holds the projection lock: it was kept until the next
    /// rebuild, as large as the stores.
    @Test func aKilledRebuildsFileIsRemovedByTheNextCommand() throws {
        let (f, _, digest) = try Self.homeWithOneRecord(mood: 2)
        let current = try Self.currentFile(f.home)
        let left = f.home + "/projection.99.sqlite"
        for suffix in ["", "-wal", "-shm"] { try #require(FileManager.default.createFile(atPath: left + suffix, contents: Data(repeating: 1, count: 4096))) }
        // A rebuild holds the lock: its file is left alone.
        let holder = try LockWaitTests.holdLock(f.home + "/" + Home.projectionLockFile)
        let during = try f.run("record", "list")
        #expect(during.code == 0 && FileManager.default.fileExists(atPath: left), "the file of a rebuild that holds the lock was removed: \(during.stderr)")
        LockWaitTests.release(holder)
        let after = try f.run("record", "list")
        #expect(after.code == 0 && after.stderr.isEmpty, "\(after.stderr)")
        for suffix in ["", "-wal", "-shm"] { #expect(!FileManager.default.fileExists(atPath: left + suffix), "projection.99.sqlite\(suffix) is still there") }
        #expect(try Self.projectionFiles(f.home) == [current])
        #expect(try f.ok("digest") == digest)
    }

    @Test func aRebuildReplacesTheFileAndLeavesNoOther() throws {
        let (f, id, digest) = try Self.homeWithOneRecord(mood: 2)
        let before = try Self.currentFile(f.home)
        #expect(try Self.mode(f.home + "/" + before) == 0o600)
        // The first file, as every later one: a write-ahead log (readers and
        // writers do not block one another) and 32 KiB pages.
        do {
            let db = try Database(path: f.home + "/" + before, readOnly: true)
            #expect(try db.statement("PRAGMA journal_mode").first { $0.text(0) } == "wal")
            #expect(try db.statement("PRAGMA page_size").first { $0.int(0) } == Int64(Database.newPageSize))
        }
        // A file a killed rebuild left behind.
        let orphan = f.home + "/projection.41.sqlite"
        #expect(FileManager.default.createFile(atPath: orphan, contents: Data("half".utf8)))
        #expect(try f.ok("rebuild").hasPrefix("rebuilt the stores from "))
        let after = try Self.currentFile(f.home)
        // (The orphan is removed as the command opens the home.)
        #expect(after == "projection.2.sqlite", "a rebuild's file comes after the current one: \(after)")
        #expect(try Self.projectionFiles(f.home) == [after], "the old file and the orphan are removed")
        #expect(try Self.mode(f.home + "/" + after) == 0o600)
        #expect(try f.ok("digest") == digest)
        #expect(try f.ok("record", "list").contains(id))
        #expect(try f.ok("replay").hasSuffix("result: OK"))
        // No projection tables in the log's database.
        let db = try Database(path: f.home + "/famctl.sqlite")
        #expect(try db.statement("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'p\\_%' ESCAPE '\\'").first { $0.int(0) } == 0)
    }

    @Test func aProjectionBehindTheLogCatchesUpWithoutARebuild() throws {
        let (f, first, digestBefore) = try Self.homeWithOneRecord(mood: 2)
        let name = try Self.currentFile(f.home)
        let path = f.home + "/" + name
        // The projection as it was (famctl has exited: its write-ahead log is checkpointed and gone).
        let saved = try Data(contentsOf: URL(fileURLWithPath: path))
        let second = try Self.addMood(f, 4)
        let digestAfter = try f.ok("digest")
        #expect(digestAfter != digestBefore)
        // Its last commit lost, as a power failure can lose it (the log's is fsynced, the projection's is not).
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try saved.write(to: URL(fileURLWithPath: path))
        let list = try f.ok("record", "list")
        #expect(list.contains(first) && list.contains(second), "\(list)")
        #expect(try Self.currentFile(f.home) == name, "caught up in place, not rebuilt")
        #expect(try f.ok("digest") == digestAfter)
        #expect(try f.ok("replay").hasSuffix("result: OK"))
    }

    @Test func aMissingOrDamagedProjectionIsRebuiltFromTheLog() throws {
        let (f, id, digest) = try Self.homeWithOneRecord(mood: 3)
        // Damaged: not a database at all.
        var name = try Self.currentFile(f.home)
        try Data(repeating: 0x5a, count: 65_536).write(to: URL(fileURLWithPath: f.home + "/" + name))
        // Said, once (a review: rebuilt without a word).
        let listed = try f.run("record", "list")
        #expect(listed.code == 0 && listed.stdout.contains(id), "\(listed.stderr)")
        #expect(listed.stderr == "famctl: note: the stores' file \(f.home)/\(name) is damaged (file is not a database); this command builds the stores again from the log, which is intact.\n",
                "\(listed.stderr)")
        #expect(try Self.currentFile(f.home) != name)
        #expect(try f.ok("digest") == digest)
        // Missing.
        name = try Self.currentFile(f.home)
        try FileManager.default.removeItem(atPath: f.home + "/" + name)
        let digested = try f.run("digest")
        #expect(digested.code == 0 && digested.stdout == digest + "\n" && digested.stderr.contains("famctl: note: the stores' file \(f.home)/\(name) is missing;"), "\(digested.stderr)")
        #expect(try f.ok("record", "list").contains(id))
        #expect(try f.ok("replay").hasSuffix("result: OK"))
        #expect(try Self.projectionFiles(f.home).count == 1)
    }

    /// A projection file damaged where opening it does not look (a page of
    /// the entities' table) fails the commands that read it: the error names
    /// that file, says the log is intact and that `rebuild` mends it, which
    /// it does.
    @Test func aProjectionDamagedInsideNamesItsFileAndTheRebuild() throws {
        let (f, id, digest) = try Self.homeWithOneRecord(mood: 4)
        let name = try Self.currentFile(f.home)
        let path = f.home + "/" + name
        let (page, pageSize) = try {
            let db = try Database(path: path, create: false, readOnly: true)
            let page = try #require(try db.statement("SELECT pageno FROM dbstat WHERE name = 'p_entities'").first([], { $0.int(0) }))
            let size = try #require(try db.statement("PRAGMA page_size").first([], { $0.int(0) }))
            return (Int(page), Int(size))
        }()
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for i in 0..<16 { bytes[(page - 1) * pageSize + i] = 0xff }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let listed = try f.run("record", "list")
        #expect(listed.code == 65, "\(listed.code) \(listed.stdout) \(listed.stderr)")
        #expect(listed.stderr.contains("the stores' file \(path) is damaged") && listed.stderr.contains("the log is intact")
                && listed.stderr.contains("Run 'famctl rebuild'"), "\(listed.stderr)")
        #expect(!listed.stderr.contains("backup"), "\(listed.stderr)")
        try f.ok("rebuild")
        #expect(try f.ok("record", "list").contains(id))
        #expect(try f.ok("digest") == digest)
    }

    @Test func aProjectionAheadOfTheLogIsRebuilt() throws {
        let (f, id, digest) = try Self.homeWithOneRecord(mood: 3)
        let name = try Self.currentFile(f.home)
        do {
            let db = try Database(path: f.home + "/" + name)
            try db.execute("UPDATE p_schema SET mark = mark + 1000")
        }
        #expect(try f.ok("record", "list").contains(id))
        #expect(try Self.currentFile(f.home) != name)
        #expect(try f.ok("digest") == digest)
    }

    /// A home whose tables an older famctl kept in the log's database.
    @Test func tablesOfTheOldLayoutAreDroppedAndTheStoresRebuilt() throws {
        let (f, id, digest) = try Self.homeWithOneRecord(mood: 5)
        do {
            let db = try Database(path: f.home + "/famctl.sqlite")
            let text = try #require(try db.statement("SELECT value FROM device_settings WHERE key = 'family.id'").first { $0.text(0) })
            let family = try #require(FamilyID(string: text))
            _ = try Projector(database: db, family: family)
            try db.execute("DELETE FROM device_settings WHERE key LIKE 'projection.%'")
        }
        #expect(try f.ok("record", "list").contains(id))
        #expect(try f.ok("digest") == digest)
        let db = try Database(path: f.home + "/famctl.sqlite")
        #expect(try db.statement("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'p\\_%' ESCAPE '\\'").first { $0.int(0) } == 0)
        // The room the old tables took is given back.
        #expect(try db.statement("PRAGMA freelist_count").first { $0.int(0) } == 0)
    }

    /// One process rebuilds while another has the old file open: the other's
    /// next write goes to the new file, which the first process reads.
    @Test func aWriteAfterAnotherProcessRebuiltLandsInTheNewFile() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let old = try Self.currentFile(f.home)
        let (rebuilder, writer) = try Self.openTwiceThenRebuild(f.home)
        #expect(writer.projectionName == old)
        #expect(rebuilder.projectionName != old)
        #expect(!FileManager.default.fileExists(atPath: f.home + "/" + old))
        let record = UUID()
        try writer.append([Self.moodBody(record, 4)])
        #expect(writer.projectionName == rebuilder.projectionName)
        #expect(try rebuilder.projector.recordExists(record), "the write went to a file nobody reads")
        #expect(try rebuilder.projector.digest() == writer.projector.digest())
        #expect(try rebuilder.projector.mark() == rebuilder.log.lastPosition())
    }

    /// Another process's commit that reached the log but not the projection
    /// (killed between the two files' commits, or the projection's failed):
    /// the next write applies that event first, rather than moving the mark
    /// past it.
    @Test func anEventInTheLogButNotTheProjectionIsAppliedBeforeTheNextWrite() throws {
        let (f, _, _) = try Self.homeWithOneRecord()
        let home = try Home.open(f.home)
        let (family, key) = try home.currentKey()
        let lost = UUID()
        try EventLog(path: f.home + "/famctl.sqlite").append(bodies: [Self.moodBody(lost, 4).encoded()], as: home.identity, family: family, key: key)
        #expect(try home.projector.mark() < home.log.lastPosition())
        let record = UUID()
        try home.append([Self.moodBody(record, 4)])
        #expect(try home.projector.recordExists(lost), "the event the projection lacked was skipped")
        #expect(try home.projector.recordExists(record))
        #expect(try home.projector.mark() == home.log.lastPosition())
        #expect(try f.ok("replay").hasSuffix("result: OK"))
    }

    /// A file made because the current one is missing is not made current
    /// until it is built: no other process follows it while it is empty.
    @Test func aNewFileIsNotMadeCurrentBeforeItIsBuilt() throws {
        let (f, id, digest) = try Self.homeWithOneRecord()
        let name = try Self.currentFile(f.home)
        try FileManager.default.removeItem(atPath: f.home + "/" + name)
        let log = try EventLog(path: f.home + "/famctl.sqlite")
        let state = try DeviceState(database: log.database)
        let familyText = try #require(try state.get(.family))
        let family = try #require(FamilyID(string: familyText))
        let (opened, projector) = try Home.openProjection(home: f.home, log: log, state: state, family: family)
        #expect(opened != name)
        #expect(try projector.mark() == -1)
        #expect(try state.get(.projectionFile) == name, "an empty file was made current")
        // Another process opening the home rebuilds, and every record is there.
        #expect(try f.ok("record", "list").contains(id))
        #expect(try f.ok("digest") == digest)
    }

    /// A projection file newer than its log (a home put together from
    /// copies of two times) holds household events the log does not: a
    /// rebuild does not keep them.
    @Test func householdEventsTheLogDoesNotHoldDoNotSurviveARebuild() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let digest = try f.ok("digest")
        let olderName = try Self.currentFile(f.home)
        let olderLog = try Data(contentsOf: URL(fileURLWithPath: f.home + "/famctl.sqlite"))
        try f.ok("family", "create", "--name", "Smiths", "--dir", f.root + "/shared")
        #expect(try f.ok("status").contains("Smiths"))
        // (The family's first event changes no verdict of Mum's: no rebuild made a new file; this one does.)
        try f.ok("rebuild")
        let newerName = try Self.currentFile(f.home)
        #expect(newerName != olderName)
        try FileManager.default.moveItem(atPath: f.home + "/" + newerName, toPath: f.home + "/" + olderName)
        try olderLog.write(to: URL(fileURLWithPath: f.home + "/famctl.sqlite"))
        let status = try f.ok("status")
        #expect(!status.contains("Smiths"), "\(status)")
        #expect(try f.ok("digest") == digest)
        #expect(try f.ok("replay").hasSuffix("result: OK"))
    }

    /// A rebuild that fails (here: a file-size limit stops the new file)
    /// leaves the current projection serving, and no file of its own.
    @Test func aFailedRebuildLeavesTheCurrentProjectionServing() throws {
        let (f, id, digest) = try Self.homeWithOneRecord()
        let name = try Self.currentFile(f.home)
        let (code, out) = try ResourceFaultTests.shell("ulimit -f 128; '\(FamctlRunner.binary.path)' rebuild", env: ["FAMCTL_HOME": f.home])
        #expect(code == 73, "exit \(code): \(out)")
        #expect(try Self.currentFile(f.home) == name)
        #expect(try Self.projectionFiles(f.home) == [name], "the failed rebuild's file is left")
        #expect(try f.ok("record", "list").contains(id))
        #expect(try f.ok("digest") == digest)
        #expect(try f.ok("replay").hasSuffix("result: OK"))
    }

    /// A rebuild a process needed is skipped when another process rebuilt
    /// while it waited for the lock; one a user asks for is not.
    @Test func aNeededRebuildAnotherProcessJustDidIsSkipped() throws {
        let (f, id, digest) = try Self.homeWithOneRecord()
        let (_, second) = try Self.openTwiceThenRebuild(f.home)
        let built = try Self.currentFile(f.home)
        try second.rebuildProjections(unlessRebuilt: true)
        #expect(second.projectionName == built)
        #expect(try Self.currentFile(f.home) == built, "rebuilt again")
        #expect(try second.projector.recordExists(try #require(UUID(uuidString: id))))
        try second.rebuildProjections()
        #expect(try Self.currentFile(f.home) != built)
        #expect(try f.ok("digest") == digest)
    }

    /// Two processes: one rebuilds again and again while the other adds
    /// records. Every acknowledged record is in the projection that ends
    /// current, which equals a rebuild from the log, and no other file is
    /// left.
    @Test func recordsAddedWhileAnotherProcessRebuildsAreAllProjected() throws {
        let (f, first, _) = try Self.homeWithOneRecord()
        let bin = FamctlRunner.binary.path
        let (code, out) = try ResourceFaultTests.shell("""
            cd '\(f.root)'
            (for i in $(seq 12); do '\(bin)' rebuild > /dev/null || exit 1; done) & r=$!
            (for i in $(seq 25); do '\(bin)' record add --focus newMom --store postpartum kind=mood mood=2 || exit 1; done) > added & a=$!
            wait $r && wait $a && cat added
            """, env: ["FAMCTL_HOME": f.home])
        #expect(code == 0, "\(out)")
        let acknowledged = out.split(separator: "\n").filter { UUID(uuidString: String($0)) != nil }
        #expect(acknowledged.count == 25)
        let home = try Home.open(f.home)
        for id in acknowledged + [Substring(first)] {
            #expect(try home.projector.recordExists(try #require(UUID(uuidString: String(id)))), "record \(id) not projected")
        }
        #expect(try home.projector.mark() == home.log.lastPosition())
        #expect(try Self.projectionFiles(f.home) == [home.projectionName])
        #expect(try f.ok("replay").hasSuffix("result: OK"))
    }

    /// A write whose projection another process replaces before its first
    /// and its second attempt (rebuilds back to back) makes a third holding
    /// the projection lock: a rebuild started then waits for it (it used to
    /// fail: "replaced the stores' file twice").
    @Test func aWriteMovedTwiceTriesAThirdTimeHoldingTheLock() throws {
        let (f, _, _) = try Self.homeWithOneRecord()
        let writer = try Home.open(f.home)
        let stderr = f.root + "/waiting-rebuild.err"
        FileManager.default.createFile(atPath: stderr, contents: nil)
        let waiting = Process()
        waiting.executableURL = FamctlRunner.binary
        waiting.arguments = ["--home", f.home, "rebuild"]
        waiting.standardOutput = FileHandle.nullDevice
        waiting.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderr))
        var attempts = 0, saidWaiting = false
        try writer.onCurrentProjection {
            attempts += 1
            if attempts <= 2 {
                try f.ok("rebuild")
            } else {
                try waiting.run()
                for _ in 0..<300 where !saidWaiting {
                    saidWaiting = (try? String(contentsOfFile: stderr, encoding: .utf8))?.contains("waiting for it to finish") == true
                    if !saidWaiting { usleep(100_000) }
                }
            }
            try writer.log.database.transaction(.immediate) { try writer.projectionWillBegin() }
        }
        waiting.waitUntilExit()
        #expect(attempts == 3)
        #expect(saidWaiting, "the third attempt did not hold the projection lock")
        #expect(waiting.terminationStatus == 0)
        let record = UUID()
        try writer.append([Self.moodBody(record, 4)])
        #expect(try Home.open(f.home).projector.recordExists(record))
        #expect(try f.ok("replay").hasSuffix("result: OK"))
    }

    /// A process whose projection another process replaced, the new file
    /// then lost: its next write builds a new one rather than failing.
    @Test func aWriteAfterTheCurrentFileWasLostBuildsANewOne() throws {
        let (f, id, _) = try Self.homeWithOneRecord()
        let (rebuilder, writer) = try Self.openTwiceThenRebuild(f.home)
        try FileManager.default.removeItem(atPath: f.home + "/" + rebuilder.projectionName)
        let record = UUID()
        try writer.append([Self.moodBody(record, 1)])
        #expect(try writer.projector.recordExists(record))
        #expect(try writer.projector.recordExists(try #require(UUID(uuidString: id))))
        #expect(try Self.currentFile(f.home) == writer.projectionName)
        #expect(try f.ok("replay").hasSuffix("result: OK"))
    }
}
