import EventLog
import Foundation
import Replicator

/// This device's own chain forked: another copy of its home (copied, or
/// restored from a backup and written on) signed other events at the same
/// seqs. Which copy the family goes on with depends on which published
/// first; the one that finds the fork before publishing keeps its branch
/// back (``Replicator/PublishReport/withheld``).
extension Home {
    /// Whether none of what this copy wrote from `point` on was published:
    /// the family goes on with the other copy's events and sees no fork.
    func ownForkWithheld(at point: UInt64) -> Bool {
        ((try? Replicator.publishedSeq(log: log, family: family)) ?? 0) < point
    }

    /// What `sync` and `status` say of this device's own fork at `point`.
    func ownForkText(at point: UInt64) -> String {
        guard ownForkWithheld(at: point) else { return Self.ownChainForked(at: point) }
        return Self.ownEventsWithheld(from: point)
    }

    /// What to do about it.
    func ownForkHint(at point: UInt64) -> String {
        guard ownForkWithheld(at: point) else { return writeAgainHint }
        return "Go on with the other copy of this home: the family takes what it writes. What this copy wrote from seq \(point) on is listed by 'famctl log --author me' "
            + "(its events from #\(point), each with its record's id; 'famctl replay --record ID' shows all a record's change wrote): record it again there. Without the other copy, \(joinAgainClause)."
    }

    static func ownEventsWithheld(from point: UInt64) -> String {
        "this copy of the home is forked at seq \(point): another copy of it (the home copied, or restored from a backup and written on) published other events at those seqs first. "
            + "What this copy wrote from seq \(point) on stays here, unpublished, and counts nowhere; the family goes on with the other copy's events and sees no fork. This copy cannot write any more"
    }

    /// Refuses, once the folder read first showed this copy of the home
    /// forked: `what` can never reach the family (`outcome`: what became of
    /// it here).
    func refuseIfOwnChainForked(_ what: String, _ outcome: String) throws {
        guard let point = try log.forkPoint(of: deviceID, in: family) else { return }
        throw CLIError(.dataError, "\(what) cannot reach the family: " + ownForkText(at: point) + "; " + outcome, hint: ownForkHint(at: point))
    }

    static func ownEventsWithheld(_ kept: (count: UInt64, from: UInt64)) -> String {
        ownEventsWithheld(from: kept.from) + " (\(kept.count) of its event(s) not published)"
    }
}
