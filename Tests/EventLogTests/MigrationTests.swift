import Envelope
@testable import EventLog
import Foundation
import Testing

/// A log written by version 1 of the layout (a unique index on event ids)
/// or version 2 (the blobs' lengths checked) opens as version 3 (neither)
/// with every event, position and byte as it was, the append-only rules
/// in force, and its chains going on.
struct MigrationTests {
    /// The append-only rules read from the schema: six triggers, each
    /// found in place in a new log (and in a migrated one, below).
    @Test func theAppendOnlyRulesAreInPlaceInANewLog() throws {
        #expect(EventLog.appendOnlyRules.map(\.name).sorted() == ["events_no_delete", "events_no_update", "forks_no_delete", "forks_no_update", "rejected_no_delete", "rejected_no_update"])
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        #expect(log.rulesFoundMissing.isEmpty)
        #expect(try log.missingRules().isEmpty && log.rulesRestoredAt() == nil)
    }

    /// A trigger put in after the log was opened that drops inserts: the
    /// append fails, nothing is shown as stored (the transaction rolls back).
    @Test func anInsertThatStoresLessFails() throws {
        let dir = TempDir()
        let identity = DeviceIdentity.generate()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        _ = try log.append(bodies: [Array("{\"type\":\"t\",\"schema\":1}".utf8)], as: identity, family: Author.family, key: Author.key)
        try log.database.execute("CREATE TRIGGER zz BEFORE INSERT ON events BEGIN SELECT RAISE(IGNORE); END")
        #expect(throws: EventLogError.notStored(given: 1, stored: 0)) {
            try log.append(bodies: [Array("{\"type\":\"t\",\"schema\":1}".utf8)], as: identity, family: Author.family, key: Author.key)
        }
        #expect(try log.count() == 1)
        // The next open removes it, and says so.
        let again = try EventLog(path: dir.path + "/log.sqlite")
        #expect(again.rulesFoundMissing == ["zz"] && again.rulesPutBack)
        #expect(try again.missingRules().isEmpty)
    }

    @Test(arguments: [1, 2])
    func olderLogMigratesWithNothingLostOrChanged(version: Int) throws {
        let dir = TempDir()
        let identity = DeviceIdentity.generate()
        let family = Author.family
        let source = try EventLog(path: dir.path + "/new.sqlite")
        let written = try source.append(bodies: (0..<50).map { Array("{\"type\":\"t\",\"schema\":1,\"n\":\($0)}".utf8) },
                                        as: identity, family: family, key: Author.key)
        // An old file: its schema, the same rows, its version in log_meta.
        let oldPath = dir.path + "/old.sqlite"
        do {
            let old = try Database(path: oldPath)
            try old.execute(version == 1 ? EventLog.eventsV1 : EventLog.eventsV2)
            try old.execute(EventLog.otherTables)   // the same in every version
            try old.execute("CREATE TABLE log_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL); INSERT INTO log_meta VALUES('schema', \(version))")
            for env in written {
                try old.run("INSERT INTO events(id, family, author, seq, hlc, received_at, bytes) VALUES(?1, ?2, ?3, ?4, ?5, 7, ?6)",
                            [.blob(env.id.bytes), .blob(env.family.bytes), .blob(env.author.bytes), .integer(Int64(env.seq)),
                             .blob(env.hlc.bigEndianBytes), .blob(env.bytes)])
            }
            let indexes = try old.prepare("PRAGMA index_list(events)")
            var unique = 0
            try indexes.forEachRow { if $0.int(2) == 1 { unique += 1 } }
            #expect(unique == (version == 1 ? 2 : 1), "version 1 has the unique id index and the chain's")
            let table = try old.prepare("SELECT sql FROM sqlite_schema WHERE name = 'events'").first { $0.text(0) } ?? ""
            #expect(table.contains("length(id)"), "versions 1 and 2 check the lengths")
        }

        let log = try EventLog(path: oldPath)
        #expect(log.rulesFoundMissing.isEmpty, "\(log.rulesFoundMissing)")
        #expect(try log.database.statement("SELECT value FROM log_meta WHERE key = 'schema'").first { $0.int(0) } == 3)
        let table = try log.database.prepare("SELECT sql FROM sqlite_schema WHERE name = 'events'").first { $0.text(0) } ?? ""
        #expect(!table.contains("length("), "version 3 checks no lengths: \(table)")
        var uniqueAfter = 0
        try log.database.prepare("PRAGMA index_list(events)").forEachRow { if $0.int(2) == 1 { uniqueAfter += 1 } }
        #expect(uniqueAfter == 1, "only the chain's (family, author, seq) stays unique")
        var rows: [(Int64, [UInt8])] = []
        try log.database.prepare("SELECT pos, bytes FROM events ORDER BY pos").forEachRow { rows.append(($0.int(0), $0.blob(1))) }
        #expect(rows.map(\.0) == Array(1...50))
        #expect(rows.map(\.1) == written.map(\.bytes))
        #expect(try log.audit(family: family).isIntact)
        // The append-only rules hold on the new table.
        #expect(throws: SQLiteError.self) { try log.database.run("DELETE FROM events") }
        #expect(throws: SQLiteError.self) { try log.database.run("UPDATE events SET seq = 99") }
        // A duplicate is recognised without the id index; the chain goes on.
        let again = try log.ingest([written[10].bytes], family: family)
        #expect(again.outcomes.first?.1 == .duplicate)
        let more = try log.append(bodies: [Array("{\"type\":\"t\",\"schema\":1}".utf8)], as: identity, family: family, key: Author.key)
        #expect(more[0].seq == 51 && more[0].previous == written.last?.id)
        #expect(try log.contains(more[0]) && log.contains(written[0].id))
        // Reopening does not migrate again.
        let reopened = try EventLog(path: oldPath)
        #expect(try reopened.count() == 51)
    }

    /// SQLite keeps a statement journal (a copy of every page a statement
    /// changes that its transaction changed before) for a statement of
    /// many rows that may abort midway: one that calls an SQL function, or
    /// resolves a broken rule by `ABORT`. The log's multi-row insert does
    /// neither, so it keeps none; a length check put back, or the default
    /// `ABORT`, shows in its program.
    @Test func theMultiRowInsertOfEventsCanKeepNoStatementJournal() throws {
        let dir = TempDir()
        let log = try EventLog(path: dir.path + "/log.sqlite")
        let insert = log.insertSQL(rows: 32)
        let program = try log.database.prepare("EXPLAIN " + insert)
        var opcodes: [(String, Int64)] = []
        try program.forEachRow { opcodes.append(($0.text(1), $0.int(3))) }
        let calls = opcodes.filter { $0.0 == "Function" || $0.0 == "PureFunc" }.map(\.0)
        // A halt's p2 is how a broken rule is resolved: 2 is ABORT.
        let aborts = opcodes.filter { ($0.0 == "Halt" || $0.0 == "HaltIfNull") && $0.1 == 2 }.map(\.0)
        let halts = opcodes.filter { $0.0 == "HaltIfNull" }.count
        #expect(halts >= 7, "the NOT NULL rules of the seven columns inserted are still checked")
        #expect(calls.isEmpty, "the insert calls SQL functions: \(calls)")
        #expect(aborts.isEmpty, "the insert may abort: \(aborts)")
        // The rules still hold: a seq of 0 is refused, and the row before
        // it in the same statement (kept by `OR FAIL`) goes with the
        // caller's transaction.
        let env = try log.append(bodies: [Array("{\"type\":\"t\",\"schema\":1}".utf8)], as: DeviceIdentity.generate(), family: Author.family, key: Author.key)[0]
        func row(seq: Int64) -> [SQLValue] {
            [.blob(env.id.bytes), .blob(env.family.bytes), .blob(env.author.bytes), .integer(seq), .blob(env.hlc.bigEndianBytes), .integer(1), .blob(env.bytes)]
        }
        #expect(throws: SQLiteError.self) {
            try log.database.transaction { try log.database.run(log.insertSQL(rows: 2), row(seq: 2) + row(seq: 0)) }
        }
        #expect(try log.count() == 1)
    }
}
