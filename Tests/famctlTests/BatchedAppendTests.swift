import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Testing

/// `Home.append(batches:)`, as `import stores` writes records: each batch
/// committed in turn, the family's key checked at each.
struct BatchedAppendTests {
    static func moods(_ n: Int) -> [EventBody] {
        (0..<n).map { i in
            RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z",
                        fields: ["kind": .string("mood"), "mood": .int(Int64(i % 5 + 1))]).body
        }
    }

    /// A key rotated by another process between two batches ends the
    /// append: the batches before stay, with the number stored in the
    /// error, and nothing more is stored under the old key.
    @Test func aKeyRotatedBetweenBatchesEndsTheAppendWithWhatWasStored() throws {
        let family = try SharedFamily([])
        let home = try Home.open(family.mum.home)
        let before = try home.projector.records().count
        var progress: [Int] = []
        var rotatedTo: UInt32?
        do {
            try home.append(batches: Self.moods(3_000), size: 1_000) { done in
                progress.append(done)
                if done == 1_000 {
                    // Another process of the same device rotates the key.
                    let other = try! Home.open(family.mum.home)
                    rotatedTo = try! other.appendRotatingKey(after: []).epoch
                }
            }
            Issue.record("the append went on under the old key")
        } catch let e as CLIError {
            #expect(e.code == .tempFail)
            #expect(e.message.contains("the family's key was rotated"))
            #expect(e.message.contains("the first 1000 of 3000 events were stored before this failure"), "\(e.message)")
        }
        #expect(progress == [1_000])
        #expect(rotatedTo != nil)
        // Only the first batch's records are in the log, and nothing was
        // appended after the rotation's own events.
        let reopened = try Home.open(family.mum.home)
        #expect(try reopened.projector.records().count == before + 1_000)
        let head = try reopened.log.head(of: reopened.deviceID, in: reopened.family)
        let last = try #require(try reopened.log.chain(of: reopened.deviceID, in: reopened.family, seqs: head.seq...head.seq).first)
        guard case .body(let body) = try reopened.openBody(last) else { Issue.record("the last event cannot be opened"); return }
        #expect(body.type == "key.previous", "the chain ends with the rotation")
        #expect(last.epoch == rotatedTo)
        #expect(try family.mum.ok("replay").contains("OK"))
    }

    /// `import stores` killed (SIGKILL) once its first batches are
    /// committed keeps them, and run again adds only what is missing: every
    /// record once, none twice.
    @Test(.againstAHang)
    func anImportKilledMidwayIsCompletedByRunningItAgain() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let dir = f.root + "/in"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // Sixteen batches: the kill after the first leaves fifteen to go.
        let n = 16_000
        var rows: [[String: Any]] = []
        rows.reserveCapacity(n)
        for i in 0..<n {
            let fields: [String: Any] = ["kind": "mood", "mood": i % 5 + 1]
            rows.append(["id": UUID().uuidString.lowercased(), "focus": "newMom", "at": "2026-11-29T08:00:00+01:00", "fields": fields])
        }
        try JSONSerialization.data(withJSONObject: rows).write(to: URL(fileURLWithPath: dir + "/postpartum.json"))
        let before = try Self.events(in: f.home)

        let p = Process()
        p.executableURL = FamctlRunner.binary
        p.arguments = ["import", "stores", dir]
        p.environment = ProcessInfo.processInfo.environment.merging(["FAMCTL_HOME": f.home]) { $1 }
        let errors = f.root + "/import.err"
        #expect(FileManager.default.createFile(atPath: errors, contents: nil))
        p.standardOutput = FileHandle.nullDevice
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try p.run()
        // Never left running into the next test, whatever fails here.
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        // Killed once the first batch is in the log.
        let deadline = Date().addingTimeInterval(60)
        while try Self.events(in: f.home) < before + 1_000, p.isRunning, Date() < deadline { usleep(2_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        let stored = try Self.events(in: f.home) - before
        #expect(p.terminationReason == .uncaughtSignal,
                "the import ended on its own (exit \(p.terminationStatus)) before it could be killed: \((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        #expect(stored >= 1_000 && stored < n && stored % 1_000 == 0, "whole batches are stored: \(stored)")

        let again = try f.ok("import", "stores", dir)
        #expect(again.contains("postpartum.json: \(n - stored) added, 0 updated, \(stored) unchanged"), "\(again)")
        #expect(try Self.events(in: f.home) == before + n, "every record once")
        #expect(try f.ok("replay").contains("OK"))
    }

    /// The events in a home's log, read without taking the write lock.
    static func events(in home: String) throws -> Int {
        let db = try Database(path: home + "/famctl.sqlite", create: false, readOnly: true)
        return Int(try db.statement("SELECT count(*) FROM events").first { $0.int(0) } ?? 0)
    }
}
