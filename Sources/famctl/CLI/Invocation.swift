import Foundation
import Projections

/// A parsed command line: the command, its option values and positionals,
/// and the global options.
struct Invocation {
    let spec: CommandSpec
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    var home: String?
    var json = false
    let environment: [String: String]

    /// The single value of `--name`, if given.
    func value(_ name: String) -> String? { values[name]?.last }

    /// The value of a required option.
    func required(_ name: String) throws(CLIError) -> String {
        guard let v = value(name) else {
            throw .usage("famctl \(spec.name): missing required option \(name)", hint: "Run 'famctl \(spec.name) --help'.")
        }
        return v
    }

    /// The value of a required option that names a device or a family,
    /// without leading and trailing spaces.
    /// - Throws: ``CLIError`` (usage) when it is missing; (bad data) when it
    ///   is not a name: 1 to 100 characters, no control characters
    ///   (``PlainText/nameViolation(_:)``).
    func requiredName(_ name: String) throws(CLIError) -> String {
        let given = try required(name)
        let text = given.trimmingCharacters(in: .whitespaces)
        // The wording `subject add` uses (a review: "must be 1 to 100 characters" for "   ").
        if text.isEmpty, !given.isEmpty { throw .data("\(name) '\(given)' is only spaces", hint: "A name is one line of text, shown to the whole family.") }
        if let why = PlainText.nameViolation(text) { throw .data("\(name) \(why)", hint: "A name is one line of text, shown to the whole family.") }
        return text
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// Turns `argv` into an ``Invocation``, or a usage error naming what is wrong.
struct ArgumentParser {
    let commands: [any Command.Type]

    enum Parsed {
        case run(any Command.Type, Invocation)
        /// `--help` or a bare group: print this help.
        case help(String, isError: Bool)
        case version
    }

    /// Where the word `help` stands in place of the first command word:
    /// first, or after global options only (`--home DIR`, `--json`).
    static func helpWord(in args: [String]) -> Int? {
        var i = 0
        while i < args.count {
            let (name, inline) = split(args[i])
            switch name {
            case "--home": i += inline == nil ? 2 : 1
            case "--json": i += 1
            default: return args[i] == "help" ? i : nil
            }
        }
        return nil
    }

    func parse(_ args: [String], environment: [String: String]) throws(CLIError) -> Parsed {
        // `famctl help [COMMAND…]` is `famctl [COMMAND…] --help`, also
        // after global options (`famctl --home DIR help status`, as an alias
        // with `--home` writes it).
        if let at = Self.helpWord(in: args) {
            var rest = args
            rest.remove(at: at)
            // Before a `--`, where it is still an option (a review: `help
            // export stores --` exported into a folder named `--help`).
            rest.insert("--help", at: rest.firstIndex(of: "--") ?? rest.endIndex)
            return try parse(rest, environment: environment)
        }
        var words: [String] = []
        var command: (any Command.Type)?
        var rest: [String] = []   // tokens after the command words, in order
        var home: String?
        var json = false
        var wantsHelp = false
        var i = 0
        var onlyPositionals = false

        func takeValue(_ name: String, inline: String?) throws(CLIError) -> String {
            if let inline { return inline }
            i += 1
            guard i < args.count else { throw .usage("option \(name) needs a value") }
            return args[i]
        }

        while i < args.count {
            let tok = args[i]
            if onlyPositionals {
                // After `--` every word is an argument, never a command word.
                guard command != nil else { throw Self.unknownCommand(words + [tok], commands: commands, afterDashDash: true) }
                rest.append(tok)
                i += 1
                continue
            }
            let (name, inline) = Self.split(tok)
            switch name {
            case "--home":
                guard home == nil else { throw .usage("option --home given more than once", hint: "Pass one --home DIR.") }
                let value = try takeValue("--home", inline: inline)
                if inline == nil, Self.isOption(value, of: command?.spec) { throw Self.optionAsValue("option --home", "DIR", value) }
                // An empty value would fall back to the default home: refuse it as missing.
                guard !value.isEmpty else { throw .usage("option --home needs a value, not an empty one", hint: "Pass --home DIR, or leave --home out to use $FAMCTL_HOME or the default home.") }
                home = value
            case "--json", "-h", "--help":
                // Flags: `--json=false` would otherwise print JSON all the same.
                if inline != nil { throw .usage("option \(name) takes no value", hint: "Give \(name) alone, or leave it out.") }
                if name == "--json" { json = true } else { wantsHelp = true }
            case "--version" where command == nil && words.isEmpty:
                if inline != nil { throw .usage("option --version takes no value", hint: "Give --version alone.") }
                // `famctl --version status` would print the version alone, the command dropped in silence.
                if let extra = args[(i + 1)...].first(where: { $0 != "--json" }) {
                    throw .usage("--version takes no command or argument (given: \(extra))", hint: "Run 'famctl --version' alone, then the command.")
                }
                return .version
            case "--":
                // Kept for the second pass too, which would otherwise take a
                // word after it that begins with a dash for an option (a
                // review: `subject remove -- -Bob` was an unknown option).
                onlyPositionals = true
                rest.append(tok)
            default:
                if command == nil && !tok.hasPrefix("-") {
                    words.append(tok)
                    if let c = commands.first(where: { $0.spec.path == words }) {
                        command = c
                    } else if !commands.contains(where: { $0.spec.path.starts(with: words) }) {
                        throw Self.unknownCommand(words, commands: commands)
                    }
                } else if command == nil {
                    if words.isEmpty { throw .usage("unknown option '\(name)'", hint: "Run 'famctl --help'.") }
                    rest.append(tok)  // judged once the command is known
                } else {
                    rest.append(tok)
                    if tok.hasPrefix("--"), inline == nil, let c = command, c.spec.option(named: name)?.valueName != nil, i + 1 < args.count {
                        i += 1
                        rest.append(args[i])
                    }
                }
            }
            i += 1
        }

        guard let command else {
            let prefix = words
            if wantsHelp || prefix.isEmpty {
                return .help(Help.group(prefix: prefix, commands: commands), isError: !wantsHelp && !prefix.isEmpty)
            }
            return .help(Help.group(prefix: prefix, commands: commands), isError: true)
        }
        if wantsHelp { return .help(Help.command(command.spec), isError: false) }

        var inv = Invocation(spec: command.spec, home: home, json: json, environment: environment)
        var j = 0
        var positionalOnly = false
        while j < rest.count {
            let tok = rest[j]
            // The first `--` only: a later one is an argument like any word after it.
            if tok == "--", !positionalOnly { positionalOnly = true; j += 1; continue }
            if !positionalOnly && tok.hasPrefix("-") && tok.count > 1 {
                let (name, inline) = Self.split(tok)
                guard let opt = command.spec.option(named: name) else {
                    // One or two letters off a known option (`--jsn`): suggested.
                    let near = RecordInput.nearest(name, among: command.spec.options.map(\.name) + ["--json", "--home", "--help"])
                    // A field written as an option (`--note=x`), where fields are taken (a review: it was offered --home).
                    let field = String(name.drop { $0 == "-" })
                    // (A name no store has a field of is an option's typo: `--foc`.)
                    if command.spec.positionals.contains(where: { $0.name == "field=value" }), StoreSchema.anyFieldNames.contains(field) {
                        throw .usage("famctl \(command.spec.name): unknown option '\(name)'",
                                     hint: "A field is given without dashes: \(ShellWord.quoted(field + "=" + (inline ?? "VALUE"))). Run 'famctl \(command.spec.name) --help'.")
                    }
                    throw .usage("famctl \(command.spec.name): unknown option '\(name)'",
                                 hint: (near.map { "Did you mean \($0)? " } ?? "") + "Run 'famctl \(command.spec.name) --help'.")
                }
                if opt.valueName != nil {
                    let v: String
                    if let inline { v = inline } else {
                        j += 1
                        guard j < rest.count else { throw .usage("famctl \(command.spec.name): option \(name) needs a value \(opt.valueName!)") }
                        v = rest[j]
                        if Self.isOption(v, of: command.spec) { throw Self.optionAsValue("famctl \(command.spec.name): option \(name)", opt.valueName!, v) }
                    }
                    if !opt.repeating, inv.values[name] != nil {
                        throw .usage("famctl \(command.spec.name): option \(name) given more than once")
                    }
                    inv.values[name, default: []].append(v)
                } else {
                    if inline != nil { throw .usage("famctl \(command.spec.name): option \(name) takes no value") }
                    inv.flags.insert(name)
                }
            } else {
                inv.positionals.append(tok)
            }
            j += 1
        }
        try Self.checkPositionals(inv.positionals, spec: command.spec)
        try Self.checkChoices(inv, spec: command.spec)
        return .run(command, inv)
    }

    /// `words` name no command: the last one is not known after the ones before it.
    /// A word one or two edits from a known one (`recrd`) is suggested.
    /// - Parameter afterDashDash: the word came after `--`, where every word
    ///   is an argument: a command's words go before it.
    static func unknownCommand(_ words: [String], commands: [any Command.Type], afterDashDash: Bool = false) -> CLIError {
        let before = Array(words.dropLast())
        let known = before.joined(separator: " ")
        let scope = known.isEmpty ? "famctl" : "famctl \(known)"
        if afterDashDash {
            // A command that exists, its word put after `--`: said as that
            // (a review: "unknown command 'subject list'").
            if commands.contains(where: { $0.spec.path == words }) {
                return .usage("'\(words.last ?? "")' comes after '--', where every word is an argument, not a command word",
                              hint: "Put the command's words before '--': famctl \(words.joined(separator: " ")) -- ARGUMENTS.")
            }
            return .usage("unknown command '\(words.joined(separator: " "))'", hint: "A command's words go before '--' (after it every word is an argument). Run '\(scope) --help' for the commands.")
        }
        let last = words.last ?? ""
        let next = commands.map { $0.spec.path }.filter { $0.count > before.count && Array($0.prefix(before.count)) == before }.map { $0[before.count] }
        if let near = RecordInput.nearest(last, among: next) {
            return .usage("unknown command '\(words.joined(separator: " "))'", hint: "Did you mean '\(scope) \(near)'? Run '\(scope) --help' for the commands.")
        }
        return .usage("unknown command '\(words.joined(separator: " "))'", hint: "Run '\(scope) --help' for the commands.")
    }

    /// Whether `tok`, given where an option's value goes, is itself an
    /// option famctl knows here (a global one, or one of `spec`'s): then the
    /// value was most likely forgotten (`--out --json`). Other words starting
    /// with a dash are values.
    static func isOption(_ tok: String, of spec: CommandSpec?) -> Bool {
        let name = split(tok).0
        if ["--home", "--json", "--help", "-h", "--version"].contains(name) { return true }
        return tok.hasPrefix("--") && spec?.option(named: name) != nil
    }

    static func optionAsValue(_ what: String, _ valueName: String, _ tok: String) -> CLIError {
        let option = what.split(separator: " ").last.map(String.init) ?? what
        return .usage("\(what) needs a value \(valueName), but is followed by the option \(tok)",
                      hint: "Give the value after \(option); to pass a value that is spelled like an option, write \(option)=VALUE.")
    }

    static func split(_ tok: String) -> (String, String?) {
        guard tok.hasPrefix("--"), let eq = tok.firstIndex(of: "=") else { return (tok, nil) }
        return (String(tok[..<eq]), String(tok[tok.index(after: eq)...]))
    }

    static func checkChoices(_ inv: Invocation, spec: CommandSpec) throws(CLIError) {
        for choice in spec.choices {
            let given = choice.names.filter { inv.values[$0] != nil || inv.flags.contains($0) }
            if given.count > 1 {
                throw .usage("famctl \(spec.name): give either \(given.joined(separator: " or ")), not \(given.count == 2 ? "both" : "several")", hint: "Run 'famctl \(spec.name) --help'.")
            }
            if choice.required, given.isEmpty {
                let shown = choice.names.compactMap { spec.option(named: $0).map(Help.display) }.joined(separator: " or ")
                throw .usage("famctl \(spec.name): give \(shown)", hint: "Run 'famctl \(spec.name) --help'.")
            }
        }
    }

    static func checkPositionals(_ given: [String], spec: CommandSpec) throws(CLIError) {
        let required = spec.positionals.filter { !$0.optional }.count
        let unbounded = spec.positionals.contains { $0.repeating }
        if given.count < required {
            let missing = spec.positionals.filter { !$0.optional }[given.count].name
            throw .usage("famctl \(spec.name): missing argument \(missing)", hint: "Run 'famctl \(spec.name) --help'.")
        }
        if !unbounded && given.count > spec.positionals.count {
            throw .usage("famctl \(spec.name): unexpected argument '\(given[spec.positionals.count])'", hint: "Run 'famctl \(spec.name) --help'.")
        }
    }
}
