import Envelope
@testable import famctl
import Foundation
import Replicator
import Testing

/// A device's own segment damaged in the shared folder (a byte flipped,
/// cut short) holds up its events for everyone else: the author finds it
/// changed at its next round, reads it back, and writes it again from its
/// log; the others then take its events. A segment read back whole is
/// not read again while its file stays as it was.
struct OwnSegmentRepairTests {
    enum Damage: CaseIterable { case flippedByte, cutShort }

    /// Dad records a mood and syncs: his home, and the name and path of the
    /// segment that holds it in the shared folder.
    static func dadsNewSegment(_ family: SharedFamily) throws -> (home: Home, name: String, path: String) {
        try family.dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try family.dad.ok("sync")
        let home = try Home.open(family.dad.home)
        let folder = family.dir + "/" + home.family.description + "/" + home.deviceID.hex
        let newest = try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.sorted().last!
        return (home, newest, folder + "/" + newest)
    }

    @Test(arguments: Damage.allCases)
    func theAuthorWritesADamagedSegmentAgain(damage: Damage) throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let (dadHome, newest, path) = try Self.dadsNewSegment(family)
        var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        switch damage {
        case .flippedByte: bytes[bytes.count / 2] ^= 0xFF
        case .cutShort: bytes.removeLast(bytes.count / 3)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // Mum cannot take it: not yet arrived.
        #expect(try mum.ok("sync").contains("not yet arrived: " + dadHome.deviceID.hex + "/" + newest))
        // Dad's next round finds his file changed, and writes it again.
        let repaired = try dad.ok("sync")
        #expect(repaired.contains("repaired 1 of this device's segment(s)"), "\(repaired)")
        #expect(try dad.ok("sync").contains("repaired") == false, "a segment read back whole was repaired again")
        try mum.ok("sync")
        #expect(try mum.ok("digest") == dad.ok("digest"))
        #expect(try mum.ok("replay").hasSuffix("result: OK"))
    }

    /// Another device's segment damaged in the shared folder after every
    /// device had read it (a flipped bit; its author gone for good, so that
    /// nobody reads it again for a changed tag): a device that holds its
    /// events writes it back, byte for byte, when the file's turn to be
    /// read again comes (``Replicator/scrubOne(listed:own:done:tags:into:)``),
    /// so that devices joining later do not wait for its events for good
    /// (a review over WebDAV, where a flipped bit keeps Apache's ETag).
    @Test func aHolderWritesBackAnotherDevicesDamagedSegment() throws {
        let family = try SharedFamily()
        let mum = family.mum
        let (_, newest, path) = try Self.dadsNewSegment(family)
        try mum.ok("sync")
        let original = [UInt8](FileManager.default.contents(atPath: path)!)
        var bytes = original
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        // Mum's turns come (each round reads one file again; the time of
        // the last turn forgotten to make the next due): within as many
        // rounds as files, Dad's is read and written back.
        var restored = false
        for _ in 0..<12 where !restored {
            try Home.open(mum.home).replicator(probe: false).setMeta("scrub_at", nil)
            let out = try mum.ok("sync")
            #expect(!out.contains("not yet arrived"), "\(out)")
            restored = out.contains("wrote back 1 segment(s) of other devices")
        }
        #expect(restored, "Mum never wrote back Dad's damaged \(newest)")
        let putBack = [UInt8](FileManager.default.contents(atPath: path)!) == original
        #expect(putBack, "the file is not its original bytes")
        // A round whose turn is not due reads nothing again.
        let quiet = try mum.ok("sync")
        #expect(!quiet.contains("wrote back"), "\(quiet)")
    }

    /// A segment is read back once after it is written, then only when its
    /// file changes: a round with nothing new reads no file.
    @Test func aSegmentReadBackWholeIsNotReadAgain() throws {
        let family = try SharedFamily()
        let dad = family.dad
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try dad.ok("sync")
        let home = try Home.open(dad.home)
        let peer = CountingPeer(try home.replicator().peer)
        let pulled = try Replicator(log: home.log, peer: peer, family: home.family, me: home.deviceID)
            .pull { try home.ingest(batches: $0, onIngested: $1) }
        #expect(pulled.repaired == 0)
        #expect(peer.reads == 0, "a round with nothing new read \(peer.reads) file(s)")
    }
}

/// A segment created in the shared folder whose creator never learnt it
/// (the process killed just after the file landed, or the server's answer
/// lost): the device still knows the file as its own, and compaction
/// deletes it, rather than leaving it in its folder for good once the
/// next round writes a segment of another range (a robustness trial).
struct LostCreateTests {
    /// A peer whose creates go through `create` (given the inner peer):
    /// one that writes and then fails as if the answer had been lost, or
    /// one that fails without writing.
    final class CreateHookPeer: Peer, @unchecked Sendable {
        let inner: any Peer
        let hook: (any Peer, String, [UInt8]) throws(PeerError) -> Void
        init(_ inner: any Peer, create hook: @escaping (any Peer, String, [UInt8]) throws(PeerError) -> Void) {
            self.inner = inner
            self.hook = hook
        }
        var label: String { inner.label }
        func changes(since token: String?, limit: Int) throws(PeerError) -> ChangePage { try inner.changes(since: token, limit: limit) }
        func create(_ path: String, _ bytes: [UInt8]) throws(PeerError) { try hook(inner, path, bytes) }
        func replace(_ path: String, _ bytes: [UInt8], expected: String?) throws(PeerError) -> String { try inner.replace(path, bytes, expected: expected) }
        func get(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) { try inner.get(path) }
        func getOnce(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) { try inner.getOnce(path) }
        func deleteOnce(_ path: String) throws(PeerError) { try inner.deleteOnce(path) }
        func delete(_ path: String) throws(PeerError) { try inner.delete(path) }

        /// Creates, then fails as if the answer had been lost.
        static func losingAnswers(_ inner: any Peer) -> CreateHookPeer {
            CreateHookPeer(inner) { (peer, path, bytes) throws(PeerError) in
                try peer.create(path, bytes)
                throw .unavailable("the answer was lost")
            }
        }

        /// Fails without creating (a server that refused, a folder gone).
        static func refusing(_ inner: any Peer) -> CreateHookPeer {
            CreateHookPeer(inner) { (_, _, _) throws(PeerError) in throw .unavailable("refused") }
        }
    }

    static func own(_ home: Home) throws -> [String: Int64] {
        var out: [String: Int64] = [:]
        try home.log.database.statement("SELECT name, size FROM r_own WHERE family = ?1").forEachRow([.blob(home.family.bytes)]) { out[$0.text(0)] = $0.int(1) }
        return out
    }

    /// A create that failed without the file landing leaves a row for a
    /// file that is not there: the next full listing forgets it rather
    /// than writing it (a share that takes no writes still lets the round
    /// pull), and the next publish writes its events.
    @Test func aSegmentThatNeverLandedIsForgotten() throws {
        let family = try SharedFamily()
        let dad = family.dad
        let home = try Home.open(dad.home)
        let folder = family.dir + "/" + home.family.description + "/" + home.deviceID.hex
        let before = try Set(FileIO.list(folder))
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        let refusing = try Replicator(log: home.log, peer: CreateHookPeer.refusing(try home.replicator().peer), family: home.family, me: home.deviceID)
        #expect(throws: PeerError.self) { try refusing.publish() }
        let rows = try Self.own(home)
        let phantom = rows.filter { $0.value == Replicator.unconfirmedSize }.map(\.key)
        #expect(phantom.count == 1, "\(rows)")
        #expect(try Set(FileIO.list(folder)) == before)
        // A round whose publish fails again still pulls, and forgets the row.
        _ = try refusing.pull { try home.ingest(batches: $0, onIngested: $1) }
        #expect(try Self.own(home)[phantom[0]] == nil)
        // The next publish writes the same range (nothing new since) as a
        // segment of its own, confirmed.
        try dad.ok("sync")
        #expect(try FileIO.list(folder).contains(phantom[0]))
        #expect((try Self.own(home)[phantom[0]] ?? Replicator.unconfirmedSize) > 0)
        try family.mum.ok("sync")
        #expect(try family.mum.ok("digest") == dad.ok("digest"))
    }

    /// Merging small segments is housekeeping: a server with no room for
    /// the merged file leaves them as they are, and the round's events are
    /// published all the same (a WebDAV review: every round ended with exit
    /// 73, nothing said to wait, while the server was nearly full).
    @Test func aMergeThatFailsLeavesTheSmallSegmentsAndPublishes() throws {
        let family = try SharedFamily()
        let dad = family.dad
        let home = try Home.open(dad.home)
        let folder = family.dir + "/" + home.family.description + "/" + home.deviceID.hex
        // Room for a one-event segment, not for the merged file.
        let cramped = CreateHookPeer(try home.replicator().peer) { (peer, path, bytes) throws(PeerError) in
            guard bytes.count < 2_000 else { throw .full("no room for \(bytes.count) bytes") }
            try peer.create(path, bytes)
        }
        let replicator = try Replicator(log: home.log, peer: cramped, family: home.family, me: home.deviceID)
        var failed: Replicator.PublishReport?
        for i in 0..<(2 * Replicator.compactAfter) where failed == nil {
            try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i % 5 + 1)")
            let before = try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.count
            let report = try replicator.publish()
            #expect(report.events == 1 && report.segments.count == 1, "\(report)")
            if report.compactionFailure != nil {
                failed = report
                #expect(report.compacted == 0)
                #expect(try FileIO.list(folder).filter { $0.hasSuffix(".seg") }.count == before + 1, "the small segments stay, the new one beside them")
            }
        }
        #expect(failed != nil, "no merge was tried")
        try family.mum.ok("sync")
        #expect(try family.mum.ok("digest") == dad.ok("digest"))
    }

    @Test func aSegmentWhoseCreateWasNotAnsweredIsCompactedAway() throws {
        let family = try SharedFamily()
        let dad = family.dad
        let home = try Home.open(dad.home)
        let folder = family.dir + "/" + home.family.description + "/" + home.deviceID.hex
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        let losing = try Replicator(log: home.log, peer: CreateHookPeer.losingAnswers(try home.replicator().peer), family: home.family, me: home.deviceID)
        #expect(throws: PeerError.self) { try losing.publish() }
        let lost = try Set(FileIO.list(folder).filter { $0.hasSuffix(".seg") })
        func own() throws -> Set<String> {
            var out = Set<String>()
            try home.log.database.statement("SELECT name FROM r_own WHERE family = ?1").forEachRow([.blob(home.family.bytes)]) { out.insert($0.text(0)) }
            return out
        }
        #expect(lost.isSubset(of: try own()), "the landed file is not known as this device's own")
        // More records and rounds: compaction merges the small segments,
        // the one whose answer was lost among them.
        for i in 0..<10 {
            try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i % 5 + 1)")
            try dad.ok("sync")
        }
        let files = try Set(FileIO.list(folder).filter { $0.hasSuffix(".seg") })
        let owned = try own()
        #expect(files == owned, "files \(files.sorted()) but own \(owned.sorted())")
        #expect(files.count < 8, "\(files.count) segments: not compacted")
        try family.mum.ok("sync")
        #expect(try family.mum.ok("digest") == dad.ok("digest"))
    }
}

/// A copy of a device's segment put in its folder under a name that says
/// later seqs: the device would not write past what its folder names (a
/// fork, were those events real), so its writes wait, until a sync reads
/// the copy and finds only events its log holds; status then names the
/// file (a user trial: anyone with the folder could stop a device writing
/// until the file was removed by hand).
struct MisnamedCopyTests {
    @Test func aRenamedCopyOfOwnEventsHoldsWritesOnlyUntilASyncReadsIt() throws {
        let family = try SharedFamily()
        let dad = family.dad
        let (home, newest, path) = try OwnSegmentRepairTests.dadsNewSegment(family)
        let name = try #require(SegmentName(parsing: newest))
        let head = try home.log.head(of: home.deviceID, in: home.family).seq
        // The same bytes, named as if they held seqs past the log's head.
        let forged = newest.replacingOccurrences(of: String(format: "%016llx-%016llx", name.firstSeq, name.lastSeq),
                                                 with: String(format: "%016llx-%016llx", head + 5, head + 9))
        #expect(forged != newest)
        let folder = (path as NSString).deletingLastPathComponent
        try FileManager.default.copyItem(atPath: path, toPath: folder + "/" + forged)
        let held = try dad.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        #expect(held.code == 75 && held.stderr.contains("writing now would fork its chain"), "\(held.stderr)")
        let synced = try dad.run("sync")
        // Said by the sync that finds it too, once (a fuzz review: only `status` did).
        #expect(synced.code == 0 && synced.stdout.contains("misplaced: \(home.deviceID.hex)/\(forged): a copy of seqs \(name.firstSeq)–\(name.lastSeq)"), "\(synced.stdout)\(synced.stderr)")
        #expect(try !dad.ok("sync").contains("misplaced"))
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        let status = try dad.ok("status")
        #expect(status.contains("misplaced: \(home.deviceID.hex)/\(forged): a copy of seqs \(name.firstSeq)–\(name.lastSeq) under a name that says seqs \(head + 5)–\(head + 9) (nothing in it was refused; the file can be removed from the shared folder: \(family.dir)/\(home.family.description)/\(home.deviceID.hex)/\(forged))"), "\(status)")
        #expect(!status.contains("refused:"), "nothing of a misplaced copy is refused: \(status)")
        let statusJSON = try #require(JSONSerialization.jsonObject(with: Data(dad.ok("status", "--json").utf8)) as? [String: Any])
        #expect((statusJSON["misplacedFiles"] as? [[String: String]])?.map { $0["file"] } == ["\(home.deviceID.hex)/\(forged)"], "\(statusJSON)")
        #expect((statusJSON["refusedEvents"] as? [Any])?.isEmpty == true, "\(statusJSON)")
        try dad.ok("sync")
        try family.mum.ok("sync")
        #expect(try family.mum.ok("digest") == dad.ok("digest"))
    }

    /// Read in the same round as the original (whose events the log did
    /// not hold yet), the copy is taken for what it is all the same, not
    /// left "not yet arrived" for an hour.
    @Test func aRenamedCopyReadWithItsOriginalIsNamedAtOnce() throws {
        let family = try SharedFamily()
        let (home, newest, path) = try OwnSegmentRepairTests.dadsNewSegment(family)
        let name = try #require(SegmentName(parsing: newest))
        let forged = newest.replacingOccurrences(of: String(format: "%016llx-%016llx", name.firstSeq, name.lastSeq),
                                                 with: String(format: "%016llx-%016llx", name.lastSeq + 40, name.lastSeq + 41))
        try FileManager.default.copyItem(atPath: path, toPath: (path as NSString).deletingLastPathComponent + "/" + forged)
        let out = try family.mum.run("sync")
        #expect(out.code == 0 && !out.stdout.contains("not yet arrived"), "\(out.stdout)")
        let status = try family.mum.ok("status")
        #expect(status.contains("misplaced: \(home.deviceID.hex)/\(forged): a copy of seqs \(name.firstSeq)–\(name.lastSeq)"), "\(status)")
        #expect(try family.mum.ok("digest") == family.dad.ok("digest"))
    }

    /// Another author's segment renamed into a device's folder holds none
    /// of that device's events: its writes wait only until a sync reads it.
    @Test func anotherAuthorsSegmentInADevicesFolderHoldsItBackOnlyUntilRead() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let (_, newest, path) = try OwnSegmentRepairTests.dadsNewSegment(family)
        let mumHome = try Home.open(mum.home)
        let name = try #require(SegmentName(parsing: newest))
        let head = try mumHome.log.head(of: mumHome.deviceID, in: mumHome.family).seq
        let planted = newest.replacingOccurrences(of: String(format: "%016llx-%016llx", name.firstSeq, name.lastSeq),
                                                  with: String(format: "%016llx-%016llx", head + 90, head + 90))
            .replacingOccurrences(of: name.author.hex, with: mumHome.deviceID.hex)
        let mumFolder = family.dir + "/" + mumHome.family.description + "/" + mumHome.deviceID.hex
        try FileManager.default.copyItem(atPath: path, toPath: mumFolder + "/" + planted)
        #expect(try mum.run("subject", "add", "pregnancy").code == 75)
        let found = try JSONSerialization.jsonObject(with: Data(try mum.ok("sync", "--json").utf8)) as? [String: Any]
        #expect((found?["misplaced"] as? [[String: String]])?.map { $0["file"] } == ["\(mumHome.deviceID.hex)/\(planted)"], "\(String(describing: found))")
        try mum.ok("subject", "add", "pregnancy")
        let status = try mum.ok("status")
        #expect(status.contains("misplaced: \(mumHome.deviceID.hex)/\(planted): a segment of author \(name.author.short) under a name of this folder's"), "\(status)")
        // A copy under its own name, in the wrong folder: said as such.
        try FileManager.default.copyItem(atPath: path, toPath: mumFolder + "/" + newest)
        try mum.ok("sync")
        let again = try mum.ok("status")
        #expect(again.contains("misplaced: \(mumHome.deviceID.hex)/\(newest): a segment of author \(name.author.short) under its own name, in device \(mumHome.deviceID.short)'s folder"), "\(again)")
        for r in [mum, dad, mum] { try r.ok("sync") }
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }

    /// A segment moved (not copied) out of its author's folder into
    /// another device's: its events are read from it, each verified, by a
    /// device that had none of them, and the file is not said to be
    /// removable until its author's own folder holds them again (a
    /// security review: they were left out, and the only copy called
    /// removable).
    @Test func aSegmentMovedIntoAnotherDevicesFolderIsReadFromThere() throws {
        let family = try SharedFamily(["Dad", "Gran"])
        let (mum, dad, gran) = (family.mum, family.dad, family.members[1])
        let (dadHome, newest, path) = try OwnSegmentRepairTests.dadsNewSegment(family)
        let mumHome = try Home.open(mum.home)
        let moved = family.dir + "/" + mumHome.family.description + "/" + mumHome.deviceID.hex + "/" + newest
        try FileManager.default.moveItem(atPath: path, toPath: moved)
        let synced = try gran.ok("sync")
        #expect(try gran.ok("record", "list").contains("mood=4"), "the moved segment's events were not read")
        #expect(synced.contains("a segment of author \(dadHome.deviceID.short) under its own name, in device \(mumHome.deviceID.short)'s folder; its events were read from it")
                && synced.contains("remove this copy after that") && !synced.contains("the file can be removed"), "\(synced)")
        let status = try gran.ok("status")
        #expect(status.contains("its author's next sync writes its events in its own folder again; remove this copy after that from the shared folder: \(moved))"), "\(status)")
        // Dad's next sync writes it in his folder again; all agree.
        try dad.ok("sync")
        #expect(FileManager.default.fileExists(atPath: path), "the author did not write its segment again")
        for r in [mum, gran, dad, mum] { try r.ok("sync") }
        #expect(Set(try [mum, dad, gran].map { try $0.ok("digest") }).count == 1)
    }
}

/// A peer that counts the objects read through it.
final class CountingPeer: Peer, @unchecked Sendable {
    let inner: any Peer
    private(set) var reads = 0
    init(_ inner: any Peer) { self.inner = inner }
    var label: String { inner.label }
    func changes(since token: String?, limit: Int) throws(PeerError) -> ChangePage { try inner.changes(since: token, limit: limit) }
    func create(_ path: String, _ bytes: [UInt8]) throws(PeerError) { try inner.create(path, bytes) }
    func replace(_ path: String, _ bytes: [UInt8], expected: String?) throws(PeerError) -> String { try inner.replace(path, bytes, expected: expected) }
    func get(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) { reads += 1; return try inner.get(path) }
    func getOnce(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) { reads += 1; return try inner.getOnce(path) }
    func deleteOnce(_ path: String) throws(PeerError) { try inner.deleteOnce(path) }
    func delete(_ path: String) throws(PeerError) { try inner.delete(path) }
}

/// A segment that verifies as a file (its name, its structure) but holds
/// an event whose signature does not: the round says so, naming the file,
/// and takes its other events.
struct RefusedEventsTests {
    @Test func aForgedEventInAWellFormedSegmentIsReported() throws {
        let family = try SharedFamily()
        let (mum, dad, dir) = (family.mum, family.dad, family.dir)
        for i in 0..<3 { try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i + 1)") }
        try dad.ok("sync")
        let home = try Home.open(dad.home)
        let head = try home.log.head(of: home.deviceID, in: home.family).seq
        let envs = try home.log.chain(of: home.deviceID, in: home.family, seqs: (head - 2)...head)
        var bytes = envs[2].bytes
        bytes[SyncEnvelope.headerCount + 4] ^= 0x01   // in the ciphertext: the signature no longer holds
        let forged = Segment(envelopes: Array(envs.prefix(2)) + [try SyncEnvelope(decoding: bytes)])
        let encoded = forged.encoded()
        let name = forged.name(for: encoded).description
        try Data(encoded).write(to: URL(fileURLWithPath: dir + "/" + home.family.description + "/" + home.deviceID.hex + "/" + name))
        let out = try mum.ok("sync")
        // The reason status says too.
        #expect(out.contains("refused: \(home.deviceID.hex)/\(name): 1 event(s) that do not verify (a bad signature); its other events were checked on their own"), "\(out)")
        let json = try mum.ok("sync", "--json")
        #expect(json.contains("\"refused\""))
        #expect(try mum.ok("digest") == dad.ok("digest"))
        // Later rounds do not read it again, but status names it for as
        // long as the shared folder holds it (a user trial: only the first
        // round's output said so).
        #expect(!(try mum.ok("sync")).contains("refused"))
        let status = try mum.ok("status")
        // Mum holds a good copy of each of its seqs (Dad's own segment): nothing waits for it.
        #expect(status.contains("refused: \(home.deviceID.hex)/\(name): 1 event(s) that do not verify (a bad signature); its other events were checked on their own; "
                                + "this device holds a good copy of each of its seqs since: the file can be removed from the shared folder: \(dir)/\(home.family.description)/\(home.deviceID.hex)/\(name)"), "\(status)")
        let statusJSON = try JSONSerialization.jsonObject(with: Data(try mum.ok("status", "--json").utf8)) as! [String: Any]
        #expect((statusJSON["refusedEvents"] as? [[String: String]])?.map { $0["file"] } == ["\(home.deviceID.hex)/\(name)"], "\(statusJSON)")
        try FileManager.default.removeItem(atPath: dir + "/" + home.family.description + "/" + home.deviceID.hex + "/" + name)
        try mum.ok("sync")
        #expect(!(try mum.ok("status")).contains("refused:"))
    }
}

/// Something in the shared folder that is not a file, under a segment's
/// name (a FIFO a sync tool or a prankster left there): opening a FIFO for
/// reading waits for a writer, for ever. A round must not wait on it: the
/// file is "not yet arrived", the author writes its segment again, and the
/// others take its events.
struct NotAFileInTheSharedFolderTests {
    @Test func aFIFONamedLikeASegmentDoesNotHoldUpASync() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let (dadHome, newest, path) = try OwnSegmentRepairTests.dadsNewSegment(family)
        #expect(unlink(path) == 0)
        #expect(mkfifo(path, 0o644) == 0)

        // A watchdog: should the FIFO still be there 20 s on, a famctl
        // waits on it; opening it for writing lets that reader go (it reads
        // an empty file), as often as one comes back, so that the test fails
        // rather than hangs.
        let finished = Flag(), hung = Flag()
        let watchdog = Thread {
            let deadline = Date().addingTimeInterval(20)
            while !finished.isSet {
                usleep(20_000)
                guard Date() > deadline else { continue }
                let fd = open(path, O_WRONLY | O_NONBLOCK)
                if fd >= 0 { hung.set(); close(fd) }
            }
        }
        watchdog.start()
        defer { finished.set() }
        let out = try mum.run("sync")
        #expect(!hung.isSet, "famctl sync waited on a FIFO in the shared folder")
        #expect(out.code == 0 && out.stdout.contains("not yet arrived: " + dadHome.deviceID.hex + "/" + newest), "\(out.code): \(out.stdout) \(out.stderr)")
        #expect(out.stdout.contains("is a FIFO, not a file; move it out of the shared folder"), "no next step: \(out.stdout)")
        #expect(try mum.ok("digest") != dad.ok("digest"), "Mum took events from a FIFO")

        // Dad's next round finds his file is not what he wrote, and writes it again.
        let repaired = try dad.ok("sync")
        #expect(repaired.contains("repaired 1 of this device's segment(s)"), "\(repaired)")
        var st = stat()
        #expect(lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG)
        #expect(!hung.isSet, "famctl sync waited on a FIFO in its own folder")
        try mum.ok("sync")
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }
}

/// A directory, not empty, in the place of a device's own segment: it
/// cannot be written again over it. The author says so at each `sync` (once
/// in a `--watch`), naming the path and the seqs the others miss, exit 0;
/// once the directory is gone, its next round writes the segment again.
struct OwnSegmentInTheWayTests {
    @Test func aDirectoryInPlaceOfAnOwnSegmentIsSaidAndThenCleared() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let (_, _, path) = try OwnSegmentRepairTests.dadsNewSegment(family)
        #expect(unlink(path) == 0)
        #expect(mkdir(path, 0o755) == 0 && FileManager.default.createFile(atPath: path + "/keep", contents: Data([1])))

        let out = try dad.run("sync")
        #expect(out.code == 0, "\(out.code): \(out.stderr)")
        #expect(out.stderr.contains("warning: this device's segment \(path) cannot be read by the others, who miss the events it holds (seqs ")
                && out.stderr.contains("the path is a directory, not a file") && out.stderr.contains("Remove or rename what is at that path"), "\(out.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(try dad.ok("sync", "--json").utf8)) as? [String: Any]
        #expect((json?["ownNotRestored"] as? [[String: Any]])?.count == 1, "\(String(describing: json))")
        try mum.ok("sync")
        #expect(try mum.ok("digest") != dad.ok("digest"))

        #expect((try? FileManager.default.removeItem(atPath: path)) != nil)
        let cleared = try dad.run("sync")
        #expect(cleared.code == 0 && !cleared.stderr.contains("warning") && cleared.stdout.contains("wrote again 1 of this device's segment(s)"),
                "\(cleared.stdout) \(cleared.stderr)")
        try mum.ok("sync")
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }

    /// A file in place of the device's whole folder: nothing of it can be
    /// written there, and the round still pulls the others' events and
    /// prints its report before the error, each missing segment named.
    @Test func aFileInPlaceOfTheOwnFolderStillLetsTheRoundPull() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let (_, _, path) = try OwnSegmentRepairTests.dadsNewSegment(family)
        let folder = (path as NSString).deletingLastPathComponent
        try FileManager.default.removeItem(atPath: folder)
        #expect(FileManager.default.createFile(atPath: folder, contents: Data()))
        let record = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try mum.ok("sync")
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")

        let out = try dad.run("sync")
        // (65: waiting will not make it a folder, as over WebDAV.)
        #expect(out.code == 65 && out.stdout.contains("pulled 1 new event(s)") && out.stderr.contains("\(folder) is not a folder (a file is in its place)")
                && out.stderr.contains("Move the file or link away: a folder inside the shared folder, the next sync makes again") && out.stderr.contains("cannot be read by the others, who miss the events it holds")
                && out.stderr.contains("it is missing, and writing it again failed") && !out.stderr.contains("Fatal"), "exit \(out.code): \(out.stdout) \(out.stderr)")
        #expect(try dad.ok("record", "list").contains(record), "the others' events are pulled")
        try FileManager.default.removeItem(atPath: folder)
        try dad.ok("sync")
        try mum.ok("sync")
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }
}

/// A flag set once, read from another thread.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
