import Envelope
import EventLog
import Foundation
import Projections

/// Epoch keys: learned from the owner's key events, shared by the owner with
/// members who joined holding an older key.
extension Home {
    /// The family's owner as this device knows it: itself after `family
    /// create`, the invitation's owner key after `accept`.
    var knownOwner: DeviceID? { (try? state.get(.owner)).flatMap { $0 }.flatMap(DeviceID.init(hex:)) }

    /// Stores the key an owner's key event reveals to this device (sealed to
    /// it, or an earlier key carried by a later one). Only the owner's key
    /// events are trusted: anyone else could plant a key.
    /// - Returns: whether a key new to this device was stored.
    func learnKey(from event: LibraryEvent, author: DeviceID) throws -> Bool {
        guard let owner = knownOwner, author == owner else { return false }
        var found: EpochKey?
        switch event {
        case .keyRotate(let epoch, let sealed):
            if let box = sealed[deviceID], let k = identity.box.open(sealed: box), k.count == 32 { found = EpochKey(epoch: epoch, key: k) }
        case .keyShare(let epoch, let member, let sealed) where member == deviceID:
            if let k = identity.box.open(sealed: sealed), k.count == 32 { found = EpochKey(epoch: epoch, key: k) }
        case .keyPrevious(let epoch, let previous) where epoch > 0:
            found = EpochKey(epoch: epoch - 1, key: SecretBytes(previous))
        default: break
        }
        guard let found, try state.keyring.key(family: family, epoch: found.epoch) == nil else { return false }
        try state.keyring.store(found, family: family)
        return true
    }

    /// Learns the keys revealed by the household events already projected
    /// (no event is opened). Events the projection does not hold yet are
    /// read by the rebuild's pass, which learns from them too.
    func learnKeysFromProjection() throws {
        // One pass: each key event is read from its own body (a sealed box or
        // a plaintext previous key), never with a key learned from another.
        for (author, event) in try projector.libraryEvents() { _ = try learnKey(from: event, author: author) }
    }

    /// Refuses, with the reason, unless this device owns a family.
    /// - Parameter toDo: what only the owner may do, for the message.
    func requireOwner(toDo: String) throws {
        let h = projector.household
        guard !h.isPrivate else {
            if let owner = knownOwner, owner != deviceID {
                throw CLIError.data("only the family's owner can \(toDo)",
                                    hint: "This device joined a family whose events have not reached it yet ('famctl sync'); its owner is \(owner.short).")
            }
            throw CLIError.data("this device has no family yet", hint: "Create one with 'famctl family create --name NAME --dir PATH'.")
        }
        guard h.owner == deviceID else { throw CLIError.data("only the family's owner can \(toDo)") }
    }

    /// Appends `bodies` (under the current key), then rotates the family's
    /// key in the same transaction: a new epoch key sealed to every active
    /// member but `excluded`, and the previous key carried under the new one,
    /// so that whoever holds only an earlier key (a removed device, a leaked
    /// invitation code) cannot read what is written afterwards, while every
    /// member, and every device that joins later, still reads the history.
    /// - Returns: the new key's epoch and how many members it was sealed to.
    func appendRotatingKey(after bodies: [EventBody], excluding excluded: DeviceID? = nil) throws -> (epoch: UInt32, sealedTo: Int) {
        let h = projector.household
        let (_, old) = try currentKey()
        let new = EpochKey.generate(epoch: old.epoch + 1)
        var sealed: [DeviceID: [UInt8]] = [:]
        // A member whose join arrived late gets no key until the owner admits it.
        var held: [Household.Member] = []
        for m in h.members.values where m.isActive && m.device != excluded {
            if try heldJoin(m.device) != nil { held.append(m); continue }
            sealed[m.device] = BoxKey.seal(new.key, to: m.box, random: log.randomSecret(32))
        }
        defer {
            for m in held.sorted(by: { $0.device < $1.device }) {
                Console.err("famctl: note: \(m.name) (\(m.device.short)) was not given the new key: its join arrived late, and it waits for 'famctl member admit \(m.device.short)'")
            }
        }
        try append(bodies.map { ($0, old) } + [
            (LibraryEvent.keyRotate(epoch: new.epoch, sealed: sealed).body, old),
            (LibraryEvent.keyPrevious(epoch: new.epoch, previousKey: old.key.copyBytes()).body, new),
        ], check: {
            // Another process of this owner rotated meanwhile: this rotation's
            // events are sealed under a key that is no longer the next one.
            guard try currentKey().1.epoch == old.epoch else {
                throw CLIError(.tempFail, "the family's key was rotated by another famctl process meanwhile; nothing was written",
                               hint: "Run the command again.")
            }
            // The log holds events sealed under this epoch or a later one that
            // this device cannot open, its own or an active member's: its own
            // chain went further (a home restored from a backup), or the
            // member writes under a key nobody made. A new key for that
            // epoch would hide them (``noteUnopened(author:epoch:)``).
            if let (author, seen) = try unopenedEpoch(from: new.epoch, excluding: excluded) {
                if author == deviceID {
                    throw CLIError(.tempFail, "this device's log holds events sealed under key epoch \(seen), which it does not hold: its own history went further than this home (restored from a backup?); nothing was written",
                                   hint: "Run 'famctl sync' until its own events are back in, then run the command again.")
                }
                let name = h.members[author].map { "\($0.name) (\(author.short))" } ?? author.short
                throw CLIError(.tempFail, "this device's log holds events of \(name) sealed under key epoch \(seen), which this device does not hold: "
                               + "a new key of that epoch would hide them; nothing was written",
                               hint: "If this home was restored from a backup, its own later history (which made that key) has not come back yet: run 'famctl sync' until it has, "
                                   + "then run the command again. If not, \(name) writes under a key the family never made: 'famctl member remove \(author.short)' removes it, which this does not block.")
            }
            // In the append's transaction, before its key event is applied:
            // the key is this device's own, nothing was sealed under it yet,
            // so the projection reflects it already (no rebuild for it).
            try state.keyring.store(new, family: family)
            try projector.noteKeys([new.epoch])
        })
        return (new.epoch, sealed.count)
    }

    /// Notes an event of `author` sealed under `epoch`, a key this device
    /// does not hold: only the owner makes keys, so such an event by this
    /// device (its own later history, in a home restored from a backup) or
    /// by a member (who had that key from the owner's later history) says
    /// the family's keys went further than this home knows, and the owner
    /// must not make another key of that epoch. A stranger's event (no
    /// member: a key anyone can make up, planted in the shared folder) says
    /// nothing, and is not noted: it would stop the owner rotating for good.
    func noteUnopened(author: DeviceID, epoch: UInt32) throws {
        guard author == deviceID || projector.household.members[author] != nil else { return }
        var noted = try unopenedEpochs()
        guard noted[author].map({ $0 < epoch }) ?? true else { return }
        noted[author] = epoch
        try storeUnopened(noted)
    }

    /// The epochs noted by ``noteUnopened(author:epoch:)``, by author. A
    /// home written by an earlier famctl noted one epoch, from anyone's
    /// event: the log is read again once to note them by author.
    func unopenedEpochs() throws -> [DeviceID: UInt32] {
        guard let text = try state.get(.unopenedEpoch), !text.isEmpty else { return [:] }
        if UInt32(text) == nil {
            var out: [DeviceID: UInt32] = [:]
            for pair in text.split(separator: ",") {
                let parts = pair.split(separator: ":")
                guard parts.count == 2, let a = DeviceID(hex: String(parts[0])), let e = UInt32(parts[1]) else { continue }
                out[a] = e
            }
            return out
        }
        let held = try state.keyring.epochs(family: family)
        let members = projector.household.members
        var out: [DeviceID: UInt32] = [:]
        try log.forEachEvent(in: family) { e in
            guard e.bytes.count >= 110 else { return }
            let epoch = e.bytes[106..<110].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard !held.contains(epoch), e.author == deviceID || members[e.author] != nil else { return }
            out[e.author] = max(out[e.author] ?? 0, epoch)
        }
        try storeUnopened(out)
        return out
    }

    private func storeUnopened(_ noted: [DeviceID: UInt32]) throws {
        if noted.isEmpty { try state.remove(.unopenedEpoch); return }
        try state.set(.unopenedEpoch, noted.map { "\($0.key.hex):\($0.value)" }.sorted().joined(separator: ","))
    }

    /// An author whose events say the family has a key of `epoch` or a later
    /// one that this device does not hold, and that epoch: this device
    /// first, else an active member but `excluded` (the member a removal
    /// takes out: its own events cannot stop its removal). `nil` for none.
    func unopenedEpoch(from epoch: UInt32, excluding excluded: DeviceID?) throws -> (DeviceID, UInt32)? {
        let members = projector.household.members
        let candidates = try unopenedEpochs().filter { author, seen in
            seen >= epoch && (author == deviceID || (members[author]?.isActive == true && author != excluded))
        }
        for (author, seen) in candidates.sorted(by: { ($0.key != deviceID ? 1 : 0, $0.key.hex) < ($1.key != deviceID ? 1 : 0, $1.key.hex) })
        where try state.keyring.key(family: family, epoch: seen) == nil {
            return (author, seen)
        }
        return nil
    }

    /// Why the join of `device` waits for the owner's word before the owner
    /// seals it the family's key, on the owner's device: it reached this
    /// device after its invitation was revoked, or more than
    /// ``expiryGrace`` after it expired, dated before by the joining
    /// device's own clock. `nil` for any other member, one the owner
    /// admitted (`member admit`), and one it sealed a key to before (a key
    /// of a later epoch than its invitation's: admitted already).
    func heldJoin(_ device: DeviceID) throws -> String? {
        let h = projector.household
        // The owner's device alone decides, by when the join reached it (a
        // review: members' devices showed it by when it reached them).
        guard h.owner == deviceID, let m = h.members[device], m.isActive, let id = m.invite, let invite = h.invites[id],
              let arrived = try log.receivedAt(of: device, seq: 1, in: family) else { return nil }
        let expires = Date(timeIntervalSince1970: Double(invite.expiresMs) / 1000)
        // The owner recorded the join in time (its `invite.used`, dated
        // before the revocation, or within the grace after the expiry): it
        // arrived in time then, and arrives late now only in an owner's
        // home restored from an older backup (a review: an honest member
        // was held after such a restore).
        if h.admitted[id] == device, let recorded = h.admittedAt[id] {
            let inTime = invite.revoked.map { recorded.hlc < $0.hlc } ?? (recorded.hlc.date <= expires.addingTimeInterval(Self.expiryGrace))
            if inTime { return nil }
        }
        let why: String
        if let revoked = invite.revoked, arrived > revoked.hlc.date {
            why = "joined with invitation \(id.hex.prefix(8)) before it was revoked, by its clock, but its join reached this device after the revocation "
                + "(revoked \(TimeText.format(revoked.hlc.date)), arrived \(TimeText.format(arrived)))"
        } else if arrived > expires.addingTimeInterval(Self.expiryGrace) {
            why = "joined with invitation \(id.hex.prefix(8)), which had expired when its join reached this device "
                + "(expired \(TimeText.format(expires)), arrived \(TimeText.format(arrived))); its clock dates the join in time"
        } else {
            return nil
        }
        if try admittedLate().contains(device.hex) { return nil }
        if h.keyHolders.contains(where: { $0.key > invite.epoch && $0.value.contains(device) }) { return nil }
        return why
    }

    /// What a member that the family's events show to lack the current key
    /// is told (a review: a member the owner held back saw no word of it,
    /// only records missing): the epoch and who wrote under it. `nil` when
    /// it holds every key the others' events name, or is the owner.
    func keyNotGiven() -> String? {
        let h = projector.household
        // A removed device gets no key, nor one whose join was refused: said apart.
        guard !h.isPrivate, h.owner != deviceID, h.members[deviceID]?.isActive == true, let current = try? state.keyring.current(family: family),
              let seen = try? unopenedEpochs() else { return nil }
        let others = seen.filter { $0.key != deviceID && $0.value > current.epoch }
        guard let newest = others.values.max() else { return nil }
        let head = "the family writes under key epoch \(newest), which this device has not been given (it holds epoch \(current.epoch)): what is sealed under it does not show here. "
        // No rotation past its key read yet: it brings the key (a review: a
        // member told it might be held while the rotation was on its way).
        // (One it read left it out; later ones are sealed under keys it lacks.)
        guard h.epoch > current.epoch else { return head + "The owner's new key has not reached this device yet: a later sync brings it." }
        // Read, and this device left out: sealed to it later by a share,
        // unless its join reached the owner late.
        let late = h.members[deviceID].flatMap { m in m.invite.flatMap { h.invites[$0] } }.map { invite in
            invite.revoked != nil || Date(timeIntervalSince1970: Double(invite.expiresMs) / 1000) < Date()
        } ?? false
        return head + "The owner's device gives it to each member at its next sync"
            + (late ? ", unless this device's join reached it after its invitation was revoked or had expired: it then waits for the owner's 'famctl member admit \(deviceID.short)'." : ".")
    }

    /// Tells the owner, once for each, of a join refused because another
    /// device used its invitation first: the code reached more than one
    /// device (a leak, or given twice), and the one that counts may not be
    /// the device the owner invited (a review: only the refused device
    /// heard of it, and only the owner can remove the other).
    func warnReusedInvitations() throws {
        let h = projector.household
        guard h.owner == deviceID else { return }
        let said = Set(((try state.get(.reusedInviteSaid)) ?? "").split(separator: ",").map(String.init))
        var newly: [String] = []
        for (device, refused) in h.refusedJoins.sorted(by: { $0.key < $1.key })
        where refused.reason.hasPrefix("the invite was already used") && !said.contains(refused.event.hex) && h.members[device] == nil {
            guard let winner = h.invites[refused.invite]?.usedBy, let m = h.members[winner] else { continue }
            let counted = "\(TerminalText.name(m.name)) (\(winner.short))"
            Console.err("famctl: warning: invitation \(refused.invite.hex.prefix(8)) was used by two devices: \(counted) joined with it and counts"
                        + (m.isActive ? "" : " (removed since)") + "; \(TerminalText.name(refused.name)) (\(device.short)) joined with it too and was refused. "
                        + "Its code reached more than one device. If \(counted) is not the device you gave it to, "
                        + (m.isActive ? "remove it ('famctl member remove \(winner.short)') and " : "")
                        + "give the right device a new invitation ('famctl invite').")
            newly.append(refused.event.hex)
        }
        if !newly.isEmpty { try state.set(.reusedInviteSaid, (Array(said) + newly).sorted().joined(separator: ",")) }
    }

    /// Lets a member whose join arrived late (``heldJoin(_:)``) have the
    /// family's key: recorded, then the key is sealed to it.
    func admitLateJoin(_ device: DeviceID) throws {
        try log.database.transaction(.immediate) {
            var admitted = try admittedLate()
            if !admitted.contains(device.hex) { admitted.append(device.hex) }
            try state.set(.admittedLate, admitted.joined(separator: ","))
        }
        try shareKeysIfOwner()
    }

    /// The devices (hex) `member admit` let have the key.
    private func admittedLate() throws -> [String] {
        ((try state.get(.admittedLate)) ?? "").split(separator: ",").map(String.init)
    }

    /// How long after an invitation's expiry a join may reach the owner
    /// before the owner is warned: a device that joined in time and synced
    /// a little later is not suspect.
    static let expiryGrace: TimeInterval = 3600

    /// What the owner owes the family after taking in events: it records,
    /// for each invitation used, whose join counted (`invite.used`: no
    /// other join with that code counts afterwards, whatever its clock
    /// says, so that a leaked code used again cannot take a member's place),
    /// and seals the current key to each active member who joined with an
    /// older one (an invitation made before a rotation it then missed).
    /// One append: the events it writes are not owed again by the
    /// ``settle()`` that follows.
    func shareKeysIfOwner() throws {
        guard projector.household.owner == deviceID, let current = try state.keyring.current(family: family) else { return }
        try warnReusedInvitations()
        // A forked chain must not append, nor one whose own later events are
        // still arriving, or were taken out of its log after it published
        // them (the share would throw at every round, and the pull would
        // read the same file again and again, or end before its report).
        guard try !log.isForked(deviceID, in: family), try log.pendingCount(of: deviceID, in: family, above: log.head(of: deviceID, in: family).seq) == 0, try publishedPastLog() == nil else { return }
        let h = projector.household
        // Each record of a used invitation, and each share, is written under
        // the key the member joined with: the one it can open. Only a share's
        // sealed box carries the new key.
        var shares: [(EventBody, EpochKey)] = []
        for invite in h.invites.values.sorted(by: { $0.created < $1.created }) where h.admitted[invite.id] == nil {
            guard let used = invite.usedBy,
                  let readable = try state.keyring.key(family: family, epoch: invite.epoch) else { continue }
            shares.append((LibraryEvent.inviteUsed(invite: invite.id, member: used).body, readable))
            // Expiry and revocation are judged by the join's own clock: one
            // that reached the owner after the invitation was revoked, or well
            // after it expired, came from a device that accepted offline, or
            // from a leaked code used with a clock set back. It is a member
            // (every device judges so), but gets no key until the owner
            // admits it. Said once, as it is recorded (and by `members`).
            if let m = h.members[used], let why = try heldJoin(used) {
                Console.err("famctl: warning: \(m.name) (\(used.short)) \(why): it is a member, but gets no new key (it cannot read what the family writes under a key made after its invitation) until you admit it: "
                            + "'famctl member admit \(used.short)'. If you did not expect it, remove it: 'famctl member remove \(used.short)'.")
            }
        }
        let missing = h.membersMissingKey(epoch: current.epoch)
        for m in missing where try heldJoin(m.device) == nil {
            let joinedEpoch = m.invite.flatMap { h.invites[$0]?.epoch } ?? 0
            guard let readable = try state.keyring.key(family: family, epoch: joinedEpoch) else { continue }
            shares.append((LibraryEvent.keyShare(epoch: current.epoch, member: m.device, sealed: BoxKey.seal(current.key, to: m.box, random: log.randomSecret(32))).body, readable))
        }
        if !shares.isEmpty { try append(shares) }
    }
}
