import Foundation
import Projections

/// Parsing and printing of times on the command line: ISO-8601 with an offset.
enum TimeText {
    /// `2026-11-29T08:15:00+01:00`, `…Z`, with or without fractional seconds,
    /// or a bare date `2026-11-29` (midnight UTC).
    /// - Throws: ``CLIError`` (bad data) naming `option` when `s` is not one,
    ///   or names a date the calendar does not have (`2026-02-30`).
    static func parse(_ s: String, option: String) throws(CLIError) -> Date {
        if let why = CalendarDate.impossibility(in: s) { throw .data("\(option) '\(s)': \(why)") }
        guard let d = parse(s) else {
            throw .data("\(option) '\(s)' is not an ISO-8601 time with offset, nor a date",
                        hint: "For example 2026-11-29T08:15:00+01:00, 2026-11-29T07:15:00Z or 2026-11-29 (midnight UTC).")
        }
        return d
    }

    /// As ``parse(_:option:)``, or `nil`: the whole text, as strictly as a
    /// record's time (a time without an offset, or followed by anything, is
    /// not one: Foundation's formatter read `2026-12-01T23:00:00` as the
    /// bare date, midnight, and ignored what follows a time), or exactly a
    /// date `YYYY-MM-DD`.
    static func parse(_ s: String) -> Date? {
        if let d = TimeValue.parse(s) { return d }
        return CalendarDate.isValid(s) ? TimeValue.parse(s + "T00:00:00Z") : nil
    }

    /// Whether `s` carries an explicit offset (`Z` or `±hh:mm`), as record times must.
    static func hasOffset(_ s: String) -> Bool {
        guard let t = s.firstIndex(of: "T") else { return false }
        let time = s[t...]
        return time.hasSuffix("Z") || time.contains("+") || time.dropFirst().contains("-")
    }

    /// UTC with milliseconds: `2026-11-29T17:40:01.123Z`.
    ///
    /// One formatter for the process: making one loads ICU's date symbols,
    /// about 140 µs, which `famctl log` paid for every event (14.5 s for a
    /// log of 100 000 events).
    static func format(_ d: Date) -> String {
        utc.lock.withLock { utc.formatter.string(from: d) }
    }

    /// A formatter and the lock its use is under (a formatter is not known
    /// to be safe to use from two threads at once).
    private final class SharedFormatter: @unchecked Sendable {
        let lock = NSLock()
        let formatter: ISO8601DateFormatter

        init(_ options: ISO8601DateFormatter.Options) {
            formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
        }
    }

    private static let utc = SharedFormatter([.withInternetDateTime, .withFractionalSeconds])

    /// Local time with its offset, to the second: `2026-11-29T18:40:01+01:00`.
    static func formatLocal(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone.current
        return f.string(from: d)
    }
}
