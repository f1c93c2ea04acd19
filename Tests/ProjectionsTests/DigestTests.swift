import Envelope
import EventLog
import Foundation
import PropertySeeds
@testable import Projections
import Testing

/// The digest reads most rows in place (`DigestRow`), the others into an
/// `EntityState`: the two must hash the same bytes for every row, and refuse
/// the same damaged ones.
struct DigestTests {
    /// Bytes that make well-formed and ill-formed UTF-8 alike: ASCII (NUL
    /// included), continuation bytes, the lead bytes at the edges of table 3-7.
    static let interesting: [UInt8] = [0x00, 0x22, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                                       0xE0, 0xE4, 0xED, 0xEE, 0xEF, 0xF0, 0xF3, 0xF4, 0xF5, 0xFF]

    @Test(arguments: PropertySeeds.range(0..<8))
    func wellFormedUTF8IsWhatAStringKeepsByteForByte(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        var wellFormed = 0
        for _ in 0..<5_000 {
            let bytes = (0..<Int(rng.next() % 9)).map { _ in
                rng.next() % 3 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : Self.interesting[Int(rng.next() % UInt64(Self.interesting.count))]
            }
            let kept = Array(String(decoding: bytes, as: UTF8.self).utf8) == bytes
            let judged = bytes.withUnsafeBytes { DigestRow.isUTF8($0) }
            #expect(judged == kept, "seed \(seed): \(bytes.map { String($0, radix: 16) })")
            if kept { wellFormed += 1 }
        }
        #expect(wellFormed > 500 && wellFormed < 4_500, "seed \(seed): \(wellFormed) of 5000 well formed: the cases do not mix both")
    }

    static let family = FamilyID(string: "a0a0a0a0-0000-4000-8000-00000000000d")!
    static let texts = ["", "a", "宝宝第一次吃胡萝卜 🥕", "note\u{0}with nul", "é", "\u{10FFFF}", "x\"y\\z", "\u{7F}"]

    /// A projection of random puts and deletes whose fields hold texts of
    /// every kind (ASCII, Chinese, emoji, NUL, escapes), some cleared.
    static func projection(seed: UInt64) throws -> (TempDir, Projector, Int) {
        var rng = SplitMix(seed: seed)
        let key = EpochKey(epoch: 0, key: SecretBytes([UInt8](repeating: 4, count: 32)))
        let signer = SigningKey(seed: [UInt8](repeating: UInt8(seed % 200 + 1), count: 32))
        let dir = TempDir()
        let p = try Projector(database: try Database(path: dir.path + "/p.sqlite"), family: family)
        let ids = (0..<40).map { _ in UUID() }
        var previous = EventID.none
        let count = 150
        for seq in 1...UInt64(count) {
            let id = ids[Int(rng.next() % UInt64(ids.count))]
            let r: RecordEvent
            if rng.next() % 6 == 0 {
                r = RecordEvent(kind: .delete, record: id, store: "feeding", focus: "newMom", at: nil, fields: [:])
            } else {
                var f: [String: JSONValue] = [:]
                for name in ["note", "side", "Milk", "zz", "amountMl"] where rng.next() % 2 == 0 {
                    switch rng.next() % 5 {
                    case 0: f[name] = .null
                    case 1: f[name] = .int(Int64(rng.next() % 300))
                    default: f[name] = .string(Self.texts[Int(rng.next() % UInt64(Self.texts.count))])
                    }
                }
                r = RecordEvent(kind: .put, record: id, store: "feeding", focus: "newMom", at: "2026-11-29T08:00:00Z", fields: f)
            }
            let env = try SyncEnvelope.seal(body: r.body.encoded(), family: family, signer: signer, seq: seq, previous: previous,
                                            hlc: HLC(milliseconds: 1_795_000_000_000 + seq * (rng.next() % 3), counter: UInt16(seq)), key: key)
            previous = env.id
            try p.apply(env, body: r.body)
        }
        return (dir, p, count)
    }

    /// How many rows the in-place reader takes, and how many it leaves.
    static func readInPlace(_ p: Projector) throws -> (taken: Int, left: Int) {
        var row = DigestRow()
        var taken = 0, left = 0
        try p.database.prepare("SELECT kind, id, put_version, delete_version, NULL, fields FROM p_entities ORDER BY kind, id").forEachRow {
            if row.read($0) { taken += 1 } else { left += 1 }
        }
        return (taken, left)
    }

    @Test(arguments: PropertySeeds.range(0..<6))
    func bothReadersHashTheSameState(seed: UInt64) throws {
        let (dir, p, _) = try Self.projection(seed: seed)
        _ = dir
        #expect(try p.digest() == p.digest(inPlace: false), "seed \(seed)")
        // The in-place reader took part, on rows with texts beyond ASCII too.
        let (taken, _) = try Self.readInPlace(p)
        #expect(taken > 10, "seed \(seed): the in-place reader took \(taken) rows")
    }

    /// A `fields` column written by hand: each name and text as raw bytes.
    static func fieldsColumn(_ fields: [(name: [UInt8], text: [UInt8]?)]) -> [UInt8] {
        var out: [UInt8] = [1, 1] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 7, count: 32)
        EntityState.putVarint(&out, fields.count)
        for f in fields {
            EntityState.putVarint(&out, f.name.count)
            out += f.name
            EntityState.putVarint(&out, 0)
            if let t = f.text {
                EntityState.putVarint(&out, t.count + 1)
                out += t
            } else {
                EntityState.putVarint(&out, 0)
            }
        }
        return out
    }

    /// Rows the in-place reader must leave, or read as the other does: names
    /// out of order or twice, texts and names that are not well-formed
    /// UTF-8, an upper-case id, an id with a NUL, damaged versions and
    /// columns. Each is written into one live row, the digests compared, and
    /// the row put back.
    @Test func unusualAndDamagedRowsHashOrFailAlike() throws {
        let (dir, p, _) = try Self.projection(seed: 99)
        _ = dir
        let live = try p.database.prepare("SELECT id FROM p_entities WHERE kind = 'record' AND delete_version IS NULL ORDER BY id LIMIT 1").first { $0.text(0) }
        let id = try #require(live)
        let q = Array("\"".utf8)
        let columns: [(String, [UInt8])] = [
            ("unsorted names", Self.fieldsColumn([(Array("side".utf8), q + Array("left".utf8) + q), (Array("note".utf8), q + q)])),
            ("a name twice", Self.fieldsColumn([(Array("note".utf8), q + Array("a".utf8) + q), (Array("note".utf8), q + Array("b".utf8) + q)])),
            ("a prefix first", Self.fieldsColumn([(Array("no".utf8), Array("1".utf8)), (Array("note".utf8), Array("2".utf8))])),
            ("a stray byte", Self.fieldsColumn([(Array("note".utf8), q + [0xFF] + q)])),
            ("an overlong NUL", Self.fieldsColumn([(Array("note".utf8), q + [0xC0, 0x80] + q)])),
            ("a surrogate", Self.fieldsColumn([(Array("note".utf8), q + [0xED, 0xA0, 0x80] + q)])),
            ("a sequence cut short", Self.fieldsColumn([(Array("note".utf8), q + [0xE4, 0xB8] + q)])),
            ("past U+10FFFF", Self.fieldsColumn([(Array("note".utf8), q + [0xF4, 0x90, 0x80, 0x80] + q)])),
            ("a name not UTF-8", Self.fieldsColumn([([0x6E, 0xFF], Array("1".utf8))])),
            ("an emoji", Self.fieldsColumn([(Array("note".utf8), q + Array("🥕".utf8) + q)])),
            ("a cleared field", Self.fieldsColumn([(Array("note".utf8), nil), (Array("side".utf8), Array("2".utf8))])),
            ("a NUL in a text", Self.fieldsColumn([(Array("note".utf8), q + [0x61, 0x00, 0x62] + q)])),
            ("no fields", Self.fieldsColumn([])),
            ("cut short", Array(Self.fieldsColumn([(Array("note".utf8), q + Array("abc".utf8) + q)]).dropLast(2))),
            ("a trailing byte", Self.fieldsColumn([(Array("note".utf8), Array("1".utf8))]) + [0]),
            ("another format", [2] + Self.fieldsColumn([]).dropFirst()),
            ("a version index past the versions", Array(Self.fieldsColumn([(Array("n".utf8), Array("1".utf8))]).enumerated().map { $0.offset == 44 ? 1 : $0.element })),
            ("empty", []),
        ]
        var changes: [(String, String)] = columns.map { ("fields: \($0.0)", "UPDATE p_entities SET fields = x'\(Hex.encode($0.1))' WHERE kind = 'record' AND id = '\(id)'") }
        changes += [
            ("an upper-case id", "UPDATE p_entities SET id = upper(id) WHERE kind = 'record' AND id = '\(id)'"),
            ("an id with a NUL", "UPDATE p_entities SET id = CAST(x'\(Hex.encode(Array(id.utf8.prefix(8)) + [0] + Array(id.utf8.dropFirst(9))))' AS TEXT) WHERE kind = 'record' AND id = '\(id)'"),
            ("an id not a UUID", "UPDATE p_entities SET id = 'not-a-uuid' WHERE kind = 'record' AND id = '\(id)'"),
            ("a put version cut short", "UPDATE p_entities SET put_version = substr(put_version, 1, 39) WHERE kind = 'record' AND id = '\(id)'"),
            ("a delete version cut short", "UPDATE p_entities SET delete_version = x'0102' WHERE kind = 'record' AND id = '\(id)'"),
            ("a delete as new as the put", "UPDATE p_entities SET delete_version = put_version WHERE kind = 'record' AND id = '\(id)'"),
            ("a delete just older than the put", "UPDATE p_entities SET delete_version = substr(put_version, 1, 39) || x'00' WHERE kind = 'record' AND id = '\(id)'"),
            ("no put", "UPDATE p_entities SET put_version = NULL WHERE kind = 'record' AND id = '\(id)'"),
            ("fields as text", "UPDATE p_entities SET fields = CAST(fields AS TEXT) WHERE kind = 'record' AND id = '\(id)'"),
            ("no fields column", "UPDATE p_entities SET fields = NULL WHERE kind = 'record' AND id = '\(id)'"),
        ]
        struct PutBack: Error {}
        let unchanged = try p.digest()
        for (what, sql) in changes {
            try? p.database.transaction(.immediate) {
                try p.database.execute(sql)
                let inPlace = Result { try p.digest(inPlace: true) }
                let entity = Result { try p.digest(inPlace: false) }
                switch (inPlace, entity) {
                case (.success(let a), .success(let b)):
                    #expect(a == b, "\(what): the two readers hash different bytes")
                    // Two changes leave the state as it was: the same bytes as
                    // text, and a delete older than the put.
                    let same = what == "fields as text" || what == "a delete just older than the put"
                    #expect((a == unchanged) == same, "\(what): the digest \(same ? "changed" : "did not change")")
                case (.failure(let a as DamagedRow), .failure(let b as DamagedRow)):
                    #expect(a == b, "\(what): \(a) against \(b)")
                default:
                    Issue.record("\(what): in place \(inPlace), through the entity \(entity)")
                }
                throw PutBack()
            }
        }
        #expect(try p.digest() == unchanged)
    }
}
