import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Replicator
import Testing

/// A sync reads only what is new: with a small and a large history behind
/// it, one new event costs one file read and one event ingested. The time of
/// that round is printed next to the history size (a figure, not a check).
struct IncrementalSyncTests {
    static var largeHistory: Int { Int(ProcessInfo.processInfo.environment["FAMCTL_SYNC_HISTORY"] ?? "") ?? 10_000 }

    @Test func oneNewEventCostsTheSameWhateverTheHistory() throws {
        var timings: [(Int, Double)] = []
        for history in [1_000, Self.largeHistory] {
            let family = try SharedFamily()
            let (mum, dad) = (family.mum, family.dad)
            let dadHome = try Home.open(dad.home)
            var written = 0
            while written < history {
                let n = min(2_000, history - written)
                try dadHome.append((0..<n).map { i in
                    RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z",
                                fields: ["kind": .string("mood"), "mood": .int(Int64(i % 5 + 1))]).body
                })
                written += n
            }
            try dad.ok("sync")
            try mum.ok("sync")
            try dadHome.append([RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T09:00:00Z",
                                            fields: ["kind": .string("mood"), "mood": .int(3)]).body])
            try dad.ok("sync")

            let start = Date()
            let home = try Home.open(mum.home)
            let pulled = try home.replicator().pull { try home.ingest(batches: $0, onIngested: $1) }
            let seconds = Date().timeIntervalSince(start)
            #expect(pulled.filesRead == 1, "history \(history): read \(pulled.filesRead) files for one new event")
            #expect(pulled.eventsIngested == 1 && pulled.accepted == 1, "history \(history): ingested \(pulled.eventsIngested)")
            #expect(try home.log.count(in: home.family) >= history)
            timings.append((history, seconds))
        }
        let ratio = timings[1].1 / max(timings[0].1, 1e-6)
        print(String(format: "incremental sync: one new event after %d events %.1f ms, after %d events %.1f ms (ratio %.2f)",
                     timings[0].0, timings[0].1 * 1000, timings[1].0, timings[1].1 * 1000, ratio))
    }

    @Test func aDeviceCompactsItsOwnSmallSegments() throws {
        let family = try SharedFamily()
        let (mum, dad, dir) = (family.mum, family.dad, family.dir)
        for i in 0..<20 {
            try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i % 5 + 1)")
            try dad.ok("sync")
            if i % 3 == 0 { try mum.ok("sync") }
        }
        let dadHome = try Home.open(dad.home)
        let files = try FileIO.list(dir + "/" + dadHome.family.description + "/" + dadHome.deviceID.hex).filter { $0.hasSuffix(".seg") }
        #expect(files.count < Replicator.compactAfter, "dad's folder holds \(files.count) segments after 21 rounds")
        try mum.ok("sync")
        #expect(try mum.ok("digest") == dad.ok("digest"))
        #expect(try mum.ok("record", "list").split(separator: "\n").count == 20)
        // What Mum keeps of the files she read is what the folder holds, not
        // every file the compaction merged away since (a review: a row a round, for good).
        let mumHome = try Home.open(mum.home)
        let rows = try mumHome.log.database.statement("SELECT count(*) FROM r_files WHERE family = ?1 AND path LIKE ?2")
            .first([.blob(mumHome.family.bytes), .text(dadHome.deviceID.hex + "/%")]) { Int($0.int(0)) } ?? -1
        #expect(rows >= 1 && rows <= files.count, "Mum keeps \(rows) rows of Dad's folder, which holds \(files.count) segments")
        // A device that joins now reads the compacted history.
        let late = FamctlRunner()
        try late.ok("accept", try mum.ok("invite"), "--name", "Late", "--dir", dir)
        try late.ok("sync")
        #expect(try late.ok("record", "list").split(separator: "\n").count == 20)
    }
}

/// Compaction merges the first run of small segments wherever it lies: a
/// large segment right after the lowest small one (a few events, then a
/// bulk import published in one round) used to stop it for good.
struct CompactionAfterABulkTests {
    @Test func smallSegmentsAfterALargeOneAreMerged() throws {
        let family = try SharedFamily()
        let (dad, dir) = (family.dad, family.dir)
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        try dad.ok("sync")
        do {
            let home = try Home.open(dad.home)
            var records = BenchWorkload()
            try home.append(records.subjects + records.next(1_500))
        }
        try dad.ok("sync")
        for i in 0..<14 {
            try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i % 5 + 1)")
            try dad.ok("sync")
        }
        let home = try Home.open(dad.home)
        let folder = dir + "/" + home.family.description + "/" + home.deviceID.hex
        let sizes = try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.map { name in
            (try FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? NSNumber)?.intValue ?? 0
        }
        #expect(sizes.contains { $0 >= Replicator.smallSegment }, "the bulk's segment is large")
        let small = sizes.filter { $0 < Replicator.smallSegment }.count
        #expect(small < Replicator.compactAfter + 1, "\(small) small segments after 15 one-record rounds")
        try family.mum.ok("sync")
        #expect(try family.mum.ok("digest") == dad.ok("digest"))
    }

    /// The small segment published just before each bulk upload sits alone
    /// between large ones and can never merge: it does not count towards
    /// compaction, or a few of them would make every later round merge its
    /// one new segment into the one before (a review: a growing file
    /// rewritten, and read again by every device, at each round).
    @Test func smallSegmentsThatCannotMergeDoNotMakeEveryRoundMerge() throws {
        let family = try SharedFamily()
        let dad = family.dad
        var records = BenchWorkload()
        let home = try Home.open(dad.home)
        try home.append(records.subjects)
        for _ in 0..<6 {
            try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
            try dad.ok("sync")
            try home.append(records.next(1_500))
            try dad.ok("sync")
        }
        var compacted: [Int] = []
        for i in 0..<9 {
            try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i % 5 + 1)")
            let round = try JSONSerialization.jsonObject(with: Data(try dad.ok("sync", "--json").utf8)) as? [String: Any]
            compacted.append(round?["compacted"] as? Int ?? -1)
        }
        // The new ones merge once eight of them are there, not at each round
        // (the join's segment and the first record's, contiguous, merge once too).
        #expect(compacted.filter { $0 != 0 }.count <= 2 && compacted.contains { $0 >= Replicator.compactAfter } && !compacted.contains(-1), "\(compacted)")
        try family.mum.ok("sync")
        #expect(try family.mum.ok("digest") == dad.ok("digest"))
    }
}

struct SharedFolderRepairTests {
    @Test func deletedOwnSegmentsAreWrittenAgainAndAMissingFolderFailsFast() throws {
        let root = FamctlRunner()
        let dir = root.root + "/shared"
        let mum = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", dir)
        try mum.ok("subject", "add", "newMom")
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try mum.ok("sync")
        // Someone empties Mum's folder in the shared directory.
        let home = try Home.open(mum.home)
        let folder = dir + "/" + home.family.description + "/" + home.deviceID.hex
        for f in try FileManager.default.contentsOfDirectory(atPath: folder) { try FileManager.default.removeItem(atPath: folder + "/" + f) }
        try mum.ok("sync")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).contains { $0.hasSuffix(".seg") }, "own segments were not written again")
        let late = FamctlRunner()
        try late.ok("accept", try mum.ok("invite"), "--name", "Late", "--dir", dir)
        try mum.ok("sync"); try late.ok("sync")
        #expect(try late.ok("record", "list").contains("mood=2"))

        // The shared directory vanishes (unmounted): a quick, clear temporary failure; nothing lost.
        try FileManager.default.moveItem(atPath: dir, toPath: dir + ".away")
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        let start = Date()
        let r = try mum.run("sync")
        #expect(r.code == 75 && r.stderr.contains("is missing"))
        #expect(Date().timeIntervalSince(start) < 5, "a missing folder must not be retried for long")
        #expect(try mum.ok("status").contains("last error"))
        try FileManager.default.moveItem(atPath: dir + ".away", toPath: dir)
        try mum.ok("sync"); try late.ok("sync")
        #expect(try late.ok("record", "list").contains("mood=4"))
    }
}

