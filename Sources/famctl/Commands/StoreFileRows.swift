import Envelope
import Foundation
import Replicator

/// A store file's rows (`feeding.json`: one JSON array of objects), read one
/// at a time: the file's bytes are held, and each row is parsed when it is
/// asked for, so that an import of years of records does not hold every row
/// as a tree of values at once (100 000 rows took about 300 MB that way).
///
/// The file is checked whole first, each row parsed once: a file that is
/// not a JSON array of valid values is refused before any row is used, with
/// the account of ``ImportStoresCommand/readArray(_:failures:)``, which
/// reads it whole again to say where it goes wrong (so the message is the
/// same as that reader's, line and column of the file included).
struct StoreFileRows {
    private enum Storage {
        /// The file's bytes, and each row's range in them.
        case bytes([UInt8], [Range<Int>])
        /// The rows themselves (a file only the whole-file reader reads).
        case values([JSONValue])
    }
    private let storage: Storage

    var count: Int {
        switch storage {
        case .bytes(_, let spans): spans.count
        case .values(let rows): rows.count
        }
    }

    /// The file's rows, or `nil` when there is no such file or it is refused
    /// (the reason appended to `failures`). `each` sees every row as it is
    /// checked, in order.
    static func read(_ path: String, failures: inout [String], each: (Int, JSONValue) -> Void) throws -> StoreFileRows? {
        guard let bytes = bytes(of: path, failures: &failures) else { return nil }
        if let spans = split(bytes) {
            var whole = true
            for (i, span) in spans.enumerated() {
                guard case .success(let row) = JSONValue.parseKeepingNumbers(Array(bytes[span])) else { whole = false; break }
                each(i, row)
            }
            if whole { return StoreFileRows(storage: .bytes(bytes, spans)) }
        }
        // Not an array of valid values: said as the whole-file reader says it.
        if let rows = try ImportStoresCommand.readArray(path, failures: &failures) {
            // (Valid after all, a case the scan does not read: taken whole.)
            for (i, row) in rows.enumerated() { each(i, row) }
            return StoreFileRows(storage: .values(rows))
        }
        return nil
    }

    /// The most bytes a store file may hold: it is read whole, and its
    /// rows take several times that in memory while they are checked (a
    /// review: a 3 GB file ended famctl on a failed allocation). Ten years
    /// of a store's records take a few tens of megabytes.
    static let sizeLimit = 256 << 20

    /// A store file's bytes, or `nil` when there is no such file (nothing
    /// said) or it cannot be read (the reason appended to `failures`): a
    /// link to nothing, a file over ``sizeLimit``, not a file.
    static func bytes(of path: String, failures: inout [String]) -> [UInt8]? {
        let name = (path as NSString).lastPathComponent
        guard FileManager.default.fileExists(atPath: path) else {
            // A link whose target is gone is there all the same: said, not
            // taken for a file the directory lacks (a review).
            if let target = danglingLink(path) {
                failures.append("\(name): a link to \(TerminalText.escaped(target)), which does not exist; nothing in it is read")
            }
            return nil
        }
        do {
            return try FileIO.readFile(path, limit: sizeLimit)
        } catch where error.code == EFBIG {
            let size = ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int).map { " (\($0 >> 20) MB)" } ?? ""
            failures.append("\(name): larger than the \(sizeLimit >> 20) MB a store file may be\(size); it is read whole: split its rows over several directories and import each in turn")
        } catch {
            failures.append("\(name): cannot be read: \(error.reason)")
        }
        return nil
    }

    /// The target of the link at `path` when nothing is at that target.
    static func danglingLink(_ path: String) -> String? {
        FileManager.default.fileExists(atPath: path) ? nil : try? FileManager.default.destinationOfSymbolicLink(atPath: path)
    }

    /// Whether a store file is at `path`: a file, or a link to nothing
    /// (read, to be said).
    static func isThere(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path) || danglingLink(path) != nil
    }

    /// Row `i`, parsed again from its bytes (checked whole by ``read``).
    func row(_ i: Int) -> JSONValue {
        switch storage {
        case .bytes(let bytes, let spans):
            guard case .success(let v) = JSONValue.parseKeepingNumbers(Array(bytes[spans[i]])) else { return .null }
            return v
        case .values(let rows): return rows[i]
        }
    }

    /// The byte range of each element of the JSON array `b`, or `nil` when
    /// `b` is not one as this scan reads it (then the whole-file reader
    /// says why). Strings are skipped over whole (an escaped quote
    /// included); nesting deeper than the parser allows is left to it.
    static func split(_ b: [UInt8]) -> [Range<Int>]? {
        var i = 0
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }
        skipSpace()
        guard i < b.count, b[i] == UInt8(ascii: "[") else { return nil }
        i += 1
        skipSpace()
        var spans: [Range<Int>] = []
        if i < b.count, b[i] == UInt8(ascii: "]") {
            i += 1; skipSpace()
            return i == b.count ? spans : nil
        }
        while true {
            skipSpace()
            let start = i
            var depth = 0
            scan: while i < b.count {
                switch b[i] {
                case UInt8(ascii: "\""):
                    i += 1
                    while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
                    guard i < b.count else { return nil }
                    i += 1
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    // The array itself is one level, and a value inside the
                    // deepest container one more: a row this deep is left
                    // to the whole-file reader, which knows.
                    guard depth < JSONValue.maximumNesting - 1 else { return nil }
                    i += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { break scan }
                    depth -= 1
                    i += 1
                case UInt8(ascii: ","):
                    if depth == 0 { break scan }
                    i += 1
                default:
                    i += 1
                }
            }
            guard depth == 0, i < b.count, i > start else { return nil }
            var end = i
            while end > start, [0x20, 0x0A, 0x0D, 0x09].contains(b[end - 1]) { end -= 1 }
            spans.append(start..<end)
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            guard b[i] == UInt8(ascii: "]") else { return nil }
            i += 1
            skipSpace()
            return i == b.count ? spans : nil
        }
    }
}
