internal import CSQLite
import Foundation

/// A SQLite primary result code, so callers can `catch SQLiteError.busy`.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let ok = ResultCode(rawValue: SQLITE_OK)
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    public static let permission = ResultCode(rawValue: SQLITE_PERM)
    public static let abort = ResultCode(rawValue: SQLITE_ABORT)
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    public static let row = ResultCode(rawValue: SQLITE_ROW)
    public static let done = ResultCode(rawValue: SQLITE_DONE)

    /// The primary code of an extended result code (`rc & 0xff`).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xff) }

    public var description: String { String(cString: sqlite3_errstr(rawValue)) }

    /// Matches an error against a code: `catch ResultCode.busy`.
    public static func ~= (code: ResultCode, error: any Error) -> Bool {
        (error as? SQLiteError)?.code.primary == code
    }
}

/// A failed SQLite call: the code, SQLite's message, and the statement that failed.
/// Equality is on the code alone.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: ResultCode
    public let extendedCode: Int32
    public let message: String
    public let sql: String?
    /// The operating system's `errno` behind an I/O failure (`sqlite3_system_errno`), or 0.
    public let systemErrno: Int32

    public init(code: Int32, message: String, sql: String? = nil, systemErrno: Int32 = 0) {
        self.code = ResultCode(rawValue: code).primary
        self.extendedCode = code
        self.message = message
        self.sql = sql
        self.systemErrno = systemErrno
    }

    /// A write found no room: SQLITE_FULL, or an I/O write error (SQLITE_IOERR_WRITE,
    /// which is what a full disk or a file-size limit produces) or one whose
    /// errno says ENOSPC, EFBIG or EDQUOT.
    public var isOutOfSpace: Bool {
        code == .full || extendedCode == 778 /* SQLITE_IOERR_WRITE */ || (code == .ioError && [ENOSPC, EFBIG, EDQUOT].contains(systemErrno))
    }

    public static func == (a: SQLiteError, b: SQLiteError) -> Bool { a.code == b.code }

    public static let busy = ResultCode.busy
    public static let constraint = ResultCode.constraint

    public var description: String {
        var s = "SQLite error \(extendedCode) (\(code)): \(message)"
        if let sql { s += " — in `\(sql)`" }
        return s
    }
}
