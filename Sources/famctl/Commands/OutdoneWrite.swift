import Envelope
import Foundation
import Projections

/// What a command says when what it wrote does not show: the thing's last
/// change is dated later than this write. A device whose clock is ahead
/// (by more than this device's clock follows, `clockFollowLimit`) wrote it,
/// and the later-dated write wins on every device. The write is in the log;
/// the command still succeeds (exit 0), as `record update` does when a field
/// keeps its value, but it never says nothing.
enum OutdoneWrite {
    /// Who wrote a change: "this device", the member's name, or its short id.
    static func author(_ author: DeviceID, home: Home) -> String {
        author == home.deviceID ? "this device" : home.projector.household.members[author]?.name ?? author.short
    }

    /// Says on stderr that `thing` (`record ID`) `stays` (`live`) after this
    /// `write` (`delete`), naming the change dated later: the newest of the
    /// entity's history (`kind`: `record`, `subject` or `photo`; `id` as the
    /// projection keys it).
    static func warn(_ thing: String, stays: String, write: String, kind: String, id: String, home: Home) {
        let last = (try? home.projector.history(kind: kind, id: id))?.last?.version
        let dated = last.map { ": its last change, by \(author($0.author, home: home)), is dated \(TimeText.format($0.hlc.date)), later than this \(write)" }
            ?? ": a change of it is dated later than this \(write)"
        Console.err("famctl: warning: \(thing) \(stays)\(dated); a device whose clock is ahead wrote it (or this device's clock is behind), and the later-dated write wins on every device. "
                    + "This \(write) is in the log. "
                    + (last.flatMap { yearsAhead($0.hlc.date, what: "the change") }
                        ?? "Make it again once this device's clock has passed that date, or from the device whose clock is ahead "
                            + "(and set the clock that is wrong right)."))
    }

    /// How far ahead of this device's clock a date stands for good in
    /// practice: waiting for it is no advice.
    static let forGood: TimeInterval = 365 * 86_400

    /// What to say of a change dated `date` that outdoes this device's
    /// (`what` stands), when that date is ``forGood`` ahead or more; `nil`
    /// otherwise (a security review: the advice was to wait for the year
    /// 10889).
    static func yearsAhead(_ date: Date, what: String) -> String? {
        guard date.timeIntervalSinceNow > forGood else { return nil }
        return "That date is years ahead: in practice \(what) stands for good; only a change dated later still, written from the device whose clock is ahead, outdoes it "
            + "(set that clock right first). 'famctl replay' lists the events dated far ahead."
    }
}
