import Foundation
import Testing

/// Two real Syncthing instances on 127.0.0.1, each keeping one famctl home's
/// shared folder: records added on each side arrive on the other through the
/// engine, and both print the same digest.
struct SyncthingTests {
    static let script = Subprocess.repositoryScript("syncthing-pair.sh")

    /// Polls `condition` every 0.5 s for up to `seconds`.
    static func eventually(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.5)
        }
        return try condition()
    }

    @Test(.againstAHang)
    func recordsCrossTwoRealSyncthingInstances() throws {
        let base = NSTemporaryDirectory() + "famctl-syncthing-" + UUID().uuidString
        let (code, out) = Subprocess.script([Self.script, "start", base])
        defer { _ = Subprocess.script([Self.script, "stop", base]) }
        try #require(code == 0, "could not start Syncthing: \(out)")
        let parts = out.split(separator: "\n").last { $0.hasPrefix("ready ") }?.split(separator: " ") ?? []
        try #require(parts.count == 3)
        let (folderA, folderB) = (String(parts[1]), String(parts[2]))

        let mum = FamctlRunner(), dad = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "The Lins", "--dir", folderA)
        let baby = try mum.ok("subject", "add", "baby", "--name", "Lily")
        try mum.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true", "note=from Mum")
        try mum.ok("sync")
        try dad.ok("accept", try mum.ok("invite"), "--name", "Dad", "--dir", folderB)
        try dad.ok("sync")

        // Mum's segments reach B through Syncthing, Dad's join reaches A.
        #expect(try Self.eventually(60) { try dad.ok("sync"); return try dad.ok("record", "list").contains("from Mum") },
                "Mum's record never arrived at Dad through Syncthing")
        try dad.ok("record", "add", "--focus", baby, "--store", "diaper", "dirty=true", "note=from Dad")
        try dad.ok("sync")
        #expect(try Self.eventually(60) { try mum.ok("sync"); return try mum.ok("record", "list").contains("from Dad") },
                "Dad's record never arrived at Mum through Syncthing")
        #expect(try Self.eventually(60) {
            try mum.ok("sync"); try dad.ok("sync")
            return try mum.ok("digest") == dad.ok("digest")
        }, "digests did not converge")
        #expect(try Self.members(mum) == ["Dad", "Mum"])
        #expect(try dad.ok("replay").hasSuffix("result: OK"))
        // Whatever Syncthing left in the folders, nothing is stuck.
        #expect(!(try mum.ok("status").contains("not yet arrived")))
    }

    static func members(_ r: FamctlRunner) throws -> [String] {
        let o = try JSONSerialization.jsonObject(with: Data(try r.ok("members", "--json").utf8)) as! [String: Any]
        return (o["members"] as! [[String: Any]]).compactMap { $0["name"] as? String }.sorted()
    }
}
