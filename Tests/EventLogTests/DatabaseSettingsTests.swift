import CSQLite
@testable import EventLog
import Foundation
import Testing

/// The page size and checkpoint interval a connection sets: new files get
/// large pages, files written with SQLite's default keep theirs, and the
/// write-ahead log is checkpointed after the same number of bytes in both.
struct DatabaseSettingsTests {
    private func pragma(_ db: Database, _ name: String) throws -> Int64? {
        try db.prepare("PRAGMA \(name)").first { $0.int(0) }
    }

    @Test func aNewFileGetsLargePagesAndACheckpointEverySixteenMiB() throws {
        let dir = TempDir()
        let db = try Database(path: dir.path + "/new.sqlite")
        try db.execute("CREATE TABLE t(x)")
        #expect(try pragma(db, "page_size") == Int64(Database.newPageSize))
        #expect(try pragma(db, "wal_autocheckpoint") == Int64(Database.checkpointBytes / Database.newPageSize))
        #expect(try db.prepare("PRAGMA journal_mode").first { $0.text(0) } == "wal")
    }

    /// A run while the file was read-only left its `-wal` and `-shm`
    /// read-only (SQLite makes them with the file's mode); once the file is
    /// writable again, opening it gives them its mode back, and it writes.
    @Test func readOnlySidecarsOfAWritableFileGetItsModeBack() throws {
        let dir = TempDir()
        let path = dir.path + "/db.sqlite"
        do {
            let db = try Database(path: path)
            try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        }
        // Not empty: SQLite itself gives an empty one the file's mode when it opens it.
        FileManager.default.createFile(atPath: path + "-shm", contents: Data(count: 32_768), attributes: [.posixPermissions: 0o400])
        FileManager.default.createFile(atPath: path + "-wal", contents: nil, attributes: [.posixPermissions: 0o400])
        // Another user's read-only copy is left alone: a file without write permission itself.
        FileManager.default.createFile(atPath: dir.path + "/other.sqlite", contents: nil, attributes: [.posixPermissions: 0o400])
        FileManager.default.createFile(atPath: dir.path + "/other.sqlite-shm", contents: nil, attributes: [.posixPermissions: 0o400])
        Database.matchSidecarModes(dir.path + "/other.sqlite")
        func mode(_ p: String) throws -> Int { (try FileManager.default.attributesOfItem(atPath: p)[.posixPermissions] as! NSNumber).intValue }
        #expect(try mode(dir.path + "/other.sqlite-shm") == 0o400)

        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        let db = try Database(path: path)
        for suffix in ["-wal", "-shm"] {
            #expect(try mode(path + suffix) == 0o640, "\(suffix)")
        }
        try db.execute("INSERT INTO t VALUES (2)")
        #expect(try db.prepare("SELECT count(*) FROM t").first { $0.int(0) } == 2)
    }

    @Test func aFileWithDefaultPagesKeepsThemAndItsData() throws {
        let dir = TempDir()
        let path = dir.path + "/old.sqlite"
        // Written the way SQLite writes by default: 4 KiB pages, rollback journal.
        var raw: OpaquePointer?
        _ = Database.libraryConfigured  // before the library initialises, as in famctl
        #expect(sqlite3_open(path, &raw) == SQLITE_OK)
        #expect(sqlite3_exec(raw, "PRAGMA page_size=4096; CREATE TABLE t(x); INSERT INTO t VALUES(42);", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(raw)

        let db = try Database(path: path)
        #expect(try pragma(db, "page_size") == 4096)
        #expect(try pragma(db, "wal_autocheckpoint") == Int64(Database.checkpointBytes / 4096))
        #expect(try db.prepare("SELECT x FROM t").first { $0.int(0) } == 42)
        try db.run("INSERT INTO t VALUES(43)")
        #expect(try db.prepare("SELECT count(*) FROM t").first { $0.int(0) } == 2)
    }

    /// Bytes this thread has written through system calls so far
    /// (`wchar` of Linux's per-thread I/O accounting), or nil where the
    /// kernel does not keep it.
    private func bytesWrittenByThisThread() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
            return Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Statements of many rows inside a transaction, as the log's insert of
    /// a block of events and the projection's of a batch of rows are: each
    /// keeps a journal of the pages it changes that existed before it, and
    /// past SQLite's default of 64 KiB that journal used to go to a
    /// temporary file (two thirds of what a first sync wrote). Nothing may
    /// be written before the commit now.
    @Test func aStatementOfManyRowsKeepsItsJournalInMemory() throws {
        #expect(Database.libraryConfigured)
        let dir = TempDir()
        let db = try Database(path: dir.path + "/journal.sqlite")
        try db.execute("""
            CREATE TABLE t(pos INTEGER PRIMARY KEY, id BLOB NOT NULL CHECK(length(id) = 32), seq INTEGER NOT NULL UNIQUE, bytes BLOB NOT NULL);
            CREATE INDEX t_id ON t(id);
            """)
        let rows = 32
        let sql = "INSERT INTO t(id, seq, bytes) VALUES " + repeatElement("(randomblob(32), ?, randomblob(400))", count: rows).joined(separator: ", ")
        guard let before = bytesWrittenByThisThread() else {
            Issue.record("/proc/thread-self/io is not readable here: the test cannot observe what is written")
            return
        }
        struct RollBack: Error {}
        var written = 0
        // Rolled back: before a commit, only the statements' journals could write.
        #expect(throws: RollBack.self) {
            try db.transaction {
                for block in 0..<100 {
                    try db.run(sql, (0..<rows).map { .integer(Int64(block * rows + $0)) })
                }
                written = (bytesWrittenByThisThread() ?? .max) - before
                throw RollBack()
            }
        }
        #expect(written == 0, "the statements wrote \(written) bytes before any commit: their journals spilled to a file")
        #expect(try db.prepare("SELECT count(*) FROM t").first { $0.int(0) } == 0)
    }

    /// A statement that changes many pages the transaction wrote before
    /// it, in a write-ahead-log file: its statement journal outgrows any
    /// threshold, and must neither spill with SQLite's cut-short write
    /// (SQLITE_FULL: "database or disk is full", the transaction rolled
    /// back) nor fail otherwise. Here a CREATE INDEX after 16 MB of rows,
    /// with a cache smaller than them, as a bulk rebuild makes its index.
    /// (With ``Database/statementJournalInMemory`` at 8 MiB, as it was, this
    /// CREATE INDEX fails with SQLITE_FULL: checked by setting it so.)
    @Test func aStatementWithALargeJournalSucceedsInAWriteAheadLogFile() throws {
        #expect(Database.libraryConfigured)
        let dir = TempDir()
        let db = try Database(path: dir.path + "/large.sqlite")
        #expect(try db.prepare("PRAGMA journal_mode").first { $0.text(0) } == "wal")
        try db.transaction {
            try db.execute("""
                CREATE TABLE t(k TEXT PRIMARY KEY, v TEXT, n INTEGER, pad TEXT);
                WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 60000)
                INSERT INTO t SELECT hex(randomblob(8)), 'view' || (i % 100), i, hex(randomblob(100)) FROM r;
                PRAGMA cache_size=-8192;
                """)
            try db.execute("CREATE INDEX t_v ON t(v, n)")
        }
        #expect(try db.prepare("SELECT count(*) FROM t INDEXED BY t_v WHERE v = 'view7'").first { $0.int(0) } == 600)
    }
}
