import Foundation
import Testing

/// Another device's folder that the listing cannot read (no permission, an
/// I/O error; here a link to itself, which root cannot read either) is not
/// taken for an empty one: every round says so, and once it reads, its
/// events come in.
struct UnreadableFolderTests {
    @Test func aFolderThatCannotBeReadIsReportedNotSkipped() throws {
        // (A link to itself, which root cannot read either.)
        try Self.mumsFolderReplaced(said: "the folder cannot be read") { try FileManager.default.createSymbolicLink(atPath: $0, withDestinationPath: $0) }
    }

    /// A file in place of another device's folder: said as not yet arrived,
    /// for what it is (a review: it was taken for a folder gone, and the
    /// shared folder for a drive not mounted).
    @Test func aFileInPlaceOfAnotherDevicesFolderIsSaid() throws {
        try Self.mumsFolderReplaced(said: "the folder cannot be read: a file is in its place, not a folder") {
            try Data("junk".utf8).write(to: URL(fileURLWithPath: $0))
        }
    }

    /// Mum's folder moved away and `replace` put in its place: Dad's sync
    /// says `said` of it as not yet arrived (not that the drive is not
    /// mounted), and her record waits; once her folder is back, it comes in.
    static func mumsFolderReplaced(said: String, _ replace: (String) throws -> Void) throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let record = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try mum.ok("sync")
        let (folder, _) = try ICloudPlaceholderTests.segments(of: mum, in: family)
        let fm = FileManager.default
        try fm.moveItem(atPath: folder, toPath: folder + ".away")
        try replace(folder)
        let out = try dad.run("sync")
        let name = (folder as NSString).lastPathComponent
        #expect(out.code == 0 && out.stdout.contains("not yet arrived: \(name)/: \(said)") && !out.stderr.contains("mount it"), "\(out.stdout) \(out.stderr)")
        #expect(try dad.run("record", "show", record).code == 66)
        // `status` says it too, on Mum's line and below, until it reads.
        let status = try dad.ok("status")
        #expect(status.contains("  not yet arrived: \(name)/: \(said)") && status.contains("1 file(s) not yet arrived"), "\(status)")
        try fm.removeItem(atPath: folder)
        try fm.moveItem(atPath: folder + ".away", toPath: folder)
        let back = try dad.ok("sync")
        #expect(!back.contains("cannot be read") && back.contains("pulled 1 new event(s)"), "\(back)")
        #expect(try dad.ok("record", "show", record).contains("mood=2"))
        #expect(!(try dad.ok("status")).contains("cannot be read"))
    }

    /// A segment's name holding a symbolic link that leads nowhere (a loop,
    /// a target gone): every round names it, with what to do, rather than
    /// pass over it as if it were not there; once the file is back, its
    /// events come in.
    @Test func aSegmentThatIsABrokenLinkIsReported() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let record = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try mum.ok("sync")
        let (folder, names) = try ICloudPlaceholderTests.segments(of: mum, in: family)
        let name = try #require(names.last)
        let path = folder + "/" + name
        let fm = FileManager.default
        try fm.moveItem(atPath: path, toPath: family.dir + "/away")
        for target in [path, folder + "/nothing-here"] {
            try fm.createSymbolicLink(atPath: path, withDestinationPath: target)
            let out = try dad.ok("sync")
            #expect(out.contains("not yet arrived: ") && out.contains(name) && out.contains("is a symbolic link whose target cannot be read"), "\(out)")
            #expect(try dad.run("record", "show", record).code == 66)
            try fm.removeItem(atPath: path)
        }
        try fm.moveItem(atPath: family.dir + "/away", toPath: path)
        let back = try dad.ok("sync")
        #expect(!back.contains("symbolic link") && back.contains("pulled"), "\(back)")
        #expect(try dad.ok("record", "show", record).contains("mood=2"))
    }

    /// A file where the shared folder, or the family's folder in it, should
    /// be: said at once (exit 65), not retried for half a minute and called
    /// temporary; once the folder is back, the sync works.
    @Test func aFileInAFoldersPlaceIsNotATemporaryFailure() throws {
        let family = try SharedFamily()
        let mum = family.mum
        let fm = FileManager.default
        let familyFolder = try #require(try fm.contentsOfDirectory(atPath: family.dir).first { !$0.hasPrefix(".") })
        // The shared folder also with an event waiting to go out: it was
        // said missing then, and retried (a review).
        for (path, waiting) in [(family.dir + "/" + familyFolder, false), (family.dir, false), (family.dir, true)] {
            if waiting { try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4") }
            try fm.moveItem(atPath: path, toPath: path + ".away")
            try Data("not a folder".utf8).write(to: URL(fileURLWithPath: path))
            let started = Date()
            let r = try mum.run("sync")
            #expect(r.code == 65, "\(path): exit \(r.code): \(r.stderr)")
            #expect(r.stderr.contains("\(path) is not a folder (a file is in its place)") && r.stderr.contains("waiting will not help")
                    && !r.stderr.contains("missing"), "\(r.stderr)")
            #expect(Date().timeIntervalSince(started) < 10, "retried a file for a folder")
            try fm.removeItem(atPath: path)
            try fm.moveItem(atPath: path + ".away", toPath: path)
            try mum.ok("sync")
        }
    }

    /// A drive unmounted with its empty mount point left: the shared folder
    /// shows none of the other devices' folders read before. Every round
    /// warns, rather than look like any other success once its own folder
    /// is written again there; once the drive is back, no more. (Here Mum
    /// and Dad share one mount point: Mum's first round writes her folder
    /// again into it, so only her rounds are asked.)
    @Test func aSharedFolderWithoutTheOthersFoldersIsWarnedAbout() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let fm = FileManager.default
        try fm.moveItem(atPath: family.dir, toPath: family.dir + ".drive")
        try fm.createDirectory(atPath: family.dir, withIntermediateDirectories: true)
        for r in [mum, mum] {
            let out = try r.run("sync")
            #expect(out.code == 0 && out.stderr.contains("shows none of the 1 other device folder(s) this device read before") && out.stderr.contains("mount it"), "\(out.stderr)")
        }
        try fm.removeItem(atPath: family.dir)
        try fm.moveItem(atPath: family.dir + ".drive", toPath: family.dir)
        for r in [mum, dad] {
            let back = try r.run("sync")
            #expect(back.code == 0 && !back.stderr.contains("warning"), "\(back.stderr)")
        }
    }

    /// A device that joined with `--dir` naming another folder: its sync
    /// finds not even the owner's folder there, and says so, with the way
    /// out; pointed at the right one, it joins the family, and says nothing.
    @Test func aJoinPointedAtTheWrongFolderIsSaid() throws {
        let mum = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        let shared = mum.root + "/shared"
        try mum.ok("family", "create", "--name", "F", "--dir", shared)
        let code = try mum.ok("invite")
        let dad = FamctlRunner()
        let wrong = dad.root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: wrong, withIntermediateDirectories: true)
        try dad.ok("accept", code, "--name", "Dad", "--dir", wrong)
        let lost = try dad.run("sync")
        #expect(lost.code == 0 && lost.stderr.contains("the shared folder \(wrong) holds no folder of the family's owner")
                && lost.stderr.contains("famctl settings sync --dir PATH"), "\(lost.stderr)")
        try dad.ok("settings", "sync", "--dir", shared)
        let found = try dad.run("sync")
        #expect(found.code == 0 && !found.stderr.contains("holds no folder"), "\(found.stderr)")
        #expect(try dad.ok("status").contains("this device: member"))
    }

    /// A family moved to a new shared folder (`settings sync --dir`): the
    /// round that carries the others' events there does not warn that their
    /// folders are gone, nor do the rounds after.
    @Test func aMoveToANewFolderIsNotTakenForAnUnmountedDrive() throws {
        let family = try SharedFamily()
        let mum = family.mum
        let moved = family.folderOwner.root + "/moved"
        try mum.ok("settings", "sync", "--dir", moved)
        for _ in 0..<2 {
            let r = try mum.run("sync")
            #expect(r.code == 0 && !r.stderr.contains("shows none"), "\(r.stderr)")
        }
    }

    /// A family's folder this device's user may not read (no permission):
    /// said at once with exit 73 and what to check, not retried for half a
    /// minute and called temporary. (When the tests run as root, whom no
    /// permission stops, Dad runs as `nobody`.)
    @Test func aFolderThisUserMayNotReadIsNotATemporaryFailure() throws {
        let base = NSTemporaryDirectory() + "famctl-perm-" + UUID().uuidString
        let fm = FileManager.default
        try fm.createDirectory(atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o1777])
        defer { try? fm.removeItem(atPath: base) }
        // A copy of the binary where the other user may run it (the build's
        // folder may be closed to it).
        let famctl = base + "/famctl"
        try PermissionTests.copyForExec(FamctlRunner.binary.path, to: famctl)
        func run(_ args: [String], asOther: Bool = false) throws -> (Int32, String) {
            guard asOther, getuid() == 0 else { return try Subprocess.run(famctl, args) }
            return try Subprocess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", famctl] + args)
        }
        let (shared, mum, dad) = (base + "/shared", base + "/mum", base + "/dad")
        #expect(try run(["init", "--name", "Mum", "--home", mum]).0 == 0)
        #expect(try run(["family", "create", "--name", "F", "--dir", shared, "--home", mum]).0 == 0)
        #expect(try run(["sync", "--home", mum]).0 == 0)
        let (code, invite) = try run(["invite", "--home", mum])
        try #require(code == 0)
        try fm.setAttributes([.posixPermissions: 0o777], ofItemAtPath: shared)
        let joined = try run(["accept", invite.trimmingCharacters(in: .whitespacesAndNewlines), "--name", "Dad", "--dir", shared, "--home", dad], asOther: true)
        try #require(joined.0 == 0, "\(joined.1)")
        let familyFolder = shared + "/" + (try #require(try fm.contentsOfDirectory(atPath: shared).first))
        // Nobody may read it (root only as another user: see above).
        try fm.setAttributes([.posixPermissions: 0o000], ofItemAtPath: familyFolder)
        defer { try? fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: familyFolder) }
        let started = Date()
        let r = try run(["sync", "--home", dad], asOther: true)
        #expect(r.0 == 73 && r.1.contains("Permission denied") && r.1.contains("Check that this user may read the folder") && !r.1.contains("can write there"), "exit \(r.0): \(r.1)")
        #expect(Date().timeIntervalSince(started) < 10, "retried as a temporary failure")
    }
}

/// A device's folder, or the family's folder, that is a symbolic link (a
/// sync engine such as Syncthing brings links from other machines as links)
/// is never written through: the sync says what it is and what to do, the
/// link's target gets nothing, and once a real folder is back the events go
/// out.
struct LinkedFolderTests {
    @Test func aFolderThatIsALinkIsNotWrittenThrough() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        try dad.ok("sync")
        let (folder, _) = try ICloudPlaceholderTests.segments(of: dad, in: family)
        let familyFolder = (folder as NSString).deletingLastPathComponent
        let fm = FileManager.default
        let elsewhere = family.dir + "-elsewhere"
        try fm.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: elsewhere) }
        for (n, linked) in [folder, familyFolder].enumerated() {
            try fm.moveItem(atPath: linked, toPath: linked + ".away")
            try fm.createSymbolicLink(atPath: linked, withDestinationPath: elsewhere)
            let record = try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(n + 3)")
            let round = try dad.run("sync")
            #expect(round.code == 65, "a sync through a linked folder: exit \(round.code): \(round.stdout)")
            #expect(round.stderr.contains("\(linked) is a symbolic link, not a folder") && round.stderr.contains("Move the file or link away"), "\(round.stderr)")
            let written = try fm.contentsOfDirectory(atPath: elsewhere)
            #expect(written.isEmpty, "the sync wrote through the link: \(written)")
            try fm.removeItem(atPath: linked)
            try fm.moveItem(atPath: linked + ".away", toPath: linked)
            try dad.ok("sync")
            try mum.ok("sync")
            #expect(try mum.ok("record", "show", record).contains("mood=\(n + 3)"))
        }
    }
}
