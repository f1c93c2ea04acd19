import Envelope
import Foundation

/// Reads the 36-character text form of a UUID (8-4-4-4-12 hex digits, either
/// case), as `UUID(uuidString:)` does, without its C-string round trip
/// (which showed in the rebuild profile: every record event names one).
enum UUIDText {
    static func parse(_ s: String) -> UUID? {
        var s = s
        return s.withUTF8 { u -> UUID? in
            guard u.count == 36 else { return nil }
            var bytes = [UInt8](repeating: 0, count: 16)
            var k = 0
            var i = 0
            while i < 36 {
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    guard u[i] == UInt8(ascii: "-") else { return nil }
                    i += 1
                    continue
                }
                guard let hi = Hex.nibble(u[i]), let lo = Hex.nibble(u[i + 1]) else { return nil }
                bytes[k] = hi << 4 | lo
                k += 1
                i += 2
            }
            return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                               bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        }
    }

    /// The lowercase text form, as stored in the projection.
    static func lowercase(_ id: UUID) -> String {
        withUnsafeBytes(of: id.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                var o = 0
                for (k, b) in bytes.enumerated() {
                    if k == 4 || k == 6 || k == 8 || k == 10 { out[o] = UInt8(ascii: "-"); o += 1 }
                    out[o] = Hex.nibbleDigit(b >> 4)
                    out[o + 1] = Hex.nibbleDigit(b & 0x0f)
                    o += 2
                }
                return o
            }
        }
    }
}
