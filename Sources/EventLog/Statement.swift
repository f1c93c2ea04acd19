internal import CSQLite

/// A prepared statement (`sqlite3_stmt`), finalised when released. Not `Sendable`:
/// it lives and dies on its connection's thread.
public final class Statement {
    let handle: OpaquePointer
    unowned let database: Database
    public let sql: String

    init(database: Database, sql: String) throws(SQLiteError) {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(database.handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw database.error(rc, sql: sql) }
        self.handle = stmt
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds values to `?1, ?2, …` after resetting the statement.
    @discardableResult
    public func bind(_ values: [SQLValue]) throws(SQLiteError) -> Statement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, v) in values.enumerated() {
            let idx = Int32(i + 1)
            let rc: Int32
            switch v {
            case .null: rc = sqlite3_bind_null(handle, idx)
            case .integer(let n): rc = sqlite3_bind_int64(handle, idx, n)
            case .real(let d): rc = sqlite3_bind_double(handle, idx, d)
            case .text(let s):
                // Through the UTF-8 view with its length: passing the String
                // as a C string made a NUL-terminated copy and a strlen first.
                var s = s
                rc = s.withUTF8 { u in
                    guard let base = u.baseAddress, !u.isEmpty else { return famctl_sqlite3_bind_text_transient(handle, idx, "", 0) }
                    return base.withMemoryRebound(to: CChar.self, capacity: u.count) { famctl_sqlite3_bind_text_transient(handle, idx, $0, Int32(u.count)) }
                }
            case .blob(let b):
                rc = b.withUnsafeBytes { famctl_sqlite3_bind_blob_transient(handle, idx, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count)) }
            }
            guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
        }
        return self
    }

    /// Steps once: `true` when a row is available.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            sqlite3_reset(handle)
            throw database.error(rc, sql: sql)
        }
    }

    /// Runs to completion, ignoring rows.
    public func run(_ values: [SQLValue] = []) throws(SQLiteError) {
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    /// Calls `body` for each row.
    public func forEachRow(_ values: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
        try bind(values)
        defer { sqlite3_reset(handle) }
        while try step() { try body(Row(statement: self)) }
    }

    /// The first row mapped by `body`, or `nil`.
    public func first<T>(_ values: [SQLValue] = [], _ body: (Row) throws -> T) throws -> T? {
        try bind(values)
        defer { sqlite3_reset(handle) }
        return try step() ? body(Row(statement: self)) : nil
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

/// A value bound to or read from SQLite.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// The current row of a stepping statement; valid only inside the callback.
public struct Row {
    let statement: Statement

    public func isNull(_ i: Int32) -> Bool { sqlite3_column_type(statement.handle, i) == SQLITE_NULL }
    public func int(_ i: Int32) -> Int64 { sqlite3_column_int64(statement.handle, i) }
    public func double(_ i: Int32) -> Double { sqlite3_column_double(statement.handle, i) }
    public func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(statement.handle, i) else { return "" }
        return String(cString: p)
    }
    public func blob(_ i: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(statement.handle, i))
        guard n > 0, let p = sqlite3_column_blob(statement.handle, i) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}
