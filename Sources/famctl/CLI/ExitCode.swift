/// Process exit codes (BSD `sysexits.h` where one fits).
enum ExitCode: Int32, Sendable {
    case ok = 0
    case failure = 1
    /// `replay` or `verify` found an integrity failure.
    case integrity = 3
    case usage = 64
    case dataError = 65
    case noInput = 66
    case cantCreate = 73
    case tempFail = 75
}

/// An error that ends a command with a message, an exit code and, where
/// there is one, what to do about it.
struct CLIError: Error, Sendable {
    let code: ExitCode
    let message: String
    let hint: String?
    /// This home's event log is gone or cannot be read (missing, empty,
    /// damaged): `export stores` can still write what the stores hold.
    var logUnreadable = false
    /// The server refused the login (a password changed on it): a watch
    /// whose rounds worked waits it out, reading a netrc file again at
    /// each try, rather than end on every device at once.
    var loginRefused = false
    /// The WebDAV collection is no longer one (not found where it was, its
    /// parent gone): a share renamed or unmounted on the server, which a
    /// watch whose rounds worked waits out, as a folder unmounted.
    var placeGone = false

    init(_ code: ExitCode, _ message: String, hint: String? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
    }

    static func usage(_ message: String, hint: String? = nil) -> CLIError { CLIError(.usage, message, hint: hint) }
    static func data(_ message: String, hint: String? = nil) -> CLIError { CLIError(.dataError, message, hint: hint) }
}
