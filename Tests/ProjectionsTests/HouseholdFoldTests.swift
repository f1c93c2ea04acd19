import Envelope
import Foundation
import PropertySeeds
@testable import Projections
import Testing

/// Each rule of the household fold (architecture.md, "Household rules"),
/// with a household that breaks it once: that event, and only it, is
/// rejected with the rule's reason, and every order the events could
/// arrive in folds to the same household.
struct HouseholdFoldTests {
    /// Devices and the family the first one owns.
    struct Family {
        let owner = SigningKey.generate()
        let dad = SigningKey.generate()
        let grandma = SigningKey.generate()
        let outsider = SigningKey.generate()
        var family: FamilyID { FamilyID.owned(by: owner.publicKey) }
        var seqs: [DeviceID: UInt64] = [:]

        /// One library event of `author` at millisecond `ms` of the fold's clock.
        mutating func entry(_ author: SigningKey, _ ms: UInt64, _ event: LibraryEvent) -> Household.Entry {
            seqs[author.publicKey, default: 0] += 1
            return Household.Entry(id: EventID(bytes: Sodium.randomBytes(32)), version: Version(hlc: HLC(milliseconds: 1_800_000_000_000 + ms, counter: 0), author: author.publicKey),
                                   seq: seqs[author.publicKey]!, event: event)
        }

        mutating func create(_ ms: UInt64 = 0, by author: SigningKey? = nil) -> Household.Entry {
            entry(author ?? owner, ms, .familyCreate(name: "The Lins", ownerName: "Mum", ownerBox: Sodium.randomBytes(32)))
        }

        /// An invitation and the secret its code carries.
        mutating func invite(_ ms: UInt64, role: Role = .member, expiresAfter: UInt64 = 86_400_000, by author: SigningKey? = nil) -> (Household.Entry, InviteID, SecretBytes) {
            let id = InviteID.random()
            let secret = SecretBytes(Sodium.randomBytes(32))
            let verifier = JoinProof.key(secret: secret).publicKey.bytes
            let e = entry(author ?? owner, ms, .inviteCreate(invite: id, role: role, expiresMs: 1_800_000_000_000 + ms + expiresAfter, verifier: verifier, epoch: 0))
            return (e, id, secret)
        }

        mutating func join(_ device: SigningKey, _ ms: UInt64, invite: InviteID, secret: SecretBytes, name: String = "Dad") -> Household.Entry {
            entry(device, ms, .memberJoin(invite: invite, name: name, box: Sodium.randomBytes(32),
                                          proof: JoinProof.sign(secret: secret, family: family, invite: invite, device: device.publicKey)))
        }
    }

    /// Folds `entries` in their order and in `orders` shuffles: the same
    /// verdicts, members and invitations each time. Returns the first.
    static func folded(_ entries: [Household.Entry], family: FamilyID, orders: Int = 12) -> Household {
        let first = Household(entries: entries, family: family)
        var rng = SplitMixRNG(seed: UInt64(entries.count))
        for _ in 0..<orders {
            var shuffled = entries
            shuffled.shuffle(using: &rng)
            let other = Household(entries: shuffled, family: family)
            #expect(other.rejected == first.rejected && other.members == first.members && other.invites == first.invites && other.owner == first.owner,
                    "an arrival order folded otherwise")
        }
        return first
    }

    /// `bad` alone rejected, with a reason that starts with `reason`.
    static func expectRejected(_ h: Household, _ bad: Household.Entry, _ reason: String) {
        #expect(h.rejected[bad.id]?.hasPrefix(reason) == true, "\(String(describing: h.rejected[bad.id])) for \(bad.event.type), expected \(reason)")
        #expect(h.rejected.count == 1, "others rejected too: \(h.rejected.values.sorted())")
    }

    @Test func aSecondFamilyCreateIsRejected() {
        var f = Family()
        let first = f.create(0), again = f.create(10)
        let h = Self.folded([first, again], family: f.family)
        Self.expectRejected(h, again, "the family was already created")
        #expect(h.owner == f.owner.publicKey)
    }

    @Test func aFamilyCreateByAnotherDeviceIsRejected() {
        var f = Family()
        let forged = f.create(0, by: f.outsider), real = f.create(5)
        let h = Self.folded([forged, real], family: f.family)
        Self.expectRejected(h, forged, "only the device the family id was derived from can create it")
        #expect(h.owner == f.owner.publicKey && h.members[f.outsider.publicKey] == nil)
    }

    @Test func eventsBeforeTheFamilyIsCreatedAreRejected() {
        var f = Family()
        let (invite, _, _) = f.invite(10)
        let h = Self.folded([invite], family: f.family)
        #expect(h.rejected[invite.id]?.hasPrefix("no family has been created") == true, "\(h.rejected)")
        #expect(h.isPrivate && h.invites.isEmpty)
    }

    @Test func aJoinNotLaterThanItsInviteIsRejected() {
        var f = Family()
        let (invite, id, secret) = f.invite(100)
        let early = f.join(f.dad, 50, invite: id, secret: secret)
        let h = Self.folded([f.create(0), invite, early], family: f.family)
        Self.expectRejected(h, early, "the join is not later than its invite")
        #expect(h.members[f.dad.publicKey] == nil)
    }

    @Test func aJoinNamingNoInviteIsRejected() {
        var f = Family()
        let (_, _, secret) = f.invite(10)
        let unknown = f.join(f.dad, 20, invite: InviteID.random(), secret: secret)
        let h = Self.folded([f.create(0), unknown], family: f.family)
        Self.expectRejected(h, unknown, "no such invite")
    }

    @Test func aJoinWithoutTheSecretIsRejected() {
        var f = Family()
        let (invite, id, _) = f.invite(10)
        let guessed = f.join(f.outsider, 20, invite: id, secret: SecretBytes(Sodium.randomBytes(32)))
        let h = Self.folded([f.create(0), invite, guessed], family: f.family)
        Self.expectRejected(h, guessed, "the join does not prove possession of the invite secret")
    }

    @Test func joinsAfterARevocationOrTheExpiryAreRejected() {
        var f = Family()
        let (invite, id, secret) = f.invite(10)
        let revoke = f.entry(f.owner, 20, .inviteRevoke(invite: id))
        let late = f.join(f.dad, 30, invite: id, secret: secret)
        Self.expectRejected(Self.folded([f.create(0), invite, revoke, late], family: f.family), late, "the invite was revoked")
        // A join dated before the revocation counts.
        var g = Family()
        let (invite2, id2, secret2) = g.invite(10)
        let inTime = g.join(g.dad, 15, invite: id2, secret: secret2)
        let revoke2 = g.entry(g.owner, 20, .inviteRevoke(invite: id2))
        let h = Self.folded([g.create(0), invite2, inTime, revoke2], family: g.family)
        #expect(h.rejected.isEmpty && h.members[g.dad.publicKey]?.isActive == true, "\(h.rejected)")
        // Expired: by the join's own clock.
        var e = Family()
        let (short, id3, secret3) = e.invite(10, expiresAfter: 1_000)
        let expired = e.join(e.dad, 1_011, invite: id3, secret: secret3)
        Self.expectRejected(Self.folded([e.create(0), short, expired], family: e.family), expired, "the invite had expired")
    }

    /// Two devices join with one code: the first by (hlc, author) counts,
    /// the greater author key losing a tie; an `invite.used` of the owner
    /// decides instead, whatever the clocks say.
    @Test func aReusedInviteCountsOneJoinOnly() {
        var f = Family()
        let (invite, id, secret) = f.invite(10)
        let dad = f.join(f.dad, 20, invite: id, secret: secret, name: "Dad")
        let grandma = f.join(f.grandma, 20, invite: id, secret: secret, name: "Grandma")
        let h = Self.folded([f.create(0), invite, dad, grandma], family: f.family)
        let dadFirst = f.dad.publicKey.bytes.lexicographicallyPrecedes(f.grandma.publicKey.bytes)
        let (winner, loser) = dadFirst ? (f.dad, grandma) : (f.grandma, dad)
        Self.expectRejected(h, loser, "the invite was already used")
        #expect(h.members[winner.publicKey] != nil && h.members.count == 2)
        // A later join loses to an earlier one, whichever device it is.
        var g = Family()
        let (invite2, id2, secret2) = g.invite(10)
        let later = g.join(g.dad, 25, invite: id2, secret: secret2)
        let earlier = g.join(g.grandma, 21, invite: id2, secret: secret2)
        Self.expectRejected(Self.folded([g.create(0), invite2, later, earlier], family: g.family), later, "the invite was already used")
        // The owner counted Dad's (later) join: Grandma's earlier one is refused.
        let used = g.entry(g.owner, 40, .inviteUsed(invite: id2, member: g.dad.publicKey))
        let decided = Self.folded([g.create(0), invite2, later, earlier, used], family: g.family)
        Self.expectRejected(decided, earlier, "the invite was already used: the owner counted the join of device \(g.dad.publicKey.short)")
        #expect(decided.members[g.dad.publicKey] != nil && decided.members[g.grandma.publicKey] == nil)
    }

    @Test func aRemovedDeviceCannotJoinAgain() {
        var f = Family()
        let (invite, id, secret) = f.invite(10)
        let join = f.join(f.dad, 20, invite: id, secret: secret)
        let remove = f.entry(f.owner, 30, .memberRemove(member: f.dad.publicKey, cutoff: 1))
        let (invite2, id2, secret2) = f.invite(40)
        let again = f.join(f.dad, 50, invite: id2, secret: secret2)
        let h = Self.folded([f.create(0), invite, join, remove, invite2, again], family: f.family)
        Self.expectRejected(h, again, "a removed device cannot join again")
        #expect(h.members[f.dad.publicKey]?.isActive == false && h.invites[id2]?.usedBy == nil)
    }

    @Test func theOwnerCannotBeRemovedNorItsRoleChanged() {
        var f = Family()
        let remove = f.entry(f.owner, 10, .memberRemove(member: f.owner.publicKey, cutoff: 0))
        Self.expectRejected(Self.folded([f.create(0), remove], family: f.family), remove, "the owner cannot be removed")
        var g = Family()
        let role = g.entry(g.owner, 10, .memberRole(member: g.owner.publicKey, role: .viewer))
        let h = Self.folded([g.create(0), role], family: g.family)
        Self.expectRejected(h, role, "the owner's role cannot change")
        #expect(h.members[g.owner.publicKey]?.role == .owner)
    }

    /// What only the owner may do, done by a member.
    @Test func onlyTheOwnerManagesTheFamily() {
        var f = Family()
        let (invite, id, secret) = f.invite(10)
        let join = f.join(f.dad, 20, invite: id, secret: secret)
        let base = [f.create(0), invite, join]
        let (dadInvite, _, _) = f.invite(30, by: f.dad)
        let cases: [(Household.Entry, String)] = [
            (dadInvite, "only the owner may invite"),
            (f.entry(f.dad, 40, .inviteRevoke(invite: id)), "only the owner may revoke invites"),
            (f.entry(f.dad, 50, .memberRole(member: f.dad.publicKey, role: .owner)), "only the owner may change roles"),
            (f.entry(f.dad, 60, .memberRemove(member: f.owner.publicKey, cutoff: 0)), "only the owner may remove members"),
            (f.entry(f.dad, 70, .keyRotate(epoch: 1, sealed: [f.dad.publicKey: Sodium.randomBytes(80)])), "only the owner may manage keys"),
            (f.entry(f.dad, 80, .inviteUsed(invite: id, member: f.dad.publicKey)), "only the owner may record whose join used an invitation"),
        ]
        for (bad, reason) in cases {
            let h = Self.folded(base + [bad], family: f.family)
            Self.expectRejected(h, bad, reason)
            #expect(h.epoch == 0 && h.members[f.dad.publicKey]?.role == .member && h.invites[id]?.revoked == nil)
        }
    }

    /// Two events of one author at one clock reading (a chain the log would
    /// refuse, or the two sides of a fork): the fold orders them by sequence
    /// number, then by id, whatever order they arrive in. Before, arrival
    /// order decided, and a replica that got the role change first called
    /// it "not a member" where the others said "only the owner": found by
    /// the random households below run over more seeds.
    @Test func oneAuthorsEventsAtOneClockFoldInOneOrder() {
        var f = Family()
        let (invite, id, secret) = f.invite(10)
        let join = f.join(f.dad, 20, invite: id, secret: secret)
        let role = f.entry(f.dad, 20, .memberRole(member: f.dad.publicKey, role: .owner))
        #expect(join.version == role.version && join.seq < role.seq)
        let create = f.create(0)
        let inOrder = Household(entries: [create, invite, join, role], family: f.family)
        let reversed = Household(entries: [role, join, invite, create], family: f.family)
        for h in [inOrder, reversed] {
            Self.expectRejected(h, role, "only the owner may change roles")
            #expect(h.members[f.dad.publicKey]?.role == .member)
        }
        // The two sides of a fork: Grandma's first event twice, joins with
        // two invitations at one clock reading. The one with the lower id
        // counts, in either order.
        let (viewerInvite, viewerID, viewerSecret) = f.invite(30, role: .viewer)
        let (memberInvite, memberID, memberSecret) = f.invite(31)
        let asViewer = f.join(f.grandma, 40, invite: viewerID, secret: viewerSecret, name: "Grandma")
        f.seqs[f.grandma.publicKey]! -= 1
        let asMember = f.join(f.grandma, 40, invite: memberID, secret: memberSecret, name: "Grandma")
        #expect(asViewer.version == asMember.version && asViewer.seq == asMember.seq)
        let first = asViewer.id.bytes.lexicographicallyPrecedes(asMember.id.bytes) ? asViewer : asMember
        let base = [create, invite, join, viewerInvite, memberInvite]
        for h in [Household(entries: base + [asViewer, asMember], family: f.family), Household(entries: [asMember, asViewer] + base, family: f.family)] {
            Self.expectRejected(h, first.id == asViewer.id ? asMember : asViewer, "already a member")
            #expect(h.members[f.grandma.publicKey]?.role == (first.id == asViewer.id ? .viewer : .member))
        }
    }

    /// A member's events dated before its join, or past its removal's
    /// cut-off, and a viewer's changes, are not authorized; a role change
    /// counts from its version on.
    @Test func writesAreJudgedByJoinCutOffAndRoleAtTheirVersion() {
        var f = Family()
        let (invite, id, secret) = f.invite(10, role: .viewer)
        let join = f.join(f.dad, 100, invite: id, secret: secret)
        let promote = f.entry(f.owner, 200, .memberRole(member: f.dad.publicKey, role: .member))
        let remove = f.entry(f.owner, 300, .memberRemove(member: f.dad.publicKey, cutoff: 5))
        // A library event of Dad's dated before his join.
        let (early, _, _) = f.invite(50, by: f.dad)
        let h = Self.folded([f.create(0), invite, join, promote, remove, early], family: f.family)
        Self.expectRejected(h, early, "written before the author joined")
        let dad = f.dad.publicKey
        func at(_ ms: UInt64) -> Version { Version(hlc: HLC(milliseconds: 1_800_000_000_000 + ms, counter: 0), author: dad) }
        #expect(h.writeVerdict(author: dad, seq: 2, version: at(90), needsWrite: true) == "written before the author joined")
        #expect(h.writeVerdict(author: dad, seq: 2, version: at(150), needsWrite: true) == "viewers cannot change records or care subjects")
        #expect(h.writeVerdict(author: dad, seq: 2, version: at(150), needsWrite: false) == nil)
        #expect(h.writeVerdict(author: dad, seq: 3, version: at(250), needsWrite: true) == nil)
        // Past the cut-off, whatever its clock says.
        #expect(h.writeVerdict(author: dad, seq: 6, version: at(250), needsWrite: true)?.hasPrefix("beyond its author's removal (seq 6, past the cut-off 5") == true)
        #expect(h.writeVerdict(author: dad, seq: 5, version: at(400), needsWrite: true) == nil)
        #expect(h.writeVerdict(author: f.outsider.publicKey, seq: 1, version: at(150), needsWrite: false) == "not a member of the family (never validly joined)")
        #expect(h.writeVerdict(author: f.owner.publicKey, seq: 99, version: at(1), needsWrite: true) == nil)
    }

    /// Rules only a second copy of an owner's event reaches (a forked or
    /// restored owner's device; the command line refuses them): each
    /// keeps what the first said, whatever the order of the two.
    @Test func anOwnersSecondWordKeepsTheFirstOnesLimits() {
        var f = Family()
        let (invite, id, secret) = f.invite(10)
        let join = f.join(f.dad, 20, invite: id, secret: secret)
        let dad = f.dad.publicKey
        // Two removals: the lower cut-off counts, whichever came later.
        let remove5 = f.entry(f.owner, 300, .memberRemove(member: dad, cutoff: 5))
        let remove2 = f.entry(f.owner, 310, .memberRemove(member: dad, cutoff: 2))
        let removed = Self.folded([f.create(0), invite, join, remove5, remove2], family: f.family)
        #expect(removed.members[dad]?.cutoff == 2)
        let later = Version(hlc: HLC(milliseconds: 1_800_000_000_000 + 250, counter: 0), author: dad)
        #expect(removed.writeVerdict(author: dad, seq: 3, version: later, needsWrite: true)?.hasPrefix("beyond its author's removal (seq 3, past the cut-off 2") == true)
        // A removed member's role does not change.
        let role = f.entry(f.owner, 320, .memberRole(member: dad, role: .viewer))
        let afterRemoval = Self.folded([f.create(0), invite, join, remove5, role], family: f.family)
        Self.expectRejected(afterRemoval, role, "no such active member")
        #expect(afterRemoval.members[dad]?.role == .member)
        // Two rotations: the family's epoch is the highest, not the last.
        var g = Family()
        let rotate2 = g.entry(g.owner, 100, .keyRotate(epoch: 2, sealed: [:]))
        let rotate1 = g.entry(g.owner, 200, .keyRotate(epoch: 1, sealed: [:]))
        #expect(Self.folded([g.create(0), rotate2, rotate1], family: g.family).epoch == 2)
        // An invitation made again under its id: refused, so a revoked one stays revoked.
        var h = Family()
        let (created, inviteID, code) = h.invite(10)
        let revoke = h.entry(h.owner, 20, .inviteRevoke(invite: inviteID))
        let verifier = JoinProof.key(secret: code).publicKey.bytes
        let again = h.entry(h.owner, 30, .inviteCreate(invite: inviteID, role: .member, expiresMs: 1_800_000_000_000 + 86_400_000, verifier: verifier, epoch: 0))
        let lateJoin = h.join(h.dad, 40, invite: inviteID, secret: code)
        let remade = Household(entries: [h.create(0), created, revoke, again, lateJoin], family: h.family)
        #expect(remade.rejected[again.id]?.hasPrefix("invite \(inviteID.hex.prefix(8)) already exists") == true, "\(String(describing: remade.rejected[again.id]))")
        #expect(remade.members[h.dad.publicKey] == nil && remade.rejected[lateJoin.id] != nil)
        // Two records of whose join used an invitation: the first counts.
        var u = Family()
        let (shared, sharedID, sharedCode) = u.invite(10)
        let dadJoin = u.join(u.dad, 20, invite: sharedID, secret: sharedCode, name: "Dad")
        let grandmaJoin = u.join(u.grandma, 20, invite: sharedID, secret: sharedCode, name: "Grandma")
        let usedByDad = u.entry(u.owner, 40, .inviteUsed(invite: sharedID, member: u.dad.publicKey))
        let usedByGrandma = u.entry(u.owner, 50, .inviteUsed(invite: sharedID, member: u.grandma.publicKey))
        let decided = Self.folded([u.create(0), shared, dadJoin, grandmaJoin, usedByDad, usedByGrandma], family: u.family)
        #expect(decided.members[u.dad.publicKey] != nil && decided.members[u.grandma.publicKey] == nil)
        #expect(decided.rejected[grandmaJoin.id]?.hasPrefix("the invite was already used: the owner counted the join of device \(u.dad.publicKey.short)") == true,
                "\(String(describing: decided.rejected[grandmaJoin.id]))")
    }

    /// Random households: every order of their events folds alike.
    @Test(arguments: PropertySeeds.range(0..<66)) func anyArrivalOrderFoldsAlike(seed: UInt64) {
        var rng = SplitMixRNG(seed: seed)
        var f = Family()
        var entries = [f.create(0)]
        var invites: [(InviteID, SecretBytes)] = []
        let devices = [f.dad, f.grandma, f.outsider]
        for step in 1...30 {
            let ms = UInt64(step) * 10 + rng.next() % 3
            switch rng.next() % 6 {
            case 0, 1:
                let (e, id, secret) = f.invite(ms, role: rng.next() % 2 == 0 ? .member : .viewer, expiresAfter: 50 + rng.next() % 200)
                entries.append(e); invites.append((id, secret))
            case 2 where !invites.isEmpty:
                let (id, secret) = invites[Int(rng.next() % UInt64(invites.count))]
                entries.append(f.join(devices[Int(rng.next() % 3)], ms - rng.next() % 15, invite: id, secret: secret))
            case 3 where !invites.isEmpty:
                entries.append(f.entry(f.owner, ms, .inviteRevoke(invite: invites[Int(rng.next() % UInt64(invites.count))].0)))
            case 4:
                entries.append(f.entry(f.owner, ms, .memberRemove(member: devices[Int(rng.next() % 3)].publicKey, cutoff: rng.next() % 4)))
            default:
                entries.append(f.entry(devices[Int(rng.next() % 3)], ms, .memberRole(member: f.owner.publicKey, role: .viewer)))
            }
        }
        let h = Self.folded(entries, family: f.family, orders: 20)
        // Not a household where everything is refused: the family exists.
        #expect(h.owner == f.owner.publicKey && h.rejected[entries[0].id] == nil)
    }
}
