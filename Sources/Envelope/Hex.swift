/// Lowercase hexadecimal encoding, the only textual form of ids and keys.
public enum Hex {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        encode(Array(bytes))
    }

    /// The same for an array, written straight into the string's storage (the
    /// generic form, unspecialised across modules, showed in the rebuild profile).
    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { encode(UnsafeRawBufferPointer($0)) }
    }

    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (k, b) in bytes.enumerated() {
                out[2 * k] = nibbleDigit(b >> 4)
                out[2 * k + 1] = nibbleDigit(b & 0x0f)
            }
            return bytes.count * 2
        }
    }

    /// The lowercase digit of a value 0…15.
    @inline(__always)
    public static func nibbleDigit(_ n: UInt8) -> UInt8 { n < 10 ? 48 + n : 87 + n }

    /// Decodes lowercase or uppercase hex; `nil` for odd length or a non-hex character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let hi = nibble(utf8[i]), let lo = nibble(utf8[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// The value of one hex digit, either case; `nil` for another character.
    /// (Inlinable: a UUID parse calls it 32 times.)
    @inlinable
    public static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
