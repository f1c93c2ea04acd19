import Foundation
import Projections

/// Parsing and printing of times on the command line: ISO-8601 with an offset.
enum TimeText {
    /// `2026-11-29T08:15:00+01:00`, `…Z`, with or without fractional seconds,
    /// or a bare date `2026-11-29`: its midnight where this device is
    /// (`TZ`), the day a family means when it asks for one.
    /// - Throws: ``CLIError`` (bad data) naming `option` when `s` is not one,
    ///   or names a date the calendar does not have (`2026-02-30`).
    static func parse(_ s: String, option: String) throws(CLIError) -> Date {
        if let why = CalendarDate.impossibility(in: s) { throw .data("\(option) '\(s)': \(why)") }
        guard let d = parse(s) else {
            throw .data("\(option) '\(s)' is not an ISO-8601 time with offset, nor a date",
                        hint: ValueHint.forOption(option, s) ?? "For example 2026-11-29T08:15:00+01:00, 2026-11-29T07:15:00Z or 2026-11-29 (its midnight here).")
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
        return CalendarDate.isValid(s) ? localMidnight(s) : nil
    }

    /// The start of day `YYYY-MM-DD` in `zone`: its midnight, or the first
    /// moment of the day where the clocks skip midnight.
    static func localMidnight(_ date: String, in zone: TimeZone = TimeText.zone) -> Date? {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let noon = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 12)) else { return nil }
        return calendar.startOfDay(for: noon)
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
    ///
    /// Times from 1970 to 9999 (every clock a device stamps today) are
    /// written here, by arithmetic, as the formatter writes them, rounded
    /// to the nearest millisecond (`StreamedListingTests` compares the
    /// two): the formatter's lock, taken by every line `famctl log` makes
    /// on two cores at once, cost more than the formatting. Others (a
    /// clock stamped far ahead: an HLC holds 48 bits of milliseconds, to
    /// the year 10889) go to the formatter.
    static func format(_ d: Date) -> String {
        let t = (d.timeIntervalSince1970 * 1000).rounded()
        guard t >= 0, t < 253_402_300_800_000 else { return formatByFoundation(d) }
        return formatUTC(milliseconds: Int64(t))
    }

    /// As ``format(_:)`` always did: through Foundation's formatter.
    static func formatByFoundation(_ d: Date) -> String {
        utc.lock.withLock { utc.formatter.string(from: d) }
    }

    /// The proleptic Gregorian date `days` days after 1970-01-01 (before it
    /// when negative): Howard Hinnant's `civil_from_days`, exact for any
    /// day a clock or a record names.
    static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` of a moment from 1970 to 9999, in
    /// milliseconds since 1970.
    static func formatUTC(milliseconds ms: Int64) -> String {
        var rest = ms % 86_400_000
        let (year, month, day) = civil(days: ms / 86_400_000)
        let hour = rest / 3_600_000; rest %= 3_600_000
        let minute = rest / 60_000; rest %= 60_000
        let second = rest / 1_000
        let milli = rest % 1_000
        var out = [UInt8](repeating: 0, count: 24)
        func put(_ v: Int64, _ at: Int, _ width: Int) {
            var v = v
            for i in stride(from: at + width - 1, through: at, by: -1) { out[i] = UInt8(ascii: "0") + UInt8(v % 10); v /= 10 }
        }
        put(year, 0, 4); out[4] = UInt8(ascii: "-"); put(month, 5, 2); out[7] = UInt8(ascii: "-"); put(day, 8, 2)
        out[10] = UInt8(ascii: "T"); put(hour, 11, 2); out[13] = UInt8(ascii: ":"); put(minute, 14, 2); out[16] = UInt8(ascii: ":")
        put(second, 17, 2); out[19] = UInt8(ascii: "."); put(milli, 20, 3); out[23] = UInt8(ascii: "Z")
        return String(decoding: out, as: UTF8.self)
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

    /// A record's time (`at`, a time field) as text output shows it: the
    /// same moment in this device's time zone (`TZ`), its fraction of a
    /// second as written, `Z` when that zone's offset is 0. A time written
    /// with the offset this zone has at that moment is shown exactly as
    /// written; anything else (not a time, a leap second, a zone whose
    /// offset is not whole minutes) too. A family across time zones read
    /// each record in its author's offset: 06:08+01:00 listed before
    /// 00:09-05:00 (a user review). JSON and exports keep the text as written.
    static func shownHere(_ written: String, in zone: TimeZone = TimeText.zone) -> String {
        let b = Array(written.utf8)
        guard let date = TimeValue.parse(written), b.count >= 20 else { return written }
        func num(_ from: Int, _ count: Int) -> Int64 { b[from..<(from + count)].reduce(0) { $0 * 10 + Int64($1 - 48) } }
        var i = 19
        if b[i] == UInt8(ascii: ".") { i += 1; while b[i] >= 48 && b[i] <= 57 { i += 1 } }
        let fraction = String(decoding: b[19..<i], as: UTF8.self)
        let writtenOffset: Int64 = b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") ? 0
            : (num(i + 1, 2) * 3600 + num(i + 4, 2) * 60) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
        let here = Int64(zone.secondsFromGMT(for: date))
        guard here != writtenOffset, here % 60 == 0, num(17, 2) < 60 else { return written }
        let days = Int64(TimeValue.daysFromCivil(Int(num(0, 4)), Int(num(5, 2)), Int(num(8, 2))))
        let local = days * 86_400 + num(11, 2) * 3600 + num(14, 2) * 60 + num(17, 2) - writtenOffset + here
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        var rest = local - day * 86_400
        let (year, month, dd) = civil(days: day)
        guard (0...9999).contains(year) else { return written }
        let hour = rest / 3600; rest %= 3600
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let offset = offsetText(Int(here))
        let y = String(year), yyyy = String(repeating: "0", count: max(0, 4 - y.count)) + y
        return "\(yyyy)-\(two(month))-\(two(dd))T\(two(hour)):\(two(rest / 60)):\(two(rest % 60))\(fraction)\(offset)"
    }

    /// This device's time zone as the system reads `TZ` (what `date`
    /// shows): a zone name (a leading `:` as glibc allows) or the path of
    /// a file of the zone database, else, for a POSIX rule such as `UTC+3`
    /// (three hours west) or `<+0530>-5:30`, glibc's offset now, kept for
    /// every date; a rule with summer time, `CET-1CEST,M3.5.0,M10.5.0/3`,
    /// is the zone whose present rule it is (``zoneFollowing(rule:in:)``),
    /// else kept at the offset it gives now, with a note. Foundation alone read
    /// `:America/New_York` as UTC and `UTC+3` as three hours east (a clock
    /// review).
    static let zone: TimeZone = {
        let env = ProcessInfo.processInfo.environment
        guard let tz = env["TZ"], !tz.isEmpty else { return .current }
        var name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
        let zoneinfo = env["TZDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/share/zoneinfo"
        // A file of the zone database named by its path (`:/etc/localtime`,
        // a link into it, or `/usr/share/zoneinfo/Europe/Paris`): its name,
        // whose summer time Foundation knows (a review: kept at one offset).
        if name.hasPrefix("/") {
            let resolved = Home.realPath(name), root = Home.realPath(zoneinfo) + "/"
            for prefix in [root, root + "posix/", root + "right/"] where resolved.hasPrefix(prefix) {
                name = String(resolved.dropFirst(prefix.count))
            }
        }
        // A zone's name: a file of the zone database, or (no database) a
        // name Foundation knows that no POSIX rule can be (no digits).
        if !name.hasPrefix("/"), !name.contains(".."), let named = TimeZone(identifier: name),
           FileManager.default.fileExists(atPath: zoneinfo + "/" + name) || !name.contains(where: \.isNumber) {
            return named
        }
        tzset()
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return .current }
        let fixed = TimeZone(secondsFromGMT: Int(local.tm_gmtoff)) ?? .current
        // A rule with summer time: the zone of the database whose present
        // rule it is, word for word (the last line of a zone file), which
        // follows it on the dates a family records (a review: a rule's
        // summer time dropped, a July night's records listed under the
        // day before). A rule no zone has keeps the offset it gives now,
        // and says so.
        // (Summer time: another offset at some point of the coming year, in
        // either half of the world; a summer may last longer than half a
        // year, so a month apart, not half a year: a review.)
        let summer = (1...12).contains { month in
            var later = now + time_t(month) * 30 * 86_400, then = tm()
            return localtime_r(&later, &then) != nil && then.tm_gmtoff != local.tm_gmtoff
        }
        guard summer else { return fixed }
        if let named = zoneFollowing(rule: tz, in: zoneinfo) { return named }
        let offset = fixed.secondsFromGMT()
        Console.err("famctl: note: TZ=\(ShellWord.quoted(tz)) has summer time that famctl cannot follow (no zone of \(zoneinfo) has that rule): "
                    + "times are read and shown at \(offsetText(offset)), its offset now, on every date. Set TZ to a zone's name (such as Europe/Berlin) to follow summer time.")
        return fixed
    }()

    /// The first zone (by name) of the zone database at `zoneinfo` whose
    /// present rule, the POSIX rule a zone file ends with, is `rule`, word
    /// for word; nil when none is.
    static func zoneFollowing(rule: String, in zoneinfo: String) -> TimeZone? {
        guard let names = FileManager.default.enumerator(atPath: zoneinfo) else { return nil }
        let footer = Array(("\n" + rule + "\n").utf8)
        var found: [String] = []
        for case let name as String in names where !name.hasPrefix("posix") && !name.hasPrefix("right") {
            guard let handle = FileHandle(forReadingAtPath: zoneinfo + "/" + name) else { continue }
            defer { try? handle.close() }
            guard let head = try? handle.read(upToCount: 4), head == Data("TZif".utf8),
                  let end = try? handle.seekToEnd(), end > UInt64(footer.count) else { continue }
            try? handle.seek(toOffset: end - UInt64(footer.count))
            if let tail = try? handle.read(upToCount: footer.count), Array(tail) == footer { found.append(name) }
        }
        return found.sorted().lazy.compactMap { TimeZone(identifier: $0) }.first
    }

    /// `+01:00`, `-05:00`, `Z` for 0.
    static func offsetText(_ seconds: Int) -> String {
        guard seconds != 0 else { return "Z" }
        let m = abs(seconds) / 60
        return (seconds < 0 ? "-" : "+") + (m / 60 < 10 ? "0" : "") + "\(m / 60):" + (m % 60 < 10 ? "0" : "") + "\(m % 60)"
    }

    /// Local time with its offset, to the second: `2026-11-29T18:40:01+01:00`.
    static func formatLocal(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeText.zone
        return f.string(from: d)
    }
}
