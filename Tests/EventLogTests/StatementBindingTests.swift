import Envelope
@testable import EventLog
import Foundation
import Testing

/// What a statement binds is what SQLite stores, whichever way it is bound:
/// small text and blobs copied into the statement's buffer (reused, and
/// grown, from one binding to the next), larger ones bound where they lie.
struct StatementBindingTests {
    private func randomValue(_ rng: inout SplitMixRNG) -> SQLValue {
        let sizes = [0, 1, 7, 300, 2_000, Statement.copiedLimit / 3, Statement.copiedLimit + 1]
        let size = sizes[Int(rng.next() % UInt64(sizes.count))]
        switch rng.next() % 6 {
        case 0: return .null
        case 1: return .integer(Int64(bitPattern: rng.next()))
        case 2: return .real(Double(Int64(bitPattern: rng.next() >> 11)) / 7)
        case 3:
            // ASCII and multi-byte characters, never a NUL (SQLite's text would end there).
            let alphabet: [Character] = ["a", "Z", "0", " ", "é", "😀", "中", "\n", "\""]
            return .text(String((0..<size).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }))
        default:
            return .blob((0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
    }

    private func read(_ r: Row, _ i: Int32, like v: SQLValue) -> SQLValue {
        if r.isNull(i) { return .null }
        switch v {
        case .integer: return .integer(r.int(i))
        case .real: return .real(r.double(i))
        case .text: return .text(r.text(i))
        case .blob, .null: return .blob(r.blob(i))
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomRowsReadBackAsBound(seed: UInt64) throws {
        var rng = SplitMixRNG(seed: seed)
        let dir = TempDir()
        let db = try Database(path: dir.path + "/t.sqlite")
        try db.execute("CREATE TABLE t(n INTEGER PRIMARY KEY, a, b, c, d, e)")
        // One cached statement for every row: its buffer is reused and grows.
        let insert = try db.statement("INSERT INTO t(n, a, b, c, d, e) VALUES(?1, ?2, ?3, ?4, ?5, ?6)")
        var rows: [[SQLValue]] = []
        for n in 0..<200 {
            let row = (0..<5).map { _ in randomValue(&rng) }
            try insert.run([.integer(Int64(n))] + row)
            rows.append(row)
        }
        let select = try db.statement("SELECT a, b, c, d, e, typeof(a), typeof(b), typeof(c), typeof(d), typeof(e) FROM t WHERE n = ?1")
        for (n, row) in rows.enumerated() {
            let stored = try #require(try select.first([.integer(Int64(n))]) { r in
                (row.indices.map { read(r, Int32($0), like: row[$0]) }, (5..<10).map { r.text(Int32($0)) })
            })
            #expect(stored.0 == row.map { v -> SQLValue in if case .blob(let b) = v, b.isEmpty { return .blob([]) } else { return v } },
                    "row \(n)")
            // Empty text is '' and an empty blob x'', never NULL.
            for (v, type) in zip(row, stored.1) {
                switch v {
                case .null: #expect(type == "null")
                case .integer: #expect(type == "integer")
                case .real: #expect(type == "real")
                case .text: #expect(type == "text")
                case .blob: #expect(type == "blob")
                }
            }
        }
    }

    /// Values stay bound while the rows of a query are read, and one binding
    /// leaves nothing of itself in the next.
    @Test func boundValuesLastWhileRowsAreReadAndNotAfter() throws {
        let dir = TempDir()
        let db = try Database(path: dir.path + "/t.sqlite")
        let s = try db.statement("SELECT ?1 || ?2, length(?3), ?4 IS NULL")
        let long = String(repeating: "x", count: Statement.copiedLimit * 2)
        let first = try s.first([.text("fam"), .text("ctl"), .blob([1, 2, 3]), .integer(1)]) { ($0.text(0), $0.int(1), $0.int(2)) }
        #expect(first?.0 == "famctl" && first?.1 == 3 && first?.2 == 0)
        let second = try s.first([.text(""), .text(long), .blob([]), .null]) { ($0.text(0), $0.int(1), $0.int(2)) }
        #expect(second?.0 == long && second?.1 == 0 && second?.2 == 1)
        let third = try s.first([.text("é"), .text(""), .null, .text("")]) { ($0.text(0), $0.isNull(1), $0.int(2)) }
        #expect(third?.0 == "é" && third?.1 == true && third?.2 == 0)
    }
}
