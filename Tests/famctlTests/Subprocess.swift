import Foundation

/// Programs the tests run other than famctl (`FamctlRunner` runs that one).
enum Subprocess {
    /// Runs `executable args…` to its end, with `env` added to this process's
    /// environment; stdout and stderr together.
    static func run(_ executable: String, _ args: [String], env: [String: String] = [:]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        var environment = ProcessInfo.processInfo.environment
        for (k, v) in env { environment[k] = v }
        p.environment = environment
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Runs `bash args…` (a script of scripts/ and its arguments), output
    /// through a file rather than a pipe: the servers a script starts keep
    /// running and would hold a pipe open.
    /// `env` is given on the command line, not set in this process: other
    /// tests run scripts at the same time.
    static func script(_ args: [String], env: [String: String] = [:]) -> (Int32, String) {
        let log = NSTemporaryDirectory() + "famctl-shell-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: log) }
        func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let quoted = args.map(quote).joined(separator: " ")
        let vars = env.sorted { $0.key < $1.key }.map { "\($0.key)=\(quote($0.value)) " }.joined()
        let status = system("\(vars)/bin/bash \(quoted) </dev/null >'\(log)' 2>&1")
        return (status == -1 ? -1 : (status >> 8) & 0xff, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// The path of a script in the repository's scripts/.
    static func repositoryScript(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/" + name).path
    }
}

/// A child process run to its end with the CPU time it used (`wait4`):
/// Foundation's `Process` does not give it.
enum ChildUsage {
    struct Result {
        let code: Int32
        /// User and system time, in seconds.
        let cpu: Double
        let stderr: String
    }

    /// Runs `executable args…` with `env` added to this process's
    /// environment; stdout is discarded, stderr kept.
    static func run(_ executable: String, _ args: [String], env: [String: String]) throws -> Result {
        let errPath = NSTemporaryDirectory() + "famctl-child-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        var environment = ProcessInfo.processInfo.environment
        for (k, v) in env { environment[k] = v }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + args).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return Result(code: (status >> 8) & 0xff, cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
                      stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
