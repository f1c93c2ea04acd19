import Envelope
import Foundation
import PropertySeeds
import Testing

/// Random records of every store, each with fields the store does not
/// define (strings of every kind of character, numbers at the edges of what
/// is kept as written, arrays and objects), a note, some updated and some
/// deleted: `record list --json` gives back every value as it was given,
/// and `export stores` then `import stores` on a new device gives the same
/// records; importing again changes nothing.
struct StoreRoundTripPropertyTests {
    /// Strings that a JSON reader or writer may get wrong: escapes, control
    /// characters, combining marks, text direction, characters beyond the
    /// Basic Multilingual Plane, a lone surrogate's neighbours.
    static let strings = [
        "", " ", "plain", "quote \" and backslash \\", "slash / and \\/", "line\nbreak\r\ttab", "nul \u{0} and \u{1f}",
        "é and e\u{301}", "\u{202e}right to left\u{202c}", "😀👨‍👩‍👧", "\u{FEFF}bom", "\u{7f}\u{80}\u{9f}", "日本語のテキスト",
        "\u{10FFFF}", "\u{FFFD}", "{\"not\":\"json\"}", "2026-11-29T08:00:00Z", "1e5", "true", "null",
    ]

    /// Numbers kept exactly as written (the ones famctl refuses, beyond a
    /// 64-bit integer or with more than 17 significant digits, are not
    /// given), each with the value JSONSerialization reads back.
    static let numbers = [
        "0", "1", "-1", "2.5", "61.50", "0.1", "0.30000000000000004", "1e-7", "1.5E300", "-2.25e-10", "9223372036854775807",
        "-9223372036854775808", "123456789.1234567", "4503599627370497", "1e22", "100",
    ]

    static func value(_ rng: inout SplitMixRNG, depth: Int = 0) -> String {
        switch rng.next() % (depth < 2 ? 6 : 4) {
        case 0: return quoted(strings[Int(rng.next() % UInt64(strings.count))])
        case 1: return numbers[Int(rng.next() % UInt64(numbers.count))]
        case 2: return rng.next() % 2 == 0 ? "true" : "false"
        case 3: return quoted(randomText(&rng, length: Int(rng.next() % 40)))
        case 4: return "[" + (0..<Int(rng.next() % 4)).map { _ in value(&rng, depth: depth + 1) }.joined(separator: ",") + "]"
        default:
            return "{" + (0..<Int(rng.next() % 4)).map { i in quoted("k\(i)" + strings[Int(rng.next() % UInt64(strings.count))]) + ":" + value(&rng, depth: depth + 1) }
                .joined(separator: ",") + "}"
        }
    }

    /// Any Unicode scalars, from every plane in use.
    static func randomText(_ rng: inout SplitMixRNG, length: Int) -> String {
        var s = ""
        while s.unicodeScalars.count < length {
            let ranges: [ClosedRange<UInt32>] = [0x20...0x7E, 0x0...0x1F, 0xA0...0x2FF, 0x300...0x36F, 0x590...0x6FF, 0x3040...0x30FF, 0xE000...0xF8FF, 0x1F300...0x1FAFF, 0x20000...0x2A6DF]
            let r = ranges[Int(rng.next() % UInt64(ranges.count))]
            if let u = Unicode.Scalar(r.lowerBound + UInt32(rng.next() % UInt64(r.count))) { s.unicodeScalars.append(u) }
        }
        return s
    }

    /// `s` as a JSON string, written here by hand: `\u` escapes for control
    /// characters, the rest as is.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    /// A JSON value as text that compares equal for equal values.
    static func canonical(_ o: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
    }

    static func parse(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// Records by id, with the keys that say who wrote them and when left out.
    static func listed(_ f: FamctlRunner) throws -> [String: [String: Any]] {
        let rows = try #require(try parse(try f.ok("record", "list", "--json")) as? [[String: Any]])
        var out: [String: [String: Any]] = [:]
        for var r in rows {
            for k in ["author", "updated", "updatedBy", "created", "createdBy"] { r[k] = nil }
            out[r["id"] as! String] = r
        }
        return out
    }

    @Test(arguments: PropertySeeds.range(0..<2))
    func randomRecordsComeBackAsGivenAndThroughExportAndImport(seed: UInt64) throws {
        var rng = SplitMixRNG(seed: seed &+ 4_242)
        let x = try StoreRulesTests.Fixture()
        // The extra fields each record was given last, by id.
        var expected: [String: [String: String]] = [:]
        var deleted: Set<String> = []
        for i in 0..<14 {
            let v = StoreRulesTests.valid[Int(rng.next() % UInt64(StoreRulesTests.valid.count))]
            // Sleeps may not overlap: each its own night, some days apart.
            let args = v.store == "sleep"
                ? ["start=2026-10-\(10 + i)T20:00:00+01:00", "end=2026-10-\(11 + i)T06:30:00+01:00"]
                : v.args
            var extra: [String: String] = [:]
            for _ in 0..<Int(1 + rng.next() % 4) {
                // A field name is letters, digits and `_` (any key inside a value).
                let key = ["x", "extra", "ключ", "größe", "note2", "x_1", "日本"][Int(rng.next() % 7)]
                extra[key] = Self.value(&rng)
            }
            if !args.contains(where: { $0.hasPrefix("note=") }), rng.next() % 2 == 0 { extra["note"] = Self.quoted(Self.randomText(&rng, length: Int(rng.next() % 300))) }
            let json = "{" + extra.map { Self.quoted($0.key) + ":" + $0.value }.joined(separator: ",") + "}"
            let added = try x.f.run(["record", "add", "--focus", x.focus(v.focus), "--store", v.store] + args + ["--json-fields", json])
            #expect(added.code == 0, "seed \(seed): \(json): \(added.stderr)")
            guard added.code == 0 else { continue }
            let id = added.stdout.trimmingCharacters(in: CharacterSet.newlines)
            expected[id] = extra
            switch rng.next() % 5 {
            case 0:
                // A later change of one extra field.
                // (A note is text; an update that changes nothing is refused.)
                let key = extra.keys.sorted()[Int(rng.next() % UInt64(extra.count))]
                let changed = key == "note" ? Self.quoted(Self.randomText(&rng, length: 1 + Int(rng.next() % 50))) : Self.value(&rng)
                guard try Self.canonical(try Self.parse(changed)) != Self.canonical(try Self.parse(extra[key]!)) else { break }
                try x.f.ok("record", "update", id, "--json-fields", "{" + Self.quoted(key) + ":" + changed + "}")
                expected[id]![key] = changed
            case 1:
                try x.f.ok("record", "delete", id)
                deleted.insert(id)
            default: break
            }
        }

        // Every value as it was given.
        let mine = try Self.listed(x.f)
        #expect(Set(mine.keys) == Set(expected.keys).subtracting(deleted), "seed \(seed)")
        for (id, extra) in expected where !deleted.contains(id) {
            let fields = try #require(mine[id]?["fields"] as? [String: Any])
            for (key, text) in extra {
                #expect(try fields[key].map(Self.canonical) == Self.canonical(try Self.parse(text)), "seed \(seed): \(id) \(key) given \(text)")
            }
        }

        // Through the store files, to a new device: the same records.
        let dir = x.f.root + "/export"
        try x.f.ok("export", "stores", dir)
        let other = FamctlRunner()
        try other.ok("init", "--name", "New phone")
        try other.ok("import", "stores", dir)
        let theirs = try Self.listed(other)
        #expect(Set(theirs.keys) == Set(mine.keys), "seed \(seed)")
        for (id, r) in mine {
            #expect(try theirs[id].map(Self.canonical) == Self.canonical(r), "seed \(seed): \(id) after export and import")
        }
        // And the new device's own export is the same files, but for who wrote them.
        let again = other.root + "/export"
        try other.ok("export", "stores", again)
        for store in StoreRulesTests.valid.map(\.store) {
            func rows(_ d: String) throws -> String {
                let rows = try #require(try Self.parse(String(decoding: try Data(contentsOf: URL(fileURLWithPath: d + "/\(store).json")), as: UTF8.self)) as? [[String: Any]])
                return try Self.canonical(rows.map { r in r.filter { !["author", "revision", "updated"].contains($0.key) } })
            }
            #expect(try rows(dir) == rows(again), "seed \(seed): \(store).json")
        }
        let digest = try other.ok("digest")
        try other.ok("import", "stores", dir)
        #expect(try other.ok("digest") == digest, "seed \(seed): a second import changed the records")
    }
}
