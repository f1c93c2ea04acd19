/// Help text, built from the command specs (golden-tested).
enum Help {
    static func command(_ spec: CommandSpec) -> String {
        var out = "OVERVIEW: \(spec.abstract)\n"
        if let d = spec.discussion { out += "\n" + d + "\n" }
        out += "\nUSAGE: " + usage(spec) + "\n"
        if !spec.positionals.isEmpty {
            out += "\nARGUMENTS:\n"
            out += table(spec.positionals.map { (display($0), $0.help) })
        }
        out += "\nOPTIONS:\n"
        out += table(spec.options.map { (display($0), $0.help) } + GlobalOptions.all.map { (display($0), $0.help) })
        return out
    }

    static func usage(_ spec: CommandSpec) -> String {
        var parts = ["famctl", spec.name]
        // A group is shown as one (`[--dir PATH | --peer URL]`) when its
        // options are in no other group; overlapping groups are shown option by option.
        let shownAsOne = spec.choices.filter { choice in
            !spec.choices.contains { other in other.names != choice.names && !Set(other.names).isDisjoint(with: choice.names) }
        }
        for o in spec.options {
            if let choice = shownAsOne.first(where: { $0.names.contains(o.name) }) {
                // The group where its first option stands; its others are shown there.
                guard choice.names.first == o.name else { continue }
                let shown = choice.names.compactMap { spec.option(named: $0).map(display) }.joined(separator: " | ")
                parts.append(choice.required ? "(\(shown))" : "[\(shown)]")
                continue
            }
            let shown = display(o)
            parts.append(o.help.hasPrefix("(required)") ? shown : "[\(shown)]")
        }
        for p in spec.positionals { parts.append(p.optional ? "[\(display(p))]" : display(p)) }
        return parts.joined(separator: " ")
    }

    static func group(prefix: [String], commands: [any Command.Type]) -> String {
        let scope = (["famctl"] + prefix).joined(separator: " ")
        var out = ""
        if prefix.isEmpty {
            out += "OVERVIEW: famctl keeps a family's baby-care records in a signed, encrypted,\nappend-only event log on this device, and syncs it with the family.\n"
        } else {
            out += "OVERVIEW: The '\(prefix.joined(separator: " "))' commands.\n"
        }
        out += "\nUSAGE: \(scope) <command> [options]\n\nCOMMANDS:\n"
        let subs = commands.map { $0.spec }.filter { $0.path.starts(with: prefix) && $0.path.count > prefix.count }
        out += table(subs.map { ($0.path.dropFirst(prefix.count).joined(separator: " "), $0.abstract) })
        out += "\nOPTIONS:\n" + table(GlobalOptions.all.map { (display($0), $0.help) } + (prefix.isEmpty ? [("--version", "Show the version.")] : []))
        out += "\nSee '\(scope) <command> --help' for a command's options.\n"
        return out
    }

    static func display(_ o: OptionSpec) -> String {
        var s = o.name + (o.valueName.map { " " + $0 } ?? "")
        if o.repeating { s += " ..." }
        return s
    }

    static func display(_ p: PositionalSpec) -> String { p.name + (p.repeating ? " ..." : "") }

    static func table(_ rows: [(String, String)]) -> String {
        let width = min(max(rows.map(\.0.count).max() ?? 0, 8), 28)
        var out = ""
        for (left, right) in rows {
            if left.count > width {
                out += "  \(left)\n" + String(repeating: " ", count: width + 4) + right + "\n"
            } else {
                out += "  " + left.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + right + "\n"
            }
        }
        return out
    }
}
