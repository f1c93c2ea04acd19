import Envelope
import Foundation
import Testing

/// ``JSONValue/firstInexactNumber(in:)`` finds exactly the numbers the parser
/// would not keep as written, wherever they are, and nothing in strings.
struct InexactNumberTests {
    /// Random documents of kept numbers (every 64-bit integer, decimals of
    /// up to 17 significant digits), some with one number that is not kept
    /// put at a random place: found exactly when there, and it is that one.
    @Test func randomDocumentsAgainstTheParser() throws {
        var rng = SplitMixRNG(seed: 20261202)
        for round in 0..<2_000 {
            var values: [String] = (0..<Int.random(in: 1...8, using: &rng)).map { _ in
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: String(Int64.random(in: .min ... .max, using: &rng))
                case 1: String(Int64.random(in: -1000...1000, using: &rng))
                case 2: String(format: "%.\(Int.random(in: 1...6, using: &rng))f", Double.random(in: -1e6...1e6, using: &rng))
                case 3: "\"\(UInt64.random(in: .min ... .max, using: &rng))\(UInt64.random(in: .min ... .max, using: &rng)) \\\" 1e999\""
                default: "12345678901234567.0e3"
                }
            }
            var planted: String?
            if round % 2 == 0 {
                let big = Bool.random(using: &rng)
                    ? (Bool.random(using: &rng) ? "-" : "") + String(UInt64.random(in: UInt64(Int64.max) + 2 ... .max, using: &rng))
                    : "0." + String(UInt64.random(in: 100_000_000_000_000_000 ... .max, using: &rng)) + "1"
                planted = big
                values.insert(big, at: Int.random(in: 0...values.count, using: &rng))
            }
            let doc = Bool.random(using: &rng)
                ? "[" + values.joined(separator: ",") + "]"
                : "{" + values.enumerated().map { "\"k\($0.offset)\":{\"v\":\($0.element)}" }.joined(separator: ",") + "}"
            #expect(JSONValue.parse(doc) != nil, "\(doc)")
            #expect(JSONValue.firstInexactNumber(in: Array(doc.utf8)) == planted, "\(doc)")
        }
    }

    @Test func theEdgesOfA64BitInteger() {
        for kept in ["9223372036854775807", "-9223372036854775808", "0", "-0", "100000000000000000.0", "1.2345678901234567e300"] {
            #expect(JSONValue.firstInexactNumber(in: Array("[\(kept)]".utf8)) == nil, "\(kept)")
        }
        for lost in ["9223372036854775808", "-9223372036854775809", "123456789012345678901234567890", "3.14159265358979323846"] {
            #expect(JSONValue.firstInexactNumber(in: Array("{\"a\":\"9999999999999999999999\",\"b\":\(lost)}".utf8)) == lost, "\(lost)")
        }
    }

    /// A double's range: a nonzero number that would become 0 or a
    /// subnormal double (fewer significant bits), or one too large, is not
    /// kept; its smallest normal and largest finite values, and zeros, are.
    @Test func theEdgesOfADoublesRange() {
        for kept in ["2.2250738585072014e-308", "1e-307", "-1.7976931348623157e308", "1.7976931348623157e308", "0e-999", "-0.000e400", "0.0"] {
            #expect(JSONValue.firstInexactNumber(in: Array("[\(kept)]".utf8)) == nil, "\(kept)")
        }
        for lost in ["1e-400", "-2.5e-330", "1e-310", "4.9e-324", "1e400", "-1.8e308"] {
            #expect(JSONValue.firstInexactNumber(in: Array("[1,\(lost)]".utf8)) == lost, "\(lost)")
        }
    }
    /// Decimals of 15 to 17 significant digits, at random scales: one is
    /// kept exactly when the JSON famctl writes of the double it becomes
    /// has the same value (Foundation's `Decimal`, exact at these lengths,
    /// is the judge): never rounded in silence, never refused though kept
    /// (a review: 99.999999999999999 became 100.0).
    @Test func sixteenAndSeventeenDigitsAreKeptExactlyWhenTheyComeBack() throws {
        var rng = SplitMixRNG(seed: 20261206)
        var kept = 0, refused = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 15...17, using: &rng)
            var digits = String(Int.random(in: 1...9, using: &rng))
            for _ in 1..<count { digits += String(Int.random(in: 0...9, using: &rng)) }
            let point = Int.random(in: 1..<count, using: &rng)
            let mantissa = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
            let token = (Bool.random(using: &rng) ? "-" : "") + mantissa + (Bool.random(using: &rng) ? "e\(Int.random(in: -30...30, using: &rng))" : "")
            let written = try #require(Decimal(string: token))
            switch JSONValue.parseKeepingNumbers(Array("[\(token)]".utf8)) {
            case .success(.array(let values)):
                kept += 1
                let back = try #require(Decimal(string: String(decoding: values[0].jsonBytes, as: UTF8.self)))
                #expect(back == written, "\(token) was kept but reads back as \(values[0].jsonText)")
            case .failure(.inexactNumber(let n)):
                refused += 1
                let double = try #require(Double(token))
                let back = try #require(Decimal(string: "\(double)"))
                #expect(n == token && back != written, "\(token) was refused but a double keeps it")
            default:
                Issue.record("\(token) did not parse")
            }
        }
        #expect(kept > 1_000 && refused > 1_000, "kept \(kept), refused \(refused): the draw misses a side")
    }

    /// How famctl writes a double (what a store file's `revision` hashes,
    /// written out in format.md): pinned, so that a toolchain that formats
    /// doubles otherwise is noticed.
    @Test func theWayDoublesAreWrittenIsPinned() {
        let cases: [(Double, String)] = [(38, "38.0"), (0.0001, "0.0001"), (0.00009, "9e-05"), (1e-7, "1e-07"), (123456789012345.6, "123456789012345.6"),
                                         (9007199254740992, "9007199254740992.0"), (9.99e15, "9.99e+15"), (1e16, "1e+16"), (5e-324, "5e-324"),
                                         (-0.0, "0.0"), (1.7976931348623157e308, "1.7976931348623157e+308"), (0.1, "0.1"), (1e15, "1000000000000000.0")]
        for (d, text) in cases {
            #expect(String(decoding: JSONValue.double(d).jsonBytes, as: UTF8.self) == text, "\(d)")
        }
    }
    /// JSON values are equal when their bytes are: canonically equivalent
    /// texts of other bytes are not (Swift's strings would say they are),
    /// in values and in keys; the same bytes are, and hash alike.
    @Test func textsAreEqualByTheirBytes() {
        let nfc = "caf\u{e9}", nfd = "cafe\u{301}"
        #expect(JSONValue.string(nfc) != .string(nfd))
        #expect(JSONValue.object(["a": .string(nfc)]) != .object(["a": .string(nfd)]))
        #expect(JSONValue.object([nfc: .int(1)]) != .object([nfd: .int(1)]))
        #expect(JSONValue.array([.string(nfc), .null]) != .array([.string(nfd), .null]))
        let a = JSONValue.object(["k": .array([.string(nfd), .double(1.5), .bool(true)])])
        let b = JSONValue.object(["k": .array([.string(String(decoding: Array(nfd.utf8), as: UTF8.self)), .double(1.5), .bool(true)])])
        #expect(a == b && a.hashValue == b.hashValue)
        #expect(JSONValue.int(1) != .double(1))
    }
}
