import Envelope
import EventLog
import Foundation
import Projections

/// A projection in a temporary database, removed when released: where
/// `replay` rebuilds the state from the log to compare it with the live one.
final class ScratchProjection {
    let directory: String
    let database: Database
    let projector: Projector

    init(family: FamilyID) throws {
        var template = Array((NSTemporaryDirectory() + "famctl-replay-XXXXXX").utf8CString)
        guard let dir = mkdtemp(&template) else { throw CLIError(.cantCreate, "cannot create a scratch directory in \(NSTemporaryDirectory())") }
        directory = String(cString: dir)
        database = try Database(path: directory + "/scratch.sqlite")
        try database.execute("PRAGMA synchronous=OFF")
        projector = try Projector(database: database, family: family)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
