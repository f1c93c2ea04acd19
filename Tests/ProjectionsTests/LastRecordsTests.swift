import Envelope
import EventLog
import Foundation
@testable import Projections
import Testing

/// `record list --last N` without both a focus and a store: the newest N
/// of each subject's store, merged, rather than every record sorted. The
/// same records as the end of the whole list, for SQLite's steps of the
/// few read, not of every record.
struct LastRecordsTests {
    @Test func theLastFewReadTheNewestOfEachViewOnly() throws {
        let gen = Gen()
        var rng = SplitMix(seed: 5)
        let focuses = ["newMom", MergePropertyTests.babyFocus]
        let stores = ["feeding", "sleep", "diaper", "growth"]
        var events: [MergePropertyTests.Generated] = []
        let iso = ISO8601DateFormatter()
        for i in 0..<4_000 {
            // Many records to a second (the same millisecond, ordered by id), and some without a time.
            let at: String? = i % 97 == 0 ? nil : iso.string(from: Date(timeIntervalSince1970: 1_780_000_000 + Double(rng.next() % 3_000)))
            let store = stores[Int(rng.next() % 4)]
            let fields: [String: JSONValue] = store == "sleep" ? [:] : ["note": .string("r\(i)")]
            events.append(gen.raw(by: i % 3, RecordEvent(kind: .put, record: UUID(), store: store, focus: focuses[Int(rng.next() % 2)], at: at, fields: fields).body,
                                  ms: 1_795_000_000_000 + UInt64(i)))
        }
        let (dir, p) = try MergePropertyTests.projector()
        defer { withExtendedLifetime(dir) {} }
        for e in events { try p.apply(e.env, body: e.body) }
        for (query, count) in [(Projector.RecordQuery(), 10), (.init(focus: "newMom"), 3), (.init(store: "sleep"), 25), (.init(), 1)] {
            _ = p.database.statementSteps(reset: true)
            let last = try p.lastRecordRows(query, count: count).map { try $0.state()?.id }
            let steps = p.database.statementSteps()
            #expect(last == (try p.records(query).suffix(count).map(\.id)), "\(query) \(count)")
            // Eight views of about 500 records: about 50 steps a row read, for at most `count` rows a view; reading them all took over 40 000 steps.
            // (Counted over the statements still prepared: the whole list's is not, so a count of none means it was taken.)
            #expect(steps > 0 && steps < 500 + 100 * 8 * count, "\(steps) steps of SQLite for the last \(count) of \(query)")
        }
    }
}
