import Envelope
import Foundation
import PropertySeeds
@testable import Projections
import Testing

/// A put's row for a new entity is made ahead (``PreparedChange/FreshRow``),
/// on another core, instead of merging into an empty state on the projecting
/// thread: both must give the same row, byte for byte.
struct FreshRowTests {
    @Test(arguments: PropertySeeds.range(0..<40))
    func aNewEntitysRowMadeAheadIsTheMergeIntoAnEmptyState(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let names = ["amountMl", "side", "note", "é-note", "Zeta", "a", "$store", "$at", "emoji🍼", "x\u{1F}y", "start", "end"]
        let values: [JSONValue] = [.null, .int(-3), .double(2.5), .string("left"), .string("with \"quotes\"\n"), .bool(true),
                                   .array([.int(1), .null]), .object(["k": .string("v")])]
        var fields: [String: JSONValue] = [:]
        for n in names where rng.next() % 2 == 0 { fields[n] = values[Int(rng.next() % UInt64(values.count))] }
        // A sleep's interval (``PreparedChange/FreshRow/spanKey``): times, cleared, or not times.
        let times: [JSONValue] = [.string("2026-11-29T08:00:00Z"), .string("2026-11-29T10:30:00.5+02:00"), .null, .string("soon")]
        for n in ["start", "end"] where rng.next() % 3 != 0 { fields[n] = times[Int(rng.next() % UInt64(times.count))] }
        let store = rng.next() % 3 == 0 ? "feeding" : "sleep"
        let at = ["2026-11-29T08:00:00Z", "2026-11-29T09:30:00+02:00", nil, "not a time"][Int(rng.next() % 4)]
        let record = RecordEvent(kind: .put, record: UUID(), store: store, focus: "baby:\(UUID())", at: at, fields: fields)
        let author = SigningKey(seed: [UInt8](repeating: UInt8(seed % 200 + 1), count: 32)).publicKey
        let version = Version(hlc: HLC(milliseconds: 1_795_000_000_000 + rng.next() % 1_000_000, counter: UInt16(rng.next() % 5)), author: author)

        let prepared = PreparedChange(record.body)
        guard case .put(let put) = prepared.change else {
            Issue.record("a record.put did not read as a put: \(prepared.change)")
            return
        }
        let (written, trail, fresh) = (put.written, put.trail, put.fresh)
        var merged = EntityState()
        merged.merge(put: written, version: version)
        let (state, column) = fresh.row(at: version)

        #expect(column == merged.encodedFields(), "seed \(seed): the fields column differs")
        #expect(EntityState.decodeFields(column) == merged.fields)
        // A column with a byte more (a damaged row) is refused, not read.
        #expect(EntityState.decodeFields(column + [0]) == nil, "seed \(seed): a fields column with trailing bytes was read")
        #expect(state.put == merged.put && state.firstPut == merged.firstPut && state.delete == nil)
        #expect(state.store == merged.store && state.focus == merged.focus && state.at == merged.at)
        #expect(fresh.atMilliseconds == merged.atMilliseconds)
        #expect(fresh.spanKey == merged.spanKey, "seed \(seed): the interval's key differs")
        #expect((fresh.spanKey != nil) == (store == "sleep" && StoreSchema.time(fields["start"]) != nil))
        // The history's trail is the canonical JSON of what the put wrote.
        let wrote = JSONValue.object(Dictionary(uniqueKeysWithValues: written.map { w in
            (w.name, w.text.map { JSONValue.parse(Array($0)) ?? .string("unreadable text") } ?? .null)
        }))
        #expect(trail == wrote.jsonText, "seed \(seed): the trail differs")
        // A row the put alone wrote stores no changes: they are read back from its fields.
        #expect(EntityState.decodeFields(column).map(EntityState.putTrail(of:)) == trail, "seed \(seed): the trail read back from the row differs")
        #expect(merged.store == store, "the event's store wins over a body field of the same name")
        if let at { #expect(merged.at == at, "the event's time wins over a body field of the same name") }
    }
}
