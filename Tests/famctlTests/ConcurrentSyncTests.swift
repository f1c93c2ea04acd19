import Foundation
import Testing

/// Two syncs of one home (a `sync --watch` and a `sync` typed meanwhile)
/// take turns: the second waits, says so, and finds published what the
/// first published.
struct ConcurrentSyncTests {
    /// `famctl sync --json` started in the background, its output in files.
    final class Background {
        let process = Process()
        let out: String, err: String

        init(_ f: FamctlRunner, _ name: String) throws {
            out = f.root + "/\(name).out"
            err = f.root + "/\(name).err"
            guard FileManager.default.createFile(atPath: out, contents: nil), FileManager.default.createFile(atPath: err, contents: nil) else {
                throw POSIXError(.EACCES)
            }
            process.executableURL = FamctlRunner.binary
            process.arguments = ["sync", "--json"]
            var env = ProcessInfo.processInfo.environment
            env["FAMCTL_HOME"] = f.home
            process.environment = env
            process.standardOutput = FileHandle(forWritingAtPath: out)
            process.standardError = FileHandle(forWritingAtPath: err)
            try process.run()
        }

        var stderr: String { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" }

        /// Exit code and the number of events it says it published.
        func finish() throws -> (Int32, Int?) {
            process.waitUntilExit()
            let data = try Data(contentsOf: URL(fileURLWithPath: out))
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            return (process.terminationStatus, json?["published"] as? Int)
        }
    }

    @Test func twoSyncsOfOneHomeTakeTurnsAndPublishOnce() throws {
        let family = try SharedFamily()
        for mood in 1...3 { try family.mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(mood)") }
        // Held here, as a sync in progress holds it.
        let fd = open(family.mum.home + "/sync.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        #expect(flock(fd, LOCK_EX) == 0)
        let a = try Background(family.mum, "a"), b = try Background(family.mum, "b")
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && !(a.stderr.contains("waiting") && b.stderr.contains("waiting")) { usleep(20_000) }
        #expect(a.stderr.contains("famctl: another sync of this home is running; waiting for it to finish"), "\(a.stderr)")
        #expect(b.stderr.contains("famctl: another sync of this home is running; waiting for it to finish"), "\(b.stderr)")
        #expect(a.process.isRunning && b.process.isRunning, "both wait for the lock")
        flock(fd, LOCK_UN)
        close(fd)
        let (codeA, publishedA) = try a.finish(), (codeB, publishedB) = try b.finish()
        #expect(codeA == 0 && codeB == 0, "\(a.stderr) \(b.stderr)")
        // One published the three events; the other found them published.
        #expect([publishedA, publishedB].compactMap { $0 }.sorted() == [0, 3])
        // And Dad gets them once.
        #expect(try family.dad.ok("sync").contains("pulled 3 new event(s)"))
    }
}
