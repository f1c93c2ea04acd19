import Envelope
import EventLog
import Foundation
@testable import Projections
import Testing

/// A rebuild's pass inserts rows several to a statement (`RowBatch`), as
/// many as the connection's limit on a statement's parameters allows: an
/// SQLite before 3.32 takes 999 (32 rows of the entities' 18 columns, not
/// 64), and a build may take fewer.
struct RowBatchTests {
    @Test func rowsAStatementFollowTheParametersLimit() throws {
        let dir = TempDir()
        defer { withExtendedLifetime(dir) {} }
        let db = try Database(path: dir.path + "/p.sqlite")
        #expect(db.variableLimit >= 999)
        // 64 rows of 18 columns where SQLite takes 1 152 parameters or more (3.32 on: 32 766).
        #expect(RowBatch(database: db, head: "", columns: 18).maxRows == (db.variableLimit >= 1_152 ? 64 : 32))
        for (limit, columns, rows) in [(999, 18, 32), (999, 5, 64), (100, 18, 4), (36, 18, 2), (18, 18, 1)] {
            db.lowerVariableLimit(to: limit)
            #expect(db.variableLimit == limit)
            #expect(RowBatch(database: db, head: "", columns: columns).maxRows == rows, "limit \(limit), \(columns) columns")
        }
    }

    /// Under an older SQLite's limit and lower ones, a rebuild's bulk pass
    /// of several hundred sleeps created, changed and deleted (new rows and
    /// history rows in batches) makes the projection applying event by
    /// event makes.
    @Test(arguments: [999, 100, 36])
    func aBulkPassUnderALowerLimitMakesTheSameProjection(limit: Int) throws {
        var rng = SplitMix(seed: UInt64(limit))
        let gen = Gen()
        var events: [MergePropertyTests.Generated] = []
        var ids: [UUID] = []
        for i in 0..<400 {
            let minute = Int(rng.next() % 600)
            let start = String(format: "2026-11-29T%02d:%02d:00Z", minute / 60, minute % 60)
            if i >= 300 {  // after 300 new sleeps (batches of new rows), changes and deletes (history rows)
                let id = ids[Int(rng.next() % UInt64(ids.count))]
                let kind: RecordEvent.Kind = rng.next() % 3 == 0 ? .delete : .put
                events.append(gen.raw(by: i % 3, RecordEvent(kind: kind, record: id, store: "sleep", focus: MergePropertyTests.babyFocus, at: nil,
                                                             fields: kind == .put ? ["note": .string("changed \(i)")] : [:]).body, ms: 1_795_000_000_000 + UInt64(i)))
                continue
            }
            let id = UUID()
            ids.append(id)
            events.append(gen.raw(by: i % 3, RecordEvent(kind: .put, record: id, store: "sleep", focus: MergePropertyTests.babyFocus, at: start,
                                                         fields: ["start": .string(start), "note": .string(String(repeating: "z", count: Int(rng.next() % 40)))]).body,
                                  ms: 1_795_000_000_000 + UInt64(i)))
        }
        let (dir1, oneByOne) = try MergePropertyTests.projector()
        for e in events { try oneByOne.apply(e.env, body: e.body) }
        let (dir2, bulk) = try MergePropertyTests.projector()
        defer { withExtendedLifetime((dir1, dir2)) {} }
        bulk.database.lowerVariableLimit(to: limit)
        try bulk.database.transaction(.immediate) {
            try bulk.bulk(expected: events.count) { for e in events { try bulk.apply(e.env, body: e.body) } }
        }
        #expect(try bulk.digest() == oneByOne.digest(), "limit \(limit)")
        #expect(try bulk.records(.init(focus: MergePropertyTests.babyFocus, store: "sleep")).count == oneByOne.records(.init(focus: MergePropertyTests.babyFocus, store: "sleep")).count)
    }
}
