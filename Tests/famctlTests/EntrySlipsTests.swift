@testable import famctl
import Foundation
import Projections
import Testing

/// Slips at entry that famctl catches, saying what is wrong (a review
/// trying the records and photos commands as a parent would).
struct EntrySlipsTests {
    /// A home with a baby, a feeding and a solid-food record with a photo;
    /// the ids of the feeding, the solid food, its photo.
    static func home() throws -> (FamctlRunner, feeding: String, food: String, photo: String) {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let baby = try f.ok("subject", "add", "baby")
        let feeding = try f.ok("record", "add", "--focus", baby, "--store", "feeding", "kind=bottle", "start=2026-12-06T03:00:00+01:00")
        let food = try f.ok("record", "add", "--focus", baby, "--store", "solidFood", "foods=carrot")
        let (file, _) = try PhotoTests.jpegFile(f, 2_000, marker: "slips")
        return (f, feeding, food, try f.ok("photo", "add", food, file))
    }

    /// An offset no place has (`+23:59`, which ISO 8601's grammar takes)
    /// is refused, in `--at` and in a time field, at add and at update;
    /// the farthest real ones are taken.
    @Test func anOffsetNoPlaceHasIsRefused() throws {
        let (f, feeding, _, _) = try Self.home()
        let baby = try f.ok("subject", "list").split(separator: "\n")[0]
        let refused: [([String], String)] = [
            (["record", "add", "--focus", String(baby), "--store", "diaper", "wet=true", "--at", "2026-12-06T02:10:00+23:59"], "--at '2026-12-06T02:10:00+23:59': no place's clock is +23:59 from UTC"),
            (["record", "add", "--focus", String(baby), "--store", "sleep", "start=2026-12-06T02:10:00-13:00"], "sleep.start '2026-12-06T02:10:00-13:00': no place's clock is -13:00 from UTC"),
            (["record", "update", feeding, "end=2026-12-06T18:00:00+15:00"], "feeding.end '2026-12-06T18:00:00+15:00': no place's clock is +15:00"),
        ]
        for (args, message) in refused {
            let r = try f.run(args)
            #expect(r.code == 65 && r.stderr.contains(message) && r.stderr.contains("offsets run from -12:00 to +14:00"), "\(args): \(r.stderr)")
        }
        let before = try f.ok("log")
        for offset in ["+14:00", "-12:00"] {
            try f.ok("record", "add", "--focus", String(baby), "--store", "diaper", "wet=true", "--at", "2026-12-05T20:00:00" + offset)
        }
        #expect(try f.ok("log").split(separator: "\n").count == before.split(separator: "\n").count + 2, "the refused ones wrote nothing; the real offsets were taken")
        // A record already stored so (by an older famctl, or an import):
        // its other fields still change; only a time given is checked (a code review).
        let stored = UUID()
        let focus = try #require(FocusKey(String(baby)))
        try Home.open(f.home).append([RecordEvent(kind: .put, record: stored, store: "sleep", focus: focus.description, at: "2026-12-05T09:00:00+23:59",
                                                  fields: ["start": .string("2026-12-05T09:00:00+23:59")]).body])
        try f.ok("record", "update", stored.uuidString.lowercased(), "location=cot")
        try f.ok("record", "update", stored.uuidString.lowercased(), "end=2026-12-04T10:30:00Z")
    }

    /// A time that names the moment the record has, written with another
    /// offset, changes nothing this device shows: refused as nothing to
    /// change (64), no event written.
    @Test func theSameMomentWithAnotherOffsetIsNothingToChange() throws {
        let (f, feeding, _, _) = try Self.home()
        let before = try f.ok("log")
        for args in [["--at", "2026-12-06T02:00:00Z"], ["start=2026-12-06T02:00:00Z"], ["--at", "2026-12-06T04:00:00+02:00", "start=2026-12-05T21:00:00-05:00"]] {
            let r = try f.run(["record", "update", feeding] + args)
            #expect(r.code == 64 && r.stderr.contains("nothing to change"), "\(args): \(r.stderr)")
        }
        #expect(try f.ok("log") == before)
        // Another moment is a change.
        try f.ok("record", "update", feeding, "start=2026-12-06T02:30:00Z")
    }

    /// A photos list given by hand names each photo once, and no photo
    /// that is deleted or another record's; an id of no photo here is taken.
    @Test func aPhotosListByHandIsChecked() throws {
        let (f, feeding, food, photo) = try Self.home()
        let twice = try f.run("record", "update", food, "photos=\(photo),\(photo)")
        #expect(twice.code == 65 && twice.stderr.contains("solidFood.photos: photo \(photo) is listed twice"), "\(twice.stderr)")
        let other = try f.run("record", "update", feeding, "photos=\(photo)")
        #expect(other.code == 65 && other.stderr.contains("feeding.photos: photo \(photo) is record \(food)'s") && other.stderr.contains("photo add"), "\(other.stderr)")
        let (file, _) = try PhotoTests.jpegFile(f, 3_000, marker: "second")
        let second = try f.ok("photo", "add", food, file)
        try f.ok("photo", "delete", second)
        let deleted = try f.run("record", "update", food, "photos=\(photo),\(second)")
        #expect(deleted.code == 65 && deleted.stderr.contains("photo \(second) is deleted"), "\(deleted.stderr)")
        let unknown = UUID().uuidString.lowercased()
        try f.ok("record", "update", food, "photos=\(photo),\(unknown)")
        #expect(try f.ok("record", "show", food).contains("photos=\(photo),\(unknown)"))
        // A list that already names another record's photo (written before
        // these checks, or by an import) keeps it (a code review).
        let feedingID = try #require(UUID(uuidString: feeding))
        let focus = try #require(try JSONSerialization.jsonObject(with: Data(try f.ok("record", "show", feeding, "--json").utf8)) as? [String: Any])["focus"] as? String
        try Home.open(f.home).append([RecordEvent(kind: .put, record: feedingID, store: "feeding", focus: try #require(focus), at: nil,
                                                  fields: ["photos": .array([.string(photo)])]).body])
        try f.ok("record", "update", feeding, "photos=\(photo),\(unknown)")
        // Cleared by hand: the warning names no clash of devices as the cause, and says how to put it back.
        try f.ok("record", "update", food, "photos=")
        let shown = try f.run("record", "show", food)
        #expect(shown.stderr.contains("photo \(photo) of this record is not in its photos list (a list was written without it: by 'record update … photos=' or an import")
                && shown.stderr.contains("'famctl record update \(food) photos=\(photo)' puts it back"), "\(shown.stderr)")
    }

    /// A file cut short after a PNG's or a JPEG's first bytes is said as
    /// such, not as text; `--max-mb` says why the bound it passed is there.
    @Test func aCutImageAndAPhotoLimitOutOfRangeSayWhatTheyAre() throws {
        let (f, _, food, _) = try Self.home()
        for (bytes, what) in [([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A] as [UInt8], "the beginning of a PNG image, cut short or damaged (6 bytes)"),
                              ([0xFF, 0xD8], "the beginning of a JPEG image, cut short or damaged (2 bytes)"),
                              (Array("just some notes\n".utf8), "text"),
                              (Array("notes with é\n".utf8), "text")] {
            let path = f.root + "/cut.png"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let r = try f.run("photo", "add", food, path)
            #expect(r.code == 65 && r.stderr.contains("(it looks like \(what))"), "\(bytes): \(r.stderr)")
        }
        // An image's signature and no more, or an image cut short: not whole.
        let png = PhotoTests.png(100)
        let whole: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x4A, 0x46, 0xFF, 0xDA, 0x00, 0x08] + [UInt8](repeating: 3, count: 50)
        for (bytes, what) in [([0xFF, 0xD8, 0xFF] as [UInt8], "its JPEG ends before its image data (3 bytes)"),
                              (Array(whole.prefix(7)), "its JPEG ends before its image data (7 bytes)"),
                              ([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x4A, 0x46, 0x00, 0x00], "its JPEG ends before its image data (10 bytes)"),
                              ([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0xFF, 0xDA], "its JPEG has a segment of length 1 at byte 2 (damaged)"),
                              (Array(png.prefix(8)), "its PNG ends before its last chunk (IEND) (8 bytes)"),
                              (Array(png.prefix(png.count - 6)), "its PNG ends before its last chunk (IEND) (\(png.count - 6) bytes)"),
                              (Array(png.prefix(8)) + Array(png[33...]), "its PNG does not begin with a header chunk (damaged)"),
                              (Array("RIFF".utf8) + [100, 0, 0, 0] + Array("WEBPVP8 ".utf8) + [UInt8](repeating: 0, count: 20), "its WebP is 36 bytes of the 108 its header gives"),
                              ([0, 0, 0, 24] + Array("ftypheic".utf8) + [UInt8](repeating: 0, count: 12) + [0, 0, 1, 0] + Array("mdat".utf8), "its HEIC ends inside a box of 256 bytes at byte 24 (32 bytes)")] {
            let path = f.root + "/cut.img"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let r = try f.run("photo", "add", food, path)
            #expect(r.code == 65 && r.stderr.contains("\(path) is not a whole image: \(what); nothing was written")
                    && r.stderr.contains("add it once it is whole"), "\(bytes.prefix(12)): \(r.stderr)")
        }
        // A link to nothing: its target named.
        try FileManager.default.createSymbolicLink(atPath: f.root + "/gone.png", withDestinationPath: f.root + "/nothere.png")
        let dangling = try f.run("photo", "add", food, f.root + "/gone.png")
        #expect(dangling.code == 66 && dangling.stderr.contains("it is a symbolic link to \(f.root)/nothere.png, which is not there"), "\(dangling.stderr)")
        // Whole ones are taken, what follows a JPEG's scan or a PNG's end unjudged.
        for (name, bytes) in [("whole.jpg", whole), ("stray.jpg", Array(whole.prefix(8)) + [0x00, 0x00] + Array(whole[8...])), ("whole.png", png + [1, 2, 3]),
                              ("whole.heic", [0, 0, 0, 24] + Array("ftypheic".utf8) + [UInt8](repeating: 0, count: 12) + [0, 0, 0, 0] + Array("mdat".utf8) + [9, 9]),
                              ("whole.webp", Array("RIFF".utf8) + [24, 0, 0, 0] + Array("WEBPVP8 ".utf8) + [UInt8](repeating: 0, count: 20))] {
            try Data(bytes).write(to: URL(fileURLWithPath: f.root + "/" + name))
            let r = try f.run("photo", "add", food, f.root + "/" + name)
            #expect(r.code == 0, "\(name): \(r.stderr)")
        }
        for (value, hint) in [("0.0005", "Below a kilobyte no photo fits"), ("abc", "Give a number, for example --max-mb 25"),
                              ("300", "over the 256 MiB a shared folder or a WebDAV peer takes")] {
            let r = try f.run("settings", "photos", "--max-mb", value)
            #expect(r.code == 65 && r.stderr.contains(hint), "\(value): \(r.stderr)")
        }
        // One value refused: none of the others is stored (a review: those
        // before it were), and the cache's own bound has its own hint.
        let before = try f.ok("settings", "photos")
        for args in [["--max-mb", "7", "--prefetch", "yes"], ["--max-mb", "8", "--cache-mb", "abc"], ["--cache-mb", "42", "--prefetch", "yes"], ["--max-mb", "3", "--cache-mb", "0"]] {
            let r = try f.run(["settings", "photos"] + args)
            #expect(r.code == 65 && r.stderr.contains("nothing was changed"), "\(args): \(r.stderr)")
            #expect(try f.ok("settings", "photos") == before, "\(args) changed a setting")
        }
        let cache = try f.run("settings", "photos", "--cache-mb", "0")
        #expect(cache.stderr.contains("the cache keeps no fetched photo") && !cache.stderr.contains("no photo fits"), "\(cache.stderr)")
    }
}
