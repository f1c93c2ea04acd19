import Envelope

/// JSON for people and for files read back (`export stores`), laid out as
/// Foundation's `.prettyPrinted, .sortedKeys` lays it out (two spaces, `"key" :
/// value`), but written from a ``JSONValue``: a decimal stays a decimal
/// (`38.0`, where `JSONSerialization` writes `38` and a reader then takes an
/// integer), so what is exported is what comes back.
enum PrettyJSON {
    static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, indent: 0, into: &out)
        return out
    }

    private static func write(_ value: JSONValue, indent: Int, into out: inout [UInt8]) {
        func newline(_ level: Int) {
            out.append(0x0A)
            out += [UInt8](repeating: 0x20, count: 2 * level)
        }
        switch value {
        case .array(let items):
            out.append(UInt8(ascii: "["))
            if items.isEmpty { out.append(0x0A) }
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                write(item, indent: indent + 1, into: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            if fields.isEmpty { out.append(0x0A) }
            for (i, key) in fields.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                JSONValue.quote(key, into: &out)
                out += " : ".utf8
                write(fields[key]!, indent: indent + 1, into: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "}"))
        default:
            value.write(into: &out)
        }
    }
}
