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
