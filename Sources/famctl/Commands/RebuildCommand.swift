import Envelope
import Foundation
import Projections

/// `famctl rebuild`
enum RebuildCommand: Command {
    static let spec = CommandSpec(
        path: ["rebuild"],
        abstract: "Rebuild the record stores from this device's log.",
        discussion: """
            The stores (records, care subjects, photos, the household) are derived from
            the log and can always be rebuilt from it; the log itself is not changed.
            Run it when 'famctl replay' reports that the live projection differs from
            the state the log rebuilds to, for example after the database file was
            edited or restored in part.
            """)

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let events = try home.log.count(in: home.family)
        let start = Date()
        try home.rebuildProjections()
        let seconds = Date().timeIntervalSince(start)
        let rate = seconds > 0 ? Double(events) / seconds : 0
        if inv.json {
            Console.json(["events": events, "seconds": seconds, "eventsPerSecond": rate, "digest": Hex.encode(try home.projector.digest())])
        } else {
            Console.out(String(format: "rebuilt the stores from %d events in %.3f s (%.0f events/s)", events, seconds, rate))
        }
    }
}
