import Envelope
import EventLog
import Foundation

/// Materialises the log into SQLite tables: care subjects and the records of
/// the ten stores, by field-level last-writer-wins with tombstones.
///
/// The merge rule, applied per event in any order with the same result:
/// - each field keeps the value of its highest-versioned write, where the
///   version is the total order (hlc, author key); a `null` write clears it;
/// - a delete is a tombstone with its own version; a record is live when its
///   newest put is newer than its newest delete;
/// - a live record shows every field it holds, whenever written (a put
///   newer than a delete brings it back whole).
///
/// Everything here is rebuilt from the log by ``reset()`` and applying every
/// event again; applying incrementally gives the same state.
public final class Projector {
    /// 12: carried puts (`carried`) merge at their earlier moment; a
    /// projection made before is rebuilt so that it does too.
    /// 13: `subject.delete`, which a famctl before ignored (not deferred):
    /// a projection made before is rebuilt so that a removal it skipped
    /// applies. 14: record schema 3 (`focusSince`), which a famctl before
    /// deferred. 15: the sleeps' intervals indexed (`span_start_ms`,
    /// `span_end_ms`, ``EntityState/SpanKey``). 16: indexed by their
    /// length class too (`span_class`, ``EntityState/SpanKey/lengthClass``),
    /// so that a sleep older than most of the baby's reads few keys.
    public static let schemaVersion = 16
    public let database: Database
    /// The schema (`main`, or an attached database's name) holding the tables.
    public let schema: String
    /// The family whose events this projection holds (join proofs name it).
    public let family: FamilyID
    /// Membership as decided by the library events applied so far.
    public private(set) var household = Household()

    /// Opens (creating them when missing) the projection tables in `schema`
    /// of `database`.
    public init(database: Database, family: FamilyID, schema: String = "main") throws {
        self.database = database
        self.schema = schema
        self.family = family
        // Tables of an older layout are dropped, and the mark says the
        // projection was never built: the caller rebuilds it from the log.
        try database.execute("CREATE TABLE IF NOT EXISTS \(schema).p_schema(version INTEGER NOT NULL)")
        let stored = try database.statement("SELECT version FROM \(schema).p_schema").first { Int($0.int(0)) }
        if stored != Self.schemaVersion {
            try Self.drop(in: database, schema: schema)
            try database.execute("CREATE TABLE \(schema).p_schema(version INTEGER NOT NULL, mark INTEGER NOT NULL)")
            try database.run("INSERT INTO \(schema).p_schema(version, mark) VALUES(?1, -1)", [.integer(Int64(Self.schemaVersion))])
        }
        try database.execute("""
            CREATE TABLE IF NOT EXISTS \(schema).p_entities(
                entity INTEGER PRIMARY KEY,
                kind TEXT NOT NULL, id TEXT NOT NULL,
                put_version BLOB, delete_version BLOB, first_put BLOB,
                store TEXT, focus TEXT, at TEXT, at_ms INTEGER, fields BLOB NOT NULL, view INTEGER NOT NULL,
                span_start_ms INTEGER, span_end_ms INTEGER, span_class INTEGER,
                created_version BLOB, created_event BLOB NOT NULL, created_op TEXT NOT NULL, created_changes TEXT,
                UNIQUE(kind, id));
            CREATE INDEX IF NOT EXISTS \(schema).p_entities_view ON p_entities(view, at_ms);
            \(Self.spansIndex(schema: schema));
            CREATE TABLE IF NOT EXISTS \(schema).p_history(
                entity INTEGER NOT NULL, version BLOB NOT NULL,
                event BLOB NOT NULL, op TEXT NOT NULL, changes TEXT NOT NULL,
                PRIMARY KEY(entity, version)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(schema).p_deferred(event BLOB PRIMARY KEY, reason TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS \(schema).p_library(event BLOB PRIMARY KEY, version BLOB NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS \(schema).p_rejected(event BLOB PRIMARY KEY, author BLOB NOT NULL, seq INTEGER NOT NULL, reason TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS \(schema).p_authors(author BLOB PRIMARY KEY) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(schema).p_keys(epoch INTEGER PRIMARY KEY);
            """)
        loadStatement = try database.prepare(
            "SELECT put_version, delete_version, coalesce(first_put, put_version), fields, store, focus, at, entity, created_version FROM \(schema).p_entities WHERE kind = ?1 AND id = ?2")
        // An entity that has a row already is left as it is (see `put`).
        insertStatement = try database.prepare("""
            INSERT INTO \(schema).p_entities(\(Self.insertColumns)) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
            ON CONFLICT(kind, id) DO NOTHING
            """)
        updateStatement = try database.prepare("""
            UPDATE \(schema).p_entities SET put_version = ?3, delete_version = ?4, first_put = ?5, store = ?6, focus = ?7, at = ?8, at_ms = ?9, fields = ?10,
                view = ?11, span_start_ms = ?12, span_end_ms = ?13, span_class = ?14,
                created_version = coalesce(created_version, ?15), created_changes = coalesce(created_changes, ?16)
            WHERE entity = ?1
            """)
        historyStatement = try database.prepare(
            "INSERT OR IGNORE INTO \(schema).p_history(\(Self.historyColumns)) VALUES(?1, ?2, ?3, ?4, ?5)")
        try refresh()
    }

    /// Reads again what another process may have written since this one
    /// last looked (``changeAuthors``, and the household when its events
    /// changed): called at the start of every write transaction, the write
    /// lock held, so that verdicts and the choice to rebuild go by the
    /// projection as it is. (Until every household event made a rebuild,
    /// the file switch did this.)
    public func refresh() throws {
        var authors = Set<DeviceID>()
        try database.prepare("SELECT author FROM \(schema).p_authors").forEachRow { authors.insert(DeviceID(bytes: $0.blob(0))) }
        changeAuthors = authors
        let stamp = try database.statement("SELECT count(*), coalesce(max(rowid), 0) FROM \(schema).p_library").first { [$0.int(0), $0.int(1)] } ?? []
        if stamp != libraryStamp {
            household = try loadHousehold()
            libraryStamp = stamp
        }
    }

    /// The authors of every record, subject and photo change applied to
    /// this projection, whatever its verdict (`p_authors`): only their
    /// verdicts can change when the household does.
    public private(set) var changeAuthors = Set<DeviceID>()
    /// The epochs of the family keys this projection opened events with
    /// (`p_keys`): a rebuild's pass notes the keys it starts with, and a
    /// device notes a key it makes itself (nothing was sealed under it
    /// before). A key the device holds beyond these may open events the
    /// projection skipped: the owner rebuilds.
    public func storedKeyEpochs() throws -> Set<UInt32> {
        var epochs = Set<UInt32>()
        try database.prepare("SELECT epoch FROM \(schema).p_keys").forEachRow { epochs.insert(UInt32($0.int(0))) }
        return epochs
    }

    /// Notes that events under the keys of `epochs` were opened (or that
    /// none were sealed under them before).
    public func noteKeys(_ epochs: some Sequence<UInt32>) throws {
        for e in epochs { try database.run("INSERT OR IGNORE INTO \(schema).p_keys(epoch) VALUES(?1)", [.integer(Int64(e))]) }
    }

    /// The row count and last rowid of `p_library` when ``household`` was folded.
    private var libraryStamp: [Int64] = [-1, -1]

    /// Notes `author` in ``changeAuthors`` (and `p_authors`) once.
    private func noteChangeAuthor(_ author: DeviceID) throws {
        guard !changeAuthors.contains(author) else { return }
        try database.run("INSERT OR IGNORE INTO \(schema).p_authors(author) VALUES(?1)", [.blob(author.bytes)])
        changeAuthors.insert(author)
    }

    /// Drops every projection table in `schema` (of any version).
    public static func drop(in database: Database, schema: String = "main") throws {
        try database.execute("""
            DROP TABLE IF EXISTS \(schema).p_entities; DROP TABLE IF EXISTS \(schema).p_fields; DROP TABLE IF EXISTS \(schema).p_history;
            DROP TABLE IF EXISTS \(schema).p_deferred; DROP TABLE IF EXISTS \(schema).p_library; DROP TABLE IF EXISTS \(schema).p_rejected;
            DROP TABLE IF EXISTS \(schema).p_schema; DROP TABLE IF EXISTS \(schema).p_authors; DROP TABLE IF EXISTS \(schema).p_keys;
            """)
    }

    /// What the owner of this projection recorded as the state of its
    /// source it reflects (famctl: the log position of the last event it
    /// saw), written in the same transaction as the changes; -1 for a
    /// projection never built.
    public func mark() throws -> Int64 {
        try database.statement("SELECT mark FROM \(schema).p_schema").first { $0.int(0) } ?? -1
    }

    /// Records ``mark()``.
    public func setMark(_ mark: Int64) throws {
        try database.run("UPDATE \(schema).p_schema SET mark = ?1", [.integer(mark)])
    }

    private let loadStatement: Statement
    private let insertStatement: Statement
    private let updateStatement: Statement
    private let historyStatement: Statement

    /// Folds the stored library events into the household.
    func loadHousehold() throws -> Household {
        var entries: [Household.Entry] = []
        try database.prepare("SELECT event, version, seq, body FROM \(schema).p_library").forEachRow { r in
            guard let v = Version(bytes: r.blob(1)),
                  let body = try? EventBody(decoding: Array(r.text(3).utf8)), let e = try? LibraryEvent(body) else { return }
            entries.append(Household.Entry(id: EventID(bytes: r.blob(0)), version: v, seq: UInt64(r.int(2)), event: e))
        }
        return Household(entries: entries, family: family)
    }

    /// Drops the stored household events of `author` from `seq` on (a
    /// forked author's, at or past its fork point), so that a rebuild that
    /// keeps the household events folds the household without them. (The
    /// author is the last 32 bytes of an event's version.)
    public func forgetLibraryEvents(of author: DeviceID, from seq: UInt64) throws {
        try database.run("DELETE FROM \(schema).p_library WHERE substr(version, 9) = ?1 AND seq >= ?2", [.blob(author.bytes), .integer(Int64(seq))])
    }

    /// Empties every projection table (before a rebuild). With
    /// `keepingLibrary`, the household events already stored stay, and the
    /// household is folded from them again: a rebuild then need not open
    /// those events, only the others.
    public func reset(keepingLibrary: Bool = false) throws {
        try database.execute("""
            DELETE FROM \(schema).p_entities; DELETE FROM \(schema).p_history; DELETE FROM \(schema).p_deferred; DELETE FROM \(schema).p_rejected;
            """)
        if keepingLibrary {
            household = try loadHousehold()
        } else {
            try database.execute("DELETE FROM \(schema).p_library")
            household = Household()
        }
        libraryStamp = [-1, -1]
    }

    /// Set inside ``bulk(expected:_:)``: the entities written so far.
    private var written: BloomFilter?
    /// Set inside ``bulk(expected:_:)``: the rows of new entities, and the
    /// history rows, not inserted yet. A new entity's row is inserted
    /// before the entity is read back.
    private var newRows: RowBatch?
    private var historyRows: RowBatch?

    /// The columns an insert of an entity's row writes, in order.
    static let insertColumns = "kind, id, put_version, delete_version, first_put, store, focus, at, at_ms, fields, view, span_start_ms, span_end_ms, span_class, created_version, created_event, created_op, created_changes"

    /// The index of the sleeps' intervals (``EntityState/SpanKey``), of the
    /// rows that have one, by view, length class and start: a sleep's
    /// possible overlaps are, in each class of its view, the keys whose
    /// start lies between the lowest start a key of that class ending at or
    /// after its start can have (``EntityState/SpanKey/lowestStart(endingAtOrAfter:lengthClass:)``)
    /// and its end, whose ends are then compared from the index alone.
    static func spansIndex(schema: String) -> String {
        "CREATE INDEX IF NOT EXISTS \(schema).p_entities_spans ON p_entities(view, span_class, span_start_ms, span_end_ms) WHERE span_end_ms IS NOT NULL"
    }
    /// The columns of a history row, in order.
    static let historyColumns = "entity, version, event, op, changes"

    /// Runs `body` — a rebuild's pass into emptied tables — so that an
    /// entity not yet written is known to be new without a lookup, an
    /// entity changed again soon after is changed in memory (see
    /// ``HeldEntities``), and the view index is made once at the end
    /// (sorted, in bulk) instead of row by row. Run inside the caller's
    /// transaction: should `body` throw, the transaction's rollback restores
    /// the index, and the entities held are dropped with it. Nothing may read
    /// `p_entities` but through ``apply(_:prepared:)`` until it returns.
    public func bulk<T>(expected: Int, _ body: () throws -> T) throws -> T {
        written = BloomFilter(capacity: expected)
        held = HeldEntities(capacity: heldCapacity)
        // `OR FAIL`, not the default `ABORT`: a statement of many rows that
        // may abort has SQLite keep a statement journal, a copy of every
        // page it changes that the transaction had changed before it (whole
        // 32 KiB pages, in memory: the new file's journal is), so that the
        // statement alone can be undone. Callgrind of a rebuild of 20 002
        // events put 15 % of the projecting thread's instructions there
        // (`subjournalPageIfRequired`, 11 640 pages copied). Nothing undoes
        // a statement alone here: a row that breaks a constraint fails the
        // statement, and the error rolls the rebuild's whole transaction back.
        newRows = RowBatch(database: database, head: "INSERT OR FAIL INTO \(schema).p_entities(\(Self.insertColumns)) VALUES", columns: 18)
        historyRows = RowBatch(database: database, head: "INSERT OR IGNORE INTO \(schema).p_history(\(Self.historyColumns)) VALUES", columns: 5)
        defer {
            written = nil
            held = nil
            newRows = nil
            historyRows = nil
        }
        // The sleeps' index stays: a few of the rows, their keys nearly in
        // order; made at the end, it cost a second pass over the table.
        try database.execute("DROP INDEX IF EXISTS \(schema).p_entities_view")
        let result = try body()
        try newRows?.flush()
        try writeHeld(all: true)
        try historyRows?.flush()
        // The index's sort keeps up to the page cache's size in memory, on
        // top of the cache itself: at 1M events that took the rebuild past
        // its 100 MB budget. A smaller cache while it is built bounds both
        // (the sort spills to a temporary file beyond it); the helper
        // thread below keeps runs of its own besides (8 MB at 1M events).
        let cache = try database.statement("PRAGMA \(schema).cache_size").first { $0.int(0) } ?? -2000
        try database.execute("PRAGMA \(schema).cache_size=-8192")
        defer { try? database.execute("PRAGMA \(schema).cache_size=\(cache)") }
        // One helper thread sorts the index's runs while this one reads the
        // table: the pass's other thread is idle by now. (With records of
        // many stores, subjects and times, 1M rows: 1.1 s → 0.8 s; with
        // every key alike, as an earlier benchmark wrote them, no gain.)
        let threads = try database.statement("PRAGMA threads").first { $0.int(0) } ?? 0
        try database.execute("PRAGMA threads=\(max(threads, 1))")
        defer { try? database.execute("PRAGMA threads=\(threads)") }
        try database.execute("CREATE INDEX IF NOT EXISTS \(schema).p_entities_view ON p_entities(view, at_ms)")
        return result
    }

    /// The stored state of one entity, or an empty one: without a lookup
    /// when a bulk pass has not written it yet.
    private func loadForWrite(kind: String, id: String) throws -> (StoredRow?, EntityState) {
        if written != nil, !written!.insertReportingPresence(kind: kind, id: id) {
            return (nil, EntityState())
        }
        if let h = held?.entities[HeldEntities.Key(kind: kind, id: id)] { return (h.row, h.state) }
        if newRows?.holds(kind: kind, id: id) == true { try newRows?.flush() }
        return try load(kind: kind, id: id)
    }

    /// Inside ``bulk(expected:_:)``: entities changed after their row was
    /// written, whose row is written back later.
    private(set) var held: HeldEntities?

    /// How many entities a rebuild holds at most: enough for the records a
    /// family changes together (a feeding, a sleep and their edits), few
    /// enough to stay well inside the rebuild's memory budget (a few hundred
    /// bytes each). (Tests make it small, to write entities back often.)
    var heldCapacity = 4_096

    /// A rebuild's recently changed entities. The first event of an entity
    /// writes its row; the next one reads the row back, and from then on the
    /// entity's state stays here, each later event merged into it in memory
    /// (its history row written at once), and the row is written once, when
    /// the entity leaves (the oldest first, beyond the capacity or the byte
    /// budget) or the pass
    /// ends. A record changed ten times in a row then costs one insert, one
    /// read and one update instead of ten of each. A rebuild of records
    /// written once never holds anything.
    struct HeldEntities {
        struct Key: Hashable {
            let kind: String
            let id: String
        }
        struct Entity {
            let row: StoredRow
            var state: EntityState
            /// About what `state` holds, in bytes (its fields' text).
            var bytes: Int
        }
        let capacity: Int
        /// At most this many bytes of field text held: a record's field may
        /// be large (a body may reach 1 MiB), and the rebuild has a memory
        /// budget.
        static let byteBudget = 8 << 20
        var entities: [Key: Entity] = [:]
        var bytes = 0
        var isFull: Bool { entities.count > capacity || bytes > Self.byteBudget }
        /// Keys in the order they were first held: the next to leave first.
        var order: [Key] = []
        var next = 0
    }

    /// Writes back the held entities beyond the capacity (the oldest), or
    /// all of them.
    private func writeHeld(all: Bool) throws {
        guard var h = held else { return }
        held = nil
        defer { held = h }
        while h.next < h.order.count, all || h.isFull {
            let key = h.order[h.next]
            if let e = h.entities[key] {
                try writeRow(kind: key.kind, id: key.id, row: e.row, e.state)
                h.entities[key] = nil
                h.bytes -= e.bytes
            }
            h.next += 1
        }
        if h.next == h.order.count || h.next > h.capacity {
            h.order.removeFirst(h.next)
            h.next = 0
        }
    }

    /// The household events this projection holds, with their authors, in version order.
    public func libraryEvents() throws -> [(author: DeviceID, event: LibraryEvent)] {
        var out: [(Version, LibraryEvent)] = []
        try database.prepare("SELECT version, body FROM \(schema).p_library").forEachRow { r in
            guard let v = Version(bytes: r.blob(0)), let body = try? EventBody(decoding: Array(r.text(1).utf8)),
                  let e = try? LibraryEvent(body) else { return }
            out.append((v, e))
        }
        return out.sorted { $0.0 < $1.0 }.map { ($0.0.author, $0.1) }
    }

    /// The household events this projection holds.
    public func libraryEventIDs() throws -> Set<EventID> {
        var out: Set<EventID> = []
        try database.prepare("SELECT event FROM \(schema).p_library").forEachRow { out.insert(EventID(bytes: $0.blob(0))) }
        return out
    }

    /// What applying one event did.
    public enum Applied: Sendable, Equatable {
        case record(UUID)
        case subject(FocusKey)
        case photo(UUID)
        /// A household event. `verdictsChange`: the verdicts of changes
        /// already projected may differ now (a rule of one of their authors
        /// changed, see ``Household/judgesOtherwise(than:anyOf:)``): the
        /// caller rebuilds (library events first, see ``Household``).
        case library(LibraryEvent, verdictsChange: Bool)
        /// Not authorized (the reason is kept for the audit).
        case rejected(String)
        /// Not a projected type (unknown, or of another family).
        case ignored
        /// A record event this version cannot apply yet (unknown store, newer
        /// schema); kept in the log and applied after an upgrade's rebuild.
        case deferred(String)
    }

    /// Applies one verified, decrypted event of this family. Idempotent.
    ///
    /// Record and care-subject events are checked against the household as it
    /// stands; library events are stored and folded into it. A rebuild applies
    /// every library event before any other, so verdicts never depend on the
    /// order events arrived in.
    @discardableResult
    public func apply(_ env: SyncEnvelope, body: EventBody) throws -> Applied {
        try apply(env, prepared: PreparedChange(body))
    }

    /// ``apply(_:body:)`` of the change an event's body makes,
    /// however it was read (``PreparedChange/init(_:version:)`` or
    /// ``PreparedChange/init(recordBody:version:)``).
    @discardableResult
    public func apply(_ env: SyncEnvelope, prepared p: PreparedChange) throws -> Applied {
        guard env.family == family else { return .ignored }
        let version = p.version ?? Version(env)
        // Library types are never `isChange`: household events are judged by the fold, not here.
        if p.isChange {
            try noteChangeAuthor(env.author)
            if let why = household.writeVerdict(author: env.author, seq: env.seq, version: version, needsWrite: true) {
                try reject(env, why)
                return .rejected(why)
            }
        }
        switch p.change {
        case .library(let lib, let body):
            try database.run("INSERT OR IGNORE INTO \(schema).p_library(event, version, seq, body) VALUES(?1, ?2, ?3, ?4)",
                             [.blob(env.id.bytes), .blob(version.bytes), .integer(Int64(env.seq)), .text(String(decoding: body.encoded(), as: UTF8.self))])
            let before = household
            household = try loadHousehold()
            libraryStamp = [-1, -1]
            return .library(lib, verdictsChange: household.judgesOtherwise(than: before, anyOf: changeAuthors))
        case .malformed(let e):
            // A body of a known type with missing keys: rejected with the
            // reason, never a reason to stall the batch it came in.
            try reject(env, "malformed \(p.type): \(e)")
            return .rejected("\(e)")
        case .deferred(let reason): return try defer_(env, reason)
        case .put(let change):
            try put(change, version: p.writeVersion(version), focusVersion: p.focusWriteVersion(version), event: env.id)
            return change.result
        case .delete(let kind, let id, let result):
            try delete(kind: kind, id: id, version: version, event: env.id)
            return result
        case .ignored: return .ignored
        }
    }

    private func reject(_ env: SyncEnvelope, _ why: String) throws {
        try database.run("INSERT OR IGNORE INTO \(schema).p_rejected(event, author, seq, reason) VALUES(?1, ?2, ?3, ?4)",
                         [.blob(env.id.bytes), .blob(env.author.bytes), .integer(Int64(env.seq)), .text(why)])
    }

    private func defer_(_ env: SyncEnvelope, _ reason: String) throws -> Applied {
        try database.run("INSERT OR IGNORE INTO \(schema).p_deferred(event, reason) VALUES(?1, ?2)", [.blob(env.id.bytes), .text(reason)])
        return .deferred(reason)
    }

    // MARK: - Entity rows

    /// Where an entity is stored: its row number, and the version of the
    /// event that created the row (whose history entry the row holds).
    struct StoredRow {
        let entity: Int64
        let created: [UInt8]
        /// For a row its creating put alone wrote (stored without its
        /// history entry's version and changes: see ``save(kind:id:row:_:entry:)``),
        /// those changes, written into the row at its first update.
        var creatingChanges: String?
    }

    /// The history entry of the event that creates an entity's row, kept in
    /// the row (`created_…`) rather than in `p_history`: a rebuild, where
    /// nearly every event creates its entity, then writes one row per event,
    /// not two. Later entries go to `p_history`.
    struct HistoryEntryRow {
        let version: Version
        let event: EventID
        let op: String
        let changes: String
    }

    /// The stored state of one entity and where it is, or an empty one.
    func load(kind: String, id: String) throws -> (StoredRow?, EntityState) {
        try loadStatement.first([.text(kind), .text(id)]) { r -> (StoredRow?, EntityState) in
            // Merged into and written back, a damaged row would lose what it held: refused instead.
            var e = try Self.entityState(r, kind: kind, id: id, put: 0)
            e.store = r.isNull(4) ? nil : r.text(4)
            e.focus = r.isNull(5) ? nil : r.text(5)
            e.at = r.isNull(6) ? nil : r.text(6)
            if r.isNull(8) {
                // Written by its creating put alone: that put's version and changes are the row's own.
                return (StoredRow(entity: r.int(7), created: r.blob(0), creatingChanges: EntityState.putTrail(of: e.fields)), e)
            }
            return (StoredRow(entity: r.int(7), created: r.blob(8)), e)
        } ?? (nil, EntityState())
    }

    /// Writes an entity row, with the winning `store`, `focus` and `at` copied
    /// out for indexed queries (`at_ms`: the `at` as a moment, whatever its
    /// offset), and the history entry of the event being applied: in the
    /// row when the event creates it, in `p_history` otherwise. A new entity
    /// gets the next row number, so the history rows of new records land at
    /// the end of their table rather than all over it.
    ///
    /// A row that a put creates (``insertFresh(_:version:event:)``, not
    /// this function, which writes every column) is stored without what its other columns
    /// already say: its first put (`first_put` is `NULL`: the newest put's),
    /// and its history entry's version and changes (`created_version` and
    /// `created_changes` are `NULL`: the put's version, and the fields it
    /// wrote, which are the row's fields). Its first update writes them.
    /// Three copies of the version and one of the changes less: a row of a
    /// rebuild of the household's records took about 700 bytes, about 400
    /// after.
    func save(kind: String, id: String, row: StoredRow?, _ e: EntityState, entry: HistoryEntryRow) throws {
        if let row {
            if held != nil {
                // A rebuild: the row is written when the entity leaves the held ones.
                let key = HeldEntities.Key(kind: kind, id: id)
                let bytes = e.fields.values.reduce(0) { $0 + ($1.text?.utf8.count ?? 0) }
                let previous = held!.entities.updateValue(HeldEntities.Entity(row: row, state: e, bytes: bytes), forKey: key)
                held!.bytes += bytes - (previous?.bytes ?? 0)
                if previous == nil { held!.order.append(key) }
                if held!.isFull { try writeHeld(all: false) }
            } else {
                try writeRow(kind: kind, id: id, row: row, e)
            }
            // Applying the creating event again changes nothing; a later one
            // is recorded once (the table's key is the entity and version).
            if entry.version.bytes != row.created {
                let values: [SQLValue] = [.integer(row.entity), .blob(entry.version.bytes), .blob(entry.event.bytes), .text(entry.op), .text(entry.changes)]
                if let historyRows {
                    try historyRows.add(values)
                } else {
                    try historyStatement.run(values)
                }
            }
            return
        }
        // (A put that creates its entity's row goes through `insertFresh`,
        // which leaves out what the row's other columns say; here every
        // column is written.)
        func fill(_ values: inout [SQLValue]) {
            appendColumns(of: e, to: &values, first: .text(kind), kind: kind, id: id)
            values.append(.blob(entry.version.bytes))
            values.append(.blob(entry.event.bytes))
            values.append(.text(entry.op))
            values.append(.text(entry.changes))
        }
        if let newRows {
            // A bulk pass: inserted with the next new entities.
            var values: [SQLValue] = []
            values.reserveCapacity(18)
            fill(&values)
            return try newRows.add(values)
        }
        // Sized for the insert's eighteen values: appending the history
        // columns to a literal of fourteen reallocated it for every new entity.
        var values: [SQLValue] = []
        values.reserveCapacity(18)
        fill(&values)
        try insertStatement.run(values)
    }

    /// Updates an existing entity's row to `e`.
    private func writeRow(kind: String, id: String, row: StoredRow, _ e: EntityState) throws {
        var values: [SQLValue] = []
        values.reserveCapacity(16)
        appendColumns(of: e, to: &values, first: .integer(row.entity), kind: kind, id: id)
        values.append(.blob(row.created))
        values.append(row.creatingChanges.map { .text($0) } ?? .null)
        try updateStatement.run(values)
    }

    /// The `view` column: the entity's kind, focus and store as one
    /// number, so that the view index is `(view, at_ms)`: its sort at the
    /// end of a rebuild then compares two integers, not three texts (1M
    /// rows, one thread: 1.1 s → 0.45 s). Two views that share a number
    /// only cost a query rows it filters out: it checks the texts too.
    ///
    /// Each text's UTF-8 bytes are taken eight at a time as little-endian
    /// words (the last one filled with zero bytes), then its length times
    /// 256 plus one; a missing focus or store is the one word 2⁶⁴ − 1.
    /// Every word is mixed in by `h = (h ^ w) × 0xBF58476D1CE4E5B9; h ^=
    /// h >> 31` from `h = 0x9E3779B97F4A7C15` (a byte at a time, FNV-1a,
    /// took a thousand instructions an entity).
    public static func view(kind: String, focus: String?, store: String?) -> Int64 {
        Int64(bitPattern: viewFeed(viewFeed(viewFeed(0x9E37_79B9_7F4A_7C15, kind), focus), store))
    }

    @inline(__always) private static func viewMix(_ h: UInt64, _ w: UInt64) -> UInt64 {
        let x = (h ^ w) &* 0xBF58_476D_1CE4_E5B9
        return x ^ (x >> 31)
    }

    /// ``view(kind:focus:store:)``'s hash `h` with one more text mixed in.
    private static func viewFeed(_ h: UInt64, _ s: String?) -> UInt64 {
        guard let s else { return viewMix(h, .max) }
        let done = s.utf8.withContiguousStorageIfAvailable { u -> UInt64 in
            var h = h
            var i = 0
            let raw = UnsafeRawBufferPointer(u)
            while i + 8 <= raw.count {
                h = viewMix(h, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
                i += 8
            }
            if i < raw.count {
                var w: UInt64 = 0
                for k in i..<raw.count { w |= UInt64(raw[k]) << (8 * UInt64(k - i)) }
                h = viewMix(h, w)
            }
            return viewMix(h, UInt64(raw.count) << 8 | 1)
        }
        if let done { return done }
        // A string not stored as UTF-8 (bridged): once more, made native.
        var native = s
        native.makeContiguousUTF8()
        return viewFeed(h, native)
    }

    /// The fourteen values the insert and the update share (`?1` is the kind for
    /// an insert, the row number for an update).
    private func appendColumns(of e: EntityState, to values: inout [SQLValue], first: SQLValue, kind: String, id: String) {
        values.append(first)
        values.append(.text(id))
        values.append(e.put.map { .blob($0.bytes) } ?? .null)
        values.append(e.delete.map { .blob($0.bytes) } ?? .null)
        values.append(e.firstPut.map { .blob($0.bytes) } ?? .null)
        values.append(e.store.map { .text($0) } ?? .null)
        values.append(e.focus.map { .text($0) } ?? .null)
        values.append(e.at.map { .text($0) } ?? .null)
        values.append(e.atMilliseconds.map { .integer($0) } ?? .null)
        values.append(.blob(e.encodedFields()))
        values.append(.integer(Self.view(kind: kind, focus: e.focus, store: e.store)))
        let span = e.spanKey
        values.append(span.map { .integer($0.start) } ?? .null)
        values.append(span.map { .integer($0.end) } ?? .null)
        values.append(span.map { .integer($0.lengthClass) } ?? .null)
    }

    /// - Parameter focusVersion: the version `$focus` is written at, when
    ///   not the put's (``PreparedChange/focusWriteVersion(_:)``): such a
    ///   put is merged field by field even when it creates its entity (the
    ///   row made ahead has every field at the put's version).
    private func put(_ change: PreparedChange.Put, version: Version, focusVersion: Version? = nil, event: EventID) throws {
        let (kind, id) = (change.kind, change.id)
        if let focusVersion {
            var (row, e) = try loadForWrite(kind: kind, id: id)
            e.merge(put: change.written, version: version, overriding: ["$focus": focusVersion])
            return try save(kind: kind, id: id, row: row, e, entry: HistoryEntryRow(version: version, event: event, op: "put", changes: change.trail))
        }
        if self.written == nil {
            // Outside a rebuild's pass, the entity is first taken to be new
            // (a record added or imported, most of what arrives from the
            // others): its row is inserted without a lookup, and an insert
            // that finds the entity's row through the same index does nothing.
            // Only then is the row read and merged into.
            try insertFresh(change, version: version, event: event)
            if database.changes > 0 { return }
        }
        var (row, e) = try loadForWrite(kind: kind, id: id)
        if row == nil {
            // A new entity: the merge into an empty state was made ahead.
            try insertFresh(change, version: version, event: event)
        } else {
            e.merge(put: change.written, version: version)
            try save(kind: kind, id: id, row: row, e, entry: HistoryEntryRow(version: version, event: event, op: "put", changes: change.trail))
        }
    }

    /// Inserts the row of an entity a put creates, from the row made ahead
    /// (``PreparedChange/FreshRow``): ``save(kind:id:row:_:entry:)`` of
    /// `change.fresh.row(at: version)` and the put's history entry, but for
    /// the columns ``save(kind:id:row:_:entry:)`` describes, its values
    /// taken straight from the change rather than from a copy of its state (each
    /// string and array of which was a retain and a release of memory the
    /// worker's core wrote).
    private func insertFresh(_ change: PreparedChange.Put, version: Version, event: EventID) throws {
        if let newRows { return try newRows.add { Self.freshRow(change, version: version, event: event, into: &$0) } }
        var row = SQLValueRow(capacity: 18)
        Self.freshRow(change, version: version, event: event, into: &row)
        try insertStatement.run(row.values)
    }

    /// The values of ``insertFresh(_:version:event:)``'s row, in the
    /// order of ``insertColumns``.
    @inline(__always)
    private static func freshRow<Sink: RowSink>(_ change: PreparedChange.Put, version: Version, event: EventID, into r: inout Sink) {
        r.text(change.kind)
        r.text(change.id)
        r.blob(version.bytes)
        r.null()   // delete_version
        r.null()   // first_put: the put's own (see `save`)
        r.text(change.fresh.state.store)
        r.text(change.fresh.state.focus)
        r.text(change.fresh.state.at)
        r.integer(change.fresh.atMilliseconds)
        r.blob(count: change.fresh.columnCount(at: version)) { change.fresh.writeColumn(at: version, into: $0) }
        r.integer(change.fresh.view)
        r.integer(change.fresh.spanKey?.start)
        r.integer(change.fresh.spanKey?.end)
        r.integer(change.fresh.spanKey?.lengthClass)
        r.null()   // created_version: the put's own
        r.blob(event.bytes)
        r.text("put")
        r.null()   // created_changes: the row's fields
    }

    private func delete(kind: String, id: String, version: Version, event: EventID) throws {
        var (row, e) = try loadForWrite(kind: kind, id: id)
        e.merge(delete: version)
        try save(kind: kind, id: id, row: row, e, entry: HistoryEntryRow(version: version, event: event, op: "delete", changes: "{}"))
    }
}

@available(*, unavailable)
extension Projector: Sendable {}
