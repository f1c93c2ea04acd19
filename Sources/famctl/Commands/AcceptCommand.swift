import Envelope
import EventLog
import Foundation
import Projections

/// `famctl accept CODE --name NAME [--dir PATH | --peer URL] [--merge | --keep-private]`
enum AcceptCommand: Command {
    static let spec = CommandSpec(
        path: ["accept"],
        abstract: "Join a family with an invitation code: this device signs a join event; no owner round-trip.",
        discussion: """
            Works on a fresh home (the device is created) or on a device that has no family
            yet: its care subjects and records are then written into the family. --merge
            (the default) shows the whole family's records, --keep-private only this
            device's own; 'settings include-shared' changes it later. --dir or --peer say
            where this device reaches the family's events, when not where the code says.
            """,
        options: [
            .value("--name", "NAME", "(required) A name for this device, shown to the family."),
            .value("--dir", "PATH", "The shared directory, as this device sees it."),
            .value("--peer", "URL", "The WebDAV peer, as this device reaches it."),
            .flag("--merge", "Show the whole family's records (the default)."),
            .flag("--keep-private", "Show only this device's own records."),
        ],
        positionals: [PositionalSpec(name: "CODE", help: "The invitation code from 'famctl invite'.")])

    static func run(_ inv: Invocation) throws {
        let code: InviteCode
        do throws(InviteCodeError) { code = try InviteCode(parsing: inv.positionals[0]) } catch {
            throw CLIError.data("\(error)")
        }
        let name = try inv.required("--name").trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.count <= 100 else { throw CLIError.data("--name must be 1 to 100 characters") }
        guard !(inv.flag("--merge") && inv.flag("--keep-private")) else { throw CLIError.usage("give --merge or --keep-private, not both") }
        if code.expiresMs < HLC.milliseconds(of: Date()) {
            throw CLIError.data("the invitation expired at \(TimeText.format(Date(timeIntervalSince1970: Double(code.expiresMs) / 1000)))",
                                hint: "Ask the family's owner for a new one.")
        }
        var location = try Location.parse(dir: inv.value("--dir"), peer: inv.value("--peer"), required: false)
        if case .none = location {
            switch code.location {
            case .directory(let d): location = .directory(d)
            case .peer(let p): location = .peer(p)
            case .none: break
            }
        }

        let path = try Home.location(inv)
        var carried: (subjects: [SubjectState], records: [RecordState]) = ([], [])
        let home: Home
        if FileManager.default.fileExists(atPath: path + "/" + Home.identityFile) {
            let existing = try Home.open(path)
            if existing.family == code.family {
                if try existing.log.head(of: existing.deviceID, in: code.family).seq > 0 { throw CLIError.data("this device is already in that family") }
                // An earlier accept switched the home but did not get to write the join: finish it.
            } else {
                guard existing.projector.household.isPrivate, existing.knownOwner == nil else {
                throw CLIError.data("this device already belongs to the family \"\(existing.projector.household.name ?? existing.family.description)\"",
                                    hint: "A device belongs to one family; join from a new home (--home DIR).")
            }
                // What it recorded on its own goes into the family, under the same ids
                // (a viewer cannot write, so a viewer's stay in its private chain).
                if code.role.canWrite { carried = (try existing.projector.subjects(), try existing.projector.records()) }
                try existing.log.database.transaction(.immediate) {
                    try existing.state.set(.family, code.family.description)
                    try existing.state.set(.owner, code.owner.hex)
                    try existing.state.keyring.store(code.key, family: code.family)
                    try existing.state.set(.projectionVersion, "stale")
                }
            }
            try existing.state.set(.deviceName, name)
            home = try Home.open(path)
        } else {
            home = try Home.create(path, name: name, start: .joining(code.family, code.key, owner: code.owner))
        }
        try location.store(in: home)
        try home.state.set(.joinedRole, code.role.rawValue)
        try home.state.set(.includeShared, inv.flag("--keep-private") ? "off" : "on")

        let proof = JoinProof.sign(secret: code.secret, family: code.family, invite: code.invite, device: home.deviceID)
        var bodies = [LibraryEvent.memberJoin(invite: code.invite, name: name, box: home.identity.box.publicKey, proof: proof).body]
        bodies += carried.subjects.map { SubjectEvent(focus: $0.focus, fields: $0.fields).body }
        bodies += carried.records.map { RecordEvent(kind: .put, record: $0.id, store: $0.store, focus: $0.focus, at: $0.at, fields: $0.fields).body }
        try home.append(bodies.map { ($0, code.key) }, after: code.issued)

        if inv.json {
            Console.json(["family": code.family.description, "device": home.deviceID.hex, "role": code.role.rawValue,
                          "carried": carried.records.count, "includeShared": !inv.flag("--keep-private")] as [String: Any])
            return
        }
        Console.out("Joined family \(code.family) as \(code.role.rawValue) (device \(home.deviceID.short) \"\(name)\").")
        if !carried.records.isEmpty || !carried.subjects.isEmpty {
            Console.out("Wrote \(carried.subjects.count) care subject(s) and \(carried.records.count) record(s) of this device into the family.")
        }
        Console.out(inv.flag("--keep-private") ? "View: this device's own records only." : "View: the whole family's records.")
    }
}
