import Envelope
import EventLog
import Foundation
import Projections
import Replicator
import Synchronization

/// The projection's own file.
///
/// The stores live in `HOME/projection.N.sqlite`, attached to the log's
/// connection as `proj`; the device setting `projection.file` names the
/// current one. A rebuild writes a new file of the next generation beside
/// it, with its rollback journal in memory (nothing in it matters until it
/// is complete), fsyncs it, and then switches the setting in one
/// transaction of the log's database: the old projection serves every
/// reader until that commit, and a crash before it leaves only a file to
/// remove. Nothing is emptied, and nothing is written twice (through a
/// write-ahead log and again at its checkpoint): a rebuild of 1M events
/// became 1.17 times as fast.
///
/// Transactions that add events span both files, and SQLite commits each
/// file of such a transaction atomically, but not the two together. So the
/// projection records the log position it reflects (its mark, written in the
/// same transaction as its changes). A projection behind the log (its last
/// commits lost to a power failure: it is written with `synchronous=NORMAL`,
/// being derived; or a process killed between the two commits) applies the
/// events after its mark, at the next write or open; one ahead of it, or
/// damaged, or missing, is rebuilt on open.
extension Home {
    /// The name the current projection is attached under.
    static let projectionSchema = "proj"
    /// The name a rebuild's new projection is attached under until it becomes current.
    static let nextProjectionSchema = "next"
    /// Held (`flock`) while a rebuild makes and switches a projection file.
    static let projectionLockFile = "projection.lock"

    static func projectionFile(generation: Int) -> String { "projection.\(generation).sqlite" }

    /// What SQLite keeps beside a projection file: its write-ahead log, its
    /// shared memory, a rollback journal.
    static let sideFileSuffixes = ["-wal", "-shm", "-journal"]

    /// Removes the projection file `name` and what SQLite keeps beside it.
    private static func removeProjectionFile(_ name: String, home path: String) {
        for suffix in [""] + sideFileSuffixes { try? FileManager.default.removeItem(atPath: path + "/" + name + suffix) }
    }

    /// The generation of a projection file's name, or `nil` for another file.
    static func generation(ofProjectionFile name: String) -> Int? {
        guard name.hasPrefix("projection."), name.hasSuffix(".sqlite") else { return nil }
        return Int(name.dropFirst("projection.".count).dropLast(".sqlite".count))
    }

    /// Which of a home's databases SQLite found damaged mid-command (its
    /// message does not say: the projection is attached to the log's
    /// connection): the log's file is checked (`quick_check`), then each
    /// projection file, newest first. `nil` when all check whole.
    static func damagedDatabase(home path: String) -> (path: String, isProjection: Bool)? {
        func whole(_ file: String) -> Bool { damage(of: file) == nil }
        let log = path + "/" + databaseFile
        if !whole(log) { return (log, false) }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .compactMap { name in generation(ofProjectionFile: name).map { (name, $0) } }
            .sorted { $0.1 > $1.1 }
        for (name, _) in names where !whole(path + "/" + name) { return (path + "/" + name, true) }
        return nil
    }

    /// What SQLite's `quick_check` finds wrong with a database file (its
    /// first finding), or `nil` when it checks whole.
    static func damage(of file: String) -> String? {
        guard let db = try? Database(path: file, create: false, readOnly: true) else { return "it cannot be opened" }
        // The check reads each page about once: a small page cache does
        // (the connection's usual 32 MiB filled with a large file's pages).
        try? db.execute("PRAGMA cache_size=-2048")
        return damage(in: db)
    }

    /// What `quick_check` finds wrong with the current projection file,
    /// checked through this home's own connection, where it is attached:
    /// a connection of its own cannot open it while this one holds the
    /// home in exclusive locking mode (a full disk; see
    /// ``Database/lockedExclusively``).
    func projectionDamage() -> String? {
        Self.damage(in: log.database, schema: Self.projectionSchema)
    }

    private static func damage(in db: Database, schema: String? = nil) -> String? {
        guard let answer = try? db.statement("PRAGMA \(schema.map { $0 + "." } ?? "")quick_check(1)").first([], { $0.text(0) }) else { return "it cannot be read as a database" }
        return answer == "ok" ? nil : answer
    }

    /// Raised inside a transaction whose projection is no longer the current
    /// one (another process rebuilt it meanwhile): rolled back, and run again
    /// on the current one.
    struct ProjectionMoved: Error {}

    /// A `file:` URI for `path` that opens an existing file only.
    private static func existingFileURI(_ path: String) -> String {
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "?#%'"))
        let path = Database.folderResolved(path)
        return "file:" + (path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path) + "?mode=rw"
    }

    /// Attaches the projection file `name` of the home at `path` as `schema`.
    private static func attachProjection(_ name: String, home path: String, log: EventLog, family: FamilyID,
                                         schema: String = projectionSchema) throws -> Projector {
        let db = log.database
        Database.matchSidecarModes(path + "/" + name)
        func attach(exclusively: Bool) throws -> Projector {
            // (For the connection: a file attached from then on is opened in
            // that mode; the attach reads the file already.)
            if exclusively { try db.execute("PRAGMA locking_mode=EXCLUSIVE") }
            try db.execute("ATTACH DATABASE '\(existingFileURI(path + "/" + name))' AS \(schema)")
            do {
                // A new (empty) file gets 32 KiB pages and a write-ahead log, so
                // that readers and writers do not block one another; for a file
                // that has them, both are no-ops.
                try db.execute("""
                    PRAGMA \(schema).page_size=\(Database.newPageSize); PRAGMA \(schema).journal_mode=WAL;
                    PRAGMA \(schema).synchronous=NORMAL; PRAGMA \(schema).cache_size=-32768
                    """)
                return try Projector(database: db, family: family, schema: schema)
            } catch {
                try? db.execute("DETACH DATABASE \(schema)")
                throw error
            }
        }
        do {
            return try attach(exclusively: false)
        } catch let e as SQLiteError where e.isOutOfSpace && !db.lockedExclusively {
            // No room for the file's `-shm` index (the log's found some: a
            // few KiB more free): as the log's connection does then
            // (``Database``), attached again in exclusive locking mode, the
            // index in memory, so that what only reads goes on (a review:
            // `status` and `record list` failed with 73 on a nearly full disk).
            guard let projector = try? attach(exclusively: true) else {
                try? db.execute("PRAGMA locking_mode=NORMAL")
                throw e
            }
            // Only the stores stay so (a database in write-ahead-log mode
            // whose index is in memory cannot leave exclusive mode): the
            // log, and files attached later (a rebuild's), go back to normal.
            try? db.execute("PRAGMA locking_mode=NORMAL")
            db.noteAttachedExclusively()
            warnOfFullDisk(home: path)
            return projector
        }
    }

    /// How a hint that a lock was waited for in vain ends.
    static let lockWaitHint = "FAMCTL_LOCK_WAIT sets how many seconds famctl waits for another process (0 to 3600; a minute unless set)."

    /// The homes this process has said are on a full disk.
    private static let warnedOfFullDisk = Mutex<Set<String>>([])

    /// Says, once a process, that the disk holding `home` is full and what
    /// goes on (its log's or its stores' `-shm` index had no room).
    static func warnOfFullDisk(home path: String) {
        guard warnedOfFullDisk.withLock({ $0.insert(path).inserted }) else { return }
        Console.err("famctl: warning: the disk holding \(path) is full (or a file-size limit was reached): what only reads goes on, "
            + "nothing can be written until space is freed, and other famctl commands of this home wait for this one.")
    }

    /// Whether an error attaching a projection file says the file is
    /// missing or damaged (it is then rebuilt), rather than that it could
    /// not be read just now (busy, out of descriptors: reported).
    static func isDamage(_ error: any Error) -> Bool {
        guard let e = error as? SQLiteError else { return false }
        return e.code == .cantOpen || e.code == .notADatabase || e.code == .corrupt
    }

    /// The damaged stores' files this process has said it rebuilds.
    static let damageSaid = Mutex<Set<String>>([])

    /// Opens the current projection of a home, for ``init(path:identity:log:state:)``:
    /// attached, or (none yet, missing or damaged) a new empty file, attached
    /// but not made current (no other process reads it) until
    /// ``rebuildProjectionsIfOutdated()`` has built it. Tables an older famctl
    /// kept in the log's database are dropped.
    static func openProjection(home path: String, log: EventLog, state: DeviceState, family: FamilyID) throws -> (String, Projector) {
        let db = log.database
        let oldLayout: Bool? = try db.statement("SELECT 1 FROM main.sqlite_schema WHERE name = 'p_schema'").first { _ in true }
        if oldLayout == true {
            try db.transaction(.immediate) {
                try Projector.drop(in: db)
                try state.remove(.projectionVersion)
            }
            // The room they took (as much as the log, at 1M events) goes
            // back to the disk, once. Should another process be reading, it
            // stays free inside the file, for the log to grow into.
            try? db.execute("VACUUM main")
        }
        // A missing file may be one another process just replaced: read the
        // setting again, once. (Replaced while this one attached it, the
        // file opens, then its write-ahead log does not: SQLite reads the
        // mode to give it from the file's path, gone, "disk I/O error
        // (SQLite code 1802)".)
        for _ in 0..<2 {
            guard let name = try state.get(.projectionFile) else { break }
            do {
                let projector = try attachProjection(name, home: path, log: log, family: family)
                removeLeftoverProjectionFiles(home: path, state: state)
                return (name, projector)
            } catch where isDamage(error) || !FileManager.default.fileExists(atPath: path + "/" + name) {}
        }
        return try withProjectionLock(home: path) { try openProjectionLocked(home: path, log: log, state: state, family: family) }
    }

    /// ``openProjection(home:log:state:family:)``'s work under the lock.
    private static func openProjectionLocked(home path: String, log: EventLog, state: DeviceState, family: FamilyID) throws -> (String, Projector) {
        let current = try state.get(.projectionFile)
        if let current {
            do {
                return (current, try attachProjection(current, home: path, log: log, family: family))
            } catch where isDamage(error) {
                // A file this user may not read or write is not damaged: said
                // so, not built again beside it (a review: "damaged", then a
                // rebuild that left it there).
                let file = path + "/" + current
                if FileManager.default.fileExists(atPath: file), access(file, R_OK | W_OK) != 0 {
                    throw CLIError(.cantCreate, "cannot open the stores' file \(file): \(String(cString: strerror(errno)))",
                                   hint: "This user must be able to read and write it (and its -wal and -shm files): check their owner and permissions (ls -l \(path)).")
                }
                // Built again from the log below, without being asked: said.
                let missing = !FileManager.default.fileExists(atPath: path + "/" + current)
                // Once a process: the home is opened again after the rebuild.
                if damageSaid.withLock({ $0.insert(path + "/" + current).inserted }) { Console.err("famctl: note: the stores' file \(path)/\(current) " + (missing ? "is missing" : "is damaged (\((error as? SQLiteError)?.message ?? "\(error)"))")
                    + "; this command builds the stores again from the log, which is intact.") }
            }
        }
        let name = try createProjectionFile(home: path, after: current)
        let projector = try attachProjection(name, home: path, log: log, family: family)
        // Empty is the state of an empty log: complete as it is.
        try log.database.transaction(.immediate) {
            guard try log.lastPosition() == 0 else { return }
            try projector.setMark(0)
            // Nothing is sealed in an empty log: every key held is reflected.
            try projector.noteKeys(state.keyring.epochs(family: family))
            try state.set(.projectionFile, name)
            try state.set(.projectionVersion, String(Projector.schemaVersion))
            try state.set(.projectionForks, "")
        }
        return (name, projector)
    }

    /// Creates an empty projection file (mode 0600, which SQLite gives its
    /// `-wal` and `-shm` files too) of a generation after `current` and after
    /// any file left in the home, and removes the files of other generations
    /// (what a rebuild interrupted by a crash left). Called holding the lock.
    private static func createProjectionFile(home path: String, after current: String?) throws -> String {
        let fm = FileManager.default
        let names = (try? fm.contentsOfDirectory(atPath: path)) ?? []
        var last = current.flatMap(generation(ofProjectionFile:)) ?? 0
        for n in names {
            let base = sideFileSuffixes.first(where: n.hasSuffix).map { String(n.dropLast($0.count)) } ?? n
            guard let g = generation(ofProjectionFile: base) else { continue }
            last = max(last, g)
            if base != current { try? fm.removeItem(atPath: path + "/" + n) }
        }
        let name = projectionFile(generation: last + 1)
        do {
            try FileIO.createNew(path + "/" + name, mode: 0o600)
        } catch {
            throw CLIError(.cantCreate, "cannot create \(path)/\(name): \(error.reason)",
                           hint: "Check the permissions of the home directory and the free space on its disk.")
        }
        return name
    }

    /// Removes the projection files of other generations than the current
    /// one that a rebuild killed midway left (as large as the stores, and
    /// otherwise kept until the next rebuild), when no rebuild runs: the
    /// projection lock is taken without waiting, and a rebuild that holds
    /// it is left to its file. Nothing is said; nothing read is lost (the
    /// current file stays, the log holds everything).
    static func removeLeftoverProjectionFiles(home path: String, state: DeviceState) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        func base(_ n: String) -> String { sideFileSuffixes.first(where: n.hasSuffix).map { String(n.dropLast($0.count)) } ?? n }
        let projectionFiles = Set(names.map(base).filter { generation(ofProjectionFile: $0) != nil })
        guard projectionFiles.count > 1 else { return }
        // Held by this thread (a rebuild's own open): its file is not a leftover.
        let held = path + "\u{0}" + String(describing: pthread_self())
        guard projectionLocksHeld.withLock({ $0.insert(held).inserted }) else { return }
        defer { _ = projectionLocksHeld.withLock { $0.remove(held) } }
        try? FileIO.withExclusiveLock(path + "/" + projectionLockFile, waitingAtMost: 0) {
            // Read again under the lock: a rebuild may have switched since.
            guard let current = try? state.get(.projectionFile) else { return }
            for name in projectionFiles where name != current { removeProjectionFile(name, home: path) }
        }
    }

    /// The homes whose projection lock a thread of this process holds (home and thread).
    private static let projectionLocksHeld = Mutex<Set<String>>([])

    /// Runs `body` holding the home's projection lock: one process at a time
    /// makes and switches projection files. Released when the process dies.
    ///
    /// - Parameter bounded: wait for another process's hold as long as for
    ///   the database's lock, then fail (exit 75); `false` waits as long as
    ///   it is held: after a commit, whose rebuild must not fail the
    ///   command that stored its events (a review: `member remove` said
    ///   "nothing was written", removed the member, and did not publish it).
    private static func withProjectionLock<T>(home path: String, bounded: Bool = true, _ body: () throws -> T) throws -> T {
        // Held by this process already (a write's last attempt, which may
        // rebuild): a second `flock` of its own would wait for itself.
        // (By this thread: another thread's `flock`, on a descriptor of its
        // own, waits for this one's as another process's does.)
        let held = path + "\u{0}" + String(describing: pthread_self())
        guard projectionLocksHeld.withLock({ $0.insert(held).inserted }) else { return try body() }
        defer { _ = projectionLocksHeld.withLock { $0.remove(held) } }
        do {
            // Held for as long as another process rebuilds the stores: a wait
            // that could last minutes is said, not silent.
            return try FileIO.withExclusiveLock(path + "/" + projectionLockFile, waitingAtMost: bounded ? Database.busyWaitSeconds : nil, willWait: {
                Console.err("famctl: another famctl is rebuilding this home's stores (\(projectionLockFile) is held); waiting for it to finish")
            }, body)
        } catch let e as FileIO.Failure where e.timedOut {
            throw CLIError(.tempFail, "another famctl process is rebuilding this home's stores (\(path)/\(projectionLockFile) is held; waited \(Database.busyWaitSeconds) s for it); nothing was written",
                           hint: "Try again once it is done. " + Home.lockWaitHint)
        } catch let e as FileIO.Failure {
            throw CLIError(e.permissionDenied ? .cantCreate : .tempFail, "cannot lock \(path)/\(projectionLockFile): \(e.reason)",
                           hint: "Check the permissions of the home directory.")
        }
    }

    /// Attaches the projection the settings name now, in place of the one
    /// this process had (another process rebuilt it). Should that file be
    /// missing or damaged, builds a new one. A mark behind the log is caught
    /// up by the next transaction (``projectionWillBegin()``).
    func followCurrentProjection() throws {
        try? log.database.execute("DETACH DATABASE \(Self.projectionSchema)")
        (projectionName, projector) = try Self.openProjection(home: path, log: log, state: state, family: family)
        if try state.get(.projectionFile) != projectionName { try rebuildProjections(unlessRebuilt: true) }
        // Another process rebuilt from the whole log, this device's keys and
        // fork points: a rebuild this one still owed is done (the operation
        // runs again on it and asks anew if it must).
        forkPoints = try log.forkPoints(in: family)
        if needsRebuild, try projectionSettingsMatch(), try projector.mark() == log.lastPosition() { needsRebuild = false }
    }

    /// Runs a log operation; should it fail because another process
    /// switched the projection meanwhile (``ProjectionMoved``, or any
    /// failure while the setting names another file), runs it once more on
    /// the current one, and should that one be switched too (rebuilds run
    /// back to back), a third time holding the projection lock, which no
    /// switch happens without. Each attempt rolled back: nothing was written.
    func onCurrentProjection<T>(_ operation: () throws -> T) throws -> T {
        func moved(_ error: any Error) -> Bool {
            error is ProjectionMoved || (try? state.get(.projectionFile)) != projectionName
        }
        do {
            return try operation()
        } catch where moved(error) {
            do {
                try followCurrentProjection()
                return try operation()
            } catch where moved(error) {
                return try Self.withProjectionLock(home: path) {
                    try followCurrentProjection()
                    return try operation()
                }
            }
        }
    }

    /// What every transaction that adds events does first (the log's
    /// `willBegin`, the write lock held): checks that this process's
    /// projection is the current one, and applies the events the log holds
    /// past its mark (another process's, whose commit reached the log but
    /// not the projection), so that the mark this transaction records
    /// covers every event before its own.
    func projectionWillBegin() throws {
        guard try state.get(.projectionFile) == projectionName else { throw ProjectionMoved() }
        try catchUpProjection()
        // A rebuild still due (an attempt rolled back, say) is marked in this
        // transaction too: an ingest leaves records to it.
        if needsRebuild { try state.set(.projectionVersion, "stale") }
    }

    /// What the same transactions do last (the log's `willCommit`): record
    /// the log position the projection now reflects.
    func projectionWillCommit() throws {
        try projector.setMark(try log.lastPosition())
    }

    /// Rebuilds every projection from the log into a new projection file
    /// (see the type's documentation), then makes it the current one.
    ///
    /// - Parameter unlessRebuilt: skip it when another process rebuilt the
    ///   projection while this one waited for the lock, and what it built
    ///   reflects the whole log, this device's keys and fork points (a
    ///   rebuild this process needed, not one a user asked for).
    /// - Parameter afterCommit: called after events were committed (``settle()``):
    ///   the lock is waited for as long as another process holds it.
    func rebuildProjections(unlessRebuilt: Bool = false, afterCommit: Bool = false) throws {
        let db = log.database
        try Self.withProjectionLock(home: path, bounded: !afterCommit) {
            // Start from the current file: another process may have switched
            // it while this one waited for the lock.
            if try state.get(.projectionFile) != projectionName {
                try? db.execute("DETACH DATABASE \(Self.projectionSchema)")
                (projectionName, projector) = try Self.openProjectionLocked(home: path, log: log, state: state, family: family)
                forkPoints = try log.forkPoints(in: family)
                if unlessRebuilt, try projectionSettingsMatch(), try projector.mark() == log.lastPosition() {
                    needsRebuild = false
                    return
                }
            }
            let name = try Self.createProjectionFile(home: path, after: projectionName)
            let current = projector
            let wasDue = needsRebuild
            var switched = false
            defer {
                if !switched {
                    // The pass cleared the flag; the rebuild did not happen.
                    needsRebuild = needsRebuild || wasDue
                    projector = current
                    try? db.execute("DETACH DATABASE \(Self.nextProjectionSchema)")
                    Self.removeProjectionFile(name, home: path)
                }
            }
            let next = Self.nextProjectionSchema
            try db.execute("ATTACH DATABASE '\(Self.existingFileURI(path + "/" + name))' AS \(next)")
            // No journal on disk (the connection's defensive mode refuses
            // `OFF`; `MEMORY` keeps the little there is to roll back in
            // memory): a file nobody reads until it is complete. Its tables
            // are made without an fsync each; the rebuild's commit writes its
            // last pages and fsyncs it. The log is read in order (a small
            // cache does); the new file's pages get the rest of the memory
            // budget.
            try db.execute("""
                PRAGMA \(next).page_size=\(Database.newPageSize); PRAGMA \(next).journal_mode=MEMORY; PRAGMA \(next).synchronous=OFF;
                PRAGMA main.cache_size=-4096; PRAGMA \(next).cache_size=-28672
                """)
            defer { try? db.execute("PRAGMA main.cache_size=-32768") }
            projector = try Projector(database: db, family: family, schema: next)
            try db.execute("PRAGMA \(next).synchronous=FULL")
            // The file's pages are written out while it is built, so that
            // the commit's fsync has little left to write. Its descriptor
            // is closed by `stop()`, and closing any descriptor of a file
            // drops every POSIX lock this process holds on it, SQLite's
            // included: so `stop()` runs where SQLite holds none on `next`,
            // after the transaction ends (committed, or rolled back by an
            // error: the defer) and before the switch to WAL mode, whose
            // connections keep a lock for as long as they are open.
            let writeback = BackgroundWriteback(path: path + "/" + name)
            defer { writeback.stop() }
            try db.transaction(.immediate) {
                // The household events the current projection holds are
                // folded first: those the log holds (a projection may be
                // ahead of its log, one restored from another time).
                try db.run("""
                    INSERT INTO \(next).p_library SELECT * FROM \(Self.projectionSchema).p_library p WHERE EXISTS (
                        SELECT 1 FROM main.events e WHERE e.family = ?1 AND e.author = substr(p.version, 9) AND e.seq = p.seq AND e.id = p.event)
                    """, [.blob(family.bytes)])
                try rebuildPass()
                try projector.setMark(try log.lastPosition())
            }
            writeback.stop()   // here, not later: see above
            // Events it could not open although it holds their key (their
            // bytes damaged): the stores about to be replaced may hold the
            // only readable copy of what they said. (`famctl rebuild`
            // refuses before this, unless told; a rebuild made by itself,
            // after a sync brought a membership change, dropped them
            // without a word: a code review.)
            if unopenedInRebuild > 0 { keepStoresBeforeDroppingDamaged() }
            try db.execute("PRAGMA \(next).journal_mode=WAL; PRAGMA \(next).synchronous=NORMAL")
            try db.transaction(.immediate) {
                try state.set(.projectionFile, name)
                try state.set(.projectionVersion, String(Projector.schemaVersion))
                try state.set(.projectionForks, forkPointsText)
                // Events another process added between the two transactions.
                try catchUpProjection()
            }
            switched = true
            let old = projectionName
            // Should the attach below fail, the name stays the old one: the
            // next transaction then finds the setting changed and follows it.
            try db.execute("DETACH DATABASE \(Self.projectionSchema); DETACH DATABASE \(next)")
            projector = try Self.attachProjection(name, home: path, log: log, family: family)
            projectionName = name
            Self.removeProjectionFile(old, home: path)
        }
    }

    /// Copies the current stores aside before a rebuild that leaves out
    /// events it could not open replaces them, and says where: once for
    /// as many damaged events (a copy made at the next rebuild would no
    /// longer hold what they said), again when more are found (a code
    /// review: a later damage pointed at the first copy, without it).
    private func keepStoresBeforeDroppingDamaged() {
        let count = unopenedInRebuild
        let said = "\(count) event(s) in the log could not be opened although this device holds their key (their bytes are damaged); the stores are built again without what they said"
        let copied = (try? state.get(.damagedCopied)).flatMap { $0 }.flatMap(Int.init) ?? 0
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        if count <= copied, let kept = names.filter({ $0.contains(".before-damaged-dropped-") }).max() {
            Console.err("famctl: warning: \(said). The stores from before they were dropped are kept in \(path)/\(kept).")
            return
        }
        do {
            let kept = try copyStoresAside(as: "before-damaged-dropped")
            try? state.set(.damagedCopied, String(count))
            Console.err("famctl: warning: \(said). The stores from before are kept in \(kept) (an SQLite file) to recover it from; 'famctl replay' names the events.")
        } catch {
            Console.err("famctl: warning: \(said), and the stores from before could not be kept aside (\(error)).")
        }
    }

    /// Applies the events the log holds past the projection's mark (inside
    /// the caller's transaction), and moves the mark to the log's end.
    func catchUpProjection() throws {
        // First what another process wrote to the projection (a household
        // event that made no rebuild, the authors of its changes).
        try projector.refresh()
        let mark = try projector.mark()
        let last = try log.lastPosition()
        guard mark < last else { return }
        // Another process's ingest may have found a fork (and died before
        // its rebuild): the events past a fork point are left out here, and
        // the projection is rebuilt without them after this operation.
        let points = try log.forkPoints(in: family)
        if points != forkPoints {
            forkPoints = points
            needsRebuild = true
        }
        try log.forEachEvent(order: .arrival, after: mark) { stored in
            // An event stored in the log decodes (it was checked on the way in);
            // should one not, `replay` reports it.
            guard let env = try? SyncEnvelope(decoding: stored.bytes, storedID: stored.id) else { return }
            try apply(env)
        }
        try projector.setMark(last)
    }
}
