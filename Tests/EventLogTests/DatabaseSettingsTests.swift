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

    @Test func aFileWithDefaultPagesKeepsThemAndItsData() throws {
        let dir = TempDir()
        let path = dir.path + "/old.sqlite"
        // Written the way SQLite writes by default: 4 KiB pages, rollback journal.
        var raw: OpaquePointer?
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
}
