import Envelope
import EventLog
import Foundation
import Projections

/// `famctl invite [--role member|viewer] [--expires 7d]`, `--revoke ID`, `--list`
enum InviteCommand: Command {
    static let spec = CommandSpec(
        path: ["invite"],
        abstract: "Invite a device into the family (owner only): prints a one-line invitation code.",
        discussion: """
            The code is a bearer capability: whoever holds it can join once, until it
            expires or is revoked. It carries the family id, a secret, the current key,
            the owner's device key and where the family's events are; send it privately.
            --revoke ID withdraws an invitation and rotates the family's key (unless it
            was rotated since the invitation was made), so that whoever holds the code can
            neither join nor read what is written under the new key (what was written
            before stays readable with it, as does what other devices write before the new
            key reaches them). --list shows those still open.
            """,
        options: [
            .value("--role", "ROLE", "member (reads and writes, the default) or viewer (reads only)."),
            .value("--expires", "DURATION", "How long the code is valid: 30m, 12h, 7d (the default), 2w; from 1m to 90d."),
            .value("--revoke", "ID", "Revoke the invitation with this id (or a prefix of it), or the one this code is of."),
            .flag("--list", "List the open invitations."),
        ],
        // Three things to do: make a code (--role, --expires), revoke one, list them.
        choices: [OptionChoice(names: ["--list", "--revoke", "--role"]), OptionChoice(names: ["--list", "--revoke", "--expires"])])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        try home.requireOwner(toDo: "invite, revoke or list invitations")
        if inv.flag("--list") { return try list(home, json: inv.json) }
        if let prefix = inv.value("--revoke") {
            // An empty id (a script's unset variable) would match any invitation.
            guard !prefix.isEmpty else { throw CLIError.usage("--revoke needs an invitation's id (or a prefix of it), not an empty one", hint: "'famctl invite --list' lists the open invitations.") }
            // The code itself names its invitation: the way to an expired
            // one's, which no list shows (a security review).
            // (Blanks a paste brings aside, as the code's reader takes them: never echoed as an id.)
            if prefix.filter({ !$0.isWhitespace }).lowercased().hasPrefix(InviteCode.prefix) {
                let code: InviteCode
                do { code = try InviteCode(parsing: prefix) } catch {
                    throw CLIError.data("--revoke: not an invitation code of this famctl: \(error)", hint: "Give the code as it was given, or the invitation's id ('famctl invite --list').")
                }
                guard code.family == home.family else {
                    throw CLIError.data("--revoke: that code is of another family (\(code.family)), not this one's", hint: "Revoke it from the home of that family's owner.")
                }
                return try revoke(code.invite.hex, home: home, json: inv.json)
            }
            return try revoke(prefix.lowercased(), home: home, json: inv.json)
        }

        let role = try inv.value("--role").map { r -> Role in
            guard let role = Role(rawValue: r), role != .owner else {
                throw CLIError.data("--role '\(r)' is neither member nor viewer", hint: ValueHint.otherCase(r, among: ["member", "viewer"], as: "--role "))
            }
            return role
        } ?? .member
        let duration = try parseDuration(inv.value("--expires") ?? "7d")
        let (family, key) = try home.currentKey()
        let secret = Sodium.randomSecret(32)
        let id = InviteID.random()
        let expires = HLC.milliseconds(of: Date().addingTimeInterval(duration))
        let verifier = JoinProof.key(secret: secret).publicKey.bytes
        let env = try home.append([LibraryEvent.inviteCreate(invite: id, role: role, expiresMs: expires, verifier: verifier, epoch: key.epoch).body])[0]
        let code = InviteCode(family: family, invite: id, secret: secret, owner: home.deviceID, key: key, role: role,
                              expiresMs: expires, issued: env.hlc, location: Location.stored(in: home).inviteLocation)
        // The invitation is shared at once: a device that accepts the code
        // before this one's next sync would otherwise find its join naming
        // an invitation nobody has seen, and its records not counted.
        let unpublished = SyncCommand.publishNow(home)
        // The folder, read first, showed this copy of the home forked: the
        // invitation can never reach the family, and no code is given (a
        // review: one was printed, with "sync before sending it").
        try home.refuseIfOwnChainForked("the invitation", "no code was given")
        if let unpublished {
            Console.err("famctl: warning: the invitation is not in the shared folder yet (\(unpublished))")
            Console.err("famctl: Run 'famctl sync' before sending the code: until the invitation is there, the new device's join and what it records do not count.")
        }
        if inv.json {
            Console.json(["code": code.text, "invite": id.hex, "role": role.rawValue, "expires": TimeText.format(Date(timeIntervalSince1970: Double(expires) / 1000)),
                          "published": unpublished == nil])
        } else {
            Console.out(code.text)
        }
    }

    static func parseDuration(_ s: String) throws(CLIError) -> TimeInterval {
        let units: [Character: TimeInterval] = ["m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let unit = s.last, let seconds = units[unit], let n = DecimalText.parse(String(s.dropLast())), n >= 0 else {
            throw .data("--expires '\(s)' is not a duration", hint: "Use a number and a unit: 30m, 12h, 7d, 2w.")
        }
        guard n * seconds <= 90 * 86_400 else { throw .data("--expires is at most 90d") }
        // Shorter, the code would expire before anyone could type it in.
        guard n * seconds >= 60 else { throw .data("--expires is at least 1m", hint: "A code must live long enough to reach the other device: 30m, 12h, 7d.") }
        return n * seconds
    }

    static func openInvites(_ home: Home) -> [Household.Invite] {
        let now = HLC.milliseconds(of: Date())
        return home.projector.household.invites.values
            .filter { $0.usedBy == nil && $0.revoked == nil && $0.expiresMs >= now }
            .sorted { $0.created < $1.created }
    }

    static func list(_ home: Home, json: Bool) throws {
        // Joins made since the last sync, read first: their codes are used, not open.
        if let why = SyncCommand.pullNow(home) {
            Console.err("famctl: note: the family's events could not be read first (\(why)); an invitation used since the last sync still shows as open.")
        }
        let open = openInvites(home)
        if json {
            Console.json(open.map { ["invite": $0.id.hex, "role": $0.role.rawValue, "created": TimeText.format($0.created.hlc.date),
                                     "expires": TimeText.format(Date(timeIntervalSince1970: Double($0.expiresMs) / 1000))] })
            return
        }
        if open.isEmpty { Console.out("(no open invitations)") }
        for i in open {
            Console.out("\(i.id.hex)  \(i.role.rawValue)  created \(TimeText.format(i.created.hlc.date))  expires \(TimeText.format(Date(timeIntervalSince1970: Double(i.expiresMs) / 1000)))")
        }
    }

    static func revoke(_ prefix: String, home: Home, json: Bool) throws {
        // A device may have joined with it since this one last synced: its
        // join, once read, says the invitation was used (a member to
        // remove, not a code to revoke).
        if let why = SyncCommand.pullNow(home) {
            Console.err("famctl: note: the family's events could not be read first (\(why)); a device that joined with this invitation since the last sync is not known here.")
        }
        let matches = home.projector.household.invites.values.filter { $0.id.hex.hasPrefix(prefix) }
        guard matches.count == 1, let invite = matches.first else {
            throw CLIError.data(matches.isEmpty ? "no invitation \(prefix)" : "'\(prefix)' matches \(matches.count) invitations; give more of the id",
                                hint: "'famctl invite --list' lists the open invitations with their ids; for one that expired, give its code: 'famctl invite --revoke CODE'.")
        }
        if let joined = invite.usedBy {
            // Who joined with it, to remove (a user review: not named).
            let member = home.projector.household.members[joined]
            let who = member.map { "\"\($0.name)\" (device \(joined.short))" } ?? "device \(joined.short)"
            if member?.cutoff != nil {
                throw CLIError.data("invitation \(invite.id.hex) was already used: \(who) joined with it, and was removed since", hint: "Nothing more to do: a used invitation lets no one else join.")
            }
            throw CLIError.data("invitation \(invite.id.hex) was already used: \(who) joined with it",
                                hint: "Remove that member instead: famctl member remove \(joined.short).")
        }
        if invite.revoked != nil {
            // Already done: nothing more to do.
            if json { Console.json(["revoked": invite.id.hex, "epoch": Int(try home.currentKey().1.epoch)]) } else { Console.out("invitation \(invite.id.hex) was already revoked") }
            return
        }
        // The code carries the family's key of its day: whoever holds it could
        // read everything written under that key, joined or not. A new key,
        // sealed to the members, keeps what is written from now on from the
        // code; unless the key has changed since the invitation was made
        // (the code cannot climb to a later key: each `key.previous` is under
        // the key after it).
        let current = try home.currentKey().1.epoch
        guard invite.epoch >= current else {
            // Sealed with the key the code carries (as `invite.used` is): the
            // device holding the code holds only that one, and must be able
            // to read that its join does not count (a user trial: under the
            // current key it could not, and took itself for a member).
            guard let codeKey = try home.state.keyring.key(family: home.family, epoch: invite.epoch) else {
                throw CLIError.data("this device does not hold the key of epoch \(invite.epoch), which invitation \(invite.id.hex) carries")
            }
            try home.append([(LibraryEvent.inviteRevoke(invite: invite.id).body, codeKey)])
            // Sent at once, as the invitation was: until the others have it,
            // a join with the code looks to them like a member's.
            try SyncCommand.publishChange(home, what: "the revocation")
            if json { Console.json(["revoked": invite.id.hex, "epoch": Int(current)]) } else {
                Console.out("revoked \(invite.id.hex); the key was rotated after it was made (its code holds epoch \(invite.epoch), the family is at \(current)), so no new rotation is needed")
            }
            return
        }
        let rotated = try home.appendRotatingKey(after: [LibraryEvent.inviteRevoke(invite: invite.id).body])
        try SyncCommand.publishChange(home, what: "the revocation")
        if json {
            Console.json(["revoked": invite.id.hex, "epoch": Int(rotated.epoch)])
        } else {
            Console.out("revoked \(invite.id.hex); key rotated to epoch \(rotated.epoch) for \(rotated.sealedTo) member(s), so the code cannot read what is written under the new key "
                        + "(a device that joined with it before now, by its clock, and has not synced yet is a member all the same, but gets no key until you admit it: the next sync names it)")
        }
    }
}
