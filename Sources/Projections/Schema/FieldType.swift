import Envelope
import Foundation

/// The type of a store field, with its range. Parsing a `field=value` text and
/// checking a JSON value both go through it.
public enum FieldType: Sendable, Equatable {
    /// Text up to a length.
    case text(maxLength: Int)
    case integer(ClosedRange<Int64>)
    /// A decimal in a closed range; `positive` makes the lower bound exclusive at 0.
    case number(ClosedRange<Double>, positive: Bool = false)
    case bool
    case choice([String])
    /// An ISO-8601 time with an offset.
    case time
    /// A list of non-empty strings.
    case textList(minCount: Int, maxCount: Int)
    /// A list of photo ids (UUIDs), as `photo add` writes them.
    case photoList(maxCount: Int)
    /// A list of exactly `count` integers in a range.
    case intList(count: Int, range: ClosedRange<Int64>)
    /// `{provider, recordId}` of an imported record.
    case source

    /// Types a `field=value` text. Lists are comma-separated.
    /// - Returns: `nil` when the text is not of this type (the caller names the rule).
    func parse(_ text: String) -> JSONValue? {
        switch self {
        case .text, .choice: return .string(text)
        case .time: return .string(TimeValue.canonical(text))
        case .integer: return Int64(text).map(JSONValue.int)
        case .number:
            if let i = Int64(text) { return .int(i) }
            return DecimalText.parse(text).map(JSONValue.double)
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: return nil
            }
        case .textList, .photoList:
            return .array(text.split(separator: ",", omittingEmptySubsequences: false).map { .string($0.trimmingCharacters(in: .whitespaces)) })
        case .intList:
            var out: [JSONValue] = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let i = Int64(part.trimmingCharacters(in: .whitespaces)) else { return nil }
                out.append(.int(i))
            }
            return .array(out)
        case .source:
            // provider:recordId
            guard let colon = text.firstIndex(of: ":") else { return nil }
            return .object(["provider": .string(String(text[..<colon])), "recordId": .string(String(text[text.index(after: colon)...]))])
        }
    }

    /// Why `value` is not of this type, or `nil` when it is.
    func violation(_ value: JSONValue) -> String? {
        switch (self, value) {
        case (.text(let max), .string(let s)):
            guard s.count <= max else { return "must be at most \(max) characters" }
            // Characters as a person counts them; a character made of many
            // code points (combining marks, emoji joined with zero-width
            // joiners) counts for more past four of them, so that a limit in
            // characters still bounds the bytes.
            let scalars = s.unicodeScalars.count
            return scalars <= 4 * max ? nil : "must be at most \(max) characters (it holds \(scalars) code points: combining marks and joined emoji count too, past four a character)"
        case (.integer(let r), .int(let i)):
            return r.contains(i) ? nil : "must be an integer from \(r.lowerBound) to \(r.upperBound)"
        case (.number(let r, let positive), .int(let i)):
            return Self.check(Double(i), r, positive)
        case (.number(let r, let positive), .double(let d)):
            return Self.check(d, r, positive)
        case (.bool, .bool): return nil
        case (.choice(let options), .string(let s)):
            return options.contains(s) ? nil : "must be one of \(options.joined(separator: "/"))"
        case (.time, .string(let s)):
            if let why = CalendarDate.impossibility(in: s) { return why }
            return TimeValue.parse(s) != nil ? nil : "must be an ISO-8601 time with offset (e.g. 2026-11-29T08:15:00+01:00)"
        case (.textList(let min, let max), .array(let items)):
            guard items.allSatisfy({ if case .string(let s) = $0 { !s.isEmpty } else { false } }) else { return "must be a list of non-empty texts" }
            if items.count < min { return "must list at least \(min)" }
            if items.count > max { return "must list at most \(max)" }
            return nil
        case (.photoList(let max), .array(let items)):
            if items.count > max { return "must list at most \(max)" }
            guard items.allSatisfy({ if case .string(let s) = $0 { UUID(text: s) != nil } else { false } }) else {
                return "must be a list of photo ids (UUIDs: 'famctl photo add' attaches a photo, 'famctl photo list' shows the ids)"
            }
            return nil
        case (.intList(let count, let r), .array(let items)):
            guard items.count == count, items.allSatisfy({ if case .int(let i) = $0 { r.contains(i) } else { false } }) else {
                return "must be \(count) integers from \(r.lowerBound) to \(r.upperBound)"
            }
            return nil
        case (.source, .object(let o)):
            guard case .string(let p)? = o["provider"], !p.isEmpty, case .string(let r)? = o["recordId"], !r.isEmpty else {
                return "must be {provider, recordId} (as provider:recordId)"
            }
            return nil
        default:
            return "must be \(expectation)"
        }
    }

    private static func check(_ d: Double, _ r: ClosedRange<Double>, _ positive: Bool) -> String? {
        if positive { return d > 0 && d <= r.upperBound ? nil : "must be greater than 0 and at most \(fmt(r.upperBound))" }
        return r.contains(d) ? nil : "must be a number from \(fmt(r.lowerBound)) to \(fmt(r.upperBound))"
    }

    static func fmt(_ d: Double) -> String { d == d.rounded() ? String(Int64(d)) : String(d) }

    /// A bound as the rules write it: `500`, `0.5`.
    public static func formatted(_ d: Double) -> String { fmt(d) }

    var expectation: String {
        switch self {
        case .text: "text"
        case .integer(let r): "an integer from \(r.lowerBound) to \(r.upperBound)"
        case .number(let r, let p): p ? "a number greater than 0 and at most \(Self.fmt(r.upperBound))" : "a number from \(Self.fmt(r.lowerBound)) to \(Self.fmt(r.upperBound))"
        case .bool: "true or false"
        case .choice(let o): "one of \(o.joined(separator: "/"))"
        case .time: "an ISO-8601 time with offset"
        case .textList: "a list of texts (a,b,c)"
        case .photoList: "a list of photo ids"
        case .intList(let n, _): "a list of \(n) integers"
        case .source: "{provider, recordId}"
        }
    }
}

/// ISO-8601 times with an explicit offset, as records carry them:
/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`. Parsed by hand: Foundation's
/// formatter builds ICU date symbols on every use and dominated the profile
/// of appends and rebuilds.
public enum TimeValue {
    public static func parse(_ s: String) -> Date? {
        // Read in place (a native string's bytes), without copying them out.
        if let date = s.utf8.withContiguousStorageIfAvailable({ parse(utf8: $0) }) { return date }
        return Array(s.utf8).withUnsafeBufferPointer { parse(utf8: $0) }
    }

    /// `s` as records are written: a time that reads with a lower-case
    /// `t` or `z` (`2026-11-29t08:15:00z`, which ISO 8601 allows) with
    /// upper-case ones, as every other device and export writes them;
    /// any other text as it is.
    public static func canonical(_ s: String) -> String {
        guard parse(s) != nil, s.utf8.contains(where: { $0 == 116 || $0 == 122 }) else { return s }
        // Digits and signs besides, a parsed time holds no other letter.
        return s.uppercased()
    }

    private static func parse(utf8 b: UnsafeBufferPointer<UInt8>) -> Date? {
        func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116, b[13] == 58, b[16] == 58,
              let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2), let sec = num(17, 2),
              (1...12).contains(mo), d >= 1, d <= daysIn(month: mo, year: y), h <= 23, mi <= 59, sec <= 60 else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1 }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            guard let oh = num(i + 1, 2), i + 3 < b.count, b[i + 3] == 58, let om = num(i + 4, 2), oh <= 23, om <= 59 else { return nil }
            offset = (oh * 3600 + om * 60) * (b[i] == 45 ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(y, mo, d)
        let seconds = Double(days * 86_400 + h * 3600 + mi * 60 + sec - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    public static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
