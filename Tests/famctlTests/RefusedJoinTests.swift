import Envelope
@testable import famctl
import Foundation
import Projections
import Testing

/// A device whose join the family's events refuse — its invitation used by
/// another device first, or revoked before it was accepted — is told so once
/// it holds those events: its changes are refused (exit 65, with why and
/// what to do) rather than written and rejected everywhere, `sync` warns,
/// and `accept` on its home says how to join again. Before the events that
/// judge its join arrive, it writes as any device that has joined.
struct RefusedJoinTests {
    /// Mum owns a family over a shared folder, with a baby; `code` is a
    /// member invitation she made.
    final class Family {
        let mum = FamctlRunner()
        let dir: String
        let baby: String
        let code: String

        init() throws {
            dir = mum.root + "/shared"
            try mum.ok("init", "--name", "Mum")
            try mum.ok("family", "create", "--name", "T", "--dir", dir)
            baby = try mum.ok("subject", "add", "baby")
            code = try mum.ok("invite")
        }

        func accept(_ code: String, name: String) throws -> FamctlRunner {
            let r = FamctlRunner()
            try r.ok("accept", code, "--name", name, "--dir", dir)
            return r
        }
    }

    /// A device joining from a copy of the shared folder that the owner's
    /// files have not reached yet (a sync engine delivers them in any
    /// order): the others' joins are not called refused, nor their events
    /// not counted, while the family's first event is missing; once it
    /// arrives, all count (a review over real Syncthing).
    @Test func beforeTheFamilysFirstEventNothingIsCalledRefused() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        try dad.ok("sync")
        let code = try mum.ok("invite")
        try mum.ok("sync")
        let mumHex = try Home.open(mum.home).deviceID.hex
        let copy = family.folderOwner.root + "/copy"
        try FileManager.default.copyItem(atPath: family.dir, toPath: copy)
        let mumFolder = try #require(try FileManager.default.subpathsOfDirectory(atPath: copy).first { $0.hasSuffix("/" + mumHex) })
        try FileManager.default.removeItem(atPath: copy + "/" + mumFolder)
        let gran = FamctlRunner()
        try gran.ok("accept", code, "--name", "Gran", "--dir", copy)
        let round = try gran.ok("sync")
        #expect(!round.contains("not counted"), "\(round)")
        let status = try gran.ok("status")
        #expect(!status.contains("its join was refused") && status.contains("not counted yet: the family's first event has not arrived"), "\(status)")
        try FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: family.dir, toPath: copy)
        try gran.ok("sync")
        let after = try gran.ok("status")
        #expect(!after.contains("its join was refused") && after.contains("denied   none"), "\(after)")
        #expect(try gran.ok("record", "list").contains("mood=3"))
    }

    @Test func aDeviceWhoseInvitationWasUsedFirstIsRefusedAndWarned() throws {
        let f = try Family()
        let x = try f.accept(f.code, name: "X")
        // Y does not see X's join (its folder not synced yet): it joins too.
        let y = FamctlRunner()
        try y.acceptUnread(f.code, name: "Y", dir: f.dir)
        // Its join not judged yet (the owner's events have not arrived): it writes.
        try y.ok("subject", "add", "newMom")
        for r in [f.mum, x, y, f.mum] { try r.ok("sync") }
        let synced = try y.run("sync")
        #expect(synced.code == 0)
        #expect(synced.stderr.contains("warning: this device is not a member of the family: its join was refused (the invite was already used: the owner counted the join of device \(try Home.open(x.home).deviceID.short))"), "\(synced.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(try y.ok("sync", "--json").utf8)) as! [String: Any]
        #expect((json["joinRefused"] as? String)?.hasPrefix("the invite was already used") == true)

        let refused = try y.run("record", "add", "--focus", f.baby, "--store", "diaper", "wet=true")
        #expect(refused.code == 65, "\(refused.stdout)")
        #expect(refused.stderr.contains("this device cannot change the family's records: it is not a member, its join was refused (the invite was already used"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Ask the family's owner for a new invitation and accept it in a new home"))
        #expect(try y.run("subject", "add", "pregnancy").code == 65)
        // A new invitation is accepted in a new home, not in this one.
        let again = try y.run("accept", try f.mum.ok("invite"), "--name", "Y")
        #expect(again.code == 65 && again.stderr.contains("this device's join was refused (the invite was already used"), "\(again.stderr)")

        // A device with records of its own that joins with a code another
        // device used first, before that device's join reached the shared
        // folder: its carried records are rejected with its join, and what
        // it recorded before joining is still there to export, and to
        // import in the new home.
        let z = FamctlRunner()
        try z.ok("init", "--name", "Z")
        try z.ok("subject", "add", "newMom")
        let own = try z.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        let raced = try f.mum.ok("invite")
        let w = try f.accept(raced, name: "W")
        try z.acceptUnread(raced, name: "Z", dir: f.dir)
        for r in [w, f.mum, z] { try r.ok("sync") }
        #expect(try z.run("record", "show", own).code == 66, "rejected with its join")
        let hint = try z.run("accept", try f.mum.ok("invite"), "--name", "Z")
        #expect(hint.stderr.contains("'famctl export stores DIR --before-joining' here"), "\(hint.stderr)")
        try z.ok("export", "stores", z.root + "/before", "--before-joining")
        let fresh = FamctlRunner()
        try fresh.ok("accept", try f.mum.ok("invite"), "--name", "Z2", "--dir", f.dir)
        try fresh.ok("import", "stores", z.root + "/before")
        #expect(try fresh.ok("record", "show", own).contains("mood=2"))

        // The device that joined first is a member and writes; its sync warns of nothing.
        try x.ok("record", "add", "--focus", f.baby, "--store", "diaper", "wet=true")
        #expect(!(try x.run("sync").stderr.contains("warning")))
    }

    /// `accept` reads the family's events already in the shared folder
    /// before it writes the join: a code another device has used is
    /// refused there, nothing is written, and the home is as it was — its
    /// own records still shown, and carried by the next invitation.
    @Test func anInvitationKnownUsedIsRefusedBeforeTheJoinIsWritten() throws {
        let f = try Family()
        let x = try f.accept(f.code, name: "X")
        for r in [x, f.mum] { try r.ok("sync") }
        let xID = try Home.open(x.home).deviceID

        let z = FamctlRunner()
        try z.ok("init", "--name", "Z")
        try z.ok("subject", "add", "newMom")
        let own = try z.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        let refused = try z.run("accept", f.code, "--name", "Z", "--dir", f.dir)
        #expect(refused.code == 65, "\(refused.stdout)")
        #expect(refused.stderr.contains("this invitation cannot be used any more: device \(xID.short) \"X\" joined the family with it already; "
                                        + "nothing was written into the family, and this home's own records and settings are as they were (its 1 care subject(s) and 1 record(s) stay its own)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Ask the family's owner for a new invitation"))
        let home = try Home.open(z.home)
        #expect(home.family == FamilyID.owned(by: home.deviceID) && home.knownOwner == nil)
        #expect(try home.log.head(of: home.deviceID, in: try Home.open(f.mum.home).family).seq == 0, "no join written")
        // The family's events it read stay in the log, but not the key that opens them.
        let family = try Home.open(f.mum.home).family
        #expect(try home.state.keyring.epochs(family: family).isEmpty, "the refused family's key is kept")
        #expect(try z.ok("log").contains("(encrypted: no key for epoch 0)"))
        #expect(try z.ok("record", "list").contains("mood=2"), "its own records are shown again")
        try z.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")

        // A new invitation carries them (the second record too) into the family.
        #expect(try z.ok("accept", try f.mum.ok("invite"), "--name", "Z", "--dir", f.dir).contains("Wrote 1 care subject(s) and 2 record(s)"))
        for r in [z, f.mum] { try r.ok("sync") }
        #expect(try f.mum.ok("record", "show", own).contains("mood=2"))

        // A home that accept makes is left with no family, and takes the next code.
        let fresh = FamctlRunner()
        let again = try fresh.run("accept", f.code, "--name", "F", "--dir", f.dir)
        #expect(again.code == 65 && again.stderr.contains("and the home \(fresh.home) was made with no family"), "\(again.stderr)")
        try fresh.ok("accept", try f.mum.ok("invite"), "--name", "F", "--dir", f.dir)
        try fresh.ok("sync")
        try f.mum.ok("sync")
        #expect(try f.mum.ok("members").contains("F "))
    }

    /// The owner's `invite --list` and `--revoke` read the family's events
    /// first: a code a device joined with since the owner's last sync is
    /// known as used, not listed as open nor "revoked" over a member.
    @Test func theOwnerKnowsAnInvitationUsedSinceItsLastSync() throws {
        let f = try Family()
        let invite = try #require(try f.mum.ok("invite", "--list").split(separator: " ").first.map(String.init))
        _ = try f.accept(f.code, name: "Dad")
        let revoked = try f.mum.run("invite", "--revoke", String(invite.prefix(8)))
        #expect(revoked.code == 65 && revoked.stderr.contains("was already used: \"Dad\" (device ") && revoked.stderr.contains("joined with it"), "\(revoked.stderr)")
        // The hint's command removes that member.
        let command = try #require(revoked.stderr.split(separator: "\n").last?.split(separator: ": ").last.map { String($0.dropLast()) })
        #expect(command.hasPrefix("famctl member remove "), "\(revoked.stderr)")
        let removed = try f.mum.run(Array(command.split(separator: " ").dropFirst().map(String.init)) + ["--now"])
        #expect(removed.code == 0 && removed.stdout.hasPrefix("Removed Dad"), "\(removed.stdout)\(removed.stderr)")
        // Removed since: nothing more to do, not a removal to make again.
        let again = try f.mum.run("invite", "--revoke", String(invite.prefix(8)))
        #expect(again.code == 65 && again.stderr.contains("joined with it, and was removed since") && !again.stderr.contains("member remove"), "\(again.stderr)")
        let other = try f.mum.ok("invite")
        _ = try FamctlRunner().ok("accept", other, "--name", "Gran", "--dir", f.dir)
        #expect(try f.mum.ok("invite", "--list") == "(no open invitations)")
        #expect(try f.mum.ok("members").contains("Dad"))
    }

    /// Where the family's events cannot be read (the peer down), the join
    /// is written all the same, as before: a join needs no round-trip.
    @Test func anUnreachablePeerDoesNotHoldTheJoinBack() throws {
        let f = try Family()
        let z = FamctlRunner()
        // A port nothing listens on: the connection is refused at once.
        let r = try z.run("accept", f.code, "--name", "Z", "--peer", "http://127.0.0.1:9/dav/")
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stderr.contains("famctl: note: the family's events could not be read before joining ("), "\(r.stderr)")
        #expect(r.stderr.contains("'famctl sync' tells."))
        let home = try Home.open(z.home)
        #expect(try home.log.head(of: home.deviceID, in: home.family).seq == 1, "the join is written")
        // A sync there says the address may be wrong, not only that the server may be down.
        let sync = try z.run("sync")
        #expect(sync.code == 75 && sync.stderr.contains("(the server is down, or the address is wrong: 'famctl settings sync --peer URL' sets another)"), "\(sync.stderr)")
    }

    @Test func anInvitationKnownRevokedIsRefusedBeforeTheJoinIsWritten() throws {
        let f = try Family()
        let invite = try #require(try f.mum.ok("invite", "--list").split(separator: " ").first.map(String.init))
        try f.mum.ok("invite", "--revoke", invite)
        let z = FamctlRunner()
        let refused = try z.run("accept", f.code, "--name", "Z", "--dir", f.dir)
        #expect(refused.code == 65 && refused.stderr.contains("this invitation cannot be used any more: the owner revoked it"), "\(refused.stderr)")
        // The revocation's key events, sealed under a key the code does not
        // hold, were read and not opened: that is forgotten with the family,
        // or the family this home creates could never rotate its own key.
        try z.ok("family", "create", "--name", "Z's", "--dir", z.root + "/own")
        try z.ok("invite")
        try z.ok("family", "rotate-key")
        let own = try #require(try z.ok("invite", "--list").split(separator: " ").first.map(String.init))
        try z.ok("invite", "--revoke", own)
    }

    /// A viewer's code on a home with records of its own is refused for
    /// that, but a code that cannot be used at all (revoked) is said first,
    /// not on the next try with --without-own-records; either way the home
    /// is as it was.
    @Test func aRevokedViewersCodeIsSaidRevokedOnAHomeWithRecords() throws {
        let homes = try FamilyAndPrivateHome()
        let (mum, dad) = (homes.mum, homes.dad)
        let revoked = try mum.ok("invite", "--role", "viewer")
        let id = try #require(try mum.ok("invite", "--list").split(separator: " ").first.map(String.init))
        try mum.ok("invite", "--revoke", id)
        let digest = try dad.ok("digest")
        let refused = try dad.run("accept", revoked, "--name", "Dad")
        #expect(refused.code == 65 && refused.stderr.contains("this invitation cannot be used any more: the owner revoked it")
                && !refused.stderr.contains("viewer's"), "\(refused.stderr)")
        #expect(try dad.ok("digest") == digest && dad.ok("record", "show", homes.record).contains("mood=4"))
        // A good viewer's code: refused for the records, after the read, with nothing said of the join, the home as it was.
        let good = try mum.ok("invite", "--role", "viewer")
        let viewer = try dad.run("accept", good, "--name", "Dad")
        #expect(viewer.code == 65 && viewer.stderr.contains("and the invitation is a viewer's") && !viewer.stderr.contains("note:"), "\(viewer.stderr)")
        let home = try Home.open(dad.home)
        let folder = try home.state.get(.syncDirectory)
        #expect(home.family == FamilyID.owned(by: home.deviceID) && folder == nil)
        #expect(try dad.ok("digest") == digest)
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        // And with it said, the same code joins.
        try dad.ok("accept", good, "--name", "Dad", "--without-own-records")
        #expect(try dad.ok("status").contains("viewer"))
    }

    /// A home an earlier accept left mid-join (the process stopped before
    /// the join: here its settings are set as that accept left them, with a
    /// viewer's role) goes back to a private home of its own when the code
    /// turns out used: no family's folder, no role, able to record.
    @Test func aHomeLeftMidJoinGoesBackToItsOwn() throws {
        let f = try Family()
        _ = try f.accept(f.code, name: "X")
        let z = FamctlRunner()
        let parsed = try InviteCode(parsing: f.code)
        let home = try Home.create(z.home, name: "Z", start: .joining(parsed.family, parsed.key, owner: parsed.owner))
        try home.state.set(.joinedRole, "viewer")
        try home.state.set(.syncDirectory, f.dir)
        let refused = try z.run("accept", f.code, "--name", "Z2", "--dir", f.dir)
        #expect(refused.code == 65 && refused.stderr.contains("joined the family with it already"), "\(refused.stderr)")
        let back = try Home.open(z.home)
        #expect(back.family == FamilyID.owned(by: back.deviceID))
        #expect(try back.state.get(.joinedRole) == nil && back.state.get(.syncDirectory) == nil && back.state.get(.deviceName) == "Z")
        try z.ok("subject", "add", "newMom")
        try z.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        #expect(try z.run("sync").code == 64, "no shared folder")
    }

    /// The revocation had not reached the device's folder when it accepted:
    /// the join is written, and refused once the owner's events arrive.
    @Test func aDeviceThatAcceptedARevokedInvitationIsRefused() throws {
        let f = try Family()
        let invite = try #require(try f.mum.ok("invite", "--list").split(separator: " ").first.map(String.init))
        try f.mum.ok("invite", "--revoke", invite)
        let z = FamctlRunner()
        let elsewhere = z.root + "/not-yet-synced"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try z.ok("accept", f.code, "--name", "Z", "--dir", elsewhere)
        try z.ok("settings", "sync", "--dir", f.dir)
        for r in [f.mum, z] { try r.ok("sync") }
        #expect(try z.run("sync").stderr.contains("its join was refused (the invite was revoked)"))
        let refused = try z.run("record", "add", "--focus", f.baby, "--store", "diaper", "wet=true")
        #expect(refused.code == 65 && refused.stderr.contains("its join was refused (the invite was revoked)"), "\(refused.stderr)")
    }

    /// The family's first event has arrived, and not yet the invitation's:
    /// the join cannot be judged yet, so the device writes as before.
    @Test func aJoinWhoseInvitationHasNotArrivedStillWrites() throws {
        let mum = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "T", "--dir", mum.root + "/shared")
        let family = try Home.open(mum.home)
        var first: [[UInt8]] = []
        try family.log.forEachEvent(in: family.family) { first.append($0.bytes) }
        let dad = FamctlRunner()
        // Accepted where the family's events have not arrived (accept would read them).
        let elsewhere = dad.root + "/not-yet-synced"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try dad.ok("accept", try mum.ok("invite"), "--name", "Dad", "--dir", elsewhere)
        _ = try Home.open(dad.home).ingest(first)
        let status = try JSONSerialization.jsonObject(with: Data(try dad.ok("status", "--json").utf8)) as! [String: Any]
        #expect(status["familyName"] as? String == "T" && status["role"] is NSNull)
        try dad.ok("subject", "add", "newMom")
        try dad.ok("settings", "sync", "--dir", mum.root + "/shared")
        #expect(!(try dad.run("sync").stderr.contains("warning")))
        try mum.ok("sync")
        try dad.ok("sync")
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
    }
}
