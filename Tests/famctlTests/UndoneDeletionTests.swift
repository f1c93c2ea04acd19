@testable import famctl
import Foundation
import Testing

/// A deletion made on this device that another device's later change
/// undoes (it changed the record, or the care subject, where the deletion
/// had not arrived) is said by the sync that brings the change, once; a
/// change of a record no one deleted is not, nor one whose deletion was
/// another device's (that device is told).
struct UndoneDeletionTests {
    @Test func aDeletionAnotherDeviceUndidIsSaidOnce() throws {
        let family = try SharedFamily(["Dad"])
        let (mum, dad) = (family.mum, family.dad)
        let max = try mum.ok("subject", "add", "baby", "--name", "Max")
        let bo = try mum.ok("subject", "add", "baby", "--name", "Bo")
        let record = try mum.ok("record", "add", "--focus", max, "--store", "diaper", "wet=true")
        let kept = try mum.ok("record", "add", "--focus", max, "--store", "diaper", "wet=true")
        let dads = try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        for r in [mum, dad, mum, dad] { try r.ok("sync") }
        // Apart: each deletes, and the other changes the same thing after.
        try mum.ok("record", "delete", record)
        try mum.ok("subject", "remove", bo)
        try dad.ok("record", "delete", dads)
        try mum.ok("record", "update", dads, "mood=4")
        try dad.ok("record", "update", record, "dirty=true")
        try dad.ok("record", "update", kept, "dirty=true")
        try dad.ok("subject", "update", bo, "--name", "Bodhi")
        try dad.ok("sync")
        let pulled = try mum.run("sync")
        #expect(pulled.code == 0 && pulled.stderr.contains("famctl: warning: record \(record) (diaper at ") && pulled.stderr.contains("which this device deleted, is back: \"Dad\" changed it")
                && pulled.stderr.contains("'famctl record delete \(record)' deletes it again"), "\(pulled.stderr)")
        #expect(pulled.stderr.contains("care subject Bodhi (\(bo)), which this device removed, is back: \"Dad\" changed it")
                && pulled.stderr.contains("'famctl subject remove \(bo)' removes it again"), "\(pulled.stderr)")
        #expect(!pulled.stderr.contains(kept) && !pulled.stderr.contains(dads), "\(pulled.stderr)")
        // Dad's deletion, which Mum's later change undid: said to Dad.
        let toDad = try dad.run("sync")
        #expect(toDad.stderr.contains("famctl: warning: record \(dads) (postpartum at ") && toDad.stderr.contains("is back: \"Mum\" changed it")
                && !toDad.stderr.contains(record), "\(toDad.stderr)")
        // Said once: a later edit of the record brought back is not said again.
        try dad.ok("record", "update", record, "note=later")
        try dad.ok("sync")
        let again = try mum.run("sync")
        #expect(again.code == 0 && again.stdout.contains("pulled 1 new event(s)") && !again.stderr.contains("is back"), "\(again.stdout) \(again.stderr)")
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }
}
