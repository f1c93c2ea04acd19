import Foundation

/// A JSON value, kept exactly enough to round-trip fields a reader does not know.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Equal when they are the same JSON, texts compared by their UTF-8
    /// bytes: Swift's `==` on strings takes canonically equivalent texts
    /// as one (`é` and `e` followed by a combining accent), and an edit
    /// between the two was taken as no change and dropped (a review). The
    /// bytes are what is signed and stored. (Keys are compared the same way.
    /// `hash(into:)` stays the synthesized one: texts of equal bytes hash
    /// alike.)
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.int(x), .int(y)): x == y
        case let (.double(x), .double(y)): x == y
        case let (.string(x), .string(y)): x.utf8.elementsEqual(y.utf8)
        case let (.array(x), .array(y)): x.count == y.count && zip(x, y).allSatisfy { $0 == $1 }
        case let (.object(x), .object(y)):
            x.count == y.count && x.allSatisfy { key, value in
                guard let i = y.index(forKey: key) else { return false }
                return y[i].key.utf8.elementsEqual(key.utf8) && y[i].value == value
            }
        default: false
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int64.self) { self = .int(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// Compact JSON with sorted keys: the same value always gives the same
    /// text. Written by hand (JSONEncoder showed up in every profile).
    public var jsonText: String {
        String(decoding: jsonBytes, as: UTF8.self)
    }

    /// ``jsonText`` as UTF-8 bytes, written without going through `String`.
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        if case .object = self { out.reserveCapacity(256) } else { out.reserveCapacity(24) }
        write(into: &out)
        return out
    }

    /// `{"key":value,…}` with keys sorted as ``jsonText`` sorts them, each
    /// value written by `value`.
    static func writeObject<V>(_ o: [String: V], into out: inout [UInt8], value: (V, inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: "{"))
        for (i, m) in o.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            quote(m.key, into: &out)
            out.append(UInt8(ascii: ":"))
            value(m.value, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Appends this value's canonical JSON (``jsonBytes``) to `out`.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .int(let i): Self.writeInt(i, into: &out)
        case .double(let d):
            if d.isFinite {
                out += (d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) + ".0" : "\(d)").utf8
            } else {
                out += "null".utf8
            }
        case .string(let s): Self.quote(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() { if i > 0 { out.append(UInt8(ascii: ",")) }; v.write(into: &out) }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            Self.writeObject(o, into: &out) { $0.write(into: &$1) }
        }
    }

    static func writeInt(_ i: Int64, into out: inout [UInt8]) {
        if i < 0 {
            out.append(UInt8(ascii: "-"))
            if i == .min { out += "9223372036854775808".utf8; return }
        }
        var n = i.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[count] = UInt8(ascii: "0") + UInt8(n % 10)
                n /= 10
                count += 1
            } while n > 0
            for k in stride(from: count - 1, through: 0, by: -1) { out.append(d[k]) }
        }
    }

    /// A JSON string literal. Only ASCII bytes are ever escaped, so the UTF-8
    /// bytes of `s` are copied as they are otherwise: in runs between the
    /// bytes that need an escape (byte by byte, the copy was a quarter of an
    /// append's preparation in callgrind).
    public static func quote(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Most strings need no escape: checked eight bytes at a time, then
            // copied in one run.
            if !needsEscape(bytes) {
                out.append(contentsOf: bytes)
                return
            }
            var run = 0
            for (i, b) in bytes.enumerated() where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i]))
                run = i + 1
                switch b {
                case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                default: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Hex.nibbleDigit(b >> 4), Hex.nibbleDigit(b & 15)]
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any byte is a quote, a backslash or a control character
    /// (below 0x20): the bytes ``quote(_:into:)`` escapes. Eight at a time
    /// (``escapeBits(_:)``).
    static func needsEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= bytes.count {
                if escapeBits(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) != 0 { return true }
                i += 8
            }
        }
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { return true }
            i += 1
        }
        return false
    }

    /// Of the eight bytes in `x`, the top bits of those a JSON string must
    /// escape (a quote, a backslash, a control character below 0x20); zero
    /// exactly when there is none. A byte below `n` sets its top bit in
    /// `(x - n·ones) & ~x`, for `n` ≤ 0x80, and no other byte does unless
    /// one below it did.
    @inlinable public static func escapeBits(_ x: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func below(_ v: UInt64, _ n: UInt64) -> UInt64 { (v &- ones &* n) & ~v & high }
        return below(x ^ (ones &* 0x22), 1) | below(x ^ (ones &* 0x5C), 1) | below(x, 0x20)
    }

    public var description: String {
        if case .string(let s) = self { return s }
        return jsonText
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
}
