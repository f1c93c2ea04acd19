import Foundation
import Testing

/// Another device's folder that the listing cannot read (no permission, an
/// I/O error; here a link to itself, which root cannot read either) is not
/// taken for an empty one: every round says so, and once it reads, its
/// events come in.
struct UnreadableFolderTests {
    @Test func aFolderThatCannotBeReadIsReportedNotSkipped() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let record = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try mum.ok("sync")
        let (folder, _) = try ICloudPlaceholderTests.segments(of: mum, in: family)
        let fm = FileManager.default
        try fm.moveItem(atPath: folder, toPath: folder + ".away")
        try fm.createSymbolicLink(atPath: folder, withDestinationPath: folder)
        let out = try dad.ok("sync")
        let name = (folder as NSString).lastPathComponent
        #expect(out.contains("not yet arrived: \(name)/: the folder cannot be read"), "\(out)")
        #expect(try dad.run("record", "show", record).code == 66)
        try fm.removeItem(atPath: folder)
        try fm.moveItem(atPath: folder + ".away", toPath: folder)
        let back = try dad.ok("sync")
        #expect(!back.contains("cannot be read") && back.contains("pulled 1 new event(s)"), "\(back)")
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
        for path in [family.dir + "/" + familyFolder, family.dir] {
            try fm.moveItem(atPath: path, toPath: path + ".away")
            try Data("not a folder".utf8).write(to: URL(fileURLWithPath: path))
            let started = Date()
            let r = try mum.run("sync")
            #expect(r.code == 65, "\(path): exit \(r.code): \(r.stderr)")
            #expect(r.stderr.contains("\(path) is not a folder (a file is in its place)") && r.stderr.contains("waiting will not help"), "\(r.stderr)")
            #expect(Date().timeIntervalSince(started) < 10, "retried a file for a folder")
            try fm.removeItem(atPath: path)
            try fm.moveItem(atPath: path + ".away", toPath: path)
            try mum.ok("sync")
        }
    }

    /// A drive unmounted with its empty mount point left: the family's
    /// folder is gone from a shared folder this device has written into.
    /// The round warns that it makes the folder again (on the local disk,
    /// if so), rather than look like any other success.
    @Test func aFamilyFolderGoneFromAFolderWrittenIntoIsWarnedAbout() throws {
        let family = try SharedFamily()
        let mum = family.mum
        let fm = FileManager.default
        try fm.moveItem(atPath: family.dir, toPath: family.dir + ".drive")
        try fm.createDirectory(atPath: family.dir, withIntermediateDirectories: true)
        let r = try mum.run("sync")
        #expect(r.code == 0 && r.stderr.contains("is missing, though this device has written into it before") && r.stderr.contains("mount it"), "\(r.stderr)")
        #expect(!(try mum.run("sync").stderr.contains("warning")), "warned again once the folder was there")
        try fm.removeItem(atPath: family.dir)
        try fm.moveItem(atPath: family.dir + ".drive", toPath: family.dir)
        let back = try mum.run("sync")
        #expect(back.code == 0 && !back.stderr.contains("warning"), "\(back.stderr)")
    }
}
