import EventLog
import Foundation
import Testing

/// Another process holding the log's write lock (a rebuild or an import
/// of a million events holds it for seconds): a command that only reads
/// does not wait for it, and one that writes waits, saying so, instead of
/// failing after five seconds (a review found `record list` and `status`
/// failing with exit 75 during a rebuild).
struct LockWaitTests {
    /// Holds the write lock of the database at `path` for `seconds` (or
    /// until `release` is signalled) on a thread of its own; returns once
    /// it is held.
    static func holdWriteLock(_ path: String, for seconds: Double, release: DispatchSemaphore = DispatchSemaphore(value: 0)) -> DispatchSemaphore {
        let held = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                let db = try Database(path: path, create: false)
                try db.execute("BEGIN IMMEDIATE")
                held.signal()
                _ = release.wait(timeout: .now() + seconds)
                try db.execute("COMMIT")
            } catch {
                held.signal()
            }
            done.signal()
        }
        held.wait()
        return done
    }

    /// Holds the `flock` of `path` in another process (as another famctl
    /// does) for ten seconds at most; returns once it is held.
    static func holdLock(_ path: String) throws -> Process {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = ["--nonblock", "--no-fork", path, "sh", "-c", "echo held; exec sleep 10"]
        let out = Pipe()
        holder.standardOutput = out
        try holder.run()
        let said = String(decoding: out.fileHandleForReading.readData(ofLength: 5), as: UTF8.self)
        try #require(said == "held\n", "the lock of \(path) could not be taken")
        return holder
    }

    /// famctl run with `args` in the background, its output dropped.
    static func started(_ args: [String]) throws -> Process {
        let p = Process()
        p.executableURL = FamctlRunner.binary
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// Sends SIGINT (Ctrl-C) to `p` and waits for it: the seconds it took to stop.
    static func interrupt(_ p: Process) -> TimeInterval {
        FamctlRunner.waitUntilCtrlCIsHandled(p)
        let sent = Date()
        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        return Date().timeIntervalSince(sent)
    }

    /// Ends a ``holdLock(_:)``: the lock is free when this returns.
    /// (SIGKILL: SIGTERM may be ignored by what the tests run under, and stays so.)
    static func release(_ holder: Process) {
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
    }

    @Test func readersDoNotWaitAndWritersWaitSayingSo() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        let id = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let db = f.home + "/famctl.sqlite"

        // Held for as long as the readers take, however busy the machine
        // (a reader that waited would print the note after a second, and
        // fail with 75 after the minute's wait).
        let release = DispatchSemaphore(value: 0)
        var done = Self.holdWriteLock(db, for: 120, release: release)
        for args in [["record", "list"], ["status"], ["record", "show", id], ["subject", "list"]] {
            let r = try f.run(args)
            #expect(r.code == 0 && !r.stderr.contains("waiting"), "\(args): \(r.stderr)")
        }
        release.signal()
        done.wait()

        // Held until the writer says it waits (a minute at most), then let go:
        // the writer goes on and succeeds.
        let letGo = DispatchSemaphore(value: 0)
        done = Self.holdWriteLock(db, for: 60, release: letGo)
        let adding = try LoggedProcess(FamctlRunner.binary, ["--home", f.home, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4"],
                                       log: f.root + "/writer.log")
        let noted = adding.waitFor("famctl: waiting for another famctl process to finish with this home's database", seconds: 60)
        letGo.signal()
        done.wait()
        adding.process.waitUntilExit()
        #expect(noted, "the writer did not say it waits: \(adding.said)")
        #expect(adding.process.terminationStatus == 0, "\(adding.said)")
        #expect(try f.ok("record", "list").split(separator: "\n").count == 2)
        // A watch stopped with Ctrl-C while a round waits for the lock stops at once, not after the wait.
        try f.ok("family", "create", "--name", "F", "--dir", f.root + "/shared")
        let letGoAgain = DispatchSemaphore(value: 0)
        done = Self.holdWriteLock(db, for: 60, release: letGoAgain)
        // A change to publish, so that the round writes.
        let writer = try Self.started(["--home", f.home, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5"])
        let watch = try Self.started(["--home", f.home, "sync", "--watch", "--interval", "0.5"])
        Thread.sleep(forTimeInterval: 2)
        #expect(Self.interrupt(watch) < 3, "the watch sat out the lock's wait")
        letGoAgain.signal()
        done.wait()
        writer.waitUntilExit()
        for bad in ["abc", "-1", "5000"] {
            let r = try f.run(["status"], env: ["FAMCTL_LOCK_WAIT": bad])
            #expect(r.code == 64 && r.stderr.contains("FAMCTL_LOCK_WAIT '\(bad)' is not a whole number of seconds from 0 to 3600"), "\(bad): \(r.stderr)")
        }
    }
    /// The locks famctl's processes take turns with (a rebuild's, a
    /// sync's, an import's) are waited for as the database's is: up to
    /// `FAMCTL_LOCK_WAIT` seconds, a note after the first second, then exit
    /// 75 naming what holds it (they were waited for without end, and
    /// with `FAMCTL_LOCK_WAIT=0` the note came and the command waited).
    @Test func aLockHeldPastTheWaitFailsSayingWhatHoldsIt() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("family", "create", "--name", "F", "--dir", f.root + "/shared")
        try f.ok("subject", "add", "newMom")
        try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let export = f.root + "/export"
        try f.ok("export", "stores", export)
        let cases: [(lock: String, args: [String], says: String)] = [
            ("projection.lock", ["rebuild"], "another famctl process is rebuilding this home's stores (\(f.home)/projection.lock is held; waited 0 s for it); nothing was written"),
            ("sync.lock", ["sync"], "another sync of this home (a 'famctl sync --watch', or one still running) holds \(f.home)/sync.lock (waited 0 s for it); nothing was synced"),
            ("import.lock", ["import", "stores", export], "another import into this home is running (\(f.home)/import.lock is held; waited 0 s for it); nothing was imported"),
        ]
        for c in cases {
            // Should famctl wait without end, it goes on after the ten
            // seconds, and the test fails instead of hanging.
            let holder = try Self.holdLock(f.home + "/" + c.lock)
            let start = Date()
            let r = try f.run(c.args, env: ["FAMCTL_LOCK_WAIT": "0"])
            #expect(r.code == 75 && r.stderr.contains(c.says) && r.stderr.contains("FAMCTL_LOCK_WAIT sets how many seconds"), "\(c.lock): \(r.stderr)")
            #expect(!r.stderr.contains("waiting"), "\(c.lock): a note of a wait that does not happen: \(r.stderr)")
            #expect(Date().timeIntervalSince(start) < 5, "\(c.lock): waited with FAMCTL_LOCK_WAIT=0")
            if c.lock == "projection.lock" {
                // A wait of two seconds: the note after the first, then the failure.
                let waited = Date()
                let w = try f.run(c.args, env: ["FAMCTL_LOCK_WAIT": "2"])
                #expect(w.code == 75 && w.stderr.contains("waiting for it to finish") && w.stderr.contains("waited 2 s for it"), "\(w.stderr)")
                #expect(Date().timeIntervalSince(waited) >= 2, "it did not wait the two seconds")
            }
            Self.release(holder)
            let again = try f.run(c.args, env: ["FAMCTL_LOCK_WAIT": "0"])
            #expect(again.code == 0, "\(c.lock) released: \(again.stderr)")
        }
    }
    /// A write whose events are committed and whose rebuild then finds the
    /// projection lock held waits for it as long as it is held, whatever
    /// `FAMCTL_LOCK_WAIT` says, and succeeds: it must not say "nothing was
    /// written" of what it stored (a review: `member role` and `member
    /// remove` did, and the removal was never published).
    @Test func aRebuildAfterACommitWaitsForTheLockWithoutLimit() throws {
        let family = try SharedFamily()
        let mum = family.mum
        // Dad's change, judged again by the new role: the rebuild follows the commit.
        try family.dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try family.dad.ok("sync"); try mum.ok("sync")
        let holder = try Self.holdLock(mum.home + "/projection.lock")
        DispatchQueue.global().asyncAfter(deadline: .now() + 3) { Self.release(holder) }
        let r = try mum.run(["member", "role", "Dad", "viewer"], env: ["FAMCTL_LOCK_WAIT": "1"])
        #expect(r.code == 0 && r.stderr.contains("waiting for it to finish") && !r.stderr.contains("nothing was written"), "exit \(r.code): \(r.stderr)")
        holder.waitUntilExit()
        #expect(try mum.ok("members").contains("viewer"))
        // And it was published at once: Dad learns it at his next sync.
        try family.dad.ok("sync")
        #expect(try family.dad.ok("members").contains("viewer"))
    }
    /// A watch whose round waits for another sync's lock stops at once on
    /// Ctrl-C, not after the wait (a review: the handler ended SQLite's
    /// waits only).
    @Test func aWatchWaitingForTheSyncLockStopsOnCtrlC() throws {
        let f = try FamctlRunner.mum(shared: true)
        let holder = try Self.holdLock(f.home + "/sync.lock")
        defer { Self.release(holder) }
        let watch = try Self.started(["--home", f.home, "sync", "--watch", "--interval", "0.5"])
        #expect(FamctlRunner.waitUntilCtrlCIsHandled(watch), "the watch never took Ctrl-C over")
        Thread.sleep(forTimeInterval: 1.5)
        let took = Self.interrupt(watch)
        #expect(took < 3, "the watch sat out the lock's wait: \(took) s")
        #expect(watch.terminationStatus == 0)
    }
}
