import Envelope
@testable import famctl
import Foundation
import Testing

/// Each device leaves a signed note of the famctl it runs in its folder of
/// the family's location; `status` names the devices on an older (or
/// newer) famctl, and a move warns of those that may not follow it (an
/// upgrade review: edits from an upgraded device were silently not shown
/// on an older one, and a move split the family unsaid).
struct VersionNoteSyncTests {
    static func famctlOf(_ runner: FamctlRunner, _ device: String) throws -> [String: Any]? {
        let json = try JSONSerialization.jsonObject(with: Data(runner.ok("status", "--json").utf8)) as! [String: Any]
        let authors = json["authors"] as! [[String: Any]]
        return authors.first { $0["author"] as? String == device }?["famctl"] as? [String: Any]
    }

    @Test func devicesOnAnOlderFamctlAreNamed() throws {
        let f = try SharedFamily()
        let dadHome = try Home.open(f.dad.home)
        let (dad, family) = (dadHome.deviceID, dadHome.family)
        let folder = f.dir + "/" + family.description + "/" + dad.hex
        let notePath = folder + "/" + VersionNote.fileName
        // Both on this famctl: notes left, nothing said.
        #expect(FileManager.default.fileExists(atPath: notePath))
        #expect(!(try f.mum.ok("status")).contains("famctl ("), "status")
        let same = try #require(try Self.famctlOf(f.mum, dad.hex))
        #expect(same["compared"] as? String == "same" && same["version"] as? String == CLI.version)

        // Dad's folder without a note (a famctl from before the notes).
        try FileManager.default.removeItem(atPath: notePath)
        try f.mum.ok("sync")
        var status = try f.mum.ok("status")
        #expect(status.contains("\(dad.short) Dad  seq") && status.contains("runs an older famctl (its folder holds no note of which: one from before the notes, or the note has not arrived yet)"), "\(status)")
        #expect(status.contains("  " + StatusCommand.olderFamctlText))
        let none = try #require(try Self.famctlOf(f.mum, dad.hex))
        #expect(none["compared"] as? String == "older" && none["version"] is NSNull)

        // A note of an older level, signed by Dad's key.
        let older = VersionNote.make(family: family, signer: dadHome.identity.signing, at: Date(), level: VersionNote.currentLevel - 1, version: "famctl 0.0.9")
        try Data(older.bytes).write(to: URL(fileURLWithPath: notePath))
        try f.mum.ok("sync")
        status = try f.mum.ok("status")
        #expect(status.contains("runs famctl 0.0.9, older than this one") && status.contains(StatusCommand.olderFamctlText), "\(status)")

        // A move warns that Dad may not follow it.
        let moved = try f.mum.run("settings", "sync", "--dir", f.dir + "-new")
        #expect(moved.code == 0 && moved.stderr.contains("famctl: warning: \(dad.short) Dad runs an older famctl, which may not follow this move")
                && moved.stderr.contains("('famctl settings sync --dir \(f.dir)-new')"), "\(moved.stderr)")
        try f.mum.ok("settings", "sync", "--dir", f.dir)

        // A note not signed by Dad's key (planted by whoever can write the
        // folder) is passed over: what was known stands.
        let planted = VersionNote.make(family: family, signer: try Home.open(f.mum.home).identity.signing, at: Date(), level: VersionNote.currentLevel, version: CLI.version)
        try Data(planted.bytes).write(to: URL(fileURLWithPath: notePath))
        try f.mum.ok("sync")
        #expect(try f.mum.ok("status").contains("runs famctl 0.0.9, older than this one"))

        // Dad's next round puts his own note back; then nothing is said.
        try f.dad.ok("sync")
        #expect(VersionNote(verifying: Array(try Data(contentsOf: URL(fileURLWithPath: notePath))))?.author == dad)
        try f.mum.ok("sync")
        status = try f.mum.ok("status")
        #expect(!status.contains("older than this one") && !status.contains("runs an older famctl"), "\(status)")
        #expect(try Self.famctlOf(f.mum, dad.hex)?["compared"] as? String == "same")
    }

    /// A newer famctl's note says to upgrade this one.
    @Test func aDeviceOnANewerFamctlIsNamed() throws {
        let f = try SharedFamily()
        let dadHome = try Home.open(f.dad.home)
        let notePath = f.dir + "/" + dadHome.family.description + "/" + dadHome.deviceID.hex + "/" + VersionNote.fileName
        let newer = VersionNote.make(family: dadHome.family, signer: dadHome.identity.signing, at: Date(), level: VersionNote.currentLevel + 1, version: "famctl 9.0.0")
        try Data(newer.bytes).write(to: URL(fileURLWithPath: notePath))
        try f.mum.ok("sync")
        let status = try f.mum.ok("status")
        #expect(status.contains("runs famctl 9.0.0, newer than this one") && status.contains("upgrade famctl here"), "\(status)")
    }
}
