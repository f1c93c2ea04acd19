import Envelope
import Foundation

/// Reads the 36-character text form of a UUID (8-4-4-4-12 hex digits, either
/// case), as `UUID(uuidString:)` does, without its C-string round trip
/// (which showed in the rebuild profile: every record event names one).
enum UUIDText {
    static func parse(_ s: String) -> UUID? {
        var s = s
        return s.withUTF8 { parse($0) }
    }

    /// The same, from the text's UTF-8 bytes.
    static func parse(_ u: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard u.count == 36 else { return nil }
        // Written into the UUID's own 16 bytes: no array (an allocation
        // per record event in a rebuild's profile).
        var uuid: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &uuid) { out -> Bool in
            var k = 0
            var i = 0
            while i < 36 {
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    guard u[i] == UInt8(ascii: "-") else { return false }
                    i += 1
                    continue
                }
                guard let hi = Hex.nibble(u[i]), let lo = Hex.nibble(u[i + 1]) else { return false }
                out[k] = hi << 4 | lo
                k += 1
                i += 2
            }
            return true
        }
        return valid ? UUID(uuid: uuid) : nil
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

extension UUID {
    /// A UUID from its 36-character text form, either case, as
    /// `UUID(uuidString:)` reads it, without Foundation's `sscanf` (about
    /// 8 000 instructions a call in callgrind of an `import stores`, three
    /// calls a row: a tenth of that command's main thread).
    public init?(text: String) {
        guard let uuid = UUIDText.parse(text) else { return nil }
        self = uuid
    }

    /// The lowercase text form, as `uuidString.lowercased()` writes it,
    /// without Foundation's `snprintf` (about 6 000 instructions a call).
    public var lowercasedText: String { UUIDText.lowercase(self) }
}
