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
        public init(focus: String? = nil, store: String? = nil, includeDeleted: Bool = false, creator: DeviceID? = nil) {
            self.focus = focus
            self.store = store
            self.includeDeleted = includeDeleted
            self.creator = creator
        }
    }

    /// Records matching the query, oldest `at` first as a moment, whatever its offset (then by id).
    public func records(_ q: RecordQuery = RecordQuery()) throws -> [RecordState] {
        var out: [RecordState] = []
        let stmt = try database.prepare( """
            SELECT id, put_version, delete_version, first_put, store, focus, at FROM p_entities
            WHERE kind = 'record' AND put_version IS NOT NULL
              AND (?1 IS NULL OR focus = ?1) AND (?2 IS NULL OR store = ?2)
              AND (?3 OR delete_version IS NULL OR put_version > delete_version)
            ORDER BY at_ms, id
            """)
        struct Row { let id: String; let put: Version; let del: Version?; let first: Version; let store: String; let focus: String; let at: String? }
        var rows: [Row] = []
        let focus: SQLValue = q.focus.map { .text($0) } ?? .null
        let store: SQLValue = q.store.map { .text($0) } ?? .null
        try stmt.forEachRow([focus, store, .integer(q.includeDeleted ? 1 : 0)]) { r in
            guard let put = Version(bytes: r.blob(1)), let first = Version(bytes: r.blob(3)) else { return }
            let del: Version? = r.isNull(2) ? nil : Version(bytes: r.blob(2))
            rows.append(Row(id: r.text(0), put: put, del: del, first: first, store: r.text(4), focus: r.text(5), at: r.isNull(6) ? nil : r.text(6)))
        }
        for row in rows {
            guard let uuid = UUID(uuidString: row.id) else { continue }
            if let c = q.creator, row.first.author != c { continue }
            out.append(RecordState(
                id: uuid, store: row.store, focus: row.focus, at: row.at, fields: try visibleFields("record", row.id, after: row.del),
                creator: row.first.author, created: row.first, updated: max(row.put, row.del ?? row.put),
                deleted: row.del.map { $0 >= row.put } ?? false))
        }
        return out
    }

    /// One record, live or deleted; `nil` when no event names it.
    public func record(_ id: UUID) throws -> RecordState? {
        let key = id.uuidString.lowercased()
        let row = try database.statement("SELECT put_version, delete_version, first_put, store, focus, at FROM p_entities WHERE kind = 'record' AND id = ?1")
            .first([.text(key)]) { r in
                (r.isNull(0) ? nil : r.blob(0), r.isNull(1) ? nil : r.blob(1), r.isNull(2) ? nil : r.blob(2),
                 r.isNull(3) ? nil : r.text(3), r.isNull(4) ? nil : r.text(4), r.isNull(5) ? nil : r.text(5))
            }
        guard let row, let putBytes = row.0, let put = Version(bytes: putBytes), let first = row.2.flatMap({ Version(bytes: $0) }),
              let store = row.3, let focus = row.4 else { return nil }
        let del = row.1.flatMap { Version(bytes: $0) }
        return RecordState(id: id, store: store, focus: focus, at: row.5, fields: try visibleFields("record", key, after: del),
                           creator: first.author, created: first, updated: max(put, del ?? put), deleted: del.map { $0 >= put } ?? false)
    }

    /// Whether any event (put or delete) has named this record.
    public func recordExists(_ id: UUID) throws -> Bool {
        try database.statement("SELECT 1 FROM p_entities WHERE kind = 'record' AND id = ?1").first([.text(id.uuidString.lowercased())]) { _ in true } ?? false
    }

    func visibleFields(_ kind: String, _ id: String, after delete: Version?) throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        try database.statement("SELECT name, value, version FROM p_fields WHERE kind = ?1 AND id = ?2 AND value IS NOT NULL AND substr(name, 1, 1) != '$'")
            .forEachRow([.text(kind), .text(id)]) { r in
                if let d = delete, let v = Version(bytes: r.blob(2)), v <= d { return }
                if let v = JSONValue.parse(r.text(1)) { out[r.text(0)] = v }
            }
        return out
    }

    /// Photos, live (or all), optionally of one record.
    public func photos(record: UUID? = nil, includeDeleted: Bool = false) throws -> [PhotoState] {
        var rows: [(String, Version?, Version?, Version?)] = []
        try database.prepare("SELECT id, put_version, delete_version, first_put FROM p_entities WHERE kind = 'photo' AND put_version IS NOT NULL ORDER BY id").forEachRow { r in
            rows.append((r.text(0), Version(bytes: r.blob(1)), r.isNull(2) ? nil : Version(bytes: r.blob(2)), Version(bytes: r.blob(3))))
        }
        var out: [PhotoState] = []
        for (id, put, del, first) in rows {
            guard let uuid = UUID(uuidString: id), let put, let first else { continue }
            let deleted = del.map { $0 >= put } ?? false
            if deleted && !includeDeleted { continue }
            // Metadata is written once; a delete does not erase what is needed to show the trail.
            let f = try visibleFields("photo", id, after: nil)
            guard PhotoEvent.problem(f) == nil else { continue }
            let rec = f["record"]?.stringValue.flatMap(UUID.init(uuidString:))
            if let record, rec != record { continue }
            var size: Int64 = 0
            if case .int(let n)? = f["size"] { size = n }
            out.append(PhotoState(id: uuid, record: rec, size: Int(size),
                                  mediaType: f["mediaType"]?.stringValue ?? "", hash: Hex.decode(f["hash"]?.stringValue ?? "") ?? [],
                                  key: Hex.decode(f["key"]?.stringValue ?? "") ?? [], blob: f["blob"]?.stringValue ?? "",
                                  creator: first.author, deleted: deleted))
        }
        return out
    }

    public func photo(_ id: UUID) throws -> PhotoState? {
        try photos(includeDeleted: true).first { $0.id == id }
    }

    /// Every care subject, in focus-key order.
    public func subjects() throws -> [SubjectState] {
        var keys: [(String, [UInt8])] = []
        try database.statement("SELECT id, first_put FROM p_entities WHERE kind = 'subject' AND put_version IS NOT NULL ORDER BY id")
            .forEachRow { keys.append(($0.text(0), $0.blob(1))) }
        return try keys.compactMap { key, first in
            guard let focus = FocusKey(key), let v = Version(bytes: first) else { return nil }
            return SubjectState(focus: focus, fields: try visibleFields("subject", key, after: nil), creator: v.author, created: v)
        }
    }

    public func subject(_ focus: FocusKey) throws -> SubjectState? {
        try subjects().first { $0.focus == focus }
    }

    /// Every version of a record, oldest first.
    public func history(_ id: UUID) throws -> [HistoryEntry] {
        var out: [HistoryEntry] = []
        try database.statement("SELECT version, event, op, changes FROM p_history WHERE kind = 'record' AND id = ?1 ORDER BY version")
            .forEachRow([.text(id.uuidString.lowercased())]) { r in
                guard let v = Version(bytes: r.blob(0)), let op = HistoryEntry.Operation(rawValue: r.text(2)) else { return }
                let changes = JSONValue.parse(r.text(3))?.objectValue ?? [:]
                out.append(HistoryEntry(version: v, event: EventID(bytes: r.blob(1)), operation: op, changes: changes))
            }
        return out
    }

    /// An event the household rules rejected, with the reason.
    public struct Rejection: Sendable, Equatable {
        public let event: EventID
        public let author: DeviceID
        public let reason: String
    }

    /// Every rejected event: library events the fold refused, and record or
    /// subject changes by authors not allowed to make them.
    public func rejections() throws -> [Rejection] {
        var out: [Rejection] = []
        try database.prepare("SELECT event, author, reason FROM p_rejected ORDER BY event").forEachRow { r in
            out.append(Rejection(event: EventID(bytes: r.blob(0)), author: DeviceID(bytes: r.blob(1)), reason: r.text(2)))
        }
        var authors: [EventID: DeviceID] = [:]
        try database.prepare("SELECT event, version FROM p_library").forEachRow { r in
            if let v = Version(bytes: r.blob(1)) { authors[EventID(bytes: r.blob(0))] = v.author }
        }
        for (id, why) in household.rejected { out.append(Rejection(event: id, author: authors[id] ?? DeviceID(bytes: [UInt8](repeating: 0, count: 32)), reason: why)) }
        return out.sorted { $0.event.hex < $1.event.hex }
    }

    /// Record events kept for a later version (unknown store, newer schema).
    public func deferredCount() throws -> Int {
        try database.statement("SELECT count(*) FROM p_deferred").first { Int($0.int(0)) } ?? 0
    }

    /// A BLAKE2b-256 of the projected state: every subject and record, in key
    /// order, with its liveness and its visible fields (names and canonical
    /// JSON values). Two devices holding the same events print the same digest.
    public func digest() throws -> [UInt8] {
        let h = Blake2bHasher()
        h.update(item: Array("famctl-digest-v1".utf8))
        // The household: name, owner, members (role, state), rejected library events.
        h.update(item: Array((household.name ?? "").utf8))
        h.update(item: household.owner?.bytes ?? [])
        for m in household.members.values.sorted(by: { $0.device < $1.device }) {
            h.update(item: m.device.bytes)
            h.update(item: Array("\(m.name)|\(m.role.rawValue)|\(m.cutoff.map(String.init) ?? "-")".utf8))
        }
        for (id, _) in household.rejected.sorted(by: { $0.key.hex < $1.key.hex }) { h.update(item: id.bytes) }
        let fields = try database.statement("SELECT name, value, version FROM p_fields WHERE kind = ?1 AND id = ?2 AND value IS NOT NULL ORDER BY name")
        try database.prepare("SELECT kind, id, put_version, delete_version FROM p_entities ORDER BY kind, id").forEachRow { e in
            let kind = e.text(0), id = e.text(1)
            let put: Version? = e.isNull(2) ? nil : Version(bytes: e.blob(2))
            let del: Version? = e.isNull(3) ? nil : Version(bytes: e.blob(3))
            let live = put.map { p in del.map { p > $0 } ?? true } ?? false
            h.update(item: Array(kind.utf8))
            h.update(item: Array(id.utf8))
            h.update(item: [live ? 1 : 0])
            guard live else { return }
            try fields.forEachRow([.text(kind), .text(id)]) { r in
                let name = r.text(0)
                // Meta fields ($store, $focus, $at) always count; others only when written after the newest delete.
                if !name.hasPrefix("$"), let d = del, let v = Version(bytes: r.blob(2)), v <= d { return }
                h.update(item: Array(name.utf8))
                h.update(item: Array(r.text(1).utf8))
            }
        }
        return h.finalize()
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
    /// (possible after a merge; refused at entry).
    public func sleepOverlaps() throws -> [(RecordState, RecordState)] {
        let sleeps = try records(RecordQuery(store: StoreName.sleep.rawValue))
        var out: [(RecordState, RecordState)] = []
        for (_, group) in Dictionary(grouping: sleeps, by: \.focus).sorted(by: { $0.key < $1.key }) {
            let spans = group.compactMap { r in Self.span(r).map { (r, $0) } }.sorted { $0.1.0 < $1.1.0 }
            for i in spans.indices {
                for j in spans.index(after: i)..<spans.endIndex where Self.overlap(spans[i].1, spans[j].1) {
                    out.append((spans[i].0, spans[j].0))
                }
            }
        }
        return out
    }

    /// The live sleep of `focus` that `[start, end]` would overlap, if any
    /// (`end == nil`: the new sleep is still going on).
    public func overlappingSleep(focus: String, start: Date, end: Date?, excluding: UUID?) throws -> RecordState? {
        let new = (start, end ?? .distantFuture)
        for r in try records(RecordQuery(focus: focus, store: StoreName.sleep.rawValue)) where r.id != excluding {
            if let s = Self.span(r), Self.overlap(s, new) { return r }
        }
        return nil
    }
}
