import Envelope
import EventLog
import Foundation
import Projections
import Replicator

/// Photos on this device: encrypted blobs in a local cache (`HOME/photos`,
/// least-recently-used eviction, own unpublished photos never evicted), and
/// in the peer's blob area (`blobs/<BLAKE2b-256 of the blob>.blob`).
extension Home {
    static let defaultPhotoMax = 25 << 20
    static let defaultPhotoCache = 500 << 20
    /// The largest `--max-mb` in MB: a photo's encrypted file (its bytes,
    /// a 33-byte header and a 16-byte tag) must fit in the 256 MiB a shared
    /// folder's reader or a WebDAV peer takes, or it would never be shared.
    static let largestPhotoMaxMB = 255

    /// How many photos a record of `store` may list; `nil` for a store
    /// without photos.
    static func photoLimit(store: String) -> Int? {
        guard let spec = StoreName(rawValue: store).flatMap({ StoreSchema.schema(for: $0).field("photos") }),
              case .photoList(let max) = spec.type else { return nil }
        return max
    }

    /// What to do about a photo of `size` bytes over this device's limit:
    /// raise the limit, unless no limit takes it (a review: the hint said
    /// to raise it past what `settings photos` allows).
    static func overLimitHint(_ size: Int) -> String {
        size > largestPhotoMaxMB << 20
            ? "Shrink it: no limit takes more than \(largestPhotoMaxMB) MiB (what a shared folder or a WebDAV server is asked to hold in one file)."
            : "Shrink it, or raise the limit with 'famctl settings photos --max-mb \((size + (1 << 20) - 1) >> 20)'."
    }

    var photoDirectory: String { path + "/photos" }
    /// The largest photo `photo add` accepts (a larger stored setting, from
    /// before the cap, counts as the cap).
    var photoMaxBytes: Int {
        min((try? state.get(.photoMaxBytes)).flatMap { $0 }.flatMap { Int($0) } ?? Self.defaultPhotoMax, Self.largestPhotoMaxMB << 20)
    }
    var photoCacheBytes: Int { (try? state.get(.photoCacheBytes)).flatMap { $0 }.flatMap { Int($0) } ?? Self.defaultPhotoCache }
    var prefetchPhotos: Bool { (try? state.get(.prefetchPhotos)) == "on" }

    func photoCacheTable() throws {
        try log.database.execute("""
            CREATE TABLE IF NOT EXISTS ph_cache(blob TEXT PRIMARY KEY, size INTEGER NOT NULL, last_used INTEGER NOT NULL, unpublished INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS ph_erased(blob TEXT PRIMARY KEY);
            CREATE TABLE IF NOT EXISTS ph_repaired(blob TEXT PRIMARY KEY);
            CREATE TABLE IF NOT EXISTS ph_seen(blob TEXT PRIMARY KEY, tag TEXT NOT NULL);
            """)
    }

    static func blobPath(_ blob: String) -> String { "blobs/\(blob).blob" }

    /// What a file that is no photo famctl takes most likely is, by its
    /// first bytes, to say so; `nil` when nothing is recognised.
    static func looksLike(_ b: [UInt8]) -> String? {
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let t = Array(text.utf8)
            return b.count >= offset + t.count && Array(b[offset..<(offset + t.count)]) == t
        }
        if b.isEmpty { return "an empty file" }
        if starts("GIF8") { return "a GIF image" }
        if starts("%PDF") { return "a PDF document" }
        if starts("BM") && b.count > 14 { return "a BMP image" }
        if starts("II*\u{0}") || starts("MM\u{0}*") { return "a TIFF image" }
        if starts("ftyp", at: 4) {
            let brand = b.count >= 12 ? String(decoding: b[8..<12], as: UTF8.self) : ""
            return brand.hasPrefix("avi") ? "an AVIF image" : "a video or other media file (\(brand.isEmpty ? "ftyp" : brand))"
        }
        if starts("RIFF") { return "a RIFF file (sound or video)" }
        if starts("PK\u{3}\u{4}") { return "a ZIP archive" }
        // The start of a PNG's or a JPEG's signature, not followed by the rest.
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47]) || b.starts(with: [0xFF, 0xD8]) {
            return "the beginning of a \(b[0] == 0x89 ? "PNG" : "JPEG") image, cut short or damaged (\(b.count) byte\(b.count == 1 ? "" : "s"))"
        }
        // Text: no control characters, and UTF-8 (a character cut by the 512th byte aside).
        let head = b.prefix(512)
        if head.allSatisfy({ $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }),
           !String(decoding: head, as: UTF8.self).unicodeScalars.dropLast().contains("\u{FFFD}") { return "text" }
        return nil
    }

    /// Encrypts `bytes` as a new photo of `record`, keeps the blob in the
    /// cache (unpublished), and appends its metadata and the record's new
    /// photo list in one transaction. Returns the photo id.
    ///
    /// The list written is the record's list as it stands under the write
    /// lock: another `photo add` or `photo delete` of this device, or a
    /// sync, that changed it meanwhile is kept, not overwritten
    /// (``appendToRecord(_:check:_:)``).
    func addPhoto(to record: RecordState, bytes: [UInt8], file: String? = nil) throws -> UUID {
        guard bytes.count <= photoMaxBytes else {
            throw CLIError.data("the photo is \(bytes.count) bytes, over the \(photoMaxBytes)-byte limit; nothing was written",
                                hint: Self.overLimitHint(bytes.count))
        }
        guard let type = PhotoBlob.sniff(bytes) else {
            let what = Self.looksLike(bytes).map { " (it looks like \($0))" } ?? ""
            throw CLIError.data("\(file.map { "\($0) is " } ?? "")not a JPEG, PNG, HEIC or WebP image\(what); nothing was written")
        }
        if let short = ImageEnd.cutShort(bytes, type: type) {
            throw CLIError.data("\(file ?? "the photo") is not a whole image: \(short); nothing was written",
                                hint: "A download or a copy not finished leaves such a file: add it once it is whole (it opens in an image viewer).")
        }
        func checkRoom(_ record: RecordState) throws {
            if let max = Self.photoLimit(store: record.store), case let listed = try withoutDeletedPhotos(Self.photoList(record)), listed.count >= max {
                // Ids no photo here has (a record imported from another
                // home's export): `photo delete` knows nothing of them.
                let known = Set(try projector.photos(includeDeleted: true).map(\.id.lowercasedText))
                let unknown = listed.compactMap(\.stringValue).filter { !known.contains($0.lowercased()) }
                let others = listed.compactMap(\.stringValue).filter { known.contains($0.lowercased()) }
                throw CLIError.data("\(record.store).photos: must list at most \(max); nothing was written",
                                    hint: unknown.isEmpty
                                        ? "'famctl photo delete PHOTO_ID' makes room ('famctl photo list --record \(record.id.lowercasedText)' lists them)."
                                        : "\(unknown.count) of the ids in its list name no photo on this device (brought by 'import stores', or not arrived yet): "
                                            + "'famctl record update \(record.id.lowercasedText) photos=\(others.joined(separator: ","))' drops them; "
                                            + "'famctl photo delete PHOTO_ID' makes room among its photos here.")
            }
        }
        try checkRoom(record)
        try photoCacheTable()
        let id = RecordIdentifier.make()
        let hash = Sodium.blake2b256(bytes), idBytes = FamilyID(uuid: id).bytes
        let key = PhotoBlob.hedgedKey(random: log.randomSecret(32), hash: hash, id: idBytes)
        let blob = PhotoBlob.seal(bytes, id: idBytes, key: key)
        let blobName = Hex.encode(Sodium.blake2b256(blob))
        try makePhotoDirectory()
        try FileIO.writeAtomically(blob, to: photoDirectory + "/" + blobName, mode: 0o600)
        try log.database.run("INSERT OR REPLACE INTO ph_cache(blob, size, last_used, unpublished) VALUES(?1, ?2, ?3, 1)",
                             [.text(blobName), .integer(Int64(blob.count)), .integer(Int64(Date().timeIntervalSince1970 * 1000))])
        let meta = PhotoEvent(kind: .put, photo: id, fields: [
            "record": .string(record.id.lowercasedText), "size": .int(Int64(bytes.count)), "mediaType": .string(type),
            "hash": .string(Hex.encode(hash)), "key": .string(Hex.encode(key.copyBytes())), "blob": .string(blobName),
        ])
        do {
            try appendToRecord(record.id) { now in
                guard let now else {
                    throw CLIError(.noInput, "no live record \(record.id.lowercasedText): it was deleted meanwhile; nothing was written",
                                   hint: "'famctl record restore \(record.id.lowercasedText)' brings it back.")
                }
                try checkRoom(now)
                let update = RecordEvent(kind: .put, record: now.id, store: now.store, focus: now.focus, at: nil,
                                         fields: ["photos": .array(try withoutDeletedPhotos(Self.photoList(now)) + [.string(id.lowercasedText)])])
                return [meta.body, try RecordInput.keepingFocus(update.body, of: now.id, home: self)]
            }
        } catch {
            // Refused or failed: the blob must not be uploaded as an orphan.
            try? log.database.run("DELETE FROM ph_cache WHERE blob = ?1", [.text(blobName)])
            try? FileManager.default.removeItem(atPath: photoDirectory + "/" + blobName)
            throw error
        }
        // Should this process have stalled for over an hour between the blob
        // and the append, a `sync` may have taken the blob for an orphan.
        // Best effort: the photo is added whatever happens here.
        try? keepCached(blob, named: blobName)
        return id
    }

    /// A record's photo list (its `photos` field), empty when it has none.
    static func photoList(_ record: RecordState) -> [JSONValue] {
        if case .array(let list)? = record.fields["photos"] { list } else { [] }
    }

    /// `list` without the photos deleted since it was written: what a new
    /// list of the record is made from. A record brought back on one device
    /// while another deleted one of its photos lists that photo still (the
    /// list is one field, and the restore's won; the delete wrote no list);
    /// the next list written drops it, and it takes no room meanwhile. A
    /// photo whose `photo.put` has not arrived yet is kept.
    func withoutDeletedPhotos(_ list: [JSONValue]) throws -> [JSONValue] {
        guard !list.isEmpty else { return list }
        // The photos read once (`projector.photo` reads them all, each call).
        let deleted = Set(try projector.photos(includeDeleted: true).filter(\.deleted).map(\.id))
        return list.filter { item in
            guard let text = item.stringValue, let photo = UUID(text: text) else { return true }
            return !deleted.contains(photo)
        }
    }

    /// Appends the events `make` writes from record `id` as it stands (`nil`
    /// when it is not live), made again should the record's photo list,
    /// focus, store or liveness have changed (another process of this
    /// device, a sync) between the read and the write lock
    /// (``appendAsRead(_:same:changing:check:_:)``): the list written never
    /// drops a photo another process added, nor lists one it deleted, and a
    /// record's photo limit holds however many processes add at once.
    /// - Parameter extra: a check of its own, run under the write lock too.
    func appendToRecord(_ id: UUID, check extra: () throws -> Void = {}, _ make: (RecordState?) throws -> [EventBody]) throws {
        func same(_ a: RecordState?, _ b: RecordState?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return a.fields["photos"] == b.fields["photos"] && a.focus == b.focus && a.store == b.store
        }
        try appendAsRead({ try projector.record(id).flatMap { $0.deleted ? nil : $0 } }, same: same,
                         changing: "record \(id.lowercasedText)", check: extra, make)
    }

    /// Writes this device's own new blob back into the cache (unpublished)
    /// if it is no longer there.
    func keepCached(_ blob: [UInt8], named name: String) throws {
        try photoCacheTable()
        let present = try log.database.statement("SELECT 1 FROM ph_cache WHERE blob = ?1").first([.text(name)]) { _ in true } ?? false
        if present, FileManager.default.fileExists(atPath: photoDirectory + "/" + name) { return }
        try makePhotoDirectory()
        try FileIO.writeAtomically(blob, to: photoDirectory + "/" + name, mode: 0o600)
        try log.database.run("INSERT OR REPLACE INTO ph_cache(blob, size, last_used, unpublished) VALUES(?1, ?2, ?3, 1)",
                             [.text(name), .integer(Int64(blob.count)), .integer(Int64(Date().timeIntervalSince1970 * 1000))])
    }

    /// Files in the cache that no `ph_cache` row lists, an hour old (a
    /// `photo add` or a fetch killed between its file and its row, or an
    /// orphan's removal between its row and its file): one a photo still
    /// names is listed again, as an unpublished own photo's (uploaded by the
    /// round, never evicted before), a private-chain photo's (kept), or a
    /// fetched copy (evicted as any); any other is removed (a review: a
    /// killed `photo add` left 20 MB that nothing counted or removed).
    func listOrRemoveUnlistedBlobFiles(live: Set<String>, liveOwn: Set<String>) throws {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: photoDirectory) else { return }
        var listed = Set<String>()
        try log.database.statement("SELECT blob FROM ph_cache").forEachRow { listed.insert($0.text(0)) }
        let cutoff = Date().addingTimeInterval(-Self.orphanBlobAge)
        let unlisted = names.filter { $0.utf8.count == 64 && $0.allSatisfy(\.isHexDigit) && !listed.contains($0) }
        guard !unlisted.isEmpty else { return }
        var old: [(name: String, path: String, attributes: [FileAttributeKey: Any], modified: Date)] = []
        for name in unlisted {
            let path = photoDirectory + "/" + name
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path), attributes[.type] as? FileAttributeType == .typeRegular,
                  let modified = attributes[.modificationDate] as? Date, modified < cutoff else { continue }
            old.append((name, path, attributes, modified))
        }
        guard !old.isEmpty else { return }
        let privateChain = try blobsOfPrivatePhotos()
        // (This device's own photos the family does not count yet, too.)
        let ownNamed = try blobsOfOwnPhotoEvents()
        for (name, path, attributes, modified) in old {
            let state: Int64? = liveOwn.contains(name) ? 1 : ownNamed.contains(name) ? (live.contains(name) ? 1 : 3)
                : privateChain.contains(name) ? 2 : live.contains(name) ? 0 : nil
            if let state {
                try log.database.run("INSERT OR IGNORE INTO ph_cache(blob, size, last_used, unpublished) VALUES(?1, ?2, ?3, ?4)",
                                     [.text(name), .integer((attributes[.size] as? NSNumber)?.int64Value ?? 0),
                                      .integer(Int64(modified.timeIntervalSince1970 * 1000)), .integer(state)])
            } else {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
    }

    /// The blobs of the photos still live in this device's private chain
    /// (its history from before it joined the family, in the family its key
    /// derives), when it has joined one.
    func blobsOfPrivatePhotos() throws -> Set<String> {
        let mine = FamilyID.owned(by: deviceID)
        guard mine != family else { return [] }
        let head = try log.head(of: deviceID, in: mine).seq
        guard head > 0 else { return [] }
        var live: [UUID: String] = [:]
        for env in try log.chain(of: deviceID, in: mine, seqs: 1...head) {
            guard case .body(let body) = try openBody(env), let p = try? PhotoEvent(body) else { continue }
            switch p.kind {
            case .put: live[p.photo] = p.fields["blob"]?.stringValue
            case .delete: live[p.photo] = nil
            }
        }
        return Set(live.values)
    }

    /// The blobs this device's own photo events in its family name (a
    /// `photo.put` its own chain has not deleted since), read from its
    /// whole chain (through the chain's index, one event at a time). What
    /// this device added is its own whatever the family makes of it (a
    /// join waiting for its invitation or refused, a change past its
    /// removal): the blob may be that photo's only copy (a review: the
    /// orphan sweep took the stores' word, and removed it). Read only when
    /// a sweep finds blobs no counted photo names.
    func blobsOfOwnPhotoEvents() throws -> Set<String> {
        var named: [UUID: String] = [:]
        try log.forEachEvent(order: .chain, in: family, author: deviceID) { stored in
            guard let env = try? SyncEnvelope(decoding: stored.bytes, storedID: stored.id),
                  case .body(let body) = try openBody(env), let p = try? PhotoEvent(body) else { return }
            switch p.kind {
            case .put: named[p.photo] = p.fields["blob"]?.stringValue
            case .delete: named[p.photo] = nil
            }
        }
        return Set(named.values)
    }

    /// How long an unpublished blob no photo event names is kept: one left
    /// by a `photo add` killed between its blob and its append. A `photo
    /// add` names its blob within seconds; one that stalls longer puts its
    /// blob back after its append (``keepCached(_:named:)``).
    static let orphanBlobAge: TimeInterval = 3600

    /// The photo's original bytes: from the cache, else fetched from the peer.
    /// - Throws: ``CLIError`` with exit 75 when the bytes have not arrived yet.
    func photoBytes(_ p: PhotoState, peer: (any Peer)?) throws -> [UInt8] {
        try photoCacheTable()
        let cached = photoDirectory + "/" + p.blob
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: cached, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CLIError(.cantCreate, "\(cached) is a folder, where the photo cache keeps photo \(p.id.lowercasedText)'s copy",
                           hint: "Remove it (famctl never puts a folder there) and run the command again.")
        }
        if let blob = try? FileIO.readFile(cached) {
            if let plain = open(blob, p) {
                try touch(p.blob)
                return plain
            }
            // A damaged copy: drop it (if it was published, the peer has the original) and refetch.
            if try isUnpublished(p.blob) {
                throw CLIError.data("the only copy of photo \(p.id.lowercasedText) is damaged (hash mismatch): it was never uploaded, so no other device holds it",
                                    hint: "Its bytes cannot be recovered from famctl. If you still have the image, add it again "
                                        + (p.record.map { "('famctl photo add \($0.lowercasedText) FILE')" } ?? "('famctl photo add RECORD_ID FILE')")
                                        + " and delete this one ('famctl photo delete \(p.id.lowercasedText)'). The record is unaffected.")
            }
            try? FileManager.default.removeItem(atPath: cached)
        }
        guard let peer else {
            throw CLIError(.tempFail, "photo \(p.id.lowercasedText) has not arrived on this device yet", hint: "Run 'famctl sync'; the photo's record is unaffected.")
        }
        let blob: [UInt8]
        do throws(PeerError) { blob = try peer.get(Self.blobPath(p.blob)).bytes } catch {
            if case .notFound = error {
                throw CLIError(.tempFail, "photo \(p.id.lowercasedText) has not arrived yet (\(error))",
                               hint: "Its bytes are uploaded by the device that added it when it syncs; try again later.")
            }
            // There, but not to be read as it stands (a folder or a special
            // file in its place, no permission, over the size limit).
            if case .refused(let why) = error {
                throw CLIError(.tempFail, "the copy of photo \(p.id.lowercasedText) on the peer cannot be read: \(why)",
                               hint: "If it stays so, remove \(Self.blobPath(p.blob)) from the family's shared folder or server: "
                                   + "the next sync of a device that holds a good copy uploads it again. The record is unaffected.")
            }
            // A login refused, a certificate not trusted, a redirect: waiting
            // will not mend them; said as `sync` says them (exit 65, 73).
            if !error.isTransient, !error.isOffline, let hint = SyncCommand.hint(for: error) {
                let failed = SyncCommand.failure(error, at: peer.label, probing: false)
                throw CLIError(failed.code, "photo \(p.id.lowercasedText) could not be fetched: \(failed.message)",
                               hint: hint + " The photo's record is unaffected.")
            }
            throw CLIError(.tempFail, "photo \(p.id.lowercasedText) could not be fetched from the shared folder or server (\(error))",
                           hint: "The server did not answer in time, cut the answer short, or failed; try again later. The photo's record is unaffected.")
        }
        guard let plain = open(blob, p) else {
            throw CLIError(.tempFail, "the copy of photo \(p.id.lowercasedText) on the peer is incomplete or damaged (hash mismatch); rejected",
                           hint: "If it was still arriving, try again later. If it stays damaged, remove \(Self.blobPath(p.blob)) from the family's shared folder "
                               + "or server: the next sync of a device that holds a good copy uploads it again. The record is unaffected.")
        }
        // One larger than the whole cache is not kept: keeping it would
        // evict every other photo, then it too.
        guard blob.count <= photoCacheBytes else { return plain }
        try makePhotoDirectory()
        try FileIO.writeAtomically(blob, to: cached, mode: 0o600)
        try log.database.run("INSERT OR REPLACE INTO ph_cache(blob, size, last_used, unpublished) VALUES(?1, ?2, ?3, 0)",
                             [.text(p.blob), .integer(Int64(blob.count)), .integer(Int64(Date().timeIntervalSince1970 * 1000))])
        try evictPhotos()
        return plain
    }

    /// Checks a blob against its name and the plaintext against its hash.
    func open(_ blob: [UInt8], _ p: PhotoState) -> [UInt8]? {
        guard Hex.encode(Sodium.blake2b256(blob)) == p.blob,
              let plain = PhotoBlob.open(blob, id: FamilyID(uuid: p.id).bytes, key: SecretBytes(p.key)),
              Sodium.blake2b256(plain) == p.hash else { return nil }
        return plain
    }

    func isUnpublished(_ blob: String) throws -> Bool {
        // 1: to be uploaded; 2: a photo of this device's private chain, kept here only.
        try log.database.statement("SELECT unpublished FROM ph_cache WHERE blob = ?1").first([.text(blob)]) { $0.int(0) != 0 } ?? false
    }

    func touch(_ blob: String) throws {
        try log.database.run("UPDATE ph_cache SET last_used = ?2 WHERE blob = ?1", [.text(blob), .integer(Int64(Date().timeIntervalSince1970 * 1000))])
    }

    /// Uploads this device's unpublished photos (create-only; already there is fine).
    ///
    /// - Parameters:
    ///   - listed: what a full listing of the peer showed this round, if it
    ///     made one. A live photo's blob it does not show (someone deleted
    ///     it from the folder or the server) is uploaded again from this
    ///     device's cache, whoever added the photo: blobs are named by their
    ///     hash, and the copy is checked against it first.
    ///   - tags: the tags this round's listing showed. A live photo's blob
    ///     whose tag changed since this device first saw it listed (`ph_seen`,
    ///     kept without reading it) is read back once; when it no longer
    ///     matches its name (a byte flipped, cut short) and this device's
    ///     cached copy does, that copy replaces it.
    /// - Returns: blobs uploaded, new and repaired; and the photos (ids)
    ///   whose only copy, this device's unpublished one, no longer matches
    ///   its hash: not uploaded (the others could not show it either), left
    ///   unpublished, for the round to report.
    func publishPhotos(to peer: any Peer, listed: Set<String>? = nil, tags: [String: String] = [:]) throws -> (uploaded: Int, damagedOnlyCopies: [String], unreadableOnPeer: [String]) {
        try photoCacheTable()
        // Only blobs a photo event names go out. One that none names was
        // left by a `photo add` killed between its blob and its append (or
        // another process's append has not committed yet): it is not
        // uploaded, and leaves the cache once it is an hour old. A deleted
        // photo's blob is not uploaded either (nobody can show it): it is
        // erased, with every other deleted photo's (``erase(_:from:)``).
        var live = Set<String>(), deleted = Set<String>(), deletedOwn = Set<String>(), liveOwn = Set<String>()
        var photoOf: [String: String] = [:]
        for p in try projector.photos(includeDeleted: true) {
            if p.deleted {
                deleted.insert(p.blob)
                if p.creator == deviceID { deletedOwn.insert(p.blob) }
            } else {
                live.insert(p.blob)
                if p.creator == deviceID { liveOwn.insert(p.blob) }
                photoOf[p.blob] = p.id.lowercasedText
            }
        }
        // This device's own photos the family did not count (marked 3),
        // counted now (its invitation arrived): they go out like any.
        var waiting: [String] = []
        try log.database.statement("SELECT blob FROM ph_cache WHERE unpublished = 3").forEachRow { waiting.append($0.text(0)) }
        for blob in waiting where live.contains(blob) {
            try log.database.run("UPDATE ph_cache SET unpublished = 1 WHERE blob = ?1 AND unpublished = 3", [.text(blob)])
        }
        try listOrRemoveUnlistedBlobFiles(live: live, liveOwn: liveOwn)
        var pending: [String] = []
        var written: [String: Int64] = [:]   // when each was written (`last_used`)
        try log.database.statement("SELECT blob, last_used FROM ph_cache WHERE unpublished = 1").forEachRow {
            pending.append($0.text(0))
            written[$0.text(0)] = $0.int(1)
        }
        let cutoff = Int64((Date().timeIntervalSince1970 - Self.orphanBlobAge) * 1000)
        let orphans = pending.filter { !live.contains($0) && !deleted.contains($0) && written[$0, default: .max] < cutoff }
        if !orphans.isEmpty {
            // A photo this device added before it joined the family, and did
            // not carry into it (a viewer's join, or an earlier famctl's), is
            // named only in its private chain: that blob is the photo's only
            // copy. It stays, marked so that later rounds pass it by.
            let kept = try blobsOfPrivatePhotos()
            // One its own chain in the family names, which the family does
            // not count (yet): its join waiting for its invitation, refused,
            // or past its removal. It stays, marked 3: not uploaded, never
            // evicted, passed by as an orphan (its chain is read once), and
            // it goes out once the family counts it.
            let named = try blobsOfOwnPhotoEvents()
            for blob in orphans {
                if named.contains(blob) {
                    try log.database.run("UPDATE ph_cache SET unpublished = 3 WHERE blob = ?1 AND unpublished = 1", [.text(blob)])
                    continue
                }
                if kept.contains(blob) {
                    try log.database.run("UPDATE ph_cache SET unpublished = 2 WHERE blob = ?1 AND unpublished = 1", [.text(blob)])
                    continue
                }
                // The row first, and only while it is still an old orphan's (a
                // stalled photo add may just have put its blob back); then the
                // file. Killed between, the file stays behind, unlisted.
                try log.database.run("DELETE FROM ph_cache WHERE blob = ?1 AND unpublished = 1 AND last_used < ?2", [.text(blob), .integer(cutoff)])
                if log.database.changes > 0 { try? FileManager.default.removeItem(atPath: photoDirectory + "/" + blob) }
            }
        }
        pending.removeAll { !live.contains($0) }
        var damaged: [String] = []
        var uploaded = 0
        var uploadFailure: PeerError?
        // Blobs that cannot be written or read there as they stand (path: reason).
        var unreadable: [String] = []
        for blob in pending {
            guard let bytes = try? FileIO.readFile(photoDirectory + "/" + blob) else { continue }
            guard Hex.encode(Sodium.blake2b256(bytes)) == blob else {
                damaged.append(photoOf[blob] ?? blob)
                continue
            }
            do {
                // Something there already (the upload of a sync killed before
                // it marked the blob, or what is not this blob at all: a folder
                // in its place, a damaged file): read back before the only copy
                // is taken for published, and evictable.
                if try !uploadBlob(blob, bytes, to: peer) {
                    switch try confirmUploaded(blob, bytes, on: peer) {
                    case .there: break
                    case .notYet: continue
                    case .unreadable(let why): unreadable.append(Self.saying(why, of: blob)); continue
                    }
                }
            } catch PeerError.refused(let why) {
                // Something that is not a file in its place (a folder): said
                // as a blob that cannot be read there; the round goes on.
                unreadable.append(Self.saying(why, of: blob))
                continue
            } catch let e as PeerError where !e.isOffline {
                // Refused (a full server): the deleted photos' blobs are
                // still erased and the cache kept in bounds, then it is said.
                uploadFailure = uploadFailure ?? e
                // Failing after its back-off: the others are asked once each,
                // not each after a back-off of its own (a round of minutes).
                if e.isTransient { (peer as? RetryingPeer)?.singleAttempts = true }
                continue
            }
            uploaded += 1
            try log.database.run("UPDATE ph_cache SET unpublished = 0 WHERE blob = ?1", [.text(blob)])
        }
        var repaired = 0
        // A removed device repairs nothing: it cannot read the family's
        // later events, a photo's delete among them, so a photo deleted
        // since would look live to it and its blob be written again.
        let removed = isRemoved
        if let listed, !removed {
            let justPublished = Set(pending)
            for blob in live where !justPublished.contains(blob) && !listed.contains(Self.blobPath(blob)) {
                guard let bytes = try? FileIO.readFile(photoDirectory + "/" + blob),
                      Hex.encode(Sodium.blake2b256(bytes)) == blob else { continue }
                do { guard try uploadBlob(blob, bytes, to: peer) else { continue } } catch PeerError.refused(let why) {
                    unreadable.append(Self.saying(why, of: blob))
                    continue
                } catch let e as PeerError where !e.isOffline {
                    uploadFailure = uploadFailure ?? e
                    if e.isTransient { (peer as? RetryingPeer)?.singleAttempts = true }
                    continue
                }
                // Written by this device: it may erase it, should the photo be deleted.
                try log.database.run("INSERT OR IGNORE INTO ph_repaired(blob) VALUES(?1)", [.text(blob)])
                repaired += 1
            }
        }
        if !removed, !tags.isEmpty {
            let r = try replaceDamagedBlobs(live: live, tags: tags, peer: peer)
            repaired += r.replaced
            unreadable += r.unreadable
        }
        try erase(deleted.subtracting(live), uploadedHere: deletedOwn, live: live, from: peer)
        try evictPhotos()
        if let uploadFailure { throw uploadFailure }
        return (uploaded + repaired, damaged.sorted(), unreadable)
    }

    /// After a move (`settings sync`), writes into the new location the
    /// blobs of live photos it lacks and this device does not hold either,
    /// read from the old location: a photo no device still held in its
    /// cache would otherwise stay there alone, and be lost with it (a
    /// review: the events were carried, the photos not). Those this device
    /// holds went out already (``publishPhotos(to:listed:tags:)``'s
    /// repair). Once all are there (or found at neither), the old location
    /// is forgotten; otherwise the next round tries again.
    /// - Returns: how many it wrote, and a warning while some are left.
    func carryPhotosIfAsked(to peer: any Peer, listed: Set<String>?) throws -> (carried: Int, warning: String?) {
        guard let text = try state.get(.carryPhotosFrom), let old = Location(noteText: text), let listed, !isRemoved else { return (0, nil) }
        let missing = try projector.photos().filter { !listed.contains(Self.blobPath($0.blob)) && !FileIO.isRegularFile(photoDirectory + "/" + $0.blob) }
        var carried = 0, left = 0
        var why = ""
        /// What is said while `n` are left at the old location.
        func stillThere(_ n: Int, _ what: String) -> String {
            "famctl: warning: \(n) photo(s) the new location lacks are to be read from the old one, \(old.place), \(what); the next sync tries again: keep the old location until then."
        }
        if !missing.isEmpty {
            let from: RetryingPeer
            do { from = try self.peer(probe: false, at: old) } catch {
                return (0, stillThere(missing.count, "which cannot be used (\((error as? CLIError)?.message ?? "\(error)"))"))
            }
            from.singleAttempts = true
            // What the old location holds: a photo found at neither is not
            // asked for; one gone (unmounted, emptied) is not taken for that.
            let there: Set<String>?
            do { there = try from.namesOnce(in: "blobs").map { Set($0) } } catch {
                return (0, stillThere(missing.count, "which cannot be listed (\(error.description))"))
            }
            if let there, there.isEmpty {
                // No blob there: gone (unmounted, emptied), unless this
                // device's own folder is still there (it published there
                // before it moved): then the photos are at neither.
                let own = (try? from.namesOnce(in: deviceID.hex)) ?? nil
                if own?.isEmpty ?? true { return (0, stillThere(missing.count, "which holds none now (not mounted, or emptied?)")) }
            }
            var tried = 0
            for p in missing {
                tried += 1
                if let there, !there.contains(p.blob + ".blob") { continue }   // at neither
                let bytes: [UInt8]
                do throws(PeerError) {
                    bytes = try from.get(Self.blobPath(p.blob)).bytes
                } catch .notFound {
                    // At neither: nothing to carry (a device holding it writes it).
                    continue
                } catch {
                    left += 1
                    why = error.description
                    // Out of reach: the rest are not tried (nor counted as at neither).
                    if error.isOffline { left += missing.count - tried; break }
                    continue
                }
                // Only the photo's own bytes go (its name is their hash).
                guard Hex.encode(Sodium.blake2b256(bytes)) == p.blob else { left += 1; why = "damaged there"; continue }
                // The new location refusing the write is its failure, not the old one's (a review).
                if try uploadBlob(p.blob, bytes, to: peer) {
                    // Written by this device: it erases it should the photo be deleted.
                    try log.database.run("INSERT OR IGNORE INTO ph_repaired(blob) VALUES(?1)", [.text(p.blob)])
                }
                carried += 1
            }
        }
        if left == 0 { try state.remove(.carryPhotosFrom); return (carried, nil) }
        return (carried, stillThere(left, "which could not be read (\(why))"))
    }

    /// Writes `blob` into the peer's blob area unless it is there already,
    /// and remembers the tag it was written with (`ph_seen`): should it be
    /// damaged there before this device's next listing, that listing shows
    /// another tag, and this device reads it back and replaces it
    /// (``replaceDamagedBlobs(live:tags:peer:)``), instead of taking the
    /// damaged one for the blob as first seen.
    /// - Returns: whether this call wrote it.
    @discardableResult
    private func uploadBlob(_ blob: String, _ bytes: [UInt8], to peer: any Peer) throws -> Bool {
        let tag: String
        do throws(PeerError) { tag = try peer.replace(Self.blobPath(blob), bytes, expected: nil) } catch {
            switch error {
            case .alreadyExists, .conflict: return false
            default: throw error
            }
        }
        if !tag.isEmpty { try rememberSeen(blob, tag) }
        return true
    }

    /// What ``confirmUploaded(_:_:on:)`` found at a blob's place.
    enum BlobThere {
        /// This blob, whole (there already, or written over a damaged copy now).
        case there
        /// Not to be taken as there this round (gone meanwhile, the server
        /// failing): left unpublished, for the next round.
        case notYet
        /// What is there cannot be read as a file, nor written over (a folder).
        case unreadable(String)
    }

    /// Reads back what stands in the place of this device's own blob when
    /// its upload found something there: this blob (a killed round's
    /// upload), kept; a damaged copy, written over with `bytes`; or what
    /// is no file (a folder), said. Until it is there, the blob stays
    /// unpublished: never evicted, uploaded again next round.
    private func confirmUploaded(_ blob: String, _ bytes: [UInt8], on peer: any Peer) throws -> BlobThere {
        let there: (bytes: [UInt8], tag: String)
        do throws(PeerError) { there = try peer.getOnce(Self.blobPath(blob)) } catch {
            if case .refused(let why) = error { return .unreadable(why) }
            if error.isOffline { throw error }
            return .notYet
        }
        if Hex.encode(Sodium.blake2b256(there.bytes)) == blob {
            if !there.tag.isEmpty { try rememberSeen(blob, there.tag) }
            return .there
        }
        let tag: String
        do throws(PeerError) { tag = try peer.replace(Self.blobPath(blob), bytes, expected: there.tag) } catch {
            if case .refused(let why) = error { return .unreadable(why) }
            if error.isOffline { throw error }
            return .notYet
        }
        if !tag.isEmpty { try rememberSeen(blob, tag) }
        return .there
    }

    private func rememberSeen(_ blob: String, _ tag: String) throws {
        try log.database.run("INSERT OR REPLACE INTO ph_seen(blob, tag) VALUES(?1, ?2)", [.text(blob), .text(Self.strongTag(tag))])
    }

    /// `why` a blob cannot be read or written on the peer, naming it once
    /// (the peer's reason may name it already).
    static func saying(_ why: String, of blob: String) -> String {
        why.contains(blob) ? why : "\(blobPath(blob)): \(why)"
    }

    /// A tag without its weak mark: Apache gives a file changed within the
    /// last second a weak ETag (`W/"…"`), the same one strong afterwards,
    /// so the tag an upload got and the one the next listing shows compare
    /// equal, and the blob is not read back for nothing.
    static func strongTag(_ tag: String) -> String { tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }

    /// The live blobs whose listed tag changed since this device first saw
    /// them listed, read back once: one that no longer matches its name is
    /// replaced by this device's cached copy when that one does. Returns
    /// how many were replaced. A read or a replacement that fails is left
    /// for a later change of the tag; it never ends the round.
    /// - Returns: how many were replaced, and the blobs (path: reason) that
    ///   could not be read there as they stand (a folder in their place, no
    ///   permission), which no write replaces.
    private func replaceDamagedBlobs(live: Set<String>, tags: [String: String], peer: any Peer) throws -> (replaced: Int, unreadable: [String]) {
        var seen: [String: String] = [:]
        try log.database.statement("SELECT blob, tag FROM ph_seen").forEachRow { seen[$0.text(0)] = $0.text(1) }
        var replaced = 0
        var unreadable: [String] = []
        for blob in live.sorted() {
            guard let tag = tags[Self.blobPath(blob)].map(Self.strongTag), !tag.isEmpty, seen[blob] != tag else { continue }
            // First seen: kept as it is, unread (a device reads no photo it was not asked for).
            guard seen[blob] != nil else { try rememberSeen(blob, tag); continue }
            guard let cached = try? FileIO.readFile(photoDirectory + "/" + blob), Hex.encode(Sodium.blake2b256(cached)) == blob else { continue }
            let there: (bytes: [UInt8], tag: String)
            do throws(PeerError) { there = try peer.getOnce(Self.blobPath(blob)) } catch {
                // A stalled server: the others would each wait out the timeout too.
                if error.isOffline { break }
                if case .refused(let why) = error { unreadable.append(Self.saying(why, of: blob)) }
                continue
            }
            guard Hex.encode(Sodium.blake2b256(there.bytes)) != blob else { try rememberSeen(blob, tag); continue }
            let newTag: String
            do throws(PeerError) { newTag = try peer.replace(Self.blobPath(blob), cached, expected: there.tag) } catch {
                if error.isOffline { break }
                continue
            }
            try rememberSeen(blob, newTag)
            try log.database.run("INSERT OR IGNORE INTO ph_repaired(blob) VALUES(?1)", [.text(blob)])
            replaced += 1
        }
        return (replaced, unreadable)
    }

    /// Erases the blobs of deleted photos: from the peer's blob area those
    /// this device wrote there (its own photos', and any it uploaded again
    /// from its cache as a repair before the delete reached it:
    /// `ph_repaired`), and from its cache those of other devices' photos.
    /// A device never deletes what another wrote, so the blob of a photo
    /// whose device no longer syncs stays in the blob area.
    ///
    /// The device that added a photo keeps its own cached copy (until the
    /// cache evicts it): a delete can stop counting later — its author's
    /// removal, or a fork, may arrive after it — and the photo then lives
    /// again, its blob uploaded again from that copy like any repair. A
    /// blob live again is forgotten by `ph_erased`, so that a later delete
    /// erases it again.
    ///
    /// Each blob once (`ph_erased`; "not found" counts as done), with one
    /// request (`deleteOnce`). Best effort: a peer that refuses or fails
    /// the deletion is asked again at the next round, and this round goes on.
    ///
    /// - Parameter uploadedHere: the blobs of deleted photos this device added.
    func erase(_ blobs: Set<String>, uploadedHere: Set<String>, live: Set<String>, from peer: any Peer) throws {
        var done = Set<String>(), repairedHere = Set<String>()
        try log.database.statement("SELECT blob FROM ph_erased").forEachRow { done.insert($0.text(0)) }
        for blob in done.intersection(live) {
            try log.database.run("DELETE FROM ph_erased WHERE blob = ?1", [.text(blob)])
            done.remove(blob)
        }
        guard !blobs.subtracting(done).isEmpty else { return }
        try log.database.statement("SELECT blob FROM ph_repaired").forEachRow { repairedHere.insert($0.text(0)) }
        for blob in blobs.subtracting(done).sorted() {
            if uploadedHere.contains(blob) {
                // Kept, but evictable like any published copy (one added and
                // deleted before its first upload would otherwise stay for good).
                try log.database.run("UPDATE ph_cache SET unpublished = 0 WHERE blob = ?1 AND unpublished = 1", [.text(blob)])
            } else {
                try log.database.run("DELETE FROM ph_cache WHERE blob = ?1", [.text(blob)])
                try? FileManager.default.removeItem(atPath: photoDirectory + "/" + blob)
            }
            if uploadedHere.contains(blob) || repairedHere.contains(blob) {
                do throws(PeerError) {
                    try peer.deleteOnce(Self.blobPath(blob))
                } catch {
                    guard error == .notFound else { continue }   // refused or failing: asked again next round
                }
            }
            try log.database.run("INSERT OR IGNORE INTO ph_erased(blob) VALUES(?1)", [.text(blob)])
        }
    }

    /// The bytes the photo cache holds.
    private func photoCacheTotal() throws -> Int {
        try photoCacheTable()
        return try log.database.statement("SELECT coalesce(sum(size), 0) FROM ph_cache").first { Int($0.int(0)) } ?? 0
    }

    /// How many more bytes the photo cache takes before its limit.
    func photoCacheRoom() throws -> Int { max(0, photoCacheBytes - (try photoCacheTotal())) }

    /// Evicts least-recently-used published blobs until the cache fits its limit.
    func evictPhotos() throws {
        var total = try photoCacheTotal()
        guard total > photoCacheBytes else { return }
        var victims: [(String, Int)] = []
        try log.database.statement("SELECT blob, size FROM ph_cache WHERE unpublished = 0 ORDER BY last_used").forEachRow { victims.append(($0.text(0), Int($0.int(1)))) }
        for (blob, size) in victims where total > photoCacheBytes {
            try? FileManager.default.removeItem(atPath: photoDirectory + "/" + blob)
            try log.database.run("DELETE FROM ph_cache WHERE blob = ?1", [.text(blob)])
            total -= size
        }
    }
}

extension Home {
    /// Makes the photo cache's folder if missing; one it cannot make (a
    /// file in its place) is said so, with what to do.
    func makePhotoDirectory() throws {
        do {
            try FileIO.createDirectories(atPath: photoDirectory, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CLIError(.cantCreate, "cannot make the photo cache's folder: \(FileIO.reason(error, creating: photoDirectory)); nothing was written",
                           hint: "Move what is at \(photoDirectory) away; famctl makes the folder again.")
        }
    }
}

/// Photos of a record its photos list does not name: two devices adding a
/// photo at once each wrote a list, and one list won.
extension Home {
    /// Each live record with live photos its list does not name (ids in lowercase).
    func unlistedPhotos() -> [UUID: Set<String>] {
        guard let photos = try? projector.photos() else { return [:] }
        var out: [UUID: Set<String>] = [:]
        for (key, its) in Dictionary(grouping: photos, by: \.record) {
            guard let record = key, let r = try? projector.record(record), !r.deleted else { continue }
            let missing = Self.photosNotListed(by: r, id: record, among: its)
            if !missing.isEmpty { out[record] = missing }
        }
        return out
    }

    /// The live photos of record `id` (`r`) among `photos` that its photos
    /// list does not name (ids in lowercase): what `record show` and `sync`
    /// say is left out of it.
    static func photosNotListed(by r: RecordState, id: UUID, among photos: [PhotoState]) -> Set<String> {
        let listed = Set(photoList(r).compactMap { $0.stringValue?.lowercased() })
        return Set(photos.filter { !$0.deleted && $0.record == id }.map(\.id.lowercasedText)).subtracting(listed)
    }

    /// What a sync says of the photos its round left out of their records'
    /// lists (those not left out before it).
    func unlistedPhotoWarnings(before: [UUID: Set<String>]) -> [String] {
        unlistedPhotos().sorted { $0.key.uuidString < $1.key.uuidString }.compactMap { record, missing in
            let new = missing.subtracting(before[record] ?? [])
            guard !new.isEmpty, let r = try? projector.record(record) else { return nil }
            let listed = Self.photoList(r).compactMap(\.stringValue)
            let all = listed + missing.sorted().filter { id in !listed.contains { $0.lowercased() == id } }
            let one = new.count == 1
            // Neutral: a list written on purpose without it ('record update
            // … photos=' on another device) looks the same (a review).
            return "famctl: warning: photo\(one ? "" : "s") \(new.sorted().joined(separator: ", ")) of record \(record.lowercasedText) \(one ? "is" : "are") no longer in its photos list "
                + "(another device wrote the list without \(one ? "it" : "them"): by 'record update … photos=', adding a photo at the same time, where its list won, or adding one on an older famctl that had not applied this device's change ('famctl status' names such devices); the photo\(one ? " is" : "s are") kept): "
                + "if that was not meant, " + RecordShowCommand.putBack(record, store: r.store, all: all, one: one) + "; 'famctl photo delete ID' deletes a photo for good."
        }
    }
}
