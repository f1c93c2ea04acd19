import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Replicator
import Testing

/// A new device's first sync of a family whose key was rotated early: the
/// key the rotation reveals makes a rebuild due, and the records after it
/// are projected by that rebuild only, not by the ingest as well.
struct FirstSyncTests {
    /// Mum's family with `records` records of hers after its first events,
    /// all published in one segment; Gran has accepted an invite and synced
    /// nothing yet.
    static func familyWithHistory(records: Int) throws -> (mum: FamctlRunner, gran: FamctlRunner, dir: String) {
        let mum = FamctlRunner()
        let dir = mum.root + "/shared"
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", dir)
        try mum.ok("subject", "add", "newMom")
        // A key rotation early in her chain: a new device learns the key from
        // it, so a rebuild is due from there on (it may open what was skipped).
        // (Not published on its own, as `rotate-key` would: one segment
        // then holds it and the records after it.)
        _ = try Home.open(mum.home).appendRotatingKey(after: [])
        try Home.open(mum.home).append((0..<records).map { i in
            RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z",
                        fields: ["kind": .string("mood"), "mood": .int(Int64(i % 5 + 1))]).body
        })
        let gran = FamctlRunner()
        // Accepted where the family's events are not (accept would read them
        // there), then pointed at the family's folder: nothing pulled yet.
        let empty = gran.root + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try gran.ok("accept", try mum.ok("invite"), "--name", "Gran", "--dir", empty)
        try gran.ok("settings", "sync", "--dir", dir)
        try mum.ok("sync")
        return (mum, gran, dir)
    }

    /// The ids and fields of every live record, as `record list --json` prints them.
    static func records(_ runner: FamctlRunner) throws -> [String: String] {
        let listed = try JSONSerialization.jsonObject(with: Data(try runner.ok("record", "list", "--json").utf8)) as? [[String: Any]] ?? []
        var out: [String: String] = [:]
        for r in listed {
            let fields = try JSONSerialization.data(withJSONObject: r["fields"] ?? [:], options: [.sortedKeys])
            out[r["id"] as? String ?? ""] = String(decoding: fields, as: UTF8.self)
        }
        return out
    }

    @Test func theRecordsAfterAHouseholdEventAreProjectedOnceByTheRebuild() throws {
        let (mum, gran, _) = try Self.familyWithHistory(records: 300)
        let home = try Home.open(gran.home)
        let pulled = try home.replicator().pull { try home.ingest(batches: $0, onIngested: $1) }
        #expect(pulled.accepted >= 303)
        // Mum's 300 records came after the key rotation: each was left to the
        // rebuild it made due.
        #expect(home.leftToRebuild == 300, "left \(home.leftToRebuild) changes to the rebuild")
        #expect(!home.needsRebuild)
        let mine = try Self.records(mum)
        #expect(mine.count == 300)
        #expect(try Self.records(gran) == mine)
        for runner in [mum, gran, mum, gran] { try runner.ok("sync") }
        #expect(try gran.ok("digest") == mum.ok("digest"))
    }

    /// Should the process die after the batch's commit and before the
    /// rebuild, the records left out are not lost: the commit marked the
    /// projection stale, and the next command rebuilds it.
    @Test func recordsLeftToARebuildThatNeverRanAreProjectedOnTheNextOpen() throws {
        let (mum, gran, dir) = try Self.familyWithHistory(records: 50)
        let home = try Home.open(gran.home)
        let folder = dir + "/" + home.family.description + "/" + (try Home.open(mum.home)).deviceID.hex
        let names = try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.sorted()
        #expect(names.count == 1)
        // The ingest without its settling (the process "dies" before the rebuild).
        try home.onCurrentProjection {
            for name in names {
                let events = try Segment(decoding: try FileIO.readFile(folder + "/" + name)).events
                _ = try home.log.ingest(events, family: home.family) { env in try home.apply(env, deferringToRebuild: true) }
            }
        }
        #expect(home.leftToRebuild == 50)
        #expect(home.needsRebuild)
        #expect(try Self.records(gran) == Self.records(mum))
        #expect(try Self.records(gran).count == 50)
    }

    /// A rebuild still due from an attempt that rolled back (the flag left
    /// set in a long-lived process) is marked in the next transaction too, so
    /// the records that transaction leaves to it are not lost should the
    /// process die before it.
    @Test func aRebuildLeftDueByAnEarlierAttemptIsMarkedInTheNextTransaction() throws {
        let (mum, gran, dir) = try Self.familyWithHistory(records: 20)
        let home = try Home.open(gran.home)
        let folder = dir + "/" + home.family.description + "/" + (try Home.open(mum.home)).deviceID.hex
        let names = try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.sorted()
        // Mum's first events (the family's, her subject, the key rotation and
        // the previous key it carries) applied and settled...
        let events = try names.flatMap { try Segment(decoding: try FileIO.readFile(folder + "/" + $0)).events }
        _ = try home.ingest(Array(events.prefix(4)))
        #expect(!home.needsRebuild)
        #expect(try home.state.get(.projectionVersion) == String(Projector.schemaVersion))
        // ...then a rebuild left due, and the rest ingested with no household event among them, no settling.
        home.needsRebuild = true
        try home.onCurrentProjection {
            _ = try home.log.ingest(Array(events.dropFirst(4)), family: home.family) { env in try home.apply(env, deferringToRebuild: true) }
        }
        #expect(home.leftToRebuild >= 20)
        #expect(try Self.records(gran) == Self.records(mum))
    }
}
