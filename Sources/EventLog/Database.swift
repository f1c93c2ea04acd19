internal import CSQLite
import Foundation

/// One SQLite connection (`sqlite3*`), closed when released.
///
/// Not `Sendable`: one connection is used from one thread. The connection is
/// opened in WAL mode with `synchronous=FULL`, so a committed transaction has
/// been fsynced to the write-ahead log before the commit returns.
public final class Database {
    private(set) var handle: OpaquePointer
    public let path: String
    private var cache: [String: Statement] = [:]

    /// Opens (creating if asked) the database at `path`.
    /// - Throws: ``SQLiteError`` (`cantOpen`, `notADatabase`, `busy`, …).
    public init(path: String, create: Bool = true, readOnly: Bool = false) throws(SQLiteError) {
        _ = Self.libraryConfigured
        // No mutex on the connection: a `Database` is not `Sendable`, so one
        // thread at a time uses it (the compiler checks), and the serialised
        // mode's lock and unlock around every call were a fifth of an
        // append's storing thread in callgrind.
        // URI names for the databases it attaches (`file:…?mode=rw`: attach
        // an existing file, never create an empty one in its place); a plain
        // path opens as before.
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_URI
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        if !readOnly { Self.matchSidecarModes(path) }
        handle = try Self.open(Self.folderResolved(path), flags: flags)
        self.path = path
        do {
            try configure(readOnly: readOnly)
        } catch where Self.noRoom(error) {
            // A write-ahead-log database is read through its `-shm` file,
            // which SQLite grows to 32 KiB on first use: on a full disk (or
            // past a file-size limit) even a read fails there. Opened again
            // in exclusive locking mode, SQLite keeps that index in memory
            // and never touches the file, so what only reads still works
            // (and what writes fails as it would, the disk being full);
            // another process's connection waits for this one meanwhile.
            // The new connection is opened before the old one is closed: should
            // it fail, `handle` is still the one `deinit` closes.
            let first = error
            guard let fresh = try? Self.open(Self.folderResolved(path), flags: flags) else { throw first }
            sqlite3_close_v2(handle)
            handle = fresh
            do {
                try execute("PRAGMA locking_mode=EXCLUSIVE")
                try configure(readOnly: readOnly)
            } catch {
                // (Another process's connection, say, which exclusive mode must wait
                // for: what stopped the first attempt, the disk, is what to say.)
                throw first
            }
            lockedExclusively = true
        }
    }

    /// Whether the connection was opened in exclusive locking mode, its
    /// write-ahead-log index in memory, because the disk had no room for
    /// its `-shm` file (see ``init(path:create:readOnly:)``).
    public private(set) var lockedExclusively = false

    /// Notes that a database attached to this connection was opened in
    /// exclusive locking mode for the same reason (its `-shm` index in
    /// memory): another connection to it would wait for this one, so
    /// checks that open one are skipped, as for ``lockedExclusively``
    /// (the log itself goes back to normal locking).
    public func noteAttachedExclusively() { attachedExclusively = true }

    /// Whether a database attached to this connection is held in
    /// exclusive locking mode (``noteAttachedExclusively()``).
    public private(set) var attachedExclusively = false

    /// SQLite's extended codes for a `-shm` file it could not open, grow or map.
    static let sharedMemoryFailures: Set<Int32> = [4618 /* IOERR_SHMOPEN */, 4874 /* IOERR_SHMSIZE */, 5386 /* IOERR_SHMMAP */]

    /// Whether opening failed for want of room: the disk full, a quota or a
    /// file-size limit reached (by the system's error, not SQLite's code
    /// alone: a file system without shared memory maps, or a failing disk,
    /// is said as it is, not worked around).
    static func noRoom(_ e: SQLiteError) -> Bool {
        e.code == .full || ((e.code == .ioError || sharedMemoryFailures.contains(e.extendedCode)) && [ENOSPC, EFBIG, EDQUOT].contains(e.systemErrno))
    }

    /// `path` with the folder it lies in resolved (`realpath`), its last
    /// component as it is: SQLite, opened with `SQLITE_OPEN_NOFOLLOW`,
    /// refuses a name holding a symbolic link anywhere, and a home reached
    /// through one (a linked `$HOME` or parent folder) could not be opened
    /// or even made (a review). The file itself is still never a link
    /// followed. A `file:` URI, or a folder that cannot be resolved, is
    /// left as it is (SQLite says what is wrong).
    public static func folderResolved(_ path: String) -> String {
        guard !path.hasPrefix("file:"), let slash = path.lastIndex(of: "/") else { return path }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        guard let resolved = realpath(folder, nil) else { return path }
        defer { free(resolved) }
        let real = String(cString: resolved)
        return (real == "/" ? "" : real) + String(path[slash...])
    }

    private static func open(_ path: String, flags: Int32) throws(SQLiteError) -> OpaquePointer {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: message)
        }
        sqlite3_extended_result_codes(db, 1)
        _ = famctl_sqlite3_enable_defensive(db)
        // Another process holding the lock is waited for up to a minute,
        // with a note after a second (a rebuild of a million events takes
        // several seconds; five seconds' wait failed the commands meanwhile).
        _ = famctl_sqlite3_wait_when_busy(db, Int32(Self.busyWaitSeconds))
        return db
    }

    private func configure(readOnly: Bool) throws(SQLiteError) {
        if !readOnly {
            // 32 KiB pages for a new file (an existing one keeps its size):
            // SQLite reads and writes a page per system call, and with the
            // default 4 KiB a rebuild spent about a quarter of its projecting
            // thread in the kernel; 32 KiB pages made it about 1.4 times as
            // fast. The cost: a small commit writes whole 32 KiB pages (a
            // one-event `record add` at 1M events took 35.4 ms against 33.9).
            try execute("PRAGMA page_size=\(Self.newPageSize)")
            try execute("PRAGMA journal_mode=WAL")
        }
        // A 32 MiB page cache: with the default 2 MiB, a batch of appends or
        // ingests read index pages back with a pread each and spilled dirty
        // ones mid-transaction (both showed in the profile). A 16 MiB
        // write-ahead log before a checkpoint: pages written by consecutive
        // batches are copied into the database once, not once per batch.
        try execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-32768;")
        let pragma = try prepare("PRAGMA page_size")
        let pageSize = try pragma.step() ? Int(sqlite3_column_int64(pragma.handle, 0)) : 4096
        sqlite3_reset(pragma.handle)
        try execute("PRAGMA wal_autocheckpoint=\(max(1, Self.checkpointBytes / max(512, pageSize)))")
    }

    /// Gives a database's `-wal` and `-shm` files the mode of the file
    /// itself when it has its owner's write permission and they lack it.
    /// SQLite makes them with the file's mode: opened while the file was
    /// read-only (`chmod 0400`), it leaves them read-only, and once the
    /// file is writable again every open fails ("attempt to write a
    /// readonly database") for the `-shm` alone. What SQLite set at their
    /// creation is set again; a file that cannot be changed (another
    /// user's) is left as it is, and the open's error says so.
    public static func matchSidecarModes(_ path: String) {
        guard !path.hasPrefix("file:") else { return }
        var main = stat()
        guard stat(path, &main) == 0, main.st_mode & S_IWUSR != 0 else { return }
        for suffix in ["-wal", "-shm"] {
            var side = stat()
            guard lstat(path + suffix, &side) == 0, side.st_mode & S_IFMT == S_IFREG, side.st_mode & S_IWUSR == 0 else { continue }
            _ = chmod(path + suffix, main.st_mode & 0o777)
        }
    }

    /// The page size of a database file this creates.
    public static let newPageSize = 32_768
    /// How much write-ahead log accumulates before a checkpoint.
    public static let checkpointBytes = 16 << 20

    /// Process-wide settings made once, before the first connection: no
    /// memory statistics (their global mutex was taken by every allocation),
    /// and statement journals kept in memory up to
    /// ``statementJournalInMemory``. False if SQLite was initialised before
    /// (by a connection opened without this type), when they cannot apply.
    static let libraryConfigured: Bool = famctl_sqlite3_disable_memstatus() == SQLITE_OK
        && famctl_sqlite3_statement_journal_spill(Int32(statementJournalInMemory)) == SQLITE_OK

    /// How much of a statement journal stays in memory: all of it (`-1`).
    /// A statement of several rows in a transaction (the log's insert of a
    /// block of events, the projection's of a batch of rows) keeps the
    /// pages it changes that existed before it, to undo it alone if it
    /// fails; past SQLite's default of 64 KiB (two of our pages) that
    /// journal went to a temporary file. In a new device's first sync of
    /// 20 005 events that was 110 MB of writes, two thirds of everything the
    /// sync wrote (its system time: 0.119 s before, 0.101 s after, means of
    /// 12 runs). A statement's journal holds the pages it changes that
    /// existed before it, and in a write-ahead-log file also every such page
    /// the cache writes out while it runs: our statements change bounded
    /// numbers of rows, so their journals stay near the page cache's size;
    /// the largest is a migration's index made again over the whole log
    /// (tens of MB at 1M events, once).
    ///
    /// Never a threshold of 128 KiB or more: SQLite (3.40 at least) keeps
    /// the journal in memory as one chunk of the threshold's size, and moves
    /// it to the file with one write, which its unix layer cuts to the low
    /// 17 bits of the length and reports as SQLITE_FULL ("database or disk
    /// is full", no system error), rolling the whole transaction back. With
    /// 8 MiB here, a CREATE INDEX in a write-ahead-log file failed so once
    /// the cache wrote out more than 8 MiB of the transaction's pages
    /// through the statement's journal (`DatabaseSettingsTests`).
    public static let statementJournalInMemory = -1

    /// Runs `body` without waiting for another process's lock: a statement
    /// that needs it fails as busy at once (for what can wait for a later
    /// command, such as housekeeping at open).
    public func withoutWaiting<T>(_ body: () throws -> T) rethrows -> T {
        sqlite3_busy_handler(handle, nil, nil)
        defer { _ = famctl_sqlite3_wait_when_busy(handle, Int32(Self.busyWaitSeconds)) }
        return try body()
    }

    /// Ends every wait for another process's lock, in this process, now and
    /// from now on (the statement fails as busy): for a process that is
    /// stopping (`sync --watch` after Ctrl-C), which would otherwise sit out
    /// the wait.
    public static func cancelLockWaits() { famctl_sqlite3_cancel_busy_waits() }

    /// How long a connection waits for another process's lock before it
    /// fails with `SQLITE_BUSY`: a minute, or `FAMCTL_LOCK_WAIT` seconds
    /// (0 to 3600) for a script that would rather fail sooner.
    public static let busyWaitSeconds: Int = ProcessInfo.processInfo.environment["FAMCTL_LOCK_WAIT"].flatMap { Int($0) }.map { min(max($0, 0), 3600) } ?? 60

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that take no parameters (`sqlite3_exec`).
    public func execute(_ sql: String) throws(SQLiteError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// A prepared statement, cached by its SQL text.
    public func statement(_ sql: String) throws(SQLiteError) -> Statement {
        if let s = cache[sql] { return s }
        let s = try Statement(database: self, sql: sql)
        cache[sql] = s
        return s
    }

    /// A new, uncached statement: for reads that may nest inside another
    /// statement's rows.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// Runs `sql` with `values`.
    public func run(_ sql: String, _ values: [SQLValue] = []) throws(SQLiteError) {
        try statement(sql).run(values)
    }

    /// The virtual machine steps run by this connection's prepared
    /// statements since they were made or last counted with `reset`
    /// (`SQLITE_STMTSTATUS_VM_STEP`, summed over `sqlite3_next_stmt`): a
    /// measure of the work a query did that does not depend on the
    /// machine's speed, for tests of how much an index lets a query skip.
    /// Statements finalised meanwhile are not counted.
    public func statementSteps(reset: Bool = false) -> Int {
        var total = 0
        var next = sqlite3_next_stmt(handle, nil)
        while let s = next {
            total += Int(sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, reset ? 1 : 0))
            next = sqlite3_next_stmt(handle, s)
        }
        return total
    }

    /// The most parameters one statement may take
    /// (`SQLITE_LIMIT_VARIABLE_NUMBER`): 32 766 since SQLite 3.32, 999
    /// before, less where a build or ``lowerVariableLimit(to:)`` set it
    /// lower. Statements of many rows size themselves by it.
    public var variableLimit: Int { Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1)) }

    /// Lowers ``variableLimit`` for this connection (SQLite never raises it
    /// past its build's): a new SQLite working as an older one does, for
    /// tests of the statements that size themselves by it.
    public func lowerVariableLimit(to limit: Int) {
        _ = sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, Int32(clamping: max(1, min(limit, variableLimit))))
    }

    /// Whether no transaction is open (`sqlite3_get_autocommit`).
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// Number of rows changed by the last statement (`sqlite3_changes`).
    public var changes: Int { Int(sqlite3_changes(handle)) }

    public enum TransactionKind: String, Sendable {
        case deferred = "DEFERRED"
        /// Takes the write lock at once: used for appends.
        case immediate = "IMMEDIATE"
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when
    /// it throws and rethrows the first error.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue)")
        let result: T
        do {
            result = try body()
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        return result
    }

    func error(_ rc: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql, systemErrno: sqlite3_system_errno(handle))
    }
}

@available(*, unavailable)
extension Database: Sendable {}
