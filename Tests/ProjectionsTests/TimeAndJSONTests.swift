import Envelope
import Foundation
import Projections
import Testing

struct TimeAndJSONTests {
    @Test func timesParseToTheRightMomentWhateverTheOffset() {
        let utc = TimeValue.parse("2026-11-29T08:15:00Z")
        #expect(utc?.timeIntervalSince1970 == 1_795_940_100)
        #expect(TimeValue.parse("2026-11-29T09:15:00+01:00") == utc)
        #expect(TimeValue.parse("2026-11-29T03:15:00-05:00") == utc)
        #expect(TimeValue.parse("2026-11-29T08:15:00.250Z")?.timeIntervalSince1970 == 1_795_940_100.25)
        #expect(TimeValue.parse("2024-02-29T00:00:00Z") != nil)
        // Cross-checked against Foundation's formatter on random moments.
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        for _ in 0..<500 {
            let d = Date(timeIntervalSince1970: Double(Int.random(in: 0...4_000_000_000)))
            f.timeZone = TimeZone(secondsFromGMT: 60 * 15 * Int.random(in: -48...56))
            #expect(TimeValue.parse(f.string(from: d)) == d)
        }
        for bad in ["2026-11-29T08:15:00", "2026-11-29", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z", "2026-11-29T24:00:00Z",
                    "2026-11-29T08:15:00+0100", "2026-11-29 08:15:00Z", "2026-11-29T08:15:00Zjunk", "", "2026-11-29T08:15:00.Z",
                    "2026-11-29T08:15:61Z", "2026-11-29T08:15:00+01:60", "2026-11-29T08:15:00-05:99", "2026-11-29T08:15:00+24:00"] {
            #expect(TimeValue.parse(bad) == nil, "accepted \(bad)")
        }
    }

    @Test func canonicalJSONRoundTripsThroughFoundation() throws {
        let v = JSONValue.object(["b": .string("quote \" backslash \\ newline \n tab \t nul \u{0} é 宝宝 🥕"), "a": .array([.int(-3), .double(2.5), .double(2), .bool(false), .null]),
                                  "c": .object(["z": .int(Int64.max)])])
        let text = v.jsonText
        #expect(text.hasPrefix("{\"a\":[-3,2.5,2.0,false,null],\"b\":"))
        let back = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(back.objectValue?["b"] == v.objectValue?["b"])
        #expect(back.objectValue?["c"] == v.objectValue?["c"])
        // Escapes at either end and side by side; plain runs copied between them.
        #expect(JSONValue.string("\"a\\\n\u{1}").jsonText == #""\"a\\\n\u0001""#)
        #expect(JSONValue.string("").jsonText == #""""#)
    }
}
