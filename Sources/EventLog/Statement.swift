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
        do {
            try withBound(values) { while try step() {} }
        } catch let e as SQLiteError {
            throw e
        } catch {
            throw SQLiteError(code: SQLITE_ERROR, message: "\(error)", sql: sql)
        }
    }

    /// Calls `body` for each row.
    public func forEachRow(_ values: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
        try withBound(values) { while try step() { try body(Row(statement: self)) } }
    }

    /// The first row mapped by `body`, or `nil`.
    public func first<T>(_ values: [SQLValue] = [], _ body: (Row) throws -> T) throws -> T? {
        try withBound(values) { try step() ? body(Row(statement: self)) : nil }
    }

    /// Binds `values` to `?1, ?2, …` without copying them — text and blobs
    /// are bound by pointer for as long as `body` runs (SQLite reads them
    /// while stepping) — then resets the statement and clears the bindings,
    /// so that no pointer outlives the values. (Bound as copies, with their
    /// mallocs, values took a fifth of an append's storing thread in callgrind.)
    func withBound<R>(_ values: [SQLValue], _ body: () throws -> R) throws -> R {
        sqlite3_reset(handle)
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        return try bindStatic(values, from: 0, body)
    }

    private func bindStatic<R>(_ values: [SQLValue], from i: Int, _ body: () throws -> R) throws -> R {
        guard i < values.count else { return try body() }
        let idx = Int32(i + 1)
        let rc: Int32
        switch values[i] {
        case .null: rc = sqlite3_bind_null(handle, idx)
        case .integer(let n): rc = sqlite3_bind_int64(handle, idx, n)
        case .real(let d): rc = sqlite3_bind_double(handle, idx, d)
        case .text(var s):
            return try s.withUTF8 { u in
                let rc = u.withMemoryRebound(to: CChar.self) { c in
                    // Empty text is copied (nothing to copy): there is no pointer to keep.
                    c.baseAddress.map { famctl_sqlite3_bind_text_static(handle, idx, $0, Int32(c.count)) }
                        ?? famctl_sqlite3_bind_text_transient(handle, idx, "", 0)
                }
                guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
                return try bindStatic(values, from: i + 1, body)
            }
        case .blob(let b):
            return try b.withUnsafeBytes { p in
                let rc = p.baseAddress.map { famctl_sqlite3_bind_blob_static(handle, idx, $0, Int32(p.count)) }
                    ?? sqlite3_bind_zeroblob(handle, idx, 0)
                guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
                return try bindStatic(values, from: i + 1, body)
            }
        }
        guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
        return try bindStatic(values, from: i + 1, body)
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
