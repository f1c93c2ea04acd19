import Envelope
import Foundation

/// The part of applying an event that needs no projection state: reading the
/// body into the change it makes and writing its values as canonical JSON.
/// Pure and `Sendable`, so a caller can make it on another core ahead of
/// ``Projector/apply(_:prepared:)``, which does the rest (the household's
/// verdict, the merge, the writes).
public struct PreparedChange: Sendable, Equatable {
    /// A field set by a put: its value, and that value as canonical JSON
    /// (`nil`: cleared by a `null`), written once for the row and the history.
    /// (A struct, not a tuple: arrays of tuples were destroyed through the
    /// runtime's generic path, a tenth of a rebuild worker's time.)
    public struct Written: Sendable, Equatable {
        public let name: String
        /// A slice of the put's trail, where the value was written: one
        /// buffer for every value of the put, not an array each.
        public let text: ArraySlice<UInt8>?
    }

    /// A field as the body names it, before the put writes it.
    struct Named: Sendable {
        let name: String
        let value: JSONValue
    }

    enum Change: Sendable, Equatable {
        /// A household event, with its body (stored in `p_library`).
        case library(LibraryEvent, EventBody)
        /// A known type with missing or invalid keys.
        case malformed(EnvelopeError)
        case deferred(String)
        case put(Put)
        case delete(kind: String, id: String, result: Projector.Applied)
        case ignored
    }

    /// What a put writes. A class, so that the change is one reference:
    /// copied out of an array of opened events, or bound by the projection's
    /// `switch`, the six values each were about fourteen retains and releases
    /// an event on the projecting thread.
    ///
    /// Its trail and the fields it wrote are kept as the trail's bytes and
    /// where each field lies in them: the history entry's text and the
    /// ``Written`` fields a merge needs are made only when asked for. A put
    /// that creates its entity (nearly every put of a rebuild, and of an
    /// append of new records) needs neither: its row is made ahead
    /// (``FreshRow``). Made for every put, the strings and slices were about
    /// a sixth of a rebuild's worker.
    final class Put: Sendable, Equatable {
        let kind: String
        let id: String
        /// The trail: the canonical JSON object of what the put wrote.
        let trailBytes: [UInt8]
        /// Where each field the put wrote lies in ``trailBytes``, in the
        /// trail's order.
        struct Span: Sendable, Equatable {
            /// The name's bytes (unescaped: the canonical reader's names
            /// need no escape), when ``Put/names`` does not give it.
            let name: Range<Int>
            /// The value's canonical JSON text; `nil`: cleared (`null`).
            let value: Range<Int>?
        }
        let spans: [Span]
        /// The fields' names, in the spans' order, when they are not read
        /// from the trail.
        let names: [String]?
        let fresh: FreshRow
        let result: Projector.Applied

        init(kind: String, id: String, trail: [UInt8], spans: [Span], names: [String]?, fresh: FreshRow, result: Projector.Applied) {
            self.kind = kind
            self.id = id
            self.trailBytes = trail
            self.spans = spans
            self.names = names
            self.fresh = fresh
            self.result = result
        }

        /// The trail as text: the put's history entry.
        var trail: String { String(decoding: trailBytes, as: UTF8.self) }

        /// The fields the put wrote, in the trail's order, each with its
        /// value's canonical text (a slice of the trail).
        var written: [Written] {
            spans.indices.map { k in
                let s = spans[k]
                let name = names?[k] ?? String(decoding: trailBytes[s.name], as: UTF8.self)
                return Written(name: name, text: s.value.map { trailBytes[$0] })
            }
        }

        static func == (a: Put, b: Put) -> Bool {
            a === b || (a.kind == b.kind && a.id == b.id && a.trailBytes == b.trailBytes && a.written == b.written && a.fresh == b.fresh
                        && a.result == b.result)
        }
    }

    /// The body's `type`.
    public let type: String
    /// A record, photo or care-subject change: the household must allow its author to write.
    let isChange: Bool
    let change: Change

    /// Whether the body's type is a household one (``LibraryEvent/types``),
    /// well-formed or not.
    /// (A record, photo or subject change is none: asked first, it spares
    /// the set's hashing for nearly every event of a rebuild.)
    public var isLibraryType: Bool { !isChange && LibraryEvent.types.contains(type) }

    /// The entity a put writes (`record` and its id, `subject` and its
    /// focus key, `photo` and its id); `nil` for anything else.
    public var putEntity: (kind: String, id: String)? {
        if case .put(let put) = change { (put.kind, put.id) } else { nil }
    }

    /// The household event, when the body is a well-formed one.
    public var libraryEvent: LibraryEvent? {
        if case .library(let event, _) = change { event } else { nil }
    }

    /// The event's version, when the caller knew it (saves making it again).
    let version: Version?

    /// For a put an `accept` carried into a family (the body's `carried`:
    /// the HLC, 16 hex digits, at which the joining device last wrote the
    /// entity on its own), that HLC: the put's fields and its put are
    /// merged at that moment, not at the event's, so that what the family
    /// wrote since (an edit, a delete) is not undone by an older copy that
    /// joined later. Only an HLC below the event's own counts.
    let carriedSince: HLC?

    /// The body key of ``carriedSince``.
    public static let carriedKey = "carried"

    /// `body` with ``carriedSince`` set to `since`: a put an `accept`
    /// carries into a family.
    /// A record's put says `schema` 2 (schema 1 and `carried`): a reader
    /// that knows only schema 1 keeps it in its log and applies it after
    /// an upgrade (``Change/deferred(_:)``), rather than merge it at its
    /// event's moment, unlike every reader that knows the key.
    public static func carried(_ body: EventBody, since: HLC) -> EventBody {
        let hex = String(since.rawValue, radix: 16)
        var fields = body.object
        fields[carriedKey] = .string(String(repeating: "0", count: 16 - hex.count) + hex)
        let schema = body.type == RecordEvent.Kind.put.rawValue ? max(body.schema, Self.carriedRecordSchema) : body.schema
        return EventBody(type: body.type, schema: schema, fields: fields)
    }

    /// The record schema that brought `carried`.
    public static let carriedRecordSchema = 2

    /// For a record's put that does not move it (a change of other fields):
    /// the version of the `$focus` its writer held, which the put's `focus`
    /// repeats. The put writes `$focus` at that version rather than its
    /// own, so it never undoes a move (`record update --focus`) its writer
    /// had not seen: every put names the record's subject, and otherwise
    /// the later one, a change of a note say, would win over the move.
    /// Only a version below the put's own counts.
    let focusSince: Version?

    /// The body key of ``focusSince``: the version as 80 lowercase hex
    /// digits (its 40 bytes: the HLC big-endian, then the author).
    public static let focusSinceKey = "focusSince"

    /// The record schema that brought `focusSince`: a reader that knows
    /// only schema 2 keeps such a put in its log and applies it once
    /// upgraded, rather than let it undo a move.
    public static let focusSinceRecordSchema = 3

    /// `body`, a record's put, saying that its focus is the one written at
    /// `since` (``focusSince``).
    public static func keepingFocus(_ body: EventBody, since: Version) -> EventBody {
        var fields = body.object
        fields[focusSinceKey] = .string(Hex.encode(since.bytes))
        return EventBody(type: body.type, schema: max(body.schema, focusSinceRecordSchema), fields: fields)
    }

    /// ``focusSince`` as the body holds it (`nil`: not 80 lowercase hex digits).
    static func focusVersion(_ text: String?) -> Version? {
        guard let text, text.utf8.count == 80, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
              let bytes = Hex.decode(text) else { return nil }
        return Version(bytes: bytes)
    }

    /// The version a put made by `version`'s event writes `$focus` at, when
    /// not its own (``focusSince``, below the put's write version).
    func focusWriteVersion(_ version: Version) -> Version? {
        guard let since = focusSince, since < writeVersion(version) else { return nil }
        return since
    }

    /// ``carriedSince`` as the body holds it (`nil`: not 16 hex digits).
    static func carriedHLC(_ text: String?) -> HLC? {
        guard let text, text.utf8.count == 16, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
              let raw = UInt64(text, radix: 16) else { return nil }
        return HLC(rawValue: raw)
    }

    /// What a put made by `version`'s event merges at: its own version, or
    /// the earlier moment it was carried from (``carriedSince``). The
    /// household judges the event by its own version all the same.
    func writeVersion(_ version: Version) -> Version {
        guard let since = carriedSince, since < version.hlc else { return version }
        return Version(hlc: since, author: version.author)
    }

    /// The row a put writes when its entity is new (no row yet), but for the
    /// event's version: the merge of its fields into an empty
    /// ``EntityState``, encoded. Made ahead with the rest, so that a rebuild
    /// (where nearly every put is an entity's first) or an append of new
    /// records neither merges nor encodes on the projecting thread.
    struct FreshRow: Sendable, Equatable {
        /// `store`, `focus` and `at` of the new row.
        let state: EntityState
        let atMilliseconds: Int64?
        /// The `fields` column after its versions (every field at version index 0).
        let fieldList: [UInt8]
        /// A sleep's interval, for the span columns (``EntityState/spanKey``
        /// of the new row, read here, on the core that made the row).
        let spanKey: EntityState.SpanKey?
        /// The `view` column (``Projector/view(kind:focus:store:)``).
        let view: Int64

        init(kind: String, state: EntityState, atMilliseconds: Int64?, fieldList: [UInt8], spanKey: EntityState.SpanKey?) {
            self.state = state
            self.atMilliseconds = atMilliseconds
            self.fieldList = fieldList
            self.spanKey = spanKey
            view = Projector.view(kind: kind, focus: state.focus, store: state.store)
        }

        /// The new row's state and `fields` column, for the event at `version`.
        func row(at version: Version) -> (EntityState, [UInt8]) {
            var e = state
            e.put = version
            e.firstPut = version
            return (e, column(at: version))
        }

        /// The new row's `fields` column, for the event at `version`.
        func column(at version: Version) -> [UInt8] {
            EntityState.encodeFields(version: version, fieldList: fieldList)
        }

        /// The length of ``column(at:)``.
        func columnCount(at version: Version) -> Int { 2 + version.bytes.count + fieldList.count }

        /// Writes ``column(at:)`` to `out`, ``columnCount(at:)`` bytes.
        func writeColumn(at version: Version, into out: UnsafeMutableRawBufferPointer) {
            precondition(out.count == columnCount(at: version))
            // ``EntityState/encodeFields(version:fieldList:)``: one version, then the list.
            out[0] = 1
            out[1] = 1
            version.bytes.withUnsafeBytes { out.baseAddress!.advanced(by: 2).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            fieldList.withUnsafeBytes { f in
                if f.count > 0 { out.baseAddress!.advanced(by: 2 + version.bytes.count).copyMemory(from: f.baseAddress!, byteCount: f.count) }
            }
        }
    }

    /// - Parameter version: the event's version (``Version/init(_:)`` of its
    ///   envelope), when known.
    public init(_ body: EventBody, version: Version? = nil) {
        self.version = version
        // Only a record's or a care subject's put is carried by `accept`;
        // on anything else the key means nothing.
        carriedSince = body.type == RecordEvent.Kind.put.rawValue || body.type == SubjectEvent.type
            ? Self.carriedHLC(body.object[Self.carriedKey]?.stringValue) : nil
        focusSince = body.type == RecordEvent.Kind.put.rawValue ? Self.focusVersion(body.object[Self.focusSinceKey]?.stringValue) : nil
        type = body.type
        isChange = RecordEvent.Kind(rawValue: body.type) != nil || SubjectEvent.Kind(rawValue: body.type) != nil || PhotoEvent.Kind(rawValue: body.type) != nil
        do throws(EnvelopeError) {
            change = try Self.read(body)
        } catch {
            change = .malformed(error)
        }
    }

    /// Reads a `record.put` or `record.delete` body straight from its JSON
    /// bytes, without an ``EventBody`` and its dictionaries: the change
    /// ``init(_:version:)`` makes of `EventBody(decoding: bytes)`, or `nil`
    /// when the bytes are not a record event of the plain shape famctl
    /// writes (every key of the right JSON type, `fields` an object), so
    /// that the caller decodes them the general way. (Without the general
    /// reader's dictionaries and their lookups, a rebuild's worker ran about
    /// 6 % fewer instructions.)
    public init?(recordBody bytes: [UInt8], version: Version) {
        if let canonical = PreparedChange(canonicalRecordPut: bytes, version: version) { self = canonical; return }
        guard let (outer, nested) = JSONValue.members(bytes, nested: "fields") else { return nil }
        var type: String?, schema: Int64?, record: String?, store: String?, focus: String?, at: String?, carried: String?, focusSince: String?
        for m in outer {
            if case .int(let v) = m.value, m.key == "schema" { schema = v; continue }
            // Any other known key must hold a string (`fields`, an object: read apart).
            let string: String?
            if case .string(let v) = m.value { string = v } else { string = nil }
            switch m.key {
            case "type": type = string
            case "record": record = string
            case "store": store = string
            case "focus": focus = string
            case "at": at = string; if string == nil { return nil }
            case Self.carriedKey: carried = string
            case Self.focusSinceKey: focusSince = string
            case "schema", "fields": return nil
            default: continue   // a key this version does not know: kept by EventBody, not projected
            }
        }
        guard let type, let kind = RecordEvent.Kind(rawValue: type), let schema, schema >= 1, schema <= Int64(Int32.max),
              let record, let uuid = UUIDText.parse(record), let store, let focus else { return nil }
        self.version = version
        carriedSince = Self.carriedHLC(carried)
        self.focusSince = type == RecordEvent.Kind.put.rawValue ? Self.focusVersion(focusSince) : nil
        self.type = type
        isChange = true
        var fields: [Named] = []
        fields.reserveCapacity((nested?.count ?? 0) + 3)
        for m in nested ?? [] { fields.append(Named(name: m.key, value: m.value)) }
        change = Self.record(kind, uuid, store: store, focus: focus, at: at, schema: Int(schema), fields: fields)
    }

    private static func read(_ body: EventBody) throws(EnvelopeError) -> Change {
        if let lib = try LibraryEvent(body) { return .library(lib, body) }
        if let r = try RecordEvent(body) {
            return record(r.kind, r.record, store: r.store, focus: r.focus, at: r.at, schema: body.schema,
                          fields: r.fields.map { Named(name: $0.key, value: $0.value) })
        }
        if let p = try PhotoEvent(body) {
            let id = UUIDText.lowercase(p.photo)
            switch p.kind {
            case .put: return put("photo", id, p.fields, .photo(p.photo))
            case .delete: return .delete(kind: "photo", id: id, result: .photo(p.photo))
            }
        }
        if let s = try SubjectEvent(body) {
            if s.kind == .delete { return .delete(kind: "subject", id: s.focus.description, result: .subject(s.focus)) }
            return put("subject", s.focus.description, s.fields, meta: [("$kind", .string(SubjectKind(s.focus).rawValue))], .subject(s.focus))
        }
        return .ignored
    }

    /// A record event's change, from its parts (`fields`: the body's, each
    /// name once).
    private static func record(_ kind: RecordEvent.Kind, _ record: UUID, store: String, focus: String, at: String?, schema: Int,
                               fields: [Named]) -> Change {
        guard StoreName.isKnown(store) else { return .deferred("unknown store '\(store)'") }
        guard schema <= StoreSchema.version else { return .deferred("\(store) schema \(schema) is newer than \(StoreSchema.version)") }
        let id = UUIDText.lowercase(record)
        switch kind {
        case .put:
            var meta: [(String, JSONValue)] = [("$store", .string(store)), ("$focus", .string(focus))]
            if let at { meta.append(("$at", .string(at))) }
            return put("record", id, fields, meta: meta, .record(record))
        case .delete:
            return .delete(kind: "record", id: id, result: .record(record))
        }
    }

    /// - Parameter meta: the `$`-named fields the event implies (`$store`, …),
    ///   which win over body fields of the same name.
    private static func put(_ kind: String, _ id: String, _ fields: [String: JSONValue], meta: [(String, JSONValue)] = [],
                            _ result: Projector.Applied) -> Change {
        put(kind, id, fields.map { Named(name: $0.key, value: $0.value) }, meta: meta, result)
    }

    private static func put(_ kind: String, _ id: String, _ fields: [Named], meta: [(String, JSONValue)] = [],
                            _ result: Projector.Applied) -> Change {
        var named: [Named] = []
        named.reserveCapacity(fields.count + meta.count)
        for f in fields where !meta.contains(where: { $0.0 == f.name }) { named.append(f) }
        for (name, value) in meta { named.append(Named(name: name, value: value)) }
        // Sorted once, as canonical JSON sorts keys (the names are distinct):
        // the trail is written in this order; so is the field list, which
        // wants byte order, the same order when every name is ASCII.
        named.sort { $0.name < $1.name }
        // The trail is written first, each value straight into it; the
        // written fields keep slices of it as their canonical text. (Each
        // value's text in an array of its own was six allocations a put.)
        var trail: [UInt8] = [UInt8(ascii: "{")]
        trail.reserveCapacity(256)
        var ranges: [Range<Int>?] = []
        ranges.reserveCapacity(named.count)
        for f in named {
            if trail.count > 1 { trail.append(UInt8(ascii: ",")) }
            JSONValue.quote(f.name, into: &trail)
            trail.append(UInt8(ascii: ":"))
            let start = trail.count
            f.value.write(into: &trail)
            ranges.append(f.value == .null ? nil : start..<trail.count)
        }
        trail.append(UInt8(ascii: "}"))
        var written: [Written] = []
        written.reserveCapacity(named.count)
        for (f, r) in zip(named, ranges) { written.append(Written(name: f.name, text: r.map { trail[$0] })) }
        // What merging into an empty state and encoding it gives, without the dictionary.
        var e = EntityState()
        for f in named { e.copyMeta(name: f.name, value: f.value.stringValue) }
        var fieldList: [UInt8] = []
        fieldList.reserveCapacity(trail.count + 16)   // the same names and values, other framing
        let byteOrder = written.allSatisfy { $0.name.utf8.allSatisfy { $0 < 0x80 } }
            ? written : written.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        EntityState.encodeFieldList(written: byteOrder, into: &fieldList)
        // (A field of JSON null is cleared: no time, as in ``EntityState/spanKey``.)
        let start = e.store == StoreName.sleep.rawValue ? StoreSchema.time(named.first { $0.name == "start" }?.value) : nil
        let spanKey = start.map { EntityState.SpanKey(start: $0, end: StoreSchema.time(named.first { $0.name == "end" }?.value)) }
        let fresh = FreshRow(kind: kind, state: e, atMilliseconds: e.atMilliseconds, fieldList: fieldList, spanKey: spanKey)
        let spans = ranges.map { r in Put.Span(name: 0..<0, value: r) }
        return .put(Put(kind: kind, id: id, trail: trail, spans: spans, names: named.map(\.name), fresh: fresh, result: result))
    }
}
