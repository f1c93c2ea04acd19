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

    /// Per baby, per length class: the sleeps by bucket of start (`floor(start / 2^c)`).
    private var classes: [FocusKey: [Int: [Int64: [Sleep]]]] = [:]
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
        classes[focus, default: [:]][c, default: [:]][Self.bucket(sleep.start, exp2(Double(c))), default: []].append(sleep)
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
        for (c, buckets) in byClass {
            let width = exp2(Double(c))
            // Starts from `start - 2^c` (one bucket more, for rounding) to the later of `start` and `end`.
            let low = Self.bucket(start, width) - 2
            let high = Self.bucket(max(start, end), width)
            if high - low + 1 > Int64(buckets.count) {
                for (b, sleeps) in buckets {
                    examined += 1
                    if b >= low && b <= high { found += sleeps.filter(meets) }
                }
            } else {
                for b in low...high {
                    examined += 1
                    if let sleeps = buckets[b] { found += sleeps.filter(meets) }
                }
            }
        }
        return found.sorted { $0.row < $1.row }
    }
}
