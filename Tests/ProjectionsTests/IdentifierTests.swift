import Envelope
import Foundation
@testable import Projections
import Testing

/// Record ids famctl makes (UUIDv7) and the hand-written UUID text codec the
/// projection uses instead of Foundation's.
struct IdentifierTests {
    @Test func newIdsAreVersion7CarryTheirMillisecondAndSortByTime() {
        // A quarter millisecond past each millisecond, so the float never rounds below it.
        func at(_ ms: UInt64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000 + 0.000_25) }
        func millisecond(_ id: UUID) -> UInt64 { withUnsafeBytes(of: id.uuid) { Array($0) }[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        let base: UInt64 = 1_795_940_100_123
        let t0 = at(base)
        let id = RecordIdentifier.make(now: t0)
        let b = withUnsafeBytes(of: id.uuid) { Array($0) }
        #expect(b[6] >> 4 == 7, "version nibble")
        #expect(b[8] >> 6 == 0b10, "RFC 9562 variant")
        #expect(millisecond(id) == base)
        // Ids of later milliseconds sort after earlier ones (text order = byte order = time order).
        var previous = UUIDText.lowercase(id)
        for k in 1...200 {
            let later = RecordIdentifier.make(now: at(base + UInt64(k)))
            #expect(millisecond(later) == base + UInt64(k))
            let next = UUIDText.lowercase(later)
            #expect(previous < next)
            previous = next
        }
        // Random bits make ids of the same millisecond distinct.
        let same = Set((0..<10_000).map { _ in RecordIdentifier.make(now: t0) })
        #expect(same.count == 10_000)
    }

    @Test func uuidTextMatchesFoundationOnRandomIdsAndRefusesWhatItRefuses() {
        var rng = SplitMixRNG(seed: 7)
        for _ in 0..<2_000 {
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let u = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            #expect(UUIDText.lowercase(u) == u.uuidString.lowercased())
            #expect(UUIDText.parse(u.uuidString) == u)
            #expect(UUIDText.parse(u.uuidString.lowercased()) == u)
            // What famctl calls in place of Foundation's: the same.
            #expect(UUID(text: u.uuidString) == u && UUID(text: u.uuidString.lowercased()) == u)
            #expect(u.lowercasedText == u.uuidString.lowercased())
        }
        for bad in ["", "not-a-uuid", "3a7835c0a3cc4872a2fa16a519e27747", "3a7835c0-a3cc-4872-a2fa-16a519e2774",
                    "3a7835c0-a3cc-4872-a2fa-16a519e277477", "3a7835c0+a3cc-4872-a2fa-16a519e27747", "3a7835c0-a3cc-4872-a2fa-16a519e2774g",
                    "{3a7835c0-a3cc-4872-a2fa-16a519e27747}"] {
            #expect(UUIDText.parse(bad) == nil && UUID(text: bad) == nil, "\(bad)")
            #expect(UUID(uuidString: bad) == nil, "Foundation refuses \(bad) too")
        }
    }
}
