import Envelope
import EventLog
import Foundation

/// `famctl replay`
enum ReplayCommand: Command {
    static let spec = CommandSpec(
        path: ["replay"],
        abstract: "Audit the whole log: re-verify every event's bytes, id, signature and chain, and open its body.",
        discussion: """
            Exits 0 when every event verifies, 3 when any does not (each failure is named
            by its event id). Forks, rejected events and far-future clocks are reported;
            they are findings about other devices, not damage to this log.
            """)

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let (family, _) = try home.currentKey()
        // A body that does not open is the author's doing, never damage here:
        // the signature already proved these are the bytes the author wrote.
        var findings = BodyFindings()
        let report = try home.log.audit(family: family, localAuthor: home.deviceID) { env in
            switch try home.openBody(env) {
            case .body: break
            case .noKey: findings.noKey += 1
            case .failed(let e): findings.unreadable.append((env.id, e))
            }
            return nil
        }
        if inv.json {
            Console.json([
                "ok": report.isIntact, "events": report.eventCount, "pending": report.pending,
                "authors": report.authors.map { ["author": $0.author.hex, "events": $0.events] as [String: Any] },
                "failures": report.failures.map { ["id": $0.id?.hex ?? NSNull(), "reason": $0.reason] as [String: Any] },
                "forks": report.forks.map { ["author": $0.author.hex, "seq": $0.seq] as [String: Any] },
                "rejected": report.rejected.map { ["id": $0.id.hex, "reason": $0.reason] as [String: Any] },
                "farFuture": report.farFuture.map { $0.id.hex },
                "undecryptable": findings.noKey,
                "unreadable": findings.unreadable.map { ["id": $0.0.hex, "reason": $0.1.description] },
            ] as [String: Any])
        } else {
            print(report, home: home, findings: findings)
        }
        if !report.isIntact {
            throw CLIError(.integrity, "replay found \(report.failures.count) integrity failure\(report.failures.count == 1 ? "" : "s")",
                           hint: "The events named above do not verify; the log has been altered or damaged.")
        }
    }

    struct BodyFindings {
        var noKey = 0
        var unreadable: [(EventID, EnvelopeError)] = []
    }

    static func print(_ r: AuditReport, home: Home, findings: BodyFindings) {
        Console.out("replay: \(r.eventCount) event\(r.eventCount == 1 ? "" : "s") from \(r.authors.count) author\(r.authors.count == 1 ? "" : "s") re-verified (bytes, ids, signatures, chains, bodies)")
        for a in r.authors {
            let me = a.author == home.deviceID ? " (this device)" : ""
            Console.out("  \(a.author.short)\(me): \(a.events) events, \(TimeText.format(a.firstHLC.date)) … \(TimeText.format(a.lastHLC.date))")
        }
        Console.out("forks: \(r.forks.isEmpty ? "none" : "\(r.forks.count)")")
        for f in r.forks { Console.out("  author \(f.author.short) signed two events at seq \(f.seq) (proof kept)") }
        Console.out("rejected: \(r.rejected.isEmpty ? "none" : "\(r.rejected.count)")")
        for x in r.rejected { Console.out("  \(x.id.hex) by \(x.author.short) #\(x.seq): \(x.reason)") }
        Console.out("pending: \(r.pending)")
        Console.out("far-future clocks: \(r.farFuture.isEmpty ? "none" : "\(r.farFuture.count)")")
        for f in r.farFuture { Console.out("  \(f.id.hex) stamped \(TimeText.format(f.hlc.date)), arrived \(TimeText.format(f.receivedAt))") }
        if findings.noKey > 0 { Console.out("not decrypted (no key held): \(findings.noKey)") }
        if !findings.unreadable.isEmpty {
            Console.out("unreadable bodies (validly signed, but not for our key or not an event body): \(findings.unreadable.count)")
            for (id, e) in findings.unreadable { Console.out("  \(id.hex): \(e)") }
        }
        if r.isIntact {
            Console.out("result: OK")
        } else {
            Console.out("integrity failures: \(r.failures.count)")
            for f in r.failures { Console.out("  \(f)") }
            Console.out("result: FAILED")
        }
    }
}
