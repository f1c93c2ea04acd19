import Foundation
import Testing

/// A removal's cut-off is the last of the member's events the owner has:
/// events it shared that the owner has not read yet would be rejected,
/// though written while it was a member. `member remove` looks in the
/// shared folder first (a user trial found them rejected).
struct MemberRemoveFolderTests {
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
}
