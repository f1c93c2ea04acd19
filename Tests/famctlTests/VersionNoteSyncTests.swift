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

        // Dad's folder without a note, and none ever seen here (a famctl
        // from before the notes). (A note seen once stands: a folder
        // without one may hold segments another device wrote there.)
        try FileManager.default.removeItem(atPath: notePath)
        try f.mum.ok("sync")
        #expect(!(try f.mum.ok("status")).contains("older"), "a note seen once stands")
        try Home.open(f.mum.home).log.database.run("DELETE FROM r_meta WHERE key LIKE 'version%' AND key LIKE '%' || ?1", [.text(dad.hex)])
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
        #expect(status.contains("runs famctl 0.0.9 of format level \(VersionNote.currentLevel - 1), older than this one (\(VersionNote.currentLevel))") && status.contains(StatusCommand.olderFamctlText), "\(status)")

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
        #expect(try f.mum.ok("status").contains("runs famctl 0.0.9 of format level"))

        // Dad's next round puts his own note back; then nothing is said.
        try f.dad.ok("sync")
        #expect(VersionNote(verifying: Array(try Data(contentsOf: URL(fileURLWithPath: notePath))))?.author == dad)
        try f.mum.ok("sync")
        status = try f.mum.ok("status")
        #expect(!status.contains("older than this one") && !status.contains("runs an older famctl"), "\(status)")
        #expect(try Self.famctlOf(f.mum, dad.hex)?["compared"] as? String == "same")
    }

    /// A family of this famctl only: no device is ever said to run another,
    /// from the first join on (each note goes with its device's first
    /// segments), through a move made by one member and followed by the
    /// others (a review: every new member, and every member not moved yet,
    /// was called older).
    @Test func aFamilyOnOneFamctlIsNeverToldOtherwise() throws {
        let folderOwner = FamctlRunner()
        let dir = folderOwner.root + "/shared", moved = folderOwner.root + "/moved"
        let (mum, dad, gran) = (FamctlRunner(), FamctlRunner(), FamctlRunner())
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", dir)
        let (one, two) = (try mum.ok("invite"), try mum.ok("invite"))
        try dad.ok("accept", one, "--name", "Dad", "--dir", dir)
        try gran.ok("accept", two, "--name", "Gran", "--dir", dir)
        func noneSaid(_ when: String) throws {
            for r in [mum, dad, gran] {
                let status = try r.ok("status")
                #expect(!status.contains("famctl, older") && !status.contains("runs an older famctl") && !status.contains("than this one"), "\(when): \(status)")
            }
        }
        try noneSaid("after the joins")
        for r in [mum, dad, gran] { try r.ok("sync") }
        try noneSaid("after a round")
        let move = try mum.run("settings", "sync", "--dir", moved)
        #expect(move.code == 0 && !move.stderr.contains("older famctl"), "\(move.stderr)")
        try mum.ok("sync")
        try mum.ok("sync")
        try noneSaid("after Mum moved")
        // A member joining at the new location before the others follow:
        // their segments there, carried by Mum, come with their notes.
        let aunt = FamctlRunner()
        try aunt.ok("accept", try mum.ok("invite"), "--name", "Aunt", "--dir", moved)
        try aunt.ok("sync")
        let auntStatus = try aunt.ok("status")
        #expect(!auntStatus.contains("older famctl") && !auntStatus.contains("than this one"), "\(auntStatus)")
        try dad.ok("settings", "sync", "--dir", moved)
        try dad.ok("sync")
        try noneSaid("after Dad followed")
        try gran.ok("settings", "sync", "--dir", moved)
        for r in [gran, mum, dad] { try r.ok("sync") }
        try noneSaid("after all moved")
    }

    /// A folder deleted and written back by another device comes back with
    /// its author's note: a member joining before the author syncs again
    /// is not told it runs an older famctl (a review).
    @Test func aFolderWrittenBackKeepsItsNote() throws {
        // (Gran's folder stays: with every other folder gone, the drive may not be mounted, and nothing is written back.)
        let f = try SharedFamily(["Dad", "Gran"])
        let dad = try Home.open(f.dad.home).deviceID
        let folder = f.dir + "/" + (try Home.open(f.mum.home).family.description) + "/" + dad.hex
        try FileManager.default.removeItem(atPath: folder)
        #expect(try f.mum.ok("sync").contains("wrote back 1 segment(s)"))
        #expect(FileManager.default.fileExists(atPath: folder + "/" + VersionNote.fileName))
        let uncle = FamctlRunner()
        try uncle.ok("accept", try f.mum.ok("invite"), "--name", "Uncle", "--dir", f.dir)
        try uncle.ok("sync")
        let status = try uncle.ok("status")
        #expect(!status.contains("older famctl") && !status.contains("than this one"), "\(status)")
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
        #expect(status.contains("runs famctl 9.0.0 of format level \(VersionNote.currentLevel + 1), newer than this one") && status.contains("upgrade famctl here"), "\(status)")
        // A note of this level with no version text is this famctl's level, not a missing note.
        let bare = VersionNote.make(family: dadHome.family, signer: dadHome.identity.signing, at: Date(), level: VersionNote.currentLevel, version: "")
        try Data(bare.bytes).write(to: URL(fileURLWithPath: notePath))
        try f.mum.ok("sync")
        let after = try f.mum.ok("status")
        #expect(!after.contains("than this one") && !after.contains("runs an older famctl"), "\(after)")
        #expect(try Self.famctlOf(f.mum, dadHome.deviceID.hex)?["compared"] as? String == "same")
    }
}
