import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Replicator
import Testing

/// A device whose home was copied onto a second install (a restored backup,
/// a cloned phone: what causes forks in practice) writes on both: two
/// branches of one chain. Every replica that receives both, in any order and
/// in any batches, ends on the same state: the author's events up to where
/// the branches part, none after, never "whichever came first".
struct ForkConvergenceTests {
    /// One forked family, made once: Dad wrote three records, his home was
    /// copied, then each copy wrote records of its own.
    struct Forked {
        let family: SharedFamily
        let clone: String
        let dad: DeviceID
        /// Dad's seq where the two branches part.
        let point: UInt64
        let prefix: [String], branches: [String]
        /// Every event of the family, from Mum, Dad and the clone.
        let events: [[UInt8]]

        init() throws {
            family = try SharedFamily()
            let (mum, dad) = (family.mum, family.dad)
            var prefix: [String] = []
            for i in 0..<3 { prefix.append(try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i + 1)")) }
            clone = family.folderOwner.root + "/clone"
            try FileManager.default.copyItem(atPath: dad.home, toPath: clone)
            let dadHome = try Home.open(dad.home)
            self.dad = dadHome.deviceID
            point = try dadHome.log.head(of: dadHome.deviceID, in: dadHome.family).seq + 1
            var branches: [String] = []
            for i in 0..<4 { branches.append(try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i % 5 + 1)", "note=dad-\(i)")) }
            for i in 0..<3 {
                branches.append(try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i + 2)", "note=clone-\(i)"]))
            }
            self.prefix = prefix
            self.branches = branches
            var events = Set<[UInt8]>()
            for home in [mum.home, dad.home, clone] {
                let h = try Home.open(home)
                try h.log.forEachEvent(in: h.family) { events.insert($0.bytes) }
            }
            self.events = Array(events)
        }
    }

    @Test(.againstAHang)
    func replicasAgreeAfterAForkWhateverTheyMetFirst() throws {
        let forked = try Forked()
        var digests: [String] = []
        // Four replicas per seed, each a fresh copy of Mum's home from before
        // Dad's records: both branches arrive in a random order, in random
        // batches, twice (a second round, as sync re-reads what it holds).
        for seed in 0..<4 as Range<UInt64> {
            var rng = SplitMixRNG(seed: seed)
            let copy = forked.family.folderOwner.root + "/replica-\(seed)"
            try FileManager.default.copyItem(atPath: forked.family.mum.home, toPath: copy)
            let home = try Home.open(copy)
            for _ in 0..<2 {
                var events = forked.events.shuffled(using: &rng)
                while !events.isEmpty {
                    let n = Int(rng.next() % 5) + 1
                    _ = try home.ingest(Array(events.prefix(n)))
                    events.removeFirst(min(n, events.count))
                }
            }
            let reopened = try Home.open(copy)
            #expect(reopened.forkPoints == [forked.dad: forked.point], "seed \(seed): fork points \(reopened.forkPoints)")
            let shown = Set(try reopened.projector.records().map { $0.id.uuidString.lowercased() })
            #expect(forked.prefix.allSatisfy(shown.contains), "seed \(seed): a record from before the fork is missing")
            #expect(!forked.branches.contains(where: shown.contains), "seed \(seed): a record past the fork point is shown")
            let mum = forked.family.mum
            let replay = try mum.run(["--home", copy, "replay"])
            #expect(replay.code == 0 && replay.stdout.hasSuffix("result: OK\n"), "seed \(seed): \(replay.stdout.suffix(300)) \(replay.stderr)")
            let status = try mum.ok(["--home", copy, "status"])
            #expect(status.contains("author \(forked.dad.short): nothing from seq \(forked.point) on is accepted or shown"), "\(status)")
            digests.append(Hex.encode(try reopened.projector.digest()))
        }
        #expect(Set(digests).count == 1, "replicas disagree: \(digests)")

        // A process killed after an ingest that found the fork, before the
        // rebuild after it: the projection still shows what it had (here:
        // nothing), and says it was built without the fork. Opening rebuilds it.
        let replica = forked.family.folderOwner.root + "/replica-0"
        do {
            let home = try Home.open(replica)
            try home.log.database.execute("DELETE FROM p_entities")
            try home.state.set(.projectionForks, "")
        }
        let reopened = try Home.open(replica)
        #expect(Hex.encode(try reopened.projector.digest()) == digests[0], "not rebuilt on open")
        #expect(try reopened.state.get(.projectionForks) == reopened.forkPointsText)
    }

    /// The owner's home copied, and each copy writing: one branch demotes
    /// Dad, the other adds a record. The household stops at the owner's fork
    /// point on every replica, even one that applied the demotion before it
    /// knew of the fork (its rebuild drops the stored household event).
    @Test(.againstAHang)
    func aForkedOwnersHouseholdStopsAtItsForkPoint() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let clone = family.folderOwner.root + "/owner-clone"
        try FileManager.default.copyItem(atPath: mum.home, toPath: clone)
        let mumHome = try Home.open(mum.home)
        let owner = mumHome.deviceID
        let point = try mumHome.log.head(of: owner, in: mumHome.family).seq + 1
        let dadID = try Home.open(dad.home).deviceID
        // The clone first: the demotion is published at once, and a home
        // that finds its own chain past its log in the folder does not write.
        try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2"])
        let folder = family.dir + "/" + mumHome.family.description + "/" + owner.hex
        let known = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        try mum.ok("member", "role", "Dad", "viewer")
        var all = Set<[UInt8]>()
        for home in [mum.home, dad.home, clone] {
            let h = try Home.open(home)
            try h.log.forEachEvent(in: h.family) { all.insert($0.bytes) }
        }
        var digests: [String] = []
        for seed in 0..<6 as Range<UInt64> {
            var rng = SplitMixRNG(seed: seed)
            let copy = family.folderOwner.root + "/dad-replica-\(seed)"
            try FileManager.default.copyItem(atPath: dad.home, toPath: copy)
            let home = try Home.open(copy)
            for _ in 0..<2 {
                var events = Array(all).shuffled(using: &rng)
                while !events.isEmpty {
                    let n = Int(rng.next() % 4) + 1
                    _ = try home.ingest(Array(events.prefix(n)))
                    events.removeFirst(min(n, events.count))
                }
            }
            let reopened = try Home.open(copy)
            #expect(reopened.forkPoints == [owner: point], "seed \(seed): \(reopened.forkPoints)")
            #expect(reopened.projector.household.members[dadID]?.role == .member, "seed \(seed): the demotion past the fork point still counts")
            let replay = try mum.run(["--home", copy, "replay"])
            #expect(replay.code == 0, "seed \(seed): \(replay.stdout.suffix(300)) \(replay.stderr)")
            digests.append(Hex.encode(try reopened.projector.digest()))
        }
        #expect(Set(digests).count == 1, "replicas disagree: \(digests)")
        // The owner is told what an owner can do: nobody can invite it back
        // (a review: it was told to ask the owner for an invitation).
        // The demotion not delivered yet where the clone publishes its branch.
        try Self.undelivered(folder, since: known, aside: family.folderOwner.root + "/aside") { _ = try mum.run(["--home", clone, "sync"]) }
        let synced = try mum.run("sync")
        #expect(synced.stderr.contains("this device's own chain is forked at seq \(point)")
                && synced.stderr.contains("This device is the family's owner, whom nobody can invite or replace")
                && synced.stderr.contains("'famctl family create --name FAMILY --dir FOLDER'") && !synced.stderr.contains("ask the owner"), "\(synced.stderr)")
        #expect(try mum.ok("status").contains("This device is the family's owner, whom nobody can invite or replace"))
        let invite = try mum.run("invite")
        #expect(invite.code != 0 && invite.stderr.contains("the owner should start a new family with this home's records"), "\(invite.stderr)")
    }

    /// A home copied to another install, both writing and syncing through
    /// one folder. The copy that syncs second finds the other's segment in
    /// its own folder before it publishes: it reads it first, finds the
    /// fork, and keeps what it wrote back. The family never sees a fork and
    /// goes on with the first copy, which writes on; the second stops with
    /// a clear error (a security review: it published its branch, and every
    /// device stopped taking the first copy's events too).
    @Test func aClonedHomeThatSyncsSecondKeepsItsBranchBackAndStopsWriting() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let clone = try Self.dadCopiedThenWritingOn(family)
        // The other install's branch is the longer one: its events past
        // this one's log must not be taken for events still to read back.
        let kept = try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5"])
        try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4"])
        try dad.ok("sync")
        let folder = family.dir + "/" + (try Home.open(dad.home)).family.description + "/" + (try Home.open(dad.home)).deviceID.hex
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: folder))

        let cloneSync = try mum.run(["--home", clone, "sync"])
        #expect(cloneSync.code == 0 && cloneSync.stdout.contains("fork proofs: 1"), "\(cloneSync.stdout)")
        #expect(cloneSync.stderr.contains("warning: this copy of the home is forked at seq") && cloneSync.stderr.contains("published other events at those seqs first")
                && cloneSync.stderr.contains("Go on with the other copy of this home") && cloneSync.stderr.contains("famctl log --author me"), "\(cloneSync.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(try mum.ok(["--home", clone, "sync", "--json"]).utf8)) as? [String: Any]
        let point = try #require(json?["forkedAt"] as? Int, "\(String(describing: json))")
        // What it wrote into its folder (the event before the fork both
        // copies hold) ends before the fork point.
        for name in Set(try FileManager.default.contentsOfDirectory(atPath: folder)).subtracting(before) {
            let named = try #require(SegmentName(parsing: name), "\(name)")
            #expect(named.lastSeq < UInt64(point), "the copy published \(name), past the fork at \(point)")
        }
        let cloneStatus = try mum.ok(["--home", clone, "status"])
        #expect(cloneStatus.contains("warning  this copy of the home is forked at seq") && cloneStatus.contains("Go on with the other copy"), "\(cloneStatus)")
        // Nothing of its branch is said to be on its way out (a review: "the next sync sends them").
        #expect(!cloneStatus.contains("wait to go out"), "\(cloneStatus)")
        let statusJSON = try JSONSerialization.jsonObject(with: Data(try mum.ok(["--home", clone, "status", "--json"]).utf8)) as? [String: Any]
        #expect(statusJSON?["unpublished"] as? Int == 0, "\(String(describing: statusJSON))")
        // Its log marks what counts nowhere, with when each record happened, to write it again.
        let own = try mum.ok(["--home", clone, "log", "--author", "me"]).split(separator: "\n")
        let past = own.filter { $0.contains("(not counted: past its author's fork point (seq \(point))") }
        #expect(past.count >= 2 && past.allSatisfy { $0.contains("postpartum newMom") && $0.contains(" at ") && $0.contains("kind=mood") }
                && past.contains { $0.contains(kept) }, "\(own)")
        #expect(!own.contains { !$0.contains("#") || (Int($0.split(separator: "#")[1].prefix { $0.isNumber }) ?? 0) < point && $0.contains("not counted") }, "\(own)")
        let refused = try mum.run(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2"])
        #expect(refused.code == 1 && refused.stderr.contains("has a fork proof") && refused.stderr.contains("If the other copy published first, the family goes on with it"),
                "\(refused.code): \(refused.stderr)")

        // The family: no fork, Dad writes on, and the copy's moods are nowhere.
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        for r in [dad, mum, dad] { try r.ok("sync") }
        for r in [dad, mum] {
            let status = try r.ok("status")
            #expect(!status.contains("FORKED") && status.contains("forks    none"), "\(status)")
        }
        let moods = try mum.ok("record", "list")
        #expect(moods.contains("mood=1") && moods.contains("mood=2") && !moods.contains("mood=5") && !moods.contains("mood=4"), "\(moods)")
        #expect(try mum.ok("digest") == dad.ok("digest"))
        // What the copy wrote is shown by `replay --record`, as `record show`
        // says, with why it counts nowhere (a review: "no event names it").
        let trail = try mum.run(["--home", clone, "replay", "--record", kept])
        #expect(trail.stdout.contains("past its author's fork point") && trail.stdout.contains("mood=5"), "\(trail.stdout) \(trail.stderr)")
    }

    /// The other copy's segment seen by its name only (an iCloud
    /// placeholder) or cut short while it arrives: the copy does not
    /// publish what that file names until it reads (a review: it published
    /// its branch, and the family then stopped taking the honest copy's
    /// events); once the file is whole, it finds the fork and keeps its
    /// branch back.
    @Test(arguments: ["placeholder", "cut short"])
    func aCopyWaitsForItsFoldersUnreadFileBeforePublishing(_ how: String) throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let clone = family.folderOwner.root + "/clone"
        try FileManager.default.copyItem(atPath: dad.home, toPath: clone)
        for mood in ["5", "4"] { try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=" + mood]) }
        let folder = family.dir + "/" + (try Home.open(dad.home)).family.description + "/" + (try Home.open(dad.home)).deviceID.hex
        let known = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        try dad.ok("sync")
        let fresh = try #require(Set(try FileManager.default.contentsOfDirectory(atPath: folder)).subtracting(known).first)
        let aside = family.folderOwner.root + "/" + fresh
        try FileManager.default.moveItem(atPath: folder + "/" + fresh, toPath: aside)
        if how == "placeholder" {
            try Data().write(to: URL(fileURLWithPath: folder + "/." + fresh + ".icloud"))
        } else {
            try Data(try Data(contentsOf: URL(fileURLWithPath: aside)).prefix(50)).write(to: URL(fileURLWithPath: folder + "/" + fresh))
        }
        let waiting = try mum.run(["--home", clone, "sync"])
        #expect(waiting.code == 0 && waiting.stderr.contains("this device's events from seq") && waiting.stderr.contains("are not published: its own folder holds"), "\(waiting.stderr)")
        let mid = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        for name in mid.subtracting(known).subtracting([fresh, "." + fresh + ".icloud"]) {
            Issue.record("the copy published \(name) while the other copy's file was not read")
        }
        // The file arrives whole.
        try? FileManager.default.removeItem(atPath: folder + "/." + fresh + ".icloud")
        try? FileManager.default.removeItem(atPath: folder + "/" + fresh)
        try FileManager.default.moveItem(atPath: aside, toPath: folder + "/" + fresh)
        let found = try mum.run(["--home", clone, "sync"])
        #expect(found.stdout.contains("fork proofs: 1") && found.stderr.contains("this copy of the home is forked at seq"), "\(found.stdout) \(found.stderr)")
        try Self.familyGoesOnWithoutAFork(mum, dad)
    }

    /// The other copy's later segment arrives before its earlier one: its
    /// events wait in this copy's log for those, and this copy publishes
    /// nothing past what it had published until they arrive (a review: it
    /// published, and the copy whose branch had reached the folder first
    /// was forked out of the family).
    @Test func aCopysLaterSegmentArrivingFirstHoldsThePublishBack() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let clone = family.folderOwner.root + "/clone"
        try FileManager.default.copyItem(atPath: dad.home, toPath: clone)
        let folder = family.dir + "/" + (try Home.open(dad.home)).family.description + "/" + (try Home.open(dad.home)).deviceID.hex
        let known = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5")
        for mood in ["1", "2", "3"] { try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=" + mood]) }
        try mum.ok(["--home", clone, "sync"])
        let first = Set(try FileManager.default.contentsOfDirectory(atPath: folder)).subtracting(known)
        try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4"])
        try mum.ok(["--home", clone, "sync"])
        // The copy's first segment not delivered yet where Dad syncs.
        let aside = family.folderOwner.root + "/aside"
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        for f in first { try FileManager.default.moveItem(atPath: folder + "/" + f, toPath: aside + "/" + f) }
        let held = try dad.run("sync")
        #expect(held.code == 0 && held.stdout.contains("published 0 event(s)") && held.stderr.contains("are not published: events of its own chain read from its folder wait for earlier ones"),
                "\(held.stdout) \(held.stderr)")
        for f in first { try FileManager.default.moveItem(atPath: aside + "/" + f, toPath: folder + "/" + f) }
        let found = try dad.run("sync")
        #expect(found.stdout.contains("fork proofs: 1") && found.stderr.contains("this copy of the home is forked at seq"), "\(found.stdout) \(found.stderr)")
        // The copy whose branch reached the folder first goes on writing.
        try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2"])
        for r in [["--home", clone, "sync"], ["sync"]] { try mum.ok(r) }
        #expect(!(try mum.ok("status")).contains("FORKED"))
        #expect(try mum.ok("digest") == mum.ok(["--home", clone, "digest"]))
    }

    /// A copy that published its branch in another folder, then is pointed
    /// back at the family's: the fork is found, and its branch is not
    /// written there as "missing" (a review: it was, and the family was
    /// forked).
    @Test func aCopyBackFromAnotherFolderWritesNoBranchAsMissing() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let clone = family.folderOwner.root + "/clone"
        try FileManager.default.copyItem(atPath: dad.home, toPath: clone)
        try mum.ok(["--home", clone, "settings", "sync", "--dir", family.folderOwner.root + "/other"])
        try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5"])
        try mum.ok(["--home", clone, "sync"])
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        try dad.ok("sync")
        try mum.ok(["--home", clone, "settings", "sync", "--dir", family.dir])
        let back = try mum.run(["--home", clone, "sync"])
        #expect(back.stdout.contains("fork proofs: 1") && !back.stdout.contains("wrote again"), "\(back.stdout)")
        try Self.familyGoesOnWithoutAFork(mum, dad)
    }

    /// Over WebDAV too (a real Apache): the copy that syncs second lists
    /// its own collection first, finds the other copy's segment, and keeps
    /// its branch back (a review: over WebDAV it published first, and the
    /// family was forked).
    @Test(.againstAHang)
    func overWebDAVTheCopyThatSyncsSecondKeepsItsBranchBack() throws {
        try ApacheWebDAV.with { url, _ in
            let (mum, dad) = try FamctlRunner.webDAVFamily(url)
            for r in [mum, dad] { try r.ok("sync") }
            let clone = mum.root + "/dad-clone"
            try FileManager.default.copyItem(atPath: dad.home, toPath: clone)
            try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5"])
            try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
            try dad.ok("sync")
            let second = try mum.run(["--home", clone, "sync"])
            #expect(second.code == 0 && second.stdout.contains("fork proofs: 1") && second.stderr.contains("this copy of the home is forked at seq"), "\(second.stdout) \(second.stderr)")
            try Self.familyGoesOnWithoutAFork(mum, dad)
        }
    }

    /// The owner's copy that wrote offline, then invites: the invitation
    /// goes out at once, but the folder is read first, and the other
    /// copy's events at its seqs keep it back. The family sees no fork; the
    /// copy is told, and gives no code (one that could never count).
    @Test func aCopyThatPublishesAtOnceReadsTheFolderFirst() throws {
        let family = try SharedFamily()
        let mum = family.mum
        let clone = family.folderOwner.root + "/owner-clone"
        try FileManager.default.copyItem(atPath: mum.home, toPath: clone)
        try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2"])
        // Copies of the copy as it is now, before it reads the folder.
        let copies = try ["remove", "rotate", "role"].map { name in
            let path = family.folderOwner.root + "/owner-clone-" + name
            try FileManager.default.copyItem(atPath: clone, toPath: path)
            return path
        }
        try mum.ok("member", "role", "Dad", "viewer")
        let invite = try mum.run(["--home", clone, "invite"])
        #expect(invite.code == 65 && invite.stdout.isEmpty && invite.stderr.contains("the invitation cannot reach the family: this copy of the home is forked at seq")
                && invite.stderr.contains("no code was given") && invite.stderr.contains("Go on with the other copy"), "\(invite.stdout) \(invite.stderr)")
        // Changes published at once fail the same way, not "sync later" (a review).
        for (copy, args) in zip(copies, [["member", "remove", "Dad"], ["family", "rotate-key"], ["member", "role", "Dad", "viewer"]]) {
            let change = try mum.run(["--home", copy] + args)
            #expect(change.code == 65 && change.stderr.contains("cannot reach the family: this copy of the home is forked") && !change.stderr.contains("run 'famctl sync'"),
                    "\(args): \(change.stderr)")
        }
        for r in [mum, family.dad] { try r.ok("sync") }
        #expect(!(try mum.ok("status")).contains("FORKED"))
        #expect(try mum.ok("digest") == family.dad.ok("digest"))
        try mum.ok("invite")
    }

    /// Both copies' branches reach the folder when the first one's segment
    /// had not arrived yet as the second published (a sync engine late to
    /// deliver it): every device finds the fork, says it, and ends on the
    /// same state; neither copy writes any more.
    @Test func aForkBothCopiesPublishedIsFoundEverywhere() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let clone = try Self.dadCopiedThenWritingOn(family)
        try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5"])
        let folder = family.dir + "/" + (try Home.open(dad.home)).family.description + "/" + (try Home.open(dad.home)).deviceID.hex
        let published = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        try dad.ok("sync")
        // Dad's new segment not delivered yet where the copy syncs.
        try Self.undelivered(folder, since: published, aside: family.folderOwner.root + "/aside") {
            let first = try mum.ok(["--home", clone, "sync"])
            #expect(first.contains("published 2 event(s)") && !first.contains("fork"), "\(first)")
        }
        let synced = try dad.run("sync")
        #expect(synced.code == 0 && synced.stdout.contains("fork proofs: 1"), "\(synced.stdout)")
        #expect(synced.stderr.contains("warning: this device's own chain is forked at seq") && synced.stderr.contains("--home NEWDIR"), "\(synced.stderr)")
        try mum.ok(["--home", clone, "sync"])
        // Mum is told what the fork undid, with the records, once.
        let found = try mum.run("sync")
        #expect(found.code == 0 && found.stderr.contains("warning: the key of Dad (") && found.stderr.contains("signed two histories from seq ")
                && found.stderr.contains("record(s) is undone here: ") && found.stderr.contains("'famctl replay --record ID'"), "\(found.stderr)")
        #expect(!(try mum.run("sync").stderr.contains("signed two histories")), "said once")
        let mumsStatus = try mum.ok("status")
        #expect(mumsStatus.contains(", FORKED at seq ") && !mumsStatus.contains("warning"), "\(mumsStatus)")
        let authors = (try JSONSerialization.jsonObject(with: Data(try mum.ok("status", "--json").utf8)) as? [String: Any])?["authors"] as? [[String: Any]]
        #expect(authors?.filter { $0["forkedAt"] is Int }.count == 1 && authors?.filter { $0["forkedAt"] is NSNull }.count == 1, "\(String(describing: authors))")
        let dadsStatus = try dad.ok("status")
        #expect(dadsStatus.contains("(this device)") && dadsStatus.contains(", FORKED at seq ") && dadsStatus.contains("warning  this device's own chain is forked")
                && dadsStatus.contains("--home NEWDIR"), "\(dadsStatus)")
        for home in [dad.home, clone] {
            let refused = try mum.run(["--home", home, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2"])
            #expect(refused.code == 1 && refused.stderr.contains("has a fork proof"), "\(refused.code): \(refused.stderr)")
        }
        #expect(try mum.ok("digest") == dad.ok("digest"))
        #expect(try mum.ok("digest") == mum.ok(["--home", clone, "digest"]))
    }

    /// Dad records, his home is copied to `clone` in the family's folder
    /// owner's root, and he records again (unsynced): the copy's path.
    static func dadCopiedThenWritingOn(_ family: SharedFamily) throws -> String {
        try family.dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let clone = family.folderOwner.root + "/clone"
        try FileManager.default.copyItem(atPath: family.dad.home, toPath: clone)
        try family.dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        return clone
    }

    /// The honest copy (Dad's) writes on, everyone syncs, and the family
    /// sees no fork: Mum's status names none, and the two agree.
    static func familyGoesOnWithoutAFork(_ mum: FamctlRunner, _ dad: FamctlRunner) throws {
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        for r in [dad, mum, dad] { try r.ok("sync") }
        #expect(!(try mum.ok("status")).contains("FORKED"))
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }

    /// Runs `body` with the files of `folder` not in `known` moved aside,
    /// then puts them back: a sync engine that had not delivered them yet.
    static func undelivered(_ folder: String, since known: Set<String>, aside: String, during body: () throws -> Void) throws {
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        let fresh = Set(try FileManager.default.contentsOfDirectory(atPath: folder)).subtracting(known)
        #expect(!fresh.isEmpty, "nothing new in \(folder)")
        for f in fresh { try FileManager.default.moveItem(atPath: folder + "/" + f, toPath: aside + "/" + f) }
        defer { for f in fresh { try? FileManager.default.moveItem(atPath: aside + "/" + f, toPath: folder + "/" + f) } }
        try body()
    }

    /// A record whose creating put its author's fork withdrew, left with
    /// another member's later change alone, breaks its store's rules: said
    /// as the fork's doing, not as a merge (a security review).
    @Test func aRecordLeftByAForkSaysSo() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let clone = family.folderOwner.root + "/clone"
        try FileManager.default.copyItem(atPath: dad.home, toPath: clone)
        let id = try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        // The other install writes at the record's seq, unaware of it: a fork from there.
        try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5"])
        let folder = family.dir + "/" + (try Home.open(dad.home)).family.description + "/" + (try Home.open(dad.home)).deviceID.hex
        let known = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        try dad.ok("sync"); try mum.ok("sync")
        try mum.ok("record", "update", id, "note=from mum")
        try mum.ok("sync")
        // Dad's segment not delivered yet where the other install publishes its branch.
        try Self.undelivered(folder, since: known, aside: family.folderOwner.root + "/aside") { try mum.ok(["--home", clone, "sync"]) }
        #expect(try mum.ok("sync").contains("fork proofs: 1"))
        let shown = try mum.run("record", "show", id)
        let dadID = try Home.open(dad.home).deviceID.short
        #expect(shown.code == 0 && shown.stderr.contains("the change that created it, by \(dadID), does not count in the family (its author's chain is forked from seq"), "\(shown.stderr)")
        let update = try mum.run("record", "update", id, "note=again")
        #expect(update.code == 65 && update.stderr.contains("its author's chain is forked from seq") && !update.stderr.contains("changes made on two devices merged"), "\(update.stderr)")
    }

    /// A home restored from a backup older than its last sync reads back the
    /// events it published after the backup (they are in its folder, not
    /// among the files it remembers writing), and goes on from there: no
    /// fork, nothing lost.
    @Test func aHomeRestoredFromABackupGetsItsLaterEventsBack() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let backup = try HomeBackup(of: dad, in: family)
        var ids: [String] = []
        for i in 0..<2 { ids.append(try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i + 3)")) }
        try dad.ok("sync")
        try backup.restore()
        let synced = try dad.ok("sync")
        #expect(synced.contains("pulled 2 new event(s)"))
        // What it read back is in its folder already: not written again, nor reported as published.
        #expect(synced.contains("published 0 event(s)"), "\(synced)")
        let dadHome = try Home.open(dad.home)
        #expect(try Replicator.publishedSeq(log: dadHome.log, family: dadHome.family) == dadHome.log.head(of: dadHome.deviceID, in: dadHome.family).seq)
        ids.append(try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5"))
        try dad.ok("sync")
        try mum.ok("sync")
        for r in [mum, dad] {
            let list = try r.ok("record", "list")
            #expect(ids.allSatisfy(list.contains), "\(list)")
            #expect(try r.ok("status").contains("forks    none"))
        }
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }

    /// A home restored from a backup older than its last sync, and written to
    /// before any sync, is stopped: its own folder names events past its
    /// log. After a sync it goes on, unforked. A planted name in its folder
    /// stops it, a sync finding the file unverifiable or not (it might be
    /// its own later events still arriving), until it is removed.
    @Test func aRestoredHomeThatWritesBeforeSyncingIsStopped() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let backup = try HomeBackup(of: dad, in: family)
        var ids = [try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")]
        try dad.ok("sync")
        try backup.restore()
        let refused = try dad.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        #expect(refused.code == 75 && refused.stderr.contains("writing now would fork its chain") && refused.stderr.contains("famctl sync")
                && refused.stderr.range(of: "up to seq [0-9]+ \\([0-9a-f]{16} in file names: ", options: .regularExpression) != nil,
                "\(refused.code): \(refused.stderr)")
        try dad.ok("sync")
        ids.append(try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4"))
        try dad.ok("sync")
        try mum.ok("sync")
        #expect(try mum.ok("status").contains("forks    none"))
        #expect(ids.allSatisfy(try mum.ok("record", "list").contains))
        #expect(try mum.ok("digest") == dad.ok("digest"))

        // Someone plants a name far past Dad's chain in his folder.
        let home = try Home.open(dad.home)
        let planted = SegmentName(author: home.deviceID, firstSeq: 900, lastSeq: 900, bytes: [1]).description
        try Data([1]).write(to: URL(fileURLWithPath: family.dir + "/" + home.family.description + "/" + home.deviceID.hex + "/" + planted))
        #expect(try dad.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1").code == 75)
        let synced = try dad.run("sync")
        #expect(synced.code == 0 && synced.stdout.contains("not yet arrived: " + home.deviceID.hex + "/" + planted), "\(synced.stdout)")
        #expect(synced.stderr.contains("holds its own events up to seq 900"), "\(synced.stderr)")
        let still = try dad.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        #expect(still.code == 75 && still.stderr.contains(planted) && still.stderr.contains("remove it from the shared folder"), "\(still.stderr)")
        // A second one, empty: both are named at once, not one per try (a review).
        let empty = SegmentName(author: home.deviceID, firstSeq: 800, lastSeq: 800, bytes: [2]).description
        try Data().write(to: URL(fileURLWithPath: family.dir + "/" + home.family.description + "/" + home.deviceID.hex + "/" + empty))
        let both = try dad.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        #expect(both.code == 75 && both.stderr.contains("(0000000000000384 in file names: \(planted), \(empty))"), "\(both.stderr)")
        #expect(try dad.run("sync").stderr.contains("\(planted), \(empty) in this device's folder hold its own events up to seq 900"))
        for name in [planted, empty] { try FileManager.default.removeItem(atPath: family.dir + "/" + home.family.description + "/" + home.deviceID.hex + "/" + name) }
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
    }

    /// A family whose Dad's home is backed up: his folder in the shared
    /// folder, and the files it holds at the backup.
    static func dadWithABackup() throws -> (SharedFamily, HomeBackup, folder: String, before: Set<String>) {
        let family = try SharedFamily()
        let backup = try HomeBackup(of: family.dad, in: family)
        let home = try Home.open(family.dad.home)
        let folder = family.dir + "/" + home.family.description + "/" + home.deviceID.hex
        return (family, backup, folder, Set(try FileIO.list(folder)))
    }

    /// A home restored from a backup whose own later segment is still
    /// arriving (cut short) when it syncs: the sync says so, and writes wait
    /// until the file has arrived whole and been read (a write made then
    /// forked its chain, and both branches' records counted on no device).
    @Test func aRestoredHomeWaitsForItsOwnSegmentStillArriving() throws {
        let (family, backup, folder, before) = try Self.dadWithABackup()
        let (mum, dad) = (family.mum, family.dad)
        let record = try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        try dad.ok("sync")
        let newest = try #require(Set(try FileIO.list(folder)).subtracting(before).first)
        let whole = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + newest))
        try whole.prefix(200).write(to: URL(fileURLWithPath: folder + "/" + newest))
        try backup.restore()
        let synced = try dad.run("sync")
        #expect(synced.code == 0 && synced.stderr.contains("holds its own events up to seq"), "\(synced.stderr)")
        let refused = try dad.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5")
        #expect(refused.code == 75 && refused.stderr.contains("writing now would fork its chain"), "a write went ahead of its own events: \(refused.stderr)")
        try whole.write(to: URL(fileURLWithPath: folder + "/" + newest))
        try dad.ok("sync")
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5")
        for r in [dad, mum, dad, mum] { try r.ok("sync") }
        #expect(try mum.ok("status").contains("forks    none"))
        #expect(try mum.ok("record", "show", record).contains("mood=3"))
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }

    /// A home restored from a backup whose later segments have not all
    /// arrived yet holds its own later events in `pending`: it refuses to
    /// write (its next seq is taken) until they are in, then goes on, unforked.
    @Test func aRestoredHomeWaitsForItsOwnLaterEventsBeforeWriting() throws {
        let (family, backup, folder, before) = try Self.dadWithABackup()
        let (mum, dad) = (family.mum, family.dad)
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        try dad.ok("sync")
        let first = try #require(Set(try FileIO.list(folder)).subtracting(before).first)
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try dad.ok("sync")
        // Restored; the first later segment has not arrived on this machine yet.
        try backup.restore()
        let aside = family.folderOwner.root + "/aside.seg"
        try FileManager.default.moveItem(atPath: folder + "/" + first, toPath: aside)
        try dad.ok("sync")
        let refused = try dad.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5")
        #expect(refused.code == 75 && refused.stderr.contains("writing now would fork its chain"), "\(refused.code): \(refused.stderr)")
        try FileManager.default.moveItem(atPath: aside, toPath: folder + "/" + first)
        try dad.ok("sync")
        try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=5")
        try dad.ok("sync")
        try mum.ok("sync")
        #expect(try mum.ok("status").contains("forks    none"))
        #expect(try mum.ok("record", "list").split(separator: "\n").count == 3)
        #expect(try mum.ok("digest") == dad.ok("digest"))
    }

    /// A forked owner whose household owes a member a key (one who joined
    /// with an invitation from before a rotation) does not try to write the
    /// share: its rounds go on working instead of failing on every sync.
    @Test func aForkedOwnersSyncKeepsWorking() throws {
        let family = try SharedFamily(["Dad", "Aunt"])
        let (mum, folderOwner) = (family.mum, family.folderOwner)
        let code = try mum.ok("invite")                 // epoch 0
        try mum.ok("member", "remove", "Aunt")          // rotation: epoch 1
        try mum.ok("sync")
        let clone = folderOwner.root + "/owner-clone"
        try FileManager.default.copyItem(atPath: mum.home, toPath: clone)
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=1")
        try mum.ok(["--home", clone, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2"])
        try mum.ok(["--home", clone, "sync"])
        let gran = FamctlRunner()
        try gran.ok("accept", code, "--name", "Gran", "--dir", family.dir)
        try gran.ok("sync")
        for round in 0..<2 {
            let r = try mum.run("sync")
            #expect(r.code == 0, "round \(round): \(r.stderr)")
        }
        #expect(try mum.ok("status").contains("forks    1"))
    }

    /// The owner's key share is written by the sync that brings the join of
    /// a member who lacks the current key (an invitation from before a
    /// rotation): once that sync's pull is done, not in the middle of it.
    @Test func theOwnerSharesTheKeyAfterThePullThatBringsTheJoin() throws {
        let family = try SharedFamily(["Dad", "Aunt"])
        let mum = family.mum
        let code = try mum.ok("invite")                 // epoch 0
        try mum.ok("member", "remove", "Aunt")          // rotation: epoch 1
        try mum.ok("sync")
        let gran = FamctlRunner()
        try gran.ok("accept", code, "--name", "Gran", "--dir", family.dir)
        try gran.ok("sync")
        let home = try Home.open(mum.home)
        let before = try home.log.head(of: home.deviceID, in: home.family).seq
        try mum.ok("sync")
        let after = try Home.open(mum.home)
        // The key share, and the record of whose join used the invitation, written by this sync.
        #expect(try after.log.head(of: after.deviceID, in: after.family).seq == before + 2)
        #expect(after.projector.household.membersMissingKey(epoch: try #require(try after.state.keyring.current(family: after.family)).epoch).isEmpty)
        // It reaches Gran at her next rounds: she reads what is written under the new key.
        try mum.ok("sync")
        try gran.ok("sync")
        try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
        try mum.ok("sync")
        try gran.ok("sync")
        #expect(try gran.ok("record", "list").contains("mood=4"))
    }
}

/// A copy of a runner's home, kept under the family's folder owner, put back
/// in place of the home by ``restore()``: a home restored from a backup.
struct HomeBackup {
    let runner: FamctlRunner
    let path: String

    init(of runner: FamctlRunner, in family: SharedFamily) throws {
        self.runner = runner
        path = family.folderOwner.root + "/backup"
        try FileManager.default.copyItem(atPath: runner.home, toPath: path)
    }

    func restore() throws {
        try FileManager.default.removeItem(atPath: runner.home)
        try FileManager.default.copyItem(atPath: path, toPath: runner.home)
    }
}
