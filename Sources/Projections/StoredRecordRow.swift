import Envelope
import EventLog
import Foundation

/// A record's row of the stores (`id`, `put_version`, `delete_version`,
/// `first_put`, `store`, `focus`, `at`, `fields`) as read, its values copied
/// out of SQLite, not yet read into a ``RecordState``: ``state()`` does
/// that, on any thread. (What `record list` reads on one thread and makes
/// into lines on every core.)
public struct StoredRecordRow: Sendable {
    /// The id as stored (a UUID's lowercase text in a sound row).
    public let id: String
    let put: [UInt8]
    let delete: [UInt8]?
    let firstPut: [UInt8]
    let store: String?
    let focus: String?
    /// The winning `$at`, as written.
    public let at: String?
    let fields: [UInt8]

    /// The row's values, from `id` (column `i`) and `put_version` (column
    /// `p`) on, in the order above.
    init(_ r: Row, id i: Int32, put p: Int32) {
        id = r.text(i)
        put = r.blob(p)
        delete = r.isNull(p + 1) ? nil : r.blob(p + 1)
        firstPut = r.blob(p + 2)
        store = r.isNull(p + 3) ? nil : r.text(p + 3)
        focus = r.isNull(p + 4) ? nil : r.text(p + 4)
        at = r.isNull(p + 5) ? nil : r.text(p + 5)
        fields = r.blob(p + 6)
    }

    /// The record; `nil` for one whose first put has not arrived (an
    /// update came first: no store, no focus).
    /// - Throws: ``DamagedRow`` when a value of the row cannot be read.
    public func state() throws(DamagedRow) -> RecordState? {
        guard let uuid = UUID(text: id) else { throw DamagedRow(kind: "record", id: id, value: "id") }
        guard let put = Version(bytes: put), let first = Version(bytes: firstPut),
              delete.map({ Version(bytes: $0) != nil }) ?? true else {
            throw DamagedRow(kind: "record", id: id, value: "versions")
        }
        guard let store, let focus else { return nil }
        guard let decoded = EntityState.decodeFields(fields) else { throw DamagedRow(kind: "record", id: id, value: "fields") }
        let del = delete.flatMap { Version(bytes: $0) }
        let e = EntityState(put: put, delete: del, firstPut: first, fields: decoded)
        return RecordState(
            id: uuid, store: store, focus: focus, at: at, fields: e.visibleFields(),
            creator: first.author, created: first, updated: max(put, del ?? put), deleted: e.isDeleted)
    }
}
