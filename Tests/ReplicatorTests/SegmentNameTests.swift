import Envelope
import Replicator
import Testing

struct SegmentNameTests {
    static var author: DeviceID { SigningKey(seed: [UInt8](repeating: 4, count: 32)).publicKey }

    @Test func roundTripsAndIsPortable() throws {
        let bytes: [UInt8] = Array("segment contents".utf8)
        let name = SegmentName(author: Self.author, firstSeq: 1, lastSeq: 300, bytes: bytes)
        let text = name.description
        #expect(text.count == 64 + 16 + 16 + 32 + 3 + 4)
        #expect(text.allSatisfy { "0123456789abcdef-.seg".contains($0) })
        let parsed = try #require(SegmentName(parsing: text))
        #expect(parsed == name)
        #expect(parsed.matches(bytes))
        #expect(!parsed.matches(bytes + [0]))
    }

    @Test func syncEngineArtefactsAndNearMissesAreNotSegments() {
        let good = SegmentName(author: Self.author, firstSeq: 5, lastSeq: 9, bytes: [1, 2, 3]).description
        let stem = String(good.dropLast(4))
        let rejects = [
            ".syncthing.\(good).tmp",
            "\(stem).sync-conflict-20261129-174012-ABCDEFG.seg",
            "\(stem) (Mum's conflicted copy 2026-11-29).seg",
            ".\(good).icloud",
            good.uppercased(),
            stem.uppercased() + ".seg",   // hex in capitals, the suffix right
            good + ".tmp",
            stem + ".SEG",
            String(good.dropFirst()),
            good.replacingOccurrences(of: "-0000000000000005-", with: "-0000000000000000-"),  // seq 0
            good.replacingOccurrences(of: "-0000000000000005-0000000000000009-", with: "-0000000000000009-0000000000000005-"),  // last < first
            "",
            ".seg",
        ]
        for name in rejects { #expect(SegmentName(parsing: name) == nil, "accepted \(name)") }
        #expect(SegmentName(parsing: good) != nil)
    }
}
