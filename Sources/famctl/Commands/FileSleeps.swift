import Foundation
import Projections

/// The sleeps of one store file that `import stores` has taken so far,
/// found by overlap without reading them all: a file of years of sleeps
/// checks each row against the few near it, not against every earlier row
/// (which made an import's time grow with the square of its sleeps).
///
/// Each sleep goes in a bucket by baby, length class and start: a sleep of
/// class `c` lasts less than `2^c` seconds, so one that ends after a moment
/// `s` starts after `s - 2^c`, and the buckets of starts from there to the
/// end of the span asked about hold every sleep of that class it can meet
/// (the same bound as the projection's index of sleeps,
/// ``EntityState/SpanKey/lengthClass``). The exact test is the import's own.
struct FileSleeps {
    struct Sleep {
        /// The file's row.
        let row: Int
        let start: Date
        /// `Date.distantFuture` for a sleep still going on.
        let end: Date
        /// Whether the import changes the record (it differs from the home's copy).
        let changed: Bool
        /// Whether the row's `"problems"` list the overlap.
        let listsOverlap: Bool
    }

    /// One length class of one baby: its sleeps by bucket of start
    /// (`floor(start / 2^c)`), and which runs of 256 and of 65 536 buckets
    /// hold any, so that a long span asked about (a sleep of days, against
    /// a class of sub-second sleeps) skips the empty runs instead of
    /// looking in every bucket it covers.
    private struct ClassIndex {
        var buckets: [Int64: [Sleep]] = [:]
        /// `bucket >> 8` of every bucket that holds a sleep.
        var runs: Set<Int64> = []
        /// `bucket >> 16` of every bucket that holds a sleep.
        var spans: Set<Int64> = []

        mutating func add(_ sleep: Sleep, bucket b: Int64) {
            buckets[b, default: []].append(sleep)
            runs.insert(b >> 8)
            spans.insert(b >> 16)
        }

        /// Calls `body` with the sleeps of every bucket from `low` to
        /// `high`, adding to `examined` each bucket, run and span looked at.
        func forEach(from low: Int64, to high: Int64, examined: inout Int, _ body: ([Sleep]) -> Void) {
            // Fewer buckets held than the range (or a run) covers: each read once.
            if Int64(buckets.count) < min(high - low + 1, 512) {
                for (b, sleeps) in buckets {
                    examined += 1
                    if b >= low && b <= high { body(sleeps) }
                }
                return
            }
            func inRun(_ r: Int64) {
                for b in max(low, r << 8)...min(high, (r << 8) + 255) {
                    examined += 1
                    if let sleeps = buckets[b] { body(sleeps) }
                }
            }
            func inSpan(_ t: Int64) {
                for r in max(low >> 8, t << 8)...min(high >> 8, (t << 8) + 255) {
                    examined += 1
                    if runs.contains(r) { inRun(r) }
                }
            }
            if high - low < 512 {
                for b in low...high {
                    examined += 1
                    if let sleeps = buckets[b] { body(sleeps) }
                }
            } else if (high >> 8) - (low >> 8) < 512 {
                for r in (low >> 8)...(high >> 8) {
                    examined += 1
                    if runs.contains(r) { inRun(r) }
                }
            } else {
                let first = low >> 16, last = high >> 16
                if last - first + 1 > Int64(spans.count) {
                    for t in spans.sorted() where t >= first && t <= last {
                        examined += 1
                        inSpan(t)
                    }
                } else {
                    for t in first...last {
                        examined += 1
                        if spans.contains(t) { inSpan(t) }
                    }
                }
            }
        }
    }

    /// Per baby, per length class.
    private var classes: [FocusKey: [Int: ClassIndex]] = [:]
    private(set) var count = 0

    /// The class of a span `length` seconds long: `length < 2^class`.
    static func lengthClass(_ length: Double) -> Int {
        guard length >= 1 else { return 0 }
        // `exponent`: the power of two at or below `length`, exactly.
        return Int(length.exponent) + 1
    }

    private static func bucket(_ start: Date, _ width: Double) -> Int64 {
        let b = (start.timeIntervalSince1970 / width).rounded(.down)
        // Dates parsed from a store file lie within years 0–9999: far inside Int64.
        return Int64(max(min(b, 1e15), -1e15))
    }

    mutating func add(focus: FocusKey, _ sleep: Sleep) {
        let c = Self.lengthClass(sleep.end.timeIntervalSince(sleep.start))
        classes[focus, default: [:]][c, default: ClassIndex()].add(sleep, bucket: Self.bucket(sleep.start, exp2(Double(c))))
        count += 1
    }

    /// The sleeps of `focus` that meet `[start, end)`, or start when it
    /// does, in the order they were added (the file's): the import's test,
    /// `start < other.end && other.start < end || other.start == start`.
    func meeting(focus: FocusKey, start: Date, end: Date) -> [Sleep] {
        var examined = 0
        return meeting(focus: focus, start: start, end: end, examined: &examined)
    }

    /// ``meeting(focus:start:end:)``, adding to `examined` the number of
    /// buckets it looked in and sleeps it tested (the tests' measure of its work).
    func meeting(focus: FocusKey, start: Date, end: Date, examined: inout Int) -> [Sleep] {
        guard let byClass = classes[focus] else { return [] }
        var found: [Sleep] = []
        func meets(_ o: Sleep) -> Bool {
            examined += 1
            return start < o.end && o.start < end || o.start == start
        }
        for (c, index) in byClass {
            let width = exp2(Double(c))
            // Starts from `start - 2^c` (one bucket more, for rounding) to the later of `start` and `end`.
            let low = Self.bucket(start, width) - 2
            let high = Self.bucket(max(start, end), width)
            var looked = 0
            index.forEach(from: low, to: high, examined: &looked) { found += $0.filter(meets) }
            examined += looked
        }
        return found.sorted { $0.row < $1.row }
    }
}
