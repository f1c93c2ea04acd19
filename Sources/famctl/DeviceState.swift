import Envelope
import EventLog
import Foundation

/// This device's own settings and epoch keys, in the home's database.
/// Nothing here is replicated; it is not part of the log.
final class DeviceState {
    enum Key: String {
        case deviceName = "device.name"
        case createdAt = "device.created_at"
        case family = "family.id"
        /// The owner's device id, learned from the invitation (a joiner) or by creating the family.
        case owner = "family.owner"
        /// Where the family's events are exchanged: a shared directory, or a peer URL.
        case syncDirectory = "sync.dir"
        /// The role the invitation gave, known before the family's events arrive.
        case joinedRole = "family.joined_role"
        case syncPeer = "sync.peer"
        case photoMaxBytes = "photos.max_bytes"
        case photoCacheBytes = "photos.cache_bytes"
        case prefetchPhotos = "photos.prefetch"
        /// The projection schema the tables were built with; a mismatch triggers a rebuild.
        case projectionVersion = "projection.version"
        /// The highest key epoch of a family event this device could not open
        /// for want of its key (``Home/apply(_:prepared:deferringToRebuild:)``):
        /// the owner makes no key of that epoch or an earlier one.
        case unopenedEpoch = "keys.unopened_epoch"
        /// The fork points the projection was built with (``Home/forkPointsText``):
        /// when the log's differ (a process killed between an ingest that found a
        /// fork and the rebuild after it), the projection is rebuilt on open.
        case projectionForks = "projection.forks"
        /// The current projection file's name in the home (see `Home+Projection`).
        case projectionFile = "projection.file"
        /// "on": the view shows every family member's records; "off": only this device's own.
        case includeShared = "view.include_shared"
        /// The care subjects and records an `accept` carries into the family
        /// (a JSON array of event bodies), from the moment it switches the home
        /// to the family until the join that writes them: a retried `accept`
        /// finds them here once the projection no longer holds them.
        case carryPending = "family.carry_pending"
    }

    let database: Database
    let keyring: Keyring

    init(database: Database) throws {
        self.database = database
        try database.execute("""
            CREATE TABLE IF NOT EXISTS device_settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS epoch_keys(
                family BLOB NOT NULL, epoch INTEGER NOT NULL, key BLOB NOT NULL CHECK(length(key) = 32),
                PRIMARY KEY(family, epoch));
            """)
        keyring = Keyring(database: database)
    }

    func get(_ key: Key) throws -> String? {
        try database.statement("SELECT value FROM device_settings WHERE key = ?1").first([.text(key.rawValue)]) { $0.text(0) }
    }

    func set(_ key: Key, _ value: String) throws {
        try database.run("INSERT OR REPLACE INTO device_settings(key, value) VALUES(?1, ?2)", [.text(key.rawValue), .text(value)])
    }

    func remove(_ key: Key) throws {
        try database.run("DELETE FROM device_settings WHERE key = ?1", [.text(key.rawValue)])
    }
}

/// The family's epoch keys this device holds.
final class Keyring {
    let database: Database
    init(database: Database) { self.database = database }

    func store(_ key: EpochKey, family: FamilyID) throws {
        try database.run("INSERT OR IGNORE INTO epoch_keys(family, epoch, key) VALUES(?1, ?2, ?3)",
                         [.blob(family.bytes), .integer(Int64(key.epoch)), .blob(key.key.copyBytes())])
    }

    func key(family: FamilyID, epoch: UInt32) throws -> EpochKey? {
        try database.statement("SELECT key FROM epoch_keys WHERE family = ?1 AND epoch = ?2")
            .first([.blob(family.bytes), .integer(Int64(epoch))]) { EpochKey(epoch: epoch, key: SecretBytes($0.blob(0))) }
    }

    /// Every key held for `family`, by epoch.
    func keys(family: FamilyID) throws -> [UInt32: EpochKey] {
        var out: [UInt32: EpochKey] = [:]
        try database.statement("SELECT epoch, key FROM epoch_keys WHERE family = ?1").forEachRow([.blob(family.bytes)]) {
            out[UInt32($0.int(0))] = EpochKey(epoch: UInt32($0.int(0)), key: SecretBytes($0.blob(1)))
        }
        return out
    }

    /// The epochs of the keys held for `family`, without reading the keys
    /// (asked after every operation: ``Home/projectionKeysMatch()``).
    func epochs(family: FamilyID) throws -> Set<UInt32> {
        var out = Set<UInt32>()
        try database.statement("SELECT epoch FROM epoch_keys WHERE family = ?1").forEachRow([.blob(family.bytes)]) { out.insert(UInt32($0.int(0))) }
        return out
    }

    func current(family: FamilyID) throws -> EpochKey? {
        try database.statement("SELECT epoch, key FROM epoch_keys WHERE family = ?1 ORDER BY epoch DESC LIMIT 1")
            .first([.blob(family.bytes)]) { EpochKey(epoch: UInt32($0.int(0)), key: SecretBytes($0.blob(1))) }
    }
}
