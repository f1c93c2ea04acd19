/// A number as people write it in decimal: an optional sign, digits with
/// at most one decimal point (`12`, `0.5`, `.5`, `5.`), and an optional
/// exponent (`1e3`). `Double(_:)` alone also takes hexadecimal (`0x10` is
/// 16, `0x1p4` too), `inf`, `nan` and `infinity`: a typo or a paste would
/// become a quiet, wrong value.
public enum DecimalText {
    /// The finite value `text` spells in decimal, or `nil`; also `nil` for
    /// a number too small for a double (`1e-400` would become 0).
    public static func parse(_ text: String) -> Double? {
        guard isDecimal(text), let d = Double(text), d.isFinite else { return nil }
        if d == 0, text.utf8.prefix(while: { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }).contains(where: { (0x31...0x39).contains($0) }) { return nil }
        return d
    }

    /// Whether `text` is a decimal number in the form above.
    public static func isDecimal(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        func digits() -> Int {
            let n = bytes.prefix { (0x30...0x39).contains($0) }.count
            bytes = bytes.dropFirst(n)
            return n
        }
        var mantissa = digits()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
