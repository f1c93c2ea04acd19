import Foundation

// A file-size limit (ulimit -f) or a full disk must surface as an error we
// report, not as a signal that kills the process mid-write.
signal(SIGXFSZ, SIG_IGN)
exit(CLI.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
