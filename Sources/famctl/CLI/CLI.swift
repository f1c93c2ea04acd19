import Envelope
import EventLog
import Foundation
import Projections
import Replicator
import Synchronization

/// The entry point: parse, run, and turn every failure into a message on
/// stderr and an exit code.
enum CLI {
    static let version = "famctl 0.1.0"

    /// What `--version` prints: the version, and the formats this build
    /// writes and reads, which tell two builds of one version apart and
    /// say which one a home or a family's event needs.
    static var versionLine: String {
        "\(version) (format level \(VersionNote.currentLevel): envelope v\(SyncEnvelope.version), log schema \(EventLog.schemaVersion), "
            + "record changes to schema \(StoreSchema.version), stores schema \(Projector.schemaVersion))"
    }

    /// Every command, in the order `famctl --help` lists them.
    static let commands: [any Command.Type] = [
        InitCommand.self,
        FamilyCreateCommand.self,
        FamilyRotateKeyCommand.self,
        InviteCommand.self,
        AcceptCommand.self,
        MembersCommand.self,
        MemberRemoveCommand.self,
        MemberRoleCommand.self,
        MemberAdmitCommand.self,
        SubjectAddCommand.self,
        SubjectUpdateCommand.self,
        SubjectRemoveCommand.self,
        SubjectRestoreCommand.self,
        SubjectListCommand.self,
        RecordAddCommand.self,
        RecordUpdateCommand.self,
        RecordDeleteCommand.self,
        RecordRestoreCommand.self,
        RecordListCommand.self,
        RecordShowCommand.self,
        RecordFieldsCommand.self,
        PhotoAddCommand.self,
        PhotoGetCommand.self,
        PhotoListCommand.self,
        PhotoDeleteCommand.self,
        SyncCommand.self,
        DigestCommand.self,
        LogCommand.self,
        StatusCommand.self,
        ReplayCommand.self,
        RebuildCommand.self,
        ExportStoresCommand.self,
        ImportStoresCommand.self,
        SettingsIncludeSharedCommand.self,
        SettingsPhotosCommand.self,
        SettingsSyncCommand.self,
        VerifyCommand.self,
        BenchCommand.self,
    ]

    /// `main`, for the process's own arguments as the system gave them:
    /// one that is not UTF-8 text is refused (65) rather than taken with
    /// its bytes replaced (U+FFFD in a name or a note, a path that names
    /// another file), which is what `CommandLine.arguments` would give.
    static func main(argv: [[UInt8]], environment: [String: String]) -> Int32 {
        var args: [String] = []
        for (i, bytes) in argv.enumerated() {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                return report(CLIError(.dataError, "argument \(i + 1) (\(ShellWord.quoted(String(decoding: bytes, as: UTF8.self)))) is not UTF-8 text; nothing was done",
                                       hint: "famctl takes its arguments as UTF-8: set the terminal or the script's locale to UTF-8 (for example LANG=C.UTF-8), or give the text again."))
            }
            args.append(text)
        }
        return main(args, environment: environment)
    }

    static func main(_ args: [String], environment: [String: String]) -> Int32 {
        let parsed: ArgumentParser.Parsed
        do {
            parsed = try ArgumentParser(commands: commands).parse(args, environment: environment)
        } catch {
            return report(error)
        }
        switch parsed {
        case .version:
            Console.out(versionLine)
            return outputChecked(ExitCode.ok.rawValue, didWork: false)
        case .help(let text, let isError):
            if isError {
                Console.text(text.hasSuffix("\n") ? text : text + "\n", toStandardError: true)
                return ExitCode.usage.rawValue
            }
            Console.text(text)
            return outputChecked(ExitCode.ok.rawValue, didWork: false)
        case .run(let command, let invocation):
            do {
                // A lock wait given wrong would be ignored (a minute instead): said, as a bad FAMCTL_PEER_TIMEOUT is.
                if let text = environment["FAMCTL_LOCK_WAIT"], !text.isEmpty, Int(text).map({ (0...3600).contains($0) }) != true {
                    throw CLIError(.usage, "FAMCTL_LOCK_WAIT '\(text)' is not a whole number of seconds from 0 to 3600",
                                   hint: "It sets how long famctl waits for another famctl process holding the home's database (a minute when unset).")
                }
                if let path = homeNoteNeeded(invocation) {
                    Console.homeNote.withLock { $0 = "(The commands named for this home need --home \(Home.shellWord(path)) too, as this one was given it.)" }
                }
                try command.run(invocation)
                return outputChecked(ExitCode.ok.rawValue, didWork: true)
            } catch {
                return report(withHomeNote(CLIError(error, path: (try? Home.location(invocation)) ?? "the home"), invocation))
            }
        }
    }

    /// `code`, unless standard output could not be written (a full disk, a
    /// file-size limit, /dev/full, a closed descriptor): then 73 and why.
    /// A script keeping the output (a record's id, a listing) must not take
    /// a cut-short file for the whole. A reader that went away (EPIPE:
    /// `famctl log | head`) is not a failure.
    static func outputChecked(_ code: Int32, didWork: Bool) -> Int32 {
        let failure = Console.outputFailure.load(ordering: .relaxed)
        guard failure != 0, failure != EPIPE else { return code }
        // Closed (`>&-`): no space to free.
        let remedy = failure == EBADF ? "Give the command somewhere to write its output (a file, a pipe, the terminal)" : "Free some space (or write elsewhere)"
        return report(CLIError(.cantCreate, "the output could not be written: \(String(cString: strerror(failure)))",
                               hint: didWork ? "What the command did is done; only what it printed is lost. \(remedy) and run a command that shows it again ('famctl record list', 'famctl log')."
                                   : "\(remedy)."))
    }

    /// `e`, its hint followed by a word on `--home` when it names famctl
    /// commands and this one ran with a `--home` other than the one they
    /// would use without it: those for this home need it too (a review:
    /// a hint's 'famctl sync' went to the default home).
    static func withHomeNote(_ e: CLIError, _ inv: Invocation) -> CLIError {
        // (A hint that gives a --home itself says where each command goes.)
        // (Not when the --home given is itself what is wrong: a shared folder given as the home.)
        guard let hint = e.hint, namesCommandWithoutHome(hint), !e.message.contains("is not a famctl home"), let path = homeNoteNeeded(inv) else { return e }
        return CLIError(e.code, e.message, hint: hint + " (The commands named for this home need --home \(Home.shellWord(path)) too, as this one was given it.)")
    }

    /// Whether `text` names a famctl command that gives no `--home` of its
    /// own: quoted (`'famctl sync'`, up to its closing quote) or not
    /// (`famctl subject remove ID`, up to the end of its clause). A text
    /// that names one command with a `--home` (another home's) and others
    /// without names those for this home too (a review: it got no note).
    static let commandWords = Set(commands.map { $0.spec.path[0] } + ["help"])

    static func namesCommandWithoutHome(_ text: String) -> Bool {
        var rest = text[...]
        while let r = rest.range(of: "famctl ") {
            let quoted = r.lowerBound > rest.startIndex && rest[rest.index(before: r.lowerBound)] == "'"
            let after = rest[r.upperBound...]
            // A command's first word follows (not "famctl: ", the line's own
            // prefix, nor prose: "other famctl commands of this home").
            let word = after.prefix { $0.isLetter }
            guard commandWords.contains(String(word)) else { rest = after; continue }
            let end = quoted ? after.firstIndex(of: "'") ?? after.endIndex
                             : after.firstIndex { $0 == ";" || $0 == ")" || $0 == "\n" } ?? after.endIndex
            let command = after[..<end]
            // (Help, the stores' fields and the bench use no home.)
            let homeless = command.contains("--help") || command.hasPrefix("help") || command.hasPrefix("record fields") || command.hasPrefix("bench")
            if !homeless, !command.contains("--home") { return true }
            rest = after[end...]
        }
        return false
    }

    /// The home `inv` was given with `--home`, when the commands a message
    /// names would go to another without it; `nil` otherwise.
    static func homeNoteNeeded(_ inv: Invocation) -> String? {
        guard let given = inv.home else { return nil }
        var plain = inv
        plain.home = nil
        let path = Home.absolute(given)
        return (try? Home.location(plain)) != path ? path : nil
    }

    private static func report(_ e: CLIError) -> Int32 {
        // An error's hint has its note already, when it applies (``withHomeNote(_:_:)``).
        Console.homeNote.withLock { $0 = nil }
        Console.err("famctl: error: \(e.message)")
        if let hint = e.hint { Console.err("famctl: \(hint)") }
        return e.code.rawValue
    }
}

/// Writes to stdout and stderr.
enum Console {
    /// One line for people on stdout, its control characters escaped
    /// (``TerminalText``): a name or a field another device wrote cannot
    /// start a line of its own or send the terminal an escape sequence.
    static func out(_ line: String) {
        writeAll(1, TerminalText.escaped(line) + "\n")
    }

    /// One line on stderr (a final newline is not doubled), escaped as ``out(_:)``.
    /// A warning, a note or any other word (not an error: its hint has it)
    /// that names famctl commands, from a command given
    /// another `--home`, says those need it too (``homeNote``), as an
    /// error's hint does (``CLI/withHomeNote(_:_:)``).
    static func err(_ line: String) {
        var line = line.hasSuffix("\n") ? String(line.dropLast()) : line
        if line.hasPrefix("famctl: "), !line.hasPrefix("famctl: error:"), CLI.namesCommandWithoutHome(line),
           let note = homeNote.withLock({ $0 }), !line.contains(note) {
            line += " " + note
        }
        writeAll(2, TerminalText.escaped(line) + "\n")
    }

    /// What a warning naming famctl commands adds, when the command was
    /// given a `--home` other than the one those commands would use
    /// without it; `nil` otherwise.
    static let homeNote = Mutex<String?>(nil)

    /// Text famctl composed itself (help), written as it is.
    static func text(_ s: String, toStandardError: Bool = false) {
        writeAll(toStandardError ? 2 : 1, s)
    }

    /// The first errno a write to standard output failed with (0: none):
    /// ``CLI/outputChecked(_:didWork:)`` turns it into the exit code.
    static let outputFailure = Atomic<Int32>(0)

    /// Whether standard output is a pipe whose reader went away: a write
    /// failed with EPIPE, or the kernel says so without one (`poll` gives
    /// POLLERR on a pipe's write end once its read end is closed), so that a
    /// watch with nothing to say does not go on for nobody.
    static var readerGone: Bool {
        if outputFailure.load(ordering: .relaxed) == EPIPE { return true }
        var p = pollfd(fd: 1, events: 0, revents: 0)
        return poll(&p, 1, 0) == 1 && p.revents & Int16(POLLERR) != 0
    }

    /// Bytes famctl made ready to print (lines already escaped), written
    /// as they are: what a command that streams its output writes a buffer
    /// of lines at a time with.
    static func bytes(_ bytes: [UInt8]) {
        writeAll(1, bytes)
    }

    private static func writeAll(_ fd: Int32, _ s: String) {
        writeAll(fd, Array(s.utf8))
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { b in FileIO.retrying { write(fd, b.baseAddress! + off, b.count - off) } }
            if n <= 0 {
                if fd == 1 { _ = outputFailure.compareExchange(expected: 0, desired: n < 0 ? errno : EIO, ordering: .relaxed) }
                return
            }
            off += n
        }
    }

    /// Pretty, key-sorted JSON on stdout, exact (JSON escapes what it must).
    /// `value` as JSON on stdout: pretty, or on one line (`compact`: a
    /// stream of objects, one a line, as `sync --watch --json` prints them).
    static func json(_ value: Any, compact: Bool = false, toStandardError: Bool = false) {
        // Written from a JSONValue, not by JSONSerialization: a record's
        // decimal field stays a decimal (`38.0`), as `export stores` writes it.
        let json = PrettyJSON.value(value)
        writeAll(toStandardError ? 2 : 1, String(decoding: compact ? json.jsonBytes : PrettyJSON.bytes(json), as: UTF8.self) + "\n")
    }

    /// Whether `path` names the file standard output writes to
    /// (`/dev/stdout`, `/dev/fd/1`, or the very file it is redirected to):
    /// what a command writes there is its output, and its report goes to
    /// stderr instead.
    static func isStandardOutput(_ path: String) -> Bool {
        var file = stat(), output = stat()
        return fstat(1, &output) == 0 && stat(path, &file) == 0 && file.st_dev == output.st_dev && file.st_ino == output.st_ino
    }
}
