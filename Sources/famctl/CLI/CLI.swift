import EventLog
import Foundation
import Replicator

/// The entry point: parse, run, and turn every failure into a message on
/// stderr and an exit code.
enum CLI {
    static let version = "famctl 0.1.0"

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
        SubjectAddCommand.self,
        SubjectListCommand.self,
        RecordAddCommand.self,
        RecordUpdateCommand.self,
        RecordDeleteCommand.self,
        RecordListCommand.self,
        RecordShowCommand.self,
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
        VerifyCommand.self,
        BenchCommand.self,
    ]

    static func main(_ args: [String], environment: [String: String]) -> Int32 {
        let parsed: ArgumentParser.Parsed
        do {
            parsed = try ArgumentParser(commands: commands).parse(args, environment: environment)
        } catch {
            return report(error)
        }
        switch parsed {
        case .version:
            Console.out(version)
            return ExitCode.ok.rawValue
        case .help(let text, let isError):
            if isError {
                Console.err(text)
                return ExitCode.usage.rawValue
            }
            Console.out(text, terminator: "")
            return ExitCode.ok.rawValue
        case .run(let command, let invocation):
            do {
                try command.run(invocation)
                return ExitCode.ok.rawValue
            } catch let e as CLIError {
                return report(e)
            } catch let e as SQLiteError {
                return report(CLIError.fromSQLite(e, path: (try? Home.location(invocation)) ?? "the home"))
            } catch let e as EventLogError {
                if case .ownChainForked = e {
                    return report(CLIError(.failure, e.description,
                                           hint: "Its key signed two histories: its home was copied to another install, or restored from a backup and written on before it synced. "
                                               + "'famctl status' shows where they part. To write again, join from a new home: ask the owner for an invitation, "
                                               + "then 'famctl accept CODE --name NAME --home NEWDIR'. (A forked owner cannot be replaced: members "
                                               + "go on recording, but nobody can invite or remove any more.)"))
                }
                if case .ownEventsPending = e {
                    return report(CLIError(.tempFail, e.description,
                                           hint: "This home is older than what it published (restored from a backup?), and its later events are still arriving. "
                                               + "Run 'famctl sync' until they are in; 'famctl status' counts what waits."))
                }
                return report(CLIError(.failure, e.description))
            } catch {
                return report(CLIError(.failure, "\(error)"))
            }
        }
    }

    private static func report(_ e: CLIError) -> Int32 {
        Console.err("famctl: error: \(e.message)")
        if let hint = e.hint { Console.err("famctl: \(hint)") }
        return e.code.rawValue
    }
}

/// Writes to stdout and stderr.
enum Console {
    static func out(_ s: String, terminator: String = "\n") {
        writeAll(1, s + terminator)
    }

    static func err(_ s: String) {
        writeAll(2, s.hasSuffix("\n") ? s : s + "\n")
    }

    private static func writeAll(_ fd: Int32, _ s: String) {
        var bytes = Array(s.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { b in FileIO.retrying { write(fd, b.baseAddress! + off, b.count - off) } }
            if n <= 0 { return }
            off += n
        }
    }

    /// Pretty, key-sorted JSON on stdout.
    static func json(_ value: Any) {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("null".utf8)
        out(String(decoding: data, as: UTF8.self))
    }
}
