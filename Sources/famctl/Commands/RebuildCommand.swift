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
            edited or restored in part. Should the log hold events this device cannot
            open although it holds their key (their bytes damaged), the stores are kept
            as they are (exit 65): they may hold the only readable copy of what those
            events said. 'famctl export stores DIR' saves it; --drop-damaged rebuilds
            without them.
            """,
        options: [.flag("--drop-damaged", "Rebuild even when damaged events' changes, which the stores hold, would be dropped.")])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        home.keepStoresWhenDamaged = !inv.flag("--drop-damaged")
        let events = try home.log.count(in: home.family)
        let start = Date()
        try home.rebuildProjections()
        let seconds = Date().timeIntervalSince(start)
        let rate = seconds > 0 ? Double(events) / seconds : 0
        if inv.json {
            var o: [String: Any] = ["events": events, "seconds": seconds, "eventsPerSecond": rate, "digest": Hex.encode(try home.projector.digest())]
            if let peak = peakResidentMB() { o["peakRSSMB"] = peak }
            o["unopened"] = home.unopenedInRebuild
            Console.json(o)
        } else {
            Console.out(String(format: "rebuilt the stores from %d events in %.3f s (%.0f events/s)", events, seconds, rate))
        }
        if home.unopenedInRebuild > 0 {
            Console.err("famctl: warning: \(home.unopenedInRebuild) event(s) in the log could not be opened although this device holds their key: their bytes are damaged, and their changes are now missing from the stores (--drop-damaged)")
            Console.err("famctl: 'famctl replay' names them; this log cannot make them whole again: restore \(Home.databaseFile) from a backup of this home that holds them whole.")
        }
    }

    /// This process's peak resident memory (`VmHWM` in /proc/self/status), in
    /// MB. Not `getrusage`: Linux carries the parent's peak across `exec`
    /// into the child's `ru_maxrss`.
    static func peakResidentMB() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return nil }
        return kb / 1024
    }
}
