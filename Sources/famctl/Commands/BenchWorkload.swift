import Envelope
import Foundation
import Projections

/// The records `famctl bench` writes: a household's care log, made the
/// same way every run from a seed.
///
/// All ten stores, in the proportions a family with a baby logs them
/// (feedings and diapers most, a vaccination now and then), for the baby,
/// the new mother and a pregnancy; field values of every type the stores
/// use (choices, integers, decimals, booleans, times, lists), notes in
/// English and in Chinese on about a third of the records. Every record is
/// valid for its store (`BenchWorkloadTests`).
///
/// Time runs faster than in a household: a new record every one to five
/// minutes (a million records span about six years), feedings and sleeps
/// ending before the next record, so that no two sleeps overlap. `at` is
/// written with the family's offset, `+08:00`.
///
/// With `eventsPerRecord` K > 1, each record is written by K events: its
/// put, then K − 1 changes of one field each (a bottle's amount, a rash, a
/// mood, a note…), as a family corrects what it logged.
struct BenchWorkload {
    /// The care subjects the records are about.
    let baby: UUID
    var babyFocus: String { FocusKey.baby(baby).description }

    private var rng: SplitMixRNG
    private let eventsPerRecord: Int
    /// Events made so far.
    private(set) var count = 0
    /// Seconds since 1970 of the next new record's `at`.
    private var time: Int64
    /// The record the next change is to.
    private var current: (record: UUID, store: StoreName, focus: String, at: String, fields: [String: JSONValue])?

    /// The first `at`: 2020-06-01T00:00:00+08:00.
    static let start: Int64 = 1_590_940_800

    /// - Parameters:
    ///   - seed: the household: its baby's id, and its records.
    ///   - device: another device of the same household writes other
    ///     records about the same subjects.
    init(seed: UInt64 = 1, device: UInt64 = 0, eventsPerRecord: Int = 1) {
        var family = SplitMixRNG(seed: seed)
        var b = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { b[i] = UInt8(truncatingIfNeeded: family.next()) }
        b[6] = 0x40 | (b[6] & 0x0F)
        b[8] = 0x80 | (b[8] & 0x3F)
        baby = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        rng = SplitMixRNG(seed: family.next() ^ device)
        self.eventsPerRecord = max(1, eventsPerRecord)
        time = Self.start
    }

    /// The subjects' events, to append before the records.
    var subjects: [EventBody] {
        [SubjectEvent(focus: .baby(baby), fields: ["name": .string("小米"), "birth": .string("2020-05-20"), "sex": .string("female")]).body,
         SubjectEvent(focus: .newMom, fields: ["name": .string("Lin")]).body,
         SubjectEvent(focus: .pregnancy, fields: ["due": .string("2020-05-24")]).body]
    }

    /// The next `count` events.
    mutating func next(_ count: Int) -> [EventBody] { (0..<count).map { _ in next() } }

    /// The next event: a new record, or a change to the current one.
    mutating func next() -> EventBody {
        defer { count += 1 }
        if count % eventsPerRecord != 0, let c = current {
            let change = edit(c.store, c.fields)
            current!.fields.merge(change) { $1 }
            return RecordEvent(kind: .put, record: c.record, store: c.store.rawValue, focus: c.focus, at: c.at, fields: change).body
        }
        let at = time
        // The gap to the next record, drawn now: durations end within it.
        let gap = 60 + Int64(pick(241))
        time += gap
        let (store, focus, fields) = record(at: at, gap: gap)
        let c = (record: RecordIdentifier.make(), store: store, focus: focus, at: Self.text(at), fields: fields)
        current = c
        return RecordEvent(kind: .put, record: c.record, store: store.rawValue, focus: focus, at: c.at, fields: fields).body
    }

    // MARK: - Records

    /// New records per hundred, by store.
    private static let weights: [(StoreName, Int)] = [
        (.feeding, 30), (.diaper, 22), (.sleep, 14), (.postpartum, 12), (.solidFood, 6),
        (.health, 5), (.pregnancy, 4), (.growth, 3), (.milestone, 2), (.vaccination, 2),
    ]

    private static let notes = [
        "slept a little better tonight", "fussy after the bath", "吃得很好", "有点咳嗽，明天再看看",
        "grandma fed her", "left side first, then right", "睡前喝奶", "spit up a little afterwards",
    ]
    private static let foods = ["carrot", "rice cereal", "banana", "pumpkin", "sweet potato", "apple", "avocado", "胡萝卜泥", "米粉", "egg yolk"]

    private mutating func record(at: Int64, gap: Int64) -> (StoreName, String, [String: JSONValue]) {
        var roll = pick(100)
        var store = StoreName.feeding
        for (s, w) in Self.weights {
            if roll < w { store = s; break }
            roll -= w
        }
        var focus = babyFocus
        var f: [String: JSONValue] = [:]
        // A duration that ends before the next record: half to nineteen twentieths of the gap.
        let duration = gap / 2 + Int64(pick(Int(gap * 9 / 20)))
        switch store {
        case .feeding:
            f["start"] = .string(Self.text(at))
            f["end"] = .string(Self.text(at + duration))
            if pick(10) < 6 {
                f["kind"] = .string("breast")
                f["side"] = .string(["left", "right", "both"][pick(3)])
                let left = Int64(pick(Int(duration)))
                f["leftSec"] = .int(left)
                f["rightSec"] = .int(duration - left)
            } else {
                f["kind"] = .string("bottle")
                f["milk"] = .string(["breastMilk", "formula", "mixed"][pick(3)])
                f["amountMl"] = .int(Int64(60 + 10 * pick(13)))
            }
        case .diaper:
            let dirty = pick(10) < 4
            f["wet"] = .bool(!dirty || pick(2) == 0)
            f["dirty"] = .bool(dirty)
            if dirty { f["color"] = .string(["yellow", "green", "brown"][pick(3)]) }
            if pick(20) == 0 { f["rash"] = .bool(true) }
        case .sleep:
            f["start"] = .string(Self.text(at))
            f["end"] = .string(Self.text(at + duration))
            f["nap"] = .bool(pick(3) != 0)
            f["location"] = .string(["crib", "stroller", "parents' bed", "婴儿床"][pick(4)])
        case .postpartum:
            focus = FocusKey.newMom.description
            switch pick(10) {
            case 0..<5: f["kind"] = .string("mood"); f["mood"] = .int(Int64(1 + pick(5)))
            case 5..<8: f["kind"] = .string("pumping"); f["leftMl"] = .int(Int64(20 + 5 * pick(20))); f["rightMl"] = .int(Int64(20 + 5 * pick(20)))
            case 8: f["kind"] = .string("pain"); f["pain"] = .int(Int64(pick(7)))
            default:
                f["kind"] = .string("epds")
                f["epds"] = .array((0..<10).map { _ in .int(Int64(pick(4) == 0 ? 1 : 0)) })
            }
        case .solidFood:
            var chosen: [String] = []
            for _ in 0..<(1 + pick(3)) {
                let food = Self.foods[pick(Self.foods.count)]
                if !chosen.contains(food) { chosen.append(food) }
            }
            f["foods"] = .array(chosen.map { .string($0) })
            f["amountG"] = .int(Int64(10 + 5 * pick(23)))
            f["reaction"] = .string(["loved", "liked", "neutral", "disliked", "refused"][pick(5)])
            if chosen.contains("egg yolk") { f["allergens"] = .array([.string("egg")]) }
        case .health:
            if pick(2) == 0 { focus = FocusKey.newMom.description }
            switch pick(3) {
            case 0: f["kind"] = .string("temperature"); f["temperatureC"] = .double(Double(364 + pick(25)) / 10)
            case 1: f["kind"] = .string("symptom"); f["symptom"] = .string(["cough", "runny nose", "rash", "流鼻涕"][pick(4)]); f["severity"] = .int(Int64(1 + pick(5)))
            default: f["kind"] = .string("medication"); f["medication"] = .string("paracetamol"); f["dose"] = .double(Double(5 + pick(20)) / 2); f["doseUnit"] = .string("ml")
            }
        case .pregnancy:
            focus = FocusKey.pregnancy.description
            if pick(2) == 0 {
                f["kind"] = .string("kicks"); f["count"] = .int(Int64(5 + pick(26)))
            } else {
                f["kind"] = .string("contraction"); f["durationSec"] = .int(Int64(30 + pick(61))); f["intensity"] = .int(Int64(1 + pick(5)))
            }
        case .growth:
            // A baby growing from about 3.4 kg over the first years, to the gram and the millimetre.
            let months = Double(at - Self.start) / (30.4 * 86_400)
            f["weightKg"] = .double(((3.4 + min(months, 36) * 0.3 + Double(pick(30)) / 100) * 100).rounded() / 100)
            f["lengthCm"] = .double(((50 + min(months, 36) * 1.1) * 10).rounded() / 10)
            if pick(2) == 0 { f["headCm"] = .double(((34 + min(months, 36) * 0.3) * 10).rounded() / 10) }
        case .milestone:
            f["title"] = .string(["first smile", "rolled over", "sat up", "first word", "第一次走路"][pick(5)])
            f["category"] = .string(["social", "motor", "motor", "language", "motor"][pick(5)])
        case .vaccination:
            f["vaccine"] = .string(["DTaP-IPV-Hib", "hepatitis B", "MMR", "乙肝疫苗"][pick(4)])
            f["dose"] = .int(Int64(1 + pick(3)))
            f["lot"] = .string("AB" + String(1000 + pick(9000)))
            f["site"] = .string(["left thigh", "right thigh", "left arm"][pick(3)])
        }
        if pick(3) == 0 { f["note"] = .string(Self.notes[pick(Self.notes.count)]) }
        return (store, focus, f)
    }

    /// A later change to a record: one field, as a correction.
    private mutating func edit(_ store: StoreName, _ fields: [String: JSONValue]) -> [String: JSONValue] {
        switch (store, fields["kind"]?.stringValue) {
        case (.feeding, "bottle"): ["amountMl": .int(Int64(60 + 10 * pick(13)))]
        case (.diaper, _): ["rash": .bool(pick(4) == 0)]
        case (.postpartum, "mood"): ["mood": .int(Int64(1 + pick(5)))]
        case (.sleep, _): ["location": .string(["crib", "stroller", "parents' bed", "婴儿床"][pick(4)])]
        default: ["note": .string(Self.notes[pick(Self.notes.count)])]
        }
    }

    /// A uniform draw from `0..<n`.
    private mutating func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(max(1, n))) }

    // MARK: - Times

    /// Seconds since 1970 as `YYYY-MM-DDTHH:MM:SS+08:00` (the civil date by
    /// arithmetic, ``TimeText/civil(days:)``: a formatter per record is slow).
    static func text(_ seconds: Int64) -> String {
        let local = seconds + 8 * 3600
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let secs = local - days * 86_400
        let (year, month, day) = TimeText.civil(days: days)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(secs / 3600)):\(two(secs / 60 % 60)):\(two(secs % 60))+08:00"
    }
}
