import Envelope
import EventLog
import Foundation
import Replicator
import Projections

/// A famctl home: one device's identity, log and settings.
///
/// ```
/// HOME/identity.key            the device's keys (mode 0600)
/// HOME/famctl.sqlite           the event log, epoch keys, settings (mode 0600; -wal, -shm)
/// HOME/projection.N.sqlite     the stores, derived from the log (mode 0600; -wal, -shm; see Home+Projection)
/// HOME/projection.lock         held while a rebuild replaces the projection file
/// ```
/// The directory itself is mode 0700.
final class Home {
    static let identityFile = "identity.key"
    static let databaseFile = "famctl.sqlite"

    /// What the log's files (`famctl.sqlite` and its `-wal`) are now: each
    /// one's inode, size and time of change. Any commit changes it; `nil`
    /// when the log cannot be looked at.
    struct LogStamp: Equatable {
        let parts: [Int]
    }

    static func logStamp(_ path: String) -> LogStamp? {
        var parts: [Int] = []
        for name in [databaseFile, databaseFile + "-wal"] {
            var st = stat()
            if stat(path + "/" + name, &st) == 0 {
                parts += [Int(st.st_ino), Int(st.st_size), Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec), Int(st.st_ctim.tv_sec), Int(st.st_ctim.tv_nsec)]
            } else if errno == ENOENT {
                parts.append(-1)
            } else {
                return nil
            }
        }
        return LogStamp(parts: parts)
    }

    let path: String
    let identity: DeviceIdentity
    let log: EventLog
    let state: DeviceState
    /// The family this device writes to now (its private one until it creates or joins one).
    let family: FamilyID
    /// The current projection (its file attached as `proj`).
    var projector: Projector
    /// The name of its file in the home.
    var projectionName: String
    /// Set when a household event was applied: verdicts may have changed, so
    /// the projection is rebuilt once the current log operation is done.
    var needsRebuild = false
    /// Whether this process said that the stores are behind the log (no
    /// room to write its last events): said once.
    var storesBehindSaid = false
    /// How many changes ``apply(_:prepared:)`` left to the rebuild that
    /// ``needsRebuild`` promises, in this process.
    var leftToRebuild = 0
    /// A record (`record`, its id) or care subject (`subject`, its focus key).
    struct EntityKey: Hashable, Comparable {
        let kind: String
        let id: String
        static func < (a: EntityKey, b: EntityKey) -> Bool { (a.kind, a.id) < (b.kind, b.id) }
    }
    /// The records and care subjects that other devices' events changed in
    /// this process, each with the
    /// versions applied: what `sync` looks at to say which of this device's
    /// deletions a later change undid. At most ``changedByOthersLimit``.
    var changedByOthers: [EntityKey: Set<Version>] = [:]
    static let changedByOthersLimit = 2_000
    /// Other devices' events applied in this process that are dated more
    /// than ``farAheadArrival`` ahead of this device's clock, by author:
    /// how many, and the latest date. `sync` says so once, when they
    /// arrive: until then they win over every change of what they change.
    var arrivedFarAhead: [DeviceID: (count: Int, latest: HLC)] = [:]
    /// How far ahead of this device's clock another device's event must be
    /// dated for `sync` to say so when it arrives (within a day, a clock
    /// a little off; ``Home/datedAheadWarning`` covers a change it outdid).
    static let farAheadArrival: TimeInterval = 86_400
    /// Each forked author of the family and its fork point (the lowest seq at
    /// which the log holds two of its events): its events from there on are
    /// kept in the log and left out of every projection.
    var forkPoints: [DeviceID: UInt64] = [:]
    /// Set while a pull is reading files (``pulling(_:)``).
    var isPulling = false
    /// How many events the last rebuild pass could not open although it
    /// held their key (their bytes damaged in the log): their changes are
    /// missing from the stores. `replay` names them.
    var unopenedInRebuild = 0
    /// Whether a rebuild that could not open some events although it held
    /// their key (their bytes damaged) keeps the stores as they are instead
    /// of switching to stores without those events' changes (`famctl
    /// rebuild` without `--drop-damaged`; the stores may hold the only
    /// readable copy of them).
    var keepStoresWhenDamaged = false

    var deviceID: DeviceID { identity.deviceID }

    /// Where the home is: `--home`, else `$FAMCTL_HOME`, else the XDG data dir.
    static func location(_ inv: Invocation) throws(CLIError) -> String {
        if let h = inv.home, !h.isEmpty { try checkNoTilde(h, "--home", inv); return absolute(h) }
        if let h = inv.environment["FAMCTL_HOME"], !h.isEmpty { try checkNoTilde(h, "FAMCTL_HOME", inv); return absolute(h) }
        // Tidied as --home is (`HOME=/` gave `//.local/share/famctl`); a
        // relative one is passed over, as a relative XDG_DATA_HOME is.
        if let x = inv.environment["XDG_DATA_HOME"], x.hasPrefix("/") { return absolute(x + "/famctl") }
        if let h = inv.environment["HOME"], h.hasPrefix("/") { return absolute(h + "/.local/share/famctl") }
        throw .usage("no home directory: set --home, FAMCTL_HOME or HOME")
    }

    /// Refuses a home path that begins with a `~` no shell expanded
    /// (`--home=~/fam`, a quoted value, a cron line): it would make a
    /// folder named `~` in the current one, a second home (a review).
    private static func checkNoTilde(_ p: String, _ what: String, _ inv: Invocation) throws(CLIError) {
        guard p == "~" || p.hasPrefix("~/") else { return }
        let home = inv.environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        throw .usage("\(what) '\(p)' begins with a '~' that no shell expanded (as in --home=~/…, or a quoted value): it would name a folder called '~' here",
                     hint: home.map { "Give the path in full: \(what == "--home" ? "--home " : "FAMCTL_HOME=")\(shellWord(absolute($0 + p.dropFirst())))." }
                        ?? "Give the path in full, from /.")
    }

    /// `p` as one word of a shell command to copy: as it is when it holds
    /// only characters no shell reads specially, else in double quotes
    /// (`"`, `\\`, `$` and `` ` `` escaped), which read within a hint's
    /// single-quoted command. (An interactive bash still expands a `!` in
    /// them: a path with one is rare.)
    static func shellWord(_ p: String) -> String {
        let plain = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,:@%")
        if !p.isEmpty, p.unicodeScalars.allSatisfy(plain.contains) { return p }
        var out = "\""
        for c in p { if "\"\\$`".contains(c) { out.append("\\") }; out.append(c) }
        return out + "\""
    }

    /// `p` made absolute and tidied: no empty or `.` components, no
    /// trailing slash (`/a/./b/` is `/a/b`), so that one folder is one
    /// text wherever it is kept, compared or put into an invitation. `..`
    /// is kept: through a symbolic link it is not the folder before it.
    static func absolute(_ p: String) -> String {
        let whole = p.hasPrefix("/") ? p : FileManager.default.currentDirectoryPath + "/" + p
        return "/" + whole.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }.joined(separator: "/")
    }

    /// `p` (absolute) with symbolic links resolved as far as it exists:
    /// the real path of its deepest existing folder, then the rest as given.
    static func realPath(_ p: String) -> String {
        var head = p, rest: [Substring] = []
        while head != "/" && !head.isEmpty {
            if let resolved = realpath(head, nil) {
                defer { free(resolved) }
                return ([String(cString: resolved)] + rest.reversed().map(String.init)).joined(separator: "/").replacingOccurrences(of: "//", with: "/")
            }
            let cut = head.lastIndex(of: "/") ?? head.startIndex
            rest.append(head[head.index(after: cut)...])
            head = String(head[..<cut])
        }
        return "/" + rest.reversed().joined(separator: "/")
    }

    /// The family folder of a shared folder that `path` is, or lies in
    /// (`DIR/<family id>/` holding a device's folder or `blobs`), else
    /// `nil`: no place for a home, whose private key the folder's sync
    /// would copy to every member.
    static func sharedFolder(holding path: String) -> String? {
        let fm = FileManager.default
        func isFamilyFolder(_ f: String) -> Bool {
            guard FamilyID(string: (f as NSString).lastPathComponent) != nil,
                  let names = try? fm.contentsOfDirectory(atPath: f) else { return false }
            return names.contains { $0 == "blobs" || ($0.count == 64 && $0.allSatisfy(\.isHexDigit)) }
        }
        var dir = realPath(absolute(path))
        while true {
            if isFamilyFolder(dir) { return dir }
            for name in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] where isFamilyFolder(dir == "/" ? "/" + name : dir + "/" + name) {
                return dir == "/" ? "/" + name : dir + "/" + name
            }
            guard dir != "/", let cut = dir.lastIndex(of: "/") else { return nil }
            dir = cut == dir.startIndex ? "/" : String(dir[..<cut])
        }
    }

    /// Refuses a shared folder that is the home, holds it or lies inside it:
    /// the home holds this device's private key, which a sync engine would
    /// copy to every member's device, and a home inside the folder would
    /// have famctl read its own files as the family's.
    static func checkApart(home: String, shared: String) throws(CLIError) {
        let h = realPath(absolute(home)), d = realPath(absolute(shared))
        func within(_ a: String, _ b: String) -> Bool { a == b || a.hasPrefix(b == "/" ? b : b + "/") }
        guard within(h, d) || within(d, h) else { return }
        let how = h == d ? "is the home itself" : within(h, d) ? "holds the home \(h)" : "lies inside the home \(h)"
        throw .usage("the shared folder \(shared) \(how): the home holds this device's private key (identity.key), which the folder's sync would copy to every member",
                     hint: "Keep them apart: a shared folder outside the home (for example ~/Sync/family), and the home where it is (--home, FAMCTL_HOME, default ~/.local/share/famctl).")
    }

    /// A path given on the command line, made absolute; an empty one (an
    /// unset variable in a script) is refused rather than taken for the
    /// current directory.
    /// - Parameter what: how the usage names it (`DIR`, `--out`).
    static func absolute(given p: String, as what: String, directory: Bool = false) throws(CLIError) -> String {
        guard !p.isEmpty else {
            throw .usage("\(what) needs a path, not an empty one", hint: directory ? "Give the directory explicitly ('.' for the current one)." : "Give the file's path.")
        }
        return absolute(p)
    }

    private init(path: String, identity: DeviceIdentity, log: EventLog, state: DeviceState) throws {
        self.path = path
        self.identity = identity
        self.log = log
        self.state = state
        guard let f = try state.get(.family), let family = FamilyID(string: f) else {
            throw CLIError(.dataError, "this home has no family id", hint: "The home is damaged; restore it from a backup.")
        }
        self.family = family
        (projectionName, projector) = try Self.openProjection(home: path, log: log, state: state, family: family)
        forkPoints = try log.forkPoints(in: family)
        log.willBegin = { [unowned self] in try projectionWillBegin() }
        log.willCommit = { [unowned self] in try projectionWillCommit() }
        try rebuildProjectionsIfOutdated()
    }

    /// The error for a home path that is (or passes through) a symbolic
    /// link whose target is not there (a drive not mounted), or `nil`:
    /// said as such, not as a missing home that `init` then cannot make
    /// ("File exists", a review).
    static func danglingLink(_ path: String) -> CLIError? {
        var head = path
        while head != "/" && !head.isEmpty {
            var st = stat()
            if lstat(head, &st) == 0 {
                guard st.st_mode & S_IFMT == S_IFLNK, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: head) else { return nil }
                var followed = stat()
                guard stat(head, &followed) != 0 else { return nil }
                if errno == ELOOP {
                    return CLIError(.noInput, "\(head) is a symbolic link in a loop of links (to \(target), which leads back)",
                                    hint: "Point the link at a folder, or give another --home.")
                }
                return CLIError(.noInput, "\(head) is a symbolic link to \(target), which is not there",
                                hint: "Mount or make what it leads to (a drive not mounted?), or give another --home.")
            }
            guard let cut = head.lastIndex(of: "/"), cut != head.startIndex else { return nil }
            head = String(head[..<cut])
        }
        return nil
    }

    /// Opens an initialised home.
    /// - Throws: ``CLIError`` saying which path is missing or unreadable and why.
    static func open(_ path: String) throws -> Home {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            if let dangling = Self.danglingLink(path) { throw dangling }
            // (Naming the path: `init` without it makes the default home,
            // not this one, and "pass --home" misled a user who had.)
            throw CLIError(.noInput, "no famctl home at \(path)",
                           hint: "Run 'famctl init --name NAME --home \(Self.shellWord(path))' to create one there, or give the --home of an existing one.")
        }
        guard isDir.boolValue else { throw CLIError(.noInput, "\(path) is not a directory") }
        guard access(path, R_OK | W_OK | X_OK) == 0 else {
            let e = errno
            throw CLIError(.cantCreate, "cannot use the famctl home \(path): \(String(cString: strerror(e)))",
                           hint: e == EROFS
                               ? "The home is on a read-only file system (a read-only mount, a snapshot): famctl writes to its database even to read it. "
                                 + "Remount it read-write, or copy the home to a writable place and pass that --home; nothing was touched."
                               : "The home belongs to another user, or its permissions were changed; nothing was touched.")
        }
        let idPath = path + "/" + identityFile
        var link = stat()
        if lstat(idPath, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
            // Its mode is the link's, its target anyone's: a `chmod` would
            // change the target, wherever it is.
            throw CLIError(.dataError, "\(idPath) is a symbolic link; famctl reads this device's key only from a file in the home",
                           hint: "Put the key file itself in its place (copy the file the link leads to over the link, then 'chmod 600' it), or restore it from a backup of this home; nothing was touched.")
        }
        guard FileManager.default.fileExists(atPath: idPath) else {
            if let family = sharedFolder(holding: path) {
                let where_ = (family as NSString).deletingLastPathComponent == realPath(absolute(path)) ? "is a family's shared folder (it holds \(family))" : "is in a family's shared folder (\(family))"
                throw CLIError(.noInput, "\(path) is not a famctl home: it \(where_)",
                               hint: "Pass this device's home instead (--home DIR or FAMCTL_HOME; 'famctl settings sync' there shows its shared folder). "
                                   + "A home is never made in a shared folder: its sync would copy the device's private key to every member.")
            }
            // Its key lost, but a stores file of records left: `export
            // stores` writes them (and `init` would not wipe them).
            if let (file, records) = storesWithRecords(in: path) {
                var e = CLIError(.noInput, "\(path) has no \(identityFile) (this device's key), but holds \(file) with \(records) record(s)",
                                 hint: "'famctl export stores DIR --home \(path)' writes them (import them into a new home); restore \(identityFile) from a backup of this device to use the home again.")
                e.logUnreadable = true
                throw e
            }
            throw CLIError(.noInput, "\(path) is not an initialised famctl home (no \(identityFile))", hint: "Run 'famctl init --name NAME --home \(Self.shellWord(path))'.")
        }
        guard FileIO.isRegularFile(idPath) else {
            throw CLIError(.dataError, "\(idPath) is not a file (a folder, a device or a pipe is in its place)",
                           hint: "Put this device's key file back (from a backup of this home); a device's key cannot be made again.")
        }
        if let mode = (try? FileManager.default.attributesOfItem(atPath: idPath))?[.posixPermissions] as? NSNumber,
           mode.intValue & 0o077 != 0 {
            throw CLIError(.noInput, "\(idPath) is readable by others (mode \(String(mode.intValue & 0o777, radix: 8))); refusing to use it",
                           hint: "Run 'chmod 600 \(idPath)', and consider this device's key exposed if others could read it.")
        }
        let identity: DeviceIdentity
        do {
            let bytes = try FileIO.readSecret(idPath)
            identity = try DeviceIdentity(encoded: bytes)
        } catch let e as FileIO.Failure {
            // An input not readable: 66, as the exit-code table says (a review: 73).
            throw CLIError(.noInput, "cannot read \(idPath): \(e.reason)",
                           hint: e.permissionDenied ? "Check the file's owner and mode (it should be 0600, owned by you)." : nil)
        } catch let e as IdentityError {
            // The stores' file still holds the records, those never synced
            // included: `export stores` writes them (a review: it was
            // refused, and the hint named `init`, which no member uses).
            var error = CLIError(.dataError, "\(idPath) is damaged: \(e)",
                                 hint: "A device's key cannot be recovered: restore the file from a backup of this device. Otherwise save this home's records with "
                                     + "'famctl export stores DIR --home \(Self.shellWord(path))', make a new home (a member: 'famctl accept' with a new invitation; "
                                     + "the family's owner, whom nobody else can invite: 'famctl init' and 'famctl family create'), and run 'famctl import stores DIR' there.")
            error.logUnreadable = storesWithRecords(in: path) != nil
            throw error
        }
        // `init` writes the key last, so a home with a key has had its log:
        // opened without it, SQLite would make an empty one in its place.
        // An empty file with no write-ahead log beside it holds no log
        // either (SQLite would write a new, empty one into it).
        if FileIO.size(path + "/" + databaseFile) == 0, (FileIO.size(path + "/" + databaseFile + "-wal") ?? 0) == 0 {
            var e = CLIError(.dataError, "\(path + "/" + databaseFile) is empty (0 bytes): this device's event log is gone; nothing was written into it",
                             hint: CLIError.logLostHint)
            e.logUnreadable = true
            throw e
        }
        guard FileManager.default.fileExists(atPath: path + "/" + databaseFile) else {
            var e = CLIError(.noInput, "\(path) holds this device's key but not its event log (\(databaseFile) is missing); nothing was created",
                             hint: CLIError.logLostHint)
            e.logUnreadable = true
            throw e
        }
        let log = try Self.openLog(path)
        let state = try DeviceState(database: log.database)
        try Self.checkKeyIsTheHomes(identity, state: state, log: log, path: path)
        return try Home(path: path, identity: identity, log: log, state: state)
    }

    /// Refuses a key file that is not the one the home was made with: a
    /// backup of another device's `identity.key` (or of its database) put
    /// in place. Signing with it here would write that device's events from
    /// this home's log, both devices would sign the same places of one
    /// chain, and the family would stop accepting either (a fork).
    ///
    /// A home made before the device id was kept learns it now, from the
    /// key it is opened with, when its log holds events of that key's
    /// device or none at all; a log that holds events and none of that
    /// device's is another device's (a review: with the setting deleted,
    /// another device's key was adopted without a word, and signed in its
    /// name).
    static func checkKeyIsTheHomes(_ identity: DeviceIdentity, state: DeviceState, log: EventLog, path: String) throws {
        let kept: String
        if let k = try state.get(.deviceID) {
            kept = k
        } else {
            let own = try log.database.statement("SELECT 1 FROM events WHERE author = ?1 LIMIT 1").first([.blob(identity.deviceID.bytes)]) { _ in true } ?? false
            guard !own, let another = try log.database.statement("SELECT author FROM events LIMIT 1").first([], { Hex.encode($0.blob(0)) }) else {
                try? state.set(.deviceID, identity.deviceID.hex)
                return
            }
            kept = another
        }
        guard kept != identity.deviceID.hex else { return }
        let name = (try? state.get(.deviceName)).flatMap { $0 }.map { " (\"\($0)\")" } ?? ""
        throw CLIError(.dataError, "\(path)/\(identityFile) is the key of device \(identity.deviceID.short), but this home's log and settings are device \(String(kept.prefix(12)))'s\(name): "
                       + "the key file (or \(databaseFile)) was put there from another device; nothing was touched",
                       hint: "Put back this home's own \(identityFile) (or \(databaseFile)) from a backup of this device. "
                           + "Signing with another device's key here would fork that device's chain, and the family would stop accepting its events.")
    }

    /// How a new home starts: a private family of its own, or (accepting an
    /// invitation) the family the invitation names, with its key.
    enum Start {
        case privateFamily
        case joining(FamilyID, EpochKey, owner: DeviceID)
    }

    /// Creates a new home with a fresh device identity.
    static func create(_ path: String, name: String, start: Start = .privateFamily) throws -> Home {
        let fm = FileManager.default
        if fm.fileExists(atPath: path + "/" + identityFile) {
            throw CLIError(.cantCreate, "\(path) is already a famctl home", hint: "Use it as it is, or pass another --home.")
        }
        if let family = sharedFolder(holding: path) {
            throw CLIError(.usage, "\(path) is in a family's shared folder (\(family)): a home there would have its private key (identity.key) copied to every member by the folder's sync; nothing was created",
                           hint: "Make the home outside the shared folder (the default ~/.local/share/famctl, or another --home), and give the folder with --dir.")
        }
        do {
            try FileIO.createDirectories(atPath: path, attributes: [.posixPermissions: 0o700])
            // An existing directory keeps its mode otherwise; a home is private.
            try fm.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        } catch {
            if let dangling = Self.danglingLink(path) { throw dangling }
            throw CLIError(.cantCreate, "cannot create \(path): \(FileIO.reason(error, creating: path))")
        }
        // Two inits (or accepts) of one new home at once: the second waits,
        // then finds the first's home, instead of both saying they made it
        // and one device's key replacing the other's.
        return try FileIO.withExclusiveLock(path + "/" + initLockFile) {
            if fm.fileExists(atPath: path + "/" + identityFile) {
                throw CLIError(.cantCreate, "\(path) is already a famctl home (made by another famctl at the same time)", hint: "Use it as it is, or pass another --home.")
            }
            return try createLocked(path, name: name, start: start)
        }
    }

    /// The lock `init` and `accept` hold while they make a home.
    static let initLockFile = "init.lock"

    private static func createLocked(_ path: String, name: String, start: Start) throws -> Home {
        try Self.clearUnfinishedCreation(path)
        // What this creation writes before the identity (written last) is
        // removed should it fail (a full disk, say): "nothing was written"
        // is then so (a review: a refused accept left 1.7 MB of database
        // files behind). What was there before was cleared just above.
        do {
            return try createFiles(path, name: name, start: start)
        } catch {
            if !FileManager.default.fileExists(atPath: path + "/" + identityFile) { removeDatabaseFiles(path) }
            throw error
        }
    }

    /// The log, the stores' files and their -wal and -shm files of `path`.
    private static func removeDatabaseFiles(_ path: String) {
        let db = path + "/" + databaseFile
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where name.hasPrefix("projection.") {
            try? FileManager.default.removeItem(atPath: path + "/" + name)
        }
    }

    /// ``createLocked(_:name:start:)``'s files, the identity last.
    private static func createFiles(_ path: String, name: String, start: Start) throws -> Home {
        let identity = DeviceIdentity.generate()
        let log = try Self.openLog(path)
        // This device's own family is the one it would own: its id is derived from the device key.
        let state = try DeviceState(database: log.database)
        try log.database.transaction(.immediate) {
            try state.set(.deviceName, name)
            try state.set(.deviceID, identity.deviceID.hex)
            try state.set(.createdAt, ISO8601DateFormatter().string(from: Date()))
            switch start {
            case .privateFamily:
                let family = FamilyID.owned(by: identity.deviceID)
                try state.set(.family, family.description)
                try state.keyring.store(EpochKey.generate(epoch: 0), family: family)
            case .joining(let family, let key, let owner):
                try state.set(.family, family.description)
                try state.set(.owner, owner.hex)
                try state.keyring.store(key, family: family)
            }
        }
        let home = try Home(path: path, identity: identity, log: log, state: state)
        // The identity goes last: a home without it is not yet a home, and a retry starts over.
        do {
            try FileIO.writeSecretAtomically(identity.encoded(), to: path + "/" + identityFile)
        } catch {
            throw CLIError(.cantCreate, "cannot write \(path)/\(identityFile): \(error.reason)")
        }
        return home
    }

    /// A database without an identity is what an interrupted `init` leaves:
    /// removed when it holds no events, refused when it does (its device key
    /// is lost, and a new key cannot continue its chain).
    private static func clearUnfinishedCreation(_ path: String) throws {
        // A key an init killed while writing it left under its temporary
        // name (`identity.key.tmp-PID`): a private key no device has.
        FileIO.removeLeftoverTemporaries(in: path)
        let db = path + "/" + databaseFile
        guard FileManager.default.fileExists(atPath: db) else { return }
        let events = try openLog(path).count()
        guard events == 0 else {
            throw CLIError(.cantCreate, "\(path) holds a log of \(events) events but no \(identityFile)",
                           hint: "Restore \(identityFile) from a backup of this device, or create the new device in another --home.")
        }
        // The log empty (gone, or lost), but a stores file of records: they
        // may be the last copy of what this home held (`export stores`
        // still writes them); never wiped by a new device's files.
        if let (file, records) = storesWithRecords(in: path) {
            var e = CLIError(.cantCreate, "\(path) holds \(file) with \(records) record(s) but no \(identityFile), and its log holds no events: they may be the last copy of this home's records; nothing was written",
                             hint: "'famctl export stores DIR --home \(path)' writes them (import them into a new home), then create the new device in another --home.")
            e.logUnreadable = true
            throw e
        }
        removeDatabaseFiles(path)
    }

    /// A stores file of the home at `path` that holds records, and how
    /// many (read only; a file that cannot be read counts as none).
    static func storesWithRecords(in path: String) -> (String, Int)? {
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
        where (try? /projection\.[0-9]+\.sqlite/.wholeMatch(in: name)) != nil {
            guard let db = try? Database(path: path + "/" + name, create: false, readOnly: true),
                  let n = try? db.statement("SELECT count(*) FROM p_entities WHERE kind = 'record'").first([], { Int($0.int(0)) }), n > 0 else { continue }
            return (name, n)
        }
        return nil
    }

    private static func openLog(_ path: String) throws -> EventLog {
        do {
            let log = try EventLog(path: path + "/" + databaseFile)
            if log.database.lockedExclusively { warnOfFullDisk(home: path) }
            if !log.rulesFoundMissing.isEmpty {
                Console.err("famctl: warning: the log's append-only rules (\(log.rulesFoundMissing.joined(separator: ", "))) were removed or altered in \(databaseFile) outside famctl"
                    + (log.rulesPutBack ? "; they are put back" : ", and cannot be put back now (the file is read-only, or another famctl process is writing it): a later command does")
                    + ". Events, fork proofs or rejected events deleted or changed meanwhile cannot be ruled out: 'famctl replay' audits the log, and 'famctl sync' reads back the last events of a chain taken out of it.")
            }
            return log
        } catch let e as SQLiteError {
            throw CLIError.fromSQLite(e, path: path + "/" + databaseFile)
        }
    }

    /// The family this device writes to and its current epoch key.
    func currentKey() throws -> (FamilyID, EpochKey) {
        guard let key = try state.keyring.current(family: family) else {
            throw CLIError(.dataError, "no key for family \(family)", hint: "The home is damaged; run 'famctl replay'.")
        }
        return (family, key)
    }
}

@available(*, unavailable)
extension Home: Sendable {}

extension CLIError {
    /// Any failure as a command reports it: a ``CLIError`` as it is, a
    /// SQLite failure of the database under `path` and the log's own errors
    /// with what to do, anything else as a plain failure (exit 1).
    init(_ error: any Error, path: String) {
        switch error {
        case let e as CLIError:
            self = e
        case let e as SQLiteError where e.code == .corrupt || e.code == .notADatabase:
            // A home: say which file, and when it is a projection, that the log rebuilds it.
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
                  let damaged = Home.damagedDatabase(home: path) else {
                self = CLIError.fromSQLite(e, path: path)
                return
            }
            if damaged.isProjection {
                self = CLIError(.dataError, "the stores' file \(damaged.path) is damaged: \(e.message); the log is intact",
                                hint: "Run 'famctl rebuild': it builds the stores again from the log.")
            } else {
                self = CLIError.fromSQLite(e, path: damaged.path)
            }
        case let e as DamagedRow:
            // Sound pages, a value in them altered: SQLite's checks pass, the stores' reader does not.
            let newest = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
                .compactMap { name in Home.generation(ofProjectionFile: name).map { (name, $0) } }
                .max { $0.1 < $1.1 }
            let file = newest.map { path + "/" + $0.0 } ?? path
            self = CLIError(.dataError, "the stores' file \(file) is damaged: \(e); the log is intact",
                            hint: "Run 'famctl rebuild': it builds the stores again from the log.")
        case let e as SQLiteError:
            self = CLIError.fromSQLite(e, path: path)
        case EventLogError.ownChainForked:
            self = CLIError(.failure, "\(error)",
                            hint: "Its key signed two histories: its home was copied to another install, or restored from a backup and written on before it synced. "
                                + "'famctl status' shows where they part. If the other copy published first, the family goes on with it: write there. To write from this one, join from a new home: ask the owner for an invitation, "
                                + "then 'famctl accept CODE --name NAME --home NEWDIR'. (If this device is the family's owner, which nobody can invite or replace: members "
                                + "go on recording, but nobody can invite or remove any more; to go on, the owner should \(Home.ownerStartsAgain).)")
        case EventLogError.damagedEvent:
            // Found while publishing: the events before it went out, it and the rest did not.
            self = CLIError(.dataError, "\(error); it was not published, nor anything after it in that chain (nothing damaged leaves this device)",
                            hint: SyncCommand.damagedOwnHint)
        case EventLogError.envelope(.tooLarge(let count)):
            // Commands check their bodies first (``RecordInput/checkFitsOneEvent(_:)``);
            // one that did not still gets bad data, not a failure.
            self = CLIError(.dataError, "a change is too large for one event: its ciphertext would be \(count) bytes, over the \(SyncEnvelope.maximumCiphertext)-byte limit; nothing was written",
                            hint: "Shorten its longest fields; pictures go through 'famctl photo add'.")
        case EventLogError.notStored:
            self = CLIError(.tempFail, "\(error)", hint: "Run the command again: the next famctl command to open the log removes such rules (and says so).")
        case EventLogError.missingEvent:
            // Found while publishing: taken out of the log before it went out.
            self = CLIError(.dataError, "\(error); it was not published, so neither it nor anything after it in that chain can reach the family",
                            hint: SyncCommand.damagedOwnHint)
        case EventLogError.ownEventsPending:
            self = CLIError(.tempFail, "\(error)",
                            hint: "This home is older than what it published (restored from a backup?), and its later events are still arriving. "
                                + "Run 'famctl sync' until they are in; 'famctl status' counts what waits.")
        case let e as FileIO.Failure where [ENOSPC, EDQUOT, EFBIG].contains(e.code):
            // A file of the home (a photo's copy, say) on a full disk or over a file-size limit.
            self = CLIError(.cantCreate, "cannot write in \(path): \(e.code == EFBIG ? "a file-size limit was reached (ulimit -f)" : "the disk is full (or its quota used up)"): \(e.reason); nothing was lost",
                            hint: "Free some space (or raise the limit) and run the command again.")
        case let e as FileIO.Failure where e.code == EIO:
            self = CLIError(.tempFail, "I/O error in \(path): \(e.reason); nothing was lost", hint: "Check the disk, then try again.")
        default:
            // Foundation's errors print as a bare domain and code: the system's words instead.
            let ns = error as NSError
            self = CLIError(.failure, ns.domain == NSCocoaErrorDomain || ns.domain == NSPOSIXErrorDomain ? FileIO.reason(error) + Self.pathSuffix(ns) : "\(error)")
        }
    }

    /// " (PATH)" for a Foundation file error that names its path.
    private static func pathSuffix(_ ns: NSError) -> String {
        (ns.userInfo[NSFilePathErrorKey] as? String).map { " (\($0))" } ?? ""
    }

    /// A database this user may not write: for a home, the files of it that
    /// this user may not write are named (the log's, the projection's, or
    /// their -wal and -shm files), not only the home.
    private static func readOnly(_ e: SQLiteError, path: String) -> CLIError {
        guard FileIO.isDirectory(path) else {
            return CLIError(.cantCreate, "cannot write \(path): \(e.message)",
                            hint: "Check the permissions of the home directory, and of \((path as NSString).lastPathComponent) and its -wal and -shm files: this user must be able to write them.")
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
            .filter { $0.hasSuffix(".sqlite") || $0.hasSuffix(".sqlite-wal") || $0.hasSuffix(".sqlite-shm") }
        let culprits = names.filter { access(path + "/" + $0, W_OK) != 0 }
        let folder = access(path, W_OK) != 0
        let named = culprits.map { path + "/" + $0 } + (folder ? [path + " (the home directory itself)"] : [])
        return CLIError(.cantCreate, "cannot write \(named.isEmpty ? path : named.joined(separator: ", ")): \(e.message)",
                        hint: "This user must be able to write the home directory and its database files (\(Home.databaseFile), the projection's, and their -wal and -shm files): "
                            + "check their owner and permissions (ls -l \(path)).")
    }

    /// What to do when this home's log is gone or damaged.
    static let logLostHint = "Restore \(Home.databaseFile) (with its -wal file, if any) from a backup of this home. Without one, "
        + "'famctl export stores DIR' still writes the records the stores hold, those never synced included; this device's chain cannot go on: "
        + "join the family again from a new home ('famctl accept CODE --name NAME --home NEWDIR') and import that export there; "
        + "the family's other devices hold what it had published."

    /// Maps a SQLite failure to an exit code and a message a person can act on.
    static func fromSQLite(_ e: SQLiteError, path: String) -> CLIError {
        if e.isOutOfSpace {
            return CLIError(.cantCreate, "cannot write to \(path): the disk is full, a file-size limit was reached, or the disk failed; nothing was written",
                            hint: "Free some space and run the command again; everything acknowledged before is intact.")
        }
        return switch e.code {
        case .busy, .locked:
            CLIError(.tempFail, "the database \(FileIO.isDirectory(path) ? path + "/" + Home.databaseFile : path) is locked by another famctl process",
                     hint: "Another famctl process is writing to this home (a command still running, a 'famctl sync --watch', an import, a rebuild); try again once it is done. "
                        + Home.lockWaitHint)
        case .full:
            CLIError(.cantCreate, "the disk holding \(path) is full; nothing was written", hint: "Free some space and run the command again.")
        case .readOnly, .permission:
            readOnly(e, path: path)
        case .cantOpen:
            CLIError(.noInput, "cannot open \(path): \(e.message)", hint: "Check that the path exists and is readable.")
        case .corrupt where path.hasSuffix("/" + Home.databaseFile), .notADatabase where path.hasSuffix("/" + Home.databaseFile):
            { var l = CLIError(.dataError, "\(path) is damaged: \(e.message)", hint: "The database file cannot be read. " + CLIError.logLostHint); l.logUnreadable = true; return l }()
        case .corrupt, .notADatabase:
            CLIError(.dataError, "\(path) is damaged: \(e.message)", hint: "The database file cannot be read; restore it from a backup of this home.")
        case .ioError:
            CLIError(.tempFail, "I/O error on \(path): \(e.message) (SQLite code \(e.extendedCode))", hint: "Check the disk, then try again.")
        default:
            CLIError(.failure, "database error on \(path): \(e)")
        }
    }
}
