import Envelope
import EventLog
import Foundation
import Projections
import Replicator

/// `famctl family create --name NAME (--dir PATH | --peer URL)`
enum FamilyCreateCommand: Command {
    static let spec = CommandSpec(
        path: ["family", "create"],
        abstract: "Create a family with this device as its owner; its records so far become the family's.",
        discussion: """
            The family's first event names this device as the owner. Give one of --dir, a
            shared folder (kept in sync by Syncthing, Dropbox, iCloud Drive, NFS…), and
            --peer, a WebDAV URL: where the family's events will be exchanged. It is stored
            on this device and put into invitations.
            """,
        options: [
            .value("--name", "NAME", "(required) The family's name, e.g. \"The Lins\"."),
            .value("--dir", "PATH", "A shared directory for the family's events."),
            .value("--peer", "URL", "A WebDAV peer for the family's events (http:// or https://)."),
        ],
        choices: [OptionChoice(names: ["--dir", "--peer"], required: true)])

    static func run(_ inv: Invocation) throws {
        let name = try inv.requiredName("--name")
        let location = try Location.parse(dir: inv.value("--dir"), peer: inv.value("--peer"), required: true)
        let home = try Home.open(Home.location(inv))
        try location.checkNotFamilyFolder(of: FamilyID.owned(by: home.deviceID))
        if let owner = home.knownOwner, owner != home.deviceID {
            throw CLIError.data("this device joined the family \(home.family)", hint: "A device belongs to one family.")
        }
        guard home.family == FamilyID.owned(by: home.deviceID) else {
            throw CLIError.data("this device's home holds another device's family \(home.family)", hint: "Create the family from a home made by 'famctl init'.")
        }
        guard home.projector.household.isPrivate else {
            throw CLIError.data("this device already belongs to the family \"\(home.projector.household.name ?? "?")\"", hint: "A device belongs to one family.")
        }
        try location.store(in: home)
        try home.state.set(.owner, home.deviceID.hex)
        try home.append([LibraryEvent.familyCreate(name: name, ownerName: home.deviceName, ownerBox: home.identity.box.publicKey).body])
        if inv.json {
            Console.json(["family": home.family.description, "name": name, "owner": home.deviceID.hex])
        } else {
            Console.out("Created family \"\(name)\" (\(home.family)); this device (\(home.deviceID.short) \"\(home.deviceName)\") is its owner.")
            Console.out("Invite the others with: famctl invite")
        }
    }
}

/// `famctl family rotate-key`
enum FamilyRotateKeyCommand: Command {
    static let spec = CommandSpec(
        path: ["family", "rotate-key"],
        abstract: "Give the family a new key (owner only): what is written under it, no earlier key reads.",
        discussion: """
            A new key is sealed to each active member; whoever holds only an earlier one
            (an expired or used invitation code, a device removed before) cannot read
            what is written under it. An open invitation still lets its holder join and
            then get the new key: revoke one that may have leaked. The new key is sent to
            the shared folder at once; members get it at their next sync, and write under
            the old one until then; everything written before stays readable with the
            keys of its day. 'member remove' and
            'invite --revoke' rotate the key themselves.
            """)

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        try home.requireOwner(toDo: "rotate its key")
        try home.checkCanWrite()
        let rotated = try home.appendRotatingKey(after: [])
        // Sent at once, as a removal is: until the members have the new
        // key they write under the old one, which a leaked code reads (a
        // user review: they got it at the owner's next sync only).
        try SyncCommand.publishChange(home, what: "the new key")
        // An open invitation still lets its holder join, and a member who
        // joined gets the current key from the owner: rotating does not shut
        // such a code out.
        let open = InviteCommand.openInvites(home).count
        if inv.json {
            Console.json(["epoch": Int(rotated.epoch), "sealedTo": rotated.sealedTo, "openInvitations": open])
        } else {
            Console.out("Key rotated to epoch \(rotated.epoch) for \(rotated.sealedTo) member(s).")
        }
        if open > 0 {
            Console.err("famctl: warning: \(open) open invitation(s) can still be used to join, and whoever joins gets the new key: "
                + "revoke those that may have leaked ('famctl invite --list', 'famctl invite --revoke ID').")
        }
    }
}

/// Where a family's events are exchanged, as given on the command line.
enum Location {
    case none, directory(String), peer(String)

    /// Refuses a location that is already `family`'s own folder in a
    /// shared directory or on a server (its last part the family's id):
    /// famctl adds that folder itself, and the device would sync alone in
    /// a folder of the family nested in it (a review: a redirect's address,
    /// given as told, did that without a word).
    func checkNotFamilyFolder(of family: FamilyID) throws(CLIError) {
        let given: String, path: String, option: String
        switch self {
        case .none: return
        case .directory(let d): (given, path, option) = (d, d, "--dir")
        // The path as the server reads it: percent-escapes decoded.
        case .peer(let p): (given, path, option) = (p, URL(string: p)?.path ?? p, "--peer")
        }
        // `.` and empty parts name the folder they are in (`…/ID/.`, `…/ID//`).
        let parts = path.split(separator: "/").filter { $0 != "." }
        guard let last = parts.last, last.lowercased() == family.description.lowercased() else { return }
        let above: String
        switch self {
        case .peer(let p):
            // Scheme, host and port as given, the path without the family's part.
            var c = URLComponents(string: p)
            c?.percentEncodedPath = "/" + parts.dropLast().map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String($0) }.joined(separator: "/") + (parts.count > 1 ? "/" : "")
            above = c?.string ?? p
        default: above = "/" + parts.dropLast().joined(separator: "/")
        }
        throw .data("\(option) '\(given)' is the family's own folder (it ends in the family's id, \(family)): famctl adds that folder itself, and would sync in a folder of the family inside it, alone",
                    hint: "Give the address above it: \(option) \(ShellWord.quoted(above)).")
    }

    static func parse(dir: String?, peer: String?, required: Bool) throws(CLIError) -> Location {
        switch (dir, peer) {
        case (let d?, nil):
            // An empty path would be the working directory: refuse it as missing.
            guard !d.isEmpty else { throw .usage("option --dir needs a path, not an empty one", hint: "Pass --dir PATH: the shared directory, as this device sees it.") }
            return .directory(Home.absolute(d))
        case (nil, let p?):
            guard !p.isEmpty else { throw .usage("option --peer needs a URL, not an empty one", hint: "Pass --peer URL: the WebDAV collection's http:// or https:// URL.") }
            guard let u = URL(string: p), ["http", "https"].contains(u.scheme?.lowercased() ?? ""), u.host != nil else {
                throw .data("--peer '\(p)' is not an http:// or https:// URL")
            }
            guard u.user == nil, u.password == nil else {
                throw .data("--peer must not carry credentials", hint: "Put them in the environment or a netrc file (mode 0600), never on the command line.")
            }
            // The family's objects are paths under the URL: a query or a
            // fragment would be dropped from every request, silently.
            guard u.query == nil, u.fragment == nil else {
                throw .data("--peer '\(p)' has a query (?…) or fragment (#…): famctl addresses the family's files under the URL's path, and would drop it",
                            hint: "Give the collection's URL without them.")
            }
            // A port outside 1–65535 (which Foundation takes): every
            // request would fail, as a "bad URL" far from the cause.
            if let port = u.port, !(1...65535).contains(port) {
                throw .data("--peer '\(p)' has port \(port), outside 1–65535", hint: "Give the server's port, or none for the scheme's own (80, 443).")
            }
            return .peer(p)
        case (nil, nil):
            if required { throw .usage("give --dir PATH or --peer URL: where the family's events are exchanged") }
            return .none
        default:
            throw .usage("give either --dir or --peer, not both")
        }
    }

    /// Creates a shared directory that does not exist yet (with any missing
    /// parents); refuses one that cannot be (a file in its place, no
    /// permission). `accept` calls it before anything is written, so that a
    /// bad `--dir` leaves nothing half done.
    /// - Parameter home: the home it is for, which it must not hold nor lie in.
    func prepare(home: String) throws(CLIError) {
        guard case .directory(let d) = self else { return }
        try Home.checkApart(home: home, shared: d)
        do { try FileIO.createDirectories(atPath: d) } catch {
            throw CLIError(.cantCreate, "cannot create the shared directory \(d): \(FileIO.reason(error, creating: d))")
        }
    }

    /// Records the location on this device; a shared directory that does not
    /// exist yet is created (later, a missing one is an error: it may be unmounted).
    func store(in home: Home) throws {
        switch self {
        case .directory(let d):
            try prepare(home: home.path)
            try home.state.set(.syncDirectory, d)
            // One location: a peer set before would otherwise stay beside it.
            try home.state.remove(.syncPeer)
        case .peer(let p):
            try home.state.set(.syncPeer, p)
            // And a folder set before would win over the peer (`stored(in:)` reads it first).
            try home.state.remove(.syncDirectory)
            if let u = URL(string: p), !WebDAVPeer.protectsCredentials(u) {
                Console.err("famctl: warning: \(p) is plain http://: anyone on the network path sees the names, sizes and times of the family's files "
                    + "(not their contents, which are encrypted), and famctl will not send a password over it. Prefer https://.")
            }
        case .none: break
        }
    }

    /// The option that sets this location, as a command line gives it.
    var optionText: String {
        switch self {
        case .directory(let d): "--dir " + ShellWord.quoted(d)
        case .peer(let p): "--peer " + ShellWord.quoted(p)
        case .none: ""
        }
    }

    /// The location as kept while a note is owed to it
    /// (``DeviceState/Key/movedNoteOwed``), `nil` for none.
    var noteText: String? {
        switch self {
        case .directory(let d): "dir:" + d
        case .peer(let p): "peer:" + p
        case .none: nil
        }
    }

    /// The folder or URL, as said to a user.
    var place: String {
        switch self {
        case .directory(let d): d
        case .peer(let p): p
        case .none: "none"
        }
    }

    /// ``noteText`` read back.
    init?(noteText: String) {
        if noteText.hasPrefix("dir:") { self = .directory(String(noteText.dropFirst(4))) }
        else if noteText.hasPrefix("peer:") { self = .peer(String(noteText.dropFirst(5))) }
        else { return nil }
    }

    var inviteLocation: InviteCode.Location {
        switch self {
        case .none: .none
        case .directory(let d): .directory(d)
        case .peer(let p): .peer(p)
        }
    }

    static func stored(in home: Home) -> Location {
        if let d = (try? home.state.get(.syncDirectory)) ?? nil { return .directory(d) }
        if let p = (try? home.state.get(.syncPeer)) ?? nil { return .peer(p) }
        return .none
    }
}

/// `famctl settings sync [--dir PATH | --peer URL]`
enum SettingsSyncCommand: Command {
    static let spec = CommandSpec(
        path: ["settings", "sync"],
        abstract: "Show or change where this device exchanges the family's events: a shared directory or a WebDAV peer.",
        discussion: """
            Each device keeps its own: the same shared folder may be mounted at another path
            on each, and a family may move to another server. After a change, the next sync
            publishes there whatever of this device's events it does not find, and reads what
            the others wrote there; what was read already is not read again. That first sync
            also writes there the other devices' events this device holds, so that those of a
            device that no longer syncs are not left behind. Invitations made afterwards carry
            the new location.
            """,
        options: [
            .value("--dir", "PATH", "Sync through this shared directory (created if missing)."),
            .value("--peer", "URL", "Sync through this WebDAV server (http:// or https://, no credentials in it)."),
        ],
        choices: [OptionChoice(names: ["--dir", "--peer"])])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        let location = try Location.parse(dir: inv.value("--dir"), peer: inv.value("--peer"), required: false)
        try location.checkNotFamilyFolder(of: home.family)
        // The location it has already: nothing to move (the others' events
        // are not written there again).
        let unchanged = switch (location, Location.stored(in: home)) {
        case (.directory(let a), .directory(let b)): a == Home.absolute(b)   // kept as typed before paths were tidied
        case (.peer(let a), .peer(let b)): a == b || a + "/" == b || a == b + "/"   // the replicator adds the slash
        default: false
        }
        var refill = false
        if unchanged, case .directory(let d) = location {
            try location.prepare(home: home.path)
            // A new drive mounted at the same path: the devices' folders the
            // log has events of are missing there; they are written again.
            let base = d + "/" + home.family.description + "/"
            refill = try home.log.heads(in: home.family).keys.contains { $0 != home.deviceID && !FileManager.default.fileExists(atPath: base + $0.hex) }
            if refill { try home.replicator(probe: false).askToCarryOthers() }
        }
        var warning: String?
        if case .none = location {} else if !unchanged {
            // Where the note goes: the location left last, unless the note of
            // an earlier move is still owed (its new location never worked):
            // that one's devices are the ones to tell (a review: a second move
            // put right a mistyped URL, and the first folder was never told).
            let owedBefore = ((try? home.state.get(.movedNoteOwed)) ?? nil).flatMap { Location(noteText: $0) }
            let old = owedBefore ?? Location.stored(in: home)
            // The new folder made first; then, in one transaction, the new
            // location, the ask to carry the others' events there and the
            // note owed to the old one: a process killed midway leaves the
            // move whole or not made (a review: stored, nothing carried, no note).
            if case .directory = location { try location.prepare(home: home.path) }
            // A server that answers, but not as the family's place (not a
            // collection, its parent missing: a mistyped URL), is refused
            // before anything is stored: waiting will not help (a review:
            // stored, exit 0, "cannot be used now", and every sync after
            // failed with 65). One that is down, or refuses this login, is
            // taken, and said below.
            if case .peer = location {
                do { _ = try home.replicator(probe: true, at: location) } catch let e as CLIError where e.code == .dataError && !e.loginRefused {
                    throw CLIError(e.code, e.message + "; the family's location is unchanged", hint: e.hint)
                } catch {}
            }
            let replicator = try home.replicator(probe: false, at: location)
            try home.log.database.transaction(.immediate) {
                try location.store(in: home)
                // One location at a time: the other kind is forgotten.
                switch location {
                case .directory: try home.state.remove(.syncPeer)
                case .peer: try home.state.remove(.syncDirectory)
                case .none: break
                }
                // The next round writes there the others' events this device holds too,
                // and the photos the new location lacks, from the old one.
                try replicator.askToCarryOthers()
                // (One not finished is kept: A to B to C before a sync still
                // carries from A, where the photos are; a review.)
                if let from = old.noteText, try home.state.get(.carryPhotosFrom) == nil { try home.state.set(.carryPhotosFrom, from) }
                if let owed = old.noteText { try home.state.set(.movedNoteOwed, owed) }
            }
            // A note in the old location for the devices still syncing there
            // (once the new one is taken: a refused one leaves none, a review);
            // left by the next sync should this process not live to. A
            // server this device cannot use now (a login it refuses, a
            // spelling the netrc does not name) gets none yet: the others
            // would be told it left for a place it cannot sync at (a review);
            // the first round that works there leaves it.
            var reached = true
            if case .peer(let url) = location {
                do { _ = try home.replicator(probe: true, at: location) } catch {
                    reached = false
                    let why = (error as? CLIError)?.message ?? "\(error)"
                    warning = "famctl: warning: \(url) cannot be used now (\(why)); the devices at the old location are told of the move once this device syncs there ('famctl sync')."
                }
            }
            if reached {
                warning = home.leaveMovedNotice(leaving: old, for: location)
                try? home.state.remove(.movedNoteOwed)
            }
            // Devices on a famctl from before the notes do not read the note
            // of the move: they go on at the old location unwarned (a review).
            let behind = StatusCommand.famctlOf(home, seenBy: replicator).filter { $0.value.age == .older }.keys.sorted()
            if !behind.isEmpty {
                let names = behind.map { "\($0.short) \(TerminalText.name(home.projector.household.members[$0]?.name ?? "?"))" }.joined(separator: ", ")
                let (runs, goes, its) = behind.count == 1 ? ("runs", "it goes", "its") : ("run", "they go", "their")
                let tell = "famctl: warning: \(names) \(runs) an older famctl, which may not follow this move: \(goes) on syncing at the old location, and \(its) changes stop reaching this device. "
                    + "Upgrade famctl there, or set the new location there too ('famctl settings sync \(location.optionText)')."
                warning = warning.map { $0 + "\n" + tell } ?? tell
            }
        }
        let (dir, peer): (String?, String?) = switch Location.stored(in: home) {
        case .directory(let d): (d, nil)
        case .peer(let p): (nil, p)
        case .none: (nil, nil)
        }
        if let warning { Console.err(warning) }
        if inv.json { Console.json(["dir": dir ?? NSNull(), "peer": peer ?? NSNull()] as [String: Any]); return }
        Console.out((dir.map { "sync: shared directory \($0)" } ?? peer.map { "sync: WebDAV peer \($0)" } ?? "sync: none set (give --dir PATH or --peer URL)")
                    + (!unchanged ? "" : refill ? " (unchanged; the next sync writes there the other devices' events this device holds, whose folders are missing)"
                        : " (unchanged: this device syncs there already)"))
    }
}
