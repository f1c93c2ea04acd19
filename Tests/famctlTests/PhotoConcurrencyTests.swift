@testable import famctl
import Foundation
import Projections
import Testing

/// `photo add` and `photo delete` run at once on one device (two
/// terminals, a script adding a day's photos in parallel): each writes
/// the record's photo list as it stands under the write lock, so none
/// drops another's photo, a deleted one is not listed again, and the
/// record's limit of photos holds. (A review found concurrent adds
/// leaving photos out of the list and getting past the limit: each wrote
/// the list it had read before waiting for the lock.)
struct PhotoConcurrencyTests {
    /// Runs `photo ARGS` for each of `commands` at once, while another
    /// process holds the home's write lock for `seconds` (so that every one
    /// reads the record before any writes): each one's exit code, standard
    /// output (trimmed) and standard error.
    static func atOnce(_ f: FamctlRunner, _ commands: [String], holding seconds: Double) throws -> [(code: Int32, out: String, err: String)] {
        let bin = FamctlRunner.binary.path
        let script = commands.enumerated().map { i, c in
            "('\(bin)' \(c) > '\(f.root)/out\(i)' 2> '\(f.root)/err\(i)'; echo $? > '\(f.root)/rc\(i)') &"
        }.joined(separator: " ") + " wait"
        let done = LockWaitTests.holdWriteLock(f.home + "/famctl.sqlite", for: seconds)
        let (code, out) = try ResourceFaultTests.shell(script, env: ["FAMCTL_HOME": f.home])
        #expect(code == 0, "\(out)")
        done.wait()
        return try commands.indices.map { i in
            let rc = try String(contentsOfFile: f.root + "/rc\(i)", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            return (Int32(rc) ?? -1, try String(contentsOfFile: f.root + "/out\(i)", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
                    try String(contentsOfFile: f.root + "/err\(i)", encoding: .utf8))
        }
    }

    static func photoFile(_ f: FamctlRunner, _ name: String) throws -> String {
        let path = f.root + "/\(name).jpg"
        try Data(PhotoTests.jpeg(1_500, marker: name)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The record's photo list, as `record show --json` gives it.
    static func listed(_ f: FamctlRunner, _ record: String) throws -> [String] {
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(try f.ok("record", "show", record, "--json").utf8)) as? [String: Any])
        return ((shown["fields"] as? [String: Any])?["photos"] as? [String]) ?? []
    }

    @Test func concurrentAddsAndDeletesKeepEveryPhotoAndTheLimit() throws {
        let f = try FamctlRunner.mum()
        let record = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")

        // Three adds at once: all three listed.
        let files = try (0..<3).map { try Self.photoFile(f, "first\($0)") }
        let added = try Self.atOnce(f, files.map { "photo add \(record) '\($0)'" }, holding: 3)
        for a in added { #expect(a.code == 0 && a.err.contains("waiting for another famctl process"), "\(a.err)") }
        let ids = added.map(\.out)
        let listed = try Self.listed(f, record)
        #expect(Set(listed) == Set(ids), "every photo added at once is listed: \(added) \(listed)")

        // A delete and an add at once: the deleted one gone, the added one listed.
        let more = try Self.atOnce(f, ["photo delete \(ids[0])", "photo add \(record) '\(try Self.photoFile(f, "second"))'"], holding: 3)
        #expect(more.allSatisfy { $0.code == 0 }, "\(more)")
        let fourth = more[1].out
        #expect(Set(try Self.listed(f, record)) == Set([ids[1], ids[2], fourth]))

        // Up to 9, then three at once for the last place: one gets it, the
        // others are refused and leave no blob behind.
        for i in 0..<6 { try f.ok("photo", "add", record, try Self.photoFile(f, "fill\(i)")) }
        #expect(try Self.listed(f, record).count == 9)
        let last = try Self.atOnce(f, try (0..<3).map { "photo add \(record) '\(try Self.photoFile(f, "last\($0)"))'" }, holding: 3)
        #expect(last.filter { $0.code == 0 }.count == 1, "\(last)")
        for refused in last where refused.code != 0 {
            #expect(refused.code == 65 && refused.err.contains("postpartum.photos: must list at most 10"), "\(refused)")
        }
        let final = try Self.listed(f, record)
        #expect(final.count == 10)
        let home = try Home.open(f.home)
        let live = try home.projector.photos(record: try #require(UUID(uuidString: record)))
        #expect(Set(live.map(\.id.lowercasedText)) == Set(final), "the live photos are those listed")
        let blobs = try FileManager.default.contentsOfDirectory(atPath: home.photoDirectory).filter { !$0.hasPrefix(".") }
        #expect(blobs.count == 11, "ten listed and the one deleted (its bytes kept until a sync erases them); none of the refused: \(blobs.count)")
    }

    /// Several `photo delete`s of one photo at once: one deletes it, the
    /// others say it is deleted (each wrote a delete of its own, and a list).
    @Test func concurrentDeletesOfOnePhotoDeleteItOnce() throws {
        let f = try FamctlRunner.mum()
        let record = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        let photo = try f.ok("photo", "add", record, try Self.photoFile(f, "once"))
        let events = try Home.open(f.home).log.count()
        let deletes = try Self.atOnce(f, Array(repeating: "photo delete \(photo)", count: 3), holding: 3)
        #expect(deletes.filter { $0.code == 0 }.count == 1, "\(deletes)")
        for other in deletes where other.code != 0 {
            #expect(other.code == 66 && other.err.contains("photo \(photo) is deleted"), "\(other)")
        }
        #expect(try Home.open(f.home).log.count() == events + 2, "one photo.delete and one list")
    }

    /// `record restore` and `photo delete` of one of its photos at once:
    /// whichever writes first, the record comes back without the photo
    /// (the restore's list is made again when the delete came first).
    @Test func aRestoreRacingAPhotoDeleteDoesNotListThePhotoAgain() throws {
        let f = try FamctlRunner.mum()
        // Three rounds: which of the two takes the lock first is up to the processes.
        for round in 0..<3 {
            let record = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(round + 1)")
            let gone = try f.ok("photo", "add", record, try Self.photoFile(f, "gone\(round)"))
            let kept = try f.ok("photo", "add", record, try Self.photoFile(f, "kept\(round)"))
            try f.ok("record", "delete", record)
            let both = try Self.atOnce(f, ["photo delete \(gone)", "record restore \(record)"], holding: 2)
            #expect(both.allSatisfy { $0.code == 0 }, "\(both)")
            #expect(try Self.listed(f, record) == [kept], "round \(round)")
        }
    }
}
