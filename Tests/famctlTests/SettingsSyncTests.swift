import Envelope
@testable import famctl
@testable import Replicator
import Foundation
import Testing

/// `settings sync` moves a device to another shared folder (or server): the
/// next round publishes there what of this device's events it does not
/// find, and a device that joins there later gets the whole history.
struct SettingsSyncTests {
    @Test func aFamilyMovesToAnotherFolderAndANewDeviceGetsEverything() throws {
        let family = try SharedFamily(["Dad", "Aunt"])
        let (mum, dad, aunt) = (family.mum, family.dad, family.members[1])
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        // The aunt's phone writes once, then never syncs again.
        try aunt.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        try aunt.ok("sync")
        try mum.ok("sync")
        #expect(try mum.ok("settings", "sync") == "sync: shared directory \(family.dir)")

        let moved = family.folderOwner.root + "/moved"
        for f in [mum, dad] {
            #expect(try f.ok("settings", "sync", "--dir", moved) == "sync: shared directory \(moved)")
        }
        // The new folder is empty: Mum's first round writes her segments there
        // again, and the others' events her log holds (the aunt's among them).
        let first = try mum.ok("sync")
        #expect(first.contains("of this device's segment(s) missing from the shared folder (from its log)"), "\(first)")
        #expect(first.contains("segment(s) of the other devices' events into the new location"), "\(first)")
        #expect(!(try mum.ok("sync")).contains("other devices' events"), "carried once")
        // The folder it syncs through already, given again: nothing moves, nothing is written again.
        #expect(try mum.ok("settings", "sync", "--dir", moved) == "sync: shared directory \(moved) (unchanged: this device syncs there already)")
        #expect(try Home.open(mum.home).replicator(probe: false).meta("carry_others") == nil, "not asked to carry again")
        // A new, empty drive mounted at the same path: the others' events are written there again.
        try FileManager.default.removeItem(atPath: moved)
        #expect(try mum.ok("settings", "sync", "--dir", moved).hasSuffix("(unchanged; the next sync writes there the other devices' events this device holds, whose folders are missing)"))
        #expect(FileManager.default.fileExists(atPath: moved), "created, as a new location is")
        #expect(try mum.ok("sync").contains("segment(s) of the other devices' events into the new location"))
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5")
        for f in [dad, mum, dad] { try f.ok("sync") }
        #expect(try mum.ok("digest") == dad.ok("digest"))

        // Grandma joins with an invitation made after the move: it names the new folder.
        let grandma = FamctlRunner()
        try grandma.ok("accept", try mum.ok("invite"), "--name", "Grandma")
        #expect(try grandma.ok("settings", "sync") == "sync: shared directory \(moved)")
        for f in [grandma, mum, dad, grandma] { try f.ok("sync") }
        // Grandma has everything, the aunt's record too, though the aunt never synced after the move.
        #expect(try grandma.ok("record", "list").split(separator: "\n").count == 3)
        #expect(try grandma.ok("digest") == mum.ok("digest"))

        // One location at a time; only http(s) peers; --json.
        #expect(try mum.ok("settings", "sync", "--peer", "https://dav.example/famctl/").hasSuffix("WebDAV peer https://dav.example/famctl/"))
        let json = try JSONSerialization.jsonObject(with: Data(try mum.ok("settings", "sync", "--json").utf8)) as? [String: Any]
        #expect(json?["peer"] as? String == "https://dav.example/famctl/" && json?["dir"] is NSNull)
        #expect(try mum.run("settings", "sync", "--dir", moved, "--peer", "https://x/").code == 64)
        #expect(try mum.run("settings", "sync", "--peer", "ftp://x/").code == 65)
    }
}

/// A mistyped `accept --dir` put right: the family's folder holds the
/// others' chains already, so they are not written there again in other
/// cuts beside their own segments.
struct MistypedFolderPutRightTests {
    /// Mum's photo, synced, that only the shared folder holds: her cache
    /// (1 MB) let it go once uploaded, and Dad never fetched it.
    static func photoAtTheFolderAlone(marker: String) throws -> (SharedFamily, photo: String, bytes: [UInt8]) {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        try mum.ok("settings", "photos", "--cache-mb", "1")
        let record = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let (file, bytes) = try PhotoTests.jpegFile(mum, 2_000_000, marker: marker)
        let photo = try mum.ok("photo", "add", record, file)
        for f in [mum, dad] { try f.ok("sync") }
        return (family, photo, bytes)
    }

    /// A photo no device holds any more (its author's cache evicted it
    /// once uploaded, the others never fetched it) is carried by a move
    /// from the old location to the new one: the old one can then go (a
    /// review: the events were carried, the photo left behind, and `photo
    /// get` said to wait for an upload that never came).
    @Test func aMoveCarriesThePhotosNoDeviceHolds() throws {
        let (family, photo, bytes) = try Self.photoAtTheFolderAlone(marker: "CARRIED")
        let (mum, dad) = (family.mum, family.dad)
        #expect(try mum.ok("photo", "list").contains("not fetched yet"), "the author's cache let it go once uploaded")
        let moved = family.folderOwner.root + "/moved"
        for f in [mum, dad] { try f.ok("settings", "sync", "--dir", moved) }
        let first = try mum.ok("sync")
        #expect(first.contains("and 1 photo(s)"), "\(first)")
        // The old folder gone: the photo is at the new one.
        try FileManager.default.removeItem(atPath: family.dir)
        try dad.ok("sync")
        try dad.ok("photo", "get", photo, "--out", dad.root + "/got.jpg")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dad.root + "/got.jpg")) == Data(bytes))
        #expect(try Home.open(mum.home).state.get(.carryPhotosFrom) == nil, "done once")
        #expect(!(try dad.run("sync").stderr.contains("photo(s) the new location lacks")))
    }

    /// Moved twice before a sync (a typo put right): the photos are still
    /// carried from the first location, where they are (a code review:
    /// the second move named the empty typo folder, and none was carried).
    @Test func twoMovesBeforeASyncCarryFromTheFirstLocation() throws {
        let (family, photo, bytes) = try Self.photoAtTheFolderAlone(marker: "TWICE")
        let (mum, dad) = (family.mum, family.dad)
        let typo = family.folderOwner.root + "/movde", moved = family.folderOwner.root + "/moved"
        try mum.ok("settings", "sync", "--dir", typo)
        try mum.ok("settings", "sync", "--dir", moved)
        #expect(try mum.ok("sync").contains("and 1 photo(s)"))
        try FileManager.default.removeItem(atPath: family.dir)
        try dad.ok("settings", "sync", "--dir", moved)
        try dad.ok("sync")
        try dad.ok("photo", "get", photo, "--out", dad.root + "/got.jpg")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dad.root + "/got.jpg")) == Data(bytes))
    }

    /// The old location out of reach: said, and tried again at the next
    /// sync, until it can be read.
    @Test func photosLeftAtAnOldLocationOutOfReachAreSaid() throws {
        let (family, photo, _) = try Self.photoAtTheFolderAlone(marker: "AWAY")
        let (mum, dad) = (family.mum, family.dad)
        let moved = family.folderOwner.root + "/moved"
        try FileManager.default.moveItem(atPath: family.dir, toPath: family.dir + ".unmounted")
        try mum.ok("settings", "sync", "--dir", moved)
        let away = try mum.run("sync")
        #expect(away.code == 0 && away.stderr.contains("1 photo(s) the new location lacks are to be read from the old one, \(family.dir), which holds none now")
                && away.stderr.contains("keep the old location until then"), "\(away.stderr)")
        // Mounted again: carried.
        try FileManager.default.moveItem(atPath: family.dir + ".unmounted", toPath: family.dir)
        let back = try mum.run("sync")
        #expect(back.code == 0 && back.stdout.contains("and 1 photo(s)") && !back.stderr.contains("the new location lacks"), "\(back.stdout) \(back.stderr)")
        try dad.ok("settings", "sync", "--dir", moved)
        try dad.ok("sync")
        try dad.ok("photo", "get", photo, "--out", dad.root + "/got.jpg")
    }

    /// A device that moves leaves a signed note in the old folder: a device
    /// still syncing there is told at its next sync, by name, when and
    /// where to (sealed with the family's key), and `status` keeps saying
    /// it until it follows; a note planted there under another key, or one
    /// older than the device's later events there, says nothing; and a
    /// device that comes back removes its note.
    @Test func aDeviceThatMovesLeavesANoteTheOthersReadAtOnce() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let moved = family.folderOwner.root + "/moved"
        #expect(try dad.ok("settings", "sync", "--dir", moved) == "sync: shared directory \(moved)")
        let dadHex = try Home.open(dad.home).deviceID.hex
        let familyID = try Home.open(dad.home).family.description
        let note = family.dir + "/" + familyID + "/" + dadHex + "/" + MovedNotice.fileName
        #expect(FileManager.default.fileExists(atPath: note))
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try dad.ok("sync")

        let round = try mum.run("sync")
        #expect(round.code == 0 && round.stderr.contains("famctl: warning: Dad (\(dadHex.prefix(12))) left this shared folder for another location (\(moved), as that device names it) on ")
                && round.stderr.contains("'famctl settings sync --dir PATH'"), "\(round.stderr)")
        #expect(!round.stderr.contains("none of the family's other devices' events"))
        let status = try mum.ok("status")
        #expect(status.contains("warning  Dad (\(dadHex.prefix(12))) left this shared folder"), "\(status)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try mum.ok("status", "--json").utf8)) as? [String: Any])
        let listed = try #require(json["movedAway"] as? [[String: Any]])
        #expect(listed.count == 1 && listed[0]["author"] as? String == dadHex && listed[0]["location"] as? String == moved, "\(listed)")

        // Mum follows: nothing more to say there, and Dad's record arrives.
        #expect(try mum.ok("settings", "sync", "--dir", moved) == "sync: shared directory \(moved)")
        let there = try mum.run("sync")
        #expect(there.code == 0 && !there.stderr.contains("left this shared folder"), "\(there.stderr)")
        #expect(!(try mum.ok("status")).contains("left this shared folder"))
        #expect(try mum.ok("record", "list").contains("mood=4"))

        // Dad comes back to the first folder: his note there goes at once (a review: at his next sync only).
        #expect(try dad.ok("settings", "sync", "--dir", family.dir) == "sync: shared directory \(family.dir)")
        #expect(!FileManager.default.fileExists(atPath: note))
        try dad.ok("sync")
        #expect(!FileManager.default.fileExists(atPath: note))
    }

    /// A move whose process was killed after it stored the new location
    /// and before it left its note: the next sync leaves it (a review: the
    /// family split, nobody told).
    @Test func aNoteOwedByAKilledMoveIsLeftByTheNextSync() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let moved = family.folderOwner.root + "/moved"
        try dad.ok("settings", "sync", "--dir", moved)
        let home = try Home.open(dad.home)
        let note = family.dir + "/" + home.family.description + "/" + home.deviceID.hex + "/" + MovedNotice.fileName
        // As a kill would leave it: the move stored, the note owed, not left.
        try FileManager.default.removeItem(atPath: note)
        try home.state.set(.movedNoteOwed, "dir:" + family.dir)
        try dad.ok("sync")
        #expect(FileManager.default.fileExists(atPath: note))
        #expect(try Home.open(dad.home).state.get(.movedNoteOwed) == nil)
        #expect(try mum.run("sync").stderr.contains("Dad (\(home.deviceID.short)) left this shared folder"))
    }

    /// The hint names the option of the new location's kind, not of this
    /// device's (a review: a device on a folder was told --peer URL... the
    /// other way round).
    @Test func theHintNamesTheNewLocationsKind() throws {
        let family = try SharedFamily()
        let mum = try Home.open(family.mum.home), dad = try Home.open(family.dad.home)
        let toServer = mum.movedAwayText(.init(author: dad.deviceID, at: Date(), location: "https://dav.example.org/family/"))
        #expect(toServer.contains("left this shared folder") && toServer.contains("'famctl settings sync --peer URL'"), "\(toServer)")
        let toFolder = mum.movedAwayText(.init(author: dad.deviceID, at: Date(), location: "/mnt/nas/famctl"))
        #expect(toFolder.contains("'famctl settings sync --dir PATH'"), "\(toFolder)")
    }

    /// What a note says only when it verifies as the device's whose folder
    /// holds it, and postdates its events here; and a move into the same
    /// folder under another path leaves none.
    @Test func aNoteThatIsNotTheDevicesOrIsOldSaysNothing() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let dadHome = try Home.open(dad.home)
        let (familyID, key) = try dadHome.currentKey()
        let folder = family.dir + "/" + familyID.description + "/" + dadHome.deviceID.hex + "/"
        // Signed with another key, put in Dad's folder.
        let stranger = SigningKey.generate()
        let forged = MovedNotice.make(family: familyID, signer: stranger, at: Date(), location: "/elsewhere", key: key)
        try Data(forged.bytes).write(to: URL(fileURLWithPath: folder + MovedNotice.fileName))
        var round = try mum.run("sync")
        #expect(round.code == 0 && !round.stderr.contains("left this shared folder"), "\(round.stderr)")
        // Dad's own, but older than an event of his that arrived since.
        let old = MovedNotice.make(family: familyID, signer: dadHome.identity.signing, at: Date().addingTimeInterval(-3600), location: "/elsewhere", key: key)
        try Data(old.bytes).write(to: URL(fileURLWithPath: folder + MovedNotice.fileName))
        round = try mum.run("sync")
        #expect(round.code == 0 && !round.stderr.contains("left this shared folder"), "\(round.stderr)")
        // Bytes changed in a note of his: not his any more.
        var altered = MovedNotice.make(family: familyID, signer: dadHome.identity.signing, at: Date().addingTimeInterval(3600), location: "/elsewhere", key: key).bytes
        altered[60] ^= 1
        #expect(MovedNotice(verifying: altered) == nil)
        try Data(altered).write(to: URL(fileURLWithPath: folder + MovedNotice.fileName))
        round = try mum.run("sync")
        #expect(round.code == 0 && !round.stderr.contains("left this shared folder"), "\(round.stderr)")
        try FileManager.default.removeItem(atPath: folder + MovedNotice.fileName)

        // The same folder through a link: Dad's move leaves no note there.
        let link = family.folderOwner.root + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: family.dir)
        #expect(try dad.ok("settings", "sync", "--dir", link) == "sync: shared directory \(link)")
        #expect(!FileManager.default.fileExists(atPath: folder + MovedNotice.fileName))
        round = try mum.run("sync")
        #expect(round.code == 0 && !round.stderr.contains("left this shared folder"), "\(round.stderr)")
    }

    /// From a review of the notes: a planted note that would have crashed
    /// every sync (a time past any clock, under a key of no member) says
    /// nothing; a move refused leaves no note; moving back and forth keeps
    /// the note just left; a warned device's own move forgets the warning;
    /// a folder renamed away is no place to leave one, and no warning.
    @Test func notesOfMovesThatAreNotOrCannotBeSayNothingFalse() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let dadHome = try Home.open(dad.home)
        let (familyID, key) = try dadHome.currentKey()
        let area = family.dir + "/" + familyID.description + "/"
        // Under a stranger's key, in a folder of its own, dated at the end of time.
        let stranger = SigningKey.generate()
        // Dad's own key, signed anew with a time past any clock (a review: every sync crashed).
        var far = Array(MovedNotice.make(family: familyID, signer: dadHome.identity.signing, at: Date(), location: "/x", key: key).bytes.dropLast(64))
        for i in 57..<65 { far[i] = 0xFF }
        far += far.withUnsafeBytes { dadHome.identity.signing.sign($0) }
        #expect(MovedNotice(verifying: far) == nil, "a time past any clock: not a note")
        try Data(far).write(to: URL(fileURLWithPath: area + dadHome.deviceID.hex + "/" + MovedNotice.fileName))
        let crash = try mum.run("sync")
        #expect(crash.code == 0 && !crash.stderr.contains("left this shared folder"), "\(crash.stderr)")
        try FileManager.default.removeItem(atPath: area + dadHome.deviceID.hex + "/" + MovedNotice.fileName)
        let planted = MovedNotice.make(family: familyID, signer: stranger, at: Date(), location: "/x", key: key)
        try FileManager.default.createDirectory(atPath: area + stranger.publicKey.hex, withIntermediateDirectories: true)
        try Data(planted.bytes).write(to: URL(fileURLWithPath: area + stranger.publicKey.hex + "/" + MovedNotice.fileName))
        var round = try mum.run("sync")
        #expect(round.code == 0 && !round.stderr.contains("left this shared folder"), "\(round.stderr)")
        // Garbage in a member's folder: passed over, and not read again while it stays as it is.
        let garbage = area + dadHome.deviceID.hex + "/" + MovedNotice.fileName
        try Data(repeating: 7, count: 100_000).write(to: URL(fileURLWithPath: garbage))
        round = try mum.run("sync")
        #expect(round.code == 0 && !round.stderr.contains("left this shared folder"), "\(round.stderr)")
        let refused = try Home.open(mum.home).replicator(probe: false).meta("moved_refused:" + dadHome.deviceID.hex + "/" + MovedNotice.fileName)
        #expect(refused != nil, "its tag is kept, so that it is not downloaded at every round")
        try FileManager.default.removeItem(atPath: garbage)

        // A move refused (a folder inside the home) leaves no note.
        let inside = try dad.run("settings", "sync", "--dir", dad.home + "/shared")
        #expect(inside.code != 0)
        #expect(!FileManager.default.fileExists(atPath: garbage), "a refused move left a note")

        // Dad moves to B and syncs there, Mum follows; Dad moves back to A:
        // his new note in B stays, though his old one in A is still there.
        let b = family.folderOwner.root + "/b"
        try dad.ok("settings", "sync", "--dir", b)
        try dad.ok("sync")
        round = try mum.run("sync")
        #expect(round.stderr.contains("Dad (\(dadHome.deviceID.short)) left this shared folder"), "\(round.stderr)")
        try mum.ok("settings", "sync", "--dir", b)
        #expect(!(try mum.ok("status")).contains("left this shared folder"), "the warning of the old folder is forgotten with it")
        try mum.ok("sync")
        try dad.ok("settings", "sync", "--dir", family.dir)
        let noteInB = b + "/" + familyID.description + "/" + dadHome.deviceID.hex + "/" + MovedNotice.fileName
        #expect(FileManager.default.fileExists(atPath: noteInB), "the note just left in B was taken for one of the same folder")
        round = try mum.run("sync")
        #expect(round.stderr.contains("Dad (\(dadHome.deviceID.short)) left this shared folder"), "\(round.stderr)")

        // Mum's folder B renamed, then Mum points at its new name: no note, no warning.
        let renamed = family.folderOwner.root + "/b2"
        try FileManager.default.moveItem(atPath: b, toPath: renamed)
        let moved = try mum.run("settings", "sync", "--dir", renamed)
        #expect(moved.code == 0 && !moved.stderr.contains("could not leave a note"), "\(moved.stderr)")
    }

    @Test func theOthersSegmentsAreNotWrittenAgainWhereTheyAre() throws {
        let mum = FamctlRunner(), dad = FamctlRunner()
        let dir = mum.root + "/shared", typo = mum.root + "/shraed"
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", dir)
        try mum.ok("subject", "add", "newMom")
        for i in 1...3 {
            try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i)")
            try mum.ok("sync")   // one segment each
        }
        let code = try mum.ok("invite")
        try mum.ok("sync")
        try dad.ok("accept", code, "--name", "Dad", "--dir", typo)
        try dad.ok("sync")
        // Dad's log holds Mum's chain only through the invitation; put right, he reads it from the family's folder.
        #expect(try dad.ok("settings", "sync", "--dir", dir) == "sync: shared directory \(dir)")
        let family = try #require(try FileManager.default.contentsOfDirectory(atPath: dir).first)
        let mumID = try #require(JSONSerialization.jsonObject(with: Data(try mum.ok("status", "--json").utf8)) as? [String: Any])["device"] as? String
        let mumFolder = dir + "/" + family + "/" + (mumID ?? "")
        let before = try FileManager.default.contentsOfDirectory(atPath: mumFolder).sorted()
        for _ in 0..<2 {
            let out = try dad.ok("sync")
            #expect(!out.contains("other devices' events into the new location"), "\(out)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: mumFolder).sorted() == before, "Mum's folder holds her segments alone")
        try mum.ok("sync")
        try dad.ok("sync")
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }
}

/// The peer an invitation code names is checked as a `--peer` is: a code
/// whose URL is of another protocol (`file://`, which libcurl would read)
/// is refused, and nothing is joined.
struct InvitePeerCheckTests {
    @Test func anInvitationNamingAFileURLIsRefused() throws {
        let mum = FamctlRunner(), dad = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--peer", "https://dav.example/famctl/")
        // As a tampered home, or a crafted code, would have it.
        let home = try Home.open(mum.home)
        try home.state.set(.syncPeer, "file:///tmp/")
        let r = try dad.run("accept", try mum.ok("invite"), "--name", "Dad")
        #expect(r.code == 65, "\(r.stderr)")
        #expect(r.stderr.contains("the invitation names a peer famctl will not use: --peer 'file:///tmp/' is not an http:// or https:// URL"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dad.home), "no home was made")
    }
}
