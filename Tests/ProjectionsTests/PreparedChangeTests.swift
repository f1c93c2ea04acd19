import Envelope
import Foundation
@testable import Projections
import Testing

/// A record event's body read straight from its bytes
/// (``PreparedChange/init(recordBody:version:)``) makes the same change as
/// the general reader (an ``EventBody``, then ``PreparedChange/init(_:version:)``),
/// or declines and leaves the body to it: never a different change, and
/// never a change from bytes the general reader refuses.
struct PreparedChangeTests {
    static let stores = ["feeding", "postpartum", "sleep", "unknownStore"]
    static let names = ["amountMl", "side", "note", "é-note", "Zeta", "$store", "$at", "$focus", "emoji🍼", "x\\u001fy", "fields", "type"]   // as JSON text

    /// A random JSON value's text.
    static func value(_ rng: inout SplitMix, depth: Int = 0) -> String {
        switch rng.next() % (depth < 2 ? 9 : 7) {
        case 0: return "null"
        case 1: return rng.next() % 2 == 0 ? "true" : "false"
        case 2: return String(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64))
        case 3: return ["2.5", "-0", "1e3", "0.0", "-12.75"][Int(rng.next() % 5)]
        case 4: return ["\"left\"", "\"with \\\"quotes\\\"\\n\"", "\"\"", "\"é 宝宝 🥕\"", "\"\\u00e9\""][Int(rng.next() % 5)]
        case 5: return "\"2026-11-29T0\(rng.next() % 10):00:00Z\""
        case 6: return "\"slept a little better tonight\""
        case 7: return "[" + (0..<Int(rng.next() % 3)).map { _ in value(&rng, depth: depth + 1) }.joined(separator: ",") + "]"
        default: return "{\"k\":" + value(&rng, depth: depth + 1) + "}"
        }
    }

    /// A body that is usually a well-formed record event, sometimes not:
    /// keys missing, repeated, of the wrong type, unknown, reordered, spaced.
    static func body(_ rng: inout SplitMix) -> [UInt8] {
        func maybe(_ percent: UInt64) -> Bool { rng.next() % 100 < percent }
        let record = UUID().uuidString
        var members: [String] = []
        if !maybe(3) { members.append(#""type":"# + (maybe(90) ? (maybe(80) ? #""record.put""# : #""record.delete""#) : (maybe(50) ? #""subject.put""# : "7"))) }
        if !maybe(3) { members.append(#""schema":"# + (maybe(90) ? String(rng.next() % 3 + 1) : ["0", "\"1\"", "2.0", "99999999999"][Int(rng.next() % 4)])) }
        if !maybe(3) { members.append(#""record":"# + (maybe(90) ? "\"\(maybe(50) ? record.lowercased() : record)\"" : "\"not-a-uuid\"")) }
        if !maybe(3) { members.append(#""store":""# + stores[Int(rng.next() % UInt64(stores.count))] + "\"") }
        if !maybe(3) { members.append(#""focus":"# + (maybe(95) ? "\"baby:\(UUID().uuidString.lowercased())\"" : "null")) }
        if maybe(70) { members.append(#""at":"# + (maybe(90) ? "\"2026-11-29T08:00:00+01:00\"" : "12")) }
        if maybe(90) {
            if maybe(95) {
                var fields: [String] = []
                for n in names where maybe(40) { fields.append("\"\(n)\":" + value(&rng)) }
                if maybe(5), let first = fields.first { fields.append(first) }   // a name twice
                fields.shuffle(using: &rng)
                members.append(#""fields":{"# + fields.joined(separator: maybe(20) ? " , " : ",") + "}")
            } else {
                members.append(#""fields":[1]"#)
            }
        }
        if maybe(10) { members.append(#""future":{"x":[1,2.5,"y",null,true]}"#) }
        if maybe(3), let first = members.first { members.append(first) }   // a key twice
        members.shuffle(using: &rng)
        let space = maybe(20) ? " \n" : ""
        return Array(("\(space){" + members.joined(separator: ",\(space)") + "}\(space)").utf8)
    }

    @Test(arguments: 0..<20)
    func theDirectReaderMakesTheGeneralReadersChangeOrDeclines(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let author = SigningKey(seed: [UInt8](repeating: UInt8(seed % 200 + 1), count: 32)).publicKey
        var direct = 0, declined = 0
        for round in 0..<200 {
            var bytes = Self.body(&rng)
            // Now and then a damaged byte: still never a change the general reader does not make.
            if round % 10 == 9 { bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            let version = Version(hlc: HLC(milliseconds: 1_795_000_000_000 + rng.next() % 1_000_000, counter: 0), author: author)
            let general = (try? EventBody(decoding: bytes)).map { PreparedChange($0, version: version) }
            guard let fast = PreparedChange(recordBody: bytes, version: version) else { declined += 1; continue }
            direct += 1
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(general != nil, "read directly, refused by the general reader: \(text)")
            #expect(fast == general, "seed \(seed): the two readers differ on \(text)")
        }
        #expect(direct > 50 && declined > 10, "seed \(seed): \(direct) read directly, \(declined) declined: both paths must be exercised")
    }

    @Test func knownShapesAreReadDirectlyAndOthersDeclined() throws {
        let author = SigningKey(seed: [UInt8](repeating: 3, count: 32)).publicKey
        let version = Version(hlc: HLC(milliseconds: 1_795_000_000_000, counter: 0), author: author)
        let record = RecordEvent(kind: .put, record: UUID(), store: "feeding", focus: "baby:\(UUID())", at: "2026-11-29T08:00:00Z",
                                 fields: ["amountMl": .int(120), "side": .string("left"), "note": .null])
        let fast = try #require(PreparedChange(recordBody: record.body.encoded(), version: version), "famctl's own record.put")
        #expect(fast == PreparedChange(record.body, version: version))
        let delete = RecordEvent(kind: .delete, record: UUID(), store: "sleep", focus: "baby:\(UUID())", at: nil, fields: [:])
        #expect(PreparedChange(recordBody: delete.body.encoded(), version: version) == PreparedChange(delete.body, version: version))
        // Not record events, or not of the plain shape: left to the general reader.
        #expect(PreparedChange(recordBody: SubjectEvent(focus: .newMom, fields: [:]).body.encoded(), version: version) == nil)
        #expect(PreparedChange(recordBody: Array(#"{"type":"record.put","schema":1,"record":"x","store":"feeding","focus":"f"}"#.utf8), version: version) == nil)
        #expect(PreparedChange(recordBody: Array(#"{"type":"record.put","schema":1,"fields":[1]}"#.utf8), version: version) == nil)
        #expect(PreparedChange(recordBody: Array("[1]".utf8), version: version) == nil)
    }
}
