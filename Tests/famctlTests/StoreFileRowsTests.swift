import Envelope
@testable import famctl
import Foundation
import PropertySeeds
import Testing

/// The scan that splits a store file into its rows finds each row whole —
/// strings with brackets, commas and escaped quotes, nesting, spacing — and
/// refuses what is not one array, leaving the account to the whole-file reader.
struct StoreFileRowsTests {
    /// Random arrays of random values, written compact and spaced out: every
    /// row the scan finds parses to the value written, and there are as many.
    @Test(arguments: PropertySeeds.range(0..<20))
    func randomArraysSplitIntoTheirRows(seed: UInt64) throws {
        var rng = SplitMixRNG(seed: seed)
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &rng) {
            case 0: return .int(Int64.random(in: -1_000_000...1_000_000, using: &rng))
            case 1: return .bool(Bool.random(using: &rng))
            case 2: return .null
            case 3:
                let pieces = ["a", "[", "]", "{", "}", ",", "\"", "\\", " ", "é", "\n", "\\\""]
                return .string((0..<Int.random(in: 0...8, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined())
            case 4: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in value(depth + 1) })
            default:
                var o: [String: JSONValue] = [:]
                for k in 0..<Int.random(in: 0...3, using: &rng) { o["k\(k),]"] = value(depth + 1) }
                return .object(o)
            }
        }
        let rows = (0..<Int.random(in: 0...12, using: &rng)).map { _ in value(0) }
        let compact = JSONValue.array(rows).jsonBytes
        let spaced = Array("\n [ \n".utf8) + rows.map { Array($0.jsonBytes) }.joined(separator: Array(" ,\n\t".utf8)) + Array(" ]\r\n ".utf8)
        for bytes in [compact, spaced] {
            let spans = try #require(StoreFileRows.split(bytes), "\(String(decoding: bytes, as: UTF8.self))")
            #expect(spans.count == rows.count)
            for (span, row) in zip(spans, rows) { #expect(JSONValue.parse(Array(bytes[span])) == row) }
        }
    }

    @Test func whatIsNotOneArrayIsRefusedAsTheWholeFileReaderSaysIt() throws {
        let tooDeep: String = "[" + String(repeating: "[", count: 256) + String(repeating: "]", count: 256) + "]"
        #expect(JSONValue.parse(tooDeep) == nil, "deeper than the parser reads")
        // A value one level too deep inside the deepest array a row may hold.
        let deeper: String = "[" + String(repeating: "[", count: 255) + "1" + String(repeating: "]", count: 255) + "]"
        let refused: [String] = ["", "{}", "[", "[1,", "[1 2]", "[1,]", "[1] x", "[\"a]", "\u{FEFF}[1]", "[1]]", "[,1]", tooDeep, deeper]
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("famctl-rows-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for text in refused + ["[1.00000000000000000001]", "[{\"a\":1,\"a\":2}]"] {
            let path = dir + "/feeding.json"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            var streamed: [String] = [], whole: [String] = []
            #expect(try StoreFileRows.read(path, failures: &streamed, each: { _, _ in }) == nil, "\(text.prefix(20))")
            #expect(try ImportStoresCommand.readArray(path, failures: &whole) == nil)
            #expect(!streamed.isEmpty && streamed == whole, "\(text.prefix(20)): \(streamed) against \(whole)")
        }
        #expect(StoreFileRows.split(Array(" [ ] ".utf8)) == [])
        #expect(StoreFileRows.split(Array("[1 2]".utf8)) == [1..<4], "a row's own validity is the parser's")
        // As deep as a row may be with a value inside: split; one deeper is left to the whole-file reader.
        let deepest: String = "[" + String(repeating: "[", count: 254) + "1" + String(repeating: "]", count: 254) + "]"
        #expect(StoreFileRows.split(Array(deepest.utf8))?.count == 1)
        #expect(JSONValue.parse(deepest) != nil, "as deep as the parser reads")
        #expect(StoreFileRows.split(Array(deeper.utf8)) == nil)
        #expect(JSONValue.parse(deeper) == nil)
    }
}
