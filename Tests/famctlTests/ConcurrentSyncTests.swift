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

    /// Two `family rotate-key` of the owner's home started at once: each
    /// reads the current epoch, then one's transaction waits for the
    /// other's. The second must not rotate to the epoch the first took
    /// (two keys for one epoch): it is refused (exit 75) and writes nothing,
    /// or, having begun after the first ended, rotates to the next epoch.
    /// So the epoch counts the rotations that succeeded, and a member reads
    /// what is written under the last one.
    @Test func twoRotationsOfOneHomeAtOnceNeverMakeTwoKeysForOneEpoch() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        var rotated = 0, refused = 0
        for round in 0..<4 {
            let (code, out) = try ResourceFaultTests.shell("""
                cd '\(mum.root)'
                { '\(FamctlRunner.binary.path)' family rotate-key > a.out 2>&1; echo $? > a.code; } &
                { '\(FamctlRunner.binary.path)' family rotate-key > b.out 2>&1; echo $? > b.code; } &
                wait; cat a.code b.code a.out b.out
                """, env: ["FAMCTL_HOME": mum.home])
            #expect(code == 0, "\(out)")
            let codes = out.split(separator: "\n").prefix(2).compactMap { Int($0) }
            #expect(codes.count == 2 && codes.allSatisfy { $0 == 0 || $0 == 75 }, "round \(round): \(out)")
            rotated += codes.filter { $0 == 0 }.count
            refused += codes.filter { $0 == 75 }.count
            if codes.contains(75) { #expect(out.contains("rotated by another famctl process meanwhile; nothing was written"), "\(out)") }
        }
        #expect(rotated >= 4, "one of each pair rotates at least")
        let status = try mum.ok("status", "--json")
        let epoch = (try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])?["epoch"] as? Int
        #expect(epoch == rotated, "epoch \(String(describing: epoch)) after \(rotated) rotations (\(refused) refused)")
        let record = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        for _ in 0..<2 { try mum.ok("sync"); try dad.ok("sync") }
        #expect(try dad.ok("record", "show", record).contains("mood=3"))
        #expect(try dad.ok("digest") == mum.ok("digest"))
        #expect(try mum.ok("replay").hasSuffix("result: OK"))
        #expect(try dad.ok("replay").hasSuffix("result: OK"))
    }
}
