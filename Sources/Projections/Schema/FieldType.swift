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
    /// A list of exactly `count` integers in a range.
    case intList(count: Int, range: ClosedRange<Int64>)
    /// `{provider, recordId}` of an imported record.
    case source

    /// Types a `field=value` text. Lists are comma-separated.
    /// - Returns: `nil` when the text is not of this type (the caller names the rule).
    func parse(_ text: String) -> JSONValue? {
        switch self {
        case .text, .choice, .time: return .string(text)
        case .integer: return Int64(text).map(JSONValue.int)
        case .number:
            if let i = Int64(text) { return .int(i) }
            guard let d = Double(text), d.isFinite else { return nil }
            return .double(d)
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: return nil
            }
        case .textList:
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
            return s.count <= max ? nil : "must be at most \(max) characters"
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
            return TimeValue.parse(s) == nil ? "must be an ISO-8601 time with offset (e.g. 2026-11-29T08:15:00+01:00)" : nil
        case (.textList(let min, let max), .array(let items)):
            guard items.allSatisfy({ if case .string(let s) = $0 { !s.isEmpty } else { false } }) else { return "must be a list of non-empty texts" }
            if items.count < min { return "must list at least \(min)" }
            if items.count > max { return "must list at most \(max)" }
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

    var expectation: String {
        switch self {
        case .text: "text"
        case .integer(let r): "an integer from \(r.lowerBound) to \(r.upperBound)"
        case .number(let r, let p): p ? "a number greater than 0" : "a number from \(Self.fmt(r.lowerBound)) to \(Self.fmt(r.upperBound))"
        case .bool: "true or false"
        case .choice(let o): "one of \(o.joined(separator: "/"))"
        case .time: "an ISO-8601 time with offset"
        case .textList: "a list of texts (a,b,c)"
        case .intList(let n, _): "a list of \(n) integers"
        case .source: "{provider, recordId}"
        }
    }
}

/// ISO-8601 times with an explicit offset, as records carry them.
public enum TimeValue {
    public static func parse(_ s: String) -> Date? {
        guard let t = s.firstIndex(of: "T") else { return nil }
        let time = s[s.index(after: t)...]
        guard time.hasSuffix("Z") || time.contains("+") || time.contains("-") else { return nil }
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        if let d = f.date(from: s) { return d }
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: s)
    }
}
