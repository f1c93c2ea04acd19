import Envelope
import EventLog
import Foundation

extension Projector {
    /// Filters for ``records(_:)``.
    public struct RecordQuery: Sendable {
        public var focus: String?
        public var store: String?
        public var includeDeleted = false
        /// Only records created by this device (the "keep private" view).
        public var creator: DeviceID?
        /// Only records that happened at or after this moment (their `at`,
        /// whatever its offset); a record without one is then not listed.
        public var since: Date?
        /// Only records that happened before this moment (not at it), as
        /// ``since``: `since` a day's midnight `until` the next is that day.
        public var until: Date?
        public init(focus: String? = nil, store: String? = nil, includeDeleted: Bool = false, creator: DeviceID? = nil,
                    since: Date? = nil, until: Date? = nil) {
            self.focus = focus
            self.store = store
            self.includeDeleted = includeDeleted
            self.creator = creator
            self.since = since
            self.until = until
        }

        /// Whether a record the query's rows hold is listed: the query's
        /// creator, when it has one, created it, and its moment is in the
        /// query's range, compared exactly (the rows are chosen by `at_ms`,
        /// whole milliseconds rounded down, a bound that may hold a record
        /// a fraction of a millisecond outside it).
        public func admits(_ record: RecordState) -> Bool {
            if let creator, record.creator != creator { return false }
            guard isRanged else { return true }
            guard let at = record.at.flatMap(TimeValue.parse) else { return false }
            if let since, at < since { return false }
            if let until, at >= until { return false }
            return true
        }

        /// Whether the query names a range of moments.
        var isRanged: Bool { since != nil || until != nil }

        /// The range's bounds as `at_ms` values: every moment in the range
        /// has its rounded-down millisecond between them.
        var millisecondBounds: (low: SQLValue, high: SQLValue) {
            (.integer(since.map(EntityState.milliseconds) ?? .min), .integer(until.map(EntityState.milliseconds) ?? .max))
        }
    }

    /// Records matching the query, oldest `at` first as a moment, whatever its offset (then by id).
    /// With a focus and a store, read through the view index, already in
    /// order; otherwise every record is looked at.
    public func records(_ q: RecordQuery = RecordQuery()) throws -> [RecordState] {
        var out: [RecordState] = []
        try forEachRecord(q) { out.append($0) }
        return out
    }

    /// The records of ``records(_:)``, in its order, one at a time, none
    /// held after `body` returns: how `record list` prints a million.
    public func forEachRecord(_ q: RecordQuery = RecordQuery(), _ body: (RecordState) throws -> Void) throws {
        try forEachRecordRow(q) { row in
            if let state = try row.state(), q.admits(state) { try body(state) }
        }
    }

    /// The rows ``forEachRecord(_:_:)`` reads, in its order, each copied
    /// out of SQLite but not read yet (``StoredRecordRow/state()`` reads it,
    /// on any thread, and ``RecordQuery/admits(_:)`` applies the query's
    /// creator and its range exactly): what a command that lists a million records reads here and
    /// makes into lines on every core.
    /// - Parameter newestFirst: in the opposite order (``lastRecordRows(_:count:)``).
    public func forEachRecordRow(_ q: RecordQuery = RecordQuery(), newestFirst: Bool = false, _ body: (StoredRecordRow) throws -> Void) throws {
        let oneView = q.focus != nil && q.store != nil
        let stmt = try database.prepare(Self.recordsSQL(schema: schema, oneView: oneView, ranged: q.isRanged, newestFirst: newestFirst))
        let focus: SQLValue = q.focus.map { .text($0) } ?? .null
        let store: SQLValue = q.store.map { .text($0) } ?? .null
        var values = [focus, store, .integer(q.includeDeleted ? 1 : 0)]
        // ?4 and ?5 bound whenever ?6 is too, used or not: a value's place is its number.
        if q.isRanged || oneView { let (low, high) = q.millisecondBounds; values += [low, high] }
        if oneView { values.append(.integer(Self.view(kind: "record", focus: q.focus, store: q.store))) }
        try stmt.forEachRow(values) { r in try body(StoredRecordRow(r, id: 0, put: 1)) }
    }

    /// The last `count` records of ``records(_:)`` (those listed last, the
    /// most recent), in its order: read newest first until `count` are
    /// found, with a focus and a store through the view index, so that
    /// `record list --last 1` reads one row of a million, not all of them
    /// (without, SQLite sorts every record first).
    /// Each row is read (``StoredRecordRow/state()``) to apply the query
    /// (``RecordQuery/admits(_:)``).
    /// - Throws: ``DamagedRow`` for a row among those read that cannot be read.
    public func lastRecordRows(_ q: RecordQuery, count: Int) throws -> [StoredRecordRow] {
        struct Enough: Error {}
        var rows: [StoredRecordRow] = []
        guard count > 0 else { return rows }
        guard q.focus != nil && q.store != nil else { return try lastRecordRowsOfEveryView(q, count: count) }
        do {
            try forEachRecordRow(q, newestFirst: true) { row in
                guard let state = try row.state(), q.admits(state) else { return }
                rows.append(row)
                if rows.count == count { throw Enough() }
            }
        } catch is Enough {}
        return rows.reversed()
    }

    /// ``lastRecordRows(_:count:)`` without both a focus and a store: the
    /// newest `count` of each view (a subject's store) the query can list,
    /// each read newest first through the view index, then merged in the
    /// list's order (`at_ms`, then `id`), rather than every record sorted
    /// (`record list --last 10` read and sorted all 200 000 records of a
    /// home, a second's work, for ten).
    func lastRecordRowsOfEveryView(_ q: RecordQuery, count: Int) throws -> [StoredRecordRow] {
        struct Enough: Error {}
        // Cached: nothing reads these within their rows.
        // A view and what its first row is: a view is the hash of its rows'
        // kind, focus and store, so one whose first row is not of the query's
        // records holds none of them (but for two texts of 64-bit hashes
        // alike), and is passed by without reading its rows.
        let nextView = try database.statement("SELECT view, kind, focus, store FROM \(schema).p_entities WHERE view >= ?1 ORDER BY view LIMIT 1")
        let rowsOfView = try database.statement(Self.recordsSQL(schema: schema, oneView: true, ranged: q.isRanged, newestFirst: true, withMilliseconds: true))
        let (low, high) = q.millisecondBounds
        var found: [(ms: Int64?, row: StoredRecordRow)] = []
        var from = Int64.min
        while let (view, kind, focus, store) = try nextView.first([.integer(from)], { r in
            (r.int(0), r.text(1), r.isNull(2) ? nil : r.text(2), r.isNull(3) ? nil : r.text(3))
        }) {
            guard view < .max else { break }
            from = view + 1
            if Self.view(kind: kind, focus: focus, store: store) == view,
               kind != "record" || q.focus.map({ $0 != focus }) ?? false || q.store.map({ $0 != store }) ?? false { continue }
            var taken = 0
            do {
                try rowsOfView.forEachRow([q.focus.map { .text($0) } ?? .null, q.store.map { .text($0) } ?? .null, .integer(q.includeDeleted ? 1 : 0),
                                           low, high, .integer(view)]) { r in
                    let row = StoredRecordRow(r, id: 0, put: 1)
                    guard let state = try row.state(), q.admits(state) else { return }
                    found.append((r.isNull(8) ? nil : r.int(8), row))
                    taken += 1
                    if taken == count { throw Enough() }
                }
            } catch is Enough {}
        }
        // The list's order, newest first: `at_ms DESC, id DESC`, a record without a time last.
        // (SQLite's NULL is below every number; texts compare by their bytes.)
        found.sort { a, b in
            switch (a.ms, b.ms) {
            case let (x?, y?) where x != y: return x > y
            case (.some, nil): return true
            case (nil, .some): return false
            default: return b.row.id.utf8.lexicographicallyPrecedes(a.row.id.utf8)
            }
        }
        return Array(found.prefix(count).map(\.row).reversed())
    }

    /// The first record row whose copied columns (`store`, `focus`, `at`,
    /// `at_ms`, which lists, ranges and the view index read) do not say
    /// what its fields say (`$store`, `$focus`, `$at`), as a finding;
    /// `nil` when every row agrees. The digest covers the fields, not the
    /// copies: `replay` checks them this way (a row altered in place).
    public func copiedColumnsMismatch() throws -> String? {
        var finding: String?
        struct Found: Error {}
        do {
            try database.prepare("SELECT id, store, focus, at, at_ms, fields FROM \(schema).p_entities WHERE kind = 'record' AND put_version IS NOT NULL")
                .forEachRow { r in
                    guard let fields = EntityState.decodeFields(r.blob(5)) else { return }   // a damaged value: listing says so
                    func meta(_ name: String) -> String? { fields[name]?.text.flatMap { JSONValue.parse($0)?.stringValue } }
                    let id = r.text(0)
                    let columns: [(String, String?, String?)] = [
                        ("store", r.isNull(1) ? nil : r.text(1), meta("$store")),
                        ("focus", r.isNull(2) ? nil : r.text(2), meta("$focus")),
                        ("at", r.isNull(3) ? nil : r.text(3), meta("$at")),
                        ("at_ms", r.isNull(4) ? nil : String(r.int(4)), meta("$at").flatMap(TimeValue.parse).map { String(EntityState.milliseconds($0)) }),
                    ]
                    for (name, column, expected) in columns where column != expected {
                        finding = "record \(id): its \(name) column says \(column ?? "nothing"), its fields \(expected ?? "nothing")"
                        throw Found()
                    }
                }
        } catch is Found {}
        return finding
    }

    /// The columns ``recordState(_:id:put:)`` reads, from `id` (0) and
    /// `put_version` (1) on.
    static let recordColumns = "id, put_version, delete_version, coalesce(first_put, put_version), store, focus, at, fields"

    /// The query of ``records(_:)``: `?1` the focus, `?2` the store, `?3`
    /// whether deleted records count, with `ranged` `?4` and `?5` the
    /// lowest and highest `at_ms` (a record without a moment is then left
    /// out), and with `oneView` `?6` their view. The bounds next to the view
    /// are a range of the view index. `newestFirst`: in the opposite order.
    static func recordsSQL(schema: String, oneView: Bool, ranged: Bool = false, newestFirst: Bool = false, withMilliseconds: Bool = false) -> String {
        """
        SELECT \(Self.recordColumns)\(withMilliseconds ? ", at_ms" : "") FROM \(schema).p_entities
        WHERE \(oneView ? "view = ?6 AND " : "")kind = 'record' AND put_version IS NOT NULL
          AND (?1 IS NULL OR focus = ?1) AND (?2 IS NULL OR store = ?2)
          AND (?3 OR delete_version IS NULL OR put_version > delete_version)
          \(ranged ? "AND at_ms BETWEEN ?4 AND ?5" : "")
        ORDER BY \(newestFirst ? "at_ms DESC, id DESC" : "at_ms, id")
        """
    }

    /// A record from a row of (id, put_version, delete_version, first_put,
    /// store, focus, at, fields) starting at `id`; `nil` for one whose
    /// first put has not arrived (an update came first: no store, no focus).
    /// - Throws: ``DamagedRow`` when a value of the row cannot be read.
    static func recordState(_ r: Row, id i: Int32, put p: Int32) throws(DamagedRow) -> RecordState? {
        try StoredRecordRow(r, id: i, put: p).state()
    }

    /// How many live records each care subject has (those ``records(_:)``
    /// lists), counted by SQLite without reading a record's fields: what
    /// `status` shows of a home of a million events in a pass over the
    /// table rather than every record held in memory (read in its own
    /// order: through the index of ids, each row was a seek, 0.70 s against
    /// 0.44 s at 1M records). A row whose values
    /// cannot be read back is counted, not reported: the commands that
    /// read records (`record list`, `export stores`) say it is damaged.
    public func liveRecordCounts() throws -> [String: Int] {
        var out: [String: Int] = [:]
        try database.prepare("""
            SELECT focus, count(*) FROM \(schema).p_entities NOT INDEXED
            WHERE kind = 'record' AND put_version IS NOT NULL AND store IS NOT NULL AND focus IS NOT NULL
              AND (delete_version IS NULL OR put_version > delete_version)
            GROUP BY focus
            """).forEachRow { out[$0.text(0)] = Int($0.int(1)) }
        return out
    }

    /// The version of an entity's first put, which made it (`record` or
    /// `photo` by id, `subject` by focus key); `nil` when no put names it.
    public func createdVersion(kind: String, id: String) throws -> Version? {
        try database.statement("""
            SELECT coalesce(first_put, put_version) FROM \(schema).p_entities WHERE kind = ?1 AND id = ?2 AND put_version IS NOT NULL
            """).first([.text(kind), .text(id)]) { Version(bytes: $0.blob(0)) } ?? nil
    }

    /// One record, live or deleted; `nil` when no event names it.
    /// The ids of the records (deleted ones too) whose id, as written
    /// (lowercase, with its dashes), starts with `prefix`: at most `limit`,
    /// in order. What a short id (`019ce28f`) names.
    public func recordIDs(startingWith prefix: String, limit: Int) throws -> [UUID] {
        try recordIDs(where: "id >= ?1 AND id < ?2", [.text(prefix), .text(prefix + "\u{10FFFF}")], limit: limit)
    }

    /// As ``recordIDs(startingWith:limit:)``, for the ids that end with
    /// `suffix` (the random end of an id: ids made in the same minute share
    /// their start). Reads every record's id.
    public func recordIDs(endingWith suffix: String, limit: Int) throws -> [UUID] {
        try recordIDs(where: "substr(id, -length(?1)) = ?1", [.text(suffix)], limit: limit)
    }

    /// The ids of the records `condition` (over `values`) holds for, in order, at most `limit`.
    private func recordIDs(where condition: String, _ values: [SQLValue], limit: Int) throws -> [UUID] {
        var out: [UUID] = []
        try database.statement("""
            SELECT id FROM \(schema).p_entities
            WHERE kind = 'record' AND put_version IS NOT NULL AND \(condition) ORDER BY id LIMIT \(limit)
            """).forEachRow(values) { r in
            if let id = UUID(text: r.text(0)) { out.append(id) }
        }
        return out
    }

    public func record(_ id: UUID) throws -> RecordState? {
        try recordRow(id)?.state()
    }

    /// One record's stored row, not read yet (its state, its
    /// ``StoredRecordRow/revision``); `nil` when no event names it.
    public func recordRow(_ id: UUID) throws -> StoredRecordRow? {
        try database.statement("""
            SELECT \(Self.recordColumns) FROM \(schema).p_entities
            WHERE kind = 'record' AND id = ?1 AND put_version IS NOT NULL
            """).first([.text(id.lowercasedText)]) { r in StoredRecordRow(r, id: 0, put: 1) }
    }

    /// The names of the fields a record holds, visible or not (a deleted
    /// record's would show again were it re-created), not cleared, meta
    /// fields left out; empty when no event names it.
    public func heldFieldNames(_ id: UUID) throws -> Set<String> {
        guard let e = try recordEntity(id) else { return [] }
        return Set(e.fields.filter { !$0.key.hasPrefix("$") && $0.value.text != nil }.keys)
    }

    /// The fields a record holds, visible or not (a deleted record's, as
    /// they would show were it re-created), not cleared, meta fields left
    /// out; empty when no event names it.
    public func heldFields(_ id: UUID) throws -> [String: JSONValue] {
        try recordEntity(id)?.visibleFields(afterDelete: false) ?? [:]
    }

    /// A record's row as an entity (its versions and every field it holds),
    /// live or deleted; `nil` when no event names it.
    private func recordEntity(_ id: UUID) throws -> EntityState? {
        try database.statement("SELECT put_version, delete_version, coalesce(first_put, put_version), fields FROM \(schema).p_entities WHERE kind = 'record' AND id = ?1")
            .first([.text(id.lowercasedText)]) { r in try Self.entityState(r, kind: "record", id: id.lowercasedText, put: 0) }
    }

    /// The version of the write a record's `$focus` holds (the put that
    /// last set or moved its subject), `nil` when no put names it: what a
    /// change that keeps the subject says it repeats
    /// (``PreparedChange/keepingFocus(_:since:)``).
    public func focusVersion(_ id: UUID) throws -> Version? {
        try database.statement("SELECT put_version, delete_version, coalesce(first_put, put_version), fields FROM \(schema).p_entities WHERE kind = 'record' AND id = ?1")
            .first([.text(id.lowercasedText)]) { r in
                try Self.entityState(r, kind: "record", id: id.lowercasedText, put: 0).fields["$focus"]?.version
            } ?? nil
    }

    /// Whether any event (put or delete) has named this record.
    public func recordExists(_ id: UUID) throws -> Bool {
        try database.statement("SELECT 1 FROM \(schema).p_entities WHERE kind = 'record' AND id = ?1").first([.text(id.lowercasedText)]) { _ in true } ?? false
    }

    /// The version of the write each field of every entity of `kind`
    /// (`record`, `subject`) holds, by id (`$at` and the other meta fields
    /// too): what an `accept` carries each field at.
    public func fieldVersions(_ kind: String) throws -> [String: [String: Version]] {
        Dictionary(uniqueKeysWithValues: try entities(kind).map { id, e in (id, e.fields.mapValues(\.version)) })
    }

    /// Every entity of `kind` with a put, in id order.
    func entities(_ kind: String) throws -> [(String, EntityState)] {
        var out: [(String, EntityState)] = []
        try database.statement("SELECT id, put_version, delete_version, coalesce(first_put, put_version), fields FROM \(schema).p_entities WHERE kind = ?1 AND put_version IS NOT NULL ORDER BY id")
            .forEachRow([.text(kind)]) { r in
                out.append((r.text(0), try Self.entityState(r, kind: kind, id: r.text(0), put: 1)))
            }
        return out
    }

    /// An entity's state from a row of (put_version, delete_version,
    /// first_put, fields) starting at `put`.
    /// - Throws: ``DamagedRow`` when a value of the row cannot be read.
    static func entityState(_ r: Row, kind: String, id: String, put p: Int32) throws(DamagedRow) -> EntityState {
        let put = r.isNull(p) ? nil : Version(bytes: r.blob(p))
        let del = r.isNull(p + 1) ? nil : Version(bytes: r.blob(p + 1))
        let first = r.isNull(p + 2) ? nil : Version(bytes: r.blob(p + 2))
        guard put != nil || r.isNull(p), del != nil || r.isNull(p + 1), first != nil || r.isNull(p + 2) else {
            throw DamagedRow(kind: kind, id: id, value: "versions")
        }
        guard let fields = EntityState.decodeFields(r.blob(p + 3)) else { throw DamagedRow(kind: kind, id: id, value: "fields") }
        return EntityState(put: put, delete: del, firstPut: first, fields: fields)
    }

    /// Photos, live (or all), optionally of one record.
    public func photos(record: UUID? = nil, includeDeleted: Bool = false) throws -> [PhotoState] {
        var out: [PhotoState] = []
        for (id, e) in try entities("photo") {
            guard let uuid = UUID(text: id), let first = e.firstPut else { continue }
            if e.isDeleted && !includeDeleted { continue }
            // Metadata is written once; a delete does not erase what is needed to show the trail.
            let f = e.visibleFields(afterDelete: false)
            guard PhotoEvent.problem(f) == nil else { continue }
            let rec = f["record"]?.stringValue.flatMap(UUID.init(text:))
            if let record, rec != record { continue }
            var size: Int64 = 0
            if case .int(let n)? = f["size"] { size = n }
            out.append(PhotoState(id: uuid, record: rec, size: Int(size),
                                  mediaType: f["mediaType"]?.stringValue ?? "", hash: Hex.decode(f["hash"]?.stringValue ?? "") ?? [],
                                  key: Hex.decode(f["key"]?.stringValue ?? "") ?? [], blob: f["blob"]?.stringValue ?? "",
                                  creator: first.author, deleted: e.isDeleted))
        }
        return out
    }

    public func photo(_ id: UUID) throws -> PhotoState? {
        try photos(includeDeleted: true).first { $0.id == id }
    }

    /// Every care subject, in focus-key order; with `includeRemoved`, the
    /// removed ones too (``SubjectState/removed``, with the fields they
    /// held).
    public func subjects(includeRemoved: Bool = false) throws -> [SubjectState] {
        try entities("subject").compactMap { key, e in
            guard let focus = FocusKey(key), let v = e.firstPut, includeRemoved || !e.isDeleted else { return nil }
            // (Added again after a removal: back whole, as a record.)
            var s = SubjectState(focus: focus, fields: e.visibleFields(afterDelete: false), creator: v.author, created: v, updated: e.put ?? v)
            s.removed = e.isDeleted
            return s
        }
    }

    /// The live care subject of that focus key.
    public func subject(_ focus: FocusKey) throws -> SubjectState? {
        try subjects().first { $0.focus == focus }
    }

    /// Every version of a record, oldest first.
    public func history(_ id: UUID) throws -> [HistoryEntry] {
        try history(kind: "record", id: id.lowercasedText)
    }

    /// Every version of an entity (`record` by id, `subject` by focus key), oldest first.
    public func history(kind: String, id: String) throws -> [HistoryEntry] {
        var out: [HistoryEntry] = []
        // The entry of the event that created the row is in the row; the others in p_history.
        try database.statement("""
            SELECT version, event, op, changes, fields FROM (
                SELECT h.version AS version, h.event AS event, h.op AS op, h.changes AS changes, NULL AS fields
                FROM \(schema).p_history h JOIN \(schema).p_entities e ON h.entity = e.entity WHERE e.kind = ?2 AND e.id = ?1
                UNION ALL
                SELECT coalesce(created_version, put_version), created_event, created_op, created_changes, fields
                FROM \(schema).p_entities WHERE kind = ?2 AND id = ?1)
            ORDER BY version
            """)
            .forEachRow([.text(id), .text(kind)]) { r in
                guard let v = Version(bytes: r.blob(0)), let op = HistoryEntry.Operation(rawValue: r.text(2)) else {
                    throw DamagedRow(kind: kind, id: id, value: "history")
                }
                // A row its creating put alone wrote keeps that put's changes as its fields (see `Projector.save`).
                let text: String
                if r.isNull(3) {
                    guard let fields = EntityState.decodeFields(r.blob(4)) else { throw DamagedRow(kind: kind, id: id, value: "fields") }
                    text = EntityState.putTrail(of: fields)
                } else {
                    text = r.text(3)
                }
                let changes = JSONValue.parse(text)?.objectValue ?? [:]
                out.append(HistoryEntry(version: v, event: EventID(bytes: r.blob(1)), operation: op, changes: changes))
            }
        return out
    }

    /// An event the household rules rejected, with the reason.
    public struct Rejection: Sendable, Equatable {
        public let event: EventID
        public let author: DeviceID
        public let reason: String
        /// The event's seq in its author's chain (a record, subject or
        /// photo change's; `nil` for a household event's).
        public var seq: UInt64? = nil
    }

    /// Every rejected event: library events the fold refused, and record or
    /// subject changes by authors not allowed to make them.
    public func rejections() throws -> [Rejection] {
        var out: [Rejection] = []
        try database.prepare("SELECT event, author, reason, seq FROM \(schema).p_rejected ORDER BY event").forEachRow { r in
            let (event, author) = (r.blob(0), r.blob(1))
            // An id of another length: the file was altered (a rebuild mends it).
            guard event.count == 32, author.count == 32 else { throw DamagedRow(kind: "rejection", id: Hex.encode(event), value: event.count == 32 ? "author" : "event id") }
            out.append(Rejection(event: EventID(bytes: event), author: DeviceID(bytes: author), reason: r.text(2), seq: UInt64(r.int(3))))
        }
        var authors: [EventID: DeviceID] = [:]
        try database.prepare("SELECT event, version FROM \(schema).p_library").forEachRow { r in
            let event = r.blob(0)
            guard event.count == 32 else { throw DamagedRow(kind: "household event", id: Hex.encode(event), value: "event id") }
            if let v = Version(bytes: r.blob(1)) { authors[EventID(bytes: event)] = v.author }
        }
        for (id, why) in household.rejected { out.append(Rejection(event: id, author: authors[id] ?? DeviceID(bytes: [UInt8](repeating: 0, count: 32)), reason: why)) }
        return out.sorted { $0.event.hex < $1.event.hex }
    }

    /// Record events kept for a later version (unknown store, newer schema).
    public func deferredCount() throws -> Int {
        try database.statement("SELECT count(*) FROM \(schema).p_deferred").first { Int($0.int(0)) } ?? 0
    }

    /// The interval a sleep covers: an open sleep (no `end`) is still going on.
    static func span(_ r: RecordState) -> (Date, Date)? {
        guard let s = StoreSchema.time(r.fields["start"]) else { return nil }
        return (s, StoreSchema.time(r.fields["end"]) ?? .distantFuture)
    }

    static func overlap(_ a: (Date, Date), _ b: (Date, Date)) -> Bool {
        a.0 == b.0 || (a.0 < b.1 && b.0 < a.1)
    }

    /// Pairs of live sleep records of the same baby whose intervals overlap
    /// (possible after a merge; refused at entry): by focus, then in the
    /// order of the first sleep's start, then of the second's.
    ///
    /// Two sleeps that overlap have interval keys that meet
    /// (``EntityState/SpanKey``, the sleeps' index), so the keys alone, read
    /// from that index, name the sleeps that may overlap another
    /// (``sleepsThatMayOverlap(_:)``): with 140 000 sleeps of one baby and
    /// none overlapping, none is read. Those are read, one by one (in the
    /// order every record is listed in), and a sweep in start order per
    /// focus compares each with the earlier ones still going on at its
    /// start (and those of the same start), not with every earlier one.
    /// ``overlap(_:_:)`` judges each pair.
    public func sleepOverlaps() throws -> [SleepOverlap] {
        var keys: [Int64: [KeyedSleep]] = [:]
        try database.prepare("SELECT view, span_start_ms, span_end_ms, entity FROM \(schema).p_entities WHERE span_end_ms IS NOT NULL")
            .forEachRow { r in keys[r.int(0), default: []].append(KeyedSleep(start: r.int(1), end: r.int(2), entity: r.int(3))) }
        var candidates: [Int64] = []
        for sleeps in keys.values { candidates += Self.sleepsThatMayOverlap(sleeps) }
        guard !candidates.isEmpty else { return [] }
        // Each read by its row number, then put in the order every record
        // is listed in (``listedBefore(_:_:)``).
        var read: [(atMs: Int64?, id: String, state: RecordState)] = []
        let one = try database.prepare("""
            SELECT \(Self.recordColumns), at_ms FROM \(schema).p_entities
            WHERE entity = ?1 AND kind = 'record' AND put_version IS NOT NULL AND store = ?2
              AND (delete_version IS NULL OR put_version > delete_version)
            """)
        for entity in candidates {
            try one.forEachRow([.integer(entity), .text(StoreName.sleep.rawValue)]) { r in
                guard let state = try Self.recordState(r, id: 0, put: 1) else { return }
                read.append((r.isNull(8) ? nil : r.int(8), r.text(0), state))
            }
        }
        read.sort { a, b in Self.listedBefore((a.atMs, a.id), (b.atMs, b.id)) }
        var byFocus: [String: [SleepSpan]] = [:]
        for (_, _, state) in read {
            guard let span = Self.span(state) else { continue }
            byFocus[state.focus, default: []].append(SleepSpan(id: state.id, start: span.0, end: span.1))
        }
        var out: [SleepOverlap] = []
        for (focus, sleeps) in byFocus.sorted(by: { $0.key < $1.key }) {
            out += Self.overlappingPairs(sleeps).map { SleepOverlap(focus: focus, first: sleeps[$0.0].id, second: sleeps[$0.1].id) }
        }
        return out
    }

    /// A sleep's interval key (``EntityState/SpanKey``) and its row.
    struct KeyedSleep: Sendable {
        let start: Int64
        let end: Int64
        let entity: Int64
    }

    /// The rows of `sleeps` (of one view) whose key meets another's (closed
    /// intervals that share a moment): every sleep that may overlap
    /// another, and a few that do not.
    ///
    /// In start order, each key is compared with the one that ends last
    /// among those before it: a key that meets an earlier one meets that
    /// one too. Every key that meets a later one is named as well: it is
    /// either named when its own turn comes (it meets an earlier one), or
    /// it ends last when the first later key that meets it comes (any key
    /// that took over from it in between would have met it, as its start
    /// came before this one's).
    static func sleepsThatMayOverlap(_ sleeps: [KeyedSleep]) -> [Int64] {
        let order = sleeps.sorted { $0.start < $1.start }
        var named = Set<Int64>()
        var last: KeyedSleep?
        for s in order {
            if let l = last, s.start <= l.end {
                named.insert(s.entity)
                named.insert(l.entity)
            }
            if last.map({ s.end > $0.end }) ?? true { last = s }
        }
        return Array(named)
    }

    /// Two live sleeps of one care subject whose intervals overlap.
    public struct SleepOverlap: Sendable, Equatable {
        public let focus: String
        /// The one that starts first (of two that start together, the one
        /// whose `at`, then id, comes first).
        public let first: UUID
        public let second: UUID
    }

    /// A sleep's id and interval (``span(_:)``).
    struct SleepSpan: Sendable {
        let id: UUID
        let start: Date
        let end: Date
    }

    /// The pairs `(i, j)` of `spans` that overlap, `i` before `j` once the
    /// spans are put in start order (a stable sort: spans that start
    /// together keep their order in `spans`), sorted by `i`, then `j`: the
    /// pairs that comparing every span with every later one finds.
    ///
    /// A span that started before the current one and ended at or before
    /// its start overlaps no span that starts later: it leaves the set of
    /// spans still going on, and only that set is compared with each next
    /// span (an open sleep stays in it for good, and overlaps each later
    /// one that it pairs with).
    static func overlappingPairs(_ spans: [SleepSpan]) -> [(Int, Int)] {
        let order = spans.indices.sorted { a, b in spans[a].start != spans[b].start ? spans[a].start < spans[b].start : a < b }
        var going: [Int] = []   // positions in `order`
        var pairs: [(Int, Int)] = []
        for (j, s) in order.enumerated() {
            let start = spans[s].start
            going.removeAll { spans[order[$0]].start < start && spans[order[$0]].end <= start }
            for i in going where overlap((spans[order[i]].start, spans[order[i]].end), (start, spans[s].end)) {
                pairs.append((i, j))
            }
            going.append(j)
        }
        pairs.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        return pairs.map { (order[$0.0], order[$0.1]) }
    }

    /// The live sleep of `focus` that `[start, end]` would overlap, if any
    /// (`end == nil`: the new sleep is still going on).
    public func overlappingSleep(focus: String, start: Date, end: Date?, excluding: UUID?) throws -> RecordState? {
        try overlappingSleep(focus: focus, start: start, end: end, excluding: excluding.map { [$0] } ?? [])
    }

    /// The same, leaving out every record in `excluding` (records about to
    /// be replaced, say).
    ///
    /// Only the sleeps whose interval's key (``EntityState/SpanKey``) meets
    /// the new one's are read, through the index of the keys by view,
    /// length class and start: for each class the baby's sleeps have (a
    /// few: minutes, hours, still going on), the keys that start between
    /// the lowest start a key of that class ending at or after the new
    /// start can have and the new end. So with 140 000 sleeps of one baby a
    /// new sleep is compared with the few around it, as old or as recent as
    /// it may be. Each is then judged by ``overlap(_:_:)``, as before; the
    /// first in the order records are listed in is returned.
    public func overlappingSleep(focus: String, start: Date, end: Date?, excluding: Set<UUID>) throws -> RecordState? {
        let new = (start, end ?? .distantFuture)
        let store = StoreName.sleep.rawValue
        let key = EntityState.SpanKey(start: start, end: end)
        let view = Self.view(kind: "record", focus: focus, store: store)
        let nextClass = try database.statement("""
            SELECT span_class FROM \(schema).p_entities
            WHERE view = ?1 AND span_end_ms IS NOT NULL AND span_class > ?2 ORDER BY span_class LIMIT 1
            """)
        let meeting = try database.statement("""
            SELECT \(Self.recordColumns), at_ms FROM \(schema).p_entities
            WHERE view = ?3 AND span_end_ms IS NOT NULL AND span_class = ?4 AND span_start_ms BETWEEN ?5 AND ?6 AND span_end_ms >= ?7
              AND kind = 'record' AND put_version IS NOT NULL AND focus = ?1 AND store = ?2
              AND (delete_version IS NULL OR put_version > delete_version)
            """)
        var found: (atMs: Int64?, id: String, state: RecordState)?
        var lengthClass = Int64.min
        while let next = try nextClass.first([.integer(view), .integer(lengthClass)], { $0.int(0) }) {
            lengthClass = next
            let lowest = EntityState.SpanKey.lowestStart(endingAtOrAfter: key.start, lengthClass: lengthClass)
            try meeting.forEachRow([.text(focus), .text(store), .integer(view), .integer(lengthClass),
                                    .integer(lowest), .integer(key.end), .integer(key.start)]) { row in
                guard let r = try Self.recordState(row, id: 0, put: 1), !excluding.contains(r.id),
                      let s = Self.span(r), Self.overlap(s, new) else { return }
                let candidate = (row.isNull(8) ? nil : row.int(8), row.text(0), r)
                if found.map({ Self.listedBefore((candidate.0, candidate.1), ($0.atMs, $0.id)) }) ?? true { found = candidate }
            }
        }
        return found?.state
    }

    /// Whether a record of moment `a.atMs` and id `a.id` is listed before
    /// one of `b` (`ORDER BY at_ms, id`: no moment first; ids are
    /// lowercase ASCII, so their order as strings is SQLite's).
    static func listedBefore(_ a: (atMs: Int64?, id: String), _ b: (atMs: Int64?, id: String)) -> Bool {
        switch (a.atMs, b.atMs) {
        case let (x?, y?) where x != y: x < y
        case (nil, _?): true
        case (_?, nil): false
        default: a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
        }
    }
}
