import Envelope
@testable import EventLog
import Foundation
import Testing

/// A log written by version 1 of the layout (a unique index on event ids)
/// opens as version 2 (no id index) with every event, position and byte as
/// it was, the append-only rules in force, and its chains going on.
struct MigrationTests {
    @Test func versionOneLogMigratesWithNothingLostOrChanged() throws {
        let dir = TempDir()
        let identity = DeviceIdentity.generate()
        let family = Author.family
        let source = try EventLog(path: dir.path + "/new.sqlite")
        let written = try source.append(bodies: (0..<50).map { Array("{\"type\":\"t\",\"schema\":1,\"n\":\($0)}".utf8) },
                                        as: identity, family: family, key: Author.key)
        // A version-1 file: its schema, the same rows, schema = 1 in log_meta.
        let oldPath = dir.path + "/old.sqlite"
        do {
            let old = try Database(path: oldPath)
            try old.execute(EventLog.eventsV1)
            try old.execute(EventLog.otherTables)   // the same in both versions
            try old.execute("CREATE TABLE log_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL); INSERT INTO log_meta VALUES('schema', 1)")
            for env in written {
                try old.run("INSERT INTO events(id, family, author, seq, hlc, received_at, bytes) VALUES(?1, ?2, ?3, ?4, ?5, 7, ?6)",
                            [.blob(env.id.bytes), .blob(env.family.bytes), .blob(env.author.bytes), .integer(Int64(env.seq)),
                             .blob(env.hlc.bigEndianBytes), .blob(env.bytes)])
            }
            let indexes = try old.prepare("PRAGMA index_list(events)")
            var unique = 0
            try indexes.forEachRow { if $0.int(2) == 1 { unique += 1 } }
            #expect(unique == 2, "version 1 has the unique id index and the chain's")
        }

        let log = try EventLog(path: oldPath)
        #expect(try log.database.statement("SELECT value FROM log_meta WHERE key = 'schema'").first { $0.int(0) } == 2)
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
}
