@testable import famctl
import Foundation
import Testing

/// A `rebuild` run by another process while `replay` reads the stores
/// replaces the projection file and removes the one replay compared: that
/// file is no damage (a review found replay exiting 3, "damaged (it cannot
/// be opened)", whenever a rebuild ran during it). A damaged file is still
/// found.
struct ReplayDuringRebuildTests {
    @Test func aProjectionFileReplacedByAnotherProcessIsNoDamage() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom")
        try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let home = try Home.open(f.home)
        _ = try home.projector.digest()   // the file attached and read, as replay's comparison does
        let compared = f.home + "/" + home.projectionName
        #expect(ReplayCommand.projectionFileDamage(home) == nil)
        try f.ok("rebuild")
        #expect(!FileManager.default.fileExists(atPath: compared), "the rebuild removed the file compared")
        #expect(ReplayCommand.projectionFileDamage(home) == nil)
        // A damaged current file is still found.
        let current = try Home.open(f.home)
        let path = f.home + "/" + current.projectionName
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: Data(repeating: 0x55, count: 100))
        try handle.close()
        #expect(ReplayCommand.projectionFileDamage(current) != nil)
    }
}
