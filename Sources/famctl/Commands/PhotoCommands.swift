import Envelope
import EventLog
import Foundation
import Projections
import Replicator

/// `famctl photo add RECORD_ID FILE`
enum PhotoAddCommand: Command {
    static let spec = CommandSpec(
        path: ["photo", "add"],
        abstract: "Attach a photo (JPEG, PNG, HEIC, WebP) to a record and print its id.",
        discussion: """
            The photo is encrypted with a key of its own and kept on this device until the
            next sync uploads it, under the hash of its encrypted bytes, to the family's
            blob area. Photos over the size limit (25 MB unless 'settings photos' says
            otherwise) are refused before anything is written.
            """,
        positionals: [PositionalSpec(name: "RECORD_ID", help: "The record."), PositionalSpec(name: "FILE", help: "The image file.")])

    static func run(_ inv: Invocation) throws {
        try RecordInput.checkRecordText(inv.positionals[0])
        let file = try Home.absolute(given: inv.positionals[1], as: "FILE")
        let home = try Home.open(Home.location(inv))
        // A device that may not write (a viewer, a removed one) is told so
        // first, not of the file's size or type, nor of room in a list it
        // cannot change (checked again with the write).
        try home.checkCanWrite(quietly: true)
        let id = try RecordInput.record(inv.positionals[0], home: home)
        guard let record = try home.projector.record(id), !record.deleted else {
            throw home.notShownYet("record \(id.lowercasedText)") ?? CLIError(.noInput, "no live record \(id.lowercasedText)")
        }
        // Through a link, as the read below goes; a folder or a device is
        // said for what it is, whatever size it has.
        var st = stat()
        guard stat(file, &st) == 0 else {
            let failure = errno
            // A link whose target is not there: said so, with the target (a review).
            if failure == ENOENT || failure == ELOOP, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: file) {
                throw CLIError(.noInput, "cannot read \(file): it is a symbolic link to \(target), which " + (failure == ELOOP ? "leads back to itself (a loop of links)" : "is not there"))
            }
            throw CLIError(.noInput, "cannot read \(file): " + (failure == ENOENT ? "no such file" : String(cString: strerror(failure))))
        }
        if st.st_mode & S_IFMT != S_IFREG {
            throw CLIError(.noInput, "cannot read \(file): \(file) is \(FileIO.kind(of: st.st_mode)), not a file")
        }
        let size = Int(st.st_size)
        if size > home.photoMaxBytes {
            throw CLIError.data("\(file) is \(size) bytes, over the \(home.photoMaxBytes)-byte limit; nothing was written",
                                hint: Home.overLimitHint(size))
        }
        let bytes: [UInt8]
        do { bytes = try FileIO.readFile(file, limit: home.photoMaxBytes) } catch { throw CLIError(.noInput, "cannot read \(file): \(error.reason)") }
        let photo = try home.addPhoto(to: record, bytes: bytes, file: file)
        if inv.json { Console.json(["photo": photo.lowercasedText, "record": id.lowercasedText]) } else { Console.out(photo.lowercasedText) }
    }
}

/// `famctl photo get PHOTO_ID --out FILE`
enum PhotoGetCommand: Command {
    static let spec = CommandSpec(
        path: ["photo", "get"],
        abstract: "Write a photo's original bytes to a file, fetching them from the family's peer if needed.",
        discussion: "Exits 75 when the bytes have not arrived yet (the record is unaffected); damaged copies are rejected and fetched again.",
        options: [.value("--out", "FILE", "(required) Where to write the photo.")],
        positionals: [PositionalSpec(name: "PHOTO_ID", help: "The photo's id.")])

    /// The error for no live photo `id` here, `found` what the stores hold
    /// of it: a deleted one said as such.
    static func noPhoto(_ id: UUID, found: PhotoState?, in home: Home) -> CLIError {
        guard found?.deleted == true else {
            if let lagging = home.notShownYet("photo \(id.lowercasedText)") { return lagging }
            return CLIError(.noInput, "no photo \(id.lowercasedText)", hint: "'famctl photo list' shows the photos this device knows of; "
                                + (home.isRemoved ? Home.removedReadsNothingNew : "one another device added since this device's last 'famctl sync' comes with the next."))
        }
        return CLIError(.noInput, "photo \(id.lowercasedText) is deleted", hint: "'famctl photo list' shows the photos there are.")
    }

    static func run(_ inv: Invocation) throws {
        guard let id = UUID(text: inv.positionals[0]) else { throw CLIError.data("'\(inv.positionals[0])' is not a photo id", hint: "'famctl photo list' lists the photos with their ids.") }
        let out = try Home.absolute(given: try inv.required("--out"), as: "option --out")
        let home = try Home.open(Home.location(inv))
        let found = try home.projector.photo(id)
        guard let photo = found, !photo.deleted else { throw PhotoGetCommand.noPhoto(id, found: found, in: home) }
        let bytes = try home.photoBytes(photo, peer: try? home.replicator(probe: false).peer)
        // Written to standard output (a pipe): the photo is the output, the report goes to stderr.
        let toStandardOutput = Console.isStandardOutput(out)
        do { try FileIO.writeOut(bytes, to: out, mode: 0o600) } catch {
            // A reader that went away (`--out /dev/stdout | head -c 100`) is
            // no failure, as for any other output.
            if error.code == EPIPE { return }
            let folder = (out as NSString).deletingLastPathComponent
            if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
                throw CLIError(.cantCreate, "cannot write \(out): the folder \(folder) does not exist", hint: "Create it first, or give --out a path in a folder that exists.")
            }
            throw CLIError(.cantCreate, "cannot write \(out): \(error.reason)")
        }
        if inv.json {
            Console.json(["photo": id.lowercasedText, "bytes": bytes.count, "out": out], toStandardError: toStandardOutput)
        } else if toStandardOutput {
            Console.err("famctl: wrote \(bytes.count) bytes (\(photo.mediaType)) to \(out)")
        } else {
            Console.out("wrote \(bytes.count) bytes (\(photo.mediaType)) to \(out)")
        }
    }
}

/// `famctl photo list [--record ID]`
enum PhotoListCommand: Command {
    static let spec = CommandSpec(
        path: ["photo", "list"],
        abstract: "List photos: id, record, type, size, and whether this device holds the bytes.",
        options: [.value("--record", "ID", "Only this record's photos.")])

    static func run(_ inv: Invocation) throws {
        if let text = inv.value("--record") { try RecordInput.checkRecordText(text) }
        let home = try Home.open(Home.location(inv))
        let record = try inv.value("--record").map { try RecordInput.record($0, home: home) }
        try home.photoCacheTable()
        let photos = try home.projector.photos(record: record)
        let rows = photos.map { p -> [String: Any] in
            ["id": p.id.lowercasedText, "record": p.record?.lowercasedText ?? NSNull(), "type": p.mediaType, "size": p.size,
             "here": FileIO.isRegularFile(home.photoDirectory + "/" + p.blob), "author": p.creator.hex]
        }
        // A whole id no record has is unknown, as a part of one is (66), not
        // a record without photos (a review: 0, while a part gave 66).
        if rows.isEmpty, let record, try home.projector.record(record) == nil { throw CLIError.noRecord(record, in: home) }
        if inv.json { Console.json(rows); return }
        // As `record list` says it: on stderr, so that nothing is not taken for a failure.
        if rows.isEmpty { Console.err("famctl: no photos" + (record.map { " of record \($0.lowercasedText)" } ?? "")) }
        for r in rows { Console.out("\(r["id"]!)  record \(r["record"]!)  \(r["type"]!)  \(r["size"]!) bytes  \((r["here"] as! Bool) ? "on this device" : "not fetched yet")") }
    }
}

/// `famctl photo delete PHOTO_ID`
enum PhotoDeleteCommand: Command {
    static let spec = CommandSpec(
        path: ["photo", "delete"],
        abstract: "Delete a photo: a tombstone, and its record's photo list without it.",
        positionals: [PositionalSpec(name: "PHOTO_ID", help: "The photo's id.")])

    static func run(_ inv: Invocation) throws {
        guard let id = UUID(text: inv.positionals[0]) else { throw CLIError.data("'\(inv.positionals[0])' is not a photo id", hint: "'famctl photo list' lists the photos with their ids.") }
        let home = try Home.open(Home.location(inv))
        let found = try home.projector.photo(id)
        guard let photo = found, !photo.deleted else { throw PhotoGetCommand.noPhoto(id, found: found, in: home) }
        let delete = PhotoEvent(kind: .delete, photo: id).body
        // Deleted meanwhile (another `photo delete`, a sync): said, nothing written.
        func stillLive() throws {
            let now = try home.projector.photo(id)
            guard let now, !now.deleted else { throw PhotoGetCommand.noPhoto(id, found: now, in: home) }
        }
        if let rid = photo.record {
            // The record's list as it stands under the write lock, without the photo.
            try home.appendToRecord(rid, check: stillLive) { r in
                guard let r, r.fields["photos"] != nil else { return [delete] }
                let kept = try home.withoutDeletedPhotos(Home.photoList(r)).filter { $0.stringValue?.lowercased() != id.lowercasedText }
                return [delete, try RecordInput.keepingFocus(RecordEvent(kind: .put, record: rid, store: r.store, focus: r.focus, at: nil,
                                                                         fields: ["photos": .array(kept)]).body, of: rid, home: home)]
            }
        } else {
            try home.append([delete]) { try home.checkCanWrite(); try stillLive() }
        }
        if try home.projector.photo(id)?.deleted == false {
            OutdoneWrite.warn("photo \(id.lowercasedText)", stays: "stays", write: "delete", kind: "photo", id: id.lowercasedText, home: home)
        }
        if inv.json { Console.json(["deleted": id.lowercasedText]) } else { Console.out(id.lowercasedText) }
    }
}

/// `famctl verify --photos`
enum VerifyCommand: Command {
    static let spec = CommandSpec(
        path: ["verify"],
        abstract: "Check every cached photo blob against its hashes (exit 3 on a damaged one).",
        options: [.flag("--photos", "(required) Check the photo cache.")])

    static func run(_ inv: Invocation) throws {
        guard inv.flag("--photos") else { throw CLIError.usage("famctl verify: say what to verify: --photos") }
        let home = try Home.open(Home.location(inv))
        var checked = 0, damaged: [String] = [], onlyCopies: [String] = [], folders: [String] = []
        for p in try home.projector.photos(includeDeleted: true) {
            let path = home.photoDirectory + "/" + p.blob
            guard FileManager.default.fileExists(atPath: path) else { continue }
            checked += 1
            if !FileIO.isRegularFile(path) { folders.append(path) }
            // Something in the cached copy's place that cannot be read (a
            // folder, no permission) is as damaged as bytes that do not match.
            guard let blob = try? FileIO.readFile(path), home.open(blob, p) != nil else {
                damaged.append(p.id.lowercasedText)
                if try home.isUnpublished(p.blob) { onlyCopies.append(p.id.lowercasedText) }
                continue
            }
        }
        if inv.json { Console.json(["checked": checked, "damaged": damaged, "onlyCopies": onlyCopies]) } else {
            Console.out("checked \(checked) cached photo(s); damaged: \(damaged.isEmpty ? "none" : damaged.joined(separator: ", "))")
        }
        if !damaged.isEmpty {
            // A copy never uploaded is the only one: nothing can fetch it again.
            var hint = onlyCopies.isEmpty ? "'famctl photo get' fetches a good copy again."
                : (onlyCopies.count == damaged.count ? "" : "'famctl photo get' fetches a good copy of the others again. ")
                    + "Never uploaded, so their only copy: \(onlyCopies.joined(separator: ", ")); delete them ('famctl photo delete ID') and add them again from the original files."
            if !folders.isEmpty { hint += " Remove first what is not a file in the cache's place: \(folders.joined(separator: ", "))." }
            throw CLIError(.integrity, "\(damaged.count) cached photo(s) do not match their hashes", hint: hint)
        }
    }
}

/// `famctl settings photos [--max-mb N] [--cache-mb N] [--prefetch on|off]`
enum SettingsPhotosCommand: Command {
    static let spec = CommandSpec(
        path: ["settings", "photos"],
        abstract: "Show or change the photo settings: size limit, cache size, prefetch during sync.",
        options: [
            .value("--max-mb", "N", "Refuse photos larger than N MB (default 25)."),
            .value("--cache-mb", "N", "Keep at most N MB of fetched photos (default 500; own unpublished photos are never evicted)."),
            .value("--prefetch", "on|off", "Fetch new photos during sync (default off: fetched on 'photo get')."),
        ])

    static func run(_ inv: Invocation) throws {
        let home = try Home.open(Home.location(inv))
        // Every value checked before any is stored: a bad one changes
        // nothing (a review: the ones before it were stored, exit 65).
        var settings: [(DeviceState.Key, String)] = []
        for (opt, key, largest) in [("--max-mb", DeviceState.Key.photoMaxBytes, Home.largestPhotoMaxMB), ("--cache-mb", .photoCacheBytes, 100_000)] {
            if let v = inv.value(opt) {
                // At least a kilobyte: below it no photo fits (and nothing is
                // kept), and a limit that refuses everything is a typo.
                guard let n = DecimalText.parse(v), n >= 0.001, n <= Double(largest) else {
                    // The hint says why the bound that was passed is there.
                    let n = DecimalText.parse(v)
                    let hint = n == nil ? "Give a number, for example \(opt) \(opt == "--max-mb" ? 25 : 500) (a decimal point, no unit)."
                        : n! < 0.001 ? (opt == "--max-mb" ? "Below a kilobyte no photo fits: a limit that refuses every photo is a slip."
                                                          : "Below a kilobyte the cache keeps no fetched photo: give at least 0.001 ('famctl photo get' fetches a photo again when it is wanted).")
                        : opt == "--max-mb" ? "A larger photo's encrypted file would be over the 256 MiB a shared folder or a WebDAV peer takes: it could never be shared." : nil
                    throw CLIError.data("\(opt) '\(v)' is not a number of MB from 0.001 to \(largest); nothing was changed", hint: hint)
                }
                settings.append((key, String(Int(n * 1_048_576))))
            }
        }
        if let p = inv.value("--prefetch") {
            guard p == "on" || p == "off" else {
                throw CLIError.data("--prefetch '\(p)' is neither on nor off; nothing was changed", hint: ValueHint.otherCase(p, among: ["on", "off"], as: "--prefetch ") ?? "Give --prefetch on or --prefetch off.")
            }
            settings.append((.prefetchPhotos, p))
        }
        for (key, value) in settings { try home.state.set(key, value) }
        try home.evictPhotos()
        if inv.json {
            Console.json(["maxBytes": home.photoMaxBytes, "cacheBytes": home.photoCacheBytes, "prefetch": home.prefetchPhotos])
        } else {
            Console.out("photos: max \(home.photoMaxBytes) bytes, cache \(home.photoCacheBytes) bytes, prefetch \(home.prefetchPhotos ? "on" : "off")")
        }
    }
}
