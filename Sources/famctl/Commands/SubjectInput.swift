import Envelope
import Foundation
import Projections

/// A care subject's options (`--name`, `--birth`, `--sex`, `--due`) as
/// fields, and a subject named on the command line.
enum SubjectInput {
    static let options: [OptionSpec] = [
        .value("--name", "N", "The subject's name (any kind: a baby's name, a label for the pregnancy or the new mom)."),
        .value("--birth", "DATE", "A baby's birth date, YYYY-MM-DD (not after today, anywhere on Earth)."),
        .value("--sex", "S", "A baby's sex: female, male or other."),
        .value("--due", "DATE", "The pregnancy's due date, YYYY-MM-DD."),
    ]

    static let optionFields = [("--name", "name"), ("--birth", "birth"), ("--sex", "sex"), ("--due", "due")]

    /// The options a kind of subject takes, as a hint says them.
    static func optionNames(_ kind: SubjectKind) -> String {
        let allowed = SubjectEvent.allowedFields(kind: kind)
        return optionFields.filter { allowed.contains($0.1) }.map(\.0).joined(separator: ", ")
    }

    /// The options given, as a subject's fields; with `clearing`, an empty
    /// value is `null` (the field cleared).
    ///
    /// - Parameter today: the latest date anywhere now, `YYYY-MM-DD`
    ///   (``latestToday()``): a birth after it is refused.
    static func fields(_ inv: Invocation, kind: SubjectKind, clearing: Bool, today: String = latestToday()) throws(CLIError) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for (opt, key) in optionFields {
            guard let given = inv.value(opt) else { continue }
            if clearing && given.isEmpty { fields[key] = .null; continue }
            // A name is trimmed, as a device's and a family's are: "  Zoë "
            // would not be found by `--focus Zoë`, nor warned of as a
            // duplicate; spaces alone are then too short a name.
            let v = key == "name" ? given.trimmingCharacters(in: .whitespaces) : given
            if key == "name", v.isEmpty, !given.isEmpty {
                throw .data("subject.name: '\(given)' is only spaces", hint: clearing ? "Give a name, or --name '' to clear it." : "Give a name, or leave --name out.")
            }
            if key == "name", let why = keyLikeName(v, kind: kind) { throw .data("subject.name: \(why)", hint: "Give the subject another name.") }
            fields[key] = .string(v)
        }
        let allowed = SubjectEvent.allowedFields(kind: kind)
        for name in fields.keys.sorted() where fields[name] == .null && !allowed.contains(name) {
            throw .data("subject.\(name): is not a field of \(kind.rawValue) (use \(allowed.joined(separator: ", ")))")
        }
        do throws(ValidationError) { try SubjectEvent.validate(kind: kind, fields: fields.filter { $0.value != .null }) } catch {
            let option = optionFields.first { $0.1 == error.field }?.0
            throw .data("\(error)", hint: option.flatMap { o in fields[error.field]?.stringValue.flatMap { ValueHint.forDate(o, $0) } }
                            ?? Self.whoseField(error.field, kind: kind)
                            ?? (error.field == "sex" ? fields["sex"]?.stringValue.flatMap { Self.sexHint($0) } : nil))
        }
        for key in ["birth", "due"] {
            if let date = fields[key]?.stringValue, let year = RecordInput.yearAsWritten(date), year < RecordInput.earliestYear {
                throw .data("subject.\(key): \(date) is before \(RecordInput.earliestYear) (is the year mistyped?)",
                            hint: "Give the date again with the year in full, for example \(RecordInput.earliestExample(date)).")
            }
        }
        if let birth = fields["birth"]?.stringValue, birth > today {
            throw .data("subject.birth: \(birth) is after today (\(Self.todayText(today)))", hint: "A baby expected later is the pregnancy: famctl subject add pregnancy --due \(birth).")
        }
        return fields
    }

    /// Why a subject's name would not name it: `--focus` reads a focus key
    /// (`pregnancy`, `newMom`, `baby:<UUID>`, as written) as the key, so a
    /// subject named so could not be named by its name (a review).
    /// (The pregnancy named "pregnancy" is named so by its key as well.)
    static func keyLikeName(_ name: String, kind: SubjectKind) -> String? {
        guard let key = FocusKey(name), key.description != kind.rawValue else { return nil }
        return "'\(TerminalText.escaped(name))' is a care subject's key: --focus \(name) names \(key.description.hasPrefix("baby:") ? "the baby of that key" : "the \(key.description) subject"), not a subject of that name"
    }

    /// Today's date where this device is, `YYYY-MM-DD`.
    static func todayLocal() -> String { String(TimeText.formatLocal(Date()).prefix(10)) }

    /// The latest date anywhere on Earth now (UTC+14), `YYYY-MM-DD`: a baby
    /// born today where another member is may be born on a date that is
    /// still tomorrow here (a clock review: a device in New York refused a
    /// birth that one in Shanghai took).
    static func latestToday(now: Date = Date()) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withFullDate]
        f.timeZone = TimeZone(secondsFromGMT: 14 * 3600)
        return max(todayLocal(), f.string(from: now))
    }

    /// `today` as a refusal says it: with this device's own date when it differs.
    static func todayText(_ today: String) -> String {
        let here = todayLocal()
        return here == today ? today : "\(today) somewhere on Earth; \(here) here"
    }

    /// The hint for a `--sex` value famctl does not take: another case, or
    /// a word for one (`boy`, `girl`).
    static func sexHint(_ text: String) -> String? {
        if let other = ValueHint.otherCase(text, among: ["female", "male", "other"], as: "--sex ") { return other }
        let word = text.lowercased()
        let meant = ["boy", "m", "son"].contains(word) ? "male" : ["girl", "f", "daughter"].contains(word) ? "female" : nil
        return meant.map { "'\(text)' is written --sex \($0) (female, male or other)." }
    }

    /// The live care subject `text` names: its focus key, or its name
    /// (letters' case aside) when one live subject has it.
    /// - Parameter excluding: a subject a name does not mean (the one whose
    ///   records move to the subject named: two babies of one name, one
    ///   being merged into the other, a review).
    static func subject(_ text: String, home: Home, excluding: FocusKey? = nil) throws -> SubjectState {
        let all = try home.projector.subjects(includeRemoved: true)
        if let focus = FocusKey(text) {
            if let s = all.first(where: { !$0.removed && $0.focus == focus }) { return s }
            if all.contains(where: { $0.focus == focus }) {
                throw CLIError(.noInput, "care subject \(focus) is removed",
                               hint: "'famctl subject list --removed' shows it; 'famctl subject restore \(focus)' brings it back.")
            }
            throw CLIError(.noInput, "no care subject \(focus)", hint: "'famctl subject list' shows the care subjects; one added on another device arrives with 'famctl sync'.")
        }
        let live = all.filter { !$0.removed && $0.focus != excluding }
        let named = Self.named(text, in: live)
        if named.count == 1 { return named[0] }
        // Only the excluded one has the name: it is meant (the caller says why not).
        if named.isEmpty, let excluding, let own = all.first(where: { !$0.removed && $0.focus == excluding }), !Self.named(text, in: [own]).isEmpty { return own }
        if named.count > 1 { throw Self.ambiguous(text, named) }
        if let gone = Self.named(text, in: all.filter(\.removed)).first {
            throw CLIError(.noInput, "care subject '\(text)' (\(gone.focus)) is removed",
                           hint: "'famctl subject list --removed' shows it; 'famctl subject restore \(gone.focus)' brings it back.")
        }
        // A name a letter or two off (Lilly for Lily), or a key in other letters' case (newmom).
        if let near = RecordInput.nearest(text, among: live.compactMap(\.name) + live.map(\.focus.description)) {
            throw CLIError(.noInput, "no care subject '\(text)'; did you mean '\(near)'?", hint: "'famctl subject list' shows the care subjects.")
        }
        throw CLIError(.noInput, "no care subject '\(text)' (neither a focus key nor the name of one)",
                       hint: "Give baby:<UUID>, pregnancy, newMom or a subject's name; 'famctl subject list --json' shows them.")
    }

    /// The removed care subject `text` names: its focus key, or its name.
    static func removedSubject(_ text: String, home: Home) throws -> SubjectState {
        let removed = try home.projector.subjects(includeRemoved: true).filter(\.removed)
        if let focus = FocusKey(text) {
            if let s = removed.first(where: { $0.focus == focus }) { return s }
            if try home.projector.subject(focus) != nil { throw CLIError.data("care subject \(focus) is not removed") }
            throw CLIError(.noInput, "no care subject \(focus)", hint: "'famctl subject list --removed' shows the removed ones.")
        }
        // The exact name of a live subject, and of no removed one: that
        // subject is meant, and it is not removed (a removed one named in
        // other letters' case is not brought back instead).
        let liveSubjects = try home.projector.subjects()
        if !removed.contains(where: { $0.name == text }), let exact = liveSubjects.first(where: { $0.name == text }) {
            throw CLIError.data("care subject \(exact.focus) ('\(text)') is not removed")
        }
        let named = Self.named(text, in: removed)
        if named.count == 1 { return named[0] }
        if named.count > 1 { throw Self.ambiguous(text, named, what: "removed care subjects") }
        // The name of a live subject: not removed, as its key says (65).
        let live = Self.named(text, in: liveSubjects)
        if live.count == 1 { throw CLIError.data("care subject \(live[0].focus) ('\(text)') is not removed") }
        if live.count > 1 { throw CLIError.data("the care subjects named '\(text)' (\(live.map(\.focus.description).sorted().joined(separator: ", "))) are not removed") }
        if let near = RecordInput.nearest(text, among: removed.compactMap(\.name) + removed.map(\.focus.description)) {
            throw CLIError(.noInput, "no removed care subject '\(text)'; did you mean '\(near)'?", hint: "'famctl subject list --removed' shows the removed ones.")
        }
        throw CLIError(.noInput, "no removed care subject '\(text)'", hint: "'famctl subject list --removed' shows the removed ones.")
    }

    /// The subjects of `subjects` that `text` names: the one of exactly
    /// that name when there is one, else those of that name in any
    /// letters' case.
    static func named(_ text: String, in subjects: [SubjectState]) -> [SubjectState] {
        let exact = subjects.filter { $0.name == text }
        return exact.count == 1 ? exact : subjects.filter { $0.name?.lowercased() == text.lowercased() }
    }

    /// A name several subjects have (exit 64), listing their keys.
    static func ambiguous(_ text: String, _ named: [SubjectState], what: String = "care subjects", hint: String = "Name one by its focus key.") -> CLIError {
        CLIError.usage("\(named.count) \(what) are named '\(text)': \(named.map(\.focus.description).sorted().joined(separator: ", "))", hint: hint)
    }

    /// The subject was removed between reading it and writing the change.
    static func removedMeanwhile(_ focus: FocusKey) -> CLIError {
        CLIError(.tempFail, "care subject \(focus) was removed meanwhile (a sync brought its removal); nothing was written",
                 hint: "'famctl subject list --removed' shows it.")
    }

    /// For a field this kind of subject does not have: the kind that has it
    /// (a due date is the pregnancy's, a birth a baby's).
    static func whoseField(_ field: String, kind: SubjectKind) -> String? {
        switch field {
        case "due" where kind != .pregnancy: "A due date is the pregnancy's: famctl subject update pregnancy --due YYYY-MM-DD."
        case "birth" where kind != .baby, "sex" where kind != .baby: "Only a baby has a \(field == "birth" ? "birth date" : "sex")."
        default: nil
        }
    }
}
