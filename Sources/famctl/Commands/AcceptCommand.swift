import Envelope
import EventLog
import Foundation
import Projections
import Replicator

/// `famctl accept CODE --name NAME [--dir PATH | --peer URL] [--merge | --keep-private]`
enum AcceptCommand: Command {
    static let spec = CommandSpec(
        path: ["accept"],
        abstract: "Join a family with an invitation code: this device signs a join event; no owner round-trip.",
        discussion: """
            Works on a fresh home (the device is created) or on a device that has no family
            yet: its care subjects, records and photos are then written into the family.
            --merge (the default) shows the whole family's records, --keep-private only
            this device's own; 'settings include-shared' changes it later. --dir or --peer
            say where this device reaches the family's events, when not where the code
            says. The family's events already there are read first: a code another
            device has used, or the owner revoked, is refused, and nothing is written.
            """,
        options: [
            .value("--name", "NAME", "(required) A name for this device, shown to the family."),
            .value("--dir", "PATH", "The shared directory, as this device sees it."),
            .value("--peer", "URL", "The WebDAV peer, as this device reaches it."),
            .flag("--merge", "Show the whole family's records (the default)."),
            .flag("--keep-private", "Show only this device's own records."),
            .flag("--without-own-records", "Join without carrying this device's own records into the family (needed with a viewer's invitation): they stay in its log, no longer shown."),
        ],
        positionals: [PositionalSpec(name: "CODE", help: "The invitation code from 'famctl invite'.")],
        choices: [OptionChoice(names: ["--dir", "--peer"]), OptionChoice(names: ["--merge", "--keep-private"])])

    static func run(_ inv: Invocation) throws {
        let code: InviteCode
        do throws(InviteCodeError) { code = try InviteCode(parsing: inv.positionals[0]) } catch {
            throw CLIError.data("\(error)")
        }
        let name = try inv.requiredName("--name")
        guard !(inv.flag("--merge") && inv.flag("--keep-private")) else { throw CLIError.usage("give --merge or --keep-private, not both") }
        if code.expiresMs < HLC.milliseconds(of: Date()) {
            throw CLIError.data("the invitation expired at \(TimeText.format(Date(timeIntervalSince1970: Double(code.expiresMs) / 1000)))",
                                hint: "Ask the family's owner for a new one.")
        }
        var location = try Location.parse(dir: inv.value("--dir"), peer: inv.value("--peer"), required: false)
        try location.checkNotFamilyFolder(of: code.family)
        if case .none = location {
            switch code.location {
            case .directory(let d): location = .directory(d)
            case .peer(let p):
                // The code's URL is checked as a --peer is: an http:// or
                // https:// URL without credentials, nothing else.
                do { location = try Location.parse(dir: nil, peer: p, required: false) } catch {
                    throw CLIError.data("the invitation names a peer famctl will not use: \(error.message)",
                                        hint: "Ask the owner for a new invitation, or give the peer yourself with --peer URL.")
                }
            case .none: break
            }
        }

        // A --dir that cannot be made a folder is refused before the home
        // is touched (it used to be found after the home was in the family).
        var createdFolder: String?
        if case .directory(let d) = location, !FileManager.default.fileExists(atPath: d) { createdFolder = d }
        let path = try Home.location(inv)
        // The folders `prepare` makes, from the shared one up: a refusal
        // before the join is written takes them away again (while empty),
        // so that a mistyped path tried again is still said as made.
        let made = createdFolder.map(Self.missingFolders) ?? []
        var joinBegun = false
        defer { if !joinBegun { for folder in made { _ = rmdir(folder) } } }
        do throws(CLIError) { try location.prepare(home: path) } catch { throw CLIError(error.code, error.message + "; nothing was written", hint: error.hint) }
        // The bodies of the care subjects and records carried into the family.
        var carried: [EventBody] = []
        let home: Home
        var freshHome = false
        // What an existing home's settings were before this accept: a
        // refused invitation puts them back (``leaveFamily(_:to:)``).
        let before: Settings
        // A viewer's code on a home with records of its own: refused, but
        // after the family's events are read, so that a code that cannot be
        // used at all is said first (not found on the next try).
        var viewerRefusal: CLIError?
        // This device's own live records before the join (those not carried stay private).
        var kept = 0, keptPhotos = 0
        if FileManager.default.fileExists(atPath: path + "/" + Home.identityFile) {
            let existing = try Home.open(path)
            // Left mid-join by an earlier accept: what that accept set for the family is not the home's own.
            before = try Settings(existing.state, midJoin: existing.family != FamilyID.owned(by: existing.deviceID) && existing.knownOwner != nil)
            if existing.family == code.family {
                if try existing.log.head(of: existing.deviceID, in: code.family).seq > 0 {
                    if let refused = existing.refusedJoin {
                        throw CLIError.data("this device's join was refused (\(refused.reason)); a home joins its family once", hint: Home.joinAgainHint)
                    }
                    if existing.isRemoved {
                        throw CLIError.data("this device was removed from that family; a home joins its family once", hint: Home.joinAgainHint)
                    }
                    throw CLIError.data("this device is already in that family")
                }
                // An earlier accept switched the home but did not get to write
                // the join: finish it, with what that accept was carrying.
                // (A viewer's invitation carries none, whichever code the first attempt used.)
                let pending = try Self.pendingCarry(existing.state)
                // Finished with a viewer's code, what the first attempt was
                // to carry would stay private, no longer shown: said first.
                if !code.role.canWrite, !pending.isEmpty, !inv.flag("--without-own-records") {
                    throw CLIError.data("the join this home began was to carry \(pending.count) care subject(s), record(s) and photo(s) of this device into the family, "
                                        + "and the invitation is a viewer's: they would not be carried, and would no longer show on this device; nothing was written",
                                        hint: "Finish with the member's invitation the join began with, or accept with --without-own-records.")
                }
                carried = code.role.canWrite && !inv.flag("--without-own-records") ? pending : []
            } else {
                guard existing.projector.household.isPrivate, existing.knownOwner == nil else {
                    throw CLIError.data("this device already belongs to the family \"\(existing.projector.household.name ?? existing.family.description)\"",
                                        hint: "A device belongs to one family; join from a new home (--home DIR).")
                }
                // A viewer cannot write: nothing is carried, and what this
                // device recorded on its own stays in its private chain,
                // no longer shown. Said before the join is written (after the
                // family's events are read), not found after.
                if !code.role.canWrite, !inv.flag("--without-own-records") {
                    let records = try existing.projector.liveRecordCounts().values.reduce(0, +), subjects = try existing.projector.subjects().count
                    let photos = try existing.projector.photos().count
                    if records + subjects > 0 {
                        // Its photos too: no command reaches them after the join (a review).
                        let keepPhotos = photos == 0 ? "" : ", and each photo with 'famctl photo get ID --out FILE' ('famctl photo list' lists them): after the join no command reaches them"
                        viewerRefusal = CLIError.data("this device has \(records) record(s)\(photos == 0 ? " and" : ",") \(subjects) care subject(s)\(photos == 0 ? "" : " and \(photos) photo(s)") of its own, and the invitation is a viewer's: "
                                            + "a viewer's records are not carried into the family, and they would no longer show on this device; nothing was written",
                                            hint: "Ask the owner for a member's invitation, which carries them into the family. Or keep a copy first "
                                                + "('famctl export stores DIR'\(keepPhotos)) and accept with --without-own-records ('famctl export stores DIR --before-joining' writes the records later too), or accept from a new home (--home NEWDIR).")
                    }
                }
                // What it recorded on its own goes into the family, under the same ids
                // (a viewer cannot write, so a viewer's stay in its private chain,
                // as a member's do when it asks so: --without-own-records).
                if inv.flag("--without-own-records") {
                    kept = try existing.projector.liveRecordCounts().values.reduce(0, +)
                    keptPhotos = try existing.projector.photos().count
                }
                if code.role.canWrite, !inv.flag("--without-own-records") {
                    // Photos too, those of the records carried (not of deleted
                    // ones): their blobs wait in the cache, unpublished, and the
                    // first sync uploads them once the family's photo.put names them.
                    let records = try existing.projector.records()
                    let ids = Set(records.map(\.id))
                    // Each put says when this device last wrote what it
                    // carries (`carried`): what the family wrote since, an
                    // edit or a delete of the same id (an export of the
                    // family's own records imported here, say), is not
                    // undone by this older copy.
                    let subjectVersions = try existing.projector.fieldVersions("subject")
                    let recordVersions = try existing.projector.fieldVersions("record")
                    carried = try existing.projector.subjects().flatMap { Self.carriedPuts($0, versions: subjectVersions[$0.focus.description] ?? [:]) }
                        + (try records.flatMap { try Self.carriedPuts($0, versions: recordVersions[$0.id.lowercasedText] ?? [:]) })
                        + existing.projector.photos(includeDeleted: false).filter { $0.record.map(ids.contains) ?? false }
                            .map { PhotoEvent(kind: .put, photo: $0.id, fields: $0.putFields).body }
                }
                try existing.log.database.transaction(.immediate) {
                    try existing.state.set(.family, code.family.description)
                    try existing.state.set(.owner, code.owner.hex)
                    try existing.state.keyring.store(code.key, family: code.family)
                    try existing.state.set(.projectionVersion, "stale")
                    // Kept until the join is written: once the home is the
                    // family's, its projection no longer shows these.
                    if !carried.isEmpty {
                        try existing.state.set(.carryPending, String(decoding: JSONValue.array(carried.map { .object($0.object) }).jsonBytes, as: UTF8.self))
                    }
                }
            }
            home = try Self.finishing(carrying: Self.items(carried), path: path) {
                try existing.state.set(.deviceName, name)
                return try Home.open(path)
            }
        } else {
            home = try Home.create(path, name: name, start: .joining(code.family, code.key, owner: code.owner))
            freshHome = true
            before = Settings(deviceName: name)
        }
        try Self.finishing(carrying: Self.items(carried), path: path) { try location.store(in: home) }
        // The family's events already shared say whether the invitation is
        // still good: a join with a used or revoked one would be refused on
        // every device, and the records it carries with it.
        // What each refusal below leaves, as it says.
        let leftAsItWas = freshHome ? "the home \(path) was made with no family" : "this home's own records and settings are as they were"
        if let spent = Self.spentInvitation(code, home: home, at: location, folderCreated: createdFolder != nil, quiet: viewerRefusal != nil) {
            try Self.leaveFamily(home, to: before)
            let subjects = Self.items(carried, type: SubjectEvent.type), records = Self.items(carried, type: RecordEvent.Kind.put.rawValue)
            throw CLIError.data("this invitation cannot be used any more: \(spent); nothing was written into the family, "
                                + "and " + leftAsItWas + (!freshHome && subjects + records > 0 ? " (its \(subjects) care subject(s) and \(records) record(s) stay its own)" : ""),
                                hint: "Ask the family's owner for a new invitation ('famctl invite') and accept that one"
                                    + (freshHome ? " here." : (subjects + records > 0 ? ": it carries them into the family." : ".")))
        }
        // The owner's invitation, read: a code whose role or expiry differs
        // from it was rewritten on its way (its checksum is no seal). Taken
        // as it is, the join would be judged by the owner's terms anyway
        // (a viewer, or expired), after `accept` said otherwise.
        // The owner's events are here, and the code's key opens none of
        // them: its key (or epoch) is not the family's. The join would wait
        // for good, its writes sealed under a key nobody else holds.
        // Unless the code's epoch is later than the owner's last event here:
        // its key rotation (which carries the earlier keys under the new
        // one) has not reached the folder yet (a review: an owner offline
        // since a `rotate-key` had its honest code called altered).
        let ownerHead = try home.log.head(of: code.owner, in: code.family)
        let ownerLast = ownerHead.seq > 0 ? (try? home.log.chain(of: code.owner, in: code.family, seqs: ownerHead.seq...ownerHead.seq).first) ?? nil : nil
        if let ownerLast, ownerLast.epoch >= code.key.epoch, home.projector.household.owner == nil {
            try Self.leaveFamily(home, to: before)
            throw CLIError.data("the invite code was altered: its key opens none of the owner's events in the family's shared folder; nothing was written into the family"
                                + ", and " + leftAsItWas,
                                hint: "Ask the family's owner for a new invitation, over a channel you trust.")
        }
        // A later epoch, but the key is the one of the owner's last event
        // here, under another number (each epoch's key is drawn anew, so no
        // honest code's is): the epoch was raised on the code's way, and
        // the join would wait for good for a rotation that is not coming
        // (a review).
        if let ownerLast, ownerLast.epoch < code.key.epoch,
           (try? ownerLast.openBody(with: EpochKey(epoch: ownerLast.epoch, key: code.key.key))) != nil {
            try Self.leaveFamily(home, to: before)
            throw CLIError.data("the invite code was altered: it carries key epoch \(code.key.epoch), and its key is the family's key of epoch \(ownerLast.epoch); nothing was written into the family"
                                + ", and " + leftAsItWas,
                                hint: "Ask the family's owner for a new invitation, over a channel you trust.")
        }
        // Made by a member, not the owner: the family refuses that
        // invitation, and so every join with it, however long it waits.
        if let maker = home.inviteMadeByNonOwner(code.invite) {
            try Self.leaveFamily(home, to: before)
            throw CLIError.data("the invitation was made by \(maker.short), not the family's owner: the family does not count it, nor a join with it; nothing was written into the family"
                                + ", and " + leftAsItWas,
                                hint: "Ask the family's owner for an invitation ('famctl invite' on the owner's device).")
        }
        if let altered = Self.alteredTerms(code, in: home.projector.household) {
            try Self.leaveFamily(home, to: before)
            throw CLIError.data("the invite code was altered: \(altered); nothing was written into the family"
                                + ", and " + leftAsItWas,
                                hint: "Ask the family's owner for a new invitation, over a channel you trust.")
        }
        if let viewerRefusal {
            try Self.leaveFamily(home, to: before)
            throw viewerRefusal
        }
        // This device's own join came back from the folder (a home restored
        // from a backup made before it joined): it is in the family already.
        if try home.log.head(of: home.deviceID, in: code.family).seq > 0 {
            throw CLIError.data("this device is already in that family: its join, written before this home's backup was made, is in the shared folder; nothing was written",
                                hint: "Run 'famctl sync' to read the rest of what it wrote there.")
        }
        joinBegun = true
        try Self.finishing(carrying: Self.items(carried), path: path, joined: { ((try? home.log.head(of: home.deviceID, in: code.family).seq) ?? 0) > 0 }) {
            try home.state.set(.joinedRole, code.role.rawValue)
            try home.state.set(.inviteIssued, String(code.issued.rawValue))
            try home.state.set(.includeShared, inv.flag("--keep-private") ? "off" : "on")

            let proof = JoinProof.sign(secret: code.secret, family: code.family, invite: code.invite, device: home.deviceID)
            let bodies = [LibraryEvent.memberJoin(invite: code.invite, name: name, box: home.identity.box.publicKey, proof: proof).body] + carried
            // The carried bodies leave the settings in the transaction that writes them.
            try home.append(bodies.map { ($0, code.key) }, after: code.issued, check: { try home.state.remove(.carryPending) })
        }

        // The join goes to the shared folder at once (as `invite` sends the
        // invitation): until it is there, another device accepting the same
        // code cannot see it was used, and one of the two joins is refused.
        let unpublished: String? = if case .none = location { nil } else { SyncCommand.publishNow(home, once: true) }
        if let unpublished {
            Console.err("famctl: warning: the join is written here but not in the family's shared folder or peer yet (\(unpublished)); run 'famctl sync' soon: "
                + "until it is there, a device accepting the same invitation does not see that it was used, and the others do not count this device. "
                + "A device, a viewer too, must be able to write there at least once, for its join: a read-only share or login keeps it out.")
        }
        if let createdFolder {
            // A mistyped path would otherwise go unnoticed: this device
            // syncs into a folder nobody else reads.
            Console.err("famctl: note: the shared directory \(createdFolder) did not exist; it was created, empty. If the family's folder is "
                + "elsewhere (a mistyped path), 'famctl settings sync --dir PATH' changes it; if the sync engine has not brought it here "
                + "yet, point it at this folder: 'famctl sync' takes the family's events once they arrive.")
        }
        let subjects = Self.items(carried, type: SubjectEvent.type), records = Self.items(carried, type: RecordEvent.Kind.put.rawValue)
        let photos = Self.items(carried, type: PhotoEvent.Kind.put.rawValue)
        // A baby of this device named as one of the family's (a review: said
        // nowhere, and every `--focus NAME` of the family then refused).
        if !carried.isEmpty { for w in home.sameNameWarnings() { Console.err(w) } }
        if inv.json {
            Console.json(["family": code.family.description, "device": home.deviceID.hex, "role": code.role.rawValue,
                          "carried": records, "carriedPhotos": photos, "includeShared": !inv.flag("--keep-private"),
                          "notCarried": carried.isEmpty && inv.flag("--without-own-records") ? kept : 0] as [String: Any])
            return
        }
        Console.out("Joined family \(code.family) as \(code.role.rawValue) (device \(home.deviceID.short) \"\(name)\").")
        if !carried.isEmpty {
            let what = photos == 0 ? "\(subjects) care subject(s) and \(records) record(s)" : "\(subjects) care subject(s), \(records) record(s) and \(photos) photo(s)"
            Console.out("Wrote \(what) of this device into the family.")
        }
        if carried.isEmpty, kept > 0, inv.flag("--without-own-records") {
            Console.out("This device's \(kept) record(s) of its own were not carried into the family: they stay in its log, no longer shown "
                        + "('famctl export stores DIR --before-joining' writes them).")
        }
        if carried.isEmpty, keptPhotos > 0, inv.flag("--without-own-records") {
            Console.err("famctl: warning: this device's \(keptPhotos) photo(s) of its own stay in its private chain with its records: no command reaches them now "
                        + "('famctl photo get' reaches the family's photos; their original files are where they were added from).")
        }
        Console.out(inv.flag("--keep-private") ? "View: this device's own records only." : "View: the whole family's records.")
    }

    /// Runs a step after the home is in the family: should it fail, the
    /// error says where that leaves the join. Before the join is written,
    /// the same `accept` finishes it (with what it carries); after (the
    /// rebuild that follows it failed), the next command brings the view up
    /// to date.
    static func finishing<T>(carrying carried: Int, path: String, joined: () -> Bool = { false }, _ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            let e = CLIError(error, path: path + "/" + Home.databaseFile)
            let cause = e.message.replacingOccurrences(of: "; nothing was written", with: "")
            if joined() {
                throw CLIError(e.code, cause + ". The join" + (carried > 0 ? " and the \(carried) care subjects, records and photos it carries are" : " is")
                                   + " written; the view of the family is not up to date yet",
                               hint: "Once that is fixed, any famctl command (e.g. 'famctl status') brings the view up to date.")
            }
            let finish = "Running the same 'famctl accept' again finishes the join"
                + (carried > 0 ? ", with the \(carried) care subjects, records and photos it carries (kept until then)." : ".")
            throw CLIError(e.code, cause + ". The home is now in the family, but this device has not joined it yet",
                           hint: [e.hint, finish].compactMap { $0 }.joined(separator: " "))
        }
    }

    /// Why the family's events already at its shared folder or peer say
    /// `code` can no longer be used (the owner revoked it, or another device
    /// joined with it), read before this device writes its join; `nil`
    /// when they do not, or cannot be read (offline, say: a join needs no
    /// round-trip, and is judged when the events arrive, as before).
    /// - Parameter folderCreated: `location` is a folder this `accept`
    ///   made (it did not exist): said after the join, not here.
    /// - Parameter quiet: no join follows (a refusal does): nothing said of
    ///   what could not be checked.
    static func spentInvitation(_ code: InviteCode, home: Home, at location: Location, folderCreated: Bool, quiet: Bool = false) -> String? {
        let failure = SyncCommand.pullNow(home)
        // What was read before a failure counts as well (a pull keeps each file it read).
        let h = home.projector.household
        if let invite = h.invites[code.invite] {
            if invite.revoked != nil { return "the owner revoked it" }
            if let used = h.admitted[code.invite] ?? invite.usedBy, used != home.deviceID {
                return "device \(used.short)" + (h.members[used].map { " \"\($0.name)\"" } ?? "") + " joined the family with it already"
            }
        }
        if quiet { return nil }
        if let failure {
            Console.err("famctl: note: the family's events could not be read before joining (\(failure)); the join is written without knowing "
                + "whether another device used this invitation first: 'famctl sync' tells.")
        } else if h.invites[code.invite] == nil, !folderCreated, Self.reachable(location),
                  // The owner's events read but none opened: refused next, not noted.
                  h.owner != nil || ((try? home.log.head(of: code.owner, in: code.family).seq) ?? 0) == 0,
                  // Made by a member, not the owner: refused next too, not
                  // noted as waiting to arrive (a review: the note, then the refusal).
                  home.inviteMadeByNonOwner(code.invite) == nil {
            // Read, and the invitation not among them: the sync engine has
            // not brought the family's files yet, or this is not the
            // family's folder (a mistyped path), which nothing else would show.
            let (place, change) = switch location {
            case .peer(let url): ("the peer \(url)", "'famctl settings sync --peer URL'")
            case .directory(let dir): ("the shared directory \(dir)", "'famctl settings sync --dir PATH'")
            case .none: ("", "")
            }
            Console.err("famctl: note: " + (h.owner == nil ? "\(place) holds none of the owner's events of this family yet (its creation)" : "the family's events at \(place) do not include this invitation yet")
                + ", so whether another device used it first is not known; the join is written. If the family's files have not arrived yet, "
                + "'famctl sync' reads them when they do; if \(place) is not the family's (a mistyped path), \(change) changes it.")
        }
        return nil
    }

    /// `path` and those of its parents that do not exist, deepest first.
    static func missingFolders(_ path: String) -> [String] {
        var out: [String] = [], p = path
        while p != "/", !p.isEmpty, !FileManager.default.fileExists(atPath: p) {
            out.append(p)
            p = (p as NSString).deletingLastPathComponent
        }
        return out
    }

    /// How `code` differs from the owner's invitation it names, when the
    /// family's events read hold that invitation: its role, its expiry, or
    /// a secret that is not the invitation's (a join with it would not
    /// prove it); `nil` when they agree or the invitation is not read yet.
    static func alteredTerms(_ code: InviteCode, in h: Household) -> String? {
        guard let invite = h.invites[code.invite] else { return nil }
        if invite.role != code.role { return "it says \(code.role.rawValue), and the owner's invitation is a \(invite.role.rawValue)'s" }
        if invite.expiresMs != code.expiresMs {
            return "it says it expires at \(TimeText.format(Date(timeIntervalSince1970: Double(code.expiresMs) / 1000))), "
                + "and the owner's invitation expire\(invite.expiresMs < HLC.milliseconds(of: Date()) ? "d" : "s") at \(TimeText.format(Date(timeIntervalSince1970: Double(invite.expiresMs) / 1000)))"
        }
        // Its clock: the join is stamped after it, and a later one would
        // date this device's writes ahead of everyone's.
        if invite.created.hlc != code.issued {
            return "it says it was made at \(TimeText.format(code.issued.date)), and the owner's invitation was made at \(TimeText.format(invite.created.hlc.date))"
        }
        if invite.epoch != code.key.epoch { return "it carries key epoch \(code.key.epoch), and the owner's invitation key epoch \(invite.epoch)" }
        let probe = DeviceID(bytes: [UInt8](repeating: 0, count: 32))
        let proof = JoinProof.sign(secret: code.secret, family: code.family, invite: code.invite, device: probe)
        if !JoinProof.verify(proof: proof, verifier: invite.verifier, family: code.family, invite: code.invite, device: probe) {
            return "its secret is not the owner's invitation's"
        }
        return nil
    }

    /// Whether `location` names a folder or peer (a home with neither reads nothing).
    static func reachable(_ location: Location) -> Bool {
        if case .none = location { return false }
        return true
    }

    /// The settings an `accept` changes, as they were before it (see
    /// ``leaveFamily(_:to:)``).
    struct Settings {
        var deviceName: String?
        var syncDirectory: String?
        var syncPeer: String?
        var joinedRole: String?
        var includeShared: String?
        var unopenedEpoch: String?

        init(deviceName: String? = nil) { self.deviceName = deviceName }

        /// - Parameter midJoin: the home is in a family an earlier accept
        ///   switched it to, without its join: what that accept set for the
        ///   family (sync location, role, view, keys seen) is not the home's
        ///   own, and is not kept; its name is.
        init(_ state: DeviceState, midJoin: Bool) throws {
            deviceName = try state.get(.deviceName)
            guard !midJoin else { return }
            syncDirectory = try state.get(.syncDirectory)
            syncPeer = try state.get(.syncPeer)
            joinedRole = try state.get(.joinedRole)
            includeShared = try state.get(.includeShared)
            unopenedEpoch = try state.get(.unopenedEpoch)
        }
    }

    /// Takes the home back out of the family an `accept` switched it to,
    /// before its join is written: its own family again (with a key of its
    /// own, for a home this `accept` made), nothing carried, and the
    /// settings it had before (`before`): its name, its sync location, its
    /// view, and the highest key epoch it had seen unopened, which the
    /// family's events read meanwhile raised (it would hold back the key
    /// rotations of a family this home creates later). A home an earlier
    /// accept had left mid-join goes back to before that one: the
    /// family's sync location and role it set are dropped. The family's
    /// events read meanwhile stay in its log, under that family, unshown.
    static func leaveFamily(_ home: Home, to before: Settings) throws {
        let own = FamilyID.owned(by: home.deviceID)
        func put(_ key: DeviceState.Key, _ value: String?) throws {
            if let value { try home.state.set(key, value) } else { try home.state.remove(key) }
        }
        let left = home.family
        try home.log.database.transaction(.immediate) {
            // The family's events read stay in the log (it only grows), but
            // not the key that opens them.
            if left != own { try home.state.keyring.forget(family: left) }
            try home.state.set(.family, own.description)
            try home.state.remove(.owner)
            try home.state.remove(.carryPending)
            try put(.deviceName, before.deviceName)
            try put(.syncDirectory, before.syncDirectory)
            try put(.syncPeer, before.syncPeer)
            try put(.joinedRole, before.joinedRole)
            try put(.includeShared, before.includeShared)
            try put(.unopenedEpoch, before.unopenedEpoch)
            if try home.state.keyring.current(family: own) == nil { try home.state.keyring.store(EpochKey.generate(epoch: 0), family: own) }
            try home.state.set(.projectionVersion, "stale")
        }
    }

    /// A record carried into the family: one put for each moment this
    /// device wrote some of its fields (and its `at`) on its own, each
    /// carried at that moment (`carried`), so that every field merges as
    /// of its own last write here, not as of the record's newest. (A group
    /// grown past one event goes as several puts.)
    /// - Parameter versions: the version of the write each of its fields
    ///   holds (``Projector/fieldVersions(_:)``).
    static func carriedPuts(_ r: RecordState, versions: [String: Version]) throws -> [EventBody] {
        var groups = byMoment(r.fields, versions: versions, newest: r.updated)
        let atVersion = r.at == nil ? nil : versions["$at"] ?? r.updated
        if let atVersion, groups[atVersion] == nil { groups[atVersion] = [:] }
        if groups.isEmpty { groups[r.updated] = [:] }
        return try groups.keys.sorted().flatMap { v in
            try RecordInput.fittingPuts(RecordEvent(kind: .put, record: r.id, store: r.store, focus: r.focus, at: v == atVersion ? r.at : nil,
                                                    fields: groups[v]!), reserve: carriedKeyBytes)
                .map { PreparedChange.carried($0, since: v.hlc) }
        }
    }

    /// The bytes `carried` adds to a body: room each carried put leaves.
    static let carriedKeyBytes = PreparedChange.carried(EventBody(type: "x", fields: [:]), since: .zero).encoded().count
        - EventBody(type: "x", fields: [:]).encoded().count

    /// `fields` grouped by the version of the write each holds (`newest`
    /// for one without).
    static func byMoment(_ fields: [String: JSONValue], versions: [String: Version], newest: Version) -> [Version: [String: JSONValue]] {
        var groups: [Version: [String: JSONValue]] = [:]
        for (name, value) in fields { groups[versions[name] ?? newest, default: [:]][name] = value }
        return groups
    }

    /// How many care subjects, records and photos `bodies` carry, or of
    /// those of `type`: counted by id, since a record or subject written at
    /// several moments (or grown past one event) goes as several puts.
    static func items(_ bodies: [EventBody], type: String? = nil) -> Int {
        Set(bodies.filter { type == nil || $0.type == type }.map { b in
            b.type + ":" + (b["subject"]?.stringValue ?? b["record"]?.stringValue ?? b["photo"]?.stringValue ?? "")
        }).count
    }

    /// A care subject carried into the family, as a record is: one put per
    /// moment this device wrote some of its fields (a subject with none, one
    /// put at its newest write).
    static func carriedPuts(_ s: SubjectState, versions: [String: Version]) -> [EventBody] {
        var groups = byMoment(s.fields, versions: versions, newest: s.updated)
        if groups.isEmpty { groups[s.updated] = [:] }
        return groups.keys.sorted().map { PreparedChange.carried(SubjectEvent(focus: s.focus, fields: groups[$0]!).body, since: $0.hlc) }
    }

    /// What an interrupted `accept` was carrying into the family (see ``DeviceState/Key/carryPending``).
    static func pendingCarry(_ state: DeviceState) throws -> [EventBody] {
        guard let text = try state.get(.carryPending) else { return [] }
        guard case .array(let items)? = JSONValue.parse(Array(text.utf8)) else {
            throw CLIError.data("the records an earlier accept was carrying into the family cannot be read",
                                hint: "They are still in this device's log, in its private chain: 'famctl log' lists its events.")
        }
        return try items.map { item in
            do { return try EventBody(decoding: item.jsonBytes) } catch {
                throw CLIError.data("the records an earlier accept was carrying into the family cannot be read: \(error)",
                                    hint: "They are still in this device's log, in its private chain: 'famctl log' lists its events.")
            }
        }
    }
}
