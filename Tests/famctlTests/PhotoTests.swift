import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Replicator
import Testing

/// Photos shared through the shared directory: byte-for-byte on every device,
/// deleted everywhere, damage detected, nothing plain in the blob area, and a
/// cache that honours its limit without losing unpublished photos.
struct PhotoTests {
    /// A JPEG as `photo add` takes it: its start of image, then at once
    /// its start of scan (the image data, which is not judged).
    static func jpeg(_ n: Int, marker: String) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xDA] + Array(marker.utf8) + (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    /// A PNG of `n` bytes of image data: its signature, header, one data
    /// chunk and its end (checksums not filled in: famctl does not read them).
    static func png(_ n: Int, byte: UInt8 = 42) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let length = UInt32(data.count)
            return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + Array(type.utf8) + data + [0, 0, 0, 0]
        }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0])
            + chunk("IDAT", [UInt8](repeating: byte, count: n)) + chunk("IEND", [])
    }

    /// Mum, Dad and Grandma share one folder; Mum has a baby and a solid-food record.
    static func household() throws -> (FamctlRunner, FamctlRunner, FamctlRunner, String, String) {
        let mum = FamctlRunner()
        let dir = mum.root + "/shared"
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", dir)
        let baby = try mum.ok("subject", "add", "baby")
        let record = try mum.ok("record", "add", "--focus", baby, "--store", "solidFood", "foods=carrot")
        let dad = FamctlRunner(), gran = FamctlRunner()
        try dad.ok("accept", try mum.ok("invite"), "--name", "Dad", "--dir", dir)
        try gran.ok("accept", try mum.ok("invite", "--role", "viewer"), "--name", "Gran", "--dir", dir)
        for r in [mum, dad, gran, mum, dad, gran] { try r.ok("sync") }
        return (mum, dad, gran, dir, record)
    }

    /// Writes a JPEG of `size` bytes (after its marker) into `runner`'s
    /// directory, for `photo add`: its path and bytes.
    static func jpegFile(_ runner: FamctlRunner, _ size: Int, marker: String) throws -> (path: String, bytes: [UInt8]) {
        let bytes = jpeg(size, marker: marker)
        let path = runner.root + "/carrots.jpg"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    /// Mum adds a 30 000-byte photo and syncs; Dad syncs and fetches it, so
    /// his cache holds it. Returns the runners, the shared folder, the
    /// photo's id and its bytes.
    static func photoInDadsCache(marker: String) throws -> (FamctlRunner, FamctlRunner, String, String, [UInt8]) {
        let (mum, dad, _, dir, record) = try household()
        let (file, original) = try jpegFile(mum, 30_000, marker: marker)
        let photo = try mum.ok("photo", "add", record, file)
        try mum.ok("sync")
        try dad.ok("sync")
        #expect(try dad.ok("photo", "get", photo, "--out", dad.root + "/got.jpg").contains("wrote"))
        return (mum, dad, dir, photo, original)
    }

    /// Two devices add a photo to one record before either has synced the
    /// other's: the record's list keeps one (one field, the newest write
    /// wins), and `record show` names the other and the command that puts
    /// it back.
    /// The store files name a record's photos but do not hold them: an
    /// export says so, with how to save them, and without photos says nothing.
    @Test func anExportSaysThePhotosAreNotInIt() throws {
        let mum = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        let baby = try mum.ok("subject", "add", "baby")
        let record = try mum.ok("record", "add", "--focus", baby, "--store", "solidFood", "foods=carrot")
        let quiet = try mum.run("export", "stores", mum.root + "/none")
        #expect(quiet.code == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        try mum.ok("photo", "add", record, try Self.jpegFile(mum, 1_000, marker: "export").path)
        let out = try mum.run("export", "stores", mum.root + "/out")
        #expect(out.code == 0 && out.stderr.contains("famctl: note: the store files name the records' photos (photos=…) but do not hold the 1 photo(s) themselves")
                && out.stderr.contains("'famctl photo get ID --out FILE' writes each to a file"), "\(out.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(try mum.ok("export", "stores", mum.root + "/json", "--json").utf8)) as? [String: Any]
        #expect(json?["photosNotExported"] as? Int == 1)
    }

    /// A photos list edited in an export is checked as `record update
    /// photos=` checks one: another record's photo, or one photo twice, is
    /// a bad row (a review: both were imported).
    @Test func anImportedPhotosListIsCheckedAsAnUpdatesIs() throws {
        let mum = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        let baby = try mum.ok("subject", "add", "baby")
        let first = try mum.ok("record", "add", "--focus", baby, "--store", "milestone", "title=first")
        let second = try mum.ok("record", "add", "--focus", baby, "--store", "milestone", "title=second")
        let photo = try mum.ok("photo", "add", first, try Self.jpegFile(mum, 1_000, marker: "import").path)
        let out = mum.root + "/out"
        _ = try mum.run("export", "stores", out)
        let file = out + "/milestone.json"
        let original = try Data(contentsOf: URL(fileURLWithPath: file))
        func importWith(_ edit: (inout [[String: Any]]) -> Void) throws -> FamctlRunner.Result {
            var rows = try #require(try JSONSerialization.jsonObject(with: original) as? [[String: Any]])
            edit(&rows)
            try JSONSerialization.data(withJSONObject: rows).write(to: URL(fileURLWithPath: file))
            return try mum.run("import", "stores", out)
        }
        func fields(_ row: [String: Any]) -> [String: Any] { row["fields"] as? [String: Any] ?? [:] }
        let others = try importWith { rows in
            for i in rows.indices where rows[i]["id"] as? String == second { var f = fields(rows[i]); f["photos"] = [photo]; rows[i]["fields"] = f }
        }
        #expect(others.code == 65 && others.stderr.contains("milestone.photos: photo \(photo) is record \(first)'s"), "\(others.stdout) \(others.stderr)")
        let twice = try importWith { rows in
            for i in rows.indices where rows[i]["id"] as? String == first { var f = fields(rows[i]); f["photos"] = [photo, photo]; f["note"] = "twice"; rows[i]["fields"] = f }
        }
        #expect(twice.code == 65 && twice.stderr.contains("milestone.photos: photo \(photo) is listed twice"), "\(twice.stdout) \(twice.stderr)")
        #expect(!(try mum.ok("record", "show", second)).contains(photo))
    }

    /// A folder of --out that does not exist, a photo deleted already, an
    /// id of none: each said for what it is.
    @Test func photoCommandsSayWhatIsWrong() throws {
        let mum = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        let baby = try mum.ok("subject", "add", "baby")
        let record = try mum.ok("record", "add", "--focus", baby, "--store", "solidFood", "foods=carrot")
        let photo = try mum.ok("photo", "add", record, try Self.jpegFile(mum, 1_000, marker: "said").path)
        let nowhere = try mum.run("photo", "get", photo, "--out", mum.root + "/nodir/x.jpg")
        #expect(nowhere.code == 73 && nowhere.stderr.contains("cannot write \(mum.root)/nodir/x.jpg: the folder \(mum.root)/nodir does not exist"), "\(nowhere.stderr)")
        try mum.ok("photo", "delete", photo)
        for command in [["photo", "delete", photo], ["photo", "get", photo, "--out", mum.root + "/x.jpg"]] {
            let out = try mum.run(command)
            #expect(out.code == 66 && out.stderr.contains("photo \(photo) is deleted"), "\(command): \(out.stderr)")
        }
        let none = try mum.run("photo", "delete", "0f0e0d0c-0b0a-4909-8807-060504030201")
        #expect(none.code == 66 && none.stderr.contains("no photo 0f0e0d0c-0b0a-4909-8807-060504030201"), "\(none.stderr)")
        // One another device added may not have come yet: said (a review over real Syncthing).
        #expect(none.stderr.contains("one another device added since this device's last 'famctl sync' comes with the next"), "\(none.stderr)")
        // A folder given for the file is said to be one, also under a limit
        // smaller than the folder's own size (it was said to be over the limit).
        try mum.ok("settings", "photos", "--max-mb", "0.001")
        for limit in ["0.001", "25"] {
            try mum.ok("settings", "photos", "--max-mb", limit)
            let folder = try mum.run("photo", "add", record, mum.root)
            #expect(folder.code == 66 && folder.stderr.contains("cannot read \(mum.root): \(mum.root) is a directory, not a file"), "\(limit): \(folder.stderr)")
        }
        let missing = try mum.run("photo", "add", record, mum.root + "/none.jpg")
        #expect(missing.code == 66 && missing.stderr.contains("no such file"), "\(missing.stderr)")
    }

    @Test func aPhotoLeftOutOfTheListByAConcurrentAddIsNamed() throws {
        let (mum, dad, _, _, record) = try Self.household()
        let (mine, _) = try Self.jpegFile(mum, 2_000, marker: "MUMS")
        let (his, _) = try Self.jpegFile(dad, 2_000, marker: "DADS")
        let a = try mum.ok("photo", "add", record, mine)
        let b = try dad.ok("photo", "add", record, his)
        var said = ""
        for r in [mum, dad, mum] { said += try r.run("sync").stderr }
        let shown = try mum.run("record", "show", record)
        let kept = shown.stdout.contains("photos=\(a)") ? a : b
        let lost = kept == a ? b : a
        // The sync that left it out says so (a review: only `record show` did).
        #expect(said.contains("warning: photo \(lost) of record \(record) is no longer in its photos list") && said.contains("photos=\(kept),\(lost)' puts it back"), "\(said)")
        #expect(!(try mum.run("sync")).stderr.contains("no longer in its photos list"), "said once")
        #expect(shown.stdout.contains("photos=\(kept)") && !shown.stdout.contains(lost), "\(shown.stdout)")
        #expect(shown.stderr.contains("warning: photo \(lost) of this record is not in its photos list"), "\(shown.stderr)")
        let fix = "record update \(record) photos=\([kept, lost].joined(separator: ","))"
        #expect(shown.stderr.contains(fix), "\(shown.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(try mum.ok("record", "show", record, "--json").utf8)) as! [String: Any]
        #expect(json["photosNotListed"] as? [String] == [lost], "\(json)")
        try mum.ok(fix.split(separator: " ").map(String.init))
        let after = try mum.run("record", "show", record)
        #expect(after.stdout.contains(lost) && !after.stderr.contains("warning"), "\(after.stdout) \(after.stderr)")
    }

    @Test func photoTravelsByteForByteAndIsDeletedEverywhere() throws {
        let (mum, dad, gran, dir, record) = try Self.household()
        let (file, original) = try Self.jpegFile(mum, 50_000, marker: "FIRST-CARROTS-PLAINTEXT-MARKER")
        let photo = try mum.ok("photo", "add", record, file)
        // The round says the photo went out (a review: a parent could not tell whether it was shared yet).
        let shared = try mum.ok("sync")
        #expect(shared.hasPrefix("published 2 event(s) in 1 segment(s), and 1 photo(s)\n"), "\(shared)")
        let json = try JSONSerialization.jsonObject(with: Data(try mum.ok("sync", "--json").utf8)) as? [String: Any]
        #expect(json?["photosUploaded"] as? Int == 0, "uploaded once: \(String(describing: json))")
        for r in [dad, gran, mum] { try r.ok("sync") }
        for r in [dad, gran] {
            let out = r.root + "/got.jpg"
            #expect(try r.ok("photo", "get", photo, "--out", out).contains("wrote 50034 bytes (jpeg)"))
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: out))) == original)
            #expect(try r.ok("record", "show", record).contains("photos=\(photo)"))
        }
        // The blob area holds only ciphertext.
        let everything = try FileManager.default.subpathsOfDirectory(atPath: dir).compactMap { FileManager.default.contents(atPath: dir + "/" + $0) }
        #expect(everything.contains { $0.count > 50_000 }, "the blob is in the shared folder")
        #expect(!everything.contains { $0.range(of: Data("FIRST-CARROTS-PLAINTEXT-MARKER".utf8)) != nil }, "plaintext of the photo in the shared folder")

        try dad.ok("photo", "delete", photo)
        // Dad and Gran erase their caches, but not Mum's blob: a device
        // never deletes what another wrote.
        for r in [dad, gran] { try r.ok("sync") }
        #expect(try FileManager.default.subpathsOfDirectory(atPath: dir).contains { $0.hasSuffix(".blob") })
        try mum.ok("sync")
        for r in [mum, dad, gran] {
            #expect(!(try r.ok("photo", "list").contains(photo)))
            #expect(!(try r.ok("record", "show", record).contains(photo)))
            #expect(try r.run("photo", "get", photo, "--out", r.root + "/x.jpg").code == 66)
        }
        #expect(try mum.ok("digest") == gran.ok("digest"))
        // Its bytes are erased: from the blob area and from the other
        // devices' caches. (Mum's device, which added it, keeps its copy,
        // should the delete stop counting.)
        let blob = try #require(try Home.open(mum.home).projector.photos(includeDeleted: true).first { $0.id.uuidString.lowercased() == photo }?.blob)
        let left = try FileManager.default.subpathsOfDirectory(atPath: dir).filter { $0.hasSuffix(".blob") }
        #expect(left.isEmpty, "\(left)")
        for r in [dad, gran] {
            let home = try Home.open(r.home)
            #expect(!FileManager.default.fileExists(atPath: home.photoDirectory + "/" + blob))
            #expect(try home.log.database.statement("SELECT count(*) FROM ph_cache WHERE blob = ?1").first([.text(blob)]) { $0.int(0) } == 0)
        }
    }

    /// `--out` writes where it is told without replacing what is there
    /// with a file: through a symbolic link (to a new or an existing file),
    /// into a FIFO; a directory is refused.
    @Test func photoGetWritesThroughLinksAndPipes() throws {
        let (mum, dad, _, _, record) = try Self.household()
        let (file, original) = try Self.jpegFile(mum, 5_000, marker: "OUT")
        let photo = try mum.ok("photo", "add", record, file)
        try mum.ok("sync")
        try dad.ok("sync")
        let fm = FileManager.default
        let d = dad.root
        // A link to a file not there yet, and to one that is.
        try fm.createSymbolicLink(atPath: d + "/new.jpg", withDestinationPath: d + "/new-target.jpg")
        try "old".write(toFile: d + "/old-target.jpg", atomically: true, encoding: .utf8)
        try fm.createSymbolicLink(atPath: d + "/old.jpg", withDestinationPath: d + "/old-target.jpg")
        for (link, target) in [("new.jpg", "new-target.jpg"), ("old.jpg", "old-target.jpg")] {
            try dad.ok("photo", "get", photo, "--out", d + "/" + link)
            #expect(try fm.destinationOfSymbolicLink(atPath: d + "/" + link) == d + "/" + target, "the link \(link) was replaced")
            #expect([UInt8](fm.contents(atPath: d + "/" + target) ?? Data()) == original)
        }
        // A FIFO, read by another process.
        #expect(mkfifo(d + "/pipe", 0o600) == 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "timeout 20 cat '\(d)/pipe' > '\(d)/from-pipe'"]
        try reader.run()
        try dad.ok("photo", "get", photo, "--out", d + "/pipe")
        reader.waitUntilExit()
        var st = stat()
        #expect(lstat(d + "/pipe", &st) == 0 && st.st_mode & S_IFMT == S_IFIFO, "the FIFO was replaced by a file")
        #expect([UInt8](fm.contents(atPath: d + "/from-pipe") ?? Data()) == original)
        // Standard output, a pipe to another program: the photo's bytes and
        // nothing else (the report goes to stderr).
        let piped = try Subprocess.run("/bin/sh", ["-c", "\"$0\" photo get \(photo) --out /dev/stdout | cat > '\(d)/from-stdout'", FamctlRunner.binary.path],
                                       env: ["FAMCTL_HOME": dad.home])
        #expect(piped.0 == 0 && piped.1.contains("wrote 5007 bytes (jpeg) to /dev/stdout"), "\(piped.1)")
        #expect([UInt8](fm.contents(atPath: d + "/from-stdout") ?? Data()) == original, "more than the photo went to standard output")
        // A directory.
        try fm.createDirectory(atPath: d + "/dir", withIntermediateDirectories: true)
        let r = try dad.run("photo", "get", photo, "--out", d + "/dir")
        #expect(r.code == 73 && r.stderr.contains("is a directory"), "\(r.stderr)")
    }

    /// A removed device asking for a record or a photo the family wrote
    /// after its removal is told it never arrives, not to sync for it.
    @Test func aRemovedDeviceIsNotToldToWaitForWhatNeverComes() throws {
        let (mum, dad, _, _, record) = try Self.household()
        try mum.ok("member", "remove", "Dad")
        let later = try mum.ok("record", "add", "--focus", try mum.ok("subject", "list"), "--store", "diaper", "wet=true")
        let photo = try mum.ok("photo", "add", record, try Self.jpegFile(mum, 2_000, marker: "LATER").path)
        try mum.ok("sync")
        _ = try dad.run("sync")
        let never = "this device was removed from the family: what the family writes under the key its removal made, or a later one, is sealed under keys it was not given"
        let shown = try dad.run("record", "show", later)
        #expect(shown.code == 66 && shown.stderr.contains(never) && !shown.stderr.contains("arrives with"), "\(shown.stderr)")
        let got = try dad.run("photo", "get", photo, "--out", dad.root + "/p.jpg")
        #expect(got.code == 66 && got.stderr.contains(never) && !got.stderr.contains("comes with the next"), "\(got.stderr)")
        // A member still in the family is told to sync.
        let gone = UUID().uuidString.lowercased()
        #expect(try mum.run("record", "show", gone).stderr.contains("one written elsewhere arrives with 'famctl sync'"))
    }

    /// A viewer's `photo add` is refused, and leaves nothing behind that a
    /// later `sync` would upload: no cached blob, no blob in the shared folder.
    /// It is refused as a viewer's, before its file or the record's list
    /// are looked at (advice to make room or raise a limit is no use to it);
    /// so is its `record add` to a subject it got wrong.
    @Test func aRefusedPhotoLeavesNoBlobToUpload() throws {
        let (mum, _, gran, dir, record) = try Self.household()
        let (file, _) = try Self.jpegFile(gran, 20_000, marker: "GRAN")
        let refused = try gran.run("photo", "add", record, file)
        let asViewer = "this device cannot change the family's records"
        #expect(refused.code == 65 && refused.stderr.contains(asViewer), "\(refused.stderr)")
        let notImage = gran.root + "/notes.txt"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: notImage))
        let text = try gran.run("photo", "add", record, notImage)
        #expect(text.code == 65 && text.stderr.contains(asViewer) && !text.stderr.contains("not a JPEG"), "\(text.stderr)")
        let wrongFocus = try gran.run("record", "add", "--focus", "baby:nope", "--store", "diaper", "wet=true")
        #expect(wrongFocus.code == 65 && wrongFocus.stderr.contains(asViewer), "\(wrongFocus.stderr)")
        let cached = (try? FileManager.default.contentsOfDirectory(atPath: gran.home + "/photos")) ?? []
        #expect(cached.isEmpty, "the refused photo's blob stayed in the cache: \(cached)")
        try gran.ok("sync")
        try mum.ok("sync")
        let blobs = (try? FileManager.default.subpathsOfDirectory(atPath: dir))?.filter { $0.hasSuffix(".blob") } ?? []
        #expect(blobs.isEmpty, "a blob that no event names was uploaded: \(blobs)")
        #expect(try mum.ok("photo", "list").isEmpty)
    }

    /// A photo whose only copy, its adder's unpublished one, was damaged
    /// before the first sync is not uploaded (nobody could show it): the
    /// sync warns, naming the photo and what to do, and the others see it
    /// as not arrived rather than receive garbage.
    /// A folder where a photo's blob should be, in the shared folder or in
    /// this device's cache: `photo get` says the copy cannot be read and
    /// what to remove, and `verify --photos` counts a cached one as damaged.
    @Test func aFolderInABlobsPlaceIsSaidForWhatItIs() throws {
        let (mum, dad, _, dir, record) = try Self.household()
        let (file, _) = try Self.jpegFile(mum, 5_000, marker: "FOLDER")
        let photo = try mum.ok("photo", "add", record, file)
        try mum.ok("sync")
        try mum.ok("sync")   // the blob seen listed, as it was uploaded
        let fm = FileManager.default
        let shared = try #require(try fm.subpathsOfDirectory(atPath: dir).first { $0.hasSuffix(".blob") })
        try fm.removeItem(atPath: dir + "/" + shared)
        try fm.createDirectory(atPath: dir + "/" + shared, withIntermediateDirectories: true)
        // Mum, who holds a good copy, cannot write it over a folder: she says so.
        let uploader = try mum.run("sync")
        #expect(uploader.code == 0 && uploader.stderr.contains("cannot write it there: remove what is in its place"), "\(uploader.stderr)")
        try dad.ok("sync")
        let got = try dad.run("photo", "get", photo, "--out", dad.root + "/got.jpg")
        #expect(got.code == 75 && got.stderr.contains("cannot be read") && got.stderr.contains("remove blobs/"), "\(got.stderr)")
        let cached = try #require(try fm.contentsOfDirectory(atPath: mum.home + "/photos").first { $0.count == 64 })
        try fm.removeItem(atPath: mum.home + "/photos/" + cached)
        try fm.createDirectory(atPath: mum.home + "/photos/" + cached, withIntermediateDirectories: true)
        let verified = try mum.run("verify", "--photos")
        #expect(verified.code == 3 && verified.stdout.contains("damaged: \(photo)") && verified.stderr.contains("Remove first what is not a file in the cache's place: " + mum.home + "/photos/" + cached),
                "\(verified.stdout) \(verified.stderr)")
        #expect(try mum.ok("photo", "list").contains("not fetched yet"), "a folder counted as the cached copy")
        let blocked = try mum.run("photo", "get", photo, "--out", mum.root + "/got.jpg")
        #expect(blocked.code == 73 && blocked.stderr.contains("is a folder, where the photo cache keeps photo \(photo)'s copy"), "\(blocked.stderr)")
    }

    /// A folder in the shared folder where a new photo's blob goes, before
    /// its first upload: the round says so, and the only copy stays
    /// unpublished (never evicted: it was taken for uploaded, and a small
    /// cache removed it for good); once the folder is gone, it goes up.
    @Test func aFolderWhereANewBlobGoesKeepsTheOnlyCopy() throws {
        let (mum, dad, _, dir, record) = try Self.household()
        let (file, original) = try Self.jpegFile(mum, 4_000, marker: "NEW-BLOB")
        let photo = try mum.ok("photo", "add", record, file)
        let fm = FileManager.default
        let blob = try #require(try fm.contentsOfDirectory(atPath: mum.home + "/photos").first { $0.count == 64 })
        // The family's folder, named by its id.
        let family = try #require(try fm.contentsOfDirectory(atPath: dir).first { UUID(uuidString: $0) != nil })
        let place = dir + "/" + family + "/blobs/" + blob + ".blob"
        try fm.createDirectory(atPath: place, withIntermediateDirectories: true)
        let synced = try mum.run("sync")
        #expect(synced.code == 0 && synced.stderr.contains("is a directory, not a file") && synced.stderr.contains("cannot write it there"), "\(synced.stderr)")
        #expect(try Home.open(mum.home).isUnpublished(blob), "taken for uploaded")
        try mum.ok("settings", "photos", "--cache-mb", "0.001")
        #expect(fm.fileExists(atPath: mum.home + "/photos/" + blob), "the only copy was evicted")
        try fm.removeItem(atPath: place)
        let mended = try mum.run("sync")
        #expect(mended.code == 0 && !mended.stderr.contains("warning"), "\(mended.stderr)")
        try dad.ok("sync")
        try dad.ok("photo", "get", photo, "--out", dad.root + "/got.jpg")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dad.root + "/got.jpg")) == Data(original))
    }

    /// Prefetch counts a photo as the cache keeps it, sealed (the photo and
    /// its header and tag): two photos whose bytes fit under the limit but
    /// whose sealed files do not are not both fetched, or each would evict
    /// the other at every round.
    @Test func prefetchCountsTheSealedFilesSize() throws {
        let (mum, dad, _, _, record) = try Self.household()
        for (i, size) in [4_996, 5_422].enumerated() {
            let f = mum.root + "/p\(i).jpg"
            try Data(Self.jpeg(size, marker: "")).write(to: URL(fileURLWithPath: f))
            try mum.ok("photo", "add", record, f)
        }
        try mum.ok("sync")
        try dad.ok("settings", "photos", "--cache-mb", "0.01", "--prefetch", "on")   // 10 485 bytes
        var rounds: [[String]] = []
        for _ in 0..<3 {
            try dad.ok("sync")
            rounds.append(try FileManager.default.contentsOfDirectory(atPath: dad.home + "/photos").sorted())
        }
        #expect(rounds[0].count == 1 && rounds.allSatisfy { $0 == rounds[0] }, "the cache changed from round to round: \(rounds)")
    }

    /// A photo that is nowhere to be fetched (its blob lost from the
    /// shared folder) takes no room in the prefetch's count: the photos
    /// after it that fit are fetched, not left out at every round.
    @Test func aPhotoThatCannotBeFetchedTakesNoRoomInThePrefetch() throws {
        let (mum, dad, _, dir, record) = try Self.household()
        var blobs: [String] = []
        for (i, size) in [9_000, 2_000].enumerated() {
            let f = mum.root + "/p\(i).jpg"
            try Data(Self.jpeg(size, marker: "room\(i)")).write(to: URL(fileURLWithPath: f))
            try mum.ok("photo", "add", record, f)   // ids in the order added
            let cached = try FileManager.default.contentsOfDirectory(atPath: mum.home + "/photos").filter { $0.count == 64 }
            blobs.append(try #require(cached.first { !blobs.contains($0) }))
        }
        try mum.ok("sync")
        let family = try #require(try FileManager.default.contentsOfDirectory(atPath: dir).first)
        try FileManager.default.removeItem(atPath: dir + "/" + family + "/blobs/" + blobs[0] + ".blob")   // the first one, lost
        try dad.ok("settings", "photos", "--cache-mb", "0.01", "--prefetch", "on")   // 10 485 bytes: room for one of the two
        for _ in 0..<2 { try dad.ok("sync") }
        let cache = (try? FileManager.default.contentsOfDirectory(atPath: dad.home + "/photos")) ?? []   // no folder: nothing fetched
        #expect(cache.filter { $0.count == 64 } == [blobs[1]], "\(cache)")
    }

    @Test func aDamagedOnlyCopyIsNotUploaded() throws {
        let (mum, dad, _, dir, record) = try Self.household()
        let (file, _) = try Self.jpegFile(mum, 20_000, marker: "DAMAGED-BEFORE-SYNC")
        let photo = try mum.ok("photo", "add", record, file)
        let cache = mum.home + "/photos"
        let blob = try #require(try FileManager.default.contentsOfDirectory(atPath: cache).first { $0.count == 64 })
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: cache + "/" + blob)))
        bytes[bytes.count / 2] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: cache + "/" + blob))
        let synced = try mum.run("sync")
        #expect(synced.code == 0, "\(synced.stderr)")
        #expect(synced.stderr.contains("warning: the only copy of photo \(photo), on this device, is damaged")
                && synced.stderr.contains("'famctl photo delete \(photo)'"), "\(synced.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(try mum.ok("sync", "--json").utf8)) as? [String: Any]
        #expect(json?["damagedPhotos"] as? [String] == [photo])
        let blobs = (try? FileManager.default.subpathsOfDirectory(atPath: dir))?.filter { $0.hasSuffix(".blob") } ?? []
        #expect(blobs.isEmpty, "a damaged blob was uploaded: \(blobs)")
        try dad.ok("sync")
        #expect(try dad.run("photo", "get", photo, "--out", dad.root + "/got.jpg").code == 75)
        let damaged = try mum.run("photo", "get", photo, "--out", mum.root + "/got.jpg")
        #expect(damaged.code == 65 && damaged.stderr.contains("the only copy of photo \(photo) is damaged (hash mismatch): it was never uploaded")
                && damaged.stderr.contains("add it again ('famctl photo add \(record) FILE') and delete this one ('famctl photo delete \(photo)')"), "\(damaged.stderr)")
        // verify says it is the only copy, not that photo get fetches a good one.
        let verified = try mum.run("verify", "--photos")
        #expect(verified.code == 3 && verified.stderr.contains("Never uploaded, so their only copy: \(photo)")
                && !verified.stderr.contains("fetches a good copy"), "\(verified.stderr)")
        // Deleted as the warning says: the next round warns no more.
        try mum.ok("photo", "delete", photo)
        let after = try mum.run("sync")
        #expect(after.code == 0 && !after.stderr.contains("warning"), "\(after.stderr)")
    }

    /// A blob deleted from the shared folder is uploaded again by the next
    /// device that syncs with a good copy in its cache, and a device that
    /// joins later gets the photo.
    @Test func aDeletedBlobIsUploadedAgainFromACache() throws {
        let (mum, dad, dir, photo, original) = try Self.photoInDadsCache(marker: "REPAIR")
        let blobs = try FileManager.default.subpathsOfDirectory(atPath: dir).filter { $0.hasSuffix(".blob") }
        try #require(blobs.count == 1)
        try FileManager.default.removeItem(atPath: dir + "/" + blobs[0])

        let late = FamctlRunner()
        try late.ok("accept", try mum.ok("invite"), "--name", "Late", "--dir", dir)
        try late.ok("sync")
        #expect(try late.run("photo", "get", photo, "--out", late.root + "/x.jpg").code == 75, "the blob is gone from the folder")
        // Dad fetched it, so his cache holds it: his round puts it back.
        try dad.ok("sync")
        #expect(FileManager.default.fileExists(atPath: dir + "/" + blobs[0]))
        try late.ok("sync")
        #expect(try late.ok("photo", "get", photo, "--out", late.root + "/x.jpg").contains("wrote 30010 bytes"))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: late.root + "/x.jpg"))) == original)
    }

    /// A blob damaged in the folder (a byte flipped) after the devices that
    /// hold a copy saw it listed is replaced from a good copy at the next
    /// round of one of them; a device that must fetch it then gets it.
    @Test func aDamagedBlobIsReplacedFromACache() throws {
        let (mum, dad, dir, photo, original) = try Self.photoInDadsCache(marker: "DAMAGE")
        try dad.ok("sync")   // the blob listed, its tag kept unread
        let (path, bytes) = try Self.damageTheOnlyBlob(in: dir)

        let late = FamctlRunner()
        try late.ok("accept", try mum.ok("invite"), "--name", "Late", "--dir", dir)
        try late.ok("sync")
        try Self.expectRefusedAsDamaged(photo, by: late)
        // Prefetch meeting it says so, rather than leave it "not fetched yet" (a review).
        try late.ok("settings", "photos", "--prefetch", "on")
        let prefetched = try late.run("sync")
        #expect(prefetched.code == 0 && prefetched.stderr.contains("the copy of photo \(photo) on the peer is incomplete or damaged") && prefetched.stderr.contains("not fetched"),
                "\(prefetched.stderr)")
        // Dad's round finds the blob changed, reads it back, and puts his good copy there.
        try dad.ok("sync")
        try Self.expectRepaired(path, damaged: bytes, fetchedBy: late, photo: photo, original: original)
    }

    /// A blob damaged in the folder before its uploader listed it again (its
    /// photo's device the only one holding it) is replaced by that device at
    /// its next round: the upload kept the tag it wrote, so the damaged one
    /// is not taken for the blob as first seen.
    @Test func aBlobDamagedRightAfterItsUploadIsReplacedByItsUploader() throws {
        let (mum, dad, dir, photo, original) = try Self.uploadedPhoto(marker: "UPLOADER")
        let (path, bytes) = try Self.damageTheOnlyBlob(in: dir)

        try dad.ok("sync")
        try Self.expectRefusedAsDamaged(photo, by: dad)
        try mum.ok("sync")
        try Self.expectRepaired(path, damaged: bytes, fetchedBy: dad, photo: photo, original: original)
    }

    /// A blob replaced by a symbolic link that leads nowhere (a loop, a
    /// target gone) is taken for a missing one: the next round of a device
    /// holding a good copy writes it again in the link's place.
    @Test func aBlobReplacedByABrokenLinkIsWrittenAgain() throws {
        let (mum, dad, dir, photo, original) = try Self.uploadedPhoto(marker: "LINKED")
        let (path, _) = try Self.damageTheOnlyBlob(in: dir)
        for target in [path, dir + "/nowhere"] {
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            let round = try mum.run("sync")
            #expect(round.code == 0 && !round.stderr.contains("symbolic link"), "\(round.stderr)")
            var st = stat()
            #expect(lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG, "the link is still in the blob's place")
        }
        try dad.ok("sync")
        #expect(try dad.ok("photo", "get", photo, "--out", dad.root + "/x.jpg").contains("wrote \(original.count) bytes"))
    }

    /// A household whose owner added a photo and synced (uploading its
    /// blob); Dad has not synced since.
    static func uploadedPhoto(marker: String) throws -> (FamctlRunner, FamctlRunner, String, String, [UInt8]) {
        let (mum, dad, _, dir, record) = try household()
        let (file, original) = try jpegFile(mum, 20_000, marker: marker)
        let photo = try mum.ok("photo", "add", record, file)
        try mum.ok("sync")
        return (mum, dad, dir, photo, original)
    }

    /// Flips a byte in the middle of the one blob in the shared folder `dir`.
    static func damageTheOnlyBlob(in dir: String) throws -> (path: String, damaged: [UInt8]) {
        let blobs = try FileManager.default.subpathsOfDirectory(atPath: dir).filter { $0.hasSuffix(".blob") }
        try #require(blobs.count == 1)
        let path = dir + "/" + blobs[0]
        var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    /// `device` refuses the photo's copy on the peer as damaged (75), writing nothing.
    static func expectRefusedAsDamaged(_ photo: String, by device: FamctlRunner) throws {
        let refused = try device.run("photo", "get", photo, "--out", device.root + "/x.jpg")
        #expect(refused.code == 75 && refused.stderr.contains("damaged"), "\(refused.stderr)")
    }

    /// The blob at `path` is no longer the damaged one, and `device` gets the photo whole.
    static func expectRepaired(_ path: String, damaged: [UInt8], fetchedBy device: FamctlRunner, photo: String, original: [UInt8]) throws {
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) != damaged, "the damaged blob is still there")
        #expect(try device.ok("photo", "get", photo, "--out", device.root + "/x.jpg").contains("wrote \(original.count) bytes"))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: device.root + "/x.jpg"))) == original)
    }

    /// A device that had not heard of a photo's delete, and uploaded its
    /// blob again from its cache after the photo's device erased it, erases
    /// its own upload once the delete reaches it.
    @Test func aBlobUploadedAgainBeforeTheDeleteArrivedIsErasedByItsUploader() throws {
        let (mum, dad, dir, photo, _) = try Self.photoInDadsCache(marker: "RACE")
        let blob = try #require(try FileManager.default.subpathsOfDirectory(atPath: dir).first { $0.hasSuffix(".blob") })

        // Mum deletes her photo and erases its blob; her segment with the
        // delete has not reached Dad's machine yet.
        let home = try Home.open(mum.home)
        let folder = dir + "/" + home.family.description + "/" + home.deviceID.hex
        let before = Set(try FileIO.list(folder))
        try mum.ok("photo", "delete", photo)
        try mum.ok("sync")
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + blob))
        let aside = mum.root + "/aside"
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        let new = Set(try FileIO.list(folder)).subtracting(before)
        try #require(!new.isEmpty)
        for name in new { try FileManager.default.moveItem(atPath: folder + "/" + name, toPath: aside + "/" + name) }
        // Dad still sees the photo, finds its blob missing, and repairs it.
        try dad.ok("sync")
        #expect(FileManager.default.fileExists(atPath: dir + "/" + blob))
        // The delete arrives: Dad erases the copy he wrote.
        for name in new { try FileManager.default.moveItem(atPath: aside + "/" + name, toPath: folder + "/" + name) }
        try dad.ok("sync")
        #expect(!(try dad.ok("photo", "list").contains(photo)))
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + blob))
    }

    /// Mum's family with Dad and Gran as members; Dad adds a 20 000-byte
    /// photo to a record, and all three sync. Returns the family, the
    /// photo's id and its bytes.
    static func dadsPhotoWithGranAMember(marker: String) throws -> (SharedFamily, String, [UInt8]) {
        let family = try SharedFamily(["Dad", "Gran"])
        let dad = family.dad
        let record = try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let (file, original) = try jpegFile(dad, 20_000, marker: marker)
        let photo = try dad.ok("photo", "add", record, file)
        for r in [dad, family.mum, family.members[1]] { try r.ok("sync") }
        return (family, photo, original)
    }

    /// A delete that stops counting later (its author's removal arrives
    /// after it) brings the photo back, and its bytes with it: the device
    /// that added the photo kept its copy and uploads it again.
    @Test func aPhotoWhoseDeleteIsRejectedLaterComesBackWithItsBytes() throws {
        let (family, photo, original) = try Self.dadsPhotoWithGranAMember(marker: "COMES-BACK")
        let (mum, dad, gran, dir) = (family.mum, family.dad, family.members[1], family.dir)
        // Mum removes Gran while the shared folder is out of reach (the
        // removal, published at once otherwise, waits for her next sync);
        // meanwhile Gran deletes the photo, and Dad's device, which added
        // it, erases its blob.
        try FileManager.default.moveItem(atPath: dir, toPath: dir + ".away")
        let removal = try mum.run("member", "remove", "Gran")
        try FileManager.default.moveItem(atPath: dir + ".away", toPath: dir)
        #expect(removal.code == 0 && removal.stderr.contains("the removal is written here but not in the shared folder yet"), "\(removal.stderr)")
        try gran.ok("photo", "delete", photo)
        try gran.ok("sync")
        try dad.ok("sync")
        #expect(!(try dad.ok("photo", "list").contains(photo)))
        #expect(!(try FileManager.default.subpathsOfDirectory(atPath: dir).contains { $0.hasSuffix(".blob") }))
        // The removal arrives: Gran's delete came after her cut-off, so it does not count.
        try mum.ok("sync")
        try dad.ok("sync")
        #expect(try dad.ok("photo", "list").contains(photo))
        #expect(try FileManager.default.subpathsOfDirectory(atPath: dir).contains { $0.hasSuffix(".blob") }, "uploaded again")
        try mum.ok("sync")
        let out = mum.root + "/back.jpg"
        #expect(try mum.ok("photo", "get", photo, "--out", out).contains("wrote"))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: out))) == original)
    }

    /// A photo added and deleted before its first sync is never uploaded,
    /// and its device's copy does not stay for good: it may be evicted like
    /// any published one.
    @Test func aPhotoDeletedBeforeItsFirstSyncLeavesNothingBehindForGood() throws {
        let (mum, dad, _, dir, record) = try Self.household()   // Mum's runner holds the shared folder
        let (file, _) = try Self.jpegFile(dad, 20_000, marker: "NEVER-SHARED")
        let photo = try dad.ok("photo", "add", record, file)
        try dad.ok("photo", "delete", photo)
        try dad.ok("sync")
        #expect(!(try FileManager.default.subpathsOfDirectory(atPath: dir).contains { $0.hasSuffix(".blob") }))
        let home = try Home.open(dad.home)
        let pinned = try home.log.database.statement("SELECT count(*) FROM ph_cache WHERE unpublished <> 0").first { $0.int(0) }
        #expect(pinned == 0, "the deleted photo's copy is pinned in the cache")
        withExtendedLifetime(mum) {}
    }

    /// A removed device cannot read the family's later events, a photo's
    /// delete among them: it does not upload the blob of a photo deleted
    /// since, although to it the photo still looks live.
    @Test func aRemovedDeviceDoesNotUploadADeletedPhotoAgain() throws {
        let (family, photo, _) = try Self.dadsPhotoWithGranAMember(marker: "REMOVED")
        let (mum, dad, gran, dir) = (family.mum, family.dad, family.members[1], family.dir)
        #expect(try gran.ok("photo", "get", photo, "--out", gran.root + "/x.jpg").contains("wrote"))
        try mum.ok("member", "remove", "Gran")
        try mum.ok("sync")
        try dad.ok("sync")   // Dad gets the new key: his delete is written under it
        try dad.ok("photo", "delete", photo)
        try dad.ok("sync")
        #expect(!(try FileManager.default.subpathsOfDirectory(atPath: dir).contains { $0.hasSuffix(".blob") }))
        for _ in 0..<2 { try gran.ok("sync") }
        #expect(try gran.ok("status").contains("this device: removed"))
        #expect(try gran.ok("photo", "list").contains(photo), "to the removed device the photo looks live")
        #expect(!(try FileManager.default.subpathsOfDirectory(atPath: dir).contains { $0.hasSuffix(".blob") }), "the removed device uploaded it again")
    }

    /// What a `photo add` killed between its blob and its append leaves — a
    /// cached blob marked for upload, and no event — is not uploaded (an
    /// orphan no event names), and not deleted either (the append may
    /// still come). A photo added and deleted before any sync is not
    /// uploaded.
    /// A blob no photo event names (a `photo add` killed between its blob
    /// and its append) is never uploaded, and leaves the cache at the first
    /// `sync` once it is an hour old.
    @Test func blobsNoLivePhotoNamesAreNotUploadedAndLeaveAfterAnHour() throws {
        let (mum, _, _, dir, record) = try Self.household()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var names: [String: Int64] = [:]   // orphan blob → when it was written
        do {
            let home = try Home.open(mum.home)
            try home.photoCacheTable()
            try FileManager.default.createDirectory(atPath: home.photoDirectory, withIntermediateDirectories: true)
            for (text, written) in [("an orphan of a minute ago", now - 60_000), ("an orphan of two hours ago", now - 7_200_000)] {
                let orphan = Array(text.utf8)
                let name = Hex.encode(Sodium.blake2b256(orphan))
                try Data(orphan).write(to: URL(fileURLWithPath: home.photoDirectory + "/" + name))
                try home.log.database.run("INSERT INTO ph_cache(blob, size, last_used, unpublished) VALUES(?1, ?2, ?3, 1)",
                                          [.text(name), .integer(Int64(orphan.count)), .integer(written)])
                names[name] = written
            }
        }
        let (file, _) = try Self.jpegFile(mum, 10_000, marker: "ADDED-THEN-DELETED")
        let gone = try mum.ok("photo", "add", record, file)
        try mum.ok("photo", "delete", gone)
        try mum.ok("sync")
        var blobs = try FileManager.default.subpathsOfDirectory(atPath: dir).filter { $0.hasSuffix(".blob") }
        #expect(blobs.isEmpty, "uploaded: \(blobs)")
        let home = try Home.open(mum.home)
        for (name, written) in names {
            let fresh = written > now - 3_600_000
            let row = try home.log.database.statement("SELECT 1 FROM ph_cache WHERE blob = ?1").first([.text(name)]) { _ in true } ?? false
            #expect(FileManager.default.fileExists(atPath: mum.home + "/photos/" + name) == fresh && row == fresh,
                    "an orphan written \((now - written) / 60_000) minutes ago: \(fresh ? "kept" : "removed") expected")
        }
        // A photo added now goes out, alone.
        let kept = try mum.ok("photo", "add", record, try Self.jpegFile(mum, 12_000, marker: "KEPT").path)
        try mum.ok("sync")
        blobs = try FileManager.default.subpathsOfDirectory(atPath: dir).filter { $0.hasSuffix(".blob") }
        #expect(blobs.count == 1 && names.keys.allSatisfy { !blobs[0].contains($0) }, "\(blobs)")
        #expect(try mum.ok("photo", "list").contains(kept))
    }

    /// Files in the cache that no row lists (a `photo add` or a fetch
    /// killed between its file and its row): once an hour old, one no
    /// photo names is removed at the next `sync`, and a live photo's is
    /// listed again, so that eviction counts it (a review: 20 MB stayed for
    /// good, past --cache-mb); a younger one is left alone.
    @Test func cacheFilesNoRowListsAreListedAgainOrRemovedAfterAnHour() throws {
        let (mum, dad, _, _, record) = try Self.household()
        let photo = try mum.ok("photo", "add", record, try Self.jpegFile(mum, 20_000, marker: "LISTED-AGAIN").path)
        try mum.ok("sync"); try dad.ok("sync")
        #expect(try dad.ok("photo", "get", photo, "--out", dad.root + "/got.jpg").contains("wrote"))
        let home = try Home.open(dad.home)
        let blob = try #require(try home.projector.photos().first?.blob)
        try home.log.database.run("DELETE FROM ph_cache WHERE blob = ?1", [.text(blob)])
        let hoursAgo = Date().addingTimeInterval(-7_200)
        var strays: [String: Bool] = [:]   // a file no photo names → whether it is old
        for (text, old) in [("killed mid-add, two hours ago", true), ("a photo add under way", false)] {
            let name = Hex.encode(Sodium.blake2b256(Array(text.utf8)))
            try Data(repeating: 7, count: 5_000).write(to: URL(fileURLWithPath: home.photoDirectory + "/" + name))
            if old { try FileManager.default.setAttributes([.modificationDate: hoursAgo], ofItemAtPath: home.photoDirectory + "/" + name) }
            strays[name] = old
        }
        try FileManager.default.setAttributes([.modificationDate: hoursAgo], ofItemAtPath: home.photoDirectory + "/" + blob)
        try dad.ok("sync")
        for (name, old) in strays {
            #expect(FileManager.default.fileExists(atPath: home.photoDirectory + "/" + name) == !old, "\(old ? "an old" : "a young") file no photo names")
        }
        let row = try Home.open(dad.home).log.database.statement("SELECT unpublished FROM ph_cache WHERE blob = ?1").first([.text(blob)]) { $0.int(0) }
        #expect(row == 0, "the fetched copy is listed again, as evictable: \(String(describing: row))")
        // Counted now: a cache of 1 KB evicts it.
        try dad.ok("settings", "photos", "--cache-mb", "0.001")
        try dad.ok("sync")
        #expect(!FileManager.default.fileExists(atPath: home.photoDirectory + "/" + blob), "the listed copy is evicted")
    }

    /// A photo this device added that the family does not count (written
    /// past its removal, before the removal reached it) is not an orphan:
    /// its blob, that photo's only copy, stays unpublished in the cache an
    /// hour on, whether its row is there or not (a review: the sweeps took
    /// the stores' word, and removed it).
    @Test func aPhotoTheFamilyDoesNotCountIsNotSweptAway() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let record = try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try dad.ok("sync"); try mum.ok("sync")
        try mum.ok("member", "remove", "Dad")
        let photo = try dad.ok("photo", "add", record, try Self.jpegFile(dad, 8_000, marker: "NOT-COUNTED").path)
        let home = try Home.open(dad.home)
        let blob = try #require(try home.projector.photos(includeDeleted: true).first { $0.id.lowercasedText == photo }?.blob)
        // Looked at two days later (its cache entry then dated that day),
        // and synced two hours after that: the removal arrives, and the
        // blob is an hour-old blob no counted photo names.
        #expect(try dad.run(["photo", "get", photo, "--out", dad.root + "/seen.jpg"], env: try HouseholdTests.clockOff("+48h")).code == 0)
        let synced = try dad.run(["sync"], env: try HouseholdTests.clockOff("+50h"))
        #expect(synced.stderr.contains("not counted by the family"), "the removal arrived: \(synced.stderr)")
        func state() throws -> Int64? {
            try Home.open(dad.home).log.database.statement("SELECT unpublished FROM ph_cache WHERE blob = ?1").first([.text(blob)]) { $0.int(0) }
        }
        let kept = try state()
        #expect(FileManager.default.fileExists(atPath: home.photoDirectory + "/" + blob) && kept == 3, "kept, marked as its own not counted: \(String(describing: kept))")
        // Its row lost too (killed between the file and the row): listed again so.
        try Home.open(dad.home).log.database.run("DELETE FROM ph_cache WHERE blob = ?1", [.text(blob)])
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7_200)], ofItemAtPath: home.photoDirectory + "/" + blob)
        try dad.ok("sync")
        let listed = try state()
        #expect(FileManager.default.fileExists(atPath: home.photoDirectory + "/" + blob) && listed == 3, "listed again: \(String(describing: listed))")
        // Never uploaded, and never evicted: the family does not count it.
        #expect(try FileManager.default.subpathsOfDirectory(atPath: family.dir).filter { $0.contains(blob) }.isEmpty)
        try dad.ok("settings", "photos", "--cache-mb", "0.001")
        try dad.ok("sync")
        #expect(FileManager.default.fileExists(atPath: home.photoDirectory + "/" + blob), "evicted")
    }

    /// A photo added before the device joined a family goes in with its
    /// record: the first `sync` uploads its blob, and the family sees it.
    @Test func aPrivatePhotoIsCarriedIntoTheFamily() throws {
        let homes = try FamilyAndPrivateHome()
        let (mum, dad, record) = (homes.mum, homes.dad, homes.record)
        try mum.ok("subject", "add", "newMom")
        let (file, bytes) = try Self.jpegFile(dad, 8_000, marker: "FIRST-CARROTS")
        let photo = try dad.ok("photo", "add", record, file)
        // A record deleted before joining stays private, with its photo.
        let gone = try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        let hidden = try dad.ok("photo", "add", gone, try Self.jpegFile(dad, 9_000, marker: "NOT-FOR-THE-FAMILY").path)
        // The record's photos are not deleted with it: said, with the commands that would.
        let deleted = try dad.run("record", "delete", gone)
        #expect(deleted.code == 0 && deleted.stderr.contains("note: the record's 1 photo(s) are not deleted with it")
                && deleted.stderr.contains("famctl photo delete \(hidden)"), "\(deleted.stderr)")
        let joined = try dad.ok("accept", try mum.ok("invite"), "--name", "Dad")
        #expect(joined.contains("Wrote 1 care subject(s), 1 record(s) and 1 photo(s)"), "\(joined)")
        for r in [dad, mum, dad, mum] { try r.ok("sync") }
        let list = try mum.ok("photo", "list")
        #expect(list.contains(photo) && !list.contains(hidden), "\(list)")
        let uploaded = try FileManager.default.subpathsOfDirectory(atPath: mum.root + "/shared").filter { $0.hasSuffix(".blob") }
        #expect(uploaded.count == 1, "\(uploaded)")
        try mum.ok("photo", "get", photo, "--out", mum.root + "/got.jpg")
        #expect(try Data(contentsOf: URL(fileURLWithPath: mum.root + "/got.jpg")) == Data(bytes))
    }

    /// A photo added before the device joined a family as a viewer (which
    /// carries nothing) is named only in its private chain: its blob is the
    /// only copy, and no `sync` removes it, however old.
    @Test func aPrivatePhotosBlobOutlivesJoiningAFamily() throws {
        let homes = try FamilyAndPrivateHome()
        let (mum, dad, record) = (homes.mum, homes.dad, homes.record)
        try dad.ok("photo", "add", record, try Self.jpegFile(dad, 8_000, marker: "PRIVATE").path)
        let blobs = try FileManager.default.contentsOfDirectory(atPath: dad.home + "/photos")
        #expect(blobs.count == 1)
        // A photo deleted before joining is not kept.
        let deleted = try dad.ok("photo", "add", record, try Self.jpegFile(dad, 9_000, marker: "DELETED").path)
        try dad.ok("photo", "delete", deleted)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dad.home + "/photos").count == 2)
        // A viewer's invitation on a home with records of its own is
        // refused, nothing written, unless said (they would no longer show).
        let code = try mum.ok("invite", "--role", "viewer")
        let digestBefore = try dad.ok("digest")
        let refused = try dad.run("accept", code, "--name", "Dad")
        // Its photo counted, and how to keep it (a review: no command reaches it after the join).
        #expect(refused.code == 65 && refused.stderr.contains("this device has 1 record(s), 1 care subject(s) and 1 photo(s) of its own, and the invitation is a viewer's")
                && refused.stderr.contains("accept with --without-own-records") && refused.stderr.contains("each photo with 'famctl photo get ID --out FILE'"), "\(refused.stderr)")
        #expect(try dad.ok("record", "show", record).contains(record) && dad.ok("digest") == digestBefore, "nothing written")
        let joined = try dad.run("accept", code, "--name", "Dad", "--without-own-records")
        #expect(joined.code == 0 && joined.stderr.contains("this device's 1 photo(s) of its own stay in its private chain with its records: no command reaches them now"), "\(joined.stderr)")
        // No view shows them now; the export of what it recorded before joining does.
        #expect(try dad.run("record", "show", record).code == 66)
        let before = dad.root + "/before"
        let exported = try dad.run("export", "stores", before, "--before-joining")
        #expect(exported.stdout.contains("exported 1 records and 1 subjects") && exported.stderr.contains("which no command reads them from")
                && !exported.stderr.contains("'famctl photo list' lists them"), "\(exported.stderr)")
        let other = FamctlRunner()
        try other.ok("init", "--name", "Dad's new phone")
        try other.ok("import", "stores", before)
        #expect(try other.ok("record", "show", record).contains("mood=4"))
        let notJoined = try mum.run("export", "stores", mum.root + "/x", "--before-joining")
        #expect(notJoined.code == 64 && notJoined.stderr.contains("this device has not joined a family"), "\(notJoined.stderr)")
        do {
            let home = try Home.open(dad.home)
            try home.log.database.run("UPDATE ph_cache SET last_used = ?1", [.integer(Int64(Date().timeIntervalSince1970 * 1000) - 7_200_000)])
        }
        try dad.ok("sync")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dad.home + "/photos") == blobs, "the private photo's only copy kept, the deleted one's removed")
        // Kept out of the way of later rounds: no longer a candidate for upload or removal.
        let home = try Home.open(dad.home)
        #expect(try home.log.database.statement("SELECT unpublished FROM ph_cache WHERE blob = ?1").first([.text(blobs[0])]) { $0.int(0) } == 2)
        #expect(try home.isUnpublished(blobs[0]), "still the only copy")
    }

    /// A random source that repeats itself (a device restored from a
    /// virtual machine's snapshot) must not give two photos one key: the key
    /// hashes the photo's hash and id with the random bytes.
    @Test func aRepeatingRandomSourceStillGivesEveryPhotoItsOwnKey() throws {
        let (mum, _, _, _, record) = try Self.household()
        let home = try Home.open(mum.home)
        home.log.randomSecret = { SecretBytes([UInt8](repeating: 9, count: $0)) }
        let recordID = try #require(UUID(uuidString: record))
        let state = try #require(try home.projector.record(recordID))
        let first = try home.addPhoto(to: state, bytes: Self.jpeg(2_000, marker: "ONE"))
        let again = try #require(try home.projector.record(state.id))
        let second = try home.addPhoto(to: again, bytes: Self.jpeg(2_000, marker: "TWO"))
        let photos = try home.projector.photos(includeDeleted: true)
        let a = try #require(photos.first { $0.id == first }), b = try #require(photos.first { $0.id == second })
        #expect(a.key != b.key)
        for p in [a, b] {
            let expected = PhotoBlob.hedgedKey(random: SecretBytes([UInt8](repeating: 9, count: 32)), hash: p.hash, id: FamilyID(uuid: p.id).bytes)
            #expect(p.key == expected.copyBytes())
        }
    }

    /// A `photo add` that stalled past the hour, its blob taken for an
    /// orphan meanwhile, puts the blob back after its append; one still
    /// there is left as it is.
    @Test func aStalledPhotoAddPutsItsBlobBack() throws {
        let (mum, dad, _, _, record) = try Self.household()
        let (file, bytes) = try Self.jpegFile(mum, 9_000, marker: "STALLED")
        let photo = try mum.ok("photo", "add", record, file)
        let home = try Home.open(mum.home)
        let p = try #require(try home.projector.photos(includeDeleted: false).first { $0.id.uuidString.lowercased() == photo })
        let path = home.photoDirectory + "/" + p.blob
        let blob = try FileIO.readFile(path)
        let before = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        try home.keepCached(blob, named: p.blob)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == before, "a blob in place is not written again")
        // What an orphan collection does: the file, then the row.
        try FileManager.default.removeItem(atPath: path)
        try home.log.database.run("DELETE FROM ph_cache WHERE blob = ?1", [.text(p.blob)])
        try home.keepCached(blob, named: p.blob)
        #expect(try home.isUnpublished(p.blob), "back, and still to be uploaded")
        try mum.ok("sync"); try dad.ok("sync")
        try dad.ok("photo", "get", photo, "--out", dad.root + "/got.jpg")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dad.root + "/got.jpg")) == Data(bytes))
    }

    /// Two devices each add the tenth photo of a record at once: eleven
    /// live photos, one left out of the list. What puts it back is said
    /// within the list's ten: delete one first (a review: the command
    /// given listed eleven and was refused).
    @Test func aPhotoLeftOutOfAFullListIsPutBackWithinItsLimit() throws {
        let (mum, dad, _, _, record) = try Self.household()
        for i in 0..<9 { try mum.ok("photo", "add", record, try Self.jpegFile(mum, 100, marker: "P\(i)").path) }
        for r in [mum, dad, mum, dad] { try r.ok("sync") }
        try mum.ok("photo", "add", record, try Self.jpegFile(mum, 100, marker: "MUM10").path)
        try dad.ok("photo", "add", record, try Self.jpegFile(dad, 100, marker: "DAD10").path)
        var said = ""
        for r in [mum, dad, mum, dad] { said += try r.run("sync").stderr }
        let shown = try mum.run("record", "show", record)
        for text in [said, shown.stderr] {
            #expect(text.contains("a solidFood record lists at most 10 photos, and it has 11: 'famctl photo delete ID' 1 of them first")
                    && text.range(of: "photos=[0-9a-f]{8}-", options: .regularExpression) == nil, "\(text)")
        }
        #expect(try mum.ok("photo", "list", "--record", record).split(separator: "\n").count == 11)
    }

    /// `status` says the photos of this device not uploaded yet, until a
    /// sync uploads them.
    @Test func statusSaysThePhotosWaitingToBeUploaded() throws {
        let (mum, _, _, _, record) = try Self.household()
        try mum.ok("photo", "add", record, try Self.jpegFile(mum, 1_000, marker: "WAIT").path)
        #expect(try mum.ok("status").contains("; 1 photo(s) of this device wait to be uploaded"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try mum.ok("status", "--json").utf8)) as? [String: Any])
        #expect(json["photosUnpublished"] as? Int == 1)
        try mum.ok("sync")
        #expect(!(try mum.ok("status")).contains("wait to be uploaded"))
    }

    @Test func damagedAndMissingBlobsAreNotYetArrived() throws {
        let (mum, dad, _, dir, record) = try Self.household()
        let file = mum.root + "/p.png"
        let png = Self.png(5_000)
        try Data(png).write(to: URL(fileURLWithPath: file))
        let photo = try mum.ok("photo", "add", record, file)
        try mum.ok("sync"); try dad.ok("sync")
        let blobs = dir + "/" + (try Home.open(mum.home)).family.description + "/blobs"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: blobs).first)
        let good = try Data(contentsOf: URL(fileURLWithPath: blobs + "/" + name))
        // A flipped byte: rejected, not written out.
        var bad = good; bad[bad.count / 2] ^= 0x01
        try bad.write(to: URL(fileURLWithPath: blobs + "/" + name))
        let flipped = try dad.run("photo", "get", photo, "--out", dad.root + "/x.png")
        #expect(flipped.code == 75 && flipped.stderr.contains("hash mismatch"))
        #expect(!FileManager.default.fileExists(atPath: dad.root + "/x.png"))
        // Truncated: not yet arrived.
        try good.prefix(100).write(to: URL(fileURLWithPath: blobs + "/" + name))
        #expect(try dad.run("photo", "get", photo, "--out", dad.root + "/x.png").code == 75)
        // Gone: not yet arrived, and the record is intact.
        try FileManager.default.removeItem(atPath: blobs + "/" + name)
        let gone = try dad.run("photo", "get", photo, "--out", dad.root + "/x.png")
        #expect(gone.code == 75 && gone.stderr.contains("has not arrived"))
        #expect(try dad.ok("record", "show", record).contains(photo))
        // The right bytes arrive again (Mum re-uploads nothing: restore the file): fetched and verified.
        try good.write(to: URL(fileURLWithPath: blobs + "/" + name))
        try dad.ok("photo", "get", photo, "--out", dad.root + "/x.png")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: dad.root + "/x.png"))) == png)
        #expect(try dad.ok("verify", "--photos").contains("damaged: none"))
        // A cached copy damaged on disk: verify catches it.
        let cached = try Home.open(dad.home).photoDirectory + "/" + String(name.dropLast(5))
        var c = try Data(contentsOf: URL(fileURLWithPath: cached)); c[20] ^= 0xFF
        try c.write(to: URL(fileURLWithPath: cached))
        #expect(try dad.run("verify", "--photos").code == 3)
    }

    @Test func limitsAndCache() throws {
        let (mum, dad, gran, _, record) = try Self.household()
        try mum.ok("settings", "photos", "--max-mb", "0.01")
        let big = mum.root + "/big.jpg"
        try Data(Self.jpeg(20_000, marker: "x")).write(to: URL(fileURLWithPath: big))
        let refused = try mum.run("photo", "add", record, big)
        #expect(refused.code == 65 && refused.stderr.contains("over the"))
        #expect(try mum.ok("photo", "list").isEmpty, "a refused photo left something behind")
        let notImage = mum.root + "/notes.txt"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: notImage))
        let text = try mum.run("photo", "add", record, notImage)
        #expect(text.stderr.contains("\(notImage) is not a JPEG, PNG, HEIC or WebP image (it looks like text)"), "\(text.stderr)")
        let gif = mum.root + "/a.gif"
        try Data("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8).write(to: URL(fileURLWithPath: gif))
        #expect(try mum.run("photo", "add", record, gif).stderr.contains("(it looks like a GIF image)"))
        #expect(try gran.run("photo", "add", record, notImage).code == 65)
        try mum.ok("settings", "photos", "--max-mb", "25")
        // A limit no photo fits under, or past the largest, is refused saying the range:
        // for photos, the largest whose encrypted file a shared folder or peer takes.
        for bad in ["0.0000001", "256", "100001", "nan"] {
            let r = try mum.run("settings", "photos", "--max-mb", bad)
            #expect(r.code == 65 && r.stderr.contains("from 0.001 to 255"), "\(bad): \(r.stderr)")
        }
        try mum.ok("settings", "photos", "--max-mb", "255")
        #expect(try mum.ok("settings", "photos").contains("max \(255 << 20) bytes"))
        let r = try mum.run("settings", "photos", "--cache-mb", "100001")
        #expect(r.code == 65 && r.stderr.contains("from 0.001 to 100000"), "\(r.stderr)")
        try mum.ok("settings", "photos", "--max-mb", "25")

        // Unpublished photos are never evicted, whatever the limit.
        try mum.ok("settings", "photos", "--cache-mb", "0.02")
        var ids: [String] = []
        for i in 0..<4 {
            let f = mum.root + "/p\(i).jpg"
            try Data(Self.jpeg(9_000, marker: "photo\(i)")).write(to: URL(fileURLWithPath: f))
            ids.append(try mum.ok("photo", "add", record, f))
        }
        let mumHome = try Home.open(mum.home)
        #expect(try FileManager.default.contentsOfDirectory(atPath: mumHome.photoDirectory).count == 4)
        try mum.ok("sync")     // published: now evictable down to the limit
        #expect(try FileManager.default.contentsOfDirectory(atPath: mumHome.photoDirectory).count <= 2)
        // Another device with a small cache keeps at most its limit, and still gets every photo on demand.
        try dad.ok("sync")
        try dad.ok("settings", "photos", "--cache-mb", "0.02", "--prefetch", "on")
        try dad.ok("sync")
        let dadHome = try Home.open(dad.home)
        let cached = try FileManager.default.contentsOfDirectory(atPath: dadHome.photoDirectory)
        let total = try cached.reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: dadHome.photoDirectory + "/" + $1)[.size] as! Int) }
        #expect(total <= 21_000)
        // Prefetch takes what fits, and fetches nothing more at the next
        // rounds (it used to evict one photo for another at every round).
        func cachedFiles() throws -> [String: UInt64] {
            var out: [String: UInt64] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: dadHome.photoDirectory) {
                var st = stat()
                if stat(dadHome.photoDirectory + "/" + name, &st) == 0 { out[name] = UInt64(st.st_ino) }
            }
            return out
        }
        let before = try cachedFiles()
        #expect(!before.isEmpty, "prefetch fetched nothing")
        try dad.ok("sync")
        try dad.ok("sync")
        #expect(try cachedFiles() == before, "prefetch fetched photos again")
        for id in ids { try dad.ok("photo", "get", id, "--out", dad.root + "/\(id).jpg") }
        // A photo larger than the whole cache is fetched and written, and
        // not kept: keeping it evicted every other photo, then it too.
        let held = try cachedFiles()
        #expect(!held.isEmpty)
        let largeFile = mum.root + "/large.jpg"
        try Data(Self.jpeg(30_000, marker: "large")).write(to: URL(fileURLWithPath: largeFile))
        let large = try mum.ok("photo", "add", record, largeFile)
        try mum.ok("settings", "photos", "--prefetch", "off")
        try mum.ok("sync")
        try dad.ok("settings", "photos", "--prefetch", "off")
        try dad.ok("sync")
        #expect(try dad.ok("photo", "get", large, "--out", dad.root + "/large.jpg").contains("wrote 30009 bytes (jpeg)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dad.root + "/large.jpg")) == Data(Self.jpeg(30_000, marker: "large")))
        #expect(try cachedFiles() == held, "the cache keeps what it held")
        let replay = try mum.ok("replay")
        #expect(replay.hasSuffix("result: OK"))
        #expect(replay.contains("photo metadata: 5 checked, all well-formed"))
    }
}

extension PhotoTests {
    /// Dad deletes a photo of a record that Mum, before she has seen the
    /// delete, brings back: her restore's list, which names the photo, wins
    /// (his delete wrote no list, the record being deleted on his device).
    /// `record show` says so, with the command that drops it; the photo
    /// takes no room in the list (ten more fit), and the next `photo add`
    /// or `photo delete` writes a list without it.
    @Test func aPhotoDeletedWhileItsRecordCameBackElsewhereIsDroppedFromTheList() throws {
        let (mum, dad, _, _, record) = try Self.household()
        let (file, _) = try Self.jpegFile(mum, 2_000, marker: "GONE")
        let photo = try mum.ok("photo", "add", record, file)
        try mum.ok("record", "delete", record)
        for r in [mum, dad] { try r.ok("sync") }
        try mum.ok("record", "restore", record)
        try dad.ok("photo", "delete", photo)
        for r in [mum, dad, mum] { try r.ok("sync") }
        for r in [mum, dad] {
            let shown = try r.run("record", "show", record)
            #expect(shown.code == 0 && shown.stdout.contains("photos=\(photo)"), "\(shown.stdout)")
            #expect(shown.stderr.contains("warning: photo \(photo) in this record's photos list was deleted"), "\(shown.stderr)")
            #expect(shown.stderr.contains("'famctl record update \(record) photos='"), "\(shown.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(try r.ok("record", "show", record, "--json").utf8)) as! [String: Any]
            #expect(json["photosDeleted"] as? [String] == [photo], "\(json)")
        }
        #expect(try mum.ok("digest") == dad.ok("digest"))
        // Ten photos fit beside it: it takes no room. Each list written
        // leaves it out.
        var added: [String] = []
        for i in 0..<10 {
            let (f, _) = try Self.jpegFile(dad, 1_000, marker: "NEW\(i)")
            added.append(try dad.ok("photo", "add", record, f))
        }
        let json = try JSONSerialization.jsonObject(with: Data(try dad.ok("record", "show", record, "--json").utf8)) as! [String: Any]
        let fields = try #require(json["fields"] as? [String: Any], "\(json)")
        #expect(fields["photos"] as? [String] == added, "\(json)")
        #expect(json["photosDeleted"] == nil, "\(json)")
        let full = try dad.run("photo", "add", record, try Self.jpegFile(dad, 1_000, marker: "ELEVEN").path)
        #expect(full.code == 65 && full.stderr.contains("must list at most 10"), "\(full.stderr)")
    }

    /// The same, mended by a `photo delete` of another photo of the record:
    /// the list it writes names neither.
    @Test func aPhotoDeleteWritesAListWithoutPhotosDeletedElsewhere() throws {
        let (mum, dad, _, _, record) = try Self.household()
        let gone = try mum.ok("photo", "add", record, try Self.jpegFile(mum, 2_000, marker: "GONE").path)
        let other = try mum.ok("photo", "add", record, try Self.jpegFile(mum, 2_000, marker: "OTHER").path)
        let kept = try mum.ok("photo", "add", record, try Self.jpegFile(mum, 2_000, marker: "KEPT").path)
        try mum.ok("record", "delete", record)
        for r in [mum, dad] { try r.ok("sync") }
        try mum.ok("record", "restore", record)
        try dad.ok("photo", "delete", gone)
        for r in [mum, dad, mum] { try r.ok("sync") }
        #expect(try mum.ok("record", "show", record).contains("photos=\([gone, other, kept].joined(separator: ","))"))
        try mum.ok("photo", "delete", other)
        let shown = try mum.run("record", "show", record)
        #expect(shown.stdout.contains("photos=\(kept)") && !shown.stderr.contains("warning"), "\(shown.stdout) \(shown.stderr)")
    }
}
