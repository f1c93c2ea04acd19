import Dispatch
import Envelope
import Replicator

/// A listing printed as it is read (`log`, `record list`, the store files
/// of `export stores`): items read on this thread, in blocks of ``block``,
/// each block made into entries (an escaped line, or an item of the JSON
/// array) on every core (``OrderedStream``, ``window`` blocks ahead), and
/// written in order to its ``ListingOutput``, ``flushSize`` bytes at a
/// time. So the first lines come at once and memory stays flat however
/// long the listing: holding every line until the end took 425 MB for
/// `log` at 1M events, and the JSON of `record list` 4.4 GB. Reading stops
/// once the reader of a pipe went away (`famctl log | head`).
///
/// Should reading or making an entry fail halfway, what was printed does
/// not look whole: a text listing ends with a line saying it is
/// incomplete, and the JSON array is left open (it does not parse); the
/// error is then thrown, for the command's usual report on stderr.
struct StreamedListing<Item: Sendable> {
    /// JSON (an array, as ``Console/json(_:compact:toStandardError:)``
    /// prints one) or lines of text.
    let json: Bool
    /// What the listing is of, for the line that says it is incomplete:
    /// `log`, `list`; and its items, `event`, `record`.
    let name: String
    let unit: String
    /// The line a text listing of nothing prints, if any.
    let empty: String?
    /// Where the bytes go: standard output unless told.
    let output: ListingOutput
    /// Output is written once this many bytes wait,
    let flushSize: Int
    /// or once some waited this long (nanoseconds; checked as blocks are
    /// written).
    let flushDelay: UInt64
    /// One item's entry (``StreamedEntry``: its line, or its item of the
    /// JSON array); `nil` to leave it out. Called on any thread.
    let make: @Sendable (Item) throws -> [UInt8]?

    init(json: Bool, name: String, unit: String, empty: String?, output: ListingOutput = .standardOutput,
         flushSize: Int = 64 << 10, flushDelay: UInt64 = 200_000_000, make: @escaping @Sendable (Item) throws -> [UInt8]?) {
        self.json = json
        self.name = name
        self.unit = unit
        self.empty = empty
        self.output = output
        self.flushSize = flushSize
        self.flushDelay = flushDelay
        self.make = make
    }

    /// Items read and made into entries together.
    static var block: Int { 64 }
    /// How many blocks are made ahead of the printing, at most.
    static var window: Int { 32 }

    /// Thrown to stop reading once the output's reader is gone.
    private struct ReaderGone: Error {}

    /// A block's entries, up to the first item that failed, and its error.
    private struct Made: Sendable {
        var entries: [[UInt8]] = []
        var error: (any Error)?
    }

    /// Prints the items `feed` hands over, in its order, and returns how
    /// many entries it printed. An error of the output's `write` is thrown
    /// as it is, nothing written after it.
    @discardableResult
    func print(feed: ((Item) throws -> Void) throws -> Void) throws -> Int {
        let make = self.make
        let stream = OrderedStream<[Item], Made>(workers: Parallel.cores) { block in
            var made = Made()
            made.entries.reserveCapacity(block.count)
            for item in block {
                do {
                    if let entry = try make(item) { made.entries.append(entry) }
                } catch {
                    made.error = error
                    break
                }
            }
            return made
        }
        defer { stream.close() }
        let output = self.output
        var out: [UInt8] = json ? [UInt8(ascii: "[")] : []
        out.reserveCapacity(flushSize + 4_096)
        // The output's own failure: nothing more is written to it.
        var writeFailed = false
        func write() throws {
            do { try output.write(out) } catch { writeFailed = true; throw error }
            out.removeAll(keepingCapacity: true)
        }
        var printed = 0
        var lastWrite = DispatchTime.now().uptimeNanoseconds
        // A failure to read ends the reading, not the listing: the items
        // read before it are still made and printed, then the error is
        // thrown. An error of `add` (the printing's own: an item that could
        // not be made, the reader gone) is kept here and thrown once `feed`
        // returns, whatever `feed` made of it; no item is added after it.
        var readError: (any Error)?
        do {
            try stream.streamBlocks(of: Self.block, window: Self.window, feed: { add in
                var printError: (any Error)?
                do {
                    try withoutActuallyEscaping(add) { add in
                        try feed { item in
                            if let printError { throw printError }
                            do { try add(item) } catch { printError = error; throw error }
                        }
                    }
                } catch {
                    if printError == nil { readError = error }
                }
                if let printError { throw printError }
            }, consume: { made in
                for entry in made.entries {
                    if json {
                        // Before each item: a comma after the one before, a new line, one level in.
                        if printed > 0 { out.append(UInt8(ascii: ",")) }
                        out.append(contentsOf: "\n  ".utf8)
                    }
                    out += entry
                    if !json { out.append(0x0A) }
                    printed += 1
                }
                if let error = made.error { throw error }
                // Written once enough waits, or once some waited a while (a
                // listing narrowed by a filter prints its few lines as they
                // are found, not at the end; checked as blocks are printed).
                // A reader gone (a failed write, or a pipe whose reader
                // closed it: `| head` done) ends the reading.
                let now = DispatchTime.now().uptimeNanoseconds
                if out.count >= flushSize || now - lastWrite >= flushDelay {
                    if !out.isEmpty { try write() }
                    lastWrite = now
                    if output.gone() { throw ReaderGone() }
                }
            })
            if let readError { throw readError }
        } catch is ReaderGone {
            // Nobody reads what follows; a failure to read met before is
            // still reported.
            if let readError { throw readError }
            return printed
        } catch {
            if writeFailed { throw error }
            if !json {
                out += Array("(\(name) incomplete: reading it failed after \(printed) \(unit)\(printed == 1 ? "" : "s"); the error follows)\n".utf8)
            }
            // The error to report is the reading's, whatever the output makes of this.
            try? output.write(out)
            throw error
        }
        if json {
            // As ``Console/json(_:compact:toStandardError:)`` prints an array.
            out += Array((printed == 0 ? "]\n" : "\n]\n").utf8)
        } else if printed == 0, let empty {
            out += Array((TerminalText.escaped(empty) + "\n").utf8)
        }
        try write()
        return printed
    }
}

/// Where a ``StreamedListing`` writes: standard output, or a file.
struct ListingOutput {
    /// Writes bytes, all of them; throws when they cannot be (the listing
    /// then stops, and throws that error).
    let write: ([UInt8]) throws -> Void
    /// Whether nobody reads what would follow (a pipe's reader gone):
    /// asked after each write; reading then stops, without an error.
    let gone: () -> Bool

    /// Standard output: a failed write is kept by ``Console`` (reported as
    /// the command exits), and ends the listing as a reader gone does.
    static var standardOutput: ListingOutput {
        ListingOutput(write: { Console.bytes($0) },
                      gone: { Console.outputFailure.load(ordering: .relaxed) != 0 || Console.readerGone })
    }

    /// A file put in place whole once the listing is done (``AtomicFile``;
    /// its commit is the caller's).
    static func file(_ file: AtomicFile) -> ListingOutput {
        ListingOutput(write: { try file.write($0) }, gone: { false })
    }
}

/// The entries of a ``StreamedListing``, as ``Console`` would print them.
enum StreamedEntry {
    /// A line for people, its control characters escaped as
    /// ``Console/out(_:)`` escapes them (without its newline).
    static func line(_ text: String) -> [UInt8] {
        Array(TerminalText.escaped(text).utf8)
    }

    /// An item of the JSON array, written as ``Console/json(_:compact:toStandardError:)``
    /// writes the items of a top-level array (one level in).
    static func item(_ value: Any) -> [UInt8] {
        PrettyJSON.bytes(PrettyJSON.value(value), indent: 1)
    }
}
