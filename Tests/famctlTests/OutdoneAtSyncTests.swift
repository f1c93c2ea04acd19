import Envelope
@testable import famctl
import Foundation
import Projections
import Testing

/// A change of this device's that a pulled change dated well ahead of its
/// clock outdid (a device whose clock is ahead wrote it, perhaps before
/// this one in truth): the sync that brings it says which fields no longer
/// show, once; a later change dated by a clock that is right is the
/// ordinary last writer, not said (a clock-skew review: the value was gone
/// after a sync that said only "pulled 1 new event(s)").
struct OutdoneAtSyncTests {
    @Test func aChangeOutdoneByOneDatedAheadIsSaidOnce() throws {
        let family = try SharedFamily(["Dad", "Gran"])
        let (mum, dad, gran) = (family.mum, family.members[0], family.members[1])
        let id = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        for r in [mum, dad, gran] { try r.ok("sync") }
        // Gran, whose clock is right, changes the mood after Mum: the
        // ordinary later write, not said.
        try mum.ok("record", "update", id, "mood=3")
        try gran.ok("record", "update", id, "mood=4")
        try gran.ok("sync")
        let ordinary = try mum.run("sync")
        #expect(ordinary.code == 0 && !ordinary.stderr.contains("no longer shows"), "\(ordinary.stderr)")
        #expect(try mum.ok("record", "show", id).contains("mood=4"))
        try mum.ok("record", "update", id, "note=mine")
        // Dad, his clock five hours ahead, changes the note too, not having Mum's change.
        let dadHome = try Home.open(dad.home)
        let (_, key) = try dadHome.currentKey()
        let ahead = HLC(milliseconds: HLC.milliseconds(of: Date().addingTimeInterval(5 * 3600)), counter: 0)
        try dadHome.append([(RecordEvent(kind: .put, record: try #require(UUID(uuidString: id)), store: "postpartum", focus: "newMom", at: nil,
                                         fields: ["note": .string("dads")]).body, key)], after: ahead)
        try dad.ok("sync")
        let r = try mum.run("sync")
        #expect(r.code == 0 && r.stderr.contains("warning: record \(id) (postpartum")
                && r.stderr.contains("this device's change of note no longer shows: Dad changed it in a change dated")
                && r.stderr.contains("5 hours ahead of this device's clock"), "\(r.stderr)")
        #expect(try mum.ok("record", "show", id).contains("note=dads"))
        let again = try mum.run("sync")
        #expect(!again.stderr.contains("no longer shows"), "said twice: \(again.stderr)")
    }
    /// Another device's changes dated years ahead are said by the sync
    /// that brings them, once, whatever they changed (a deletion too), as
    /// standing for good in practice; a change they outdo is told that
    /// waiting for the date is no way out (a security review: a deletion
    /// and a rename dated in 2100 came in without a word, and the advice
    /// was to wait for the year 10889).
    @Test func changesDatedYearsAheadAreSaidWhenTheyArrive() throws {
        let family = try SharedFamily(["Dad", "Gran"])
        let (mum, dad, gran) = (family.mum, family.members[0], family.members[1])
        let kept = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        let gone = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        try mum.ok("member", "role", "Gran", "viewer")
        for r in [mum, dad, gran] { try r.ok("sync") }
        // A viewer's change dated years ahead counts nowhere: not said as winning.
        let granHome = try Home.open(gran.home)
        let yearsAhead = HLC(milliseconds: HLC.milliseconds(of: Date().addingTimeInterval(5 * 365 * 86_400)), counter: 0)
        try granHome.append([(RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: nil, fields: ["kind": .string("mood"), "mood": .int(1)]).body,
                              try granHome.currentKey().1)], after: yearsAhead)
        try gran.ok("sync")
        let viewer = try mum.run("sync")
        #expect(viewer.code == 0 && !viewer.stderr.contains("dated far ahead"), "\(viewer.stderr)")
        let dadHome = try Home.open(dad.home)
        let (_, key) = try dadHome.currentKey()
        let ahead = HLC(milliseconds: HLC.milliseconds(of: Date().addingTimeInterval(3 * 365 * 86_400)), counter: 0)
        try dadHome.append([(RecordEvent(kind: .put, record: try #require(UUID(uuidString: kept)), store: "postpartum", focus: "newMom", at: nil,
                                         fields: ["mood": .int(5)]).body, key),
                            (RecordEvent(kind: .delete, record: try #require(UUID(uuidString: gone)), store: "postpartum", focus: "newMom", at: nil, fields: [:]).body, key)],
                           after: ahead)
        try dad.ok("sync")
        let r = try mum.run("sync")
        #expect(r.code == 0 && r.stderr.contains("warning: 2 change(s) by Dad just pulled are dated far ahead of this device's clock")
                && r.stderr.contains("3 years ahead): until then they win over any change of what they changed") && r.stderr.contains("which in practice is for good"), "\(r.stderr)")
        let again = try mum.run("sync")
        #expect(again.code == 0 && !again.stderr.contains("dated far ahead"), "said twice: \(again.stderr)")
        let update = try mum.run("record", "update", kept, "mood=1")
        #expect(update.code == 0 && update.stderr.contains("keeps its value") && update.stderr.contains("That date is years ahead: in practice that value stands for good")
                && !update.stderr.contains("once this device's clock has passed that date"), "\(update.stderr)")
        let restore = try mum.run("record", "restore", gone)
        #expect(restore.code == 0 && restore.stderr.contains("That date is years ahead: in practice the change stands for good")
                && !restore.stderr.contains("once this device's clock has passed that date"), "\(restore.stderr)")
    }

    /// A device whose clock is days behind pulls two members' changes, both
    /// far ahead of it: its own clock is said to be possibly the one that is
    /// wrong (a clock review: a device set to 1970 told everyone else to fix
    /// theirs), not certainly (another: one fast clock that the others'
    /// changes followed would be the wrong one).
    @Test func severalDevicesFarAheadAtOnceBlameThisClock() throws {
        let family = try SharedFamily(["Dad", "Gran"])
        let (mum, dad, gran) = (family.mum, family.members[0], family.members[1])
        try mum.ok("subject", "add", "newMom")
        for r in [mum, dad, gran] { try r.ok("sync") }
        for r in [dad, gran] {
            try r.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
            try r.ok("sync")
        }
        let behind = try mum.run(["sync"], env: try HouseholdTests.clockOff("-3d"))
        #expect(behind.code == 0 && behind.stderr.contains("the changes of 2 devices just pulled are all dated far ahead of this device's clock")
                && behind.stderr.contains("either this device's clock is behind, or one device's clock is ahead") && behind.stderr.contains("clock set right (or this device's)"), "\(behind.stderr)")
    }
}
