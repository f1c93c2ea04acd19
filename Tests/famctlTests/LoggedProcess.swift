import Foundation

/// A long-running process (a `sync --watch`) started in the background,
/// its stdout and stderr both in a file the test reads as it goes; killed
/// when the test is done with it, should it still run.
final class LoggedProcess {
    let process = Process()
    let log: String

    /// Starts `executable args…` with `environment` (this process's when
    /// `nil`), its output in `log`.
    init(_ executable: URL, _ args: [String], environment: [String: String]? = nil, log: String) throws {
        self.log = log
        guard FileManager.default.createFile(atPath: log, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.executableURL = executable
        process.arguments = args
        if let environment { process.environment = environment }
        process.standardOutput = out
        process.standardError = out
        try process.run()
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// What it printed so far.
    var said: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Whether it printed `text` within `seconds` (an end of the process
    /// ends the wait).
    func waitFor(_ text: String, seconds: TimeInterval = 40) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, !said.contains(text), process.isRunning { usleep(50_000) }
        return said.contains(text)
    }

    /// Sends SIGINT (Ctrl-C) and waits for it to end.
    func interrupt() {
        FamctlRunner.waitUntilCtrlCIsHandled(process)
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
    }
}
