import Foundation
import Testing

/// `famctl sync --watch` publishes shortly after a change made by another
/// famctl process, pulls on its interval, and stops cleanly on Ctrl-C.
struct SyncWatchTests {
    @Test(.timeLimit(.minutes(2)))
    func watchPublishesChangesAndStopsOnInterrupt() throws {
        let family = try SharedFamily()
        let (root, mum, dad) = (family.folderOwner, family.mum, family.dad)

        let log = root.root + "/watch.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let watch = Process()
        watch.executableURL = FamctlRunner.binary
        watch.arguments = ["--home", mum.home, "sync", "--watch", "--interval", "0.5"]
        watch.standardOutput = out
        watch.standardError = out
        try watch.run()
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
}
