import Envelope
import EventLog
import Foundation
import Projections

/// `famctl members`
enum MembersCommand: Command {
    static let spec = CommandSpec(
        path: ["members"],
        abstract: "List the family's devices: name, device id, role, state, when they joined, by which invitation.")

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let h = home.projector.household
        guard !h.isPrivate else {
            let waiting = home.knownOwner != nil
            if inv.json {
                Console.json(["family": home.family.description, "members": [[String: Any]](), "waitingForFamilyEvents": waiting] as [String: Any])
            } else {
                Console.out(waiting ? "(joined family \(home.family); its members are listed once the family's events arrive: famctl sync)"
                                    : "(no family: this device keeps its records on its own)")
            }
            return
        }
        var rows: [[String: Any]] = h.members.values.sorted { $0.joined < $1.joined }.map { m in
            ["name": m.name, "device": m.device.hex, "role": m.role.rawValue, "state": m.isActive ? "active" : "removed",
             // On the owner's device, a join that arrived late waits for its word (`member admit`).
             "keyWithheld": ((try? home.heldJoin(m.device)) ?? nil) != nil,
             "joined": TimeText.format(m.joined.hlc.date), "invite": m.invite?.hex ?? NSNull(), "me": m.device == home.deviceID,
             "inviteRevoked": m.invite.flatMap { h.invites[$0]?.revoked } != nil]
        }
        let now = HLC.milliseconds(of: Date())
        for i in h.invites.values.sorted(by: { $0.created < $1.created }) where i.usedBy == nil && i.revoked == nil && i.expiresMs >= now {
            rows.append(["name": NSNull(), "device": NSNull(), "role": i.role.rawValue, "state": "pending",
                         "joined": NSNull(), "invite": i.id.hex, "me": false, "keyWithheld": false])
        }
        if inv.json { Console.json(["family": home.family.description, "name": h.name ?? NSNull(), "members": rows] as [String: Any]); return }
        Console.out("family \"\(h.name ?? "?")\" (\(home.family))")
        for r in rows {
            let name = (r["name"] as? String).map(TerminalText.name) ?? "(invitation)"
            let device = (r["device"] as? String).map { String($0.prefix(12)) } ?? "-"
            let me = (r["me"] as? Bool) == true ? " (this device)" : ""
            let joined = (r["joined"] as? String).map { "joined \($0)" } ?? "not yet joined"
            let invite = (r["invite"] as? String).map { id in
                "invite \(id.prefix(8))" + ((r["inviteRevoked"] as? Bool) == true ? " (revoked after it was used)" : "")
            } ?? "created the family"
            let held = (r["keyWithheld"] as? Bool) == true ? " (no key until admitted: 'famctl member admit \(device)')" : ""
            Console.out("  \(name)\(me)  \(device)  \(r["role"]!)  \(r["state"]!)\(held)  \(joined)  \(invite)")
        }
    }
}

/// Finds a member by name or by (a prefix of) its device id.
enum MemberLookup {
    static func find(_ text: String, in h: Household) throws(CLIError) -> Household.Member {
        // An empty argument (a script's unset variable) names no one.
        guard !text.isEmpty else { throw .usage("MEMBER is empty: give a member's name or a prefix of its device id ('famctl members' lists them)") }
        let byName = h.members.values.filter { $0.name == text }
        if byName.count == 1 { return byName[0] }
        // A removed member's name taken again by a member: the one in the
        // family is meant (a review: refused as ambiguous).
        if byName.count > 1, byName.filter(\.isActive).count == 1 { return byName.first(where: \.isActive)! }
        if byName.count > 1 {
            let ids = byName.map(\.device).sorted { $0.hex < $1.hex }
            throw .data("\(byName.count) members are called \"\(text)\" (devices \(ids.map(\.short).joined(separator: ", "))); give the device id",
                        hint: "A start of it is enough, for example '\(ids[0].hex.prefix(4))'; 'famctl members' lists them.")
        }
        // A name differing only in case is most likely the one meant.
        let alike = h.members.values.filter { $0.name.lowercased() == text.lowercased() }.map(\.name)
        let byID = h.members.values.filter { $0.device.hex.hasPrefix(text.lowercased()) }
        // Letters' case aside, as `--focus` takes a subject's name: the one
        // member of that name (the one in the family, should a removed one
        // share it), unless the text is the start of a device id too (a review).
        // A refused join of exactly that name is meant rather (said below,
        // a review: the member of the name in another case was removed).
        let refusedOfName = h.refusedJoins.contains { $0.value.name == text }
        if byName.isEmpty, !refusedOfName, byID.isEmpty || text.count < 4 {
            let same = h.members.values.filter { $0.name.lowercased() == text.lowercased() }
            let inFamily = same.filter(\.isActive)
            if same.count == 1 { return same[0] }
            if inFamily.count == 1 { return inFamily[0] }
        }
        // A device whose join was refused, by the name it joined under (no
        // member has that name), or by its id: before a name that is also a
        // short start of some member's id ("C") is taken for one.
        let refusedByName = byName.isEmpty ? h.refusedJoins.filter { $0.value.name == text }.keys.sorted() : []
        if byID.count == 1, text.count < 4, refusedByName.isEmpty {
            if alike.count == 1 { throw .data("no member \"\(text)\"", hint: "Names are matched exactly: did you mean \"\(alike[0])\"?") }
            throw .data("'\(text)' is too short for a device id: give at least 4 of its characters", hint: "'famctl members' lists them.")
        }
        if let refused = refusedByName.first ?? (byID.isEmpty && text.count >= 4 ? h.refusedJoins.keys.sorted().first(where: { $0.hex.hasPrefix(text.lowercased()) }) : nil) {
            throw .data("device \(refused.short) is not a member: its join was refused (\(h.refusedJoins[refused]!.reason))",
                        hint: "Nothing of it counts in the family; there is nothing to remove or change. 'famctl status' lists the devices whose events this device holds.")
        }
        // A name given in part (`Grandma` for "Grandma's tablet").
        let starting = h.members.values.map(\.name).filter { $0.lowercased().hasPrefix(text.lowercased()) && $0 != text }.sorted()
        guard byID.count == 1 else {
            let hint: String
            if alike.count == 1 {
                hint = "Names are matched exactly: did you mean \"\(alike[0])\"?"
            } else if byID.isEmpty, !starting.isEmpty {
                // Two members of one name are told apart by their ids.
                let named = h.members.values.filter { starting.contains($0.name) }.sorted { ($0.name, $0.device.hex) < ($1.name, $1.device.hex) }
                hint = "Names are matched in full: did you mean " + named.prefix(3).map { m in
                    "\"\(m.name)\"" + (named.filter { $0.name == m.name }.count > 1 ? " (device \(m.device.short))" : "")
                }.joined(separator: " or ") + "?"
            } else {
                hint = "'famctl members' lists them; a device that joined is listed once its join reaches this device ('famctl sync')."
            }
            throw .data(byID.isEmpty ? "no member \"\(text)\"" : "'\(text)' matches \(byID.count) devices; give more of the id", hint: hint)
        }
        return byID[0]
    }
}

/// `famctl member remove MEMBER`
enum MemberRemoveCommand: Command {
    static let spec = CommandSpec(
        path: ["member", "remove"],
        abstract: "Remove a device from the family (owner only) and rotate the family's key.",
        discussion: """
            The removal names a cut-off: the device's events after the last one this device
            has are rejected everywhere, also those it wrote earlier that have not reached
            this device. A shared folder holding such events is refused (sync first), unless
            --now is given. A new key is sealed to each remaining member, so the removed device cannot
            read what is written under it; the others write under it once it reaches them
            (their next sync), and what they write before that stays readable to the removed
            device. It keeps what it already had.
            """,
        options: [.flag("--now", "Remove at once, although the shared folder holds events of the device this device has not read: they are rejected.")],
        positionals: [PositionalSpec(name: "MEMBER", help: "The member's name or device id (a prefix of at least 4 characters).")])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let h = home.projector.household
        try home.requireOwner(toDo: "remove members")
        let m = try MemberLookup.find(inv.positionals[0], in: h)
        guard m.device != home.deviceID else { throw CLIError.data("the owner cannot remove itself") }
        guard m.isActive else { throw CLIError.data("\(m.name) (\(m.device.short)) was already removed") }
        // Events it shared that this device has not read yet would fall
        // after the cut-off: written while a member, rejected all the same.
        let unsure = " If it never does (a file damaged or cut short for good, or named falsely: 'famctl status' says so), --now removes at once, rejecting them."
        if !inv.flag("--now") {
            if let ahead = try home.folderAhead(of: m.device) {
                throw CLIError(.tempFail, "the shared folder holds \(m.name)'s events up to seq \(ahead.published) (\(ahead.named)), but this device has them only up to seq \(ahead.head): "
                               + "removing now would reject those it has not read; nothing was written",
                               hint: "Run 'famctl sync' first, then remove (the cut-off is the last of its events this device has)." + unsure)
            }
            // Arrived, but waiting for earlier ones: past the cut-off too.
            if let waiting = try home.log.pendingByAuthor(in: home.family)[m.device], waiting > 0 {
                throw CLIError(.tempFail, "\(waiting) of \(m.name)'s events on this device wait for earlier ones that have not arrived: "
                               + "removing now would reject them with those; nothing was written",
                               hint: "Run 'famctl sync' until its earlier events are in ('famctl status' shows what waits), then remove." + unsure)
            }
        }
        let cutoff = try home.log.head(of: m.device, in: home.family).seq
        let rotated = try home.appendRotatingKey(after: [LibraryEvent.memberRemove(member: m.device, cutoff: cutoff).body], excluding: m.device)
        // Sent at once: until the others have it, what the removed device
        // writes still counts for them.
        try SyncCommand.publishChange(home, what: "the removal")
        if inv.json {
            Console.json(["removed": m.device.hex, "cutoff": cutoff, "epoch": Int(rotated.epoch)])
        } else {
            Console.out("Removed \(m.name) (\(m.device.short)); its events after seq \(cutoff) are rejected (the last of its events this device has; any later ones are rejected too, wherever they are). Key rotated to epoch \(rotated.epoch) for \(rotated.sealedTo) member(s): what the others write is sealed under it once their next sync brings it.")
        }
    }
}

/// `famctl member role MEMBER member|viewer`
enum MemberRoleCommand: Command {
    static let spec = CommandSpec(
        path: ["member", "role"],
        abstract: "Change a member's role (owner only): member reads and writes, viewer only reads.",
        positionals: [
            PositionalSpec(name: "MEMBER", help: "The member's name or device id."),
            PositionalSpec(name: "ROLE", help: "member or viewer."),
        ])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let h = home.projector.household
        try home.requireOwner(toDo: "change roles")
        // The role first and the member second: said as such, not as "no member \"viewer\"".
        if Role(rawValue: inv.positionals[0]) != nil, Role(rawValue: inv.positionals[1]) == nil {
            throw CLIError.usage("give the member first, then the role: famctl member role \(ShellWord.quoted(inv.positionals[1])) \(inv.positionals[0])")
        }
        let m = try MemberLookup.find(inv.positionals[0], in: h)
        guard let role = Role(rawValue: inv.positionals[1]), role != .owner else {
            throw CLIError.data("'\(inv.positionals[1])' is neither member nor viewer", hint: ValueHint.otherCase(inv.positionals[1], among: ["member", "viewer"]))
        }
        guard m.device != home.deviceID else { throw CLIError.data("the owner's role cannot change") }
        guard m.isActive else { throw CLIError.data("\(m.name) (\(m.device.short)) was removed; a removed device has no role") }
        if m.role == role {
            // Nothing to write: the same role again changes no verdict.
            if inv.json { Console.json(["member": m.device.hex, "role": role.rawValue, "changed": false]) } else { Console.out("\(m.name) is already a \(role.rawValue); nothing was written") }
            return
        }
        try home.append([LibraryEvent.memberRole(member: m.device, role: role).body])
        try SyncCommand.publishChange(home, what: "the new role")
        if inv.json { Console.json(["member": m.device.hex, "role": role.rawValue, "changed": true]) } else { Console.out("\(m.name) (\(m.device.short)) is now a \(role.rawValue)") }
    }
}

/// `famctl member admit MEMBER`
enum MemberAdmitCommand: Command {
    static let spec = CommandSpec(
        path: ["member", "admit"],
        abstract: "Let a member whose join arrived late have the family's key (owner only).",
        discussion: """
            A join that reaches the owner after its invitation was revoked, or more than an
            hour after it expired, but is dated before by the joining device's own clock,
            counts (every device judges a join by its clock), yet the owner seals it no key:
            it may come from a device that accepted offline, or from a leaked code used with
            a clock set back. Until admitted, it cannot read what the family writes under the
            current key. 'famctl members' lists such members with "no key until admitted";
            'famctl member remove' removes one that was not expected.
            """,
        positionals: [PositionalSpec(name: "MEMBER", help: "The member's name or device id (a prefix of at least 4 characters).")])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        try home.requireOwner(toDo: "admit members")
        let m = try MemberLookup.find(inv.positionals[0], in: home.projector.household)
        guard m.isActive else { throw CLIError.data("\(m.name) (\(m.device.short)) was removed; a removed device gets no key") }
        guard try home.heldJoin(m.device) != nil else {
            // Nothing held: the owner seals the key to every other member.
            if inv.json { Console.json(["member": m.device.hex, "admitted": false]) } else {
                Console.out("\(m.name) (\(m.device.short)) does not wait to be admitted (its join arrived in time, or was admitted before); nothing was written")
            }
            return
        }
        let before = try home.log.head(of: home.deviceID, in: home.family).seq
        try home.admitLateJoin(m.device)
        // No key newer than its invitation's yet: nothing to seal now.
        let sealed = try home.log.head(of: home.deviceID, in: home.family).seq > before
        if sealed { try SyncCommand.publishChange(home, what: "the key for \(m.name)") }
        if inv.json { Console.json(["member": m.device.hex, "admitted": true, "keySealed": sealed]) } else if sealed {
            Console.out("Admitted \(m.name) (\(m.device.short)): the family's key is sealed to it, and it reads what the family writes once its next sync brings the key")
        } else {
            Console.out("Admitted \(m.name) (\(m.device.short)): it holds the family's current key already (its invitation's), and gets each new key from now on")
        }
    }
}
