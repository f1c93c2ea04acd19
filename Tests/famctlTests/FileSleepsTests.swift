import Envelope
@testable import famctl
import Foundation
import Projections
import Testing

/// The import's index of a store file's sleeps (`FileSleeps`): it finds
/// what comparing every earlier sleep finds, and reads only those near.
struct FileSleepsTests {
    /// The import's test, on every sleep: the rows of those that meet.
    static func everyMeeting(_ all: [(FocusKey, FileSleeps.Sleep)], focus: FocusKey, start: Date, end: Date) -> [Int] {
        all.filter { $0.0 == focus && (start < $0.1.end && $0.1.start < end || $0.1.start == start) }.map(\.1.row)
    }

    /// Whether `index` finds for `sleep` what comparing every sleep of
    /// `all` finds (expected so); then adds it to both.
    static func findsWhatComparingFinds(_ index: inout FileSleeps, _ all: inout [(FocusKey, FileSleeps.Sleep)], focus: FocusKey,
                                        _ sleep: FileSleeps.Sleep, _ what: String) -> Bool {
        let found = index.meeting(focus: focus, start: sleep.start, end: sleep.end).map(\.row)
        let expected = everyMeeting(all, focus: focus, start: sleep.start, end: sleep.end)
        #expect(found == expected, "\(what)")
        guard found == expected else { return false }
        index.add(focus: focus, sleep)
        all.append((focus, sleep))
        return true
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func findsWhatComparingEverySleepFinds(seed: UInt64) {
        var rng = SplitMixRNG(seed: seed)
        let babies: [FocusKey] = [.baby(UUID()), .baby(UUID()), .newMom]
        let base = 1_700_000_000.0
        // Lengths from nothing (and less: an end before the start) to weeks,
        // around powers of two, fractions of a second, and still going on.
        func length() -> Double {
            switch rng.next() % 8 {
            case 0: return 0
            case 1: return -Double(rng.next() % 3_600)
            case 2: let p = exp2(Double(rng.next() % 22)); return p + Double(Int(rng.next() % 3)) - 1
            case 3: return Double(rng.next() % 1_000) / 1_000
            case 4: return Date.distantFuture.timeIntervalSince1970 - base
            default: return Double(rng.next() % 40_000) + Double(rng.next() % 1_000) / 1_000
            }
        }
        func start() -> Double {
            // Some starts shared, at whole seconds; most spread over a month.
            rng.next() % 5 == 0 ? base + Double(rng.next() % 20) * 600 : base + Double(rng.next() % 2_600_000) + Double(rng.next() % 1_000) / 1_000
        }
        var index = FileSleeps()
        var all: [(FocusKey, FileSleeps.Sleep)] = []
        for row in 0..<1_500 {
            let focus = babies[Int(rng.next() % 3)]
            let s = start(), l = length()
            let sleep = FileSleeps.Sleep(row: row, start: Date(timeIntervalSince1970: s),
                                         end: l == Date.distantFuture.timeIntervalSince1970 - base ? .distantFuture : Date(timeIntervalSince1970: s + l),
                                         changed: rng.next() % 2 == 0, listsOverlap: false)
            // Asked before it is added, as the import does.
            guard Self.findsWhatComparingFinds(&index, &all, focus: focus, sleep, "row \(row): start \(s), length \(l)") else { return }
        }
        #expect(index.count == all.count)
    }

    /// A year of a baby's sleeps, one every 3 hours: a new one is tested
    /// against the few near it, wherever it falls, however many the file
    /// holds. (Comparing every earlier sleep made an import of 50 000
    /// sleeps take most of an hour.)
    @Test func aSleepIsTestedAgainstTheFewNearIt() {
        let baby = FocusKey.baby(UUID())
        var index = FileSleeps()
        let base = 1_700_000_000.0
        // Half-hour to two-hour sleeps, and one long one (a day and a half) in the middle.
        for i in 0..<3_000 {
            let s = base + Double(i) * 3 * 3_600
            let l = i == 1_500 ? 36 * 3_600.0 : Double(1_800 + (i % 4) * 1_800)
            index.add(focus: baby, .init(row: i, start: Date(timeIntervalSince1970: s), end: Date(timeIntervalSince1970: s + l), changed: false, listsOverlap: false))
        }
        for at in [base - 86_400, base + 1_000 * 10_800 + 600, base + 1_500 * 10_800 + 7_200, base + 3_000 * 10_800] {
            var examined = 0
            let found = index.meeting(focus: baby, start: Date(timeIntervalSince1970: at), end: Date(timeIntervalSince1970: at + 3_600), examined: &examined)
            #expect(examined <= 60, "\(examined) buckets and sleeps looked at for a sleep at \(at) (found \(found.count))")
        }
        // Inside the long one: it and the short ones it covers.
        let inside = index.meeting(focus: baby, start: Date(timeIntervalSince1970: base + 1_500 * 10_800 + 7_200),
                                   end: Date(timeIntervalSince1970: base + 1_500 * 10_800 + 10_800 + 60))
        #expect(inside.map(\.row) == [1_500, 1_501])
    }

    /// Sub-second sleeps and sleeps of days, mixed over three years: the
    /// long spans asked about go through the runs and spans of buckets
    /// (the index's coarser levels), and find what comparing finds.
    @Test(arguments: [7, 8, 9] as [UInt64])
    func longSpansOverManyShortSleepsFindWhatComparingFinds(seed: UInt64) {
        var rng = SplitMixRNG(seed: seed)
        let baby = FocusKey.baby(UUID())
        let base = 1_600_000_000.0, years = 3 * 365 * 86_400.0
        var index = FileSleeps()
        var all: [(FocusKey, FileSleeps.Sleep)] = []
        for row in 0..<3_000 {
            let s = base + Double(rng.next() % UInt64(years)) + Double(rng.next() % 1_000) / 1_000
            let l: Double = switch rng.next() % 4 {
            case 0: Double(rng.next() % 1_000) / 1_000
            case 1: Double(rng.next() % (20 * 86_400))
            case 2: Double(rng.next() % 200 * 86_400)
            default: Double(rng.next() % 7_200)
            }
            let sleep = FileSleeps.Sleep(row: row, start: Date(timeIntervalSince1970: s), end: Date(timeIntervalSince1970: s + l),
                                         changed: false, listsOverlap: false)
            guard Self.findsWhatComparingFinds(&index, &all, focus: baby, sleep, "row \(row): start \(s), length \(l)") else { return }
        }
    }

    /// 20 000 sub-second sleeps over half a year, then sleeps of three days
    /// after them: each long one skips the empty runs of the short ones'
    /// class rather than looking in each of its buckets (it looked in all
    /// 20 000: 100 000 rows of such a file took 12 s to import).
    @Test func aLongSleepSkipsTheEmptyBucketsOfShortOnes() {
        let baby = FocusKey.baby(UUID())
        let base = 1_700_000_000.0
        var index = FileSleeps()
        for i in 0..<20_000 {
            let s = base + Double(i) * 780
            index.add(focus: baby, .init(row: i, start: Date(timeIntervalSince1970: s), end: Date(timeIntervalSince1970: s + 0.5), changed: false, listsOverlap: false))
        }
        let after = base + 20_000 * 780 + 86_400
        for i in 0..<20 {
            let s = after + Double(i) * 4 * 86_400
            var examined = 0
            let found = index.meeting(focus: baby, start: Date(timeIntervalSince1970: s), end: Date(timeIntervalSince1970: s + 3 * 86_400), examined: &examined)
            #expect(found.map(\.row) == [], "\(found.map(\.row))")
            #expect(examined <= 200, "\(examined) buckets, runs and sleeps looked at for a three-day sleep")
            index.add(focus: baby, .init(row: 20_000 + i, start: Date(timeIntervalSince1970: s), end: Date(timeIntervalSince1970: s + 3 * 86_400), changed: false, listsOverlap: false))
        }
        // One over the short ones' last day finds those it covers, in order.
        let last = base + 19_900 * 780
        let covered = index.meeting(focus: baby, start: Date(timeIntervalSince1970: last - 1), end: Date(timeIntervalSince1970: last + 86_400))
        #expect(covered.map(\.row) == Array(19_900..<20_000))
    }
}
