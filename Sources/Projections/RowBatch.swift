import EventLog

/// Rows of one table gathered during a rebuild's pass and inserted several
/// to a statement.
///
/// One `INSERT` of one row opens the table and its indexes, finds its
/// place in each and closes them again; with a whole batch of rows in one
/// statement that is done once a batch, not once a row (the insert's
/// instructions fell by about a tenth, a rebuild of 1M events took about
/// 8 % less time).
/// Nothing reads the table while rows wait here: the owner inserts them
/// first (``flush()``), or they belong to a table the pass only writes.
final class RowBatch {
    private let database: Database
    /// `INSERT … INTO table(columns) VALUES`, without the rows.
    private let head: String
    private let columns: Int
    /// Each row's values, one row after another.
    private var values: [SQLValue] = []
    /// The entities of the rows waiting (for a table keyed by entity).
    private var keys: [(kind: String, id: String)] = []
    private var rows = 0
    /// Text and blob bytes waiting: a binding of at most
    /// ``Statement/copiedLimit`` bytes is copied into one buffer, the fast way.
    private var bytes = 0
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

    init(database: Database, head: String, columns: Int) {
        self.database = database
        self.head = head
        self.columns = columns
        let fitting = max(1, min(Self.rowLimit, database.variableLimit / max(1, columns)))
        maxRows = 1 << (Int.bitWidth - 1 - fitting.leadingZeroBitCount)
    }

    /// Adds one row, its values appended by `fill`, and inserts the batch
    /// when it is full. The rows waiting never hold more than
    /// ``Statement/copiedLimit`` bytes of text and blobs together (so that
    /// they are bound by copying, the fast way): a row that would take them
    /// past it is added after the others are inserted, and a row past it
    /// on its own is inserted alone.
    func add(kind: String = "", id: String = "", _ fill: (inout [SQLValue]) -> Void) throws {
        let from = values.count
        fill(&values)
        precondition(values.count - from == columns, "a row of \(values.count - from) values for \(columns) columns")
        var size = 0
        for v in values[from...] {
            switch v {
            case .text(let t): size += t.utf8.count
            case .blob(let b): size += b.count
            default: break
            }
        }
        if rows > 0, bytes + size > Statement.copiedLimit {
            let row = Array(values[from...])
            values.removeSubrange(from...)
            try flush()
            values.append(contentsOf: row)
        }
        keys.append((kind, id))
        rows += 1
        bytes += size
        if rows >= maxRows || bytes >= Statement.copiedLimit * 3 / 4 { try flush() }
    }

    /// Whether a row of this entity is waiting.
    func holds(kind: String, id: String) -> Bool {
        keys.contains { $0.id == id && $0.kind == kind }
    }

    /// Inserts the rows waiting, in order: in statements of a power of two
    /// rows each (37 rows: 32, 4 and 1), so that a rebuild prepares at most
    /// seven statements a table, whatever sizes its read-backs leave.
    func flush() throws {
        guard rows > 0 else { return }
        defer { discard() }
        if rows == maxRows { return try statement(rows: rows).run(values) }
        var done = 0
        var size = maxRows
        while done < rows {
            while size > rows - done { size /= 2 }
            try statement(rows: size).run(Array(values[(done * columns)..<((done + size) * columns)]))
            done += size
        }
    }

    /// The insert of `n` rows, prepared once.
    private func statement(rows n: Int) throws -> Statement {
        if let s = statements[n] { return s }
        let row = "(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
        let s = try database.prepare(head + " " + Array(repeating: row, count: n).joined(separator: ","))
        statements[n] = s
        return s
    }

    /// Drops the rows waiting (the pass failed: its transaction rolls back).
    func discard() {
        values.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        rows = 0
        bytes = 0
    }
}
