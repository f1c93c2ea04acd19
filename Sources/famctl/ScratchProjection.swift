import Envelope
import EventLog
import Foundation
import Projections

/// A projection in a temporary database, removed when released: where
/// `replay` rebuilds the state from the log to compare it with the live one.
final class ScratchProjection {
    /// Its folder in the temporary directory; `nil` for one in memory.
    let directory: String?
    let database: Database
    let projector: Projector

    /// - Parameter inMemory: an in-memory database instead of a file in
    ///   the temporary directory (see ``built(family:home:inMemory:_:)``).
    init(family: FamilyID, inMemory: Bool = false) throws {
        if inMemory {
            directory = nil
            database = try Database(path: ":memory:")
            // Its sorts (the view index) in memory too: the disk had no room.
            try database.execute("PRAGMA temp_store=MEMORY")
            projector = try Projector(database: database, family: family)
            return
        }
        var template = Array((NSTemporaryDirectory() + "famctl-replay-XXXXXX").utf8CString)
        guard let dir = mkdtemp(&template) else {
            if [ENOSPC, EDQUOT, EFBIG].contains(errno) { throw NoRoom() }
            throw CLIError(.cantCreate, "cannot create a scratch directory in \(NSTemporaryDirectory())")
        }
        let path = String(cString: dir)
        directory = path
        // Made here, so removed here should what follows fail (a full disk):
        // `deinit` runs only for a scratch made whole.
        do {
            database = try Database(path: path + "/scratch.sqlite")
            // A file nobody else reads, removed afterwards: no write-ahead log
            // (its pages are written once, not to the log and then the file),
            // no fsync.
            // Its page cache as a rebuild's new file has (28 MiB).
            try database.execute("PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF; PRAGMA cache_size=-28672")
            projector = try Projector(database: database, family: family)
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
    }

    deinit { if let directory { try? FileManager.default.removeItem(atPath: directory) } }

    /// A scratch projection, filled by `fill`: in the temporary directory,
    /// or, when that has no room for it (a full disk, a quota, a file-size
    /// limit), made again in memory, with a note saying so. What `fill`
    /// returns comes back with it.
    /// - Parameter inMemory: straight in memory (an earlier scratch of the
    ///   same command found no room).
    static func built(family: FamilyID, home: Home, inMemory: Bool = false,
                      _ fill: (ScratchProjection) throws -> Bool) throws -> (scratch: ScratchProjection, filled: Bool) {
        if !inMemory {
            do {
                let scratch = try ScratchProjection(family: family)
                return (scratch, try fill(scratch))
            } catch let e where Self.noRoom(e) {
                let size = (try? FileManager.default.attributesOfItem(atPath: home.path + "/" + home.projectionName)[.size] as? Int) ?? nil
                Console.err("famctl: note: no room in \(NSTemporaryDirectory()) for the scratch copy of the stores (the disk is full, or a file-size limit was reached); "
                    + "it is made in memory instead" + (size.map { ", about \(max(1, $0 >> 20)) MB" } ?? "")
                    + ". TMPDIR=DIR puts it on another disk.")
            }
        }
        let scratch = try ScratchProjection(family: family, inMemory: true)
        return (scratch, try fill(scratch))
    }

    /// Whether making or filling a scratch failed for want of room.
    private static func noRoom(_ error: any Error) -> Bool {
        switch error {
        case is NoRoom: true
        case let e as SQLiteError: e.isOutOfSpace
        default: false
        }
    }

    /// `mkdtemp` found no room for the scratch's folder.
    private struct NoRoom: Error {}

    /// Projects `home`'s events as its live projection is built: household
    /// events first, then the rest, each group in chain order, opened with
    /// the keys `home` holds; a forked author's events only up to its fork
    /// point. Left out: events after log position `mark`, the `failed`
    /// ones, and with `until`, those whose clock is after it.
    ///
    /// Two passes over the log, in one bulk write, the events opened on
    /// another core as a rebuild's are. Whether an event is a household
    /// one is known once its body is open: the first pass opens only the
    /// events of `householdHint` (the live projection's household events)
    /// and applies those that are household events, the second opens the
    /// rest. The hint decides which events are opened first, never what
    /// is applied: should the second pass meet a household event, the hint
    /// missed it, and this returns false, its transaction rolled back (the
    /// caller makes the projection again in a new scratch, without a
    /// hint). With no hint, the first pass opens every event.
    ///
    /// - Returns: whether the projection was made.
    ///
    /// The family is the scratch's own (``Projector/family``): the home's,
    /// or another the log holds, such as the private chain this device
    /// wrote before it joined one (`export stores --before-joining`).
    func rebuild(from home: Home, upTo mark: Int64, leavingOut failed: Set<EventID>, until: HLC?, householdHint: Set<EventID>?) throws -> Bool {
        let family = projector.family
        let keys = ReadOnlyKeys(keys: try home.state.keyring.keys(family: family))
        let unopened = AtomicCount()
        var household = Set<EventID>()
        func included(_ env: SyncEnvelope) -> Bool { until.map { env.hlc <= $0 } ?? true && !home.isPastForkPoint(env) }
        do {
            try database.transaction(.immediate) {
                try projector.bulk(expected: Int(mark)) {
                    try home.forEachOpened(keys: keys, upTo: mark, unopened: unopened, of: family,
                                           skip: { failed.contains($0.id) || !(householdHint?.contains($0.id) ?? true) }) { opened in
                        guard opened.prepared.isLibraryType, included(opened.env) else { return }
                        household.insert(opened.env.id)
                        try projector.apply(opened.env, prepared: opened.prepared)
                    }
                    try home.forEachOpened(keys: keys, upTo: mark, unopened: unopened, of: family,
                                           skip: { failed.contains($0.id) || household.contains($0.id) }) { opened in
                        guard included(opened.env) else { return }
                        if opened.prepared.isLibraryType { throw HintMissed() }
                        try projector.apply(opened.env, prepared: opened.prepared)
                    }
                }
            }
        } catch is HintMissed {
            return false
        }
        return true
    }

    /// The second pass of ``rebuild(from:upTo:leavingOut:until:householdHint:)``
    /// met a household event its hint did not name.
    private struct HintMissed: Error {}
}
