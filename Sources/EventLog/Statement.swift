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

    deinit {
        sqlite3_finalize(handle)
        scratch?.deallocate()
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
        do {
            try withBound(values) { while try step() {} }
        } catch let e as SQLiteError {
            throw e
        } catch {
            throw SQLiteError(code: SQLITE_ERROR, message: "\(error)", sql: sql)
        }
    }

    /// Runs to completion, its values bound by `bind`, one after another
    /// (`?1, ?2, …`), from memory the caller owns: texts and blobs are
    /// bound where they lie, not copied, so what `bind` points to must stay
    /// as it is until this returns. (No array of ``SQLValue`` is made: a
    /// caller that keeps its rows as bytes binds them straight from there.)
    public func run(bindingInPlace bind: (inout InPlaceBinding) throws(SQLiteError) -> Void) throws(SQLiteError) {
        try whileStepping { () throws(SQLiteError) in
            var binding = InPlaceBinding(handle: handle, statement: self)
            try bind(&binding)
            // One left unbound would be NULL, silently.
            precondition(binding.index - 1 == sqlite3_bind_parameter_count(handle), "\(binding.index - 1) values bound of \(sqlite3_bind_parameter_count(handle)): \(sql)")
            while try step() {}
        }
    }

    /// Runs `body` with the statement reset, and resets it and clears its
    /// bindings after. A statement used again inside its own loop would
    /// restart it, and could free what its outer values are bound to: a
    /// bug to stop at once, not to step over.
    @inline(__always)
    private func whileStepping<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        precondition(!stepping, "statement used again while it steps: \(sql)")
        stepping = true
        sqlite3_reset(handle)
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            stepping = false
        }
        return try body()
    }

    /// The values of one ``run(bindingInPlace:)``, bound in turn.
    public struct InPlaceBinding {
        let handle: OpaquePointer
        /// Only for an error's message (`unowned(unsafe)`: an `unowned`
        /// reference was retained and released at every value bound).
        unowned(unsafe) let statement: Statement
        var index: Int32 = 1

        public mutating func null() throws(SQLiteError) {
            try check(sqlite3_bind_null(handle, index))
        }

        public mutating func integer(_ n: Int64) throws(SQLiteError) {
            try check(sqlite3_bind_int64(handle, index, n))
        }

        public mutating func real(_ d: Double) throws(SQLiteError) {
            try check(sqlite3_bind_double(handle, index, d))
        }

        /// UTF-8 text of `count` bytes at `start` (never a null pointer:
        /// SQLite binds that as NULL, not '').
        public mutating func text(_ start: UnsafeRawPointer, count: Int) throws(SQLiteError) {
            try check(famctl_sqlite3_bind_text_static(handle, index, start.assumingMemoryBound(to: CChar.self), Int32(count)))
        }

        /// A blob of `count` bytes at `start`.
        public mutating func blob(_ start: UnsafeRawPointer, count: Int) throws(SQLiteError) {
            try check(count == 0 ? sqlite3_bind_zeroblob(handle, index, 0) : famctl_sqlite3_bind_blob_static(handle, index, start, Int32(count)))
        }

        private mutating func check(_ rc: Int32) throws(SQLiteError) {
            guard rc == SQLITE_OK else { throw statement.database.error(rc, sql: statement.sql) }
            index += 1
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

    /// Binds `values` to `?1, ?2, …`, runs `body`, then resets the
    /// statement and clears the bindings, so that no pointer outlives what
    /// it points to. Text and blobs are bound by pointer (SQLite reads them
    /// while stepping), not as SQLite's own copies: bound as copies, with
    /// their mallocs, values took a fifth of an append's storing thread in
    /// callgrind. Small values are first copied end to end into a buffer
    /// the statement keeps for this; larger ones are bound where they lie.
    func withBound<R>(_ values: [SQLValue], _ body: () throws -> R) throws -> R {
        try whileStepping { () throws -> R in
            var bytes = 0
            for v in values {
                switch v {
                case .text(let t): bytes += t.utf8.count
                case .blob(let b): bytes += b.count
                default: break
                }
            }
            if bytes <= Self.copiedLimit {
                try bindCopies(values, bytes: bytes)
                return try body()
            }
            return try bindInPlace(values, from: 0, body)
        }
    }

    /// The most bytes of text and blobs a binding copies into ``scratch``
    /// (a row of the projection is about 600 bytes; a rebuild inserts up to
    /// this much in one statement of several rows); beyond it values are
    /// bound where they lie, so that the buffer a statement keeps stays small.
    public static let copiedLimit = 64 << 10

    /// Where ``bindCopies(_:bytes:)`` copies a binding's text and blobs:
    /// grown to the largest binding so far (at most ``copiedLimit``), reused
    /// by every binding of this statement. Bound values point into it until
    /// the reset that ends ``withBound(_:_:)``.
    private var scratch: UnsafeMutableRawBufferPointer?

    /// Set while ``withBound(_:_:)`` or ``run(bindingInPlace:)`` runs.
    private var stepping = false

    /// Each value bound in turn; text and blobs copied into ``scratch``
    /// first. (The nested closures of ``bindInPlace(_:from:_:)``, a level
    /// and a retained context per value, cost about 6 000 instructions for
    /// a projection row's fourteen values.)
    private func bindCopies(_ values: [SQLValue], bytes: Int) throws(SQLiteError) {
        if (scratch?.count ?? 0) < max(bytes, 1) {
            scratch?.deallocate()
            scratch = .allocate(byteCount: min(Self.copiedLimit, max(256, bytes, 2 * (scratch?.count ?? 0))), alignment: 8)
        }
        let base = scratch!.baseAddress!
        var offset = 0
        for i in values.indices {
            let idx = Int32(i + 1)
            let rc: Int32
            switch values[i] {
            case .null, .integer, .real: rc = bindNumberOrNull(values[i], idx)
            case .text(let t):
                let at = base + offset
                let n = t.utf8.withContiguousStorageIfAvailable { u -> Int in
                    if let p = u.baseAddress { at.copyMemory(from: p, byteCount: u.count) }
                    return u.count
                } ?? {
                    var n = 0
                    for byte in t.utf8 { at.storeBytes(of: byte, toByteOffset: n, as: UInt8.self); n += 1 }
                    return n
                }()
                // Never a null pointer: SQLite binds that as NULL, not ''.
                rc = famctl_sqlite3_bind_text_static(handle, idx, at.assumingMemoryBound(to: CChar.self), Int32(n))
                offset += n
            case .blob(let b):
                let at = base + offset
                b.withUnsafeBytes { p in
                    if let src = p.baseAddress { at.copyMemory(from: src, byteCount: p.count) }
                }
                rc = b.isEmpty ? sqlite3_bind_zeroblob(handle, idx, 0) : famctl_sqlite3_bind_blob_static(handle, idx, at, Int32(b.count))
                offset += b.count
            }
            guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
        }
        assert(offset == bytes)
    }

    /// Binds a value that points to nothing (a number or NULL).
    private func bindNumberOrNull(_ value: SQLValue, _ idx: Int32) -> Int32 {
        switch value {
        case .integer(let n): sqlite3_bind_int64(handle, idx, n)
        case .real(let d): sqlite3_bind_double(handle, idx, d)
        case .null, .text, .blob: sqlite3_bind_null(handle, idx)
        }
    }

    private func bindInPlace<R>(_ values: [SQLValue], from i: Int, _ body: () throws -> R) throws -> R {
        guard i < values.count else { return try body() }
        let idx = Int32(i + 1)
        let rc: Int32
        switch values[i] {
        case .null, .integer, .real: rc = bindNumberOrNull(values[i], idx)
        case .text(var s):
            return try s.withUTF8 { u in
                let rc = u.withMemoryRebound(to: CChar.self) { c in
                    // Empty text is copied (nothing to copy): there is no pointer to keep.
                    c.baseAddress.map { famctl_sqlite3_bind_text_static(handle, idx, $0, Int32(c.count)) }
                        ?? famctl_sqlite3_bind_text_transient(handle, idx, "", 0)
                }
                guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
                return try bindInPlace(values, from: i + 1, body)
            }
        case .blob(let b):
            return try b.withUnsafeBytes { p in
                let rc = p.baseAddress.map { famctl_sqlite3_bind_blob_static(handle, idx, $0, Int32(p.count)) }
                    ?? sqlite3_bind_zeroblob(handle, idx, 0)
                guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
                return try bindInPlace(values, from: i + 1, body)
            }
        }
        guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
        return try bindInPlace(values, from: i + 1, body)
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
    /// The bytes of column `i` as stored (a blob's, or a text's UTF-8),
    /// without a copy: SQLite's own buffer, valid until the statement steps
    /// again, so only inside the callback that was given this row, and
    /// never kept beyond it.
    public func unsafeBytes(_ i: Int32) -> UnsafeRawBufferPointer {
        // `sqlite3_column_blob` first, then the size, as SQLite advises.
        let p = sqlite3_column_blob(statement.handle, i)
        let n = Int(sqlite3_column_bytes(statement.handle, i))
        return UnsafeRawBufferPointer(start: n > 0 ? p : nil, count: n)
    }
}
