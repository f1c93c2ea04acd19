import Envelope
import Foundation
import PropertySeeds
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

    @Test(arguments: PropertySeeds.range(0..<20))
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

    /// A random field value: every JSON type, strings that need escapes or
    /// are not ASCII, integers and doubles of every size.
    static func randomValue(_ rng: inout SplitMix, depth: Int = 0) -> JSONValue {
        switch rng.next() % (depth < 2 ? 9 : 7) {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .int(rng.next() % 8 == 0 ? [.min, .max, 0, -1][Int(rng.next() % 4)] : Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64))
        case 3:
            let d = [2.5, 120.75, 0.001, 1e-7, 3.0, -0.5, 1e300, 123456789.123456, 0.1 + 0.2][Int(rng.next() % 9)]
            return .double(rng.next() % 3 == 0 ? d : Double(Int64(bitPattern: rng.next()) >> 40) / Double(1 << (rng.next() % 30)))
        case 4: return .string(["left", "with \"quotes\"\n", "", "é 宝宝 🥕", "tab\there", "back\\slash", "del\u{7f}", "ctl\u{1}"][Int(rng.next() % 8)])
        case 5: return .string("2026-11-29T0\(rng.next() % 10):00:00Z")
        case 6: return .string("slept a little better tonight")
        case 7: return .array((0..<Int(rng.next() % 3)).map { _ in randomValue(&rng, depth: depth + 1) })
        default: return .object(["k": randomValue(&rng, depth: depth + 1)])
        }
    }

    /// A `record.put` as famctl writes it (canonical JSON) is read from its
    /// bytes without reading its values: the same change as the general
    /// reader, byte for byte, or declined. Damaged and cut bodies too.
    @Test(arguments: PropertySeeds.range(0..<10))
    func aCanonicalPutIsCopiedNotReadAndMakesTheSameChange(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let author = SigningKey(seed: [UInt8](repeating: UInt8(seed % 200 + 1), count: 32)).publicKey
        let names = ["amountMl", "side", "note", "é-note", "Zeta", "$store", "$x", "!bang", "a", "ab", "weightKg", "fields", "start", "end"]
        // A sleep's interval is read by both readers too (``PreparedChange/FreshRow/spanKey``).
        let times = ["2026-11-29T08:00:00+01:00", "2026-11-29T07:59:59.999Z", "2026-11-29T09:00:00Z", "not a time", "2026-13-01T00:00:00Z"]
        var canonical = 0, declined = 0, spans = 0
        for round in 0..<300 {
            var fields: [String: JSONValue] = [:]
            let plain = rng.next() % 2 == 0   // half of the puts: only values famctl's own records hold
            for n in names where rng.next() % 100 < 35 {
                if plain, n.utf8.first! <= UInt8(ascii: "$") || !n.utf8.allSatisfy({ $0 < 0x80 }) { continue }
                var v = Self.randomValue(&rng)
                if plain {
                    // Arrays of such values are plain too (`foods`, `epds`).
                    func plainScalar(_ v: JSONValue) -> JSONValue {
                        switch v {
                        case .array, .object: .int(7)
                        case .string(let t) where t.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }: .string("left")
                        default: v
                        }
                    }
                    if case .array(let items) = v { v = .array(items.map(plainScalar)) } else { v = plainScalar(v) }
                }
                if n == "start" || n == "end", rng.next() % 4 != 0 { v = .string(times[Int(rng.next() % UInt64(times.count))]) }
                fields[n] = v
            }
            let kind: RecordEvent.Kind = rng.next() % 10 == 0 ? .delete : .put
            let store = rng.next() % 10 == 0 ? "unknownStore" : ["feeding", "postpartum", "sleep"][Int(rng.next() % 3)]
            if store == "sleep", rng.next() % 2 == 0 { fields["start"] = .string(times[Int(rng.next() % 3)]) }
            let at: String? = rng.next() % 4 == 0 ? nil : "2026-11-29T08:00:00+01:00"
            let record = UUID()
            let body = RecordEvent(kind: kind, record: record, store: store, focus: "baby:\(UUID())".lowercased(), at: at, fields: fields).body
            var bytes = body.encoded()
            if rng.next() % 4 == 0 {
                // A record id written in capitals by another writer: stored lowercase all the same.
                let lower = record.uuidString.lowercased()
                bytes = Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: #""\#(lower)""#, with: #""\#(record.uuidString)""#).utf8)
            }
            let damaged = round % 8 == 7 || round % 16 == 15
            if round % 8 == 7 { bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            if round % 16 == 15 { bytes.removeLast(Int(rng.next() % UInt64(bytes.count))) }
            let version = Version(hlc: HLC(milliseconds: 1_795_000_000_000 + rng.next() % 1_000_000, counter: 0), author: author)
            let general = (try? EventBody(decoding: bytes)).map { PreparedChange($0, version: version) }
            guard let fast = PreparedChange(canonicalRecordPut: bytes, version: version) else {
                #expect(!(plain && kind == .put && store != "unknownStore" && !damaged), "a plain put was declined: \(String(decoding: bytes, as: UTF8.self))")
                declined += 1
                continue
            }
            canonical += 1
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(kind == .put, "a delete read as a put: \(text)")
            #expect(general != nil, "read canonically, refused by the general reader: \(text)")
            #expect(fast == general, "seed \(seed): the canonical reader differs on \(text)")
            if case .put(let put) = fast.change, put.fresh.spanKey != nil { spans += 1 }
            // And the whole direct path gives the same; so does an append's, which knows no version yet.
            #expect(PreparedChange(recordBody: bytes, version: version) == general)
            #expect(PreparedChange(canonicalRecordPut: bytes, version: nil) == (try? EventBody(decoding: bytes)).map { PreparedChange($0) })
        }
        #expect(canonical > 60 && declined > 30, "seed \(seed): \(canonical) read canonically, \(declined) declined: both paths must be exercised")
        #expect(spans > 5, "seed \(seed): only \(spans) sleeps with an interval read canonically")
    }

    /// The bodies famctl's records are made of take the canonical path:
    /// strings in any script, integers, decimals.
    @Test func famctlsOwnPutsTakeTheCanonicalPath() throws {
        let author = SigningKey(seed: [UInt8](repeating: 5, count: 32)).publicKey
        let version = Version(hlc: HLC(milliseconds: 1_795_000_000_000, counter: 0), author: author)
        let bodies = [
            RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z",
                        fields: ["kind": .string("mood"), "mood": .int(3), "note": .string("slept a little better tonight")]).body,
            RecordEvent(kind: .put, record: UUID(), store: "growth", focus: "baby:\(UUID())".lowercased(), at: nil,
                        fields: ["weightKg": .double(3.45), "note": .string("第一次吃胡萝卜 🥕"), "lengthCm": .double(-0.5), "done": .bool(true), "x": .null]).body,
            RecordEvent(kind: .put, record: UUID(), store: "sleep", focus: "baby:\(UUID())".lowercased(), at: "2026-11-29T08:00:00+01:00", fields: [:]).body,
            RecordEvent(kind: .put, record: UUID(), store: "solidFood", focus: "baby:\(UUID())".lowercased(), at: "2026-11-29T08:00:00+08:00",
                        fields: ["foods": .array([.string("carrot"), .string("米粉")]), "allergens": .array([]), "amountG": .int(40)]).body,
            RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00+08:00",
                        fields: ["kind": .string("epds"), "epds": .array((0..<10).map { .int(Int64($0 % 4)) })]).body,
        ]
        for body in bodies {
            let fast = try #require(PreparedChange(canonicalRecordPut: body.encoded(), version: version), "\(body.encoded())")
            #expect(fast == PreparedChange(body, version: version))
        }
    }

    /// The canonical reader scans a string's text eight bytes at a time:
    /// a byte it must look at (a quote, a backslash, a control character,
    /// a non-ASCII one) at every place in and around those eight, in texts
    /// of every length up to 40, is still found, and the change is the
    /// general reader's, or declined where the text holds an escape.
    @Test func everyPlaceInAStringIsScanned() throws {
        let author = SigningKey(seed: [UInt8](repeating: 7, count: 32)).publicKey
        let version = Version(hlc: HLC(milliseconds: 1_795_000_000_000, counter: 0), author: author)
        for length in 0..<40 {
            for place in -1..<length {
                for special in ["\"", "\\", "\u{1}", "\u{1f}", "é", "🥕", "\u{7f}", " "] {
                    var text = String(repeating: "a", count: length)
                    if place >= 0 { text = String(text.prefix(place)) + special + String(text.dropFirst(place + 1)) }
                    for field in ["note", "n\(text.count)"] {
                        let body = RecordEvent(kind: .put, record: UUID(), store: "sleep", focus: "newMom", at: nil,
                                               fields: [field: .string(text), "z": .int(1)]).body
                        let bytes = body.encoded()
                        let escaped = place >= 0 && ["\"", "\\", "\u{1}", "\u{1f}"].contains(special)
                        let fast = PreparedChange(canonicalRecordPut: bytes, version: version)
                        if escaped {
                            #expect(fast == nil, "\(String(decoding: bytes, as: UTF8.self)) holds an escape")
                        } else {
                            #expect(fast == PreparedChange(body, version: version), "\(String(decoding: bytes, as: UTF8.self))")
                            #expect(fast != nil)
                        }
                    }
                }
                // Bytes famctl never writes raw (a control character, bytes
                // that are not UTF-8) are declined wherever they stand.
                for raw: [UInt8] in [[0x01], [0x1F], [0xFF], [0xC3], [0xED, 0xA0, 0x80]] where place >= 0 {
                    var text = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    text.replaceSubrange(place..<(place + 1), with: raw)
                    let bytes = Array(#"{"fields":{"note":""#.utf8) + text
                        + Array(#"","z":1},"focus":"newMom","record":"f63e5f53-b0e7-4662-92d9-2ab1ac04c0bd","schema":1,"store":"sleep","type":"record.put"}"#.utf8)
                    #expect(PreparedChange(canonicalRecordPut: bytes, version: version) == nil, "\(raw) at \(place) of \(length)")
                }
            }
        }
    }

    /// Texts at the edges of what the canonical reader takes: each value
    /// either gives the general reader's change or is declined.
    @Test func edgesOfTheCanonicalForm() throws {
        let author = SigningKey(seed: [UInt8](repeating: 6, count: 32)).publicKey
        let version = Version(hlc: HLC(milliseconds: 1_795_000_000_000, counter: 0), author: author)
        func body(_ value: String) -> [UInt8] {
            Array(#"{"fields":{"v":"#.utf8) + Array(value.utf8)
                + Array(#"},"focus":"newMom","record":"f63e5f53-b0e7-4662-92d9-2ab1ac04c0bd","schema":1,"store":"sleep","type":"record.put"}"#.utf8)
        }
        let taken = ["9223372036854775807", "-9223372036854775808", "0", "-1", "1.5", "-0.25", "1e+300", "\"é\"", "\"\u{7f}\"", "true", "null",
                     "[1]", "[]", "[null]", "[0.25]", #"["carrot","米粉"]"#, #"[1,-2.5,true,false,null,"x"]"#]
        let declined = ["9223372036854775808", "-9223372036854775809", "-0", "01", "1.50", "1e3", "1.0e1", "\"\\u00e9\"", "\"\\n\"", "{}", "tru",
                        "[[1]]", "[{}]", "[1,[]]", "[1,]", "[,1]", "[1 ]", "[ ]", #"["\n"]"#, "[01]", "[-0]", "[1", "[", "[1}", #"["x",{"k":1}]"#]
        for v in taken {
            let fast = try #require(PreparedChange(canonicalRecordPut: body(v), version: version), "\(v) is canonical")
            let general = try EventBody(decoding: body(v))
            #expect(fast == PreparedChange(general, version: version), "\(v)")
        }
        for v in declined { #expect(PreparedChange(canonicalRecordPut: body(v), version: version) == nil, "\(v) is not canonical") }
        // Fields out of byte order, or named twice (`"v":1` follows each).
        for fields in [#""w":1,"#, #""v":2,"#, #""$at":"x","#, #""é":1,"#] {
            var bytes = body("1")
            bytes.insert(contentsOf: Array(fields.utf8), at: #"{"fields":{"#.utf8.count)
            #expect(PreparedChange(canonicalRecordPut: bytes, version: version) == nil, "\(fields) first")
        }
        // Bytes that are not UTF-8 are declined, and the general reader refuses them.
        for bad: [UInt8] in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            let damaged = Array(#"{"fields":{"v":"x"#.utf8) + bad + Array(#"x"},"focus":"newMom","record":"f63e5f53-b0e7-4662-92d9-2ab1ac04c0bd","schema":1,"store":"sleep","type":"record.put"}"#.utf8)
            #expect(PreparedChange(canonicalRecordPut: damaged, version: version) == nil)
            #expect((try? EventBody(decoding: damaged)) == nil)
        }
    }
}
