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
}
