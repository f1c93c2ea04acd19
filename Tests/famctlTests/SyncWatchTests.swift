import Foundation
@testable import famctl
import Testing

/// `famctl sync --watch` publishes shortly after a change made by another
/// famctl process, pulls on its interval, and stops cleanly on Ctrl-C.
struct SyncWatchTests {
    /// Starts `sync --watch` on Mum's home, its output (both streams) in a
    /// file under the family's folder owner: the process, the file's handle
    /// and its path.
    static func startWatch(_ family: SharedFamily, interval: String) throws -> (Process, FileHandle, String) {
        let log = family.folderOwner.root + "/watch.log"
        try #require(FileManager.default.createFile(atPath: log, contents: nil))
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let watch = Process()
        watch.executableURL = FamctlRunner.binary
        watch.arguments = ["--home", family.mum.home, "sync", "--watch", "--interval", interval]
        watch.standardOutput = out
        watch.standardError = out
        try watch.run()
        return (watch, out, log)
    }

    /// Whether `runner`'s `record list` shows `text` within `seconds`
    /// (a record a watch pulls), asked every 0.2 s.
    static func lists(_ runner: FamctlRunner, _ text: String, within seconds: TimeInterval) throws -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            Thread.sleep(forTimeInterval: 0.2)
            if try runner.ok("record", "list").contains(text) { return true }
        }
        return false
    }

    /// A watch whose reader went away (`| head -1`) ends, exit 0, even with
    /// nothing more to say: it does not go on syncing for nobody.
    @Test(.againstAHang)
    func aWatchWhoseReaderWentAwayEnds() throws {
        let family = try SharedFamily()
        let started = Date()
        let r = try Subprocess.run("/usr/bin/timeout", ["30", "/bin/bash", "-c", "set -o pipefail; \"$0\" sync --watch --interval 0.5 | head -1",
                                                         FamctlRunner.binary.path], env: ["FAMCTL_HOME": family.mum.home])
        #expect(r.0 == 0 && r.1.hasPrefix("syncing every 0.5 s"), "exit \(r.0): \(r.1)")
        #expect(Date().timeIntervalSince(started) < 20, "the watch went on without its reader")
    }

    @Test(.againstAHang)
    func watchPublishesChangesAndStopsOnInterrupt() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let (watch, out, log) = try Self.startWatch(family, interval: "0.5")
        defer { if watch.isRunning { watch.terminate() } }

        // Mum adds a record from another process; the watcher publishes it.
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5", "note=while watching")
        // Dad's record arrives at Mum through the watcher's pulls.
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1", "note=from dad")
        try dad.ok("sync")
        var arrived = false, published = false
        let end = Date().addingTimeInterval(30)
        while Date() < end && !(arrived && published) {
            Thread.sleep(forTimeInterval: 0.3)
            try dad.ok("sync")
            published = try dad.ok("record", "list").contains("while watching")
            arrived = try mum.ok("record", "list").contains("from dad")
        }
        #expect(published, "the watcher did not publish Mum's change")
        #expect(arrived, "the watcher did not pull Dad's record")

        kill(watch.processIdentifier, SIGINT)
        watch.waitUntilExit()
        try out.close()
        #expect(watch.terminationReason == .exit && watch.terminationStatus == 0, "sync --watch did not stop cleanly on SIGINT")
        #expect((try String(contentsOfFile: log, encoding: .utf8)).hasSuffix("stopped\n"))
        #expect(try mum.ok("replay").hasSuffix("result: OK"))
    }

    /// A watch with nothing to do writes nothing: its rounds leave the log's
    /// files as they are (a review measured about 100 KB written a second and
    /// 174 fsyncs a minute by an idle watch: ten opens of the home a
    /// second, and a commit of the round's time and listing token at every
    /// round). It still reads at every round, and takes in what arrives.
    @Test(.againstAHang)
    func anIdleWatchWritesNothing() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        try mum.ok("sync")
        let (watch, out, log) = try Self.startWatch(family, interval: "0.2")
        defer { if watch.isRunning { watch.terminate() } }
        func io(_ field: String) -> Int {
            let text = (try? String(contentsOfFile: "/proc/\(watch.processIdentifier)/io", encoding: .utf8)) ?? ""
            return text.split(separator: "\n").first { $0.hasPrefix(field + ":") }.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
        }
        // Its first rounds done: one with nothing new since.
        let settled = Date().addingTimeInterval(30)
        while Date() < settled, !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("syncing every") { usleep(50_000) }
        Thread.sleep(forTimeInterval: 1.5)
        let before = (Home.logStamp(mum.home), io("wchar"), io("rchar"))
        // About fifteen rounds of 0.2 s.
        Thread.sleep(forTimeInterval: 3)
        let after = (Home.logStamp(mum.home), io("wchar"), io("rchar"))
        #expect(before.0 != nil && before.0 == after.0, "the idle watch wrote into the log: \(String(describing: before.0)) → \(String(describing: after.0))")
        #expect(after.1 - before.1 < 16_384, "the idle watch wrote \(after.1 - before.1) bytes in 3 s")
        #expect(after.2 > before.2, "the watch read nothing: its rounds did not go on")
        // Still syncing: Dad's record reaches Mum through the watch.
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "note=after the quiet")
        try dad.ok("sync")
        #expect(try Self.lists(mum, "after the quiet", within: 30), "the watch did not pull Dad's record")
        kill(watch.processIdentifier, SIGINT)
        watch.waitUntilExit()
        try out.close()
        #expect(watch.terminationStatus == 0)
    }

    /// A round that only writes back a vanished device's folder gets its
    /// line (a review: a watch said nothing of it).
    @Test(.againstAHang)
    func aWatchSaysItWroteBackAVanishedFolder() throws {
        let family = try SharedFamily(["Dad", "Gran"])
        let gran = family.members[1]
        try gran.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try gran.ok("sync")
        for r in [family.mum, family.dad] { try r.ok("sync") }
        let (watch, out, log) = try Self.startWatch(family, interval: "0.5")
        defer { if watch.isRunning { watch.terminate() } }
        let familyFolder = try #require(try FileManager.default.contentsOfDirectory(atPath: family.dir).first)
        let folder = family.dir + "/" + familyFolder + "/" + (try Home.open(gran.home).deviceID.hex)
        Thread.sleep(forTimeInterval: 1)
        try FileManager.default.removeItem(atPath: folder)
        var said = false
        let end = Date().addingTimeInterval(30)
        while Date() < end && !said {
            Thread.sleep(forTimeInterval: 0.3)
            said = (try String(contentsOfFile: log, encoding: .utf8)).contains("wrote back 1 segment(s) of other devices")
        }
        kill(watch.processIdentifier, SIGINT)
        watch.waitUntilExit()
        try out.close()
        let printed = try String(contentsOfFile: log, encoding: .utf8)
        #expect(said, "\(printed)")
        #expect(FileManager.default.fileExists(atPath: folder))
    }

    /// `sync --watch --json`: stdout holds only JSON, one round's object a
    /// line; the start and the stop are said on stderr.
    @Test(.againstAHang)
    func watchWithJSONPrintsOneObjectALine() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let outPath = family.folderOwner.root + "/watch.json", errPath = family.folderOwner.root + "/watch.err"
        for p in [outPath, errPath] { try #require(FileManager.default.createFile(atPath: p, contents: nil)) }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath)), err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let watch = Process()
        watch.executableURL = FamctlRunner.binary
        watch.arguments = ["--home", mum.home, "sync", "--watch", "--interval", "0.5", "--json"]
        watch.standardOutput = out
        watch.standardError = err
        try watch.run()
        defer { if watch.isRunning { watch.terminate() } }
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        try dad.ok("sync")
        let end = Date().addingTimeInterval(30)
        while Date() < end, !(try mum.ok("record", "list").contains("mood=1")) { Thread.sleep(forTimeInterval: 0.3) }
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        while Date() < end, !(try String(contentsOfFile: outPath, encoding: .utf8).contains("\"published\":1")) { Thread.sleep(forTimeInterval: 0.3) }
        kill(watch.processIdentifier, SIGINT)
        watch.waitUntilExit()
        try out.close(); try err.close()
        let lines = try String(contentsOfFile: outPath, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 2, "\(lines)")
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["accepted"] != nil, "not a round's JSON object: \(line)")
        }
        let said = try String(contentsOfFile: errPath, encoding: .utf8)
        #expect(said.contains("famctl: syncing every 0.5 s; Ctrl-C stops") && said.hasSuffix("famctl: stopped\n"), "\(said)")
    }

    /// A round that fails for a while (the shared folder unmounted) does
    /// not end the watch: it says so, and syncs again once the folder is back.
    @Test(.againstAHang)
    func watchOutlastsAMissingFolder() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let aside = family.folderOwner.root + "/unmounted"
        try FileManager.default.moveItem(atPath: family.dir, toPath: aside)
        let (watch, out, log) = try Self.startWatch(family, interval: "0.2")
        defer { if watch.isRunning { watch.terminate() } }

        var warned = false
        let end = Date().addingTimeInterval(20)
        while Date() < end && !warned {
            Thread.sleep(forTimeInterval: 0.2)
            warned = (try String(contentsOfFile: log, encoding: .utf8)).contains("the watch goes on")
        }
        #expect(warned, "no warning about the missing folder")
        #expect(watch.isRunning, "the watch ended on a temporary failure")

        // The folder is back: Dad's record reaches Mum through the same watch.
        try FileManager.default.moveItem(atPath: aside, toPath: family.dir)
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2", "note=after the outage")
        try dad.ok("sync")
        #expect(try Self.lists(mum, "after the outage", within: end.addingTimeInterval(60).timeIntervalSinceNow),
                "the watch did not sync again once the folder was back")
        kill(watch.processIdentifier, SIGINT)
        watch.waitUntilExit()
        try out.close()
        #expect(watch.terminationReason == .exit && watch.terminationStatus == 0)
        #expect((try String(contentsOfFile: log, encoding: .utf8)).contains("sync works again"))
    }
}
