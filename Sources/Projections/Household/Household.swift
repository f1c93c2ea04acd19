import Envelope
import Foundation

/// The family's membership, decided from library events alone, so every
/// replica holding the same events reaches the same verdicts, whatever order
/// they arrived in. Built by ``init(entries:family:)`` from all library
/// events of the family, folded in the total order (hlc, author).
public struct Household: Sendable {
    /// One library event with what the fold needs.
    public struct Entry: Sendable {
        public let id: EventID
        public let version: Version
        public let seq: UInt64
        public let event: LibraryEvent
        public init(id: EventID, version: Version, seq: UInt64, event: LibraryEvent) {
            self.id = id
            self.version = version
            self.seq = seq
            self.event = event
        }
        public var author: DeviceID { version.author }
    }

    public struct Member: Sendable, Equatable {
        public let device: DeviceID
        public let name: String
        public let box: [UInt8]
        public let joined: Version
        /// The invite it joined with; `nil` for the owner.
        public let invite: InviteID?
        /// Role changes in version order; the first is the role it joined with.
        public var roles: [(Version, Role)]
        /// Set when removed: events after this seq are rejected.
        public var cutoff: UInt64?
        public var removed: Version?

        public func role(at v: Version) -> Role {
            roles.last(where: { $0.0 <= v })?.1 ?? roles[0].1
        }
        public var role: Role { roles.last!.1 }
        public var isActive: Bool { cutoff == nil }

        public static func == (a: Member, b: Member) -> Bool {
            a.device == b.device && a.name == b.name && a.box == b.box && a.joined == b.joined && a.invite == b.invite
                && a.roles.map(\.0) == b.roles.map(\.0) && a.roles.map(\.1) == b.roles.map(\.1) && a.cutoff == b.cutoff && a.removed == b.removed
        }
    }

    public struct Invite: Sendable, Equatable {
        public let id: InviteID
        public let role: Role
        public let created: Version
        public let expiresMs: UInt64
        public let verifier: [UInt8]
        /// The key epoch the invite code carries.
        public let epoch: UInt32
        public var revoked: Version?
        public var usedBy: DeviceID?
    }

    /// A device's join that did not count.
    public struct RefusedJoin: Sendable, Equatable {
        public let event: EventID
        /// The invitation it named.
        public let invite: InviteID
        public var reason: String
        /// The name the device joined under.
        public var name: String = ""
    }

    public private(set) var name: String?
    public private(set) var owner: DeviceID?
    public private(set) var members: [DeviceID: Member] = [:]
    public private(set) var invites: [InviteID: Invite] = [:]
    /// Library events that were not valid, with the reason.
    public private(set) var rejected: [EventID: String] = [:]
    /// Each device's first join that did not count (a later one may have).
    public private(set) var refusedJoins: [DeviceID: RefusedJoin] = [:]
    /// For each invitation, the device whose join the owner recorded as the
    /// one that used it (`invite.used`, the first by version): no other
    /// join with it counts, even one stamped earlier (a device whose clock
    /// is behind, or a leaked code used again).
    public private(set) var admitted: [InviteID: DeviceID] = [:]
    /// When the owner recorded each of ``admitted`` (its `invite.used`).
    public private(set) var admittedAt: [InviteID: Version] = [:]
    /// The highest key epoch a valid rotation announced.
    public private(set) var epoch: UInt32 = 0
    /// For each epoch, the devices its key was sealed to (rotation or share).
    public private(set) var keyHolders: [UInt32: Set<DeviceID>] = [:]

    /// A family nobody has created yet: the device's own, private one.
    public var isPrivate: Bool { owner == nil }

    public init() {}

    public init(entries: [Entry], family: FamilyID) {
        // In version order; an author's chain never repeats a clock, but
        // the fold must not depend on the order the entries came in even
        // for one that does (arrival order differs between replicas): the
        // sequence number, then the id, settle a tie.
        let sorted = entries.sorted(by: Self.foldsBefore)
        // The owner's records of used invitations decide joins folded
        // before them in version order too: read first.
        for e in sorted where FamilyID.owned(by: e.author) == family {
            if case .inviteUsed(let invite, let member) = e.event, admitted[invite] == nil {
                admitted[invite] = member
                admittedAt[invite] = e.version
            }
        }
        for e in sorted {
            guard let why = apply(e, family: family) else { continue }
            rejected[e.id] = why
            if case .memberJoin(let invite, let name, _, _) = e.event, refusedJoins[e.author] == nil {
                refusedJoins[e.author] = RefusedJoin(event: e.id, invite: invite, reason: why, name: name)
            }
        }
        // Folded in version order, an event dated before what it needs
        // finds nothing yet: its reason is told by what the whole fold knows
        // (a test: "no such invite" of a join dated before its invitation,
        // "never validly joined" of a member's event dated before its
        // join). The verdicts are the same.
        for e in sorted {
            guard let why = rejected[e.id] else { continue }
            if case .memberJoin(let id, _, _, _) = e.event, why.hasPrefix("no such invite"), let invite = invites[id], !(invite.created < e.version) {
                rejected[e.id] = "the join is not later than its invite"
                if refusedJoins[e.author]?.event == e.id { refusedJoins[e.author]?.reason = "the join is not later than its invite" }
            } else if why == Self.notAMember, let m = members[e.author], e.version < m.joined {
                rejected[e.id] = "written before the author joined"
            }
        }
    }

    /// The fold's order: by version, then by sequence number, then by id;
    /// total, so that any arrival order folds alike.
    static func foldsBefore(_ a: Entry, _ b: Entry) -> Bool {
        if a.version != b.version { return a.version < b.version }
        if a.seq != b.seq { return a.seq < b.seq }
        return a.id.bytes.lexicographicallyPrecedes(b.id.bytes)
    }

    public static let notAMember = "not a member of the family (never validly joined)"

    /// Why `device` is not in the family, when the events held decide it: the
    /// family is known, the device is not among its members, and a join of
    /// it was refused against an invitation the household holds (revoked,
    /// expired, used by another device…). `nil` otherwise — also for a join
    /// whose invitation has not arrived yet ("no such invite"), which may
    /// still count once the owner's events are in.
    public func refusedJoin(of device: DeviceID) -> RefusedJoin? {
        guard owner != nil, members[device] == nil, let refused = refusedJoins[device], invites[refused.invite] != nil else { return nil }
        return refused
    }

    /// Applies one library event in order; returns the reason it is invalid, if it is.
    private mutating func apply(_ e: Entry, family: FamilyID) -> String? {
        if case .familyCreate(let name, let ownerName, let box) = e.event {
            guard FamilyID.owned(by: e.author) == family else { return "only the device the family id was derived from can create it" }
            guard owner == nil else { return "the family was already created" }
            owner = e.author
            self.name = name
            members[e.author] = Member(device: e.author, name: ownerName, box: box, joined: e.version, invite: nil, roles: [(e.version, .owner)])
            return nil
        }
        guard let owner else { return "no family has been created (its first event is missing)" }
        if case .memberJoin(let id, let name, let box, let proof) = e.event {
            if let m = members[e.author] { return m.isActive ? "already a member" : "a removed device cannot join again; a new device joins instead" }
            guard var invite = invites[id] else { return "no such invite \(id.hex.prefix(8))" }
            guard invite.created < e.version else { return "the join is not later than its invite" }
            if let r = invite.revoked, r < e.version { return "the invite was revoked" }
            guard e.version.hlc.milliseconds <= invite.expiresMs else { return "the invite had expired" }
            if let used = admitted[id], used != e.author {
                return "the invite was already used: the owner counted the join of device \(used.short)"
            }
            guard invite.usedBy == nil else { return "the invite was already used" }
            guard JoinProof.verify(proof: proof, verifier: invite.verifier, family: family, invite: id, device: e.author) else {
                return "the join does not prove possession of the invite secret"
            }
            invite.usedBy = e.author
            invites[id] = invite
            keyHolders[invite.epoch, default: []].insert(e.author)
            members[e.author] = Member(device: e.author, name: name, box: box, joined: e.version, invite: id, roles: [(e.version, invite.role)])
            return nil
        }
        if let why = writeVerdict(author: e.author, seq: e.seq, version: e.version, needsWrite: false) { return why }
        guard e.author == owner else { return "only the owner may \(Self.verb(e.event))" }
        switch e.event {
        case .inviteCreate(let id, let role, let expires, let verifier, let epoch):
            guard invites[id] == nil else { return "invite \(id.hex.prefix(8)) already exists" }
            invites[id] = Invite(id: id, role: role, created: e.version, expiresMs: expires, verifier: verifier, epoch: epoch)
        case .inviteRevoke(let id):
            guard var invite = invites[id] else { return "no such invite \(id.hex.prefix(8))" }
            if invite.revoked == nil { invite.revoked = e.version }
            invites[id] = invite
        case .inviteUsed(let id, _):
            guard invites[id] != nil else { return "no such invite \(id.hex.prefix(8))" }
        case .memberRemove(let device, let cutoff):
            guard device != owner else { return "the owner cannot be removed" }
            guard var m = members[device] else { return "no such member \(device.short)" }
            m.cutoff = min(m.cutoff ?? cutoff, cutoff)
            if m.removed == nil { m.removed = e.version }
            members[device] = m
        case .memberRole(let device, let role):
            guard device != owner else { return "the owner's role cannot change" }
            guard var m = members[device], m.isActive else { return "no such active member \(device.short)" }
            m.roles.append((e.version, role))
            members[device] = m
        case .keyRotate(let epoch, let sealed):
            self.epoch = max(self.epoch, epoch)
            keyHolders[epoch, default: []].formUnion(sealed.keys)
        case .keyShare(let epoch, let member, _):
            keyHolders[epoch, default: []].insert(member)
        case .keyPrevious:
            break
        case .familyCreate, .memberJoin:
            break
        }
        return nil
    }

    static func verb(_ e: LibraryEvent) -> String {
        switch e {
        case .inviteCreate: "invite"
        case .inviteRevoke: "revoke invites"
        case .inviteUsed: "record whose join used an invitation"
        case .memberRemove: "remove members"
        case .memberRole: "change roles"
        case .keyRotate, .keyPrevious, .keyShare: "manage keys"
        case .familyCreate, .memberJoin: "do this"
        }
    }

    /// Why an event by `author` at `seq`/`version` is not authorized, or `nil`.
    /// In a private family (no `family.create`) everything is.
    ///
    /// - Parameter needsWrite: record and care-subject changes need a role
    ///   that writes; viewers' are rejected.
    public func writeVerdict(author: DeviceID, seq: UInt64, version: Version, needsWrite: Bool) -> String? {
        guard let owner else { return nil }
        if author == owner { return nil }
        guard let m = members[author] else { return Self.notAMember }
        if version < m.joined { return "written before the author joined" }
        if let cutoff = m.cutoff, seq > cutoff { return "beyond its author's removal (seq \(seq), past the cut-off \(cutoff): the last of its events the owner had when removing it)" }
        if needsWrite && !m.role(at: version).canWrite { return "viewers cannot change records or care subjects" }
        return nil
    }

    /// What ``writeVerdict(author:seq:version:needsWrite:)`` decides for one
    /// author's changes, as a value: everything it reads of the household
    /// for that author, and nothing else.
    public enum VerdictRule: Equatable, Sendable {
        /// A private family's device, or the owner: every change counts.
        case everything
        /// Not a member: no change counts.
        case nothing
        /// A member: what it joined at, its cut-off, its roles in version order.
        case member(joined: Version, cutoff: UInt64?, roleVersions: [Version], roles: [Role])
    }

    public func verdictRule(for author: DeviceID) -> VerdictRule {
        guard let owner, author != owner else { return .everything }
        guard let m = members[author] else { return .nothing }
        return .member(joined: m.joined, cutoff: m.cutoff, roleVersions: m.roles.map(\.0), roles: m.roles.map(\.1))
    }

    /// Whether any change by `authors` is judged otherwise by `other` than by
    /// this household: the changes already projected need judging again
    /// (a rebuild) only then. A household event that changes no rule of an
    /// author with changes (an invitation, a revocation, a join of a device
    /// that has written nothing yet) leaves every verdict as it was.
    public func judgesOtherwise(than other: Household, anyOf authors: Set<DeviceID>) -> Bool {
        authors.contains { verdictRule(for: $0) != other.verdictRule(for: $0) }
    }

    /// Members who should hold the key of `epoch` but have not had it sealed to
    /// them: active members who joined with an older key.
    public func membersMissingKey(epoch: UInt32) -> [Member] {
        guard epoch > 0 else { return [] }
        let holders = keyHolders[epoch] ?? []
        return members.values.filter { $0.isActive && $0.device != owner && !holders.contains($0.device) }
            .sorted { $0.device < $1.device }
    }
}
