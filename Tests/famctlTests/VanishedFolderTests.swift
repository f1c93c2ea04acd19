import Envelope
import EventLog
import Foundation
@testable import famctl
import Testing

/// A device lost for good whose folder is then deleted from the shared
/// folder: the devices that hold its events write them back, so that a
/// device joining later gets them too (a review over real Syncthing: the
/// new device silently ended on another digest, missing the records).
struct VanishedFolderTests {
    /// Its segments deleted but the folder left with a stray file (a
    /// `.DS_Store`): gone as a device's folder all the same (a review: a
    /// later joiner missed Gran's events, and nothing said so).
    @Test(arguments: [false, true])
    func aVanishedDevicesFolderIsWrittenBackForLaterJoiners(strayFileLeft: Bool) throws {
        let family = try SharedFamily(["Dad", "Gran"])
        let (mum, dad, gran) = (family.mum, family.dad, family.members[1])
        let record = try gran.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4", "note=gran's")
        try gran.ok("sync")
        for r in [mum, dad] { try r.ok("sync") }
        // Gran's device is lost; someone deletes its folder.
        let granID = try Home.open(gran.home).deviceID.hex
        let familyFolder = try #require(try FileManager.default.contentsOfDirectory(atPath: family.dir).first)
        let granFolder = family.dir + "/" + familyFolder + "/" + granID
        if strayFileLeft {
            for name in try FileManager.default.contentsOfDirectory(atPath: granFolder) { try FileManager.default.removeItem(atPath: granFolder + "/" + name) }
            try Data("stray".utf8).write(to: URL(fileURLWithPath: granFolder + "/.DS_Store"))
        } else {
            try FileManager.default.removeItem(atPath: granFolder)
        }

        let round = try mum.ok("sync")
        #expect(round.contains("wrote back 1 segment(s) of other devices missing or damaged in the shared folder"), "\(round)")
        #expect(FileManager.default.fileExists(atPath: family.dir + "/" + familyFolder + "/" + granID))
        // Written once: the next rounds, on any device, find it there.
        #expect(!(try mum.ok("sync")).contains("wrote back"))
        #expect(!(try dad.ok("sync")).contains("wrote back"))

        let uncle = FamctlRunner()
        try uncle.ok("accept", try mum.ok("invite"), "--name", "Uncle", "--dir", family.dir)
        for r in [uncle, mum, dad, uncle] { try r.ok("sync") }
        #expect(try uncle.ok("record", "show", record).contains("mood=4"))
        #expect(try uncle.ok("digest") == mum.ok("digest"))
        #expect(try dad.ok("digest") == mum.ok("digest"))
        #expect(try uncle.ok("replay").hasSuffix("result: OK"))
    }

    /// Mum, Dad and Gran, Gran's `count` records each published in a
    /// segment of its own and read by the others: the family and Gran's
    /// folder in the shared folder.
    static func granWithSegments(_ count: Int) throws -> (SharedFamily, folder: String) {
        let family = try SharedFamily(["Dad", "Gran"])
        let gran = family.members[1]
        for i in 1...count {
            try gran.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i)")
            try gran.ok("sync")
        }
        for r in [family.mum, family.dad] { try r.ok("sync") }
        let familyFolder = try #require(try FileManager.default.contentsOfDirectory(atPath: family.dir).first)
        return (family, family.dir + "/" + familyFolder + "/" + (try Home.open(gran.home).deviceID.hex))
    }

    /// The device was only away: back, it writes its own segments again
    /// (in its own cuts) and removes the copy the others wrote back in its
    /// place, so its folder does not hold its events twice for good (a
    /// review over real Syncthing: 71 MB where 36 MB were its data).
    @Test func theAuthorBackRemovesTheCopiesWrittenBackForIt() throws {
        let (family, folder) = try Self.granWithSegments(2)
        let (mum, dad, gran) = (family.mum, family.dad, family.members[1])
        let own = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".seg") }.sorted()
        #expect(own.count >= 2, "\(own)")
        try FileManager.default.removeItem(atPath: folder)
        #expect(try mum.ok("sync").contains("wrote back 1 segment(s)"))
        let back = try gran.ok("sync")
        #expect(back.contains("wrote again \(own.count) of this device's segment(s)") && back.contains("removed 1 copy(ies) of this device's events"), "\(back)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".seg") }.sorted() == own)
        // Nobody writes it back again, nor removes anything more.
        for r in [mum, dad, gran] {
            let round = try r.ok("sync")
            #expect(!round.contains("wrote back") && !round.contains("removed") && !round.contains("wrote again"), "\(round)")
        }
        #expect(try gran.ok("digest") == mum.ok("digest"))
        #expect(try dad.ok("digest") == mum.ok("digest"))
    }

    /// Back with its own last events taken out of its log too (and the
    /// record of what it published lowered with them): it reads them back
    /// from the copy, writes its own segments again, removes the copy, and
    /// publishes nothing twice (a review over WebDAV: seqs 3–4 were
    /// published again beside the segments that held them).
    @Test func theAuthorBackWithEventsOutOfItsLogPublishesNothingTwice() throws {
        let (family, folder) = try Self.granWithSegments(3)
        let (mum, gran) = (family.mum, family.members[1])
        let granID = try Home.open(gran.home).deviceID.hex
        let own = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".seg") }.sorted()
        try TamperTests.pastTheRules(gran.home) { db in
            try db.run("DELETE FROM events WHERE author = ?1 AND seq > (SELECT max(seq) - 2 FROM events WHERE author = ?1)", [.blob(Hex.decode(granID)!)])
            try db.run("UPDATE r_published SET last_seq = (SELECT max(seq) FROM events WHERE author = ?1)", [.blob(Hex.decode(granID)!)])
        }
        try FileManager.default.removeItem(atPath: folder)
        #expect(try mum.ok("sync").contains("wrote back 1 segment(s)"))
        let back = try gran.ok("sync")
        #expect(back.contains("published 0 event(s)") && back.contains("pulled 2 new event(s)") && back.contains("removed 1 copy(ies)"), "\(back)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".seg") }.sorted() == own)
        #expect(try gran.ok("digest") == mum.ok("digest"))
        #expect(try gran.ok("replay").hasSuffix("result: OK"))
    }

    /// The same, the device syncing first: its folder is not made again in
    /// part (the others would then never write it back whole, and it would
    /// wait for its own events for good: a review); the others write it
    /// back, and the device reads its events from that.
    @Test func theAuthorFirstToSyncWaitsForTheWholeFolder() throws {
        let (family, folder) = try Self.granWithSegments(3)
        let (mum, gran) = (family.mum, family.members[1])
        let granID = try Home.open(gran.home).deviceID.hex
        try TamperTests.pastTheRules(gran.home) { db in
            try db.run("DELETE FROM events WHERE author = ?1 AND seq = (SELECT max(seq) FROM events WHERE author = ?1)", [.blob(Hex.decode(granID)!)])
        }
        try FileManager.default.removeItem(atPath: folder)
        let first = try gran.run("sync")
        #expect(first.code == 0 && first.stderr.contains("this round did not read them back"), "\(first.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder))
        #expect(try mum.ok("sync").contains("wrote back 1 segment(s)"))
        #expect(try gran.ok("sync").contains("pulled 1 new event(s)"))
        try gran.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5")
        for r in [gran, mum] { try r.ok("sync") }
        #expect(try gran.ok("digest") == mum.ok("digest"))
        #expect(try mum.ok("replay").hasSuffix("result: OK"))
    }

    /// The copy written back, seen as an iCloud placeholder (its bytes not
    /// downloaded): nothing on disk to remove, and no round says it removed
    /// one (a review: "removed 1 copy" at every round, the placeholder kept).
    @Test func aCopySeenAsAPlaceholderIsNotSaidRemoved() throws {
        let (family, folder) = try Self.granWithSegments(2)
        let (mum, gran) = (family.mum, family.members[1])
        try FileManager.default.removeItem(atPath: folder)
        #expect(try mum.ok("sync").contains("wrote back 1 segment(s)"))
        let copy = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".seg") })
        try FileManager.default.removeItem(atPath: folder + "/" + copy)
        try Data("bplist00".utf8).write(to: URL(fileURLWithPath: folder + "/." + copy + ".icloud"))
        for _ in 0..<2 {
            let round = try gran.ok("sync")
            #expect(!round.contains("removed"), "\(round)")
        }
        #expect(FileManager.default.fileExists(atPath: folder + "/." + copy + ".icloud"))
    }
}
