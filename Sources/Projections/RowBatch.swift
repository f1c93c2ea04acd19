import EventLog
import Foundation

/// Rows of one table gathered during a rebuild's pass and inserted several
/// to a statement.
///
/// One `INSERT` of one row opens the table and its indexes, finds its
/// place in each and closes them again; with a whole batch of rows in one
/// statement that is done once a batch, not once a row (the insert's
/// instructions fell by about a tenth, a rebuild of 1M events took about
/// 8 % less time).
///
/// A row's values are kept as bytes, not as ``SQLValue``s: its texts and
/// blobs copied end to end into one buffer (``Buffer``), and for each value
/// a ``Slot`` that says what it is and where its bytes lie. The insert
/// binds them from there (``Statement/run(bindingInPlace:)``). An array
/// of values retained every text and blob of every row, and released them
/// all again when the batch was inserted.
///
/// Nothing reads the table while rows wait here: the owner inserts them
/// first (``flush()``), or they belong to a table the pass only writes.
final class RowBatch {
    private let database: Database
    /// `INSERT … INTO table(columns) VALUES`, without the rows.
    private let head: String
    private let columns: Int
    /// The rows waiting.
    private var buffer = Buffer()
    private var rows = 0
    /// Prepared inserts of `n` rows, by `n`: 1, 2, 4, … ``maxRows``.
    private var statements: [Int: Statement] = [:]

    /// At most this many rows a statement: a power of two, at most
    /// ``rowLimit``, and at most as many as the connection's limit on a
    /// statement's parameters allows (``Database/variableLimit``: an
    /// SQLite before 3.32 takes 999, 55 rows of the entities' 18 columns,
    /// so 32 there).
    let maxRows: Int

    /// Rows a statement where the parameters' limit allows more.
    static let rowLimit = 64

    /// The rows waiting are inserted once their texts and blobs take this
    /// many bytes (a row is never cut: one larger than this goes in with
    /// those waiting before it, the arena grown to hold it).
    static let byteLimit = 48 << 10

    /// One value of a row waiting.
    struct Slot {
        enum Kind: UInt8 { case null, integer, real, text, blob }
        let kind: Kind
        /// The number (a real's bit pattern), or the offset of the bytes in the arena.
        let value: Int64
        let count: Int
    }

    init(database: Database, head: String, columns: Int) {
        self.database = database
        self.head = head
        self.columns = columns
        let fitting = max(1, min(Self.rowLimit, database.variableLimit / max(1, columns)))
        maxRows = 1 << (Int.bitWidth - 1 - fitting.leadingZeroBitCount)
    }

    deinit { buffer.deallocate() }

    /// Adds one row, its values written in order by `fill`, and inserts the
    /// batch when it is full.
    func add(_ fill: (inout Buffer) -> Void) throws {
        let from = buffer.slotCount
        fill(&buffer)
        precondition(buffer.slotCount - from == columns, "a row of \(buffer.slotCount - from) values for \(columns) columns")
        rows += 1
        if rows >= maxRows || buffer.used >= Self.byteLimit { try flush() }
    }

    /// Adds one row of `values`.
    func add(_ values: [SQLValue]) throws {
        try add { b in for v in values { b.value(v) } }
    }

    /// The values of the rows waiting (``Slot``s, row after row), and the
    /// bytes of their texts and blobs end to end (the arena): memory of its
    /// own, so that writing a value checks no exclusive access and retains
    /// nothing. Freed by its batch.
    struct Buffer: RowSink {
        private(set) var slots = UnsafeMutablePointer<Slot>.allocate(capacity: 64 * 18)
        private(set) var slotCount = 0
        private var slotCapacity = 64 * 18
        private(set) var arena = UnsafeMutableRawPointer.allocate(byteCount: RowBatch.byteLimit + 4 << 10, alignment: 8)
        private(set) var used = 0
        private var capacity = RowBatch.byteLimit + 4 << 10

        mutating func null() { push(Slot(kind: .null, value: 0, count: 0)) }
        mutating func integer(_ n: Int64) { push(Slot(kind: .integer, value: n, count: 0)) }
        mutating func real(_ d: Double) { push(Slot(kind: .real, value: Int64(bitPattern: d.bitPattern), count: 0)) }

        mutating func text(_ s: String) {
            let done: Void? = s.utf8.withContiguousStorageIfAvailable { u in
                append(.text, UnsafeRawBufferPointer(u))
            }
            if done == nil { Array(s.utf8).withUnsafeBytes { append(.text, $0) } }
        }

        mutating func blob(_ b: [UInt8]) { b.withUnsafeBytes { append(.blob, $0) } }

        mutating func blob(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
            let at = reserve(count)
            fill(UnsafeMutableRawBufferPointer(start: arena + at, count: count))
            push(Slot(kind: .blob, value: Int64(at), count: count))
        }

        /// Copies `bytes` to the end of the arena, as the next value.
        private mutating func append(_ kind: Slot.Kind, _ bytes: UnsafeRawBufferPointer) {
            let at = reserve(bytes.count)
            if let p = bytes.baseAddress, bytes.count > 0 { (arena + at).copyMemory(from: p, byteCount: bytes.count) }
            push(Slot(kind: kind, value: Int64(at), count: bytes.count))
        }

        private mutating func push(_ slot: Slot) {
            if slotCount == slotCapacity {
                let bigger = UnsafeMutablePointer<Slot>.allocate(capacity: 2 * slotCapacity)
                bigger.initialize(from: slots, count: slotCount)
                slots.deallocate()
                slots = bigger
                slotCapacity *= 2
            }
            (slots + slotCount).initialize(to: slot)
            slotCount += 1
        }

        /// The offset of `count` more bytes at the end of the arena, made room for.
        private mutating func reserve(_ count: Int) -> Int {
            if used + count > capacity {
                let grown = max(2 * capacity, used + count)
                let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
                bigger.copyMemory(from: arena, byteCount: used)
                arena.deallocate()
                arena = bigger
                capacity = grown
            }
            defer { used += count }
            return used
        }

        /// Whether `slot` is the text `s`.
        func equals(_ slot: Slot, _ s: String) -> Bool {
            guard slot.kind == .text else { return false }
            var s = s
            return s.withUTF8 { u in
                u.count == slot.count && (u.count == 0 || memcmp(arena + Int(slot.value), u.baseAddress!, u.count) == 0)
            }
        }

        /// Empties it, keeping its memory.
        mutating func removeAll() {
            slotCount = 0
            used = 0
        }

        func deallocate() {
            slots.deallocate()
            arena.deallocate()
        }
    }

    /// Whether a row of this entity is waiting: one whose first two values
    /// are the texts `kind` and `id` (the entities' table's first columns).
    func holds(kind: String, id: String) -> Bool {
        var r = 0
        while r < rows {
            if buffer.equals(buffer.slots[r * columns + 1], id), buffer.equals(buffer.slots[r * columns], kind) { return true }
            r += 1
        }
        return false
    }

    /// Inserts the rows waiting, in order: in statements of a power of two
    /// rows each (37 rows: 32, 4 and 1), so that a rebuild prepares at most
    /// seven statements a table, whatever sizes its read-backs leave.
    func flush() throws {
        guard rows > 0 else { return }
        defer { discard() }
        var done = 0
        var size = maxRows
        let (slots, arena) = (buffer.slots, buffer.arena)
        while done < rows {
            while size > rows - done { size /= 2 }
            let range = (done * columns)..<((done + size) * columns)
            try statement(rows: size).run { b throws(SQLiteError) in
                for i in range {
                    let s = slots[i]
                    switch s.kind {
                    case .null: try b.null()
                    case .integer: try b.integer(s.value)
                    case .real: try b.real(Double(bitPattern: UInt64(bitPattern: s.value)))
                    case .text: try b.text(arena + Int(s.value), count: s.count)
                    case .blob: try b.blob(arena + Int(s.value), count: s.count)
                    }
                }
            }
            done += size
        }
    }

    /// The insert of `n` rows, prepared once.
    private func statement(rows n: Int) throws(SQLiteError) -> Statement {
        if let s = statements[n] { return s }
        let row = "(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
        let s = try database.prepare(head + " " + Array(repeating: row, count: n).joined(separator: ","))
        statements[n] = s
        return s
    }

    /// Drops the rows waiting (the pass failed: its transaction rolls back).
    func discard() {
        buffer.removeAll()
        rows = 0
    }
}

/// Where the values of one row go, in column order: a ``RowBatch``'s
/// bytes, or an array of ``SQLValue`` for a statement of one row. One
/// function then says a row's columns for both.
protocol RowSink {
    mutating func null()
    mutating func integer(_ n: Int64)
    mutating func real(_ d: Double)
    mutating func text(_ s: String)
    mutating func blob(_ b: [UInt8])
    /// A blob of `count` bytes, written in place by `fill`.
    mutating func blob(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void)
}

extension RowSink {
    mutating func integer(_ n: Int64?) { if let n { integer(n) } else { null() } }
    mutating func text(_ s: String?) { if let s { text(s) } else { null() } }

    mutating func value(_ v: SQLValue) {
        switch v {
        case .null: null()
        case .integer(let n): integer(n)
        case .text(let t): text(t)
        case .blob(let b): blob(b)
        case .real(let d): real(d)
        }
    }
}

/// A row as an array of ``SQLValue``.
struct SQLValueRow: RowSink {
    var values: [SQLValue] = []

    init(capacity: Int) { values.reserveCapacity(capacity) }

    mutating func null() { values.append(.null) }
    mutating func integer(_ n: Int64) { values.append(.integer(n)) }
    mutating func real(_ d: Double) { values.append(.real(d)) }
    mutating func text(_ s: String) { values.append(.text(s)) }
    mutating func blob(_ b: [UInt8]) { values.append(.blob(b)) }
    mutating func blob(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        values.append(.blob([UInt8](unsafeUninitializedCapacity: count) { p, n in
            fill(UnsafeMutableRawBufferPointer(p))
            n = count
        }))
    }
}
