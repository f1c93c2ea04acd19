/// A strict JSON reader for event bodies and stored field values, written by
/// hand: Foundation's JSONDecoder was the top of the append and rebuild
/// profiles. Numbers without a fraction or exponent that fit in 64 bits are
/// integers; others are doubles. Duplicate object keys are refused.
///
/// It reads through a pointer to the bytes, valid for one ``parse(_:)``
/// call: every access is checked against `b.count` by the reader itself, so
/// the array's own check and reference counting stay out of the loop (a
/// rebuild's worker spent a fifth of its instructions here).
struct JSONParser {
    let b: UnsafeBufferPointer<UInt8>
    var i = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { b = bytes }

    enum Failure: Error {
        /// Not valid JSON (or a key given twice) at this byte.
        case invalid(Int)
        /// Nested deeper than ``maximumDepth`` at this byte.
        case tooDeep(Int)
        /// An object's key given twice, the second at this byte.
        case duplicateKey(Int, String)
    }

    /// How deep arrays and objects may nest: a body or a stored field is
    /// never near it, and a reader of untrusted bytes must not recurse
    /// without bound.
    static let maximumDepth = 256

    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var p = JSONParser(buffer)
            guard let v = try? p.value(depth: 0) else { return nil }
            p.skip()
            return p.i == p.b.count ? v : nil
        }
    }

    mutating func skip() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard depth < Self.maximumDepth else { throw .tooDeep(i) }
        skip()
        guard i < b.count else { throw .invalid(i) }
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1
            // Bodies hold about eight keys: room for them up front saves
            // the rehashing of growing from empty.
            var o = [String: JSONValue](minimumCapacity: depth == 0 ? 12 : 4)
            skip()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
            while true {
                skip()
                let keyAt = i
                let k = try key()
                let v = try value(depth: depth + 1)
                guard o.updateValue(v, forKey: k) == nil else { throw .duplicateKey(keyAt, k) }
                skip()
                guard i < b.count else { throw .invalid(i) }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
                throw .invalid(i)
            }
        case UInt8(ascii: "["):
            i += 1
            var a: [JSONValue] = []
            skip()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
            while true {
                a.append(try value(depth: depth + 1))
                skip()
                guard i < b.count else { throw .invalid(i) }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
                throw .invalid(i)
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return try number()
        }
    }

    /// An object member's key and the colon after it.
    mutating func key() throws(Failure) -> String {
        skip()
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw .invalid(i) }
        let k = try string()
        skip()
        guard i < b.count, b[i] == UInt8(ascii: ":") else { throw .invalid(i) }
        i += 1
        return k
    }

    mutating func literal(_ s: StaticString) throws(Failure) {
        let n = s.utf8CodeUnitCount
        guard i + n <= b.count else { throw .invalid(i) }
        let p = s.utf8Start
        for k in 0..<n where b[i + k] != p[k] { throw .invalid(i) }
        i += n
    }

    mutating func number() throws(Failure) -> JSONValue {
        let start = i
        if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
        var digits = 0, isInt = true
        while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1; digits += 1 }
        guard digits > 0 else { throw .invalid(i) }
        if digits > 1, b[start + (b[start] == UInt8(ascii: "-") ? 1 : 0)] == 48 { throw .invalid(i) }   // leading zero
        if i < b.count, b[i] == UInt8(ascii: ".") {
            isInt = false
            i += 1
            var f = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1; f += 1 }
            guard f > 0 else { throw .invalid(i) }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            isInt = false
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            var e = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1; e += 1 }
            guard e > 0 else { throw .invalid(i) }
        }
        if isInt, digits <= 18 {
            var v: Int64 = 0
            for k in (b[start] == UInt8(ascii: "-") ? start + 1 : start)..<i { v = v * 10 + Int64(b[k] - 48) }
            return .int(b[start] == UInt8(ascii: "-") ? -v : v)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
        if isInt, let v = Int64(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else { throw .invalid(start) }
        return .double(d)
    }

    mutating func hex4() throws(Failure) -> UInt32 {
        guard i + 4 <= b.count else { throw .invalid(i) }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[i]
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 97...102: d = UInt32(c - 87)
            case 65...70: d = UInt32(c - 55)
            default: throw .invalid(i)
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    mutating func string() throws(Failure) -> String {
        i += 1   // the opening quote
        // Most strings have no escape: validate and copy the bytes in one go.
        let start = i
        var ascii = true
        while i < b.count, b[i] != UInt8(ascii: "\""), b[i] != UInt8(ascii: "\\"), b[i] >= 0x20 { ascii = ascii && b[i] < 0x80; i += 1 }
        if i < b.count, b[i] == UInt8(ascii: "\"") {
            let end = i
            i += 1
            // ASCII is valid UTF-8 as it stands; anything else is validated.
            let run = UnsafeBufferPointer(rebasing: b[start..<end])
            if ascii { return String(decoding: run, as: UTF8.self) }
            guard let s = String(validating: run, as: UTF8.self) else { throw .invalid(end) }
            return s
        }
        var out = Array(b[start..<i])
        while true {
            guard i < b.count else { throw .invalid(i) }
            let c = b[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c < 0x20 { throw .invalid(i) }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < b.count else { throw .invalid(i) }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else { throw .invalid(i) }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw .invalid(i) }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let u = Unicode.Scalar(scalar) else { throw .invalid(i) }
                out += Array(String(Character(u)).utf8)
            default: throw .invalid(i)
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw .invalid(i) }
        return s
    }
}

extension JSONValue {
    /// Whether byte `at` lies inside a JSON string (an odd number of
    /// unescaped quotes before it): a raw tab there is the string's fault.
    static func insideString(_ bytes: [UInt8], at: Int) -> Bool {
        var inside = false, k = 0
        while k < at {
            if bytes[k] == UInt8(ascii: "\"") { inside.toggle() } else if inside, bytes[k] == UInt8(ascii: "\\") { k += 1 }
            k += 1
        }
        return inside
    }

    /// Why ``parse(_:)`` refuses `bytes`, for a person: where (line and
    /// column) and, when it can tell, what; `nil` when it does not refuse them.
    public static func parseFailure(_ bytes: [UInt8]) -> String? {
        var trailing = false
        let failure: JSONParser.Failure? = bytes.withUnsafeBufferPointer { buffer -> JSONParser.Failure? in
            var p = JSONParser(buffer)
            do throws(JSONParser.Failure) {
                _ = try p.value(depth: 0)
                p.skip()
                trailing = p.i < p.b.count
                return p.i == p.b.count ? nil : JSONParser.Failure.invalid(p.i)
            } catch { return error }
        }
        guard let failure else { return nil }
        let at: Int, what: String
        switch failure {
        case .tooDeep(let i): (at, what) = (i, "arrays and objects nested more than \(JSONParser.maximumDepth) deep")
        case .duplicateKey(let i, let key):
            // (Keys alike but for their Unicode normalisation are one key here.)
            (at, what) = (i, "the key \"\(key.unicodeScalars.map { $0.value < 0x20 ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())\" given twice in one object (or two keys that differ only in how their accents are encoded); "
                          + "an object holds each key once")
        case .invalid(let i):
            at = i
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { what = "a byte-order mark before the JSON (save the file as UTF-8 without BOM)" }
            else if String(validating: bytes, as: UTF8.self) == nil { what = "bytes that are not UTF-8 text" }
            else if i >= bytes.count { what = "the text ends before the JSON does" }
            else if let escape = Self.surrogateEscape(in: bytes, near: i) {
                what = "\\u\(escape), half of a UTF-16 surrogate pair without its other half (not a character)"
            }
            else if trailing { what = "text after the end of the JSON value (a file holds one array or object)" }
            else if bytes[i] < 0x20, Self.insideString(bytes, at: i) {
                let escape = [0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"][Int(bytes[i])] ?? "\\u00" + String(format: "%02x", bytes[i])
                what = "a control character (byte \(bytes[i])) inside a text: write it as \(escape)"
            }
            else if bytes[i] < 0x20 { what = "a control character (byte \(bytes[i])) where JSON allows none" }
            else { what = "a syntax error here (or NaN or Infinity, a trailing comma)" }
        }
        let upTo = bytes[..<min(at, bytes.count)]
        let line = upTo.count { $0 == 0x0A } + 1
        // Characters, not bytes: UTF-8 continuation bytes do not count.
        let column = upTo[((upTo.lastIndex(of: 0x0A)).map { $0 + 1 } ?? upTo.startIndex)...].count { $0 & 0xC0 != 0x80 } + 1
        return "line \(line), column \(column): \(what)"
    }

    /// The four hex digits of a `\\uD800`–`\\uDFFF` escape that ends at or
    /// just before `i` (where the parser stopped), if there is one.
    static func surrogateEscape(in bytes: [UInt8], near i: Int) -> String? {
        var k = max(0, i - 12)
        while k + 6 <= min(bytes.count, i + 6) {
            if bytes[k] == UInt8(ascii: "\\"), bytes[k + 1] == UInt8(ascii: "u"), [UInt8(ascii: "d"), UInt8(ascii: "D")].contains(bytes[k + 2]),
               let digits = String(validating: bytes[(k + 2)..<(k + 6)], as: UTF8.self), let v = UInt16(digits, radix: 16), (0xD800...0xDFFF).contains(v) {
                return digits
            }
            k += 1
        }
        return nil
    }

    /// Why a JSON text taken from a person is refused.
    public enum Refusal: Error, Equatable, Sendable {
        /// A number that would not be kept as written (the token, as
        /// written): see ``firstInexactNumber(in:)``.
        case inexactNumber(String)
        /// Not valid JSON: ``parseFailure(_:)``'s account.
        case invalid(String)
    }

    /// ``parse(_:)`` for a text a person wrote (a store file, `--json-fields`):
    /// the value, or why it is refused, a number it would not keep as
    /// written (`1e400` included, which does not parse) first.
    public static func parseKeepingNumbers(_ bytes: [UInt8]) -> Result<JSONValue, Refusal> {
        let inexact = firstInexactNumber(in: bytes)
        guard let value = parse(bytes) else {
            if let n = inexact, Double(n) != nil { return .failure(.inexactNumber(n)) }
            return .failure(.invalid(parseFailure(bytes) ?? "not valid JSON"))
        }
        if let n = inexact { return .failure(.inexactNumber(n)) }
        return .success(value)
    }

    /// How deep arrays and objects may nest in a text ``parse(_:)`` takes.
    public static var maximumNesting: Int { JSONParser.maximumDepth }

    /// Parses UTF-8 JSON text; `nil` when it is not exactly one valid JSON value.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? { JSONParser.parse(bytes) }
    public static func parse(_ text: String) -> JSONValue? { JSONParser.parse(Array(text.utf8)) }

    /// The first number of the JSON text `bytes` that ``parse(_:)`` would
    /// not keep as written: an integer beyond 64 bits, a decimal of more
    /// than 17 significant digits (both become the nearest double, and lose
    /// digits), or one beyond a double's range: too large (`1e400`, which
    /// ``parse(_:)`` refuses) or too small, which would become 0 or lose
    /// precision (`1e-400`, `1e-310`). `nil` when every number is kept.
    /// Strings are skipped.
    public static func firstInexactNumber(in bytes: [UInt8]) -> String? {
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
                i += 1
            } else if c == UInt8(ascii: "-") || (48...57).contains(c) {
                let start = i
                while i < bytes.count, (48...57).contains(bytes[i]) || [UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[i]) { i += 1 }
                let token = String(decoding: bytes[start..<i], as: UTF8.self)
                if isInexact(token) { return token }
            } else {
                i += 1
            }
        }
        return nil
    }

    /// What a number ``firstInexactNumber(in:)`` finds is, for messages.
    public static let inexactNumberReason = "beyond a 64-bit integer, more digits than a double keeps, or beyond the range of a double"

    /// Why the number `token` (one ``isInexact(_:)`` holds inexact) would
    /// not be kept as written, for messages: too many digits (give fewer),
    /// or a size no double holds (give another number).
    public static func inexactReason(_ token: String) -> (reason: String, fewerDigits: Bool) {
        let mantissa = token.prefix { $0 != "e" && $0 != "E" }
        if !mantissa.contains("."), mantissa.count == token.count {
            return ("beyond a 64-bit integer", false)
        }
        var digits = mantissa.filter(\.isNumber).drop { $0 == "0" }
        if mantissa.contains(".") { while digits.last == "0" { digits = digits.dropLast() } }
        if digits.count > 17 { return ("more than 17 significant digits", true) }
        let value = Double(token) ?? .infinity
        if value.isFinite, value.magnitude >= Double.leastNormalMagnitude || digits.isEmpty {
            return ("more digits than a double keeps: it would become \(value)", true)
        }
        return (!value.isFinite ? "too large for a double, at most about 1.8e308" : "too small for a double to keep exactly, at least about 2.2e-308 unless 0", false)
    }

    /// A decimal number's text as its sign, significant digits (no
    /// leading or trailing zeros) and the power of ten of the point before
    /// them: equal for equal values however written (`1.50`, `15e-1`).
    static func decimalParts(_ text: String) -> (negative: Bool, digits: [UInt8], point: Int)? {
        var u = Substring(text).utf8[...]
        let negative = u.first == UInt8(ascii: "-")
        if negative { u = u.dropFirst() }
        var digits: [UInt8] = []
        var beforePoint = 0, seenPoint = false
        while let c = u.first, c != UInt8(ascii: "e"), c != UInt8(ascii: "E") {
            u = u.dropFirst()
            if c == UInt8(ascii: ".") { seenPoint = true; continue }
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            digits.append(c)
            if !seenPoint { beforePoint += 1 }
        }
        var exponent = 0
        if !u.isEmpty {
            guard let e = Int(String(decoding: u.dropFirst(), as: UTF8.self)) else { return nil }
            exponent = e
        }
        while digits.first == UInt8(ascii: "0") { digits.removeFirst(); beforePoint -= 1 }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return digits.isEmpty ? (negative, [], 0) : (negative, digits, beforePoint + exponent)
    }

    /// Whether the number `token` would lose digits as ``JSONValue`` holds it.
    static func isInexact(_ token: String) -> Bool {
        let mantissa = token.prefix { $0 != "e" && $0 != "E" }
        if mantissa.contains(".") || mantissa.count != token.count {
            // Significant digits: the mantissa's, without leading zeros (nor trailing ones after the point).
            var digits = mantissa.filter(\.isNumber).drop { $0 == "0" }
            if mantissa.contains(".") { while digits.last == "0" { digits = digits.dropLast() } }
            if digits.count > 17 { return true }
            guard let value = Double(token) else { return true }
            // Out of range: infinite, or a nonzero number that becomes 0 or
            // a subnormal double (fewer significant bits than it was written with).
            if !value.isFinite || (!digits.isEmpty && value.magnitude < Double.leastNormalMagnitude) { return true }
            // Up to 15 significant digits, a double gives them back; 16 or
            // 17 it may not (99.999999999999999 becomes 100.0, a review):
            // the value it is read as, written back, must be the same.
            guard digits.count > 15 else { return false }
            guard let written = decimalParts(token), let back = decimalParts("\(value)") else { return true }
            return written.digits != back.digits || written.point != back.point || written.negative != back.negative
        }
        return Int64(token) == nil
    }
}

/// One member of a JSON object, as read by ``JSONValue/members(_:nested:)``.
public struct JSONMember: Sendable, Equatable {
    public let key: String
    public let value: JSONValue
}

extension JSONValue {
    /// The members of the JSON object in `bytes`, in text order, read
    /// without building a dictionary; the members of the object under the
    /// key `nested` are read the same way and returned apart (that member is
    /// then not in `outer`; a `nested` value that is not an object stays in
    /// `outer` as it is). `nil` exactly when ``parse(_:)`` refuses the bytes
    /// or they are not an object: the same strict reader, the same refusal
    /// of a key given twice at any depth.
    ///
    /// For readers that look at a few known keys once: a rebuild reads
    /// every event's body this way.
    public static func members(_ bytes: [UInt8], nested: String) -> (outer: [JSONMember], nested: [JSONMember]?)? {
        bytes.withUnsafeBufferPointer { buffer in
            var p = JSONParser(buffer)
            p.skip()
            guard p.i < p.b.count, p.b[p.i] == UInt8(ascii: "{"), let result = try? p.members(depth: 0, nested: nested) else { return nil }
            p.skip()
            return p.i == p.b.count ? result : nil
        }
    }
}

extension JSONParser {
    /// An object's members in order (the reader is at its `{`), and those of
    /// the object under `nested`, read the same way.
    mutating func members(depth: Int, nested: String?) throws(Failure) -> ([JSONMember], [JSONMember]?) {
        guard depth < Self.maximumDepth else { throw .tooDeep(i) }
        i += 1
        var out: [JSONMember] = []
        out.reserveCapacity(8)   // a body's keys, or a record's fields: growing from empty reallocated three times
        var inner: [JSONMember]?
        var keys: Set<String>?   // for the duplicate check of large objects
        skip()
        if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return (out, nil) }
        while true {
            let k = try key()
            // A key given twice is refused, as by `value(depth:)`: by a
            // linear scan while the object is small, a set beyond.
            let seen = out.count + (inner == nil ? 0 : 1)
            if seen < 16 {
                if out.contains(where: { $0.key == k }) || (inner != nil && k == nested) { throw .invalid(i) }
            } else {
                if keys == nil { keys = Set(out.map(\.key) + (inner == nil ? [] : [nested!])) }
                guard keys!.insert(k).inserted else { throw .invalid(i) }
            }
            skip()
            if let nested, k == nested, i < b.count, b[i] == UInt8(ascii: "{") {
                inner = try members(depth: depth + 1, nested: nil).0
            } else {
                out.append(JSONMember(key: k, value: try value(depth: depth + 1)))
            }
            skip()
            guard i < b.count else { throw .invalid(i) }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { i += 1; return (out, inner) }
            throw .invalid(i)
        }
    }
}
