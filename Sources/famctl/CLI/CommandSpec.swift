/// An option a command accepts: `--name VALUE` or a bare `--flag`.
struct OptionSpec: Sendable {
    let name: String
    /// The placeholder of the value (`NAME`), or `nil` for a flag.
    let valueName: String?
    let help: String
    var repeating = false

    static func value(_ name: String, _ valueName: String, _ help: String, repeating: Bool = false) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, repeating: repeating)
    }
    static func flag(_ name: String, _ help: String) -> OptionSpec { OptionSpec(name: name, valueName: nil, help: help) }
}

/// A positional argument.
struct PositionalSpec: Sendable {
    let name: String
    let help: String
    var optional = false
    var repeating = false
}

/// Everything the parser and the help text need to know about one command.
struct CommandSpec: Sendable {
    /// The command words after `famctl`, e.g. `["record", "add"]`.
    let path: [String]
    /// A full-sentence summary.
    let abstract: String
    var discussion: String? = nil
    var options: [OptionSpec] = []
    var positionals: [PositionalSpec] = []
    /// Options of which at most one may be given (`[--dir PATH | --peer URL]`),
    /// or exactly one when the group is required (`(--dir PATH | --peer URL)`).
    var choices: [OptionChoice] = []

    var name: String { path.joined(separator: " ") }

    func option(named n: String) -> OptionSpec? { options.first { $0.name == n } }
}

/// Options that exclude each other: the parser refuses two of them, and
/// one when `required` and none is given.
struct OptionChoice: Sendable {
    let names: [String]
    var required = false
}

/// A command: its spec and what it does.
protocol Command: SendableMetatype {
    static var spec: CommandSpec { get }
    /// Runs after parsing and validation; throws ``CLIError`` for expected failures.
    static func run(_ invocation: Invocation) throws
}

/// Options every command accepts, before or after the command words.
enum GlobalOptions {
    static let all: [OptionSpec] = [
        .value("--home", "DIR", "The famctl home (default: $FAMCTL_HOME, else $XDG_DATA_HOME/famctl, else ~/.local/share/famctl)."),
        .flag("--json", "Print machine-readable JSON on stdout."),
        OptionSpec(name: "-h, --help", valueName: nil, help: "Show help for this command."),
    ]
}
