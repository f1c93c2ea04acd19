/// Calendar dates written `YYYY-MM-DD`: a subject's birth and due dates, and
/// the date part of every time a record carries.
///
/// ```
/// CalendarDate.isValid("2026-02-28")           // true
/// CalendarDate.isValid("2026-02-30")           // false
/// CalendarDate.impossibility(in: "2026-02-30T08:00:00Z")
///     // "the date 2026-02-30 does not exist (February 2026 has 28 days)"
/// ```
public enum CalendarDate {
    static let monthNames = ["January", "February", "March", "April", "May", "June",
                             "July", "August", "September", "October", "November", "December"]

    /// Whether `s` is exactly a `YYYY-MM-DD` date that the calendar has.
    public static func isValid(_ s: String) -> Bool {
        s.utf8.count == 10 && parts(s) != nil && impossibility(in: s) == nil
    }

    /// Why the date `s` starts with does not exist, when `s` starts with
    /// something shaped `YYYY-MM-DD` whose month or day is out of range;
    /// `nil` when it exists or `s` does not start with a date at all.
    public static func impossibility(in s: String) -> String? {
        guard let (year, month, day) = parts(s) else { return nil }
        let date = String(s.utf8.prefix(10))!
        guard (1...12).contains(month) else { return "the date \(date) does not exist (there is no month \(month))" }
        guard day >= 1 else { return "the date \(date) does not exist (there is no day 0)" }
        let days = TimeValue.daysIn(month: month, year: year)
        guard day <= days else { return "the date \(date) does not exist (\(monthNames[month - 1]) \(date.prefix(4)) has \(days) days)" }
        // Second 60: a leap second, which no minute of a time famctl is given
        // has (reading it as the next minute's 00 would be a guess).
        let b = Array(s.utf8.prefix(19))
        if b.count == 19, b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"), b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
           b[17] == UInt8(ascii: "6"), b[18] == UInt8(ascii: "0") {
            return "the time \(String(decoding: b[11..<19], as: UTF8.self)) does not exist here (a minute's seconds run from 00 to 59; leap seconds are not taken)"
        }
        return nil
    }

    /// The numbers of the `YYYY-MM-DD` at the start of `s`, unchecked.
    private static func parts(_ s: String) -> (year: Int, month: Int, day: Int)? {
        let b = Array(s.utf8.prefix(10))
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var v = 0
            for i in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - UInt8(ascii: "0"))
            }
            return v
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10) else { return nil }
        return (y, m, d)
    }
}
