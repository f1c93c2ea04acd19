import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Replicator
import Testing

/// A pull hands the segment files it read to ingest in groups; each file
/// is marked read only once its events are committed, so a pull that
/// stops midway reads again, next time, exactly the files not committed.
struct PullGroupTests {
    struct Stop: Error {}

    @Test func aFileIsMarkedReadOnlyOnceItsEventsAreCommitted() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        // Three rounds of Dad's: three new segment files.
        for round in 0..<3 {
            for i in 0..<4 { try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\((round + i) % 5 + 1)") }
            try dad.ok("sync")
        }
        let home = try Home.open(mum.home)
        var handed: [Int] = []
        var firstAccepted = 0
        #expect(throws: Stop.self) {
            _ = try home.replicator().pull { segments, onIngested in
                handed.append(segments.count)
                try home.ingest(batches: segments) { i, report in
                    try onIngested(i, report)
                    firstAccepted = report.accepted.count
                    throw Stop()   // after the first file's commit
                }
            }
        }
        #expect(handed.count == 1 && handed[0] >= 2, "the files went to ingest together: \(handed)")
        #expect(try home.log.count(in: home.family) < Home.open(dad.home).log.count(in: home.family))
        // The first file's events are in; the pull after reads the others, and only them.
        let again = try Home.open(mum.home)
        let pulled = try again.replicator().pull { try again.ingest(batches: $0, onIngested: $1) }
        #expect(pulled.filesRead == handed[0] - 1, "read \(pulled.filesRead) files")
        #expect(firstAccepted + pulled.accepted == 12, "accepted \(firstAccepted) + \(pulled.accepted)")
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }

    /// More files than a group holds go to ingest in several groups, in order.
    @Test func manyFilesGoInGroups() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let dadHome = try Home.open(dad.home)
        let files = Replicator.ingestGroupFiles + 3
        for i in 0..<files {
            // Each round's segment is larger than a small one, so none is compacted away.
            try dadHome.append((0..<300).map { j in
                RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z",
                            fields: ["kind": .string("mood"), "mood": .int(Int64((i + j) % 5 + 1)), "note": .string(String(repeating: "n", count: 900))]).body
            })
            try dad.ok("sync")
        }
        let home = try Home.open(mum.home)
        var handed: [Int] = []
        let pulled = try home.replicator().pull { segments, onIngested in
            handed.append(segments.count)
            try home.ingest(batches: segments, onIngested: onIngested)
        }
        #expect(handed.reduce(0, +) == pulled.filesRead)
        #expect(handed.allSatisfy { $0 <= Replicator.ingestGroupFiles } && handed.count >= 2, "groups: \(handed)")
        #expect(pulled.accepted == files * 300)
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }
}
