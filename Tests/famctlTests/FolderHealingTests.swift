import Envelope
import EventLog
@testable import famctl
import Foundation
import Replicator
import Testing

/// A member's segments deleted from the shared folder (by someone, or lost
/// with a disk) are written back by another member that holds their events,
/// once they have been missing for an hour: a device that joins later gets
/// them although their author no longer syncs.
struct FolderHealingTests {
    @Test func aSilentMembersDeletedSegmentsAreWrittenBackByAnotherMember() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let ids = try (1...3).map { i in
            try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i)")
        }
        let granCode = try mum.ok("invite")
        try mum.ok("sync")
        try dad.ok("sync")
        #expect(ids.allSatisfy(try dad.ok("record", "list").contains))

        // Mum's folder loses every segment, and Mum never syncs again.
        let mumHome = try Home.open(mum.home)
        let folder = family.dir + "/" + mumHome.family.description + "/" + mumHome.deviceID.hex
        for name in try FileIO.list(folder) where name.hasSuffix(".seg") { try FileManager.default.removeItem(atPath: folder + "/" + name) }
        #expect(try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.isEmpty)

        // Dad notices, but waits: the gap may be Mum's own compaction settling.
        for _ in 0..<2 {
            let early = try dad.ok("sync")
            #expect(!early.contains("wrote back"), "\(early)")
            #expect(try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.isEmpty)
        }

        // An hour later (the time Dad noted is moved back), he writes them back.
        let dadHome = try Home.open(dad.home)
        let key = "heal." + mumHome.deviceID.hex
        let noted = try #require(try dadHome.log.database.statement("SELECT value FROM r_meta WHERE key = ?1").first([.text(key)]) { $0.text(0) })
        try dadHome.log.database.run("UPDATE r_meta SET value = ?1 WHERE key = ?2", [.text(String(Double(noted)! - 3_601)), .text(key)])
        let second = try dad.ok("sync")
        #expect(second.contains("wrote back (missing from the folder): " + mumHome.deviceID.hex + "/"), "\(second)")
        #expect(!(try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.isEmpty))
        // The folder is whole again: nothing more to write at the next round.
        #expect(!(try dad.ok("sync").contains("wrote back")))

        // Gran joins with the code Mum made before going silent, and gets everything.
        let gran = FamctlRunner()
        try gran.ok("accept", granCode, "--name", "Gran", "--dir", family.dir)
        try gran.ok("sync")
        #expect(ids.allSatisfy(try gran.ok("record", "list").contains))
        try dad.ok("sync")
        #expect(try gran.ok("digest") == dad.ok("digest"))

        // Mum comes back: her folder holds her events again, so she writes
        // none of them twice (only what she writes now, if anything).
        let healed = try FileIO.list(folder).compactMap(SegmentName.init(parsing:))
        let healedUpTo = try #require(healed.map(\.lastSeq).max())
        try mum.ok("sync")
        let after = try FileIO.list(folder).compactMap(SegmentName.init(parsing:))
        #expect(after.filter { !healed.contains($0) }.allSatisfy { $0.firstSeq > healedUpTo }, "\(after)")
        try dad.ok("sync")
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }

    /// Only members' chains are written back (the members, this device
    /// aside), and a removed member's only up to its removal.
    @Test func onlyMembersAreWrittenBackAndARemovedOneUpToItsCutoff() throws {
        let family = try SharedFamily(["Dad", "Gran"])
        let (mum, dad, gran) = (family.mum, family.dad, family.members[1])
        let dadHome = try Home.open(dad.home)
        let granID = try Home.open(gran.home).deviceID
        let mumID = try Home.open(mum.home).deviceID
        var healable = try dadHome.healableAuthors()
        #expect(healable == [mumID: .max, granID: .max])
        try mum.ok("member", "remove", "Gran")
        try mum.ok("sync")
        try dad.ok("sync")
        let cutoffHome = try Home.open(dad.home)
        healable = try cutoffHome.healableAuthors()
        let granHead = try cutoffHome.log.head(of: granID, in: cutoffHome.family).seq
        #expect(healable[mumID] == .max)
        #expect(healable[granID] == granHead, "\(healable)")
    }
}
