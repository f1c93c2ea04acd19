import Envelope
import Foundation

extension PreparedChange {
    /// Reads a `record.put` body that is already in the canonical form
    /// famctl writes (``EventBody/encoded()``: compact, keys in byte order)
    /// without reading its values at all: the put's trail and the new row's
    /// field list are the body's own bytes, copied in runs. `nil` when the
    /// bytes are anything else, and the caller then reads them the general
    /// way; when not `nil`, the change equals the one the general reader
    /// makes, byte for byte (`PreparedChangeTests`).
    ///
    /// Declined, so read the general way: a key the put does not know, a
    /// string with an escape, a field name that is not ASCII or sorts
    /// before `$`, an object or an array holding one (or an array), a number not written the way
    /// ``JSONValue`` writes it, an unknown store, a newer schema. (Reading
    /// every value into a ``JSONValue``, then writing it again, was half of
    /// a rebuild's worker.)
    ///
    /// - Parameter version: the event's, when known (as for
    ///   ``init(_:version:)``).
    public init?(canonicalRecordPut bytes: [UInt8], version: Version?) {
        guard let change = bytes.withUnsafeBufferPointer({ b in
            var reader = CanonicalPutReader(b)
            return reader.read()
        }) else { return nil }
        self.version = version
        carriedSince = nil   // a carried put is not of this shape
        focusSince = nil     // nor one that keeps its focus
        type = RecordEvent.Kind.put.rawValue
        isChange = true
        self.change = change
    }
}

/// The reader behind ``PreparedChange/init(canonicalRecordPut:version:)``:
/// every check is against `b.count`, and any surprise is a `nil`.
private struct CanonicalPutReader {
    let b: UnsafeBufferPointer<UInt8>
    var i = 0

    init(_ b: UnsafeBufferPointer<UInt8>) { self.b = b }

    /// A put with its fields, in the body's order:
    /// `{["at":S,]"fields":{…},"focus":S,"record":S,"schema":N,"store":S,"type":"record.put"}`.
    mutating func read() -> PreparedChange.Change? {
        guard take("{") else { return nil }
        var at: Range<Int>?
        if take(#""at":"#) {
            guard let r = string() else { return nil }
            at = r
            guard take(",") else { return nil }
        }
        guard take(#""fields":{"#) else { return nil }
        // The fields: names in strictly rising byte order, ASCII, after `$`
        // (so the implied `$at`, `$focus` and `$store` sort first).
        let inner = i
        var fields: [(name: Range<Int>, value: Range<Int>?)] = []
        fields.reserveCapacity(8)
        if !take("}") {
            while true {
                guard let name = string(), name.count > 0, b[name.lowerBound] > UInt8(ascii: "$"),
                      isASCII(name), take(":") else { return nil }
                if let last = fields.last, !precedes(last.name, name) { return nil }
                guard let value = value() else { return nil }
                fields.append((name, value))
                if take(",") { continue }
                guard take("}") else { return nil }
                break
            }
        }
        let innerEnd = i - 1
        guard take(#","focus":"#), let focus = string(),
              take(#","record":"#), let record = string(), record.count == 36,
              take(#","schema":"#), let schema = smallInt(), schema >= 1, schema <= StoreSchema.version,
              take(#","store":"#), let store = string(),
              take(#","type":"record.put"}"#), i == b.count else { return nil }
        let storeText = text(store)
        guard StoreName.isKnown(storeText),
              let uuid = UUIDText.parse(UnsafeBufferPointer(rebasing: b[record])) else { return nil }

        // The trail: the implied fields first (quoted as the body quotes them),
        // then the body's fields as they stand. It and the new row's field
        // list (``EntityState/encodeFieldList(written:into:)`` of `written`)
        // are sized first, then copied in runs through a pointer: appended to
        // arrays run by run, and the field list made from the names as
        // strings, they were a fifth of this reader.
        let metas = at == nil ? Self.focusAndStore : Self.atFocusAndStore
        func metaValue(_ k: Int) -> Range<Int> {
            // With the quotes, as the trail holds it.
            let v = at == nil ? (k == 0 ? focus : store) : (k == 0 ? at! : k == 1 ? focus : store)
            return (v.lowerBound - 1)..<(v.upperBound + 1)
        }
        var trailCount = 2 + metas.count - 1 + (fields.isEmpty ? 0 : 1 + innerEnd - inner)
        var listCount = Self.varintSize(metas.count + fields.count)
        for k in metas.indices {
            let (key, n) = (metas[k].utf8CodeUnitCount, metaValue(k).count)
            trailCount += key + n
            listCount += 1 + (key - 3) + 1 + Self.varintSize(n + 1) + n
        }
        for f in fields {
            listCount += Self.varintSize(f.name.count) + f.name.count + 1 + (f.value.map { Self.varintSize($0.count + 1) + $0.count } ?? 1)
        }
        let base = b.baseAddress!
        let trail = [UInt8](unsafeUninitializedCapacity: trailCount) { t, count in
            var w = Writer(t.baseAddress!)
            w.byte(UInt8(ascii: "{"))
            for k in metas.indices {
                if k > 0 { w.byte(UInt8(ascii: ",")) }
                w.copy(metas[k].utf8Start, metas[k].utf8CodeUnitCount)
                let v = metaValue(k)
                w.copy(base + v.lowerBound, v.count)
            }
            if !fields.isEmpty {
                w.byte(UInt8(ascii: ","))
                w.copy(base + inner, innerEnd - inner)
            }
            w.byte(UInt8(ascii: "}"))
            precondition(w.at == trailCount, "the trail's size was miscounted")
            count = w.at
        }
        // Where the body's fields start in the trail, against where they are in the body.
        let shift = fields.isEmpty ? 0 : trailCount - 1 - (innerEnd - inner) - inner

        var spans: [PreparedChange.Put.Span] = []
        spans.reserveCapacity(fields.count + metas.count)
        let fieldList = [UInt8](unsafeUninitializedCapacity: listCount) { l, count in
            var w = Writer(l.baseAddress!)
            w.varint(metas.count + fields.count)
            var at = 1
            for k in metas.indices {
                // The name is the key without its quotes and colon.
                let key = metas[k]
                let v = metaValue(k)
                if k > 0 { at += 1 }
                at += key.utf8CodeUnitCount
                let nameAt = at - key.utf8CodeUnitCount + 1
                spans.append(.init(name: nameAt..<(nameAt + key.utf8CodeUnitCount - 3), value: at..<(at + v.count)))
                w.varint(key.utf8CodeUnitCount - 3)
                w.copy(key.utf8Start + 1, key.utf8CodeUnitCount - 3)
                w.byte(0)
                w.varint(v.count + 1)
                w.copy(base + v.lowerBound, v.count)
                at += v.count
            }
            for f in fields {
                spans.append(.init(name: (f.name.lowerBound + shift)..<(f.name.upperBound + shift),
                                   value: f.value.map { ($0.lowerBound + shift)..<($0.upperBound + shift) }))
                w.varint(f.name.count)
                w.copy(base + f.name.lowerBound, f.name.count)
                w.byte(0)
                if let v = f.value {
                    w.varint(v.count + 1)
                    w.copy(base + v.lowerBound, v.count)
                } else {
                    w.byte(0)
                }
            }
            precondition(w.at == listCount, "the field list's size was miscounted")
            count = w.at
        }
        var e = EntityState()
        e.store = storeText
        e.focus = text(focus)
        e.at = at.map(text)
        var spanKey: EntityState.SpanKey?
        if storeText == StoreName.sleep.rawValue {
            // A field's value as the body holds it (canonical JSON; `nil`:
            // null, cleared). A string without escapes, as a time is, is
            // parsed in place; anything else as JSON first, as the merged
            // state's value is (``EntityState/SpanKey/time(json:)``).
            func time(_ name: StaticString) -> Date? {
                guard let field = fields.first(where: { $0.name.count == name.utf8CodeUnitCount
                                                        && memcmp(b.baseAddress! + $0.name.lowerBound, name.utf8Start, $0.name.count) == 0 }),
                      let v = field.value else { return nil }
                if v.count >= 2, b[v.lowerBound] == UInt8(ascii: "\""), b[v.upperBound - 1] == UInt8(ascii: "\""),
                   !b[(v.lowerBound + 1)..<(v.upperBound - 1)].contains(UInt8(ascii: "\\")) {
                    return TimeValue.parse(text((v.lowerBound + 1)..<(v.upperBound - 1)))
                }
                return EntityState.SpanKey.time(json: b[v])
            }
            spanKey = time("start").map { EntityState.SpanKey(start: $0, end: time("end")) }
        }
        let fresh = PreparedChange.FreshRow(kind: "record", state: e, atMilliseconds: e.atMilliseconds, fieldList: fieldList, spanKey: spanKey)
        // The id as the projection stores it: the body's text when it is
        // already lowercase (as famctl writes it), checked by `parse` above.
        let id = b[record].contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }
            ? UUIDText.lowercase(uuid) : text(record)
        return .put(PreparedChange.Put(kind: "record", id: id, trail: trail, spans: spans, names: nil,
                                       fresh: fresh, result: .record(uuid)))
    }

    /// The keys of the fields `$at`, `$focus` and `$store` that a put
    /// implies, as the trail writes them (`"$at":`; the name is the key
    /// without its quotes and colon).
    static let atFocusAndStore: [StaticString] = [#""$at":"#] + focusAndStore
    static let focusAndStore: [StaticString] = [#""$focus":"#, #""$store":"#]

    /// The bytes ``EntityState/putVarint(_:_:)`` writes for `n`.
    static func varintSize(_ n: Int) -> Int {
        var n = UInt64(n), size = 1
        while n >= 0x80 { n >>= 7; size += 1 }
        return size
    }

    /// Writes bytes at a pointer, into memory sized for them beforehand.
    struct Writer {
        let p: UnsafeMutablePointer<UInt8>
        var at = 0

        init(_ p: UnsafeMutablePointer<UInt8>) { self.p = p }

        mutating func byte(_ c: UInt8) {
            p[at] = c
            at += 1
        }

        mutating func copy(_ from: UnsafePointer<UInt8>, _ n: Int) {
            (p + at).initialize(from: from, count: n)
            at += n
        }

        /// ``EntityState/putVarint(_:_:)``.
        mutating func varint(_ n: Int) {
            var n = UInt64(n)
            while n >= 0x80 {
                byte(UInt8(n & 0x7F) | 0x80)
                n >>= 7
            }
            byte(UInt8(n))
        }
    }

    /// Steps over `s` when the bytes at the reader are exactly `s`.
    mutating func take(_ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        guard i + n <= b.count, memcmp(b.baseAddress! + i, s.utf8Start, n) == 0 else { return false }
        i += n
        return true
    }

    /// A string with no escape (so its text is its canonical form), valid
    /// UTF-8: the range of its contents, without the quotes.
    mutating func string() -> Range<Int>? {
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
        i += 1
        let start = i
        while i < b.count {
            // Eight plain bytes at a time (ASCII, none a quote, a backslash
            // or a control character): most of a long text.
            if i + 8 <= b.count, Self.plain(UnsafeRawPointer(b.baseAddress! + i).loadUnaligned(as: UInt64.self)) {
                i += 8
                continue
            }
            // Otherwise those eight (or the last few) one by one.
            let end = min(i + 8, b.count)
            while i < end {
                let c = b[i]
                if c == UInt8(ascii: "\"") { i += 1; return start..<(i - 1) }
                if c < 0x20 || c == UInt8(ascii: "\\") { return nil }
                if c < 0x80 { i += 1; continue }
                guard let n = Self.utf8SequenceLength(b, at: i) else { return nil }
                i += n
            }
        }
        return nil
    }

    /// Whether none of the eight bytes in `x` is a quote, a backslash, a
    /// control character (below 0x20) or non-ASCII (0x80 and above): the
    /// bytes a string's scan must look at one by one.
    static func plain(_ x: UInt64) -> Bool {
        JSONValue.escapeBits(x) | (x & 0x8080_8080_8080_8080) == 0
    }

    /// A value exactly as ``JSONValue/write(into:)`` writes it: its range,
    /// `nil` inside for `null`. An array of such values (a solid food's
    /// `foods`, an EPDS's ten answers) is taken whole; objects, and arrays
    /// holding arrays or objects, are declined.
    mutating func value() -> Range<Int>?? {
        guard i < b.count else { return nil }
        let start = i
        if b[i] == UInt8(ascii: "[") {
            i += 1
            if take("]") { return .some(start..<i) }
            while true {
                guard i < b.count, b[i] != UInt8(ascii: "["), b[i] != UInt8(ascii: "{"), scalar() != nil else { return nil }
                if take(",") { continue }
                guard take("]") else { return nil }
                return .some(start..<i)
            }
        }
        return scalar()
    }

    /// A string, number, `true`, `false` or `null` as ``value()`` takes it.
    mutating func scalar() -> Range<Int>?? {
        guard i < b.count else { return nil }
        let start = i
        switch b[i] {
        case UInt8(ascii: "\""):
            guard string() != nil else { return nil }
            return .some(start..<i)
        case UInt8(ascii: "n"): return take("null") ? .some(nil) : nil
        case UInt8(ascii: "t"): return take("true") ? .some(start..<i) : nil
        case UInt8(ascii: "f"): return take("false") ? .some(start..<i) : nil
        case UInt8(ascii: "-"), 48...57: return number() ? .some(start..<i) : nil
        default: return nil
        }
    }

    /// A number written the way ``JSONValue`` writes the value it reads as:
    /// an integer that fits in 64 bits, without a leading zero (not `-0`),
    /// or a fraction checked by writing the double it reads as.
    mutating func number() -> Bool {
        let start = i
        if b[i] == UInt8(ascii: "-") { i += 1 }
        let first = i
        while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
        let digits = i - first
        guard digits > 0, digits <= 19, digits == 1 || b[first] != 48 else { return false }
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            // Rare in records: read the general way, then compare its writing with these bytes.
            var end = i
            while end < b.count, b[end] != UInt8(ascii: ","), b[end] != UInt8(ascii: "}"), b[end] != UInt8(ascii: "]") { end += 1 }
            let run = UnsafeBufferPointer(rebasing: b[start..<end])
            guard let v = JSONValue.parse(Array(run)), case .double = v, v.jsonBytes.elementsEqual(run) else { return false }
            i = end
            return true
        }
        let negative = b[start] == UInt8(ascii: "-")
        guard !(negative && digits == 1 && b[first] == 48) else { return false }   // `-0` is written `0`
        guard digits == 19 else { return true }
        // Nineteen digits: an integer when it fits in 64 bits, a double otherwise.
        var v: UInt64 = 0
        for k in first..<i {
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(b[k] - 48))
            guard !o1, !o2 else { return false }
            v = a
        }
        return v <= (negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max))
    }

    /// A small positive integer (the schema).
    mutating func smallInt() -> Int? {
        let first = i
        var v = 0
        while i < b.count, b[i] >= 48, b[i] <= 57, i - first < 9 { v = v * 10 + Int(b[i] - 48); i += 1 }
        guard i > first, i - first == 1 || b[first] != 48, i == b.count || b[i] < 48 || b[i] > 57 else { return nil }
        return v
    }

    func text(_ r: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self) }

    func isASCII(_ r: Range<Int>) -> Bool { !b[r].contains { $0 >= 0x80 } }

    /// Byte order of two names (`memcmp`, then length).
    func precedes(_ a: Range<Int>, _ c: Range<Int>) -> Bool {
        let n = min(a.count, c.count)
        let d = memcmp(b.baseAddress! + a.lowerBound, b.baseAddress! + c.lowerBound, n)
        return d < 0 || (d == 0 && a.count < c.count)
    }

    /// The length of the well-formed UTF-8 sequence at `i` (Unicode's table
    /// 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), `nil`
    /// when it is not one.
    static func utf8SequenceLength(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        let c = b[i]
        func cont(_ k: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool { i + k < b.count && range.contains(b[i + k]) }
        switch c {
        case 0xC2...0xDF: return cont(1) ? 2 : nil
        case 0xE0: return cont(1, 0xA0...0xBF) && cont(2) ? 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF: return cont(1) && cont(2) ? 3 : nil
        case 0xED: return cont(1, 0x80...0x9F) && cont(2) ? 3 : nil
        case 0xF0: return cont(1, 0x90...0xBF) && cont(2) && cont(3) ? 4 : nil
        case 0xF1...0xF3: return cont(1) && cont(2) && cont(3) ? 4 : nil
        case 0xF4: return cont(1, 0x80...0x8F) && cont(2) && cont(3) ? 4 : nil
        default: return nil
        }
    }
}
