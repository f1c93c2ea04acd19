import Envelope
import EventLog
import Foundation
import Replicator
import Synchronization

/// `famctl sync [--watch] [--interval SECONDS]`
enum SyncCommand: Command {
    static let spec = CommandSpec(
        path: ["sync"],
        abstract: "Exchange events with the family through the shared directory: publish, then pull.",
        discussion: """
            One round writes this device's new events as one segment into its own folder
            and reads what the others wrote since the last round. Files that cannot be
            verified yet (still arriving, damaged, placeholders) are retried next time and
            never deleted. --watch keeps going: it publishes shortly after each change
            (0.6 s of quiet) and pulls every --interval seconds; Ctrl-C stops it cleanly.
            """,
        options: [
            .flag("--watch", "Keep syncing until interrupted."),
            .value("--interval", "SECONDS", "With --watch, how often to pull (default 2)."),
        ])

    /// Set by SIGINT/SIGTERM; the watch loop stops at its next check.
    static let stop = Atomic<Bool>(false)
    static let debounce: TimeInterval = 0.6

    static func run(_ inv: Invocation) throws {
        let interval = try inv.value("--interval").map { s -> Double in
            guard let v = Double(s), v >= 0.1, v <= 3600 else { throw CLIError.data("--interval '\(s)' is not a number of seconds from 0.1 to 3600") }
            return v
        } ?? 2
        if inv.value("--interval") != nil && !inv.flag("--watch") { throw CLIError.usage("--interval only applies with --watch") }
        let path = try Home.location(inv)
        if !inv.flag("--watch") {
            let home = try Home.open(path)
            try report(try round(home), home: home, json: inv.json)
            return
        }
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { sig -> any DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { SyncCommand.stop.store(true, ordering: .relaxed) }
            s.resume()
            return s
        }
        defer { sources.forEach { $0.cancel() } }
        var lastPull = Date.distantPast
        var seenHead: UInt64 = 0
        var changedAt: Date?
        Console.out("syncing every \(interval) s; Ctrl-C stops")
        while !stop.load(ordering: .relaxed) {
            // A fresh connection each pass sees what other famctl processes appended.
            let home = try Home.open(path)
            let head = try home.log.head(of: home.deviceID, in: home.family).seq
            if head != seenHead { changedAt = Date(); seenHead = head }
            let quiet = changedAt.map { Date().timeIntervalSince($0) >= debounce } ?? false
            if quiet || Date().timeIntervalSince(lastPull) >= interval {
                let r = try round(home)
                if r.published.events > 0 || r.pulled.accepted > 0 || !r.pulled.notYetArrived.isEmpty { try report(r, home: home, json: inv.json) }
                lastPull = Date()
                changedAt = nil
            }
            usleep(100_000)
        }
        Console.out("stopped")
    }

    struct Round {
        let published: Replicator.PublishReport
        let pulled: Replicator.PullReport
    }

    static func round(_ home: Home) throws -> Round {
        let replicator = try home.replicator()
        do {
            let published = try replicator.publish()
            let pulled = try replicator.pull { try home.ingest($0) }
            return Round(published: published, pulled: pulled)
        } catch let e as SharedDirectoryError {
            switch e {
            case .missing: throw CLIError(.tempFail, e.description, hint: "Mount or create it, then sync again; nothing was lost.")
            case .unreadable, .notWritable: throw CLIError(.cantCreate, e.description, hint: "Check the folder's permissions; nothing was lost.")
            }
        }
    }

    static func report(_ r: Round, home: Home, json: Bool) throws {
        if json {
            Console.json(["published": r.published.events, "segments": r.published.segments, "compacted": r.published.compacted,
                          "filesRead": r.pulled.filesRead, "accepted": r.pulled.accepted, "forks": r.pulled.forks,
                          "notYetArrived": r.pulled.notYetArrived.map { ["file": $0.0, "reason": $0.1] }] as [String: Any])
            return
        }
        Console.out("published \(r.published.events) event(s)\(r.published.segments.isEmpty ? "" : " in \(r.published.segments.count) segment(s)")"
                    + (r.published.compacted > 0 ? ", compacted \(r.published.compacted) small segments" : ""))
        Console.out("pulled \(r.pulled.accepted) new event(s) from \(r.pulled.filesRead) file(s)")
        if r.pulled.forks > 0 { Console.out("fork proofs: \(r.pulled.forks) (see famctl status)") }
        for (file, why) in r.pulled.notYetArrived { Console.out("not yet arrived: \(file): \(why)") }
    }
}

extension Home {
    /// The replicator over this family's shared directory.
    func replicator() throws -> Replicator {
        guard case .directory(let dir) = Location.stored(in: self) else {
            if case .peer = Location.stored(in: self) {
                throw CLIError(.usage, "this family syncs through a peer URL, which this famctl cannot reach yet")
            }
            throw CLIError(.usage, "no shared directory is set for this family",
                           hint: "'famctl family create --dir PATH' or 'famctl accept CODE --dir PATH' sets one.")
        }
        return try Replicator(log: log, directory: SharedDirectory(root: dir, family: family, staging: path + "/staging"), me: deviceID)
    }
}
