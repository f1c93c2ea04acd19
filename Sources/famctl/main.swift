import Foundation

// A file-size limit (ulimit -f) or a full disk must surface as an error we
// report, not as a signal that kills the process mid-write.
signal(SIGXFSZ, SIG_IGN)
// A reader that went away (`famctl log | head -1`) is not a failure: the
// write says EPIPE, and the command finishes what it was doing, exit 0.
signal(SIGPIPE, SIG_IGN)
exit(CLI.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
