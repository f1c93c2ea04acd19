import Envelope
import Foundation
import Projections

/// JSON for people and for files read back (`export stores`), laid out as
/// Foundation's `.prettyPrinted, .sortedKeys` lays it out (two spaces, `"key" :
/// value`; but `[]` and `{}` when empty), and written from a ``JSONValue``: a decimal stays a decimal
/// (`38.0`, where `JSONSerialization` writes `38` and a reader then takes an
/// integer), so what is exported is what comes back.
enum PrettyJSON {
    /// `value` — what a command prints with `--json`: dictionaries, arrays,
    /// strings, numbers, `Bool`s, `NSNull`, and ``JSONValue``s (a record's
    /// fields, kept as they were read) — as a ``JSONValue``. A `Double`
    /// stays a decimal (`38.0`); a value of any other type, which no command
    /// prints, becomes its description as a string rather than a crash.
    static func value(_ any: Any) -> JSONValue {
        switch any {
        case let v as JSONValue: return v
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case is NSNull: return .null
        // Native numbers never cast to another type; an `NSNumber` (read
        // back by JSONSerialization) casts to `Bool` only when it is one.
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as Int32: return .int(Int64(v))
        case let v as UInt32: return .int(Int64(v))
        case let v as UInt64: return v <= UInt64(Int64.max) ? .int(Int64(v)) : .double(Double(v))
        case let v as Double: return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as [String: Any]: return .object(v.mapValues(value))
        case let v as [Any]: return .array(v.map(value))
        default:
            let mirror = Mirror(reflecting: any)
            if mirror.displayStyle == .optional {
                return mirror.children.first.map { value($0.value) } ?? .null
            }
            return .string("\(any)")
        }
    }

    static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, indent: 0, into: &out)
        return out
    }

    /// `value` written as it is inside a structure `indent` levels deep:
    /// an item of a top-level array is written at level 1 (what a command
    /// that streams an array writes each item as).
    static func bytes(_ value: JSONValue, indent: Int) -> [UInt8] {
        var out: [UInt8] = []
        write(value, indent: indent, into: &out)
        return out
    }

    private static func write(_ value: JSONValue, indent: Int, into out: inout [UInt8]) {
        func newline(_ level: Int) {
            out.append(0x0A)
            out += [UInt8](repeating: 0x20, count: 2 * level)
        }
        switch value {
        // (Empty: `[]` and `{}`, where Foundation writes a blank line inside.)
        case .array(let items) where items.isEmpty:
            out += "[]".utf8
        case .object(let fields) where fields.isEmpty:
            out += "{}".utf8
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                write(item, indent: indent + 1, into: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            for (i, key) in fields.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                quote(key, into: &out)
                out += " : ".utf8
                write(fields[key]!, indent: indent + 1, into: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "}"))
        case .string(let text):
            quote(text, into: &out)
        default:
            value.write(into: &out)
        }
    }

    /// `s` as a JSON string, as ``JSONValue/quote(_:into:)`` writes it, but
    /// with the controls a terminal may act on beyond those JSON escapes
    /// (the C1 controls, DEL, the line and paragraph separators, the
    /// bidirectional overrides: ``PlainText/isControl(_:)``) written as
    /// `\u009b`: the same text to a reader, inert on a terminal showing
    /// `--json` output (a review: a one-byte CSI passed through raw).
    static func quote(_ s: String, into out: inout [UInt8]) {
        // ASCII below DEL, or no such scalar: as the log's JSON writes it.
        if s.utf8.allSatisfy({ $0 < 0x7F }) || !s.unicodeScalars.contains(where: { $0.value >= 0x7F && PlainText.isControl($0) }) {
            JSONValue.quote(s, into: &out)
            return
        }
        out.append(UInt8(ascii: "\""))
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += #"\""#.utf8
            case "\\": out += #"\\"#.utf8
            case "\n": out += #"\n"#.utf8
            case "\r": out += #"\r"#.utf8
            case "\t": out += #"\t"#.utf8
            default:
                if u.value < 0x20 || (u.value >= 0x7F && PlainText.isControl(u)) {
                    out += "\\u".utf8
                    let hex = String(u.value, radix: 16)
                    out += (String(repeating: "0", count: 4 - hex.count) + hex).utf8
                } else {
                    out += String(u).utf8
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
