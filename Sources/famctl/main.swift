import Foundation

// A file-size limit (ulimit -f) or a full disk must surface as an error we
// report, not as a signal that kills the process mid-write.
signal(SIGXFSZ, SIG_IGN)
// A reader that went away (`famctl log | head -1`) is not a failure: the
// write says EPIPE, and the command finishes what it was doing, exit 0.
signal(SIGPIPE, SIG_IGN)
// The arguments' bytes, as given: `CommandLine.arguments` would replace
// what is not UTF-8 without a word. Under some preloaded libraries
// (libfaketime, with which a clock's skew is tried) the runtime is handed
// no arguments at all; the kernel's copy of them is read then.
let argv: [[UInt8]] = CommandLine.argc > 0
    ? (1..<Int(CommandLine.argc)).map { i in CommandLine.unsafeArgv[i].map { Array(UnsafeBufferPointer(start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: strlen($0))) } ?? [] }
    : Array((FileManager.default.contents(atPath: "/proc/self/cmdline").map { [UInt8]($0) } ?? [])
        .split(separator: 0, omittingEmptySubsequences: false).dropFirst().dropLast().map { Array($0) })
exit(CLI.main(argv: argv, environment: ProcessInfo.processInfo.environment))
