import Envelope
import Foundation

/// A device's append-only event log in SQLite.
///
/// Holds the events of every author this device knows. A chain is one
/// author's events in one family, contiguous from seq 1: a device that wrote
/// on its own before joining a family keeps that private chain and starts a
/// new one in the family. The `events` table cannot be updated or deleted
/// (triggers refuse it); events waiting for a predecessor sit in `pending`;
/// fork proofs and validly signed but chain-breaking events are kept in
/// `forks` and `rejected` for the audit. The log knows nothing of stores or
/// transport: callers pass `onAccepted` to act on each event inside the same
/// transaction that stores it.
public final class EventLog {
    public static let schemaVersion = 3
    public let database: Database
    /// Where the random bytes of what this log's device seals come from
    /// (an append's nonces; famctl's photo keys and key shares too). Tests make it repeat
    /// itself, as a restored snapshot's random source could.
    package var randomSecret: (Int) -> SecretBytes = { Sodium.randomSecret($0) }
    /// Runs first inside every transaction of ``append(count:encoding:as:family:now:after:check:onAccepted:)``
    /// and of ingest, once the write lock is held: where the caller brings
    /// what it derives from the log up to the log's end (famctl: its
    /// projection, should another process's commit have reached the log but
    /// not the projection). A throw rolls the batch back.
    public var willBegin: () throws -> Void = {}
    /// Runs last inside the same transactions, before the commit: where the
    /// caller records what the events it applied in `onAccepted` brought its
    /// own state to (famctl: the log position its projection reflects). A
    /// throw rolls the batch back.
    public var willCommit: () throws -> Void = {}
    /// See ``takeFailureAfterCommit()``.
    var failureAfterCommit: (any Error)?

    /// The position of the last event stored (0 for an empty log): positions
    /// only grow, one per event stored.
    public func lastPosition() throws -> Int64 {
        try database.statement("SELECT max(pos) FROM events").first { $0.int(0) } ?? 0
    }

    /// Opens or creates the log at `path` (file mode 0600 for a new file).
    /// - Throws: ``SQLiteError`` or ``EventLogError/newerSchema(found:supported:)``.
    public init(path: String) throws {
        let existed = FileManager.default.fileExists(atPath: path)
        if !existed {
            // Create the file 0600 first: SQLite gives its -wal and -shm files the same mode.
            let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                let e = errno
                throw SQLiteError(code: e == EACCES || e == EPERM || e == EROFS ? 3 /* SQLITE_PERM */ : 14 /* SQLITE_CANTOPEN */,
                                  message: "cannot create \(path): \(String(cString: strerror(e)))")
            }
            close(fd)
        }
        database = try Database(path: path)
        try migrate()
        if try !missingRules().isEmpty {
            // Made without waiting for another process's lock (a write
            // lasting seconds must not hold up a read): a later open does it.
            do {
                let (made, removed) = try database.withoutWaiting { try restoreRules() }
                rulesPutBack = true
                if removed { rulesFoundMissing = made }
            } catch {
                // Not put back now (another process writing, or a read-only
                // file): said when they are missing still, in a log checked
                // before (another open may have just made them, or be the
                // first to check an early famctl's log).
                // (Whether checked, first: an open making them meanwhile
                // records that it checked as it commits them.)
                if rulesChecked(), case let missing = (try? missingRules()) ?? [], !missing.isEmpty {
                    rulesFoundMissing = missing
                }
            }
        } else if !rulesChecked() {
            _ = try? database.withoutWaiting { try database.run("INSERT OR IGNORE INTO log_meta(key, value) VALUES('rules_checked', 1)") }
        }
    }

    /// Whether an open of this famctl compared the rules before.
    private func rulesChecked() -> Bool {
        (try? database.statement("SELECT 1 FROM log_meta WHERE key = 'rules_checked'").first { _ in true }) != nil
    }

    // MARK: - The append-only rules

    /// The append-only rules (triggers) this open found missing from the
    /// file, or altered, and other triggers famctl did not make: put there
    /// outside famctl. They are made again (or dropped) at once when the
    /// file can be written, and the last such open is recorded
    /// (``rulesRestoredAt()``): rows of `events`, `forks` or
    /// `rejected` deleted or changed meanwhile cannot be ruled out.
    public private(set) var rulesFoundMissing: [String] = []
    /// Whether this open made the missing rules again (it could not when
    /// the file is read-only, or another process held its write lock).
    public private(set) var rulesPutBack = false

    /// The append-only rules of this schema: each trigger's name and its
    /// SQL as made (white space aside, which SQLite keeps as written).
    static let appendOnlyRules: [(name: String, sql: String)] = (eventsRules + otherTables)
        .components(separatedBy: "CREATE TRIGGER ").dropFirst().map { piece in
            let body = piece[..<piece.range(of: "END;")!.upperBound].dropLast()
            return (String(piece.prefix { $0 != " " }), "CREATE TRIGGER " + body)
        }

    /// The names of ``appendOnlyRules``.
    static let appendOnlyRuleNames = Set(appendOnlyRules.map(\.name))

    /// `sql` with each run of white space made one space.
    static func squeezed(_ sql: String) -> String {
        sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The names of the append-only rules the file lacks or holds altered,
    /// and of any other trigger on the log's tables (one famctl did not
    /// make could drop or change what it writes: a review found a `RAISE(IGNORE)`
    /// before each insert losing every write without a word).
    public func missingRules() throws -> [String] {
        var held: [String: String] = [:]
        var others: [String] = []
        try database.statement("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger'").forEachRow {
            held[$0.text(0)] = Self.squeezed($0.text(1))
            if !Self.appendOnlyRuleNames.contains($0.text(0)) { others.append($0.text(0)) }
        }
        return Self.appendOnlyRules.filter { held[$0.name] != Self.squeezed($0.sql) }.map(\.name) + others.sorted()
    }

    /// Makes the rules missing again and drops triggers famctl did not
    /// make, as found under the write lock (another process may have done
    /// it meanwhile). A log no open of this famctl checked before may lack
    /// rules only because an earlier famctl made it without them (version
    /// 1 had no `forks_no_update` nor `rejected_no_update`): those are made
    /// silently; from then on, a missing one was removed, and the time is
    /// recorded (`rules_restored`).
    /// - Returns: the names made again or dropped, and whether they count
    ///   as removed outside famctl.
    func restoreRules() throws -> (made: [String], removed: Bool) {
        try database.transaction(.immediate) {
            let names = try missingRules()
            let checked = rulesChecked()
            for name in names where !Self.appendOnlyRuleNames.contains(name) {
                try database.execute("DROP TRIGGER IF EXISTS \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"")
            }
            for rule in Self.appendOnlyRules where names.contains(rule.name) {
                try database.execute("DROP TRIGGER IF EXISTS \(rule.name); \(rule.sql);")
            }
            if checked, !names.isEmpty { try database.run("INSERT OR REPLACE INTO log_meta(key, value) VALUES('rules_restored', ?1)", [.integer(Int64(Date().timeIntervalSince1970))]) }
            try database.run("INSERT OR IGNORE INTO log_meta(key, value) VALUES('rules_checked', 1)")
            return (names, checked && !names.isEmpty)
        }
    }

    /// When an open last found the append-only rules removed (and made
    /// them again), or `nil`: never.
    public func rulesRestoredAt() throws -> Date? {
        try database.statement("SELECT value FROM log_meta WHERE key = 'rules_restored'").first { Date(timeIntervalSince1970: TimeInterval($0.int(0))) }
    }

    /// Records that an audit found events missing from the middle of a
    /// chain, so that the next pull looks for them (``chainGapsAsked()``).
    /// (A count: two finds within one second are two.)
    public func noteChainGapsFound() throws {
        try database.run("INSERT INTO log_meta(key, value) VALUES('gaps_found', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1")
    }

    /// What asks for events missing from the middle of a chain to be looked
    /// for, as a token that changes with each ask: the last time the
    /// append-only rules were found removed (the only way, short of editing
    /// the file's pages, to take rows out) and how many times an audit or
    /// an open found such a gap. `nil`: never. Finding the gaps reads every
    /// chain's index (``chainGaps(in:)``), so a pull does it only when the
    /// token is not the one it last dealt with.
    public func chainGapsAsked() throws -> String? {
        var values: [String: Int64] = [:]
        try database.statement("SELECT key, value FROM log_meta WHERE key IN ('rules_restored', 'gaps_found')").forEachRow { values[$0.text(0)] = $0.int(1) }
        guard !values.isEmpty else { return nil }
        return "\(values["rules_restored"] ?? 0)/\(values["gaps_found"] ?? 0)"
    }

    /// ``chainGaps(in:)`` below each author's fork point: what can still be
    /// filled (nothing at or past a fork point enters the log).
    public func fillableChainGaps(in family: FamilyID) throws -> [DeviceID: [ClosedRange<UInt64>]] {
        let points = try forkPoints(in: family)
        var out: [DeviceID: [ClosedRange<UInt64>]] = [:]
        for (author, ranges) in try chainGaps(in: family) {
            let point = points[author] ?? .max
            let below = ranges.compactMap { r in r.lowerBound < point ? r.lowerBound...min(r.upperBound, point - 1) : nil }
            if !below.isEmpty { out[author] = below }
        }
        return out
    }

    /// How many events of `author`'s chain in `family` the log holds
    /// (its head's seq when the chain is whole).
    public func eventCount(of author: DeviceID, in family: FamilyID) throws -> UInt64 {
        try database.statement("SELECT count(*) FROM events WHERE family = ?1 AND author = ?2").first([.blob(family.bytes), .blob(author.bytes)]) { UInt64($0.int(0)) } ?? 0
    }

    /// The seqs missing below each chain's head in `family`, as ranges.
    /// Each chain's events are counted through the chain index, and only a
    /// chain with fewer events than its head's seq is walked.
    public func chainGaps(in family: FamilyID) throws -> [DeviceID: [ClosedRange<UInt64>]] {
        var out: [DeviceID: [ClosedRange<UInt64>]] = [:]
        for (author, head) in try heads(in: family) {
            guard try eventCount(of: author, in: family) < head.seq else { continue }
            let args: [SQLValue] = [.blob(family.bytes), .blob(author.bytes)]
            var ranges: [ClosedRange<UInt64>] = []
            var expected: UInt64 = 1
            try database.statement("SELECT seq FROM events WHERE family = ?1 AND author = ?2 ORDER BY seq").forEachRow(args) { r in
                let seq = UInt64(r.int(0))
                if seq > expected { ranges.append(expected...(seq - 1)) }
                expected = seq + 1
            }
            if !ranges.isEmpty { out[author] = ranges }
        }
        return out
    }

    private func migrate() throws {
        // A log at this version already (every open but the first, or one
        // after an upgrade) is only read: a writer in another process (a
        // rebuild holding the write lock for seconds) does not hold up
        // this open, as the write transaction below would.
        let current = try? database.statement("SELECT value FROM log_meta WHERE key='schema'").first { Int($0.int(0)) }
        if current == Self.schemaVersion { return }
        try database.transaction(.immediate) {
            try database.execute("CREATE TABLE IF NOT EXISTS log_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
            let found = try database.statement("SELECT value FROM log_meta WHERE key='schema'").first { Int($0.int(0)) } ?? 0
            if found > Self.schemaVersion { throw EventLogError.newerSchema(found: found, supported: Self.schemaVersion) }
            if found == Self.schemaVersion { return }
            try database.execute(found == 0 ? Self.schemaV3 : Self.migrateEvents)
            try database.run("INSERT OR REPLACE INTO log_meta(key, value) VALUES('schema', ?1)", [.integer(Int64(Self.schemaVersion))])
        }
    }

    /// Version 2 dropped version 1's index on event ids.
    /// Ids are hashes, so every insert landed on a random page of that
    /// index: at a million events, far larger than the page cache, it cost
    /// a page read and a page write per event. It was redundant: an id is
    /// the hash of the bytes, which hold the (family, author, seq) that is
    /// unique, so two rows cannot share an id; and lookups go by that triple.
    ///
    /// Version 3 dropped the `length(…)` checks of the ids, the family, the
    /// author and the clock. A statement that calls an SQL function may
    /// fail midway, so SQLite kept a statement journal for every
    /// multi-row insert of events (an append's chunk, an ingest's run): a
    /// copy of each 32 KiB page the statement changed that the transaction
    /// had changed before it, so as to undo that statement alone. Callgrind
    /// of an ingest of 10 000 events put about 14 % of the storing thread's
    /// instructions there (5 128 pages copied). The lengths are the types'
    /// own (``EventID``, ``FamilyID``, ``DeviceID``, ``HLC``): nothing else
    /// writes these rows. The insert is also `OR FAIL` rather than the
    /// default `ABORT` (see ``insert(_:receivedAt:)``); `seq >= 1`, `NOT
    /// NULL` and the unique chain position are still checked by SQLite.
    static let schemaV3 = eventsTable("events", version: 3) + eventsRules + otherTables

    /// The `events` table of each version: version 1 had a unique index on
    /// ids, versions 1 and 2 checked the blobs' lengths.
    static func eventsTable(_ name: String, version: Int) -> String {
        func length(_ n: Int, of column: String) -> String { version < 3 ? " CHECK(length(\(column)) = \(n))" : "" }
        return """
        CREATE TABLE \(name)(
            pos INTEGER PRIMARY KEY,
            id BLOB NOT NULL\(version == 1 ? " UNIQUE" : "")\(length(32, of: "id")),
            family BLOB NOT NULL\(length(16, of: "family")),
            author BLOB NOT NULL\(length(32, of: "author")),
            seq INTEGER NOT NULL CHECK(seq >= 1),
            hlc BLOB NOT NULL\(length(8, of: "hlc")),
            received_at INTEGER NOT NULL,
            bytes BLOB NOT NULL,
            UNIQUE(family, author, seq)
        );

        """
    }

    /// The clock index and the append-only triggers of `events`.
    static let eventsRules = """
        CREATE INDEX events_hlc ON events(hlc);
        CREATE TRIGGER events_no_update BEFORE UPDATE ON events
            BEGIN SELECT RAISE(ABORT, 'events are append-only: update refused'); END;
        CREATE TRIGGER events_no_delete BEFORE DELETE ON events
            BEGIN SELECT RAISE(ABORT, 'events are append-only: delete refused'); END;

        """

    /// `pending`, `forks` and `rejected`: the same in versions 1 and 2.
    static let otherTables = """
        CREATE TABLE pending(
            id BLOB PRIMARY KEY,
            family BLOB NOT NULL,
            author BLOB NOT NULL,
            seq INTEGER NOT NULL,
            received_at INTEGER NOT NULL,
            bytes BLOB NOT NULL
        );
        CREATE INDEX pending_chain ON pending(family, author, seq);
        CREATE TABLE forks(
            family BLOB NOT NULL,
            author BLOB NOT NULL,
            seq INTEGER NOT NULL,
            first_id BLOB NOT NULL,
            second_id BLOB NOT NULL,
            first BLOB NOT NULL,
            second BLOB NOT NULL,
            detected_at INTEGER NOT NULL,
            PRIMARY KEY(family, author, seq, first_id, second_id)
        );
        CREATE TRIGGER forks_no_delete BEFORE DELETE ON forks
            BEGIN SELECT RAISE(ABORT, 'fork proofs are kept: delete refused'); END;
        CREATE TRIGGER forks_no_update BEFORE UPDATE ON forks
            BEGIN SELECT RAISE(ABORT, 'fork proofs are kept: update refused'); END;
        CREATE TABLE rejected(
            id BLOB PRIMARY KEY,
            family BLOB NOT NULL,
            author BLOB NOT NULL,
            seq INTEGER NOT NULL,
            reason TEXT NOT NULL,
            received_at INTEGER NOT NULL,
            bytes BLOB NOT NULL
        );
        CREATE TRIGGER rejected_no_delete BEFORE DELETE ON rejected
            BEGIN SELECT RAISE(ABORT, 'rejected events are kept for the audit: delete refused'); END;
        CREATE TRIGGER rejected_no_update BEFORE UPDATE ON rejected
            BEGIN SELECT RAISE(ABORT, 'rejected events are kept for the audit: update refused'); END;
        """

    /// The `events` table of versions 1 and 2, kept to test the migration from them.
    static let eventsV1 = eventsTable("events", version: 1) + eventsRules
    static let eventsV2 = eventsTable("events", version: 2) + eventsRules

    /// From versions 1 and 2: the `events` table is copied into one of this
    /// version, in the migration's transaction (rows, positions and bytes as
    /// they were; the append-only triggers are made again on the new table).
    static let migrateEvents = eventsTable("events_new", version: schemaVersion) + """
        INSERT INTO events_new(pos, id, family, author, seq, hlc, received_at, bytes)
            SELECT pos, id, family, author, seq, hlc, received_at, bytes FROM events ORDER BY pos;
        DROP TABLE events;
        ALTER TABLE events_new RENAME TO events;

        """ + eventsRules

    // MARK: - Reading

    /// The last event of a chain in the log.
    public struct Head: Sendable, Equatable {
        public let seq: UInt64
        public let id: EventID
        public let hlc: HLC
        public static let empty = Head(seq: 0, id: .none, hlc: .zero)
    }

    /// The head of `author`'s chain in `family`.
    public func head(of author: DeviceID, in family: FamilyID) throws -> Head {
        try database.statement("SELECT seq, id, hlc FROM events WHERE family = ?1 AND author = ?2 ORDER BY seq DESC LIMIT 1")
            .first([.blob(family.bytes), .blob(author.bytes)]) { r in
                Head(seq: UInt64(r.int(0)), id: EventID(bytes: r.blob(1)), hlc: HLC(bigEndianBytes: r.blob(2)) ?? .zero)
            } ?? .empty
    }

    /// Every author with a chain in `family` and the head of that chain.
    ///
    /// The authors are found by skipping through the chain index (each the
    /// first after the one before), and each head by one lookup there: a few
    /// reads per author, however long the chains. (Comparing every event's
    /// seq with its chain's last took 0.78 s of `status` at 1M events.)
    public func heads(in family: FamilyID) throws -> [DeviceID: Head] {
        var out: [DeviceID: Head] = [:]
        try database.statement("""
            WITH RECURSIVE authors(author) AS (
                SELECT (SELECT min(author) FROM events WHERE family = ?1)
                UNION ALL
                SELECT (SELECT min(author) FROM events WHERE family = ?1 AND author > authors.author) FROM authors WHERE authors.author IS NOT NULL)
            SELECT e.author, e.seq, e.id, e.hlc FROM authors JOIN events e
            ON e.family = ?1 AND e.author = authors.author AND e.seq = (SELECT max(seq) FROM events WHERE family = ?1 AND author = authors.author)
            """).forEachRow([.blob(family.bytes)]) { r in
            out[DeviceID(bytes: r.blob(0))] = Head(seq: UInt64(r.int(1)), id: EventID(bytes: r.blob(2)), hlc: HLC(bigEndianBytes: r.blob(3)) ?? .zero)
        }
        return out
    }

    /// The families the log holds events of, found by skipping through the
    /// chain index (each the first after the one before): a few reads per
    /// family, however many events.
    public func families() throws -> [FamilyID] {
        var out: [FamilyID] = []
        try database.statement("""
            WITH RECURSIVE f(family) AS (
                SELECT (SELECT min(family) FROM events)
                UNION ALL
                SELECT (SELECT min(family) FROM events WHERE family > f.family) FROM f WHERE f.family IS NOT NULL)
            SELECT family FROM f WHERE family IS NOT NULL
            """).forEachRow { out.append(FamilyID(bytes: $0.blob(0))) }
        return out
    }

    /// How far ahead of this device's wall clock a remote clock may pull the
    /// local one. Events stamped further ahead are accepted and flagged by the
    /// audit, but not followed: one forged end-of-range timestamp must not
    /// stop every later append.
    public static let clockFollowLimit: TimeInterval = 24 * 3600

    /// The largest HLC in the log not beyond `limit`: the clock state a new
    /// local event must exceed.
    public func maxHLC(notAfter limit: HLC = HLC(rawValue: .max)) throws -> HLC {
        try database.statement("SELECT max(hlc) FROM events WHERE hlc <= ?1").first([.blob(limit.bigEndianBytes)]) { r in
            r.isNull(0) ? HLC.zero : (HLC(bigEndianBytes: r.blob(0)) ?? .zero)
        } ?? .zero
    }

    /// The earliest event of `family` dated after `date`: its author and
    /// date (read forwards through the date index from `date`).
    public func earliestEvent(in family: FamilyID, after date: HLC) throws -> (author: DeviceID, hlc: HLC)? {
        try database.statement("SELECT author, hlc FROM events WHERE hlc > ?1 AND family = ?2 ORDER BY hlc LIMIT 1")
            .first([.blob(date.bigEndianBytes), .blob(family.bytes)]) { r in
                let a = r.blob(0)
                guard a.count == 32, let h = HLC(bigEndianBytes: r.blob(1)) else { return nil }
                return (DeviceID(bytes: a), h)
            } ?? nil
    }

    /// Whether `family` holds an event dated after `date` by another author
    /// than `author`.
    public func hasEvent(in family: FamilyID, after date: HLC, notBy author: DeviceID) throws -> Bool {
        try database.statement("SELECT 1 FROM events WHERE hlc > ?1 AND family = ?2 AND author != ?3 LIMIT 1")
            .first([.blob(date.bigEndianBytes), .blob(family.bytes), .blob(author.bytes)]) { _ in true } ?? false
    }

    /// The number of events in the log, or in one family's chains.
    public func count(in family: FamilyID? = nil) throws -> Int {
        try database.statement("SELECT count(*) FROM events WHERE ?1 IS NULL OR family = ?1")
            .first([family.map { .blob($0.bytes) } ?? .null]) { Int($0.int(0)) } ?? 0
    }

    /// Whether this envelope is in the log: found by its (family, author,
    /// seq), through the chain index, and compared by id.
    public func contains(_ env: SyncEnvelope) throws -> Bool {
        try database.statement("SELECT 1 FROM events WHERE family = ?1 AND author = ?2 AND seq = ?3 AND id = ?4")
            .first([.blob(env.family.bytes), .blob(env.author.bytes), .integer(Int64(env.seq)), .blob(env.id.bytes)]) { _ in true } ?? false
    }

    /// Whether an event with this id is in the log. Ids are not indexed:
    /// this reads the whole log (for audits and tests; ``contains(_:)-(SyncEnvelope)``
    /// is the indexed lookup).
    public func contains(_ id: EventID) throws -> Bool {
        try database.statement("SELECT 1 FROM events WHERE id = ?1").first([.blob(id.bytes)]) { _ in true } ?? false
    }

    /// The stored envelope with this id, read by scanning the log (ids are
    /// not indexed). Its bytes are decoded, not verified.
    public func envelope(_ id: EventID) throws -> SyncEnvelope? {
        try database.statement("SELECT bytes FROM events WHERE id = ?1").first([.blob(id.bytes)]) { r in
            try SyncEnvelope(decoding: r.blob(0))
        }
    }

    /// The stored envelopes with these ids, read in one scan of the log
    /// (ids are not indexed); decoded, not verified. Ids it does not hold
    /// are left out.
    public func envelopes(_ ids: Set<EventID>) throws -> [SyncEnvelope] {
        guard !ids.isEmpty else { return [] }
        var out: [SyncEnvelope] = []
        let list = ids.map { "x'\($0.hex)'" }.joined(separator: ",")
        try database.statement("SELECT bytes FROM events WHERE id IN (\(list))").forEachRow { r in
            out.append(try SyncEnvelope(decoding: r.blob(0)))
        }
        return out
    }

    /// When the event at (`family`, `author`, `seq`) arrived, by this
    /// device's clock (for the audit, and the owner's look at a join), if
    /// the log holds it.
    public func receivedAt(of author: DeviceID, seq: UInt64, in family: FamilyID) throws -> Date? {
        try database.statement("SELECT received_at FROM events WHERE family = ?1 AND author = ?2 AND seq = ?3")
            .first([.blob(family.bytes), .blob(author.bytes), .integer(Int64(seq))]) { Date(timeIntervalSince1970: Double($0.int(0)) / 1000) }
    }

    /// A stored event as read back: its position in arrival order, when it
    /// arrived (local clock, for the audit only), and its verbatim bytes.
    public struct StoredEvent: Sendable {
        public let position: Int64
        public let receivedAt: Date
        public let id: EventID
        public let family: FamilyID
        public let author: DeviceID
        public let seq: UInt64
        public let hlc: HLC
        public let bytes: [UInt8]
    }

    /// Streams stored events in the given order without loading them all.
    public enum Order: Sendable { case arrival, chain, hlc }

    /// With `since`, only the events whose clock is at or after it, found
    /// through the clock's index (`log --since` of the last minute reads the
    /// last minute's events, not the whole log).
    /// With `author`, only that author's events (through the chain's index).
    public func forEachEvent(order: Order = .arrival, after position: Int64 = 0, in family: FamilyID? = nil, since: HLC? = nil, author: DeviceID? = nil,
                             _ body: (StoredEvent) throws -> Void) throws {
        let orderBy = switch order {
        case .arrival: "pos"
        case .chain: "family, author, seq"
        case .hlc: "hlc, author"
        }
        // Not cached: a caller may nest reads inside the callback. The clock
        // is stored as 8 big-endian bytes: compared as a blob, in its order.
        let stmt = try Statement(database: database, sql: """
            SELECT pos, received_at, id, family, author, seq, hlc, bytes FROM events
            WHERE pos > ?1 AND (?2 IS NULL OR family = ?2)\(since == nil ? "" : " AND hlc >= ?3")\(author == nil ? "" : " AND author = ?4") ORDER BY \(orderBy)
            """)
        var values: [SQLValue] = [.integer(position), family.map { .blob($0.bytes) } ?? .null]
        if since != nil || author != nil { values.append(since.map { .blob($0.bigEndianBytes) } ?? .null) }
        if let author { values.append(.blob(author.bytes)) }
        try stmt.forEachRow(values) { r in
            try body(StoredEvent(
                position: r.int(0), receivedAt: Date(timeIntervalSince1970: Double(r.int(1)) / 1000),
                id: EventID(bytes: r.blob(2)), family: FamilyID(bytes: r.blob(3)), author: DeviceID(bytes: r.blob(4)),
                seq: UInt64(r.int(5)), hlc: HLC(bigEndianBytes: r.blob(6)) ?? .zero, bytes: r.blob(7)))
        }
    }

    /// An event's id and verbatim bytes: all a rebuild reads of it.
    public struct StoredBytes: Sendable {
        public let id: EventID
        public let bytes: [UInt8]
    }

    /// Streams the id and bytes of every event of `family` in chain order
    /// (author, then seq): ``forEachEvent(order:after:in:since:_:)`` without the
    /// columns a rebuild does not use, which were a tenth of its reading.
    /// With `mark`, only those at or before that log position (`+pos`: read
    /// in the order of the chain's index, never a range of positions sorted).
    public func forEachEventBytes(in family: FamilyID, upTo mark: Int64 = .max, _ body: (StoredBytes) throws -> Void) throws {
        let stmt = try Statement(database: database, sql: "SELECT id, bytes FROM events WHERE family = ?1 AND +pos <= ?2 ORDER BY family, author, seq")
        try stmt.forEachRow([.blob(family.bytes), .integer(mark)]) { r in
            try body(StoredBytes(id: EventID(bytes: r.blob(0)), bytes: r.blob(1)))
        }
    }

    /// `author`'s events in `family` with seq in `range`, in seq order.
    ///
    /// Each event's bytes are hashed again and compared with the id stored
    /// with them: what goes out to other devices (segments, carried chains)
    /// is what entered the log, or nothing.
    /// - Throws: ``EventLogError/damagedEvent(author:seq:)`` at the first
    ///   event that is not.
    public func chain(of author: DeviceID, in family: FamilyID, seqs range: ClosedRange<UInt64>) throws -> [SyncEnvelope] {
        var out: [SyncEnvelope] = []
        try database.prepare("SELECT id, bytes, seq FROM events WHERE family = ?1 AND author = ?2 AND seq BETWEEN ?3 AND ?4 ORDER BY seq")
            .forEachRow([.blob(family.bytes), .blob(author.bytes), .integer(Int64(range.lowerBound)), .integer(Int64(min(range.upperBound, UInt64(Int64.max))))]) { r in
                // Its bytes, id and columns must agree (a column altered in
                // the file: the event is damaged, not a segment to write).
                let id = r.blob(0)
                guard id.count == 32, let env = try? SyncEnvelope(decoding: r.blob(1)), env.id == EventID(bytes: id),
                      env.author == author, env.family == family, env.seq == UInt64(r.int(2)) else {
                    throw EventLogError.damagedEvent(author: author, seq: UInt64(r.int(2)))
                }
                out.append(env)
            }
        return out
    }

    /// Events waiting for a predecessor, per author, in `family`.
    public func pendingByAuthor(in family: FamilyID) throws -> [DeviceID: Int] {
        var out: [DeviceID: Int] = [:]
        try database.statement("SELECT author, count(*) FROM pending WHERE family = ?1 GROUP BY author").forEachRow([.blob(family.bytes)]) { r in
            out[DeviceID(bytes: r.blob(0))] = Int(r.int(1))
        }
        return out
    }

    /// Whether `author`'s chain in `family` has a fork proof.
    public func isForked(_ author: DeviceID, in family: FamilyID) throws -> Bool {
        try database.statement("SELECT 1 FROM forks WHERE family = ?1 AND author = ?2 LIMIT 1")
            .first([.blob(family.bytes), .blob(author.bytes)]) { _ in true } ?? false
    }

    /// Events of `author` in `family` waiting for earlier ones.
    /// How many of `author`'s events in `family` wait in `pending`; with
    /// `above`, only those past that seq (its later events, not one held
    /// for a gap in the middle of its chain, whose head is whole).
    public func pendingCount(of author: DeviceID, in family: FamilyID, above: UInt64 = 0) throws -> Int {
        try database.statement("SELECT count(*) FROM pending WHERE family = ?1 AND author = ?2 AND seq > ?3")
            .first([.blob(family.bytes), .blob(author.bytes), .integer(Int64(above))]) { Int($0.int(0)) } ?? 0
    }

    public func pendingCount() throws -> Int {
        try database.statement("SELECT count(*) FROM pending").first { Int($0.int(0)) } ?? 0
    }

    /// Stores one envelope (an append's or an ingest's).
    func insert(_ env: SyncEnvelope, receivedAt: Int64) throws {
        try insert([env], receivedAt: receivedAt)
    }

    /// Stores envelopes already checked, in order, in one statement (an
    /// append's chunk of up to 64, an ingest's run of accepted events in a
    /// block of 32): one `INSERT` of many rows opens the table and its
    /// indexes once, not once a row.
    ///
    /// `OR FAIL`, not the default `ABORT`: a statement of many rows that
    /// may abort has SQLite keep a statement journal (see ``schemaV3``).
    /// Nothing undoes this statement alone: a row that breaks a constraint
    /// fails it, and the error rolls the caller's whole transaction back.
    func insert(_ envs: [SyncEnvelope], receivedAt: Int64) throws {
        guard !envs.isEmpty else { return }
        var values: [SQLValue] = []
        values.reserveCapacity(7 * envs.count)
        for env in envs {
            values.append(.blob(env.id.bytes))
            values.append(.blob(env.family.bytes))
            values.append(.blob(env.author.bytes))
            values.append(.integer(Int64(env.seq)))
            values.append(.blob(env.hlc.bigEndianBytes))
            values.append(.integer(receivedAt))
            values.append(.blob(env.bytes))
        }
        try database.run(insertSQL(rows: envs.count), values)
        // A trigger that ignores rows would drop them without an error.
        guard database.changes == envs.count else { throw EventLogError.notStored(given: envs.count, stored: database.changes) }
    }

    /// The text of ``insert(_:receivedAt:)``'s statement for `n` rows, made
    /// once per `n` (joining the row list for every statement was about a
    /// tenth of an ingest's sequential thread).
    func insertSQL(rows n: Int) -> String {
        if let sql = insertSQLByRows[n] { return sql }
        let sql = "INSERT OR FAIL INTO events(id, family, author, seq, hlc, received_at, bytes) VALUES "
            + repeatElement("(?, ?, ?, ?, ?, ?, ?)", count: n).joined(separator: ", ")
        insertSQLByRows[n] = sql
        return sql
    }

    private var insertSQLByRows: [Int: String] = [:]

    static func millis(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1000).rounded(.down)) }
}

@available(*, unavailable)
extension EventLog: Sendable {}
