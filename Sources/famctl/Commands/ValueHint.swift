import Envelope
import Foundation
import Projections

/// What to suggest for a `field=value` or `--at` text that is not of its
/// field's type, when the intent is plain: a time written without its
/// seconds or offset, a number written with its unit.
enum ValueHint {
    /// The hint for `text` given to a field of `spec`'s type; `nil` when
    /// there is nothing better to say than the rule.
    /// - Parameter schema: the store's, for a unit another field takes
    ///   (`dose=2.5ml`: `doseUnit=ml`).
    static func forField(_ spec: FieldSpec, text: String, in schema: StoreSchema? = nil) -> String? {
        switch spec.type {
        case .time:
            if let full = completedTime(text) {
                return "Write the time in full, with seconds and an offset: \(spec.name)=\(full.text)" + (full.offsetAdded ? " (this machine's offset at that time)" : "")
                    + (full.note.map { "; \($0)." } ?? ".")
            }
            if CalendarDate.isValid(text) {
                return "\(spec.name) is a moment, not a day: give the time of day too, as \(spec.name)=\(text)T08:15:00\(localOffset(text + "T08:15")) for a quarter past eight (this machine's offset)."
            }
            return timeOfDayAlone(spec.name, text) ?? clockOutOfRange(text)
        case .number(let range, _):
            // `dose=2.5ml` where the store has a unit field: both given.
            if let m = try? unitPattern.wholeMatch(in: text), let schema, let unitField = schema.field(spec.name + "Unit"),
               case .choice(let units) = unitField.type {
                let number = m.output.1.replacingOccurrences(of: ",", with: ".")
                if let unit = units.first(where: { $0.lowercased() == m.output.2.lowercased() }) {
                    return "Give the number and its unit apart: \(spec.name)=\(number) \(unitField.name)=\(unit)."
                }
                return "Give the number alone, \(spec.name)=\(number), and its unit in \(unitField.name), one of \(units.joined(separator: "/"))."
            }
            return unit(spec.name, text: text, range: range) ?? fahrenheit(spec.name, text: text, range: range) ?? grams(spec.name, text: text, range: range)
        case .integer(let range):
            // `severity=3.0`: in range, but not written as a whole number.
            if let m = try? /\s*(-?[0-9]+)\.0+\s*/.wholeMatch(in: text), let i = Int64(m.output.1), range.contains(i) {
                return "\(spec.name) takes a whole number: write \(i), not \(text.trimmingCharacters(in: .whitespaces))."
            }
            // `durationSec=1m`: a duration with its unit, in seconds.
            if spec.name.hasSuffix("Sec"), let seconds = Self.seconds(in: text) {
                let bound = seconds > range.upperBound ? "more than the \(range.upperBound) it takes at most"
                    : seconds < range.lowerBound ? "less than the \(range.lowerBound) it takes at least" : nil
                return "\(spec.name) is in seconds: \(text) is \(seconds) seconds" + (bound.map { ", \($0)." } ?? ", \(spec.name)=\(seconds).")
            }
            return nil
        case .choice(let options):
            // In other letters' case, or a letter or two off (`formular`,
            // `lefft`: a review), when one value is nearest; never for a unit
            // (`mcg` is not `mg`: a dose a thousand times off, a review).
            let near = spec.name.hasSuffix("Unit") ? [] : RecordInput.nearestAll(text, among: options)
            return (sameWord(text, among: options) ?? (near.count == 1 ? near[0] : nil)).map { "Did you mean \(spec.name)=\($0)? The values are written as listed." }
        case .bool:
            return "Write true or false (yes and no, 1 and 0 are taken too)."
        default:
            return nil
        }
    }

    /// What is out of range in a time whose hour, minute or second no clock
    /// shows (`T25:00:00`; a review: only "must be an ISO-8601 time").
    /// A time of day alone (`14:30`, `7:30`) or a word for a day (`now`,
    /// `today`, `yesterday`): the day is needed too; today's, or
    /// yesterday's when today's is still to come (a feeding entered just
    /// after midnight), written in full (a review: only the generic example).
    static func timeOfDayAlone(_ name: String, _ text: String, now: Date = Date(), in zone: TimeZone = TimeText.zone) -> String? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        func day(_ d: Date) -> String {
            let c = calendar.dateComponents([.year, .month, .day], from: d)
            return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
        }
        // The calendar's yesterday: a day of 23 or 25 hours is one day (a review).
        let today = day(now), yesterday = day(calendar.date(byAdding: .day, value: -1, to: now) ?? now.addingTimeInterval(-86_400))
        let c = calendar.dateComponents([.hour, .minute], from: now)
        let clockNow = String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "now":
            return completedTime("\(today)T\(clockNow)", in: zone).map { "Give the moment in full: \(name)=\($0.text) (now, this machine's offset)." }
        case "yesterday":
            return "\(name) is a moment, not a day: give the date and time, as \(name)=\(yesterday)T08:15:00\(localOffset(yesterday + "T08:15", in: zone)) for a quarter past eight."
        case "today":
            // The time now, not an example hour still to come (a review: 08:15 just after midnight).
            return "\(name) is a moment, not a day: give the time of day too, as \(name)=\(today)T\(clockNow):00\(localOffset(today + "T" + clockNow, in: zone)) for now (this machine's offset)."
        default: break
        }
        guard let m = try? /\s*([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?\s*/.wholeMatch(in: text),
              let h = Int(m.output.1), let mi = Int(m.output.2), h < 24, mi < 60 else { return nil }
        let clock = String(format: "%02d:%02d", h, mi) + (m.output.3.map { ":" + $0 } ?? "")
        if let t = completedTime("\(today)T\(clock)", in: zone), let d = TimeValue.parse(t.text), d <= now.addingTimeInterval(300) {
            return "Give the date too: \(name)=\(t.text) (today, this machine's offset)" + (t.note.map { "; \($0)." } ?? ".")
        }
        return completedTime("\(yesterday)T\(clock)", in: zone).map {
            "Give the date too: \(name)=\($0.text) (yesterday: today's \(clock) is still to come)" + ($0.note.map { "; \($0)." } ?? ".")
        }
    }

    static func clockOutOfRange(_ text: String) -> String? {
        guard let m = try? /\s*[0-9]{4}-[0-9]{2}-[0-9]{2}[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?.*/.wholeMatch(in: text),
              let hour = Int(m.output.1), let minute = Int(m.output.2) else { return nil }
        if hour > 23 { return "\(m.output.1) is not an hour: hours run from 00 to 23 (midnight is 00:00 of the next day)." }
        if minute > 59 { return "\(m.output.2) is not a minute: minutes run from 00 to 59." }
        if let sec = m.output.3.flatMap({ Int($0) }), sec > 59 { return "\(m.output.3!) is not a second: seconds run from 00 to 59." }
        return nil
    }

    /// The seconds a duration written with units is (`45s`, `1m`, `1 min
    /// 30 s`, `2h`); `nil` for anything else, a bare number included.
    static func seconds(in text: String) -> Int64? {
        let part = /([0-9]+)\s*(hours?|hrs|hr|h|minutes?|mins|min|m|seconds?|secs|sec|s)\s*/.ignoresCase()
        var total: Int64 = 0, rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            guard let m = try? part.prefixMatch(in: rest), let n = Int64(m.output.1), n < 1_000_000 else { return nil }
            let unit = m.output.2.lowercased()
            total += n * (unit.hasPrefix("h") ? 3_600 : unit.hasPrefix("m") ? 60 : 1)
            rest = rest[m.range.upperBound...]
        }
        return total
    }

    /// The word of `words` that `text` is, written in other letters' case
    /// (`Bottle` for `bottle`, `newmom` for `newMom`); `nil` for none.
    static func sameWord(_ text: String, among words: [String]) -> String? {
        words.first { $0 != text && $0.lowercased() == text.lowercased() }
    }

    /// `Did you mean PREFIX WORD?` for `text` written as a word of `words` in other letters' case.
    static func otherCase(_ text: String, among words: [String], as prefix: String = "") -> String? {
        sameWord(text, among: words).map { "Did you mean \(prefix)\($0)?" }
    }

    /// The hint for a date option (`--birth`, `--due`) that is not `YYYY-MM-DD`:
    /// a month or day of one digit padded, a time of day dropped, a date
    /// written with slashes read both ways.
    static func forDate(_ option: String, _ text: String) -> String? {
        if let m = try? datePattern.wholeMatch(in: text) {
            let padded = "\(m.output.1)-\(m.output.2.count == 1 ? "0" : "")\(m.output.2)-\(m.output.3.count == 1 ? "0" : "")\(m.output.3)"
            guard CalendarDate.isValid(padded), padded != text else { return nil }
            return m.output.4 == nil ? "Write the month and day with two digits: \(option) \(padded)." : "Give the day alone: \(option) \(padded)."
        }
        if let m = try? slashPattern.wholeMatch(in: text), let a = Int(m.output.1), let b = Int(m.output.2) {
            let year = String(m.output.3)
            let readings = [(a, b), (b, a)].filter { (1...12).contains($0.0) && (1...31).contains($0.1) }
                .map { String(format: "%@-%02d-%02d", year, $0.0, $0.1) }.filter(CalendarDate.isValid)
            guard let first = readings.first else { return nil }
            let both = Array(Set(readings)).sorted()
            return both.count == 1 ? "Write it as YYYY-MM-DD: \(option) \(first)."
                : "Write it as YYYY-MM-DD: \(option) \(both[0]) or \(option) \(both[1]), as you meant it."
        }
        return nil
    }

    nonisolated(unsafe) private static let datePattern = /(\d{4})-(\d{1,2})-(\d{1,2})([T ].*)?/
    nonisolated(unsafe) private static let slashPattern = /(\d{1,2})[\/.](\d{1,2})[\/.](\d{4})/

    /// A body temperature given in Fahrenheit without its unit
    /// (`temperatureC=101`): said, converted.
    static func fahrenheit(_ field: String, text: String, range: ClosedRange<Double>) -> String? {
        guard FieldUnit(field: field) == .celsius, let f = Double(text), !range.contains(f) else { return nil }
        let c = (f - 32) * 5 / 9
        guard range.contains(c) else { return nil }
        let shown = FieldUnit.celsius.format(c)
        return "\(field) is in degrees Celsius: \(text) looks like Fahrenheit, about \(shown) °C (\(field)=\(shown))."
    }

    /// A weight in kilograms given out of range in grams (`weightKg=3900`:
    /// a newborn's weight as the scale shows it, a review).
    static func grams(_ field: String, text: String, range: ClosedRange<Double>) -> String? {
        // A baby's weight (0.4–30 kg): a grown-up's in grams is no slip anyone makes.
        guard FieldUnit(field: field) == .kilograms, let g = Double(text), !range.contains(g), range.contains(g / 1000), (0.4...30).contains(g / 1000) else { return nil }
        let kg = FieldUnit.kilograms.format(g / 1000)
        return "\(field) is in kilograms: \(text) looks like grams, \(kg) kg (\(field)=\(kg))."
    }

    /// This machine's offset at the local time `text` (`YYYY-MM-DDTHH:MM`), as `+01:00` or `Z`.
    static func localOffset(_ text: String, in zone: TimeZone = TimeText.zone) -> String {
        guard let full = completedTime(text, in: zone), full.offsetAdded else { return "Z" }
        return String(full.text.dropFirst("2026-12-04T08:15:00".count))
    }

    /// The hint for a field's value that breaks its store's rule `v`
    /// (a number checked after parsing, a time, a choice), as written.
    /// - Parameter exceptYesNo: a JSON file writes true and false as such:
    ///   no yes or 1 to suggest.
    /// - Parameter at: the record's time, when the command line gave one
    ///   (a required time left out, most often a feeding's start with its
    ///   time in `--at` alone, gets it as the example).
    static func forViolation(_ v: ValidationError, fields: [String: JSONValue], in schema: StoreSchema, exceptYesNo: Bool = false, at: String? = nil) -> String? {
        // What "now" is here: a device whose clock is behind could not
        // write the right time, and was not told why (a clock review).
        if v.rule.hasSuffix("in the future") {
            // An offset that is not this zone's that day, which makes the
            // time later than meant (a review: told to set a right clock).
            let text = v.field == "at" ? at : fields[v.field]?.stringValue
            if let text, let other = offsetNotHere(text), let meant = TimeValue.parse(other.meant), meant <= Date().addingTimeInterval(300) {
                return "\(text) is written with the offset \(offsetText(text)), which is not this device's on that day (\(offsetText(other.meant))): it is \(other.shown) here. "
                    + "If \(text.dropFirst(11).prefix(5)) here was meant: \(v.field == "at" ? "--at " : "\(v.field)=")\(other.meant)."
            }
            return "This device's clock says it is \(TimeText.formatLocal(Date())) now; if that is wrong, set the clock right, else give the time it happened."
        }
        guard let spec = schema.field(v.field) else { return nil }
        guard let value = fields[v.field] else {
            guard spec.type == .time, let at else { return nil }
            return "Give it with the other fields, as \(v.field)=\(at) (--at alone only places the record in lists)."
        }
        guard !(exceptYesNo && spec.type == .bool) else { return nil }
        // A number given in JSON as a text ("120"): the value is fine, its quotes are not.
        if case .number = spec.type, case .string(let text) = value,
           (try? /\s*-?[0-9]+(\.[0-9]+)?\s*/.wholeMatch(in: text)) != nil {
            return "\(text) is given as a text (in quotes); give it as a JSON number: \"\(spec.name)\": \(text.trimmingCharacters(in: .whitespaces))."
        }
        // A yes/no given in JSON as a text ("true", "yes"): JSON's own true or false (a review:
        // "true" was told to write true, and yes offered, which JSON does not take).
        if spec.type == .bool, case .string(let text) = value {
            let word = text.trimmingCharacters(in: .whitespaces).lowercased()
            let meant = ["true", "yes", "1"].contains(word) ? "true" : ["false", "no", "0"].contains(word) ? "false" : nil
            return "\"\(text)\" is given as a text (in quotes); in JSON a yes/no is true or false without quotes"
                + (meant.map { ": \"\(spec.name)\": \($0)." } ?? ".")
        }
        // One given in JSON as a number (1, 0): `wet=1` takes it, JSON does not.
        if spec.type == .bool, { if case .int = value { true } else if case .double = value { true } else { false } }() {
            let meant = value == .int(1) ? "true" : value == .int(0) ? "false" : nil
            return "In JSON a yes/no is true or false, not a number" + (meant.map { ": \"\(spec.name)\": \($0)." } ?? ".")
        }
        return forField(spec, text: value.stringValue ?? value.jsonText, in: schema)
    }

    /// The hint for `OPTION TEXT` (`--at`), when it is a time written short.
    static func forOption(_ option: String, _ text: String) -> String? {
        // (Only an option that takes no day reaches here with one: `--at`.)
        if CalendarDate.isValid(text) {
            return "\(option) is a moment, not a day: give the time of day too, as \(option) \(text)T08:15:00\(localOffset(text + "T08:15")) for a quarter past eight (this machine's offset)."
        }
        return completedTime(text).map { "Write it in full, with seconds and an offset: \(option) \($0.text)" + ($0.offsetAdded ? " (this machine's offset at that time)" : "")
            + ($0.note.map { "; \($0)." } ?? ".") }
            ?? timeOfDayAlone(option, text).map { $0.replacingOccurrences(of: "\(option)=", with: "\(option) ") }
            ?? clockOutOfRange(text)
    }

    /// `text` completed to a time famctl takes, when it is one written
    /// short: `2026-12-04T08:00` or `2026-12-04 08:00[:05]` (a space for
    /// the `T`), without seconds, with an offset as `+0100` or `+01`, or
    /// none (this machine's offset at that moment is put in). `nil` when it
    /// is not such a time, or already one famctl takes.
    static func completedTime(_ text: String, in zone: TimeZone = TimeText.zone) -> (text: String, offsetAdded: Bool, note: String?)? {
        guard TimeValue.parse(text) == nil,
              let m = try? pattern.wholeMatch(in: text) else { return nil }
        let date = String(m.output.1), hh = m.output.2.count == 1 ? "0" + m.output.2 : String(m.output.2), mm = String(m.output.3)
        let ss = m.output.4.map(String.init) ?? "00"
        let fraction = m.output.5.map(String.init) ?? ""
        var offset: String
        var note: String?
        if let given = m.output.6.map(String.init) {
            if given == "Z" { offset = "Z" } else {
                let digits = given.dropFirst().filter(\.isNumber)
                offset = String(given.prefix(1)) + String(digits.prefix(2)) + ":" + (digits.count > 2 ? String(digits.suffix(2)) : "00")
            }
        } else {
            // This machine's offset at that local time.
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            let parts = date.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3, let h = Int(hh), let mi = Int(mm),
                  let asUTC = utc.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: h, minute: mi)) else { return nil }
            func text(_ seconds: Int) -> String {
                seconds == 0 ? "Z" : (seconds < 0 ? "-" : "+") + String(format: "%02d:%02d", abs(seconds) / 3600, abs(seconds) % 3600 / 60)
            }
            // The offsets half a day either side: two when the clocks change that day.
            let before = zone.secondsFromGMT(for: asUTC.addingTimeInterval(-43_200)), after = zone.secondsFromGMT(for: asUTC.addingTimeInterval(43_200))
            // An offset fits when, at the moment it makes, it is the zone's own.
            let fitting = Array(Set([before, after])).sorted(by: >).filter { zone.secondsFromGMT(for: asUTC.addingTimeInterval(-Double($0))) == $0 }
            switch fitting.count {
            case 0:
                // Skipped: the clocks went forward over it.
                offset = text(after)
                note = "\(hh):\(mm) does not exist here that day (the clocks went forward from \(text(before)) to \(text(after))): check the time"
            case 1:
                offset = text(fitting[0])
            default:
                // Twice: the clocks went back over it.
                offset = text(fitting[0])
                note = "\(hh):\(mm) comes twice here that day (the clocks went back): \(text(fitting[0])) is the first, \(text(fitting[1])) the second"
            }
        }
        let full = "\(date)T\(hh):\(mm):\(ss)\(fraction)\(offset)"
        return TimeValue.parse(full) == nil ? nil : (full, m.output.6 == nil, note)
    }

    /// The offset a time ends with, as written: `Z` or `±HH:MM`.
    static func offsetText(_ time: String) -> String { time.hasSuffix("Z") ? "Z" : String(time.suffix(6)) }

    /// A time written with a numeric offset that is not this device's zone's
    /// on that day (`+01:00` copied from an example after the clocks went
    /// forward): the same wall time at the zone's own offset, and the
    /// given time as shown here; `nil` when the offset is the zone's, is
    /// `Z`, or the wall time is ambiguous or skipped here (a review: an
    /// hour off stored without a word).
    ///   A device kept at UTC all year (a server, a machine never set to
    ///   its place) says nothing: its zone is no sign of the user's.
    static func offsetNotHere(_ text: String, in zone: TimeZone = TimeText.zone) -> (meant: String, shown: String)? {
        guard let moment = TimeValue.parse(text), RecordInput.offsetAsWritten(text) != nil,
              zone.secondsFromGMT(for: moment) != 0 || zone.secondsFromGMT(for: moment.addingTimeInterval(182 * 86_400)) != 0,
              let here = completedTime(String(text.dropLast(6)), in: zone), here.offsetAdded, here.note == nil,
              here.text != text, here.text.suffix(6) != text.suffix(6) else { return nil }
        return (here.text, TimeText.shownHere(text, in: zone))
    }

    // `YYYY-MM-DD`, `T` or a space, `HH:MM`, optional `:SS` and fraction, optional offset.
    nonisolated(unsafe) private static let pattern =
        /(\d{4}-\d{2}-\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)?/

    /// A number written with a unit (`120ml`, `4oz`, `7.5 lb`, `99.5F`): the
    /// field takes the number alone, in the unit its name ends with; a unit
    /// that converts says what the value is in that one.
    static func unit(_ field: String, text: String, range: ClosedRange<Double>) -> String? {
        guard let m = try? unitPattern.wholeMatch(in: text) else { return nil }
        // The number as the field takes it: a decimal comma written as a point.
        let number = m.output.1.replacingOccurrences(of: ",", with: ".")
        guard let value = Double(number) else { return nil }
        let given = m.output.2.lowercased().replacingOccurrences(of: "°", with: "")
        guard let own = FieldUnit(field: field) else {
            return "Give the number alone, without a unit: \(field)=\(number)."
        }
        if own.spellings.contains(given) {
            return "Give the number alone: \(field) is in \(own.name), \(field)=\(number)."
        }
        guard let converted = own.convert(value, from: given) else {
            return "\(field) is in \(own.name): give the number alone, in \(own.name) (\(field)=NUMBER)."
        }
        let shown = own.format(converted)
        let result = Double(shown) ?? converted
        if range.contains(result) { return "\(field) is in \(own.name): \(text) is about \(shown) \(own.symbol), \(field)=\(shown)." }
        let bound = result > range.upperBound ? "more than the \(FieldUnit.plain(range.upperBound)) \(own.symbol) it takes at most"
                                             : "less than the \(FieldUnit.plain(range.lowerBound)) \(own.symbol) it takes at least"
        return "\(field) is in \(own.name): \(text) is about \(shown) \(own.symbol), \(bound)."
    }

    nonisolated(unsafe) private static let unitPattern = /([0-9]+(?:[.,][0-9]+)?)\s*(°?[A-Za-z]+)/

    /// The unit a store field's name ends with.
    enum FieldUnit {
        case millilitres, grams, kilograms, centimetres, celsius

        init?(field: String) {
            if field.hasSuffix("Ml") { self = .millilitres } else if field.hasSuffix("Kg") { self = .kilograms }
            else if field.hasSuffix("Cm") { self = .centimetres } else if field.hasSuffix("G") { self = .grams }
            else if field.hasSuffix("C") { self = .celsius } else { return nil }
        }

        var name: String {
            switch self {
            case .millilitres: "millilitres"
            case .grams: "grams"
            case .kilograms: "kilograms"
            case .centimetres: "centimetres"
            case .celsius: "degrees Celsius"
            }
        }

        var symbol: String {
            switch self {
            case .millilitres: "ml"
            case .grams: "g"
            case .kilograms: "kg"
            case .centimetres: "cm"
            case .celsius: "°C"
            }
        }

        /// How its own unit may be written after the number (lowercased, without `°`).
        var spellings: Set<String> {
            switch self {
            case .millilitres: ["ml", "mls"]
            case .grams: ["g", "gr", "grams"]
            case .kilograms: ["kg", "kgs", "kilo", "kilos"]
            case .centimetres: ["cm", "cms"]
            case .celsius: ["c"]
            }
        }

        func convert(_ v: Double, from unit: String) -> Double? {
            switch (self, unit) {
            case (.millilitres, "oz"), (.millilitres, "floz"): v * 29.5735
            case (.millilitres, "l"): v * 1000
            case (.grams, "oz"): v * 28.3495
            case (.grams, "kg"): v * 1000
            case (.kilograms, "g"), (.kilograms, "gr"): v / 1000
            case (.kilograms, "lb"), (.kilograms, "lbs"): v * 0.45359237
            case (.kilograms, "oz"): v * 0.0283495
            case (.centimetres, "in"), (.centimetres, "inch"), (.centimetres, "inches"): v * 2.54
            case (.centimetres, "mm"): v / 10
            case (.centimetres, "m"): v * 100
            case (.celsius, "f"): (v - 32) * 5 / 9
            default: nil
            }
        }

        /// The converted value as the field would take it: millilitres and
        /// grams whole, kilograms to the gram, the others to a tenth.
        func format(_ v: Double) -> String {
            switch self {
            case .millilitres, .grams: String(format: "%.0f", v)
            case .kilograms: Self.trimmed(String(format: "%.3f", v))
            case .centimetres, .celsius: Self.trimmed(String(format: "%.1f", v))
            }
        }

        /// A bound as written in the rules (`500`, `0.3`).
        static func plain(_ d: Double) -> String { d == d.rounded() ? String(Int64(d)) : String(d) }

        private static func trimmed(_ s: String) -> String {
            guard s.contains(".") else { return s }
            var t = s
            while t.hasSuffix("0") { t.removeLast() }
            if t.hasSuffix(".") { t.removeLast() }
            return t
        }
    }
}
