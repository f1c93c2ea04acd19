import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Testing

/// Two devices of one family exchanging events in-process (the replicator
/// comes later): views, digests and merges across homes, through the CLI.
struct TwoHomesTests {
    /// Mum's home and Dad's home in one family. Until invitations exist, Dad's
    /// home is given Mum's family id and key directly.
    final class Household {
        let mum = FamctlRunner(), dad = FamctlRunner()
        init() throws {
            try mum.ok("init", "--name", "Mum")
            try dad.ok("init", "--name", "Dad")
            let m = try Home.open(mum.home), d = try Home.open(dad.home)
            let (family, key) = try m.currentKey()
            try d.state.set(.family, family.description)
            try d.state.keyring.store(key, family: family)
        }

        /// Every event each home has that the other lacks, both ways.
        func exchange() throws {
            let m = try Home.open(mum.home), d = try Home.open(dad.home)
            func all(_ h: Home) throws -> [[UInt8]] {
                var out: [[UInt8]] = []
                try h.log.forEachEvent { out.append($0.bytes) }
                return out
            }
            let fromMum = try all(m), fromDad = try all(d)
            _ = try d.ingest(fromMum.shuffled())
            _ = try m.ingest(fromDad.shuffled())
        }
    }

    @Test func bothSeeEverythingAndAgreeOnTheDigest() throws {
        let h = try Household()
        let baby = try h.mum.ok("subject", "add", "baby", "--name", "Lily")
        try h.exchange()
        try h.mum.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true")
        try h.dad.ok("record", "add", "--focus", baby, "--store", "diaper", "dirty=true", "color=yellow")
        try h.exchange()
        #expect(try h.mum.ok("digest") == h.dad.ok("digest"))
        #expect(try h.mum.ok("record", "list").split(separator: "\n").count == 2)
        #expect(try h.dad.ok("replay").hasSuffix("result: OK"))
    }

    @Test func keepPrivateViewShowsOnlyOwnRecordsAndChangesNoData() throws {
        let h = try Household()
        let baby = try h.mum.ok("subject", "add", "baby", "--name", "Lily")
        try h.exchange()
        let mine = try h.dad.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true")
        try h.mum.ok("record", "add", "--focus", baby, "--store", "diaper", "dirty=true")
        try h.exchange()
        let digest = try h.dad.ok("digest")
        #expect(try h.dad.ok("settings", "include-shared") == "include-shared on")
        try h.dad.ok("settings", "include-shared", "off")
        let list = try h.dad.ok("record", "list")
        #expect(list.split(separator: "\n").count == 1)
        #expect(list.hasPrefix(mine))
        #expect(try h.dad.ok("digest") == digest)
        try h.dad.ok("settings", "include-shared", "on")
        #expect(try h.dad.ok("record", "list").split(separator: "\n").count == 2)
        #expect(try h.dad.run("settings", "include-shared", "maybe").code == 65)
    }

    @Test func concurrentEditsOfDifferentFieldsOnTwoDevicesBothSurvive() throws {
        let h = try Household()
        let baby = try h.mum.ok("subject", "add", "baby")
        let id = try h.mum.ok("record", "add", "--focus", baby, "--store", "feeding", "kind=bottle",
                              "start=2026-11-29T08:00:00+01:00", "amountMl=100", "milk=formula")
        try h.exchange()
        try h.mum.ok("record", "update", id, "amountMl=130")
        try h.dad.ok("record", "update", id, "milk=breastMilk", "end=2026-11-29T08:20:00+01:00")
        try h.exchange()
        for runner in [h.mum, h.dad] {
            let json = try JSONSerialization.jsonObject(with: Data(try runner.ok("record", "show", id, "--json").utf8)) as! [String: Any]
            let fields = json["fields"] as! [String: Any]
            #expect(fields["amountMl"] as? Int == 130)
            #expect(fields["milk"] as? String == "breastMilk")
            #expect(fields["end"] as? String == "2026-11-29T08:20:00+01:00")
        }
        #expect(try h.mum.ok("digest") == h.dad.ok("digest"))
        let trail = try h.mum.ok("replay", "--record", id)
        #expect(trail.split(separator: "\n").filter { $0.contains(" put ") }.count == 3)
    }

    @Test func overlappingSleepsArrivingByMergeAreKeptAndReported() throws {
        let h = try Household()
        let baby = try h.mum.ok("subject", "add", "baby")
        try h.exchange()
        try h.mum.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-29T01:00:00+01:00", "end=2026-11-29T03:00:00+01:00")
        try h.dad.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-29T02:00:00+01:00", "end=2026-11-29T04:00:00+01:00")
        try h.exchange()
        #expect(try h.mum.ok("record", "list", "--store", "sleep").split(separator: "\n").count == 2)
        let status = try h.dad.ok("status")
        #expect(status.contains("sleeps overlap for \(baby)"))
        // Entry still refuses a third overlapping sleep.
        #expect(try h.dad.run("record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-29T02:30:00+01:00").code == 65)
        // A sleep left without an end, and the other device's later sleeps:
        // said once, by the baby's name, with what to do, not a line a pair.
        let mia = try h.mum.ok("subject", "add", "baby", "--name", "Mia")
        try h.exchange()
        let open = try h.mum.ok("record", "add", "--focus", mia, "--store", "sleep", "start=2026-11-30T13:00:00+01:00")
        for hour in [15, 17, 19] {
            try h.dad.ok("record", "add", "--focus", mia, "--store", "sleep", "start=2026-11-30T\(hour):00:00+01:00", "end=2026-11-30T\(hour):45:00+01:00")
        }
        try h.exchange()
        let lines = try h.dad.ok("status").split(separator: "\n").filter { $0.contains("sleeps overlap for Mia") }
        #expect(lines.count == 1 && lines[0].contains("\(open) (started 2026-11-30T12:00:00Z, no end) overlaps 3 other sleeps (all kept); if it ended long before: famctl record update \(open) end=TIME"), "\(lines)")
    }

    /// Both parents logging the same naps before they sync: `status` shows
    /// the first few pairs, each with the delete that keeps one, and counts
    /// the rest rather than printing a line a nap (a review: 120 lines for
    /// a month of naps); every pair stays in `--json`.
    @Test func napsLoggedOnBothDevicesAreCountedAfterTheFirstFew() throws {
        let h = try Household()
        let baby = try h.mum.ok("subject", "add", "baby", "--name", "Lily")
        try h.exchange()
        for day in 10...17 {
            for home in [h.mum, h.dad] {
                try home.ok("record", "add", "--focus", baby, "--store", "sleep", "nap=true",
                            "start=2026-11-\(day)T13:00:00+01:00", "end=2026-11-\(day)T14:00:00+01:00")
            }
        }
        // A pair that is not one sleep twice: no delete is suggested for it.
        try h.mum.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-20T13:00:00+01:00", "end=2026-11-20T14:00:00+01:00")
        try h.dad.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-20T13:30:00+01:00", "end=2026-11-20T15:00:00+01:00")
        try h.exchange()
        let lines = try h.mum.ok("status").split(separator: "\n").map(String.init).filter { $0.contains("overlapping sleeps") || $0.contains("sleeps overlap") }
        #expect(lines.count == StatusCommand.overlapLinesShown + 1, "\(lines)")
        let shown = lines.dropLast()
        #expect(shown.allSatisfy { $0.contains("sleeps overlap for Lily (\(baby))") && $0.contains("(both kept); one sleep logged twice? keep one: famctl record delete ") }, "\(lines)")
        #expect(lines.last == "  … and 4 more pairs of overlapping sleeps, 3 of them one sleep logged twice (all kept): 'famctl status --json' lists every pair (sleepOverlaps)", "\(lines)")
        let json = try JSONSerialization.jsonObject(with: Data(h.mum.ok("status", "--json").utf8)) as! [String: Any]
        #expect((json["sleepOverlaps"] as? [[String]])?.count == 9)
        // Following the hint on each shown pair leaves the rest to show.
        for line in shown {
            let id = String(line.split(separator: " ").last!)
            try h.mum.ok("record", "delete", id)
        }
        let after = try h.mum.ok("status").split(separator: "\n").filter { $0.contains("sleeps overlap") }
        #expect(after.count == 4, "\(after)")
        #expect(after.filter { $0.contains("keep one: famctl record delete") }.count == 3, "\(after)")
    }
}
