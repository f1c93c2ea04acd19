import Envelope
import EventLog
import Foundation

/// This device's own settings and epoch keys, in the home's database.
/// Nothing here is replicated; it is not part of the log.
final class DeviceState {
    enum Key: String {
        case deviceName = "device.name"
        /// The device id of the key this home was made with (hex): a key
        /// file put in its place from another device is refused at open.
        case deviceID = "device.id"
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
        /// When `sync` last said that the family has sent nothing for two
        /// weeks (seconds since 1970): said once a day.
        case familySilenceSaid = "sync.family_silence_said"
        /// The other devices' notes, found at the last full listing of this
        /// device's location, that they left it for another (a JSON array of
        /// `{author, at, location}`): what `sync` and `status` say.
        case movedAway = "sync.moved_away"
        /// The location a `settings sync` moved this device from, while the
        /// note it owes there (``MovedNotice``) is not left yet: left by the
        /// next sync should that process have been killed first.
        case movedNoteOwed = "sync.moved_note_owed"
        /// The clock of the invitation this device joined with, as its code
        /// said (the owner's clock; its raw value): the owner's events dated
        /// after it come after the invitation in the owner's chain.
        case inviteIssued = "family.invite_issued"
        /// How many damaged events the last copy of the stores kept aside
        /// before a rebuild dropped them held (``Home/keepStoresBeforeDroppingDamaged()``).
        case damagedCopied = "projection.damaged_copied"
        /// The owner's word for members whose join arrived late
        /// (``Home/heldJoin(_:)``): their device ids (hex), comma-separated,
        /// that `member admit` let have the family's key.
        case admittedLate = "family.admitted_late"
        /// The refused joins of invitations another device used first that
        /// the owner was told of (``Home/warnReusedInvitations()``): their
        /// event ids (hex), comma-separated.
        case reusedInviteSaid = "family.reused_invite_said"
        /// The location a move left (``Location/noteText``), while photos
        /// the new one lacks may be there alone (``Home/carryPhotosIfAsked(to:listed:)``).
        case carryPhotosFrom = "sync.carry_photos_from"
        /// The fork points (`AUTHOR:SEQ`, comma-separated) of other
        /// devices a command has said what they undid of (``SyncCommand/forkedHere(_:)``).
        case forksSaid = "sync.forks_said"
        /// When a write last said in full that this device's changes are
        /// dated ahead of its clock (``Home/warnIfDatedAhead(_:first:now:)``):
        /// `WHAT SECONDS`, WHAT the device it followed (hex) or `own`, and
        /// the day of the change dated ahead.
        /// Within six hours, the same is said in one line.
        case datedAheadSaid = "clock.dated_ahead_said"
    }

    let database: Database
    let keyring: Keyring

    init(database: Database) throws {
        self.database = database
        try database.execute("""
            CREATE TABLE IF NOT EXISTS device_settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS epoch_keys(
                family BLOB NOT NULL, epoch INTEGER NOT NULL, key BLOB NOT NULL CHECK(length(key) = 32), key_check BLOB,
                PRIMARY KEY(family, epoch));
            """)
        keyring = Keyring(database: database)
        try keyring.addChecks()
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
///
/// Each key is stored with a check value (`key_check`, ``check(_:family:)``)
/// and every key read is checked against it: a key damaged on disk (a flipped
/// bit that SQLite's own checks do not see) would otherwise seal this
/// device's next events so that no other device can open them, and make its
/// own rebuild drop every record it can no longer open. A key that fails its
/// check is refused, with what to do, and nothing is written with it.
final class Keyring {
    let database: Database
    init(database: Database) { self.database = database }

    /// The check value stored with `key`: a 16-byte keyed BLAKE2b, keyed with
    /// the key, of a fixed label, the family and the epoch. It says nothing
    /// of the key to whoever reads the file (the key is beside it anyway),
    /// and a damaged key or a damaged check no longer match.
    static func check(_ key: EpochKey, family: FamilyID) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        let e = key.epoch
        let message = Array("famctl epoch key check v1".utf8) + family.bytes + [UInt8(e >> 24), UInt8(e >> 16 & 0xFF), UInt8(e >> 8 & 0xFF), UInt8(e & 0xFF)]
        out.withUnsafeMutableBytes { o in
            key.key.withUnsafeBytes { k in
                Sodium.blake2b(into: o, key: k) { update in message.withUnsafeBytes { update($0) } }
            }
        }
        return out
    }

    /// Adds the `key_check` column to a home made before it, and a check to
    /// every key stored without one (as it is then: a key damaged before
    /// this is not told apart).
    func addChecks() throws {
        let has = try database.statement("SELECT 1 FROM pragma_table_info('epoch_keys') WHERE name = 'key_check'").first { _ in true } ?? false
        if !has {
            do {
                try database.execute("ALTER TABLE epoch_keys ADD COLUMN key_check BLOB")
            } catch {
                // Another process may have added it meanwhile.
                guard error.message.contains("duplicate column") else { throw error }
            }
        }
        var unchecked: [(FamilyID, EpochKey)] = []
        try database.statement("SELECT family, epoch, key FROM epoch_keys WHERE key_check IS NULL").forEachRow {
            let family = $0.blob(0), key = $0.blob(2)
            guard family.count == 16, key.count == 32 else { return }   // refused when read
            unchecked.append((FamilyID(bytes: family), EpochKey(epoch: UInt32(truncatingIfNeeded: $0.int(1)), key: SecretBytes(key))))
        }
        for (family, key) in unchecked {
            try database.run("UPDATE epoch_keys SET key_check = ?1 WHERE family = ?2 AND epoch = ?3 AND key_check IS NULL",
                             [.blob(Self.check(key, family: family)), .blob(family.bytes), .integer(Int64(key.epoch))])
        }
    }

    func store(_ key: EpochKey, family: FamilyID) throws {
        try database.run("INSERT OR IGNORE INTO epoch_keys(family, epoch, key, key_check) VALUES(?1, ?2, ?3, ?4)",
                         [.blob(family.bytes), .integer(Int64(key.epoch)), .blob(key.key.copyBytes()), .blob(Self.check(key, family: family))])
    }

    /// The key of a row (`epoch`, `key`, `key_check` in columns `at`,
    /// `at + 1`, `at + 2`), once it passes its check.
    private func checked(_ row: Row, at i: Int32, family: FamilyID) throws -> EpochKey {
        let epoch = UInt32(truncatingIfNeeded: row.int(i))
        let bytes = row.blob(i + 1)
        guard bytes.count == 32 else { throw Self.damaged(epoch: epoch) }
        let key = EpochKey(epoch: epoch, key: SecretBytes(bytes))
        if row.isNull(i + 2) { return key }
        guard Sodium.constantTimeEqual(row.blob(i + 2), Self.check(key, family: family)) else { throw Self.damaged(epoch: epoch) }
        return key
    }

    static func damaged(epoch: UInt32) -> CLIError {
        CLIError(.dataError, "the family's key of epoch \(epoch) in this home's famctl.sqlite is damaged (it no longer matches its check value); nothing was written or read with it",
                 hint: "Restore famctl.sqlite from a backup taken before the damage, then run 'famctl sync'. Without one: this device's events are in the shared folder, and a new home that joins the family with a new invitation from its owner reads them all.")
    }

    func key(family: FamilyID, epoch: UInt32) throws -> EpochKey? {
        try database.statement("SELECT epoch, key, key_check FROM epoch_keys WHERE family = ?1 AND epoch = ?2")
            .first([.blob(family.bytes), .integer(Int64(epoch))]) { try checked($0, at: 0, family: family) }
    }

    /// Every key held for `family`, by epoch.
    func keys(family: FamilyID) throws -> [UInt32: EpochKey] {
        var out: [UInt32: EpochKey] = [:]
        try database.statement("SELECT epoch, key, key_check FROM epoch_keys WHERE family = ?1").forEachRow([.blob(family.bytes)]) {
            let key = try checked($0, at: 0, family: family)
            out[key.epoch] = key
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

    /// Drops every key held for `family`: a join that did not go through
    /// leaves the family's key behind no more.
    func forget(family: FamilyID) throws {
        try database.run("DELETE FROM epoch_keys WHERE family = ?1", [.blob(family.bytes)])
    }

    func current(family: FamilyID) throws -> EpochKey? {
        try database.statement("SELECT epoch, key, key_check FROM epoch_keys WHERE family = ?1 ORDER BY epoch DESC LIMIT 1")
            .first([.blob(family.bytes)]) { try checked($0, at: 0, family: family) }
    }
}
