/// Whether an image given to `photo add` reaches its own end: a download
/// or a copy not finished leaves a file that starts as an image and stops
/// partway, which would take one of a record's ten places for a picture
/// nobody can see (a review: three bytes of a JPEG's signature were taken).
///
/// Each format's own lengths are followed, no more: a JPEG's segments up to
/// its first scan (`SOS`), a PNG's chunks up to `IEND`, a WebP's RIFF size,
/// a HEIC's top-level boxes. What comes after (a JPEG's scan data, bytes
/// after a PNG's `IEND`, as a phone's motion photo appends) is not judged.
enum ImageEnd {
    /// Why `b`, sniffed as `type` (``PhotoBlob/sniff(_:)``), stops before
    /// its end, said to a user; `nil` when it reaches it.
    static func cutShort(_ b: [UInt8], type: String) -> String? {
        switch type {
        case "jpeg": jpeg(b)
        case "png": png(b)
        case "webp": webp(b)
        case "heic": boxes(b)
        default: nil
        }
    }

    private static func be(_ b: [UInt8], _ at: Int, _ count: Int) -> Int {
        b[at..<(at + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// Its segments, each `FF marker length`, up to the first scan.
    static func jpeg(_ b: [UInt8]) -> String? {
        var i = 2
        while i < b.count {
            // Stray bytes before a marker, which decoders pass over with a
            // warning ("extraneous bytes before marker"): passed over too.
            guard b[i] == 0xFF else { i += 1; continue }
            // Fill bytes before a marker.
            while i + 1 < b.count, b[i + 1] == 0xFF { i += 1 }
            guard i + 1 < b.count else { break }
            let marker = b[i + 1]
            if marker == 0xDA { return nil }   // start of scan: the image data follows
            if marker == 0xD9 { return "its JPEG ends before any image data (damaged)" }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            guard i + 3 < b.count else { break }
            let length = be(b, i + 2, 2)
            guard length >= 2 else { return "its JPEG has a segment of length \(length) at byte \(i) (damaged)" }
            i += 2 + length
        }
        return "its JPEG ends before its image data (\(b.count) bytes)"
    }

    /// Its chunks, each `length type data crc`, IHDR first, up to IEND.
    static func png(_ b: [UInt8]) -> String? {
        var i = 8
        var first = true
        while i + 8 <= b.count {
            let length = be(b, i, 4)
            let type = String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)
            if first, type != "IHDR" { return "its PNG does not begin with a header chunk (damaged)" }
            first = false
            if type == "IEND" { return nil }
            i += 12 + length
        }
        return "its PNG ends before its last chunk (IEND) (\(b.count) bytes)"
    }

    /// The size its RIFF header gives.
    static func webp(_ b: [UInt8]) -> String? {
        let size = b[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) } + 8
        return b.count >= size ? nil : "its WebP is \(b.count) bytes of the \(size) its header gives"
    }

    /// Its top-level boxes, each `size type`, to the file's end.
    static func boxes(_ b: [UInt8]) -> String? {
        var i = 0
        while i < b.count {
            guard i + 8 <= b.count else { return "its HEIC ends inside a box (\(b.count) bytes)" }
            var size = be(b, i, 4)
            if size == 0 { return nil }   // the last box runs to the end
            if size == 1 {
                guard i + 16 <= b.count else { return "its HEIC ends inside a box (\(b.count) bytes)" }
                size = be(b, i + 8, 8)
            }
            guard size >= 8 else { return "its HEIC's boxes break off at byte \(i) (damaged)" }
            guard size <= b.count - i else { return "its HEIC ends inside a box of \(size) bytes at byte \(i) (\(b.count) bytes)" }
            i += size
        }
        return nil
    }
}
