import Envelope
import Testing

/// The identifiers compare their bytes a word at a time: equal exactly
/// when the bytes are, whichever byte differs.
struct IdentifierEqualityTests {
    @Test func equalExactlyWhenTheBytesAre() {
        var rng = SplitMixRNG(seed: 3)
        for _ in 0..<200 {
            let a = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(DeviceID(bytes: a) == DeviceID(bytes: Array(a)))
            #expect(EventID(bytes: a) == EventID(bytes: a.map { $0 }))
            #expect(FamilyID(bytes: Array(a[..<16])) == FamilyID(bytes: a[..<16].map { $0 }))
            for i in 0..<32 {
                var b = a
                b[i] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
                #expect(DeviceID(bytes: a) != DeviceID(bytes: b), "byte \(i)")
                #expect(EventID(bytes: a) != EventID(bytes: b), "byte \(i)")
                if i < 16 { #expect(FamilyID(bytes: Array(a[..<16])) != FamilyID(bytes: Array(b[..<16])), "byte \(i)") }
                // Equal ids hash alike, so sets and dictionaries find them.
                #expect(Set([DeviceID(bytes: a), DeviceID(bytes: b), DeviceID(bytes: Array(a))]).count == 2)
            }
        }
    }
}
