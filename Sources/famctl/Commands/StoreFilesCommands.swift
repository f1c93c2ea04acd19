import EventLog
import Envelope
import Foundation
import Replicator
import Projections

/// `famctl export stores DIR`
enum ExportStoresCommand: Command {
    static let spec = CommandSpec(
        path: ["export", "stores"],
        abstract: "Write the ten store files (feeding.json …), plus subjects.json, from the live records.",
        discussion: """
            Each store file is a JSON array of its live records sorted by time: id, focus,
            at, fields, author, updated, revision. This is the family app's UI data source; 'import
            stores' reads the same files back. Each file is written as its records are read
            and replaced atomically once whole.

            A record that a merge left breaking its store's rules (two concurrent updates each
            valid alone, two sleeps added at once that overlap) is written as it is, with
            "problems": the rules it breaks. 'import
            stores' takes such a row as it is, warning, when it breaks those rules and no other.
            """,
        options: [.flag("--before-joining", "Write what this device recorded before it joined its family (its private chain), which no view shows."),
                  .value("--from", "FILE", "Write the records of a stores' file a rebuild set aside (projection.N.sqlite.ahead-of-log-TIME, …), read from a copy.")],
        positionals: [PositionalSpec(name: "DIR", help: "The directory to write (created if missing).")])

    static func run(_ inv: Invocation) throws {
        let dir = try Home.absolute(given: inv.positionals[0], as: "DIR", directory: true)
        if let from = inv.value("--from") { return try writeSetAside(from, to: dir, inv: inv) }
        let location = try Home.location(inv)
        let home: Home
        do { home = try Home.open(location) } catch let e as CLIError where e.logUnreadable && !inv.flag("--before-joining") {
            // A damaged log: the stores' file may still hold every record,
            // those never synced included. Written from a copy of it.
            guard let salvage = try SalvagedStores.open(home: location) else {
                throw CLIError(e.code, e.message + "; and no stores' file of this home can be read either, to write its records from",
                               hint: "Restore \(Home.databaseFile) (with its -wal file, if any) from a backup of this home; the family's other devices hold what it had published.")
            }
            Console.err("famctl: warning: this home cannot be opened (\(e.message)); the files are written from the stores' file \(salvage.file) "
                + "as it stood at its last update (log position \(salvage.mark)), read from a copy: nothing in the home is changed.")
            try write(from: salvage.projector, to: dir, inv: inv, salvaged: true)
            Console.err("famctl: Keep this export. Then make a new home (a member: 'famctl accept' with a new invitation; the family's owner, "
                + "whom nobody else can invite: 'famctl init' and 'famctl family create', a new family) and run 'famctl import stores \(ShellWord.quoted(dir))' there: "
                + "it brings back the records the family's devices do not hold. What it cannot bring: a record deleted here and not yet synced is in no export "
                + "(the family still has it live: delete it again there), and an edit made here and not yet synced is kept out as from another state of the record "
                + "(the import names such rows; importing again with --overwrite-newer writes them over what the family has).")
            return
        }
        try home.checkStoresCaughtUp("an export written now would leave them out")
        // Plaintext into the family's shared folder, which its sync engine
        // copies to every member's machine and its provider's: said (a
        // review: written without a word, beside events kept encrypted).
        if let shared = Self.sharedFolderHolding(dir, home: home) {
            Console.err("famctl: warning: \(dir) lies in the shared folder \(shared): its sync engine copies these store files, which are plain text (unlike the events there, which are encrypted), "
                        + "to every member's machine and to its provider. Unless that is meant, remove them from there and export into a folder of this machine only.")
        }
        // The private chain of a device that joined a family: its records
        // from before are in no view when they were not carried (a viewer's
        // invitation, or a join the family refused). Projected from the log
        // into a scratch file, then written as any export.
        var scratch: ScratchProjection?
        if inv.flag("--before-joining") {
            let own = FamilyID.owned(by: home.deviceID)
            guard home.family != own else {
                throw CLIError.usage("this device has not joined a family (its records are its family's: a plain 'famctl export stores DIR' writes them)")
            }
            let mark = try home.projector.mark()
            scratch = try ScratchProjection.built(family: own, home: home) {
                try $0.rebuild(from: home, upTo: mark, leavingOut: [], until: nil, householdHint: nil)
            }.scratch
        }
        let projector = scratch?.projector ?? home.projector
        // Its file stays until the export is written.
        defer { withExtendedLifetime(scratch) {} }
        try write(from: projector, to: dir, inv: inv, privateChain: scratch != nil)
    }

    /// The shared folder `dir` lies in, if it does: the home's own (real
    /// paths compared), or any folder holding a family's area.
    static func sharedFolderHolding(_ dir: String, home: Home) -> String? {
        let real = Home.realPath(dir)
        if case .directory(let d) = Location.stored(in: home) {
            let root = Home.realPath(Home.absolute(d))
            if real == root || real.hasPrefix(root.hasSuffix("/") ? root : root + "/") { return d }
        }
        return Home.sharedFolder(holding: dir).map { ($0 as NSString).deletingLastPathComponent }
    }

    /// `--from FILE`: the records of a stores' file set aside (the stores
    /// ahead of a log that lost its last commits, or before damaged events
    /// were dropped) that this home does not hold at all, this device's own
    /// changes never synced among them, written to be imported again (a
    /// review: no command read them back out).
    static func writeSetAside(_ from: String, to dir: String, inv: Invocation) throws {
        guard !inv.flag("--before-joining") else { throw CLIError.usage("--from and --before-joining cannot be given together") }
        let given = try Home.absolute(given: from, as: "option --from")
        // Through a symbolic link, the file it names (a review: the copy
        // was made of the link).
        let file = Home.realPath(given)
        guard FileManager.default.fileExists(atPath: file) else {
            throw CLIError(.noInput, "no stores' file \(given)", hint: "The stores set aside are in the home, named projection.N.sqlite.ahead-of-log-TIME or projection.N.sqlite.before-damaged-dropped-TIME.")
        }
        // Not an SQLite file, said before anything is copied (a review: a
        // 3 GB file was copied whole first).
        guard FileIO.isRegularFile(file), let header = try? FileIO.readPrefix(file, count: 16), header == Array("SQLite format 3\0".utf8) else {
            throw CLIError(.dataError, "\(given) is not a stores' file (not an SQLite database); nothing was written",
                           hint: "The stores set aside are in the home, named projection.N.sqlite.ahead-of-log-TIME or projection.N.sqlite.before-damaged-dropped-TIME.")
        }
        let salvage: SalvagedStores
        do { salvage = try SalvagedStores.open(file: file) } catch let e as CLIError {
            throw CLIError(.dataError, "\(file) cannot be read as famctl's stores: \(e.message); nothing was written")
        } catch {
            throw CLIError(.dataError, "\(file) cannot be read as famctl's stores (\(error)); nothing was written")
        }
        // Only what this home does not hold at all: importing a record it
        // holds (deleted since by another device, changed by it) would
        // undo that later change (a review). Those are named instead.
        let home = try Home.open(try Home.location(inv))
        try home.checkStoresCaughtUp("what they do not show would be taken for records this home does not hold")
        var held: [String: (revision: String, deleted: Bool)] = [:]
        try home.projector.forEachRecord(Projector.RecordQuery(includeDeleted: true)) { held[$0.id.lowercasedText] = ($0.revision, $0.deleted) }
        let heldSubjects = Set(try home.projector.subjects(includeRemoved: true).map(\.focus.description))
        var absent = Set<String>(), differing: [String] = []
        try salvage.projector.forEachRecord(Projector.RecordQuery(includeDeleted: true)) { r in
            let id = r.id.lowercasedText
            guard let now = held[id] else {
                if !r.deleted { absent.insert(id) }
                return
            }
            if r.deleted != now.deleted || (!r.deleted && r.revision != now.revision) { differing.append(id) }
        }
        try write(from: salvage.projector, to: dir, inv: inv, salvaged: true, only: (records: absent, subjects: heldSubjects))
        Console.err("famctl: the files hold the records of \(file) (as it stood when it was set aside, read from a copy) that this home does not hold at all: "
            + "'famctl import stores \(ShellWord.quoted(dir))' adds them (after a 'famctl sync', which first brings back what this device had published).")
        if !differing.isEmpty {
            let named = differing.sorted().prefix(5).joined(separator: ", ") + (differing.count > 5 ? " and \(differing.count - 5) more" : "")
            Console.err("famctl: note: \(differing.count) record(s) this home holds differ from what that file held (a change or a deletion lost with the log's commits, or one the family made since): \(named). "
                + "They are not in the files: compare each with 'famctl record show ID --history', and make again what is missing.")
        }
    }

    /// Writes the store files of `projector`'s live records into `dir`.
    /// - Parameter salvaged: written from a copy of the stores of a home
    ///   that cannot be opened (its log or its key damaged).
    /// - Parameter privateChain: written from this device's chain of before
    ///   it joined (`--before-joining`): its photos are out of every command's reach.
    /// - Parameter only: the records to write, by id, and the care subjects
    ///   to leave out, by focus (`--from`: what the home does not hold);
    ///   `nil`: every live one.
    static func write(from projector: Projector, to dir: String, inv: Invocation, salvaged: Bool = false, privateChain: Bool = false,
                      only: (records: Set<String>, subjects: Set<String>)? = nil) throws {
        do {
            try FileIO.createDirectories(atPath: dir, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CLIError(.cantCreate, "cannot create \(dir): \(FileIO.reason(error, creating: dir))")
        }
        // What an export killed halfway left: its files' temporary names
        // (`feeding.json.tmp-PID`, no such process here, untouched for ten
        // minutes: the folder may be shared with another machine, whose
        // export may be writing). Nothing else is touched.
        let names = Set(Self.fileNames)
        FileIO.removeLeftovers(in: dir, untouchedFor: 600) { name in
            guard let r = name.range(of: ".tmp-", options: .backwards), names.contains(String(name[..<r.lowerBound])) else { return nil }
            return Int32(name[r.upperBound...])
        }
        var counts: [String: Int] = [:]
        // Live subjects, and removed ones that live records still name (a
        // record added on a device the removal had not reached): those with
        // `"removed": true`, so that a new home importing the files holds
        // them as this one does, with their names, not as bare keys.
        let removedSubjects = try projector.subjects(includeRemoved: true).filter(\.removed)
        let named = removedSubjects.isEmpty ? [:] : try projector.liveRecordCounts()
        let subjects = try (projector.subjects() + removedSubjects.filter { (named[$0.focus.description] ?? 0) > 0 })
            .filter { subject in only.map { !$0.subjects.contains(subject.focus.description) } ?? true }.map { s -> JSONValue in
            var o: [String: JSONValue] = ["focus": .string(s.focus.description), "kind": .string(s.kind.rawValue)]
            for (k, v) in s.fields { o[k] = v }
            if s.removed { o["removed"] = .bool(true) }
            o["revision"] = .string(s.revision)
            o["updated"] = .string(TimeText.format(s.updated.hlc.date))
            return .object(o)
        }
        try write(.array(subjects), to: dir + "/subjects.json")
        // The files this export put in place so far: a failure after them
        // leaves the folder holding some of this export and some of the one before.
        var replaced = ["subjects.json"]
        let overlapping = Set(try projector.sleepOverlaps().flatMap { [$0.first, $0.second] })
        let withProblems = AtomicCount()
        for store in StoreName.allCases {
            let schema = StoreSchema.schema(for: store)
            let path = dir + "/\(store.rawValue).json"
            // Streamed: each record's item made on every core and written
            // as it is ready, into a file put in place once whole (a
            // million records held and sorted took 928 MB). A damaged row
            // stops the store's file, which keeps what it held.
            let file: AtomicFile
            do { file = try AtomicFile(path: path, mode: 0o600) } catch { throw cantWrite(path, error, after: replaced) }
            let written: Int
            do {
                written = try StreamedListing(json: true, name: store.rawValue, unit: "record", empty: nil, output: .file(file), flushSize: 1 << 20) {
                    (row: StoredRecordRow) in
                    guard let r = try row.state(), only.map({ $0.records.contains(r.id.lowercasedText) }) ?? true else { return nil }
                    let problems = Self.problems(of: r, schema: schema, overlapping: overlapping)
                    if !problems.isEmpty { withProblems.add() }
                    return PrettyJSON.bytes(Self.row(r, problems: problems), indent: 1)
                }.print { add in try forEachInFileOrder(projector, store: store) { try add($0) } }
                try file.commit()
            } catch let e as FileIO.Failure {
                throw cantWrite(path, e, after: replaced)
            } catch {
                // Stopped by what it read (damaged stores): the folder holds
                // part of an export, said so (a review: it imported as a whole one).
                let e = CLIError(error, path: (try? Home.location(inv)) ?? "the home")
                throw CLIError(e.code, e.message, hint: (e.hint.map { $0 + " " } ?? "") + Self.partial(replaced, in: dir))
            }
            replaced.append("\(store.rawValue).json")
            counts[store.rawValue] = written
        }
        let withProblemsCount = withProblems.value
        // The photos are not in the store files (their records name them):
        // said, so that an export is not taken for a whole copy.
        // (With `only`, those of the records written: a review's export of
        // one record with no photo was told of the home's.)
        let photos = try projector.photos().filter { p in only.map { o in p.record.map { o.records.contains($0.lowercasedText) } ?? false } ?? true }.count
        if photos > 0 {
            Console.err("famctl: note: the store files name the records' photos (photos=…) but do not hold the \(photos) photo(s) themselves, "
                        + "nor does 'import stores' bring them: "
                        + (salvaged ? "this home cannot write them out now; 'famctl photo get ID --out FILE' on another device of the family writes those this one synced, "
                                      + "and a backup of this home holds the rest."
                           : privateChain ? "they stay in this device's chain of before it joined, which no command reads them from ('famctl photo get' reaches the family's photos): their original files are where they were added from."
                                    : "'famctl photo list' lists them, 'famctl photo get ID --out FILE' writes each to a file."))
        }
        if inv.json { Console.json(["dir": dir, "records": counts, "subjects": subjects.count, "withProblems": withProblemsCount, "photosNotExported": photos]); return }
        Console.out("exported \(counts.values.reduce(0, +)) records and \(subjects.count) subjects to \(dir)")
        for s in StoreName.allCases where counts[s.rawValue]! > 0 { Console.out("  \(s.rawValue).json: \(counts[s.rawValue]!)") }
        if withProblemsCount > 0 {
            Console.out("\(withProblemsCount) record(s) break their store's rules after a merge; written as they are, with \"problems\"")
        }
    }

    /// The files an export writes: each store's, then the care subjects'.
    static let fileNames = StoreName.allCases.map { "\($0.rawValue).json" } + ["subjects.json"]

    /// A record's item in its store's file, with its `revision`
    /// (``RecordState/revision``): what an import compares with the
    /// record's then, to tell whether it changed since this export.
    static func row(_ r: RecordState, problems: [String]) -> JSONValue {
        var row: [String: JSONValue] = ["id": .string(r.id.lowercasedText), "focus": .string(r.focus), "at": r.at.map(JSONValue.string) ?? .null,
                                        "fields": .object(r.fields),
                                        "author": .string(r.creator.hex), "updated": .string(TimeText.format(r.updated.hlc.date))]
        row["revision"] = .string(r.revision)
        if !problems.isEmpty { row["problems"] = .array(problems.map(JSONValue.string)) }
        return .object(row)
    }

    /// The live records of `store` in the order of its file: by time, those
    /// without one first, then by id. SQLite reads them by `at_ms, id` (the
    /// time in whole milliseconds); those that share a millisecond are held
    /// together and put in exact time order here (so memory grows with the
    /// largest such group, a few records in a household's stores).
    static func forEachInFileOrder(_ projector: Projector, store: StoreName, _ body: (StoredRecordRow) throws -> Void) throws {
        var run: [(at: Date?, row: StoredRecordRow)] = []
        var runMilliseconds: Int64?
        func flush() throws {
            if run.count > 1 {
                run.sort { a, b in (a.at ?? .distantPast, a.row.id) < (b.at ?? .distantPast, b.row.id) }
            }
            for item in run { try body(item.row) }
            run.removeAll(keepingCapacity: true)
        }
        try projector.forEachRecordRow(.init(store: store.rawValue)) { row in
            let at = row.at.flatMap(TimeValue.parse)
            let milliseconds = at.map(EntityState.milliseconds)  // as the projection's `at_ms`
            if run.isEmpty || milliseconds != runMilliseconds {
                try flush()
                runMilliseconds = milliseconds
            }
            run.append((at, row))
        }
        try flush()
    }

    /// - Parameter after: the files this export already put in place: the
    ///   folder then mixes this export's files with those of an earlier one.
    static func cantWrite(_ path: String, _ error: any Error, after replaced: [String] = []) -> CLIError {
        let mixed = replaced.isEmpty ? "" : " This export already replaced \(replaced.joined(separator: ", ")); the other files there are as an earlier export left them: "
            + "run the export again once it can write, so that the folder holds one export, before importing it."
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            return CLIError(.cantCreate, "cannot write \(path): a folder is in its place",
                            hint: "Move it away (or export into another folder), then run the export again." + mixed)
        }
        return CLIError(.cantCreate, "cannot write \(path): \(FileIO.reason(error))",
                        hint: "Check that this user may write there and that the disk has room; " + (replaced.isEmpty ? "nothing else was changed." : "the file was left as it was." + mixed))
    }

    /// What an export stopped after writing `replaced` says of `dir`.
    static func partial(_ replaced: [String], in dir: String) -> String {
        "This export stopped after writing \(replaced.joined(separator: ", ")) in \(dir); its other store files are missing or an earlier export's: "
            + "do not import that folder as it is, run the export again once this is fixed."
    }

    /// What a sleep that overlaps another says in "problems".
    static let sleepOverlap = "sleep.start: overlaps another sleep of the same baby"

    /// The rules a live record breaks (what merges can leave), as
    /// ``ValidationError`` texts: written in its row's "problems", so that
    /// 'import stores' can take the row as it is.
    static func problems(of r: RecordState, schema: StoreSchema, overlapping: Set<UUID>) -> [String] {
        guard let focus = FocusKey(r.focus) else { return [] }
        // `now: nil`: the time it was entered is past; what the merge left is what counts.
        var out = schema.violations(fields: r.fields, focus: focus, at: r.at.flatMap(TimeValue.parse), now: nil).map(\.description)
        if overlapping.contains(r.id) { out.append(sleepOverlap) }
        return out
    }

    static func write(_ value: JSONValue, to path: String) throws {
        do {
            try FileIO.writeAtomically(PrettyJSON.bytes(value) + [0x0a], to: path, mode: 0o600)
        } catch {
            throw cantWrite(path, error)
        }
    }
}

/// `famctl import stores DIR`
enum ImportStoresCommand: Command {
    static let spec = CommandSpec(
        path: ["import", "stores"],
        abstract: "Read store files (as 'export stores' writes them) into the log: migration of existing data.",
        discussion: """
            Idempotent by record id: a record already present with the same values is
            left alone, a changed one gets an update of the fields that differ, unless
            the record changed or was deleted since the row was exported (its
            "revision" differs; a row without one: a change after its "updated"):
            that row is kept out, with a warning, not to undo the change
            (--overwrite-newer writes it). Records
            are written in transactions of 1 000; an import stopped midway can be run
            again and adds only what is missing. Care
            subjects the records refer to are created when missing. Every row is checked
            against its store's rules; a bad row is reported with its file and index,
            and nothing of that file is imported (other files still are; exit 65). A row
            that lists in "problems" the rules it breaks ('export stores' writes them for a
            record a merge left so) is imported as it is, with a warning, when it breaks no
            other rule.
            """,
        options: [.flag("--overwrite-newer", "Write a row over its record even when the record changed after the row's \"updated\" (an older export would undo those changes; without this, such a row is kept out, with a warning).")],
        positionals: [PositionalSpec(name: "DIR", help: "The directory holding feeding.json … and subjects.json.")])

    /// `recreated`: of the added, records deleted before (by any device;
    /// brought back by a row of a file made elsewhere, undated, or with
    /// --overwrite-newer: said, not counted as merely new).
    /// `older`: rows kept out because the home's record changed after the
    /// row's `revision` or `updated` (see ``olderThanHome(_:revision:updated:home:)``).
    struct Tally {
        var added = 0, updated = 0, unchanged = 0, recreated = 0, older = 0
        /// Kept out as made from another state of the record than this
        /// home's (``fromAnotherState(_:revision:updated:)``).
        var other = 0
        /// Rows of the file taken into account.
        var any: Bool { added + updated + unchanged + older + other > 0 }
    }

    static func run(_ inv: Invocation) throws {
        let dir = try Home.absolute(given: inv.positionals[0], as: "DIR", directory: true)
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) else { throw CLIError(.noInput, "no directory \(dir)") }
        guard isDir.boolValue else {
            let parent = (dir as NSString).deletingLastPathComponent
            // The folder of a store file given in its place; not that of
            // /dev/null or another device (a review: "famctl import stores /dev").
            let storeFile = ExportStoresCommand.fileNames.contains((dir as NSString).lastPathComponent)
            let regular = ((try? FileManager.default.attributesOfItem(atPath: dir)[.type]) as? FileAttributeType) == .typeRegular
            throw CLIError(.noInput, "\(dir) is \(regular ? "a file" : "not a file but a device or another special file"), not a directory",
                           hint: "Give the directory that holds the store files (feeding.json … subjects.json), as 'famctl export stores' writes it"
                               + (storeFile ? ": famctl import stores \(ShellWord.quoted(parent))" : "."))
        }
        // None of the store files: a wrong directory, not an empty export
        // (which writes every file, each an empty list).
        guard ExportStoresCommand.fileNames.contains(where: { StoreFileRows.isThere(dir + "/" + $0) }) else {
            let misnamed = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.lowercased().hasSuffix(".json") }.sorted()
            throw CLIError(.noInput, "no store files in \(dir) (feeding.json … subjects.json); nothing was imported"
                           + (misnamed.isEmpty ? "" : ". Not read: \(misnamed.joined(separator: ", ")) (the files' names are matched exactly)"),
                           hint: "Give the directory 'famctl export stores' wrote (or one holding files of the same names).")
        }
        let path = try Home.location(inv)
        try Home.open(path).checkCanWrite()
        // Two imports at once would each find the same rows missing and
        // both write them: the second waits, then finds them there.
        do {
            try FileIO.withExclusiveLock(path + "/" + lockFile, waitingAtMost: Database.busyWaitSeconds, willWait: {
                Console.err("famctl: another import into this home is running; waiting for it to finish")
            }) {
                try importLocked(dir: dir, home: try Home.open(path), inv: inv)
            }
        } catch let e as FileIO.Failure where e.timedOut {
            throw CLIError(.tempFail, "another import into this home is running (\(path)/\(lockFile) is held; waited \(Database.busyWaitSeconds) s for it); nothing was imported",
                           hint: "Import again once it is done: what it wrote is not written twice. " + Home.lockWaitHint)
        } catch let e as FileIO.Failure {
            throw CLIError(e.permissionDenied ? .cantCreate : .tempFail, "cannot lock \(path)/\(lockFile): \(e.reason)", hint: "Check the permissions of the home directory; nothing was imported.")
        }
    }

    /// The import's lock in the home.
    static let lockFile = "import.lock"

    private static func importLocked(dir: String, home: Home, inv: Invocation) throws {
        var failures: [String] = []
        var warnings: [String] = []
        var tallies: [(String, Tally)] = []

        // Subjects first, so records can refer to them.
        let existing = Dictionary(try home.projector.subjects().map { ($0.focus, $0) }, uniquingKeysWith: { a, _ in a })
        // Removed subjects: a subjects.json row adds one again (with the
        // row's fields alone); a record row naming one is refused, as
        // `record add` refuses it.
        let removed = Dictionary(try home.projector.subjects(includeRemoved: true).filter(\.removed).map { ($0.focus, $0.fields) },
                                 uniquingKeysWith: { a, _ in a })
        var knownSubjects = Set(existing.keys)
        // Every subject here, removed ones too: a subjects.json row of an
        // export older than the subject's last change is kept out.
        let allSubjects = Dictionary(try home.projector.subjects(includeRemoved: true).map { ($0.focus, $0) }, uniquingKeysWith: { a, _ in a })
        var olderSubjects: [Int] = [], otherSubjects: [Int] = []
        // Subjects an earlier row of the file already changed: compared once.
        var changedByFile: Set<FocusKey> = []
        var subjectEvents: [EventBody] = []
        var subjectTally: Tally?
        // New subjects of a refused subjects.json: the records naming them wait for it.
        var refusedSubjects: Set<FocusKey> = []
        // Subjects the file says were removed where it was exported, with
        // live records naming them. One this home does not have is added
        // with its fields and removed again in the same transaction (an
        // import stopped before a removal written at its end left it live
        // for good); one it has, live or removed, is left as it is. Their
        // records new to this home are imported, the subject removed or not.
        var removedInFile: Set<FocusKey> = []
        var removedAgain: [FocusKey] = []
        let subjectRows = try readArray(dir + "/subjects.json", failures: &failures)
        // A subjects.json that could not be read at all (not JSON, a
        // byte-order mark): any subject not here yet may be in it.
        let subjectsUnread = subjectRows == nil && FileManager.default.fileExists(atPath: dir + "/subjects.json")
        if let rows = subjectRows {
            var events: [EventBody] = []
            var bad = false
            var (added, updated, unchanged) = (0, 0, 0)
            // Each subject's fields as the file leaves them so far (a row
            // may repeat an earlier row's focus).
            var now = existing.mapValues(\.fields)
            var named: Set<FocusKey> = []
            // Keys nothing reads ("nmae", "birthday"): said once, not dropped without a word.
            let readKeys = ["focus", "kind", "name", "birth", "sex", "due", "updated", "removed", "revision"]
            var unreadKeys = Set<String>()
            for case .object(let o) in rows { unreadKeys.formUnion(o.keys.filter { !readKeys.contains($0) }) }
            if !unreadKeys.isEmpty {
                let said = unreadKeys.sorted().map { k in
                    "\"\(TerminalText.escaped(k))\"" + (RecordInput.nearest(k, among: readKeys).map { " (did you mean \"\($0)\"?)" } ?? "")
                }
                warnings.append("subjects.json: not read in its rows: \(said.joined(separator: ", ")) (a row gives \"focus\", \"name\", \"birth\" or \"due\", \"sex\" and \"removed\")")
            }
            for (i, row) in rows.enumerated() {
                guard case .object(let o) = row, let f = o["focus"]?.stringValue else {
                    failures.append("subjects.json[\(i)]: needs \"focus\" (baby:<UUID>, pregnancy or newMom)"); bad = true; continue
                }
                guard let focus = FocusKey(f) else {
                    failures.append("subjects.json[\(i)]: \"focus\" '\(TerminalText.escaped(f))' is not a focus key (baby:<UUID>, pregnancy or newMom)"); bad = true; continue
                }
                named.insert(focus)
                if let kind = o["kind"], kind != .string(SubjectKind(focus).rawValue) {
                    failures.append("subjects.json[\(i)]: \"kind\" \(kind.stringValue.map { "\"\($0)\"" } ?? "\(kind)") does not match focus \(focus) (a \(SubjectKind(focus).rawValue)); leave \"kind\" out or make it match")
                    bad = true; continue
                }
                var fields = o.filter { ["name", "birth", "sex", "due"].contains($0.key) }
                // A name trimmed, as `subject add` trims it; spaces alone refused.
                if case .string(let given)? = fields["name"] {
                    let trimmed = given.trimmingCharacters(in: .whitespaces)
                    if trimmed.isEmpty, !given.isEmpty {
                        failures.append("subjects.json[\(i)]: subject.name: '\(TerminalText.escaped(given))' is only spaces"); bad = true; continue
                    }
                    if let why = SubjectInput.keyLikeName(trimmed, kind: SubjectKind(focus)) {
                        failures.append("subjects.json[\(i)]: subject.name: \(why); give it another name"); bad = true; continue
                    }
                    fields["name"] = .string(trimmed)
                }
                if let why = updatedProblem(o["updated"]) { failures.append("subjects.json[\(i)]: \(why)"); bad = true; continue }
                if let flag = o["removed"], flag != .bool(true), flag != .bool(false) {
                    failures.append("subjects.json[\(i)]: \"removed\" must be true or false, not \(flag)"); bad = true; continue
                }
                if o["removed"] == .bool(true) {
                    removedInFile.insert(focus)
                    // Here already (live or removed): left as it is.
                    if now[focus] != nil || removed[focus] != nil { unchanged += 1; continue }
                    removedAgain.append(focus)
                }
                // A subject already here (or earlier in the file) gets the fields
                // the row changes (those it leaves out are kept; a null clears a
                // field it has); a new one is added with them.
                let current = now[focus], had = current ?? [:]
                let changed = fields.filter { had[$0.key] != $0.value && !($0.value == .null && had[$0.key] == nil) }
                if current != nil && changed.isEmpty { unchanged += 1; continue }
                if !changed.isEmpty || current == nil, let revision = o["revision"]?.stringValue, !inv.flag("--overwrite-newer"), !changedByFile.contains(focus), let here = allSubjects[focus],
                   here.revision != revision {
                    if Self.fromAnotherState(here.revision, here.updated, revision: revision, updated: o["updated"].flatMap(Self.updatedMilliseconds)) {
                        otherSubjects.append(i)
                    } else {
                        olderSubjects.append(i)
                    }
                    continue
                }
                let merged = had.merging(changed) { $1 }.filter { $0.value != .null }
                do throws(ValidationError) { try SubjectEvent.validate(kind: SubjectKind(focus), fields: merged) } catch {
                    // "Female" for "female": said, as for a store's field.
                    let near = error.field == "sex" ? merged["sex"]?.stringValue.flatMap { ValueHint.otherCase($0, among: ["female", "male", "other"], as: "\"sex\": ") } : nil
                    failures.append("subjects.json[\(i)]: \(error)" + (near.map { " (\($0))" } ?? "")); bad = true; continue
                }
                // A birth the row changes is checked as `subject add` checks it: not after today.
                if let birth = changed["birth"]?.stringValue, birth > SubjectInput.latestToday() {
                    failures.append("subjects.json[\(i)]: subject.birth: \(birth) is after today (\(SubjectInput.todayText(SubjectInput.latestToday()))); a baby expected later is the pregnancy (\"due\")")
                    bad = true; continue
                }
                // A date before 1900 ('subject add' refuses it, a mistyped
                // year): imported as it is (an older famctl may have stored
                // it so), and said, as a record's is.
                for name in ["birth", "due"] {
                    guard let text = changed[name]?.stringValue, let year = RecordInput.yearAsWritten(text), year < RecordInput.earliestYear else { continue }
                    warnings.append("subjects.json[\(i)]: subject.\(name): the year \(year) is before \(RecordInput.earliestYear) (is it mistyped?); imported as it is")
                }
                // A new baby of a name another baby here has: most often the
                // same baby added on two homes before they shared a family.
                // Said, as `subject add` says it, not refused (twins).
                if current == nil, case .baby = focus, let name = merged["name"]?.stringValue?.lowercased(),
                   let other = now.keys.sorted(by: { $0.description < $1.description }).first(where: { key in
                       if case .baby = key, key != focus, now[key]?["name"]?.stringValue?.lowercased() == name { return true }
                       return false
                   }) {
                    warnings.append("subjects.json[\(i)]: \(focus) is named \(merged["name"]?.stringValue ?? ""), as \(other) here is: the same baby added twice? "
                                    + "'famctl subject remove \(focus) --move-records-to \(other)' moves its records to the other and removes it")
                }
                if current == nil { added += 1 } else { updated += 1 }
                changedByFile.insert(focus)
                now[focus] = merged
                var written = current == nil ? merged : changed
                // Added again after a removal: the fields it held that the row
                // does not give are cleared (a put brings a subject back whole).
                if current == nil, let held = removed[focus] {
                    for name in held.keys where written[name] == nil { written[name] = .null }
                }
                events.append(SubjectEvent(focus: focus, fields: written).body)
                if o["removed"] == .bool(true) { events.append(SubjectEvent.delete(focus).body) }
            }
            if !olderSubjects.isEmpty {
                warnings.append("subjects.json: \(olderSubjects.count) row(s) of care subjects changed here since this export (renamed, removed…): kept out, "
                                + "not to undo those changes (rows \(olderSubjects.map(String.init).joined(separator: ", "))); to write them over the subjects, import again with --overwrite-newer")
            }
            if !otherSubjects.isEmpty {
                warnings.append("subjects.json: \(otherSubjects.count) row(s) of care subjects exported from another state of the subject than this home's (a later change, but not made on what this home holds: "
                                + "another home's export, or changes here dated earlier): kept out, not to undo what this home holds that they lack "
                                + "(rows \(otherSubjects.map(String.init).joined(separator: ", "))); to write them over the subjects, import again with --overwrite-newer")
            }
            if bad {
                removedInFile = []
                removedAgain = []
                refusedSubjects = named.subtracting(existing.keys)
                failures.append("subjects.json: nothing imported from this file (fix the rows above and import again)")
            } else {
                knownSubjects.formUnion(now.keys)
                subjectEvents = events
                subjectTally = Tally(added: added, updated: updated, unchanged: unchanged, older: olderSubjects.count, other: otherSubjects.count)
            }
        }
        if !subjectEvents.isEmpty { try home.append(subjectEvents) }

        for store in StoreName.allCases {
            let file = "\(store.rawValue).json"
            // Read a row at a time (see `StoreFileRows`); the first pass, which
            // checks the file whole, notes each row's id and the keys that
            // nothing reads.
            var fileIDs = Set<UUID>(), unreadKeys = Set<String>()
            // Rows naming an outside record (`source`), by index.
            var sourced: [(row: Int, id: UUID, key: String)] = []
            // Rows dated by their export (`revision`, or `updated`): checked
            // against the home's records once the file is read.
            var dated: [(id: UUID, revision: String?, updated: UInt64?)] = []
            let read: Set<String> = ["id", "focus", "at", "store", "fields", "problems", "author", "updated", "revision"]
            guard let rows = try StoreFileRows.read(dir + "/" + file, failures: &failures, each: { i, row in
                guard case .object(let o) = row else { return }
                if let text = o["id"]?.stringValue, let id = UUID(text: text) {
                    fileIDs.insert(id)
                    let revision = o["revision"]?.stringValue, updated = o["updated"].flatMap(Self.updatedMilliseconds)
                    if revision != nil || updated != nil { dated.append((id, revision, updated)) }
                    if case .object(let f)? = o["fields"], let key = RecordInput.sourceKey(f["source"]) { sourced.append((i, id, key)) }
                }
                for key in o.keys where !read.contains(key) { unreadKeys.insert(key) }
            }) else { continue }
            // A row new by its id whose source a record here already names
            // is that record (imported again from where it came, under a
            // new id): it updates it rather than adding it twice.
            var sameSource: [Int: UUID] = [:]
            var sourceWarnings: [String] = []
            if !sourced.isEmpty {
                let bySource = try RecordInput.recordsBySource(store: store, home: home)
                var taken = Set<UUID>()
                for row in sourced {
                    guard let existing = bySource[row.key], existing != row.id, !fileIDs.contains(existing),
                          !taken.contains(existing), try !home.projector.recordExists(row.id) else { continue }
                    sameSource[row.row] = existing
                    taken.insert(existing)
                }
                fileIDs.formUnion(taken)
                // A source another row of the file, or another live record
                // here, holds too, and not taken as that record: imported as
                // a record of its own, said (most likely the same outside
                // record twice).
                var firstRow: [String: Int] = [:]
                for row in sourced {
                    defer { if firstRow[row.key] == nil { firstRow[row.key] = row.row } }
                    guard sameSource[row.row] == nil else { continue }
                    let text = RecordInput.sourceShown(key: row.key)
                    if let first = firstRow[row.key] {
                        sourceWarnings.append("\(file)[\(row.row)]: its source \(text) is row \(first)'s too; imported as a record of its own")
                    } else if let other = bySource[row.key], other != row.id {
                        sourceWarnings.append("\(file)[\(row.row)]: its source \(text) is record \(other.lowercasedText)'s too; imported as a record of its own")
                    }
                }
            }
            // The records changed here since the file was exported: their
            // rows are kept out (unless asked for), so the home's copies
            // stay, and the file's other sleeps are checked against those.
            var keptOut = Set<UUID>()
            if !inv.flag("--overwrite-newer") {
                for d in dated where try olderThanHome(d.id, revision: d.revision, updated: d.updated, home: home) { keptOut.insert(d.id) }
                fileIDs.subtract(keptOut)
            }
            var tally = Tally()
            // Encoded: a body's bytes take a fraction of its values' memory,
            // and a file of years of records is held until all its rows are checked.
            var events: [[UInt8]] = []
            // For the first event of each record: the record as this import
            // read it (``seen(_:home:)``), checked again under the write lock
            // when its batch is stored.
            var readAs: [Int: (UUID, String)] = [:]
            var newSubjects: [FocusKey] = []
            var fileFailures: [String] = []
            var fileWarnings: [String] = sourceWarnings
            // The rows giving each field the store does not define: one
            // warning a field, not one a row (a review: a typo in every row
            // of a 20 000-row file printed 20 000 lines).
            var undefinedRows: [String: [Int]] = [:]
            // Each sleep of the file: its row, baby, span, and whether the import changes it.
            var sleeps = FileSleeps()
            // The file's records replace the home's copies: a sleep is checked
            // against the file's others (`fileIDs`), and against those of the
            // home the file does not hold.
            // The row each id is first on: a file holds each record once (a
            // second row would count twice and, imported again, undo the first).
            var rowOfID: [UUID: Int] = [:]
            // Changed sleeps found overlapping a later, unchanged row, and those already warned about it.
            var overlapRows: Set<Int> = [], warnedOverlap: Set<Int> = []
            // Rows older than the home's record, kept out: said once for the file.
            // Of them, those made from another state of the record than this home's.
            var olderRows: [Int] = [], otherRows: Set<Int> = [], deletedRows: Set<Int> = [], deletedIDs: [UUID] = []
            rowLoop: for i in 0..<rows.count {
                let row = rows.row(i)
                do {
                    var r = try parseRow(row, store: store)
                    if let existing = sameSource[i] { r.id = existing }
                    if let first = rowOfID[r.id] {
                        throw CLIError.data("\"id\" \(r.id.lowercasedText) is row \(first)'s too: a store file holds each record once")
                    }
                    rowOfID[r.id] = i
                    if refusedSubjects.contains(r.focus) {
                        throw CLIError.data("its care subject \(r.focus)'s row in subjects.json was refused (above): fix that file and import again")
                    }
                    if subjectsUnread, !knownSubjects.contains(r.focus) {
                        throw CLIError.data("its care subject \(r.focus) is not on this device, and subjects.json, which may hold it, could not be read (above): fix that file and import again")
                    }
                    let ofRemovedSubject = !knownSubjects.contains(r.focus) && removed[r.focus] != nil
                    if !ofRemovedSubject && !knownSubjects.contains(r.focus) && !newSubjects.contains(r.focus) { newSubjects.append(r.focus) }
                    // One read of the record for the row: what the change is
                    // made from, whether the row is older, and what the write
                    // checks under the lock (a change between two reads
                    // would slip through: a review).
                    let current = try home.projector.record(r.id)
                    var change = try change(for: r, store: store, current: current, home: home)
                    // A record of a removed subject that the home holds as the
                    // row has it (one a merge left there, exported from this
                    // home) is unchanged; any other is refused.
                    if ofRemovedSubject, let c = change, !(removedInFile.contains(r.focus) && c.isNew) {
                        throw CLIError.data("its care subject \(r.focus) is removed ('famctl subject list --removed'): give the row another subject, "
                                            + "or bring the subject back (a row of subjects.json, or 'famctl subject restore \(r.focus)') and import again")
                    }
                    // A row of an export older than the record's last change
                    // would undo that change (a backup "restored" over a
                    // week of edits): kept out, unless asked for.
                    // So would a row of a record deleted since (by any device):
                    // an export holds live records only (a review: an old
                    // export brought back what another device had deleted).
                    if let c = change, !c.isNew || c.recreated, !inv.flag("--overwrite-newer"),
                       keptOut.contains(r.id) || Self.older(current, revision: r.revision, updated: r.updatedMilliseconds) {
                        olderRows.append(i)
                        if current?.deleted == true {
                            deletedRows.insert(i)
                            deletedIDs.append(r.id)
                            tally.older += 1
                        } else if Self.fromAnotherState(current, revision: r.revision, updated: r.updatedMilliseconds) {
                            otherRows.insert(i)
                            tally.other += 1
                        } else {
                            tally.older += 1
                        }
                        change = nil
                    }
                    // A row equal to the home's record is left alone, whatever rules the record breaks.
                    var broken = change == nil ? [] : try validate(r, store: store, home: home, replacing: fileIDs)
                    // A sleep kept out stays as the home has it: the file's other sleeps meet that span.
                    let sleepFields = store == .sleep && olderRows.last == i ? try home.projector.record(r.id)?.fields ?? r.fields : r.fields
                    if store == .sleep, let s = StoreSchema.time(sleepFields["start"]) {
                        let e = StoreSchema.time(sleepFields["end"]) ?? .distantFuture
                        let changed = change != nil
                        let listsOverlap = r.problems.contains(ExportStoresCommand.sleepOverlap)
                        // An overlap the import makes (one of the two rows changes) is
                        // excused only when each row it changes lists it.
                        for other in sleeps.meeting(focus: r.focus, start: s, end: e) where changed || other.changed {
                            guard (!changed || listsOverlap) && (!other.changed || other.listsOverlap) else {
                                // Blamed on the row the import changes without listing the overlap.
                                if !changed || listsOverlap {
                                    fileFailures.append("\(file)[\(other.row)]: sleep.start: overlaps row \(i) of this file (same baby)")
                                    continue rowLoop
                                }
                                throw CLIError.data("sleep.start: overlaps row \(other.row) of this file (same baby)")
                            }
                            if changed && !broken.contains(ExportStoresCommand.sleepOverlap) { broken.append(ExportStoresCommand.sleepOverlap) }
                            // One warning an overlap: this row's, when it changes; else the other's.
                            if other.changed && !changed { overlapRows.insert(other.row) }
                        }
                        sleeps.add(focus: r.focus, .init(row: i, start: s, end: e, changed: changed, listsOverlap: listsOverlap))
                    }
                    switch change {
                    case nil: if olderRows.last != i { tally.unchanged += 1 }
                    case (let event, let isNew, let recreated)?:
                        if recreated { tally.recreated += 1 }
                        // Checked here, with the row's index: sealing it would fail
                        // the whole file's append (and the import) instead.
                        // (A record grown past one event by merged changes is
                        // written as several puts.)
                        readAs[events.count] = (r.id, Self.seen(current))
                        events.append(contentsOf: try RecordInput.fittingPuts(event, reserve: isNew ? 0 : RecordInput.keepingFocusBytes)
                            .map { (isNew ? $0 : try RecordInput.keepingFocus($0, of: r.id, home: home)).encoded() })
                        if isNew { tally.added += 1 } else { tally.updated += 1 }
                        // A field the store does not define, most often a typo (any record takes a photo list).
                        let schema = StoreSchema.schema(for: store)
                        // A text it needs, empty: kept (an export of a record
                        // stored so moves with its home), and said.
                        // A new record dated before 1900 (a mistyped year, which
                        // 'record add' refuses): imported as it is (an older
                        // famctl may have stored it so), and said.
                        if isNew {
                            for (name, text) in [("at", r.at), ("start", r.fields["start"]?.stringValue)] {
                                guard let text, let year = RecordInput.yearAsWritten(text), year < RecordInput.earliestYear else { continue }
                                fileWarnings.append("\(file)[\(i)]: \(store.rawValue).\(name): the year \(year) is before \(RecordInput.earliestYear) (is it mistyped?); imported as it is")
                            }
                            // An offset no place's clock has ('record add' refuses it), the same way.
                            for (name, text) in RecordInput.givenTimes(r.fields, store: store, at: r.at) {
                                guard let minutes = RecordInput.offsetAsWritten(text), !RecordInput.offsets.contains(minutes) else { continue }
                                fileWarnings.append("\(file)[\(i)]: \(store.rawValue).\(name) '\(text)': no place's clock is \(text.suffix(6)) from UTC (offsets run from -12:00 to +14:00; is it mistyped?); imported as it is")
                            }
                        }
                        for blank in schema.blankNeededTexts(fields: r.fields, written: isNew ? Set(r.fields.keys) : []) {
                            fileWarnings.append("\(file)[\(i)]: \(blank) (imported as it is)")
                        }
                        for name in r.fields.keys.sorted() where name != "photos" && schema.field(name) == nil {
                            undefinedRows[name, default: []].append(i)
                        }
                        if !broken.isEmpty {
                            fileWarnings.append("\(file)[\(i)]: imported as it is, breaking what its \"problems\" list (a merge left it so): \(broken.joined(separator: "; "))")
                            if broken.contains(ExportStoresCommand.sleepOverlap) { warnedOverlap.insert(i) }
                        }
                    }
                } catch let e as CLIError {
                    fileFailures.append("\(file)[\(i)]: \(e.message)")
                }
            }
            // Keys a row may hold that nothing reads (`"deleted": true`, a
            // misspelt "fieldz"): said once a file, not dropped without a word.
            let unread = unreadKeys.sorted()
            if !unread.isEmpty {
                fileWarnings.append("\(file): not read in its rows: \(unread.map { "\"\(TerminalText.escaped($0))\"" }.joined(separator: ", ")) "
                                    + "(a row gives \"id\", \"focus\", \"at\", \"fields\" and \"problems\"; a record's fields go in \"fields\"; a row is imported live)")
            }
            if !sameSource.isEmpty {
                let shown = sameSource.keys.sorted().prefix(shownBadRowsPerFile).map { "row \($0) as \(sameSource[$0]!.lowercasedText)" }.joined(separator: ", ")
                fileWarnings.append("\(file): \(sameSource.count) row(s) taken as the record here with the same \"source\" (provider and recordId), not added again: "
                                    + shown + (sameSource.count > shownBadRowsPerFile ? ", …" : ""))
            }
            func shown(_ rows: [Int]) -> String {
                rows.prefix(shownBadRowsPerFile).map(String.init).joined(separator: ", ") + (rows.count > shownBadRowsPerFile ? ", …" : "")
            }
            // The fields the store does not define, one warning each (at
            // most 20 named: a row of thousands of made-up fields is not
            // thousands of lines).
            let undefinedNames = undefinedRows.keys.sorted()
            if undefinedNames.count > shownBadRowsPerFile {
                fileWarnings.append("\(file): \(undefinedNames.count) fields \(store.rawValue) does not define, kept as given; the first \(shownBadRowsPerFile) follow")
            }
            for name in undefinedNames.prefix(shownBadRowsPerFile) {
                let rows = undefinedRows[name]!
                let which = rows.count == 1 ? "[\(rows[0])]" : " (rows \(shown(rows))\(rows.count > shownBadRowsPerFile ? "; \(rows.count) in all" : ""))"
                fileWarnings.append("\(file)\(which): " + RecordInput.undefinedField(name, schema: StoreSchema.schema(for: store)))
            }
            let older = olderRows.filter { !otherRows.contains($0) && !deletedRows.contains($0) }, other = olderRows.filter(otherRows.contains)
            let deleted = olderRows.filter(deletedRows.contains)
            if !deleted.isEmpty {
                let ids = deletedIDs.prefix(shownBadRowsPerFile).map(\.lowercasedText).joined(separator: ", ") + (deletedIDs.count > shownBadRowsPerFile ? ", …" : "")
                fileWarnings.append("\(file): \(deleted.count) row(s) of records deleted since the export: kept out, not to undo the deletion (rows \(shown(deleted)); records \(ids)); "
                                    + "'famctl record restore ID' brings one back, or import again with --overwrite-newer to bring them all back as the rows have them")
            }
            if !older.isEmpty {
                fileWarnings.append("\(file): \(older.count) row(s) older than this home's record (changed after the row's \"updated\"): kept out, "
                                    + "not to undo those changes (rows \(shown(older))); to write them over the records, import again with --overwrite-newer")
            }
            if !other.isEmpty {
                fileWarnings.append("\(file): \(other.count) row(s) exported from another state of the record than this home's (a later change, but not made on what this home holds: "
                                    + "another home's export, or changes here dated earlier): kept out, not to undo what this home holds that they lack (rows \(shown(other))); "
                                    + "to write them over the records, import again with --overwrite-newer")
            }
            // A changed sleep whose overlap only a later row showed.
            for row in overlapRows.subtracting(warnedOverlap).sorted() {
                fileWarnings.append("\(file)[\(row)]: imported as it is, breaking what its \"problems\" list (a merge left it so): \(ExportStoresCommand.sleepOverlap)")
            }
            if !fileFailures.isEmpty {
                failures += fileFailures
                failures.append("\(file): nothing imported from this file (fix the rows above and import again)")
                continue
            }
            let subjectBodies = newSubjects.map { SubjectEvent(focus: $0, fields: [:]).body.encoded() }
            // In batches of 1 000, each committed in turn: a file of years of
            // records writes a bounded write-ahead log. Should the import
            // stop midway, running it again adds only what is missing.
            if !(subjectBodies + events).isEmpty {
                // A record changed between this import's read and its batch
                // (another process's edit or delete, a sync): the batch would
                // undo that change, so nothing more is written (a review: an
                // import running ten seconds undid 159 of 202 edits made
                // meanwhile). Run again, the import takes what is missing
                // and keeps out what is older than the home's records.
                let offset = subjectBodies.count
                let check = { (batch: Range<Int>) throws in
                    for i in batch where i >= offset {
                        guard let (id, seen) = readAs[i - offset], Self.seen(try home.projector.record(id)) != seen else { continue }
                        throw CLIError(.tempFail, "record \(id.lowercasedText) changed while this import was running (another famctl process or a sync); nothing was written",
                                       hint: "Import again: it writes only what is missing, and keeps out rows older than the records' changes.")
                    }
                }
                // A row changing a record is dated after the record's making,
                // as `record update` is (a device days behind the family).
                // (Followed up to a day past this device's last event before
                // the import, not past the batch before: no batch pulls the
                // next one's clock further.)
                let ownHead = try home.log.head(of: home.deviceID, in: home.family).hlc
                let after = { (batch: Range<Int>) throws -> HLC in
                    try home.createdVersionChanged(of: batch.compactMap { i in
                        i >= offset ? readAs[i - offset].map { ("record", $0.0.lowercasedText) } : nil
                    }, ownHead: ownHead)
                }
                do { try home.append(encodedBatches: subjectBodies + events, check: check, after: after) } catch {
                    // Said as what happened while the file was written, not
                    // as a fault of the file (a locked database is none).
                    let e = CLIError(error, path: home.path)
                    throw CLIError(e.code, "while importing \(file): \(e.message)", hint: e.hint)
                }
            }
            knownSubjects.formUnion(newSubjects)
            tallies.append((file, tally))
            // A subject made for its records alone, with no name: said (a
            // mistyped key in a file made by hand would otherwise make a
            // baby nobody added, without a word; a review).
            for focus in newSubjects {
                fileWarnings.append("\(file): care subject \(focus) added, which its rows name and no subjects.json row gives (no name, birth or due date; "
                                    + "'famctl subject update \(focus) --name NAME' names it)")
            }
            warnings += fileWarnings
        }

        // A JSON file that is none of the store files is not read: said, so
        // that a misnamed one ("Feeding.json", "feedings.json") is noticed.
        let known = Set(ExportStoresCommand.fileNames)
        let ignored = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])
            .filter { $0.lowercased().hasSuffix(".json") && !known.contains($0) }.sorted()
        if inv.json {
            Console.json(["files": Dictionary(uniqueKeysWithValues: tallies.map { ($0.0, ["added": $0.1.added, "updated": $0.1.updated, "unchanged": $0.1.unchanged, "recreated": $0.1.recreated, "olderKept": $0.1.older, "otherStateKept": $0.1.other]) }),
                          "subjects": subjectTally.map { ["added": $0.added, "updated": $0.updated, "unchanged": $0.unchanged, "olderKept": $0.older, "otherStateKept": $0.other, "removedAgain": removedAgain.count] as [String: Any] } ?? NSNull(),
                          "errors": failures, "warnings": warnings, "ignored": ignored])
        } else {
            for w in warnings { Console.err("famctl: warning: \(w)") }
            for name in ignored { Console.err("famctl: warning: \(name) was not read: it is not one of the store files (feeding.json … subjects.json)") }
            if let t = subjectTally, t.any {
                Console.out("subjects.json: \(t.added) added, " + (t.updated > 0 ? "\(t.updated) updated, " : "") + "\(t.unchanged) already there"
                            + (t.older > 0 ? ", \(t.older) older than this home's (kept out)" : "")
                            + (t.other > 0 ? ", \(t.other) from another state of the subject (kept out)" : "")
                            + (removedAgain.isEmpty ? "" : " (of the added, \(removedAgain.count) removed again, as the file has \(removedAgain.count == 1 ? "it" : "them"), with \(removedAgain.count == 1 ? "its" : "their") records)"))
            }
            for (file, t) in tallies where t.any {
                Console.out("\(file): \(t.added) added, \(t.updated) updated, \(t.unchanged) unchanged"
                            + (t.older > 0 ? ", \(t.older) older than this home's (kept out)" : "")
                            + (t.other > 0 ? ", \(t.other) from another state of the record (kept out)" : "")
                            + (t.recreated > 0 ? " (of the added, \(t.recreated) deleted before, brought back)" : ""))
            }
            if tallies.allSatisfy({ !$0.1.any }) && failures.isEmpty {
                Console.out("no records found in \(dir)")
            }
        }
        if !failures.isEmpty {
            for f in Self.shown(failures) { Console.err("famctl: \(f)") }
            // Rows (`file.json[3]: …`) and whole files (`file.json: …`) told apart.
            let notes = failures.count { $0.hasSuffix("import again)") }
            let rows = failures.count { !$0.hasSuffix("import again)") && $0.range(of: #"^[^:\[]+\[\d+\]"#, options: .regularExpression) != nil }
            let files = failures.count - notes - rows
            let said = [rows > 0 ? "\(rows) bad row(s)" : nil, files > 0 ? "\(files) file(s) refused as a whole" : nil].compactMap { $0 }
            throw CLIError.data((said.isEmpty ? "\(failures.count) problem(s)" : said.joined(separator: " and ")) + "; see above")
        }
    }

    /// Bad rows printed per file, at most: a file of 20 000 rows with the
    /// same mistake says so in a screenful, not 20 000 lines (`--json`
    /// lists every one).
    static let shownBadRowsPerFile = 20

    /// `failures` as printed: the first ``shownBadRowsPerFile`` bad rows of
    /// each file (`FILE[i]: …`), then how many more there are.
    static func shown(_ failures: [String]) -> [String] {
        var out: [String] = []
        var rows: [String: Int] = [:]
        var order: [String] = []
        func more(_ file: String) {
            let hidden = (rows[file] ?? 0) - shownBadRowsPerFile
            if hidden > 0 { out.append("\(file): … and \(hidden) more bad row(s) (--json lists every one)") }
            rows[file] = nil
        }
        for f in failures {
            let colon = f.firstIndex(of: ":") ?? f.endIndex
            guard let bracket = f.firstIndex(of: "["), bracket < colon else {
                // A line about a whole file follows its rows.
                more(String(f[..<colon]))
                out.append(f)
                continue
            }
            let file = String(f[..<bracket])
            if rows[file] == nil { order.append(file) }
            rows[file, default: 0] += 1
            if rows[file]! <= shownBadRowsPerFile { out.append(f) }
        }
        for file in order { more(file) }
        return out
    }

    struct Row {
        /// Its record: the row's `"id"`, or the record here with its `source`.
        var id: UUID
        /// `at` is `nil` for a record that has no time (`"at": null`, as
        /// `export stores` writes such a record: one whose creating put the
        /// family does not count, left with later changes alone).
        let focus: FocusKey, at: String?, fields: [String: JSONValue]
        /// When the row's record last changed where it was exported
        /// (`"updated"`, in milliseconds), when the row gives it.
        var updatedMilliseconds: UInt64? = nil
        /// The record's revision where it was exported (`"revision"`),
        /// when the row gives it.
        var revision: String? = nil
        /// The rules the row says it breaks ("problems", as 'export stores' writes them).
        var problems: Set<String> = []
    }

    static func readArray(_ path: String, failures: inout [String]) throws -> [JSONValue]? {
        let name = (path as NSString).lastPathComponent
        guard let data = StoreFileRows.bytes(of: path, failures: &failures) else { return nil }
        // The strict reader, as for bodies: an object key given twice is
        // refused (JSONDecoder kept one of the two), and 38.0 stays the decimal it was exported as.
        // A number it would not keep as written (it would become the nearest
        // double, or 0) is refused, not altered.
        switch JSONValue.parseKeepingNumbers(data) {
        case .success(.array(let rows)): return rows
        case .success: failures.append("\(name): not a JSON array: a store file holds its rows in one [ … ]")
        case .failure(.inexactNumber(let n)):
            let why = JSONValue.inexactReason(n)
            failures.append("\(name): the number \(n) cannot be kept as written (\(why.reason)); " + (why.fewerDigits ? "give fewer digits; " : "")
                            + "in a field the store does not define, a string (\"\(n)\") keeps it as written")
        case .failure(.invalid(let why)):
            // Saved as UTF-16 (a Windows editor's "Unicode"): said as such,
            // not as a syntax error at column 2 (a review).
            let b = data.prefix(4)
            let utf16 = b.starts(with: [0xFF, 0xFE]) || b.starts(with: [0xFE, 0xFF])
                || (b.count == 4 && ((b[b.startIndex + 1] == 0 && b[b.startIndex + 3] == 0) || (b[b.startIndex] == 0 && b[b.startIndex + 2] == 0)))
            failures.append("\(name): not valid JSON: \(why)" + (utf16 ? " (the file looks like UTF-16 text: save it as UTF-8)" : ""))
        }
        return nil
    }

    /// A row read into its record; every problem of its shape said at once
    /// (not one per import run).
    static func parseRow(_ row: JSONValue, store: StoreName) throws(CLIError) -> Row {
        guard case .object(let o) = row else { throw .data("not a JSON object") }
        var said: [String] = []
        let id = o["id"]?.stringValue.flatMap { UUID(text: $0) }
        if id == nil {
            // One given that is not a UUID is said as given (a user review: "needs" it).
            if let given = o["id"] { said.append("\"id\" \(given.jsonText.prefix(60)) is not a UUID") } else { said.append("needs \"id\" (a UUID)") }
        }
        let focus = o["focus"]?.stringValue.flatMap { FocusKey($0) }
        if focus == nil {
            // One given that is not a focus key (a name, `newmom`) is said as
            // given, not as missing: the file names subjects by key.
            if let given = o["focus"] {
                let text = given.stringValue ?? given.jsonText
                let near = ValueHint.sameWord(text, among: ["pregnancy", "newMom"])
                said.append("\"focus\" '\(TerminalText.escaped(text))' is not a focus key (baby:<UUID>, pregnancy or newMom)"
                            + (near.map { "; did you mean '\($0)'?" } ?? ": a baby is named by its key, as 'famctl subject list' shows it"))
            } else {
                said.append("needs \"focus\" (baby:<UUID>, pregnancy or newMom)")
            }
        }
        var at: String?
        var timeless = false
        switch o["at"] {
        case nil: said.append("needs \"at\", an ISO-8601 time with offset")
        // Given as null: a record that has no time, as an export writes it
        // (a review: the whole file was refused, and every record of its
        // store with it).
        case .null?: timeless = true
        case .string(let text)?:
            // An impossible time (second 60, February 30) first: it may parse.
            // (A `t` or `z` written small is written capital, as `record add` writes it.)
            if let why = CalendarDate.impossibility(in: text) { said.append("\"at\": \(why)") } else if TimeValue.parse(text) != nil { at = text.uppercased() } else {
                said.append("\"at\" '\(TerminalText.escaped(text))' is not an ISO-8601 time with offset"
                            + (ValueHint.completedTime(text).map { " (in full: \($0.text)\($0.offsetAdded ? ", this machine's offset" : ""))" } ?? ""))
            }
        default: said.append("\"at\" must be a text: an ISO-8601 time with offset")
        }
        if let s = o["store"]?.stringValue, s != store.rawValue { said.append("says store \"\(s)\" in \(store.rawValue).json") }
        var fields: [String: JSONValue] = [:]
        if case .object(let f)? = o["fields"] { fields = f } else { said.append("needs \"fields\", an object") }
        // The record's own keys in a body begin with $ ($at, $focus…): a
        // field so named would be stored and never shown, and written again
        // by every import of the file (a review).
        for name in fields.keys.sorted() where name.hasPrefix("$") {
            said.append("\"fields\" has \"\(name)\": a name beginning with $ is not a field's (famctl keeps its own keys under such names); rename it")
        }
        // Nor one 'record add' refuses (a space, an '=', nothing at all): a
        // line of the record would read it as more than one field (a review).
        for name in fields.keys.sorted() where !name.hasPrefix("$") && (try? RecordInput.checkFieldName(name)) == nil {
            said.append("\"fields\" has \"\(TerminalText.escaped(name.count > 60 ? name.prefix(59) + "…" : name))\": not a field name (letters, digits and _, starting with a letter); rename it")
        }
        var problems: Set<String> = []
        switch o["problems"] {
        case nil, .null?: break
        case .array(let items)? where items.allSatisfy({ $0.stringValue != nil }): problems = Set(items.compactMap(\.stringValue))
        default: said.append("\"problems\" must be an array of texts (the rules the record breaks, as 'export stores' writes them)")
        }
        // Optional (a file made elsewhere need not give it); one given is
        // what tells an older export's row from a newer one, so one that is
        // not a time is refused rather than taken as none (a review: such a
        // row wrote over later changes unchecked).
        if let why = updatedProblem(o["updated"]) { said.append(why) }
        guard said.isEmpty, let id, let focus, at != nil || timeless else { throw .data(said.joined(separator: "; ")) }
        let updated = o["updated"].flatMap(updatedMilliseconds)
        return Row(id: id, focus: focus, at: at, fields: fields.filter { $0.value != .null }, updatedMilliseconds: updated,
                   revision: o["revision"]?.stringValue, problems: problems)
    }

    /// Checks a row against its store's rules; returns the rules it breaks
    /// that its "problems" list and a merge can leave (taken as they are),
    /// and throws, naming every one, when it breaks others. A sleep is
    /// checked against the home's sleeps the file does not hold
    /// (`fileIDs`: the file's records, this row's among them, replace theirs).
    static func validate(_ r: Row, store: StoreName, home: Home, replacing fileIDs: Set<UUID>) throws -> [String] {
        let schema = StoreSchema.schema(for: store)
        try RecordInput.checkFieldCase(r.fields.keys.sorted(), schema: schema)
        let violations = schema.violations(fields: r.fields, focus: r.focus, at: r.at.flatMap(TimeValue.parse), now: Date())
        let broken = violations.map(\.description)
        // What to write instead, where it is plain (a time written short, a number with its unit).
        var hints: [String: String] = [:]
        for v in violations {
            if let hint = ValueHint.forViolation(v, fields: r.fields, in: schema, exceptYesNo: true) { hints[v.description] = hint }
        }
        // Only what a merge can leave may be listed: a value of the wrong
        // type or range, another subject's store, a time in the future are
        // refused whatever the row says.
        let excused = r.problems.intersection(schema.mergeViolations(fields: r.fields).map(\.description))
        let unlisted = broken.filter { !excused.contains($0) }
        if !unlisted.isEmpty { throw CLIError.data(unlisted.map { v in hints[v].map { "\(v) (\($0))" } ?? v }.joined(separator: "; ")) }
        // A photos list, as `record update photos=` takes one: each photo
        // once, none deleted or another record's but those the home's
        // record lists already (a review: an import let both through).
        if case .array(let items)? = r.fields["photos"] {
            let before = (try home.projector.record(r.id)).map { Set(Home.photoList($0).compactMap { $0.stringValue?.lowercased() }) } ?? []
            try RecordInput.checkPhotoList(items, of: r.id, store: store, home: home, listedBefore: before)
        }
        if store == .sleep, let start = StoreSchema.time(r.fields["start"]),
           let other = try home.projector.overlappingSleep(focus: r.focus.description, start: start, end: StoreSchema.time(r.fields["end"]),
                                                           excluding: fileIDs) {
            guard r.problems.contains(ExportStoresCommand.sleepOverlap) else {
                throw CLIError.data("sleep.start: overlaps sleep \(other.id.lowercasedText) of the same baby")
            }
            return broken + [ExportStoresCommand.sleepOverlap]
        }
        return broken
    }

    /// A record as the home holds it (`nil`: absent), to tell whether it
    /// changed since: absent, or live or deleted with its revision.
    static func seen(_ r: RecordState?) -> String {
        guard let r else { return "absent" }
        return (r.deleted ? "deleted " : "live ") + r.revision
    }

    /// Whether the home's live record changed since the row was exported:
    /// its revision is not the row's (``RecordState/revision``: any
    /// change merged in since, however it is dated), or, for a row without
    /// one (an export by an earlier famctl), it changed after the row's
    /// `"updated"` (to the millisecond, as the export writes it). Such a
    /// row would undo what changed since.
    static func olderThanHome(_ id: UUID, revision: String?, updated: UInt64?, home: Home) throws -> Bool {
        older(try home.projector.record(id), revision: revision, updated: updated)
    }

    /// ``olderThanHome(_:revision:updated:home:)`` of the record as read.
    ///
    /// A deleted record was deleted since a row that has a revision or an
    /// `"updated"` (an export writes live records only; one later than the
    /// deletion, another home's, is kept out too): only a row of a file
    /// made elsewhere, undated, brings it back.
    static func older(_ current: RecordState?, revision: String?, updated: UInt64?) -> Bool {
        guard let current else { return false }
        if current.deleted { return revision != nil || updated != nil }
        if let revision { return current.revision != revision }
        guard let updated else { return false }
        return current.updated.hlc.milliseconds > updated
    }

    /// Whether a row kept out as ``older(_:revision:updated:)`` was made
    /// from another state of the record than this home's rather than
    /// before its later changes: its revision is not the record's, yet its
    /// last change is later than every change of the record here (an
    /// export of this home is never: versions only grow). Another home's
    /// export, most often, with an edit made there.
    static func fromAnotherState(_ current: RecordState?, revision: String?, updated: UInt64?) -> Bool {
        guard let current else { return false }
        return fromAnotherState(current.revision, current.updated, revision: revision, updated: updated)
    }

    /// ``fromAnotherState(_:revision:updated:)`` of a record or a care
    /// subject here, by its revision and newest version.
    static func fromAnotherState(_ hereRevision: String, _ hereUpdated: Version, revision: String?, updated: UInt64?) -> Bool {
        guard let revision, let updated, hereRevision != revision else { return false }
        return updated > hereUpdated.hlc.milliseconds
    }

    /// What is wrong with a row's `"updated"`, or `nil`: absent (or
    /// null), or a time. (Not judged against this clock: an export writes
    /// the record's last change as dated, by a device whose clock may be
    /// ahead.)
    static func updatedProblem(_ value: JSONValue?) -> String? {
        guard let value, value != .null else { return nil }
        guard let text = value.stringValue, TimeText.parse(text) != nil else {
            return "\"updated\" \(TerminalText.escaped(value.stringValue ?? value.jsonText)) is not a time as 'export stores' writes it (ISO-8601 with an offset); leave it out of a row not taken from an export"
        }
        return nil
    }

    /// A row's `"updated"` in milliseconds; `nil` when it is not a time.
    static func updatedMilliseconds(_ value: JSONValue) -> UInt64? {
        value.stringValue.flatMap { TimeText.parse($0) }.map { UInt64(max(0, ($0.timeIntervalSince1970 * 1000).rounded())) }
    }

    /// The event that brings the projection to this row, or `nil` when it already matches.
    /// `recreated`: the record is new as a live one, deleted on this device before.
    static func change(for r: Row, store: StoreName, current: RecordState?, home: Home) throws -> (RecordEvent, isNew: Bool, recreated: Bool)? {
        if let current, !current.deleted {
            guard current.store == store.rawValue else { throw CLIError.data("record \(r.id.lowercasedText) already exists in \(current.store)") }
            var diff: [String: JSONValue] = [:]
            for (k, v) in r.fields where current.fields[k] != v { diff[k] = v }
            for k in current.fields.keys where r.fields[k] == nil { diff[k] = .null }
            let atChanged = current.at != r.at
            if diff.isEmpty && !atChanged && current.focus == r.focus.description { return nil }
            return (RecordEvent(kind: .put, record: r.id, store: store.rawValue, focus: r.focus.description, at: r.at, fields: diff), false, false)
        }
        // A deleted id re-created: its fields from before the delete would
        // show again (a live record shows every field it holds), so those
        // the row does not have are cleared.
        var fields = r.fields
        for name in try home.projector.heldFieldNames(r.id) where fields[name] == nil { fields[name] = .null }
        return (RecordEvent(kind: .put, record: r.id, store: store.rawValue, focus: r.focus.description, at: r.at, fields: fields), true, current != nil)
    }
}
