import Envelope
import EventLog
import Foundation
import Projections

/// The one place events reach the projections: local appends, ingested
/// events and rebuilds all go through ``Home/apply(_:)``.
extension Home {
    /// Opens and applies one event that has just entered the log (inside the
    /// log's transaction). Events this device cannot open yet (no key) are
    /// left for a rebuild once the key arrives; unreadable bodies are
    /// reported by `replay`.
    func apply(_ env: SyncEnvelope) throws {
        if case .body(let body) = try openBody(env) {
            try projector.apply(env, body: body)
        }
    }

    /// Seals, appends and applies local changes in one transaction.
    @discardableResult
    func append(_ bodies: [EventBody]) throws -> [SyncEnvelope] {
        let (family, key) = try currentKey()
        return try log.append(bodies: bodies.map { $0.encoded() }, as: identity, family: family, key: key) { try apply($0) }
    }

    /// Ingests foreign envelopes and applies what enters the log.
    func ingest(_ inputs: [[UInt8]]) throws -> IngestReport {
        let (family, _) = try currentKey()
        return try log.ingest(inputs, family: family) { try apply($0) }
    }

    /// Rebuilds every projection from the log, in one transaction.
    func rebuildProjections() throws {
        try log.database.transaction(.immediate) {
            try projector.reset()
            try log.forEachEvent(order: .chain) { stored in
                if let env = try? SyncEnvelope(decoding: stored.bytes) { try apply(env) }
            }
            try state.set(.projectionVersion, String(Projector.schemaVersion))
        }
    }

    /// A home written by an older famctl (or before projections existed) is
    /// rebuilt from its log on first open.
    func rebuildProjectionsIfOutdated() throws {
        if try state.get(.projectionVersion) != String(Projector.schemaVersion) {
            try rebuildProjections()
        }
    }

    /// Whether the view shows the whole family's records (default) or only this device's.
    var includeShared: Bool { (try? state.get(.includeShared)) != "off" }
}
