import Envelope
@testable import famctl
import Foundation
import Projections
import Synchronization
import Testing

/// A change another process (or a sync) writes to a record between the
/// moment a command reads it and the moment that command holds the write
/// lock: the command checks the record again under the lock, and reads it
/// again, rather than write a change checked against the record as it was
/// (a review: a `record update` racing a `record delete` brought the
/// deleted record back, both acknowledged; two updates each valid alone
/// left a diaper neither wet nor dirty; two deletes both wrote one).
struct ChangedBeforeTheLockTests {
    /// Runs `famctl args` on `home` while this process writes `body` to the
    /// same home: the body's transaction holds the write lock until the
    /// command has read and says it waits for the lock, then commits.
    static func racing(_ f: FamctlRunner, _ args: [String], with body: EventBody) throws -> (code: Int32, stdout: String, stderr: String) {
        let home = try Home.open(f.home)
        let command = Process()
        command.executableURL = FamctlRunner.binary
        command.arguments = ["--home", f.home] + args
        let (out, err) = (Pipe(), Pipe())
        command.standardOutput = out
        command.standardError = err
        let stderr = Mutex(Data())
        err.fileHandleForReading.readabilityHandler = { h in
            let d = h.availableData
            stderr.withLock { $0.append(d) }
        }
        try home.append([body]) {
            try command.run()
            let deadline = Date().addingTimeInterval(60)
            while !String(decoding: stderr.withLock { $0 }, as: UTF8.self).contains("waiting for another famctl process"), Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        command.waitUntilExit()
        err.fileHandleForReading.readabilityHandler = nil
        let rest = err.fileHandleForReading.readDataToEndOfFile()
        let text = String(decoding: stderr.withLock { $0 } + rest, as: UTF8.self)
        #expect(text.contains("waiting for another famctl process"), "the command did not wait for the lock: \(text)")
        return (command.terminationStatus, String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self), text)
    }

    static func homeWithDiaper() throws -> (FamctlRunner, String, String) {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let baby = try f.ok("subject", "add", "baby", "--name", "Lily")
        let id = try f.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true", "dirty=true")
        return (f, baby, id)
    }

    static func body(_ kind: RecordEvent.Kind, _ id: String, focus: String, fields: [String: JSONValue] = [:]) -> EventBody {
        RecordEvent(kind: kind, record: UUID(uuidString: id)!, store: "diaper", focus: focus, at: nil, fields: fields).body
    }

    @Test func anUpdateOfARecordDeletedMeanwhileIsRefused() throws {
        let (f, baby, id) = try Self.homeWithDiaper()
        let r = try Self.racing(f, ["record", "update", id, "note=changed"], with: Self.body(.delete, id, focus: baby))
        #expect(r.code == 65 && r.stderr.contains("record \(id) is deleted"), "exit \(r.code): \(r.stderr)")
        #expect(try f.ok("record", "show", id, "--json").contains("\"deleted\" : true"), "the deleted record came back")
    }

    @Test func twoUpdatesEachValidAloneCannotLeaveTheRecordBreakingARule() throws {
        let (f, baby, id) = try Self.homeWithDiaper()
        let r = try Self.racing(f, ["record", "update", id, "wet=false"], with: Self.body(.put, id, focus: baby, fields: ["dirty": .bool(false)]))
        #expect(r.code == 65 && r.stderr.contains("at least one of wet and dirty must be true"), "exit \(r.code): \(r.stderr)")
        let shown = try f.run("record", "show", id)
        #expect(shown.stdout.contains("wet=true") && !shown.stderr.contains("breaks its store's rules"), "\(shown.stdout) \(shown.stderr)")
    }

    /// A record added to a subject while `subject remove --with-records`
    /// waits for the lock is read with the others and deleted with them
    /// (the removal gave up with exit 75 instead).
    @Test func aRecordAddedToASubjectBeingRemovedIsDeletedWithIt() throws {
        let (f, baby, id) = try Self.homeWithDiaper()
        let added = UUID().uuidString.lowercased()
        let r = try Self.racing(f, ["subject", "remove", baby, "--with-records", "--json"], with: Self.body(.put, added, focus: baby, fields: ["wet": .bool(true)]))
        #expect(r.code == 0, "exit \(r.code): \(r.stderr)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout)")
        #expect(Set(out["deletedRecords"] as? [String] ?? []) == [id, added], "\(r.stdout)")
        #expect(try f.ok("record", "list", "--include-deleted", "--json").components(separatedBy: "\"deleted\" : true").count == 3, "both records are deleted")
        #expect(try !f.ok("subject", "list").contains(baby))
    }

    @Test func aRecordDeletedMeanwhileIsNotDeletedTwice() throws {
        let (f, baby, id) = try Self.homeWithDiaper()
        let r = try Self.racing(f, ["record", "delete", id], with: Self.body(.delete, id, focus: baby))
        #expect(r.code == 65 && r.stderr.contains("is already deleted"), "exit \(r.code): \(r.stderr)")
        #expect(try f.ok("record", "show", id, "--history").components(separatedBy: "  delete  event").count == 2, "one delete in the history")
    }

    /// An import reads the home's records, works out its changes, then
    /// stores them in batches: a record changed in between (another
    /// process's edit, a sync) stops it, nothing written, rather than
    /// undone by a row of an export older than that change; run again, the
    /// row is kept out as older.
    @Test func anImportDoesNotUndoAChangeMadeWhileItRan() throws {
        let (f, baby, id) = try Self.homeWithDiaper()
        let dir = f.root + "/export"
        try f.ok("export", "stores", dir)
        var rows = try ExportProblemsTests.rows(dir, "diaper")
        var fields = rows[0]["fields"] as! [String: Any]
        fields["note"] = "from the file"
        rows[0]["fields"] = fields
        try ExportProblemsTests.write(rows, dir, "diaper")
        let r = try Self.racing(f, ["import", "stores", dir], with: Self.body(.put, id, focus: baby, fields: ["note": .string("meanwhile")]))
        #expect(r.code == 75 && r.stderr.contains("while importing diaper.json: record \(id) changed while this import was running"), "exit \(r.code): \(r.stderr)")
        #expect(try f.ok("record", "show", id).contains("note=meanwhile"))
        let again = try f.run("import", "stores", dir)
        #expect(again.code == 0 && again.stdout.contains("diaper.json: 0 added, 0 updated, 0 unchanged, 1 older than this home's (kept out)"), "\(again.stdout) \(again.stderr)")
        #expect(try f.ok("record", "show", id).contains("note=meanwhile"))
    }
}
