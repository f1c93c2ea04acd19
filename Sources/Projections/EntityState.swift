import Envelope
import Foundation

/// One projected entity (a record, a care subject or a photo): the merge
/// state of every field it was ever given, as one row of `p_entities`.
///
/// The merge rule lives here, in memory, so applying an event is one read and
/// one write of a row instead of a statement per field:
/// - each field keeps the value of its highest-versioned write (`nil` text =
///   cleared by a `null`);
/// - `put` and `delete` are the newest put and delete, `firstPut` the oldest
///   put (its author is the creator);
/// - a live entity shows every field that is not a meta field (`$store`,
///   …) and not cleared, whenever it was written: a put newer than the
///   newest delete (an edit made before its writer saw the delete) brings
///   the entity back whole, with the edit, rather than with the edited
///   fields alone.
public struct EntityState: Sendable, Equatable {
    public struct Field: Sendable, Equatable {
        /// The value as canonical JSON text; `nil` when the winning write cleared it.
        public var text: String?
        public var version: Version

        public init(text: String?, version: Version) {
            self.text = text
            self.version = version
        }
    }

    public var put: Version?
    public var delete: Version?
    public var firstPut: Version?
    public var fields: [String: Field]
    /// The string values of the winning `$store`, `$focus` and `$at`, kept by
    /// ``merge(put:version:)`` and by the row's columns (for indexed queries).
    public var store: String?
    public var focus: String?
    public var at: String?

    public init(put: Version? = nil, delete: Version? = nil, firstPut: Version? = nil, fields: [String: Field] = [:]) {
        self.put = put
        self.delete = delete
        self.firstPut = firstPut
        self.fields = fields
    }

    /// Live when the newest put is newer than the newest delete.
    public var isLive: Bool {
        guard let put else { return false }
        return delete.map { put > $0 } ?? true
    }

    /// Deleted: a delete at least as new as the newest put.
    public var isDeleted: Bool {
        guard let put else { return delete != nil }
        return delete.map { $0 >= put } ?? false
    }

    /// Merges a put at `version` that sets each named field to `value`,
    /// already written as canonical JSON in `text` (`nil`: cleared by a `null`),
    /// so that a caller storing the values in the history too encodes them once.
    /// - Parameter overriding: fields written at another version than the
    ///   put's (a put's `$focus` at the version its writer held,
    ///   ``PreparedChange/focusSince``).
    public mutating func merge(put changes: [PreparedChange.Written], version: Version, overriding: [String: Version] = [:]) {
        if put.map({ $0 < version }) ?? true { put = version }
        if firstPut.map({ $0 > version }) ?? true { firstPut = version }
        for w in changes {
            let at = overriding.isEmpty ? version : overriding[w.name] ?? version
            if let old = fields[w.name], old.version >= at { continue }
            fields[w.name] = Field(text: w.text.map { String(decoding: $0, as: UTF8.self) }, version: at)
            // A meta field's value is read back from its text (a put keeps no values, only texts).
            if Self.isMeta(w.name) { copyMeta(name: w.name, value: w.text.flatMap { JSONValue.parse(Array($0))?.stringValue }) }
        }
    }

    /// Whether the field is `$store`, `$focus` or `$at`, whose winning value
    /// is also kept in a column.
    static func isMeta(_ name: String) -> Bool {
        // Most names are not meta: one byte tells, before a string switch.
        name.utf8.first == UInt8(ascii: "$") && (name == "$store" || name == "$focus" || name == "$at")
    }

    /// Copies a winning `$store`, `$focus` or `$at` into its column; other
    /// fields are left alone.
    mutating func copyMeta(name: String, value: String?) {
        guard name.utf8.first == UInt8(ascii: "$") else { return }
        switch name {
        case "$store": store = value
        case "$focus": focus = value
        case "$at": at = value
        default: break
        }
    }

    /// The winning `$at` as a moment in milliseconds since 1970, whatever its
    /// offset (the `at_ms` column, for ordering and ranges).
    public var atMilliseconds: Int64? {
        at.flatMap(TimeValue.parse).map(Self.milliseconds)
    }

    /// A moment in whole milliseconds since 1970, rounded down (`at_ms`,
    /// a sleep's span).
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// A sleep's interval as the projection indexes it (the columns
    /// `span_start_ms`, `span_end_ms` and `span_class`), so that the sleeps a new one may
    /// overlap are found by a range of the index rather than by reading
    /// every sleep of the baby (``Projector/overlappingSleep(focus:start:end:excluding:)``).
    public struct SpanKey: Sendable, Equatable {
        /// The start, in milliseconds since 1970, rounded down.
        public let start: Int64
        /// The later of the start and the end (an open sleep's end is
        /// `Date.distantFuture`), the same way: two intervals that overlap
        /// (``Projector/overlap(_:_:)``) then have keys that overlap too,
        /// whatever their ends, their rounding, or an end before a start.
        public let end: Int64

        /// The key of a sleep's interval: its visible `start` and `end` read
        /// as times (``StoreSchema/time(_:)``; `end` `nil`: still going on).
        /// A sleep without a readable start has none (it overlaps nothing),
        /// nor has a row of another store.
        public init(start: Date, end: Date?) {
            self.start = EntityState.milliseconds(start)
            self.end = EntityState.milliseconds(max(start, end ?? .distantFuture))
        }

        /// A field's canonical JSON text read as a time, as
        /// ``StoreSchema/time(_:)`` reads the field's value.
        public static func time<Bytes: Collection<UInt8>>(json: Bytes?) -> Date? {
            json.flatMap { JSONValue.parse(Array($0)) }.flatMap { StoreSchema.time($0) }
        }

        /// The key's length class: the number of bits of `end - start`
        /// (0 for none), so that `end - start < 2^lengthClass`. The sleeps'
        /// index is by view, class and start: for each class, a sleep that
        /// ends at or after a moment `s` starts after `s - 2^class`, so the
        /// keys that meet `[s, e]` lie in a range of starts of at most
        /// `e - s + 2^class` per class, whatever the baby's history holds
        /// (``Projector/overlappingSleep(focus:start:end:excluding:)``).
        public var lengthClass: Int64 {
            let (length, overflow) = end.subtractingReportingOverflow(start)
            return overflow ? 64 : Int64(UInt64(bitPattern: length).bitWidth - UInt64(bitPattern: length).leadingZeroBitCount)
        }

        /// The lowest start a key of `lengthClass` that ends at or after
        /// `moment` can have (`Int64.min` when every start can).
        public static func lowestStart(endingAtOrAfter moment: Int64, lengthClass: Int64) -> Int64 {
            guard lengthClass < 63 else { return .min }
            let (lowest, overflow) = moment.subtractingReportingOverflow(Int64(1) << lengthClass)
            return overflow ? .min : lowest + 1
        }
    }

    /// This state's ``SpanKey``: from its `start` and `end` fields, cleared
    /// ones left out (a deleted record's too: the queries leave it out).
    public var spanKey: SpanKey? {
        guard store == StoreName.sleep.rawValue, let start = SpanKey.time(json: fields["start"]?.text?.utf8) else { return nil }
        return SpanKey(start: start, end: SpanKey.time(json: fields["end"]?.text?.utf8))
    }

    /// Merges a delete (a tombstone) at `version`.
    public mutating func merge(delete version: Version) {
        if delete.map({ $0 < version }) ?? true { delete = version }
    }

    /// Visible fields: not meta, not cleared; none once deleted (unless
    /// `afterDelete` is false: a photo's metadata outlives its delete, for
    /// the trail).
    public func visibleFields(afterDelete: Bool = true) -> [String: JSONValue] {
        if afterDelete && isDeleted { return [:] }
        var out: [String: JSONValue] = [:]
        for (name, f) in fields where !name.hasPrefix("$") {
            guard let text = f.text else { continue }
            if let v = JSONValue.parse(text) { out[name] = v }
        }
        return out
    }

    /// Field names in byte order (SQLite's BINARY collation), for digests.
    public var sortedFieldNames: [String] {
        fields.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    // MARK: - Stored form of `fields`

    /// The `fields` column: format byte 1, the distinct versions (count, then
    /// 40 bytes each), then the fields in name byte order, each its name, the
    /// index of its version, and its JSON text (length + 1; 0 = cleared).
    /// Lengths and counts are LEB128 varints.
    public func encodedFields() -> [UInt8] {
        let sorted = fields.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        // Few distinct versions per entity (usually one): a linear search beats hashing them.
        var versions: [Version] = []
        var entries: [(name: String, version: Int, text: [UInt8]?)] = []
        entries.reserveCapacity(sorted.count)
        for (name, f) in sorted {
            let k = versions.firstIndex(of: f.version) ?? { versions.append(f.version); return versions.count - 1 }()
            entries.append((name, k, f.text.map { Array($0.utf8) }))
        }
        return Self.encodeFields(versions: versions, entries)
    }

    /// The `fields` column of ``encodedFields()``, from its parts: the
    /// distinct versions, and the fields already in name byte order, each
    /// with the index of its version and its JSON text (`nil`: cleared).
    static func encodeFields(versions: [Version], _ fields: [(name: String, version: Int, text: [UInt8]?)]) -> [UInt8] {
        var out: [UInt8] = [1]
        out.reserveCapacity(16 + versions.count * 40 + fields.reduce(0) { $0 + $1.name.utf8.count + ($1.text?.count ?? 0) + 4 })
        putVarint(&out, versions.count)
        for v in versions { out += v.bytes }
        encodeFieldList(fields, into: &out)
        return out
    }

    /// The part of the `fields` column after the versions.
    static func encodeFieldList(_ fields: [(name: String, version: Int, text: [UInt8]?)], into out: inout [UInt8]) {
        putVarint(&out, fields.count)
        for f in fields { encodeField(name: f.name, version: f.version, text: f.text?[...], into: &out) }
    }

    /// ``encodeFieldList(_:into:)`` of the fields a put wrote, already in
    /// name byte order, each at version index 0.
    static func encodeFieldList(written: [PreparedChange.Written], into out: inout [UInt8]) {
        putVarint(&out, written.count)
        for w in written { encodeField(name: w.name, version: 0, text: w.text, into: &out) }
    }

    /// One field of the list: its name, the index of its version, its JSON
    /// text (length + 1; 0 = cleared).
    @inline(__always)
    private static func encodeField(name: String, version: Int, text: ArraySlice<UInt8>?, into out: inout [UInt8]) {
        var name = name
        name.withUTF8 { u in
            putVarint(&out, u.count)
            out.append(contentsOf: u)
        }
        putVarint(&out, version)
        if let text {
            putVarint(&out, text.count + 1)
            out += text
        } else {
            putVarint(&out, 0)
        }
    }

    /// The `fields` column of an entity whose every field was written at
    /// `version`, from ``encodeFieldList(_:into:)`` of those fields (each
    /// with version index 0): the one version is filled in last.
    static func encodeFields(version: Version, fieldList: [UInt8]) -> [UInt8] {
        // Sized first: a literal `[1, 1]` allocated, and reserving then moved it.
        var out: [UInt8] = []
        out.reserveCapacity(2 + version.bytes.count + fieldList.count)
        out.append(1)
        out.append(1)
        out += version.bytes
        out += fieldList
        return out
    }

    /// The changes a put made, as its history entry writes them (the
    /// canonical JSON object of the fields it wrote, `null` for a field it
    /// cleared, keys in order), from the fields of an entity that put alone
    /// wrote: every field it holds is one the put wrote.
    public static func putTrail(of fields: [String: Field]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            JSONValue.quote(name, into: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: (field.text ?? "null").utf8)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes a `fields` column; `nil` when it is not one.
    public static func decodeFields(_ b: [UInt8]) -> [String: Field]? {
        guard b.first == 1 else { return nil }
        var i = 1
        guard let nv = varint(b, &i), nv <= b.count / 40 else { return nil }
        var versions: [Version] = []
        versions.reserveCapacity(nv)
        for _ in 0..<nv {
            guard i + 40 <= b.count, let v = Version(bytes: Array(b[i..<(i + 40)])) else { return nil }
            versions.append(v)
            i += 40
        }
        guard let nf = varint(b, &i), nf <= b.count else { return nil }
        var out: [String: Field] = [:]
        out.reserveCapacity(nf)
        for _ in 0..<nf {
            guard let nl = varint(b, &i), nl <= b.count - i else { return nil }
            let name = String(decoding: b[i..<(i + nl)], as: UTF8.self)
            i += nl
            guard let vi = varint(b, &i), vi < versions.count, let tl = varint(b, &i) else { return nil }
            var text: String?
            if tl > 0 {
                guard tl - 1 <= b.count - i else { return nil }
                text = String(decoding: b[i..<(i + tl - 1)], as: UTF8.self)
                i += tl - 1
            }
            out[name] = Field(text: text, version: versions[vi])
        }
        guard i == b.count else { return nil }
        return out
    }

    static func putVarint(_ out: inout [UInt8], _ n: Int) {
        var n = UInt64(n)
        while n >= 0x80 {
            out.append(UInt8(n & 0x7F) | 0x80)
            n >>= 7
        }
        out.append(UInt8(n))
    }

    /// A LEB128 varint of up to 35 bits at `i` of `b` (an array, or bytes
    /// read in place), `i` moved past it; `nil` when it runs off the end or
    /// is longer.
    static func varint<Bytes: RandomAccessCollection<UInt8>>(_ b: Bytes, _ i: inout Int) -> Int? where Bytes.Index == Int {
        var n: UInt64 = 0
        var shift: UInt64 = 0
        while i < b.endIndex, shift < 35 {
            let byte = b[i]
            i += 1
            n |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return Int(n) }
            shift += 7
        }
        return nil
    }
}
