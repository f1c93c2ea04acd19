import Envelope
import EventLog
@testable import famctl
import Foundation
import PropertySeeds
import Testing

/// `famctl log` and `famctl record list` stream (``StreamedListing``):
/// each block of events or records is made into lines on every core and
/// printed in order as it is ready, so a long listing starts at once and
/// takes flat memory. What they print must be what the home holds, in its
/// order, and a listing that cannot be read to its end must not print
/// something that looks whole.
struct StreamedListingTests {
    /// A home with `n` of the mother's mood records (one `import stores`).
    static func homeWithMoods(_ n: Int) throws -> FamctlRunner {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let dir = f.root + "/in"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let rows: [[String: Any]] = (0..<n).map { i in
            ["id": UUID().uuidString.lowercased(), "focus": "newMom", "at": "2026-11-29T08:00:00+01:00",
             "fields": ["kind": "mood", "mood": i % 5 + 1, "note": i % 7 == 0 ? "tired, \"very\"\tso" : "ok"] as [String: Any]]
        }
        try JSONSerialization.data(withJSONObject: rows).write(to: URL(fileURLWithPath: dir + "/postpartum.json"))
        try f.ok("import", "stores", dir)
        return f
    }

    /// The ids of the home's events in the order the log keeps by clock.
    static func idsByClock(_ home: String) throws -> [String] {
        let db = try Database(path: home + "/famctl.sqlite", create: false, readOnly: true)
        var ids: [String] = []
        try db.statement("SELECT id FROM events ORDER BY hlc, author").forEachRow { ids.append($0.blob(0).map { String(format: "%02x", $0) }.joined()) }
        return ids
    }

    /// Thousands of events (many blocks, many buffers of output): the text
    /// lists every event once, in clock order, and `--json` the same events
    /// in the same order, as one array that parses.
    @Test func everyEventIsListedOnceInClockOrder() throws {
        let f = try Self.homeWithMoods(6_000)
        let ids = try Self.idsByClock(f.home)
        #expect(ids.count == 6_001, "the subject and 6 000 records")
        let text = try f.run("log")
        #expect(text.code == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "", "the output ends with a newline")
        let listed = lines.dropLast().map { $0.split(separator: " ", omittingEmptySubsequences: true)[3] }
        #expect(listed.count == ids.count)
        #expect(listed.elementsEqual(ids.map { $0.prefix(12) }), "the lines are the log's events in clock order")
        #expect(text.stdout.contains(#"note="tired, \"very\"\tso""#), "a field is quoted and its tab escaped")

        let json = try f.run("log", "--json")
        #expect(json.code == 0, "\(json.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["id"] as? String ?? "" } == ids)
        #expect(json.stdout.hasPrefix("[\n  {\n    \"author\" : ") && json.stdout.hasSuffix("\n  }\n]\n"), "\(json.stdout.suffix(40))")
    }

    /// `log --since T` lists exactly the lines of `log` whose clock is at or
    /// after T, in the same order; and it reads only those events from the
    /// log (the clock's index), not every event to judge each.
    @Test func sinceListsAndReadsOnlyTheEventsFromThatTime() throws {
        let f = try Self.homeWithMoods(6_000)
        var clocks: [(hlc: HLC, id: String)] = []
        do {
            let db = try Database(path: f.home + "/famctl.sqlite", create: false, readOnly: true)
            try db.statement("SELECT hlc, id FROM events ORDER BY hlc, author").forEachRow {
                clocks.append((HLC(bigEndianBytes: $0.blob(0))!, $0.blob(1).map { String(format: "%02x", $0) }.joined()))
            }
        }
        let all = try f.ok("log").split(separator: "\n")
        #expect(all.count == clocks.count)
        let home = try Home.open(f.home)
        for k in [0, 1, 2_999, 4_500, clocks.count - 1] {
            let since = HLC(milliseconds: clocks[k].hlc.milliseconds, counter: 0)
            let expected = zip(clocks, all).filter { $0.0.hlc >= since }.map(\.1)
            #expect(expected.count >= clocks.count - k)
            let listed = try f.ok("log", "--since", TimeText.format(since.date)).split(separator: "\n")
            #expect(listed == expected, "--since \(TimeText.format(since.date)): \(listed.count) lines against \(expected.count)")
            var read = 0
            try home.log.forEachEvent(order: .hlc, since: since) { _ in read += 1 }
            #expect(read == expected.count, "read \(read) events for \(expected.count)")
        }
        let later = TimeText.format(clocks.last!.hlc.date.addingTimeInterval(1))
        let none = try f.ok("log", "--since", later)
        #expect(none == "(no events)", "\(none)")
    }

    /// The log's pages damaged halfway: every event before the damage is
    /// printed (the log's first events by clock, none dropped on the way
    /// out), then a line saying the listing is incomplete, never a listing
    /// that looks whole; `--json` leaves its array open (it does not
    /// parse). Both fail with the damage on stderr.
    @Test func aLogThatCannotBeReadToItsEndSaysSo() throws {
        let f = try Self.homeWithMoods(6_000)
        let path = f.home + "/famctl.sqlite"
        let ids = try Self.idsByClock(f.home)
        let (page, pageSize, positions) = try {
            let db = try Database(path: path, create: false, readOnly: true)
            var pages: [Int] = []
            try db.statement("SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' ORDER BY pageno").forEachRow { pages.append(Int($0.int(0))) }
            #expect(pages.count > 20)
            let size = try #require(try db.statement("PRAGMA page_size").first([], { $0.int(0) }))
            var positions: [Int64] = []
            try db.statement("SELECT pos FROM events ORDER BY hlc, author").forEachRow { positions.append($0.int(0)) }
            return (pages[pages.count / 2], Int(size), positions)
        }()
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0, "the log's pages are all in its file")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for i in 0..<64 { bytes[(page - 1) * pageSize + i] = 0xff }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // The events readable before the first, by clock, that is not: each
        // row read alone.
        let readable = try {
            let db = try Database(path: path, create: false, readOnly: true)
            let one = try db.prepare("SELECT bytes FROM events WHERE pos = ?1")
            return positions.prefix { pos in (try? one.first([.integer(pos)]) { $0.blob(0) }) != nil }.count
        }()
        #expect(readable > 100 && readable < ids.count, "\(readable) events before the damage")
        // What the listing's own query yields on the damaged file before it
        // fails: SQLite hands over each event once it has read the next
        // (ordering by author those of one clock), so one fewer.
        let yielded = try {
            let db = try Database(path: path, create: false, readOnly: true)
            let query = try db.prepare("SELECT pos, received_at, id, family, author, seq, hlc, bytes FROM events WHERE pos > ?1 AND (?2 IS NULL OR family = ?2) ORDER BY hlc, author")
            var n = 0
            do { try query.forEachRow([.integer(0), .null]) { _ in n += 1 } } catch {}
            return n
        }()
        #expect(yielded == readable || yielded == readable - 1, "\(yielded) yielded, \(readable) readable")

        let text = try f.run("log")
        #expect(text.code == 65, "\(text.code): \(text.stdout.suffix(200))")
        #expect(text.stderr.contains("famctl.sqlite is damaged"), "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        let last = try #require(lines.last)
        let listed = lines.dropLast().map { String($0.split(separator: " ")[3]) }
        #expect(listed.count == yielded, "\(listed.count) events printed, \(yielded) read")
        #expect(last == "(log incomplete: reading it failed after \(listed.count) events; the error follows)", "\(last)")
        #expect(listed == ids.prefix(listed.count).map { String($0.prefix(12)) }, "the lines are the log's events before the damage, in clock order")

        let json = try f.run("log", "--json")
        #expect(json.code == 65 && json.stderr.contains("famctl.sqlite is damaged"), "\(json.code) \(json.stderr)")
        #expect(json.stdout.hasPrefix("[\n  {"))
        #expect((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) == nil, "the partial array does not parse")
        #expect(json.stdout.components(separatedBy: "\"author\" :").count - 1 == listed.count, "every event before the damage is an item")
    }

    /// An empty log: `(no events)`, and an empty array as every `--json`
    /// prints one.
    @Test func anEmptyLogSaysSo() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        #expect(try f.run("log").stdout == "(no events)\n")
        #expect(try f.run("log", "--json").stdout == "[]\n")
        #expect(try f.run("log", "--since", "2099-01-01").stdout == "(no events)\n")
    }

    /// A reader that goes away (`famctl log | head`) ends the listing
    /// quietly (exit 0, no error); output that cannot be written (a full
    /// disk) fails it with 73 and says so.
    @Test func aReaderGoneEndsTheListingAndAFullDiskFailsIt() throws {
        let f = try Self.homeWithMoods(6_000)
        let p = Process()
        p.executableURL = FamctlRunner.binary
        p.arguments = ["log"]
        p.environment = ProcessInfo.processInfo.environment.merging(["FAMCTL_HOME": f.home]) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        let first = out.fileHandleForReading.readData(ofLength: 200)
        #expect(String(decoding: first, as: UTF8.self).contains("subject.put"))
        try out.fileHandleForReading.close()
        let deadline = Date().addingTimeInterval(30)
        while p.isRunning, Date() < deadline { usleep(10_000) }
        #expect(!p.isRunning, "the listing stops once its reader is gone")
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 0, "\(p.terminationStatus)")
        #expect(err.fileHandleForReading.readDataToEndOfFile().isEmpty)

        let full = try Subprocess.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" > /dev/full", FamctlRunner.binary.path, "log"], env: ["FAMCTL_HOME": f.home])
        #expect(full.0 == 73 && full.1.contains("the output could not be written"), "\(full.0) \(full.1)")
    }

    /// `record list` of thousands of records prints, in text and JSON,
    /// exactly the lines and the array that the records read one by one
    /// make (``RecordView``), in the projection's order, with and without a
    /// store.
    @Test func recordListIsTheRecordsInTheirOrder() throws {
        let f = try Self.homeWithMoods(6_000)
        try f.ok("record", "add", "--focus", "newMom", "--store", "growth", "weightKg=61.5")
        let home = try Home.open(f.home)
        for store in [nil, "postpartum"] as [String?] {
            let records = try home.projector.records(.init(focus: nil, store: store))
            #expect(records.count == (store == nil ? 6_001 : 6_000))
            let args = ["record", "list"] + (store.map { ["--store", $0] } ?? [])
            let text = try f.run(args)
            #expect(text.code == 0, "\(text.stderr)")
            #expect(text.stdout == records.map { TerminalText.escaped(RecordView.line($0)) + "\n" }.joined(), "\(args)")
            let json = try f.run(args + ["--json"])
            #expect(json.code == 0, "\(json.stderr)")
            #expect(json.stdout == String(decoding: PrettyJSON.bytes(PrettyJSON.value(records.map(RecordView.json))), as: UTF8.self) + "\n", "\(args)")
        }
        let none = try f.run("record", "list", "--store", "sleep", "--json")
        #expect(none.stdout == "[]\n")
        #expect(try f.run("record", "list", "--store", "sleep").stdout == "")
    }

    /// A record's row damaged among thousands: `record list` prints the
    /// records before it, then a line saying the list is incomplete, and
    /// fails naming the stores' file and `rebuild`; `--json` leaves its
    /// array open.
    @Test func aRecordListThatCannotBeReadToItsEndSaysSo() throws {
        let f = try Self.homeWithMoods(3_000)
        let home = try Home.open(f.home)
        let records = try home.projector.records()
        let damaged = records[1_700].id.lowercasedText
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: f.home).first { $0.hasPrefix("projection.") && $0.hasSuffix(".sqlite") })
        do {
            let db = try Database(path: f.home + "/" + file)
            try db.run("UPDATE p_entities SET fields = ?1 WHERE kind = 'record' AND id = ?2", [.blob([2, 3]), .text(damaged)])
            #expect(db.changes == 1)
        }
        let text = try f.run("record", "list")
        #expect(text.code == 65, "\(text.code) \(text.stderr)")
        #expect(text.stderr.contains("the stores' file") && text.stderr.contains("famctl rebuild"), "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 1_701, "the 1 700 records before the damaged one, and the last line")
        #expect(lines.last == "(list incomplete: reading it failed after 1700 records; the error follows)")
        #expect(!text.stdout.contains(damaged) && !text.stdout.contains(records[1_701].id.lowercasedText))
        let json = try f.run("record", "list", "--json")
        #expect(json.code == 65 && json.stderr.contains("the stores' file"), "\(json.code) \(json.stderr)")
        #expect(json.stdout.hasPrefix("[\n  {") && !json.stdout.contains(damaged))
        #expect(json.stdout.components(separatedBy: "\"author\" :").count - 1 == 1_700, "the 1 700 records before the damaged one are items")
        #expect((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) == nil, "the partial array does not parse")
        try f.ok("rebuild")
        #expect(try f.ok("record", "list").split(separator: "\n").count == 3_000)
    }

    /// Times of the log's clocks are written by arithmetic, as Foundation's
    /// formatter writes them: whole milliseconds from 1970 to 9999, leap
    /// days and the ends of years among them, and moments between two
    /// milliseconds; before 1970 the formatter itself.
    @Test(arguments: PropertySeeds.range(0..<4))
    func timesAreWrittenAsTheFormatterWritesThem(seed: UInt64) {
        var rng = SplitMixRNG(seed: seed)
        let edges: [Int64] = [0, 1, 999, 1_000, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999, 4_107_542_400_000,
                              1_764_788_732_930, 253_402_300_799_999, 68_169_600_000]
        var moments = edges.map { Double($0) / 1000 }
        for _ in 0..<5_000 {
            let ms = Int64.random(in: 0..<253_402_300_800_000, using: &rng)
            moments.append(Double(ms) / 1000)
            moments.append(Double(ms) / 1000 + Double.random(in: 0..<0.001, using: &rng))
            moments.append(Double.random(in: 1.6e9..<2.0e9, using: &rng))
        }
        moments += [-0.0005, -1, -86_400.5, 253_402_300_800, 1e13]
        // The civil date by arithmetic (also the bench's record times),
        // before 1970 too, is the Gregorian calendar's.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for days in [-100_000, -1, 0, 59, 60, 2_932_896] + (0..<2_000).map({ _ in Int64.random(in: -100_000...2_932_896, using: &rng) }) {
            let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86_400))
            let civil = TimeText.civil(days: Int64(days))
            #expect(civil.year == Int64(c.year!) && civil.month == Int64(c.month!) && civil.day == Int64(c.day!), "day \(days): \(civil) against \(c)")
        }
        for m in moments {
            let d = Date(timeIntervalSince1970: m)
            #expect(TimeText.format(d) == TimeText.formatByFoundation(d), "\(m)")
        }
    }

    /// Texts are quoted in a field's value as before: the ASCII shortcut
    /// judges as the scalars' properties do, on random texts of spaces,
    /// quotes, commas, controls, and spaces and letters beyond ASCII.
    @Test func quotingByBytesIsQuotingByScalars() {
        var rng = SplitMixRNG(seed: 11)
        let pieces: [String] = ["a", "Z", "0", " ", "\"", ",", "\\", "\t", "\n", "\u{0}", "\u{7f}", "\u{1b}", "[", "]", "[]", "=",
                                "\u{a0}", "\u{85}", "\u{2003}", "\u{3000}", "小", "é", "😀", "\u{200b}", "\u{feff}"]
        var texts = ["", "[]", "[ ]", "a b", "a,b", "ab"]
        for _ in 0..<20_000 {
            texts.append((0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined())
        }
        var quoted = 0
        for t in texts {
            for inList in [false, true] {
                let fast = RecordView.needsQuotes(t, inList: inList)
                #expect(fast == RecordView.needsQuotesByScalars(t, inList: inList), "\(Array(t.unicodeScalars)) in a list: \(inList)")
                if fast { quoted += 1 }
            }
        }
        #expect(quoted > 1_000 && quoted < 2 * texts.count - 1_000)
    }

    struct DiskFull: Error {}

    /// What a ``StreamedListing`` wrote, through an injected output.
    final class Written {
        var chunks: [[UInt8]] = []
        var gone = false
        var failAfter = Int.max
        var attempts = 0
        var text: String { String(decoding: chunks.joined(), as: UTF8.self) }
        var output: ListingOutput {
            ListingOutput(write: { bytes in
                self.attempts += 1
                if self.chunks.count >= self.failAfter { throw DiskFull() }
                self.chunks.append(bytes)
            }, gone: { self.gone })
        }
    }

    /// A listing of the numbers fed that `every` divides.
    static func numbers(_ output: ListingOutput, every: Int = 1_000, flushSize: Int = 64 << 10, flushDelay: UInt64 = 200_000_000) -> StreamedListing<Int> {
        StreamedListing(json: false, name: "list", unit: "number", empty: nil, output: output, flushSize: flushSize, flushDelay: flushDelay) { i in
            i % every == 0 ? StreamedEntry.line("number \(i)") : nil
        }
    }

    /// Once the output says nobody reads it, the reading stops within the
    /// blocks already made (not at the end of a million items), and the
    /// listing returns without an error; read to its end otherwise.
    @Test func aReaderGoneStopsTheReading() throws {
        let written = Written()
        var fed = 0
        let printed = try Self.numbers(written.output, every: 1, flushSize: 1).print { add in
            for i in 0..<1_000_000 {
                fed += 1
                if fed == 5_000 { written.gone = true }
                try add(i)
            }
        }
        let window = StreamedListing<Int>.block * (StreamedListing<Int>.window + 2)
        #expect(fed < 5_000 + window, "read \(fed) items for a reader gone after 5 000")
        #expect(printed <= fed && written.text == (0..<printed).map { "number \($0)\n" }.joined(), "\(printed)")

        let all = Written()
        var allFed = 0
        let allPrinted = try Self.numbers(all.output).print { add in
            for i in 0..<200_000 { allFed += 1; try add(i) }
        }
        #expect(allFed == 200_000 && allPrinted == 200)
        #expect(all.text == (0..<200).map { "number \($0 * 1_000)\n" }.joined())
    }

    /// A listing narrowed by a filter (few entries among many items) writes
    /// what it found after about `flushDelay`, while it is still reading:
    /// not only once its buffer fills or the reading ends.
    @Test func aFewEntriesAreWrittenWhileTheReadingGoesOn() throws {
        let written = Written()
        var sawFirst = false
        let started = Date()
        try Self.numbers(written.output, flushDelay: 50_000_000).print { add in
            var i = 0
            // Items that are left out (all but each thousandth), until
            // the first entry was written, for at most 20 s.
            while Date().timeIntervalSince(started) < 20 {
                try add(i)
                i += 1
                if i % 64 == 0, !written.chunks.isEmpty { sawFirst = true; break }
                if i % 64 == 0 { usleep(200) }
            }
        }
        #expect(sawFirst, "the first entries were written while the reading went on")
        #expect(written.text.hasPrefix("number 0\n"))
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// An output that fails (a full disk) stops the listing: its error is
    /// thrown as it is, the reading stops, and nothing is written after the
    /// failure, not even the line saying the listing is incomplete.
    @Test func aFailedWriteStopsTheListing() throws {
        let written = Written()
        written.failAfter = 3
        var fed = 0
        #expect(throws: DiskFull.self) {
            try Self.numbers(written.output, every: 1, flushSize: 1).print { add in
                for i in 0..<1_000_000 { fed += 1; try add(i) }
            }
        }
        #expect(written.chunks.count == 3 && written.attempts == 4, "\(written.attempts) writes tried")
        #expect(fed < 10_000, "read \(fed) items after the output failed")
        #expect(!written.text.contains("incomplete"))
    }
}
