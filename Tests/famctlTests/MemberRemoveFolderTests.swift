@testable import famctl
import Foundation
import Replicator
import Testing

/// A removal's cut-off is the last of the member's events the owner has:
/// events it shared that the owner has not read yet would be rejected,
/// though written while it was a member. `member remove` looks in the
/// shared folder first (a user trial found them rejected).
struct MemberRemoveFolderTests {
    /// A removed member's writes after its removal arrive and are refused:
    /// the round says how many it brought that the family does not count,
    /// not a bare "pulled N new event(s)" (a review over real Syncthing).
    @Test func aRoundSaysWhatItBroughtThatDoesNotCount() throws {
        let family = try SharedFamily(["Dad", "Gran"])
        let (mum, dad, gran) = (family.mum, family.dad, family.members[1])
        try mum.ok("member", "remove", "Gran")
        // Gran, not yet told, writes two records and shares them.
        for mood in [2, 4] { try gran.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(mood)") }
        _ = try gran.run("sync")
        for r in [mum, dad] {
            let round = try r.ok("sync")
            #expect(round.contains("; 2 of the others' event(s) not counted by the family ('famctl status' lists why)"), "\(round)")
            let again = try r.ok("sync")
            #expect(!again.contains("not counted"), "said once: \(again)")
        }
        let json = try JSONSerialization.jsonObject(with: Data(try dad.ok("sync", "--json").utf8)) as? [String: Any]
        #expect(json?["notCounted"] as? Int == 0)
    }

    @Test func eventsInTheFolderNotReadYetHoldTheRemovalBackUnlessNow() throws {
        let family = try SharedFamily(["Aunt", "Uncle"])
        let (mum, aunt, uncle) = (family.mum, family.members[0], family.members[1])
        let kept = try aunt.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        try aunt.ok("sync")
        let before = try mum.ok("digest")
        let held = try mum.run("member", "remove", "Aunt")
        #expect(held.code == 75 && held.stderr.contains("the shared folder holds Aunt's events up to seq")
                && held.stderr.contains("removing now would reject those it has not read; nothing was written")
                && held.stderr.contains("Run 'famctl sync' first"), "\(held.stderr)")
        #expect(try mum.ok("digest") == before && mum.ok("members").contains("Aunt"), "nothing written")
        try mum.ok("sync")
        try mum.ok("member", "remove", "Aunt")
        try mum.ok("sync")
        #expect(try mum.ok("record", "show", kept).contains(kept), "written while a member, read before the removal: kept")

        // --now removes at once: what was not read is rejected.
        let late = try uncle.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try uncle.ok("sync")
        #expect(try mum.run("member", "remove", "Uncle").code == 75)
        try mum.ok("member", "remove", "Uncle", "--now")
        try mum.ok("sync")
        #expect(try mum.run("record", "show", late).code == 66, "after the cut-off: rejected")
    }

    /// Events that arrived but wait for an earlier one (its file missing
    /// from the folder) would fall after the cut-off too.
    @Test func eventsWaitingForEarlierOnesHoldTheRemovalBack() throws {
        let family = try SharedFamily(["Aunt"])
        let (mum, aunt) = (family.mum, family.members[0])
        let first = try aunt.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        try aunt.ok("sync")
        let second = try aunt.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try aunt.ok("sync")
        let home = try Home.open(aunt.home)
        let folder = family.dir + "/" + home.family.description + "/" + home.deviceID.hex
        let segments = try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.sorted()
        try FileManager.default.moveItem(atPath: folder + "/" + segments[segments.count - 2], toPath: family.folderOwner.root + "/away.seg")
        try mum.ok("sync")
        let held = try mum.run("member", "remove", "Aunt")
        #expect(held.code == 75 && held.stderr.contains("1 of Aunt's events on this device wait for earlier ones that have not arrived")
                && held.stderr.contains("--now removes at once"), "\(held.stderr)")
        try aunt.ok("sync")   // writes its missing segment again
        try mum.ok("sync")
        try mum.ok("member", "remove", "Aunt")
        try mum.ok("sync")
        for r in [first, second] { #expect(try mum.ok("record", "show", r).contains(r)) }
    }
}

/// A device whose first events have not arrived (its first segment
/// missing from the folder) while later ones have: `status` names it, with
/// what it waits for, rather than leaving its events counted under no one.
struct WaitingAuthorTests {
    @Test func anAuthorOfWhichOnlyLaterEventsArrivedIsNamed() throws {
        let mum = try FamctlRunner.mum(shared: true)
        let dir = mum.root + "/shared"
        let aunt = FamctlRunner()
        try aunt.ok("accept", try mum.ok("invite"), "--name", "Aunt", "--dir", dir)
        try aunt.ok("sync")
        for mood in ["2", "3"] { try aunt.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=" + mood) }
        try aunt.ok("sync")
        let home = try Home.open(aunt.home)
        let folder = dir + "/" + home.family.description + "/" + home.deviceID.hex
        let segments = try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.sorted()
        #expect(segments.count == 2, "\(segments)")
        try FileManager.default.removeItem(atPath: folder + "/" + segments[0])
        try mum.ok("sync")
        let status = try mum.ok("status")
        #expect(status.contains("  \(home.deviceID.short) ?  no event yet, 2 waiting for earlier events (its first event, seq 1, has not arrived)"), "\(status)")
        let json = try #require(JSONSerialization.jsonObject(with: Data(try mum.ok("status", "--json").utf8)) as? [String: Any])
        let authors = json["authors"] as? [[String: Any]] ?? []
        #expect(authors.contains { $0["author"] as? String == home.deviceID.hex && $0["seq"] as? Int == 0 && $0["pending"] as? Int == 2 }, "\(authors)")
        // Once the author writes its segment again, all is in.
        try aunt.ok("sync")
        try mum.ok("sync")
        #expect(!(try mum.ok("status")).contains("no event yet"))
        #expect(try mum.ok("digest") == aunt.ok("digest"))
    }
}
