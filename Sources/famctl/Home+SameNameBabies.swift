import Foundation
import Projections

/// Babies of one name: most often one baby added on two devices (or
/// carried in by an `accept`) before either saw the other's.
extension Home {
    /// Groups of live babies sharing a name (letters' case aside), each
    /// with the one to keep first: the most records, then the one added
    /// first (the merge hint moves the others' records to it).
    func sameNameBabies(subjects: [SubjectState]? = nil, recordCounts: [String: Int]? = nil) throws -> [[String]] {
        let subjects = try subjects ?? projector.subjects()
        let babies = subjects.filter { $0.kind == .baby && $0.name != nil }
        guard Set(babies.map { $0.name!.lowercased() }).count < babies.count else { return [] }
        let recordCounts = try recordCounts ?? projector.liveRecordCounts()
        return Dictionary(grouping: babies, by: { $0.name!.lowercased() })
            .values.filter { $0.count > 1 }
            .map { group in group.sorted { Self.keptFirst($0, $1, recordCounts: recordCounts) }.map(\.focus.description) }
            .sorted { $0[0] < $1[0] }
    }

    /// Of subjects of one name, whether `a` is the one to keep before `b`:
    /// the most records, then the one added first (then by key).
    static func keptFirst(_ a: SubjectState, _ b: SubjectState, recordCounts: [String: Int]) -> Bool {
        let (ra, rb) = (recordCounts[a.focus.description] ?? 0, recordCounts[b.focus.description] ?? 0)
        return ra != rb ? ra > rb : (a.created != b.created ? a.created < b.created : a.focus.description < b.focus.description)
    }

    /// What `status`, `sync` and `accept` say of one group.
    /// - Parameter counts: with each baby's number of records (`status`;
    ///   a sync's warning leaves them out, so that a watch says it once).
    static func sameNameText(_ keys: [String], subjects: [SubjectState], recordCounts: [String: Int], counts: Bool = true) -> String {
        let names = keys.map { k in subjects.first { $0.focus.description == k }?.name ?? "" }
        let name = names[0]
        // Names alike but for letters' case: each spelling names its own baby (a review).
        let which = Set(names).count == 1 ? "'--focus \(name)' names \(keys.count == 2 ? "neither" : "none of them")"
            : "each spelling (\(names.map { "'\($0)'" }.joined(separator: ", "))) names its own with --focus, easily mixed up"
        return "\(keys.count) babies are named \(name): \(keys.map { counts ? "\($0) (\(recordCounts[$0] ?? 0) record(s))" : $0 }.joined(separator: ", ")); "
            + which + ". If one baby was added twice, "
            + keys.dropFirst().map { "'famctl subject remove \($0) --move-records-to \(keys[0])'" }.joined(separator: " then ")
            + " merges them into the first"
    }

    /// The warnings of ``sameNameBabies(subjects:recordCounts:)``, for `sync` and `accept`.
    func sameNameWarnings() -> [String] {
        guard let subjects = try? projector.subjects(), let groups = try? sameNameBabies(subjects: subjects), !groups.isEmpty,
              let counts = try? projector.liveRecordCounts() else { return [] }
        return groups.map { "famctl: warning: " + Self.sameNameText($0, subjects: subjects, recordCounts: counts, counts: false) }
    }
}
