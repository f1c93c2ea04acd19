import Envelope
import EventLog
import Foundation
import Projections

/// The stores' file of a home whose log is damaged, opened from a copy in
/// the temporary directory (nothing in the home is written): what
/// `export stores` can still write when no other command can open the
/// home. The records never synced are in it, as its last update left them.
final class SalvagedStores {
    /// The copy's folder, removed when released.
    let directory: String
    let database: Database
    let projector: Projector
    /// The stores' file it was copied from (its name in the home).
    let file: String
    /// The log position its last update reflects.
    let mark: Int64

    /// The stores' file of `home` that is whole and reflects the most of
    /// the log, from a copy; `nil` when none is.
    static func open(home: String) throws -> SalvagedStores? {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: home)) ?? [])
            .filter { (try? /projection\.[0-9]+\.sqlite/.wholeMatch(in: $0)) != nil }
        var best: SalvagedStores?
        for name in names.sorted() {
            guard let s = try? SalvagedStores(home: home, file: name), s.mark >= 0 else { continue }
            if best == nil || s.mark > best!.mark { best = s }
        }
        return best
    }

    /// A stores' file given by its path (one a rebuild set aside: `….ahead-of-log-TIME`,
    /// `….before-damaged-dropped-TIME`), from a copy.
    static func open(file path: String) throws -> SalvagedStores {
        let url = URL(fileURLWithPath: path)
        return try SalvagedStores(home: url.deletingLastPathComponent().path, file: url.lastPathComponent)
    }

    private init(home: String, file: String) throws {
        var template = Array((NSTemporaryDirectory() + "famctl-salvage-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CLIError(.cantCreate, "cannot create a scratch directory in \(NSTemporaryDirectory())") }
        directory = String(cString: made)
        self.file = file
        do {
            // Its write-ahead log too: the last commits are in it.
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: home + "/" + file + suffix) {
                try FileManager.default.copyItem(atPath: home + "/" + file + suffix, toPath: directory + "/stores.sqlite" + suffix)
            }
            database = try Database(path: directory + "/stores.sqlite")
            guard try database.statement("PRAGMA quick_check(1)").first([], { $0.text(0) }) == "ok",
                  try database.statement("SELECT version FROM p_schema").first([], { Int($0.int(0)) }) == Projector.schemaVersion else {
                throw CLIError(.dataError, "\(file) is damaged or of another layout")
            }
            // The family names no event here: nothing is applied, only read.
            projector = try Projector(database: database, family: FamilyID(bytes: [UInt8](repeating: 0, count: 16)))
            mark = try projector.mark()
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
