import Foundation
import Testing

/// iCloud Drive leaves `.NAME.icloud` in a file's place until its bytes are
/// downloaded (and puts it back when it evicts them to save space). A
/// placeholder of a segment not read yet is not yet arrived, said at every
/// round; one of a segment read already, or of this device's own, is
/// nothing to report; and a placeholder of this device's own later events
/// keeps a home restored from a backup from writing, as the file would.
struct ICloudPlaceholderTests {
    /// The segment files of `device`'s folder in the family's shared folder.
    static func segments(of device: FamctlRunner, in family: SharedFamily) throws -> (folder: String, names: [String]) {
        let fm = FileManager.default
        let familyFolder = try #require(try fm.contentsOfDirectory(atPath: family.dir).first { !$0.hasPrefix(".") })
        let status = try JSONSerialization.jsonObject(with: Data(try device.ok("status", "--json").utf8)) as? [String: Any]
        let id = try #require(status?["device"] as? String)
        let folder = family.dir + "/" + familyFolder + "/" + id
        return (folder, try fm.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".seg") }.sorted())
    }

    /// Replaces `name` in `folder` by its placeholder, as iCloud Drive does.
    static func evict(_ name: String, in folder: String) throws {
        try FileManager.default.moveItem(atPath: folder + "/" + name, toPath: folder + "/." + name + ".icloud.bytes")
        try Data("bplist00".utf8).write(to: URL(fileURLWithPath: folder + "/." + name + ".icloud"))
    }

    static func download(_ name: String, in folder: String) throws {
        try FileManager.default.removeItem(atPath: folder + "/." + name + ".icloud")
        try FileManager.default.moveItem(atPath: folder + "/." + name + ".icloud.bytes", toPath: folder + "/" + name)
    }

    @Test func aPlaceholderIsNotYetArrivedUntilItsBytesAreThere() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let record = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try mum.ok("sync")
        let (folder, names) = try Self.segments(of: mum, in: family)
        let newest = try #require(names.last)
        try Self.evict(newest, in: folder)
        let waiting = try dad.ok("sync")
        #expect(waiting.contains("not yet arrived: ") && waiting.contains(newest) && waiting.contains("iCloud placeholder"), "\(waiting)")
        #expect(try dad.run("record", "show", record).code == 66)
        #expect(try dad.ok("sync").contains("iCloud placeholder"), "said again at the next round")
        try Self.download(newest, in: folder)
        #expect(try dad.ok("sync").contains("pulled 1 new event(s)"))
        #expect(try dad.ok("record", "show", record).contains("mood=4"))
        // Evicted again once read, and Mum's own: nothing to say, nor to
        // write again beside the placeholder.
        try Self.evict(newest, in: folder)
        #expect(!(try dad.ok("sync")).contains("not yet arrived"))
        let own = try mum.ok("sync")
        #expect(!own.contains("not yet arrived") && !own.contains("wrote again"), "\(own)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/" + newest), "the evicted segment was written again beside its placeholder")
        #expect(try dad.ok("digest") == mum.ok("digest"))
    }

    @Test func aPlaceholderOfItsOwnLaterEventsKeepsARestoredHomeFromWriting() throws {
        let family = try SharedFamily()
        let mum = family.mum
        let backup = mum.root + "/backup"
        try FileManager.default.copyItem(atPath: mum.home, toPath: backup)
        let record = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5")
        try mum.ok("sync")
        let (folder, names) = try Self.segments(of: mum, in: family)
        let newest = try #require(names.last)
        try Self.evict(newest, in: folder)
        try FileManager.default.removeItem(atPath: mum.home)
        try FileManager.default.moveItem(atPath: backup, toPath: mum.home)

        let refused = try mum.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        #expect(refused.code == 75 && refused.stderr.contains("writing now would fork its chain"), "\(refused.stderr)")
        #expect(try mum.ok("sync").contains("iCloud placeholder"))
        let still = try mum.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        #expect(still.code == 75, "a sync that could not read the placeholder let the restored home write: \(still.stderr)")
        try Self.download(newest, in: folder)
        try mum.ok("sync")
        #expect(try mum.ok("record", "show", record).contains("mood=5"))
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        for r in [mum, family.dad, mum, family.dad] { try r.ok("sync") }
        #expect(try family.dad.ok("digest") == mum.ok("digest"))
        #expect(try mum.ok("replay").hasSuffix("result: OK"))
        #expect(try mum.ok("status").contains("forks    none"), "the restored home forked its chain")
    }

    /// `sync --watch` says a placeholder once, not at every round (every
    /// two seconds by default), and says it again once it has changed.
    @Test func aWatchSaysAPlaceholderOnce() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try mum.ok("sync")
        let (folder, names) = try Self.segments(of: mum, in: family)
        let newest = try #require(names.last)
        try Self.evict(newest, in: folder)
        let out = dad.root + "/watch.out"
        #expect(FileManager.default.createFile(atPath: out, contents: nil))
        let watch = Process()
        watch.executableURL = FamctlRunner.binary
        watch.arguments = ["sync", "--watch", "--interval", "0.2"]
        watch.environment = ProcessInfo.processInfo.environment.merging(["FAMCTL_HOME": dad.home]) { $1 }
        watch.standardOutput = FileHandle(forWritingAtPath: out)
        watch.standardError = FileHandle.nullDevice
        try watch.run()
        func said() -> Int { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").components(separatedBy: "iCloud placeholder").count - 1 }
        // Once the first round has said it, more rounds, however slow the
        // machine: three of Dad's records, each published by a round of
        // the watch (a watch writes the time of rounds that bring nothing,
        // which `status` shows, only once a minute).
        let deadline = Date().addingTimeInterval(60)
        while said() == 0 && Date() < deadline { usleep(50_000) }
        var rounds = 0
        for mood in 1...3 {
            try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(mood)")
            while Date() < deadline {
                let status = try JSONSerialization.jsonObject(with: Data(try dad.ok("status", "--json").utf8)) as? [String: Any]
                if status?["unpublished"] as? Int == 0 { rounds += 1; break }
                usleep(100_000)
            }
        }
        #expect(rounds == 3, "the watch's rounds did not go on: \(rounds) of Dad's 3 records published")
        FamctlRunner.waitUntilCtrlCIsHandled(watch)
        watch.interrupt()
        watch.waitUntilExit()
        #expect(said() == 1, "said \(said()) times")
    }
}
