import Envelope
@testable import famctl
import Foundation
import Projections
import Testing

/// The records `famctl bench` writes are a household's: every store, valid
/// for its store, in time order, the same from the same seed.
struct BenchWorkloadTests {
    /// The records of `count` events, each with its body's record.
    static func records(_ w: inout BenchWorkload, _ count: Int) throws -> [RecordEvent] {
        try w.next(count).map { try #require(try RecordEvent($0)) }
    }

    @Test(arguments: [1, 3])
    func everyRecordIsValidForItsStoreAfterEveryChange(eventsPerRecord: Int) throws {
        var w = BenchWorkload(seed: 7, eventsPerRecord: eventsPerRecord)
        let subjects = try w.subjects.map { try #require(try SubjectEvent($0)) }
        for s in subjects { try SubjectEvent.validate(kind: SubjectKind(s.focus), fields: s.fields) }
        let known = Set(subjects.map(\.focus.description))
        var merged: [UUID: [String: JSONValue]] = [:]
        var order: [UUID] = []
        for r in try Self.records(&w, 3000) {
            #expect(r.kind == .put)
            let focus = try #require(FocusKey(r.focus))
            #expect(known.contains(r.focus), "\(r.focus) is one of the household's subjects")
            if merged[r.record] == nil { order.append(r.record) }
            merged[r.record, default: [:]].merge(r.fields) { $1 }
            let store = try #require(StoreName(rawValue: r.store))
            let at = try #require(r.at.flatMap(TimeValue.parse), "\(r.at ?? "no at")")
            try StoreSchema.schema(for: store).validate(fields: merged[r.record]!, focus: focus, at: at, now: nil)
        }
        #expect(order.count == 3000 / eventsPerRecord)
    }

    /// The bench's bounds sign messages as long as the events it appends
    /// sign: `signedLengths` gives, event for event, what a home's append
    /// of the same records signs (all but the 64-byte signature).
    @Test(arguments: [1, 10])
    func theBoundsSignAsManyBytesAsTheAppendedEvents(eventsPerRecord: Int) throws {
        let path = NSTemporaryDirectory() + "famctl-lengths-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: path) }
        let home = try Home.create(path, name: "A")
        var w = BenchWorkload(eventsPerRecord: eventsPerRecord)
        _ = try home.append(w.subjects)
        let appended = try home.append(w.next(256))
        let lengths = BenchCommand.signedLengths(eventsPerRecord: eventsPerRecord)
        #expect(appended.map { $0.bytes.count - SyncEnvelope.signatureCount } == lengths)
        #expect(Set(lengths).count > 10, "records of every store, of many lengths")
    }

    @Test func allTenStoresInTimeOrderWithoutOverlappingSleeps() throws {
        var w = BenchWorkload(seed: 3)
        let records = try Self.records(&w, 5000)
        #expect(Set(records.map(\.store)) == Set(StoreName.allCases.map(\.rawValue)))
        // Feedings and diapers most, vaccinations least.
        let counts = Dictionary(grouping: records, by: \.store).mapValues(\.count)
        #expect(counts["feeding"]! > counts["sleep"]! && counts["sleep"]! > counts["vaccination"]!)
        let times = records.map { TimeValue.parse($0.at!)! }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "each record after the one before")
        // A duration ends before the next record: no two sleeps (or feedings) overlap.
        for (i, r) in records.enumerated().dropLast() {
            guard let end = StoreSchema.time(r.fields["end"]) else { continue }
            #expect(end >= StoreSchema.time(r.fields["start"])! && end < times[i + 1], "\(r.store) at \(r.at!)")
        }
        #expect(records.contains { $0.fields["note"]?.stringValue?.utf8.contains { $0 >= 0x80 } == true }, "notes in Chinese too")
        #expect(records.contains { if case .double = $0.fields["weightKg"] { true } else { false } })
        #expect(records.contains { if case .array(let a) = $0.fields["epds"] { a.count == 10 } else { false } })
    }

    @Test func theSameSeedWritesTheSameRecordsAndAnotherDeviceOthers() throws {
        func shape(_ w: inout BenchWorkload) throws -> [String] {
            try Self.records(&w, 500).map { "\($0.store) \($0.focus) \($0.at!) \(JSONValue.object($0.fields).jsonText)" }
        }
        var a = BenchWorkload(seed: 11), b = BenchWorkload(seed: 11), c = BenchWorkload(seed: 11, device: 2), d = BenchWorkload(seed: 11)
        #expect(try shape(&a) == shape(&b))
        #expect(try shape(&c) != shape(&d))
        #expect(a.baby == c.baby, "another device of the household writes about the same baby")
        #expect(BenchWorkload(seed: 12).baby != a.baby)
    }

    /// famctl's own records, of every store, take the rebuild's direct
    /// path (`PreparedChange(canonicalRecordPut:)`), not the general reader.
    @Test func everyRecordIsReadDirectly() throws {
        var w = BenchWorkload(seed: 5, eventsPerRecord: 2)
        let author = SigningKey(seed: [UInt8](repeating: 9, count: 32)).publicKey
        let version = Version(hlc: HLC(milliseconds: 1_795_000_000_000, counter: 0), author: author)
        for body in w.next(2000) {
            let fast = PreparedChange(canonicalRecordPut: body.encoded(), version: version)
            #expect(fast != nil, "\(String(decoding: body.encoded(), as: UTF8.self))")
            #expect(fast == PreparedChange(body, version: version))
        }
    }

    @Test func timesAreWrittenWithTheFamilysOffset() throws {
        let f = ISO8601DateFormatter()
        f.timeZone = TimeZone(secondsFromGMT: 8 * 3600)
        f.formatOptions = [.withInternetDateTime]
        var rng = SplitMixRNG(seed: 1)
        for _ in 0..<2000 {
            let s = Int64(rng.next() % 6_000_000_000) - 2_000_000_000
            let text = BenchWorkload.text(s)
            #expect(text == f.string(from: Date(timeIntervalSince1970: TimeInterval(s))), "\(s)")
            #expect(TimeValue.parse(text) == Date(timeIntervalSince1970: TimeInterval(s)))
        }
    }
}
