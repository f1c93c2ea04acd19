import Envelope
import Foundation
import Projections

/// `famctl subject add baby|pregnancy|newMom [--name N] [--birth DATE] [--sex S] [--due DATE]`
enum SubjectAddCommand: Command {
    static let spec = CommandSpec(
        path: ["subject", "add"],
        abstract: "Add a care subject (a baby, the pregnancy, the new mom) and print its focus key.",
        discussion: """
            A baby gets a new key baby:<UUID>; 'pregnancy' and 'newMom' have fixed keys
            (adding one again updates it). Records can only be added for a subject
            that exists.
            """,
        options: [
            .value("--name", "N", "The subject's name (any kind: a baby's name, a label for the pregnancy or the new mom)."),
            .value("--birth", "DATE", "A baby's birth date, YYYY-MM-DD."),
            .value("--sex", "S", "A baby's sex: female, male or other."),
            .value("--due", "DATE", "The pregnancy's due date, YYYY-MM-DD."),
        ],
        positionals: [PositionalSpec(name: "KIND", help: "baby, pregnancy or newMom.")])

    static func run(_ inv: Invocation) throws {
        guard let kind = SubjectKind(rawValue: inv.positionals[0]) else {
            throw CLIError.data("'\(inv.positionals[0])' is not a kind of care subject", hint: "Use baby, pregnancy or newMom.")
        }
        var fields: [String: JSONValue] = [:]
        for (opt, key) in [("--name", "name"), ("--birth", "birth"), ("--sex", "sex"), ("--due", "due")] {
            if let v = inv.value(opt) { fields[key] = .string(v) }
        }
        do throws(ValidationError) { try SubjectEvent.validate(kind: kind, fields: fields) } catch {
            throw CLIError.data("\(error)")
        }
        let focus: FocusKey = switch kind {
        case .baby: .baby(UUID())
        case .pregnancy: .pregnancy
        case .newMom: .newMom
        }
        let home = try Home.open(Home.location(inv))
        try home.append([SubjectEvent(focus: focus, fields: fields).body]) { try home.checkCanWrite() }
        if inv.json { Console.json(["focus": focus.description, "kind": kind.rawValue]) } else { Console.out(focus.description) }
    }
}

/// `famctl subject list`
enum SubjectListCommand: Command {
    static let spec = CommandSpec(
        path: ["subject", "list"],
        abstract: "List the care subjects' focus keys, one per line (--json for names and dates).")

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let subjects = try home.projector.subjects()
        if inv.json {
            Console.json(subjects.map { s -> [String: Any] in
                var o: [String: Any] = ["focus": s.focus.description, "kind": s.kind.rawValue, "addedBy": s.creator.hex]
                for (k, v) in s.fields { o[k] = RecordView.any(v) }
                return o
            })
            return
        }
        for s in subjects { Console.out(s.focus.description) }
    }
}

/// `famctl digest`
enum DigestCommand: Command {
    static let spec = CommandSpec(
        path: ["digest"],
        abstract: "Print a hash of the family's projected state: members holding the same events print the same.")

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let d = Hex.encode(try home.projector.digest())
        if inv.json { Console.json(["digest": d]) } else { Console.out(d) }
    }
}

/// `famctl settings include-shared on|off`
enum SettingsIncludeSharedCommand: Command {
    static let spec = CommandSpec(
        path: ["settings", "include-shared"],
        abstract: "Show the whole family's records (on) or only this device's own (off). A view filter only.",
        positionals: [PositionalSpec(name: "on|off", help: "Omit to print the current setting.", optional: true)])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        if let v = inv.positionals.first {
            guard v == "on" || v == "off" else { throw CLIError.data("'\(v)' is neither on nor off") }
            try home.state.set(.includeShared, v)
        }
        let now = home.includeShared ? "on" : "off"
        if inv.json { Console.json(["includeShared": home.includeShared]) } else { Console.out("include-shared \(now)") }
    }
}
