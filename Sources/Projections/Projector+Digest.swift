import Envelope
import EventLog
import Foundation

extension Projector {
    /// A BLAKE2b-256 of the projected state: every subject and record, in key
    /// order, with its liveness and its visible fields (names and canonical
    /// JSON values). Two devices holding the same events print the same digest.
    ///
    /// Each row is hashed straight from SQLite's buffers when it has the
    /// usual form (``DigestRow``), else read into an ``EntityState`` first:
    /// the same bytes are hashed either way.
    public func digest() throws -> [UInt8] { try digest(inPlace: true) }

    /// ``digest()``, every row read into an ``EntityState`` unless `inPlace`
    /// (tests compare the two).
    func digest(inPlace: Bool) throws -> [UInt8] {
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
        var row = DigestRow()
        try database.prepare("SELECT kind, id, put_version, delete_version, NULL, fields FROM \(schema).p_entities ORDER BY kind, id").forEachRow { r in
            if inPlace, row.read(r) {
                row.hash(into: h)
            } else {
                try Self.hashEntity(r, into: h)
            }
        }
        return h.finalize()
    }

    /// ``digest()``'s part for one row (`kind, id, put, delete, first, fields`),
    /// read into an ``EntityState``: any row, a damaged one refused.
    static func hashEntity(_ r: Row, into h: Blake2bHasher) throws {
        let kind = r.text(0), id = r.text(1)
        let e = try Self.entityState(r, kind: kind, id: id, put: 2)
        switch kind {
        case "record", "photo": guard UUID(text: id) != nil else { throw DamagedRow(kind: kind, id: id, value: "id") }
        case "subject": guard FocusKey(id) != nil else { throw DamagedRow(kind: kind, id: id, value: "id") }
        default: break
        }
        h.update(item: Array(kind.utf8))
        h.update(item: Array(id.utf8))
        h.update(item: [e.isLive ? 1 : 0])
        guard e.isLive else { return }
        for name in e.sortedFieldNames {
            guard let f = e.fields[name], let text = f.text else { continue }
            h.update(item: Array(name.utf8))
            h.update(item: Array(text.utf8))
        }
    }
}

/// One row of ``Projector/digest()`` read in place, without a string, an
/// array or a dictionary: a record's or a photo's whose id is a UUID, whose
/// versions are whole, whose `fields` column is well formed
/// (``EntityState/encodedFields()``) with names in strictly ascending byte
/// order, whose kind and id are ASCII without a NUL, and whose names and
/// texts are well-formed UTF-8. Any other row, damaged or unusual (a
/// subject), is left to
/// ``Projector/hashEntity(_:into:)``, which hashes the same bytes a row of
/// this form gives, or refuses the row.
struct DigestRow {
    private var kind = UnsafeRawBufferPointer(start: nil, count: 0)
    private var id = UnsafeRawBufferPointer(start: nil, count: 0)
    private var isLive = false
    private var fields = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Each visible field: the offsets and lengths of its name and its text in `fields`.
    private var visible: [(name: Int, nameCount: Int, text: Int, textCount: Int)] = []

    /// Reads `r`; false when it is not of this form (nothing is kept then).
    /// The buffers are SQLite's: ``hash(into:)`` must run before the
    /// statement steps again.
    mutating func read(_ r: Row) -> Bool {
        kind = r.unsafeBytes(0)
        id = r.unsafeBytes(1)
        guard Self.equals(kind, "record") || Self.equals(kind, "photo"), Self.isPlainASCII(id),
              UUIDText.parse(id.assumingMemoryBound(to: UInt8.self)) != nil else { return false }
        let put = r.isNull(2) ? nil : r.unsafeBytes(2), delete = r.isNull(3) ? nil : r.unsafeBytes(3)
        guard put.map({ $0.count == 40 }) ?? true, delete.map({ $0.count == 40 }) ?? true else { return false }
        if let put {
            isLive = delete.map { Self.precedes($0, put) } ?? true
        } else {
            isLive = false
        }
        fields = r.unsafeBytes(5)
        return readFields()
    }

    /// Hashes the row read last, as ``Projector/hashEntity(_:into:)`` would.
    func hash(into h: Blake2bHasher) {
        h.update(item: kind)
        h.update(item: id)
        withUnsafeBytes(of: UInt8(isLive ? 1 : 0)) { h.update(item: $0) }
        guard isLive else { return }
        for f in visible {
            h.update(item: UnsafeRawBufferPointer(rebasing: fields[f.name..<(f.name + f.nameCount)]))
            h.update(item: UnsafeRawBufferPointer(rebasing: fields[f.text..<(f.text + f.textCount)]))
        }
    }

    /// Walks `fields` as ``EntityState/decodeFields(_:)`` does, with the
    /// same checks, noting the fields that hold a text.
    private mutating func readFields() -> Bool {
        visible.removeAll(keepingCapacity: true)
        let b = fields
        guard b.first == 1 else { return false }
        var i = 1
        guard let nv = EntityState.varint(b, &i), nv <= b.count / 40, nv * 40 <= b.count - i else { return false }
        i += nv * 40
        guard let nf = EntityState.varint(b, &i), nf <= b.count else { return false }
        var previous: Range<Int>?
        for _ in 0..<nf {
            guard let nl = EntityState.varint(b, &i), nl <= b.count - i else { return false }
            let name = i..<(i + nl)
            i += nl
            guard let vi = EntityState.varint(b, &i), vi < nv, let tl = EntityState.varint(b, &i) else { return false }
            let nameBytes = UnsafeRawBufferPointer(rebasing: b[name])
            guard Self.isUTF8(nameBytes) else { return false }
            if let previous, !Self.precedes(UnsafeRawBufferPointer(rebasing: b[previous]), nameBytes) { return false }
            previous = name
            if tl > 0 {
                guard tl - 1 <= b.count - i else { return false }
                guard Self.isUTF8(UnsafeRawBufferPointer(rebasing: b[i..<(i + tl - 1)])) else { return false }
                visible.append((name.lowerBound, nl, i, tl - 1))
                i += tl - 1
            }
        }
        return i == b.count
    }

    /// Whether `a` comes strictly before `b` in byte order (a prefix first).
    private static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let n = min(a.count, b.count)
        if n > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, n)
            if c != 0 { return c < 0 }
        }
        return a.count < b.count
    }

    private static func equals(_ a: UnsafeRawBufferPointer, _ s: StaticString) -> Bool {
        a.count == s.utf8CodeUnitCount && (a.count == 0 || memcmp(a.baseAddress!, s.utf8Start, a.count) == 0)
    }

    /// Well-formed UTF-8 (the Unicode standard's table 3-7): its bytes are
    /// the same as those of a String made of them, which repairs any other.
    static func isUTF8(_ b: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = b.count
        while i < n {
            let c = b[i]
            if c < 0x80 {
                i += 1
                continue
            }
            func continuation(_ k: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
                i + k < n && b[i + k] >= low && b[i + k] <= high
            }
            switch c {
            case 0xC2...0xDF:
                guard continuation(1) else { return false }
                i += 2
            case 0xE0:
                guard continuation(1, 0xA0), continuation(2) else { return false }
                i += 3
            case 0xE1...0xEC, 0xEE...0xEF:
                guard continuation(1), continuation(2) else { return false }
                i += 3
            case 0xED:
                guard continuation(1, 0x80, 0x9F), continuation(2) else { return false }
                i += 3
            case 0xF0:
                guard continuation(1, 0x90), continuation(2), continuation(3) else { return false }
                i += 4
            case 0xF1...0xF3:
                guard continuation(1), continuation(2), continuation(3) else { return false }
                i += 4
            case 0xF4:
                guard continuation(1, 0x80, 0x8F), continuation(2), continuation(3) else { return false }
                i += 4
            default:
                return false
            }
        }
        return true
    }

    /// ASCII without a NUL: the same as the String a column's text gives.
    private static func isPlainASCII(_ b: UnsafeRawBufferPointer) -> Bool {
        for byte in b where byte >= 0x80 || byte == 0 { return false }
        return true
    }
}
