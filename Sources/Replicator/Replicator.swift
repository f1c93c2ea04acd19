import Envelope
import EventLog
import Foundation

/// Exchanges a family's events through a ``Peer`` (a shared directory, a
/// WebDAV server, …): publishes this device's new events as segments under
/// its own folder, and pulls what the others published, handing it to
/// `ingest` (which verifies and applies).
///
/// What it has read is remembered (table `r_files`), so a round reads only
/// files it has not read before: its cost follows what is new, not history.
/// Files that cannot be verified yet (incomplete, damaged, placeholders) are
/// "not yet arrived": recorded with the reason, retried next round, never
/// deleted. The replicator knows nothing of projections.
public final class Replicator {
    public let log: EventLog
    public let peer: any Peer
    public let me: DeviceID
    public let family: FamilyID
    /// This device's note of the famctl it runs, left in its own folder
    /// at a round's full listing when the folder lacks it (or holds
    /// another); `nil`: none is left.
    public var versionNote: VersionNote?
    /// Seconds between the `last_sync` times written by pulls that take
    /// in nothing (0: every pull writes it). A watch sets it: its rounds,
    /// seconds apart, would otherwise each commit to the log (fsyncs and a
    /// checkpoint every round of an idle day).
    public var idleRoundsRecordedEvery: TimeInterval = 0
    /// Objects per listing page.
    public static let pageSize = 500
    /// Own segments smaller than this are merged once there are ``compactAfter`` of them.
    public static let smallSegment = 256 << 10
    public static let compactAfter = 8
    public static let maximumSegmentBytes = 8 << 20

    public init(log: EventLog, peer: any Peer, family: FamilyID, me: DeviceID) throws {
        self.log = log
        self.peer = peer
        self.family = family
        self.me = me
        try log.database.execute("""
            CREATE TABLE IF NOT EXISTS r_published(family BLOB PRIMARY KEY, last_seq INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS r_files(
                family BLOB NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, checked_at INTEGER NOT NULL,
                PRIMARY KEY(family, path));
            CREATE TABLE IF NOT EXISTS r_meta(family BLOB NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(family, key));
            CREATE TABLE IF NOT EXISTS r_own(family BLOB NOT NULL, name TEXT NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL,
                size INTEGER NOT NULL, PRIMARY KEY(family, name));
            """)
        // `tag` came later, in both (what a file's listing entry was when
        // its content failed to verify; what an own segment's was when it
        // last read back whole): added to tables made before.
        // `kind` later still, in `r_files` (what a note on a file read is,
        // ``FileNote``): an earlier famctl told it by the reason's text.
        for (table, columns) in [("r_files", ["tag", "kind"]), ("r_own", ["tag"])] {
            var has = Set<String>()
            try log.database.statement("SELECT name FROM pragma_table_info('\(table)')").forEachRow { has.insert($0.text(0)) }
            for column in columns where !has.contains(column) {
                do {
                    try log.database.execute("ALTER TABLE \(table) ADD COLUMN \(column) TEXT")
                } catch {
                    // Another process may have added it meanwhile.
                    guard "\(error)".contains("duplicate column") else { throw error }
                }
            }
        }
        kindNotesOfEarlierBuilds()
    }

    /// Gives the notes an earlier famctl kept (a reason, no kind) their
    /// kind, once: a file read is not read again, so its note stays as it
    /// was written. The text is left as it was (`misplaced: ` marks
    /// included): a famctl from before may still share the home, and tells
    /// the kinds by it; ``filesOfNote()`` takes the mark off. (At every
    /// opening, for the notes such a famctl writes meanwhile; best effort:
    /// a home on a full or read-only disk is read as it is.)
    private func kindNotesOfEarlierBuilds() {
        var old: [(path: String, text: String)] = []
        try? log.database.statement("SELECT path, reason FROM r_files WHERE family = ?1 AND status = 'read' AND reason IS NOT NULL AND kind IS NULL")
            .forEachRow([.blob(family.bytes)]) { old.append(($0.text(0), $0.text(1))) }
        for (path, text) in old {
            try? log.database.run("UPDATE r_files SET kind = ?3 WHERE family = ?1 AND path = ?2 AND kind IS NULL",
                                  [.blob(family.bytes), .text(path), .text(FileNote.fromEarlierBuild(text).kind.rawValue)])
        }
    }

    /// Marks which reader judged a file, with the file's tag. Bump it when
    /// the reader comes to accept what it refused before (a new segment
    /// version, a larger limit): files it refused are then read again.
    /// (2: envelope version 2, which the reader before refused.)
    static let readerVersion = "2"
    /// A file refused for what it is (its content, or its size) is read
    /// again when its tag changes, and at the latest after this long.
    static let refusedRetryAfter: TimeInterval = 3600

    /// What `r_files.tag` keeps of a refused file: the reader's version and
    /// the file's tag; `nil` when the peer gave no tag (then the file is
    /// read again at every round).
    static func judgedTag(_ tag: String?) -> String? {
        guard let tag, !tag.isEmpty else { return nil }
        return readerVersion + "|" + tag
    }

    // MARK: - Publish

    public struct PublishReport: Sendable {
        public var segments: [String] = []
        public var events = 0
        public var compacted = 0
        /// Why merging this device's small segments failed (a server with
        /// no room for the merged file, say): they stay as they are, the
        /// events published all the same.
        public var compactionFailure: PeerError?
        /// This device's own events not published because its chain forked
        /// at or before them (another copy of this home published other
        /// events at those seqs first): how many, from which seq.
        public var withheld: (count: UInt64, from: UInt64)?
        public init() {}
    }

    /// How long a merge of small segments that failed waits before the next try.
    public static let compactRetryAfter: TimeInterval = 3600

    /// The report of the last ``publish()``, also of one that failed
    /// midway: the segments it wrote before the failure went out.
    public private(set) var lastPublish: PublishReport?

    /// Writes this device's events not yet published as segments, then
    /// compacts its own small segments.
    /// - Parameter below: publish none of its events from this seq on
    ///   (a file in its own folder that names them has not been read: it
    ///   may hold another copy's events at those seqs).
    public func publish(below: UInt64? = nil) throws -> PublishReport {
        var report = PublishReport()
        defer { lastPublish = report }
        let head = try log.head(of: me, in: family)
        var last = try publishedSeq()
        var through = head.seq
        // Its chain forked (another copy of this home, a backup restored
        // and written on, published other events at the same seqs): what
        // it wrote from the fork on stays here. Published, it would show the
        // fork to the family, and every device would stop taking this
        // device's events from there on, the other copy's included; kept
        // back, the family goes on with the branch it has.
        if let point = try log.forkPoint(of: me, in: family), head.seq >= point {
            let kept = max(last, point - 1)
            if head.seq > kept { report.withheld = (head.seq - kept, kept + 1) }
            through = point - 1
        }
        if let below { through = min(through, below > 0 ? below - 1 : 0) }
        // Its own segments first: a copy of them that another device wrote
        // back, read with its events, is not taken as its own beside them
        // (a review: a sync killed before it removed the copy left both).
        if through > last { last = try ownSegmentsHold(after: last, through: through) }
        if through > last { last = try adoptReadBack(after: last, through: through) }
        while through > last {
            let envs = try nextSegment(of: me, after: last, through: through)
            guard !envs.isEmpty else { break }
            let name = try write(Segment(envelopes: envs), publishing: true)
            report.segments.append(name)
            report.events += envs.count
            last = envs.last!.seq
        }
        // Its note of its famctl goes with its first segments at a location
        // (a family made, a join, a move): the others never find its
        // segments there without it (a review: every new member was called
        // older until its first full round).
        if !report.segments.isEmpty { leaveVersionNoteIfOwed() }
        // Merging is housekeeping: a failure (no room for the merged file)
        // leaves the small segments, which hold the events, as they are;
        // a peer gone or failing ends the round as any request does.
        // After a failure the merge waits an hour (each try uploads the
        // merged file again: a full server would take that at every round).
        // Nor while events it published are out of its log (read back first).
        if try ownEventsOutOfLog(head: head.seq) { return report }
        report.compactionFailure = try housekeeping("compact_failed_at", failureIf: { !$0.isTransient && !$0.isOffline && !$0.isThrottled && $0 != .tokenExpired }) {
            report.compacted = try compact()
        }
        return report
    }

    /// Runs housekeeping `body` (what the family's events do not wait on),
    /// unless it failed within the last ``compactRetryAfter`` (when, in
    /// `r_meta` under `key`): each try may cost the upload or the retries
    /// again. A failure that `failureIf` counts as the housekeeping's own
    /// is returned and remembered for that long; any other is thrown (a
    /// peer gone ends the round as any request does).
    private func housekeeping(_ key: String, failureIf counts: (PeerError) -> Bool, _ body: () throws -> Void) throws -> PeerError? {
        let now = Date().timeIntervalSince1970
        if let failed = try meta(key).flatMap(Double.init), now >= failed, now - failed < Self.compactRetryAfter { return nil }
        do {
            try body()
            try setMeta(key, nil)
            return nil
        } catch let e as PeerError where counts(e) {
            try setMeta(key, String(now))
            return e
        }
    }

    /// This device's own segments that a pull read back from its folder
    /// (a home restored from a backup older than its last sync finds there
    /// the events it published since), from `published` on: each that holds
    /// exactly what the log holds for its seqs (its content-addressed name
    /// matches the segment this log writes for them) is taken as this log's
    /// own — in `r_own`, and counted as published — rather than written
    /// again and reported as news. One that does not (another install of
    /// the same key: a fork) is left as it is.
    /// - Returns: the last seq published, with those.
    private func adoptReadBack(after published: UInt64, through head: UInt64) throws -> UInt64 {
        let prefix = me.hex + "/"
        var found: [SegmentName] = []
        // The folder's paths as a range of the primary key ('0' follows '/'), not a scan.
        try log.database.statement("SELECT path FROM r_files WHERE family = ?1 AND path >= ?2 AND path < ?3 AND status = 'read' AND reason IS NULL")
            .forEachRow([.blob(family.bytes), .text(prefix), .text(me.hex + "0")]) {
                if case .segment(let n) = SharedFileName(String($0.text(0).dropFirst(prefix.count))) { found.append(n) }
            }
        var last = published
        for n in found.sorted(by: { ($0.firstSeq, $0.lastSeq) < ($1.firstSeq, $1.lastSeq) }) where n.lastSeq > last {
            guard n.firstSeq <= last + 1, n.lastSeq <= head,
                  let envs = try Self.unlessDamaged({ try log.chain(of: me, in: family, seqs: n.firstSeq...n.lastSeq) }),
                  envs.count == Int(n.lastSeq - n.firstSeq + 1) else { break }
            let bytes = Segment(envelopes: envs).encoded()
            guard n.matches(bytes) else { break }
            try log.database.run("INSERT OR IGNORE INTO r_own(family, name, first_seq, last_seq, size) VALUES(?1, ?2, ?3, ?4, ?5)",
                                 [.blob(family.bytes), .text(n.description), .integer(Int64(n.firstSeq)), .integer(Int64(n.lastSeq)), .integer(Int64(bytes.count))])
            last = n.lastSeq
        }
        if last > published {
            try log.database.run("INSERT OR REPLACE INTO r_published(family, last_seq) VALUES(?1, ?2)", [.blob(family.bytes), .integer(Int64(last))])
        }
        return last
    }

    /// The seqs after `published` that segments this device wrote (in
    /// `r_own`, landed) hold already, up to `head`: counted as published
    /// rather than written again in other cuts, side by side. A record of
    /// what was published lowered below them (its events taken out of the
    /// log and read back since: a review over WebDAV found them published
    /// twice), or a write that landed before the record of it.
    /// - Returns: the last seq published, with those.
    private func ownSegmentsHold(after published: UInt64, through head: UInt64) throws -> UInt64 {
        var rows: [(UInt64, UInt64)] = []
        try log.database.statement("SELECT first_seq, last_seq FROM r_own WHERE family = ?1 AND size != ?2 AND last_seq > ?3 AND last_seq <= ?4")
            .forEachRow([.blob(family.bytes), .integer(Int64(Self.unconfirmedSize)), .integer(Int64(published)), .integer(Int64(head))]) {
                rows.append((UInt64($0.int(0)), UInt64($0.int(1))))
            }
        let last = Self.covered(from: published, by: rows)
        if last > published {
            try log.database.run("INSERT OR REPLACE INTO r_published(family, last_seq) VALUES(?1, ?2)", [.blob(family.bytes), .integer(Int64(last))])
        }
        return last
    }

    /// Own segments that a full listing no longer shows (deleted from the
    /// shared folder by someone) are written again from the log; the
    /// paths written are added to `written`.
    func republishMissing(listed: Set<String>, into report: inout PullReport, written: inout Set<String>) throws -> Int {
        // Its folder gone as a whole while events it published are out of
        // its log: not made again in part (the others write the whole
        // chain back only into a folder that is gone, and this device
        // reads its events back from that) (a review: the device, first to
        // sync, wrote one segment, and waited for the rest for good).
        if try ownEventsOutOfLog(head: log.head(of: me, in: family).seq), !listed.contains(where: { $0.hasPrefix(me.hex + "/") }) { return 0 }
        var count = 0
        var own: [(String, UInt64, UInt64)] = []
        var unconfirmed: [String] = []
        try log.database.statement("SELECT name, first_seq, last_seq, size FROM r_own WHERE family = ?1").forEachRow([.blob(family.bytes)]) {
            if $0.int(3) == Self.unconfirmedSize { unconfirmed.append($0.text(0)) } else { own.append(($0.text(0), UInt64($0.int(1)), UInt64($0.int(2)))) }
        }
        // A create that was never answered, and whose file is not there: it never landed.
        for name in unconfirmed where !listed.contains(me.hex + "/" + name) {
            try log.database.run("DELETE FROM r_own WHERE family = ?1 AND name = ?2", [.blob(family.bytes), .text(name)])
        }
        // Never what follows its own fork point: the other copy's branch is
        // the family's (a review: a copy that had published its branch in
        // another folder wrote it into the family's one as "missing").
        let forkPoint = try log.forkPoint(of: me, in: family)
        for (name, first, last) in own where !listed.contains(me.hex + "/" + name) {
            if let forkPoint, last >= forkPoint { continue }
            // Damaged in the log since: cannot be written, said.
            guard let envs = try ownChain(first...last, path: me.hex + "/" + name, into: &report) else { continue }
            // Events of it taken out of the log: it cannot be made again;
            // said (a review: passed over without a word, the others waiting
            // on those seqs for good).
            guard envs.count == Int(last - first + 1) else {
                let held = Set(envs.map(\.seq))
                report.ownMissingTakenOut.append((me.hex + "/" + name, (first...last).filter { !held.contains($0) }))
                continue
            }
            let rewritten: String
            do {
                rewritten = try write(Segment(envelopes: envs))
            } catch let error as PeerError {
                // Refused for what is in the way (a file in place of this
                // device's folder, a server that forbids it): said with the
                // round's report, which the others' events pulled already
                // make; a peer failing or gone: the next round.
                switch error {
                case .conflict, .throttled, .unavailable, .offline, .tokenExpired: throw error
                default:
                    // Its seqs held by the other files the listing shows in its
                    // folder (older cuts of its own, copies the others wrote
                    // back): nobody misses them (a review over WebDAV: said so).
                    if Self.covered(from: first - 1, by: Self.segmentRanges(of: me, in: listed)) >= last { continue }
                    report.ownNotRestored.append((me.hex + "/" + name, "it is missing, and writing it again failed: \(error.description)"))
                    continue
                }
            }
            count += 1
            written.insert(me.hex + "/" + rewritten)
            if rewritten != name { try log.database.run("DELETE FROM r_own WHERE family = ?1 AND name = ?2", [.blob(family.bytes), .text(name)]) }
        }
        return count
    }

    /// Asks the next ``carryOthersIfAsked()`` to write the others' events:
    /// the family moved to a location that may lack them.
    public func askToCarryOthers() throws {
        try setMeta("carry_others", "1")
    }

    /// After a move (``askToCarryOthers()``), writes every other author's
    /// chain this log holds into that author's folder, once: the events of
    /// a device that no longer syncs would stay in the old location
    /// otherwise. Segments are signed by their authors and named by their
    /// content, so any device may write them; one already there is left
    /// as it is, and a device that finds such a file in its own folder
    /// reads events it holds already. Returns how many segments it wrote.
    public func carryOthersIfAsked() throws -> Int {
        guard try meta("carry_others") != nil else { return 0 }
        var written = 0
        for (author, head) in try log.heads(in: family).sorted(by: { $0.key.hex < $1.key.hex }) where author != me {
            // What the location's listing shows of the author already (the
            // family's folder as it was, after a mistyped one was put
            // right) is not written again beside it, in other cuts.
            written += try writeChain(of: author, after: Self.coveredFromStart(of: author, in: lastListing ?? []), through: head.seq)
        }
        try setMeta("carry_others", nil)
        return written
    }

    /// Writes `author`'s chain from seq `last + 1` through `head` from this
    /// log into its folder, in segments; returns how many it created.
    private func writeChain(of author: DeviceID, after last: UInt64, through head: UInt64) throws -> Int {
        var (last, written) = (last, 0)
        while head > last {
            // A damaged event (and what follows it) of another device stays behind: its
            // author, or another device holding it whole, writes it.
            guard let envs = try Self.unlessDamaged({ try nextSegment(of: author, after: last, through: head) }) else { break }
            // A chain the log holds is whole from seq 1; should it not be, the rest stays behind.
            guard let first = envs.first, first.seq == last + 1,
                  envs.enumerated().allSatisfy({ $1.seq == first.seq + UInt64($0) }) else { break }
            if try create(Segment(envelopes: envs)).created { written += 1 }
            last = envs.last!.seq
        }
        // Its author's note of its famctl goes with them, as this device
        // last read it: without it, a device joining meanwhile would call
        // the author older (a review, after a move and a folder written back).
        if written > 0, let hex = try meta("version_bytes:" + author.hex), let bytes = Hex.decode(hex) {
            do throws(PeerError) { try peer.createOnce(author.hex + "/" + VersionNote.fileName, bytes) } catch {}
        }
        return written
    }

    /// Removes from this device's folder the segments other devices wrote
    /// back into it (``writeBackVanished(listed:unreadFolders:)``, after
    /// the folder was deleted while this device was away) once the
    /// segments this device writes itself, listed, hold the same seqs:
    /// written again by ``republishMissing(listed:into:written:)``, in other cuts,
    /// they would otherwise stay side by side for good, and every device
    /// joining later would download this device's events twice (a review
    /// over real Syncthing). Only a file that is exactly the segment this
    /// log makes of its seqs is removed: another install's history (a
    /// fork's evidence) is never. Returns how many it removed.
    /// A copy that cannot be removed now is left for a later round (never
    /// holding up this one); one that is not this log's segment is
    /// remembered as kept, not read again at every round.
    ///
    /// - Parameters:
    ///   - present: the paths this round's listing showed, and those it
    ///     wrote since.
    ///   - placeholders: those of them listed as iCloud placeholders (the
    ///     bytes elsewhere: no copy to remove, nothing to read).
    func removeCopiesOfOwn(present listed: Set<String>, placeholders: Set<String> = []) throws -> Int {
        let prefix = me.hex + "/"
        var ownRanges: [(UInt64, UInt64)] = []
        try log.database.statement("SELECT name, first_seq, last_seq FROM r_own WHERE family = ?1 AND size != ?2")
            .forEachRow([.blob(family.bytes), .integer(Int64(Self.unconfirmedSize))]) {
                if listed.contains(prefix + $0.text(0)) { ownRanges.append((UInt64($0.int(1)), UInt64($0.int(2)))) }
            }
        let ownNames = try Self.ownSegmentNames(family: family, log: log)
        let copies = listed.compactMap { path -> (String, SegmentName)? in
            guard path.hasPrefix(prefix), !placeholders.contains(path), let n = Self.segmentInItsFolder(path), n.author == me, !ownNames.contains(n.description) else { return nil }
            return (path, n)
        }
        guard !copies.isEmpty else { return 0 }
        var removed = 0
        // Each copy whose seqs the listed own segments hold.
        for (path, n) in copies.sorted(by: { $0.0 < $1.0 }) where n.firstSeq > 0 && Self.covered(from: n.firstSeq - 1, by: ownRanges) >= n.lastSeq {
            let kept = "kept_copy:" + path
            guard try meta(kept) == nil else { continue }
            guard n.lastSeq - n.firstSeq < UInt64(Segment.maximumEvents),
                  let envs = try Self.unlessDamaged({ try log.chain(of: me, in: family, seqs: n.firstSeq...n.lastSeq) }),
                  envs.count == Int(n.lastSeq - n.firstSeq + 1), n.matches(Segment(envelopes: envs).encoded()) else {
                try setMeta(kept, "1")
                continue
            }
            // Housekeeping: asked once, whatever fails is left for a later round.
            do throws(PeerError) { try peer.deleteOnce(path) } catch {
                if error != .notFound { continue }
                // Gone already: nothing removed, nothing to remember.
                try log.database.run("DELETE FROM r_files WHERE family = ?1 AND path = ?2", [.blob(family.bytes), .text(path)])
                continue
            }
            try log.database.run("DELETE FROM r_files WHERE family = ?1 AND path = ?2", [.blob(family.bytes), .text(path)])
            removed += 1
        }
        return removed
    }

    /// Writes back, from this log, the chain of every other author whose
    /// folder is gone from the shared folder as a whole (the listing shows
    /// no file of it, and read it): a device lost for good, its folder
    /// deleted, would otherwise leave its events to the devices that had
    /// them, and every device joining later would miss them without a
    /// word. Only a whole folder gone counts, and only while another
    /// device's folder is there (none at all is an unmounted drive's empty
    /// mount point, or a new location): compaction replaces an
    /// author's files but never empties its folder, while files missing
    /// within it may be on their way (a sync engine's order). Segments are
    /// signed by their authors, so any device may write them
    /// (``carryOthersIfAsked()``). Returns how many segments it wrote.
    func writeBackVanished(listed: Set<String>, unreadFolders: Set<String>) throws -> Int {
        let present = Self.foldersWithSegments(listed)
        // No other device's folder at all: a drive unmounted under its
        // mount point, or a new location (``carryOthersIfAsked()``), not
        // one device's folder deleted; nothing is written into it.
        guard present.contains(where: { $0 != me.hex && $0 != "blobs" }) else { return 0 }
        var written = 0
        for (author, head) in try log.heads(in: family).sorted(by: { $0.key.hex < $1.key.hex })
        where author != me && head.seq > 0 && !present.contains(author.hex) && !unreadFolders.contains(author.hex) {
            // A chain with events missing from its middle here is left to a
            // device that holds it whole: a folder written back in part
            // would keep that device from writing it whole (a review).
            guard try log.eventCount(of: author, in: family) == head.seq else { continue }
            written += try writeChain(of: author, after: 0, through: head.seq)
        }
        return written
    }

    /// The folders of `listed` that hold a segment of their own device's
    /// under its own name: a folder left with other files alone (a
    /// `.DS_Store`, a conflict copy) once its segments were deleted is gone
    /// as a device's folder (compaction never empties one), and is written
    /// back (a review: a stray file kept a lost member's events from every
    /// device joining later).
    static func foldersWithSegments(_ listed: Set<String>) -> Set<String> {
        var out = Set<String>()
        for path in listed where segmentInItsFolder(path) != nil { out.insert(String(path.prefix { $0 != "/" })) }
        return out
    }

    /// How long it takes, at the most, to read every segment file this
    /// device wrote or read back again, whatever its tag says
    /// (``scrubOne(listed:own:done:tags:into:)``): a week, so that a
    /// family's whole folder is downloaded again once a week per device,
    /// spread over its rounds.
    public static let scrubPeriod: TimeInterval = 7 * 86_400

    /// Reads back, in turn, one segment file of the shared folder that
    /// this device wrote or read whole before, whatever its tag says, so
    /// that each is read again about once a ``scrubPeriod``: a file
    /// damaged without its tag changing (a flipped bit keeps a file's size
    /// and time, from which a directory's and Apache's tags are made) is
    /// read again by no one otherwise, and every device joining later would
    /// wait for its events for good (a review over WebDAV). One of this
    /// device's own is written again as when its tag changes
    /// (``checkOwn(_:listedTag:into:)``); another device's, when this log
    /// holds its events whole and they make exactly the bytes its name
    /// promises, is replaced by them (``restoreOthers(_:promised:tag:)``).
    /// Nothing is said when the file is whole; a failure to read or write
    /// it waits for its next turn.
    func scrubOne(listed: Set<String>, own: Set<String>, done: Set<String>, tags: [String: String], into report: inout PullReport) throws {
        // Segments under their own names in their authors' folders (not
        // conflict copies, copies in the wrong folder or placeholders).
        let candidates = listed.compactMap { path in Self.segmentInItsFolder(path).map { (path, $0) } }
            .filter { path, n in n.author == me ? own.contains(n.description) : done.contains(path) }
            .sorted { $0.0 < $1.0 }
        guard !candidates.isEmpty else { return }
        let now = Date().timeIntervalSince1970
        if let last = try meta("scrub_at").flatMap(Double.init), now - last < Self.scrubPeriod / Double(candidates.count), now >= last { return }
        let after = try meta("scrub_after") ?? ""
        let (path, promised) = candidates.first { $0.0 > after } ?? candidates[0]
        try setMeta("scrub_after", path)
        try setMeta("scrub_at", String(now))
        if promised.author == me {
            if try checkOwn(path, listedTag: tags[path] ?? "", into: &report) { report.repaired += 1 }
            return
        }
        let bytes: [UInt8], tag: String
        do throws(PeerError) { (bytes, tag) = try peer.getOnce(path) } catch { return }
        if promised.matches(bytes), let segment = try? Segment(decoding: bytes), segment.author == promised.author, segment.family == family,
           segment.firstSeq == promised.firstSeq, segment.lastSeq == promised.lastSeq { return }
        if try restoreOthers(path, promised: promised, tag: tag) { report.restoredOthers += 1 }
    }

    /// Replaces another device's segment file at `path`, which no longer
    /// holds what its name promises, by that author's events `promised`
    /// names, from this log: only when the log holds them whole and they
    /// make exactly the bytes the name's hash promises (so the file gets
    /// back the one content it can have: segments are signed by their
    /// authors and named by their content). Whether it was replaced; a
    /// failure to write it is left for the next turn.
    private func restoreOthers(_ path: String, promised: SegmentName, tag: String) throws -> Bool {
        guard promised.author != me, promised.firstSeq >= 1, promised.lastSeq >= promised.firstSeq,
              promised.lastSeq - promised.firstSeq < UInt64(Segment.maximumEvents),
              let envs = try Self.unlessDamaged({ try log.chain(of: promised.author, in: family, seqs: promised.firstSeq...promised.lastSeq) }),
              envs.count == Int(promised.lastSeq - promised.firstSeq + 1) else { return false }
        let bytes = Segment(envelopes: envs).encoded()
        guard promised.matches(bytes) else { return false }
        do throws(PeerError) { _ = try peer.replace(path, bytes, expected: tag) } catch { return false }
        return true
    }

    /// The highest seq up to which the segments `listed` under `author`'s
    /// folder hold its chain from seq 1 without a gap (0: none).
    static func coveredFromStart(of author: DeviceID, in listed: Set<String>) -> UInt64 {
        covered(from: 0, by: segmentRanges(of: author, in: listed))
    }

    /// The first and last seqs of `author`'s segments a listing shows in
    /// its folder.
    static func segmentRanges(of author: DeviceID, in listed: Set<String>) -> [(UInt64, UInt64)] {
        let prefix = author.hex + "/"
        return listed.compactMap { path -> (UInt64, UInt64)? in
            guard path.hasPrefix(prefix), let n = SegmentName(parsing: String(path.dropFirst(prefix.count))), n.author == author else { return nil }
            return (n.firstSeq, n.lastSeq)
        }
    }

    /// The highest seq up to which `ranges` (first and last seqs, in any
    /// order) hold a chain from seq `start + 1` without a gap (`start`: none).
    static func covered(from start: UInt64, by ranges: [(UInt64, UInt64)]) -> UInt64 {
        var covered = start
        for (first, last) in ranges.sorted(by: { $0 < $1 }) where first <= covered + 1 { covered = max(covered, last) }
        return covered
    }

    /// This device's events `seqs`, to write a segment of them again; `nil`
    /// when one of them is damaged in the log, noted in `report` for `path`.
    private func ownChain(_ seqs: ClosedRange<UInt64>, path: String, into report: inout PullReport) throws -> [SyncEnvelope]? {
        do {
            return try log.chain(of: me, in: family, seqs: seqs)
        } catch EventLogError.damagedEvent(_, let seq) {
            report.ownDamagedInLog.append((path, seq))
            return nil
        }
    }

    /// `events()`, or `nil` when the log holds one of them damaged
    /// (``EventLogError/damagedEvent(author:seq:)``); other failures are thrown.
    private static func unlessDamaged(_ events: () throws -> [SyncEnvelope]) throws -> [SyncEnvelope]? {
        do { return try events() } catch EventLogError.damagedEvent { return nil } catch EventLogError.missingEvent { return nil }
    }

    func publishedSeq() throws -> UInt64 {
        try Self.publishedSeq(log: log, family: family)
    }

    /// The last seq of this device's chain in `family` that it published
    /// (from `log`'s own record of it; 0 before the first publish).
    public static func publishedSeq(log: EventLog, family: FamilyID) throws -> UInt64 {
        try log.database.statement("SELECT last_seq FROM r_published WHERE family = ?1").first([.blob(family.bytes)]) { UInt64($0.int(0)) } ?? 0
    }

    /// Whether events this device published are out of its log (its
    /// record of them, or of its segments, past its head `head`).
    func ownEventsOutOfLog(head: UInt64) throws -> Bool {
        try Self.publishedEnd(log: log, family: family) > head
    }

    /// The last seq `device` published in `family` and the head of its
    /// chain in `log`, when the first is past the second: events taken out
    /// of the log after they were published. None before the first sync
    /// made the replicator's tables.
    public static func publishedPastLog(log: EventLog, family: FamilyID, device: DeviceID) throws -> (published: UInt64, head: UInt64)? {
        let head = try log.head(of: device, in: family).seq
        let published = (try? publishedEnd(log: log, family: family)) ?? 0
        return published > head ? (published, head) : nil
    }

    /// The last seq this log's device published in `family`: by its record
    /// of what it published, or of the segments it wrote and saw land (one
    /// lowered by hand with the events: an audit review found the next
    /// write forking the chain).
    private static func publishedEnd(log: EventLog, family: FamilyID) throws -> UInt64 {
        let segmentsEnd = try log.database.statement("SELECT max(last_seq) FROM r_own WHERE family = ?1 AND size != ?2")
            .first([.blob(family.bytes), .integer(Int64(unconfirmedSize))]) { $0.isNull(0) ? 0 : UInt64($0.int(0)) } ?? 0
        return max(try publishedSeq(log: log, family: family), segmentsEnd)
    }

    /// The events of `author`'s next segment after seq `last`, up to
    /// `head`: at most ``Segment/maximumEvents``, and well under what
    /// readers accept (8 MiB of events).
    /// An event damaged in the log ends the segment before it; one that
    /// starts it is thrown (``EventLogError/damagedEvent(author:seq:)``).
    private func nextSegment(of author: DeviceID, after last: UInt64, through head: UInt64) throws -> [SyncEnvelope] {
        let envs: [SyncEnvelope]
        do {
            envs = try log.chain(of: author, in: family, seqs: (last + 1)...min(head, last + UInt64(Segment.maximumEvents)))
        } catch EventLogError.damagedEvent(_, let seq) where seq > last + 1 {
            envs = try log.chain(of: author, in: family, seqs: (last + 1)...(seq - 1))
        }
        // A seq missing from the log (its row deleted from the file): the
        // segment ends before the gap; a gap at its start is the event there
        // damaged (a segment holds consecutive events only).
        let whole = envs.enumerated().prefix { $1.seq == last + 1 + UInt64($0) }.map(\.element)
        if whole.isEmpty, head > last { throw EventLogError.missingEvent(author: author, seq: last + 1) }
        var bytes = 0
        if let cut = whole.firstIndex(where: { bytes += $0.bytes.count + 4; return bytes > Self.maximumSegmentBytes }), cut > 0 {
            return Array(whole[..<cut])
        }
        return whole
    }

    /// Creates the segment under its content-addressed name, in its
    /// author's folder. "Already exists" is success (`created` false): the
    /// same name can only hold the same bytes.
    private func create(_ segment: Segment) throws -> (name: String, size: Int, created: Bool) {
        let bytes = segment.encoded()
        return try create(segment, bytes: bytes, name: segment.name(for: bytes).description)
    }

    private func create(_ segment: Segment, bytes: [UInt8], name: String) throws -> (name: String, size: Int, created: Bool) {
        do throws(PeerError) {
            try peer.create(segment.author.hex + "/" + name, bytes)
        } catch {
            guard error == .alreadyExists else { throw error }
            return (name, bytes.count, false)
        }
        return (name, bytes.count, true)
    }

    /// Records one of this device's segments as its own, unconfirmed
    /// (``unconfirmedSize``), then creates it (``create(_:)``), then
    /// confirms it with its size. In that order: a process killed after
    /// the file landed (or a create whose answer was lost, the file
    /// written all the same) leaves a file this device knows as its own,
    /// which compaction merges and deletes like any other, not one left in
    /// its folder for good once the next round writes a segment of another
    /// range. An unconfirmed row whose file a full listing does not show
    /// never landed: ``republishMissing(listed:)`` forgets it rather than
    /// writing it (its events go out in the segment the next publish
    /// writes).
    /// - Parameter publishing: the segment carries this device's events on
    ///   from `r_published`, which it then advances to its last seq in the
    ///   commit that confirms it (one fsync of the log, not two).
    private func write(_ segment: Segment, publishing: Bool = false) throws -> String {
        let bytes = segment.encoded()
        let name = segment.name(for: bytes).description
        let key: [SQLValue] = [.blob(family.bytes), .text(name)]
        // A row already there (the same segment again) stays as it is until the create succeeds.
        try log.database.run("INSERT OR IGNORE INTO r_own(family, name, first_seq, last_seq, size) VALUES(?1, ?2, ?3, ?4, ?5)",
                             key + [.integer(Int64(segment.firstSeq)), .integer(Int64(segment.lastSeq)), .integer(Self.unconfirmedSize)])
        _ = try create(segment, bytes: bytes, name: name)
        try log.database.transaction {
            try log.database.run("INSERT OR REPLACE INTO r_own(family, name, first_seq, last_seq, size) VALUES(?1, ?2, ?3, ?4, ?5)",
                                 key + [.integer(Int64(segment.firstSeq)), .integer(Int64(segment.lastSeq)), .integer(Int64(bytes.count))])
            if publishing {
                try log.database.run("INSERT OR REPLACE INTO r_published(family, last_seq) VALUES(?1, ?2)",
                                     [.blob(family.bytes), .integer(Int64(segment.lastSeq))])
            }
        }
        return name
    }

    /// `r_own.size` of a segment recorded before its create was answered.
    /// (Below ``smallSegment``: compaction merges it like a small one.)
    public static let unconfirmedSize: Int64 = -1

    /// Merges this device's small segments into one, so its folder does not
    /// grow by a file per edit. Returns how many files it replaced.
    func compact() throws -> Int {
        var small: [(name: String, first: UInt64, last: UInt64)] = []
        try log.database.statement("SELECT name, first_seq, last_seq FROM r_own WHERE family = ?1 AND size < ?2 ORDER BY first_seq")
            .forEachRow([.blob(family.bytes), .integer(Int64(Self.smallSegment))]) { small.append(($0.text(0), UInt64($0.int(1)), UInt64($0.int(2)))) }
        guard small.count >= Self.compactAfter else { return 0 }
        // The first run of at least two contiguous small segments (a large one may sit between runs).
        var runs: [[(name: String, first: UInt64, last: UInt64)]] = [[small[0]]]
        for s in small.dropFirst() {
            // (Against the run's highest seq: own segments may overlap, an older cut beside a merged one.)
            if s.first <= runs[runs.count - 1].map(\.last).max()! + 1 { runs[runs.count - 1].append(s) } else { runs.append([s]) }
        }
        // Counted: those that can merge. A small one alone between large
        // ones (the round before each bulk upload) never can; counted, a
        // few of them made every later round merge its new segment into
        // the one before, rewriting a growing file that every device then
        // read again (a review: 6× the bytes of a fresh folder).
        guard runs.filter({ $0.count >= 2 }).reduce(0, { $0 + $1.count }) >= Self.compactAfter,
              let run = runs.first(where: { $0.count >= 2 }) else { return 0 }
        let first = run[0].first, last = run.map(\.last).max()!
        guard last - first < UInt64(Segment.maximumEvents) else { return 0 }
        guard let envs = try Self.unlessDamaged({ try log.chain(of: me, in: family, seqs: first...last) }) else { return 0 }   // damaged in the log: keep the files
        guard envs.count == Int(last - first + 1) else { return 0 }
        let merged = try write(Segment(envelopes: envs))
        for s in run where s.name != merged {
            do throws(PeerError) { try peer.delete(me.hex + "/" + s.name) } catch {
                guard error == .notFound else { throw error }
            }
            try log.database.run("DELETE FROM r_own WHERE family = ?1 AND name = ?2", [.blob(family.bytes), .text(s.name)])
        }
        return run.count
    }

    // MARK: - Pull

    /// Every path the last full listing showed (a shared directory, WebDAV),
    /// blobs included; `nil` when the peer has a change feed instead.
    public private(set) var lastListing: Set<String>?
    /// The folders the last full listing showed but could not read (their
    /// files unseen, not absent).
    public private(set) var lastUnreadFolders: Set<String> = []
    /// The report of the last ``pull(ingest:)``, also of one that failed
    /// midway: what it read and ingested before the failure.
    public private(set) var lastPull: PullReport?
    /// The tag of every object the last round's pages showed, blobs
    /// included (with a change feed: those that changed).
    public private(set) var lastTags: [String: String] = [:]

    public struct PullReport: Sendable {
        /// Files asked for (a file not found since its listing aside).
        public var filesRead = 0
        /// Of those, the ones not read whole (not yet arrived): the round's
        /// report counts only the others as read (a review: "pulled 0 new
        /// event(s) from 1 file(s)" of a file cut short).
        public var filesNotWhole = 0
        public var eventsIngested = 0
        public var accepted = 0
        /// Files that could not be verified yet: path and reason.
        public var notYetArrived: [(String, String)] = []
        public var forks = 0
        /// Events that wait, after the round, for an earlier event of
        /// their author not arrived yet (in `pending`).
        public var held = 0
        /// The notes of other devices that they left this location for
        /// another (``MovedNotice``, verified), when a full listing was
        /// made (`nil` otherwise: a change feed shows a note once).
        public var movedAway: [MovedNotice]?
        /// A note that could not be read this round (the server failing):
        /// what was known of the notes stands.
        public var movedNoticeUnread = false
        /// Why this device's own note that it moved away could not be
        /// removed from the location it syncs with again, if it could not.
        public var ownMovedNoticeLeft: String?
        /// Events put back into the middle of their author's chain (taken
        /// out of the log, read again from the files that hold them).
        public var gapsFilled = 0
        /// Events still missing from the middle of a chain after a round
        /// that looked for them (no file read holds them).
        public var gapsLeft = 0
        /// This device's own segments found damaged in its folder (changed
        /// since it wrote them, and no longer what their names promise) and
        /// written again from its log.
        public var repaired = 0
        /// This device's segments that a full listing no longer showed
        /// (deleted by someone, or a new shared folder), written again
        /// from its log.
        public var rewritten = 0
        /// Why writing back another device's missing segments failed (the
        /// round went on; tried again in an hour), or `nil`.
        public var writeBackFailure: PeerError?
        /// Copies of this device's segments that other devices wrote back
        /// into its folder while it was gone, removed: its own cover them.
        public var copiesRemoved = 0
        /// Other devices' segments written into a new location (see
        /// ``Replicator/carryOthersIfAsked()``).
        public var carried = 0
        /// Segments of other authors whose folders were gone from the
        /// shared folder (``writeBackVanished(listed:unreadFolders:)``), or
        /// whose files were found damaged there (``scrubOne(listed:own:done:tags:into:)``),
        /// written back from this log.
        public var restoredOthers = 0
        /// Files that verified as files but held events that do not (a bad
        /// signature, bytes that do not decode, another family's): each
        /// path with how many; the file's other events were taken.
        /// Files with events that do not verify: how many, and the reason
        /// `status` says of them too (``refusedEvents(_:)``).
        public var refused: [(path: String, events: Int, reason: String)] = []
        /// Files found this round that hold nothing of the place they lie
        /// in (a renamed copy, another author's or family's segment, a
        /// damaged conflict copy), with what they hold: `status` names them
        /// while they stay; `sync` says so once, as it finds them.
        public var misplaced: [(path: String, note: FileNote)] = []
        /// Files read whole under a name that does not say what they hold
        /// (a renamed copy), with what they hold: marked read with that
        /// reason once ingested, so that `status` names them.
        var misnamed: [String: FileNote] = [:]
        /// This device's own segments that the others cannot read (not a
        /// file any more, not readable, damaged) and that could not be
        /// written again: each path with what is wrong. Until something
        /// removes what is in the way, the others miss those events.
        public var ownNotRestored: [(path: String, reason: String)] = []
        /// This device's own segments missing from the shared folder that
        /// cannot be written again, events of theirs (`seqs`) taken out of
        /// this log too.
        public var ownMissingTakenOut: [(path: String, seqs: [UInt64])] = []
        /// Why this device's own folder could not be listed, when it could
        /// not (its permissions changed): its segments are not taken for
        /// missing, nor written again, meanwhile.
        public var ownFolderUnreadable: String?
        /// This device's own segments missing from the shared folder or
        /// damaged there that cannot be written again: an event of theirs
        /// is damaged in this log (bit rot), at `seq`. The others miss those
        /// events, and wait for them before any later one of this device.
        public var ownDamagedInLog: [(path: String, seq: UInt64)] = []
    }

    /// Ingests the events of segment files, in order, each file's in a
    /// transaction of its own, calling back after each file's commit with
    /// its index and report (``EventLog/ingest(batches:family:now:prepare:onAccepted:onCommitted:)``):
    /// what a pull hands the segments it read to.
    public typealias SegmentIngest = (_ segments: [[[UInt8]]], _ onIngested: (Int, IngestReport) throws -> Void) throws -> Void

    /// Segment files read and handed to `ingest` together, at most (and
    /// ``ingestGroupBytes`` of them): the checks of the next ones go on
    /// while one commits.
    public static let ingestGroupFiles = 16
    public static let ingestGroupBytes = 16 << 20

    /// Reads every object of the family's area not read before (pages of
    /// changes since the last token, then anything left unverifiable) and
    /// hands the events of the segments to `ingest`, up to
    /// ``ingestGroupFiles`` files at a time. A file is marked read once its
    /// events are committed; the token is saved only after its page was
    /// applied; an expired token means listing from scratch.
    public func pull(ingest: SegmentIngest) throws -> PullReport {
        var report = PullReport()
        // What a pull that fails midway did before it (what it ingested is
        // kept): for the error to say.
        defer { lastPull = report }
        // This device's own segments whose events its log holds. One past
        // its log's head (events taken out of the log, by hand or a tool,
        // after they were published) is read like a file this device did
        // not write, so that its events come back rather than being
        // written again, differently: a fork (an audit review).
        var ownTags = try ownSegmentTags(through: log.head(of: me, in: family).seq)
        // Events missing from the middle of a chain (taken out of the log
        // past its rules), looked for when the log says they may be: the
        // files whose names hold them, this device's own included, are read
        // again, and ingest puts each back in its place.
        let gapsAsked = try chainGapsAsked()
        let gaps = gapsAsked == nil ? [:] : try log.fillableChainGaps(in: family)
        var holdingGaps = Set<String>()
        for name in ownTags.keys {
            guard case .segment(let n) = SharedFileName(name), Self.overlaps(n, gaps[me]) else { continue }
            ownTags[name] = nil
            holdingGaps.insert(me.hex + "/" + name)
        }
        let own = Set(ownTags.keys)
        var token = try meta("token")
        var done = try doneFiles()
        // Files read before whose names promise events of their author that
        // this log no longer holds nor waits for (its last rows lost: a
        // write-ahead log deleted, a file restored or altered): read again,
        // so that the events come back (an audit review: they were gone for
        // good, the files marked read).
        let promisesMissing = try readFilesPromisingMissingEvents(gaps: gaps).union(holdingGaps)
        var tried = Set<String>()          // read once per round at most
        var listed = Set<String>()         // what a full listing showed
        var unreadFolders = Set<String>()  // folders a listing could not read: their files unseen, not absent
        var unreadSaid: [String] = []      // the others' among them, with why: kept for `status`
        var ownUnread = false              // this device's own among them (not a file in its place)
        var placeholders = Set<String>()   // files listed as iCloud placeholders (their real paths): not on disk
        var tags: [String: String] = [:]   // the tag of each object a page showed
        // Files that failed before are read after everything new, so that
        // what keeps failing does not hold up what arrived since.
        let failedBefore = Set(try unverifiable().map(\.path))
        // One object that keeps failing after retries (an HTTP 500 for that
        // object alone) is "not yet arrived", and the round goes on. Two in a
        // row among the new files mean the server itself is failing: the
        // round ends, as when the listing fails (the second asked once, so
        // that a failing server costs the round one back-off, not two). A file that failed before is
        // asked for once, without the retries' back-off (it has had those
        // already, so a server that keeps failing on it costs a round one
        // request, not half a minute), and two in a row end only that part of
        // the round (they are taken in a new order each round, so none waits
        // behind the others for good).
        var failedInARow = 0
        // The devices whose notes that they moved are read (``readMovedNotice``), found at the first.
        var noteAuthors: Set<String>?
        // The listed tag of this device's own note of its famctl (``VersionNote``),
        // and the others' notes listed: read once their events are in.
        var ownNoteTag = ""
        var versionNotes: [(path: String, folder: String, tag: String)] = []
        // Segments read and not ingested yet, in order.
        var group: [(path: String, segment: Segment)] = []
        var groupBytes = 0
        func ingestGroup() throws {
            guard !group.isEmpty else { return }
            let segments = group
            group = []
            groupBytes = 0
            try ingest(segments.map(\.segment.events)) { i, r in
                report.eventsIngested += segments[i].segment.events.count
                report.accepted += r.accepted.count
                report.gapsFilled += r.gapsFilled
                report.forks += r.count { if case .fork = $0 { true } else { false } }
                let (refused, why) = Self.refusedEvents(r)
                if refused > 0 { report.refused.append((segments[i].path, refused, why)) }
                // A file with events that do not verify stays named by
                // `status` for as long as the shared folder holds it
                // (``filesOfNote()``), not in one round's output alone.
                try markRead(segments[i].path, refused > 0 ? FileNote(.refusedEvents, why) : report.misnamed[segments[i].path])
            }
        }
        func queue(_ path: String, _ segment: Segment) throws {
            group.append((path, segment))
            groupBytes += segment.events.reduce(0) { $0 + $1.count }
            if group.count >= Self.ingestGroupFiles || groupBytes >= Self.ingestGroupBytes { try ingestGroup() }
        }
        func attempt(_ path: String, retryingOld: Bool) throws -> Bool? {
            do {
                // After an object failed through its back-off, the next is
                // asked once: a second failure then ends the round (the server
                // is failing) without a second back-off; a success means the
                // failure was that object's, and the back-off is kept for the rest.
                let read = try read(path, own: own, once: retryingOld || failedInARow > 0, listedTag: tags[path], into: &report)
                failedInARow = 0
                switch read {
                case .segment(let segment):
                    try queue(path, segment)
                    return true
                case .done: return true
                case .notYet: return false
                }
            } catch let error as PeerError where error.isTransient {
                failedInARow += 1
                // Said and marked whatever comes next: the report names
                // every file that failed (a review: the second of two was
                // left out), and one that ended the round is asked once,
                // without the back-off, at the next (it got a back-off of
                // its own there, as if new).
                report.notYetArrived.append((path, error.description))
                try markUnverifiable(path, error.description)
                if failedInARow >= 2 {
                    if retryingOld { return nil }
                    // The files read so far are ingested (and marked) first:
                    // a server that fails after a few requests each round must
                    // not make every round read the same files again.
                    try ingestGroup()
                    throw error
                }
                return false
            } catch let error as PeerError where error.isOffline {
                // Stalled (or gone) on this file: asking again within the
                // round would wait out the timeout again. It is read last
                // next round; the files read so far are ingested (and marked)
                // first; among the files that failed before, the round goes on
                // without the rest of them.
                report.notYetArrived.append((path, error.description))
                try markUnverifiable(path, error.description)
                if retryingOld { return nil }
                try ingestGroup()
                throw error
            }
        }
        var more = true
        while more {
            let page: ChangePage
            do throws(PeerError) {
                page = try peer.changes(since: token, limit: Self.pageSize)
            } catch {
                guard error == .tokenExpired else { throw error }
                token = nil
                try setMeta("token", nil)
                continue
            }
            // In path order: an author's segments then come in seq order
            // (their names hold the first and last seq, zero-padded), as a
            // directory's listing (in the file system's hash order) or a
            // server's need not give them. A later segment read first holds
            // all its events as waiting, and each is then taken out of
            // `pending` one by one, opened again on the sequential thread:
            // a new device's first sync of 20 002 events in three segments,
            // listed last, first, middle, took 1.17–1.42 s, and 0.87 s in order.
            // A folder the listing could not read: its files are not known
            // to be absent, only unseen.
            for unread in page.unreadableFolders {
                // This device's own folder there but unreadable: said as such
                // (its segments are unseen, not missing). A file in its place
                // is dealt with by the republishing, which says so.
                unreadFolders.insert(unread.folder)
                if unread.folder == me.hex, !unread.fileInPlace { report.ownFolderUnreadable = unread.reason; ownUnread = true; continue }
                report.notYetArrived.append((unread.folder + "/", "the folder cannot be read: \(unread.reason)"))
                unreadSaid.append(unread.folder + "/\t" + unread.reason)
            }
            for object in page.objects.sorted(by: { $0.path < $1.path }) where !object.deleted {
                if page.token == "listing" { listed.insert(object.path) }
                // An iCloud placeholder of a segment not read yet: not yet
                // arrived, said at every round until its bytes are there (it
                // is never recorded). One of a segment read already, or of
                // this device's own, is a copy evicted to save space: nothing
                // to do.
                if let slash = object.path.firstIndex(of: "/"), case .placeholder(let name) = SharedFileName(String(object.path[object.path.index(after: slash)...])) {
                    let real = String(object.path[..<slash]) + "/" + name.description
                    // The file is there, its bytes elsewhere: not missing (this
                    // device's own is not written again beside it).
                    if page.token == "listing" { listed.insert(real); placeholders.insert(real) }
                    // (This device's own, whose events its log holds, whatever wrote the file.)
                    let ownAndHeld = object.path.hasPrefix(me.hex + "/") && ((try? log.head(of: me, in: family).seq) ?? 0) >= name.lastSeq
                    if !done.contains(real), !own.contains(name.description), !ownAndHeld {
                        report.notYetArrived.append((object.path, "an iCloud placeholder: the file's bytes are not on this machine yet (iCloud Drive downloads them when asked: open the folder, or choose Download Now; famctl reads it at a later sync)"))
                    }
                    continue
                }
                // A device's note of the famctl it runs; its iCloud placeholder
                // (the bytes evicted) stands for the note, not read this round.
                if let slash = object.path.firstIndex(of: "/"), object.path[object.path.index(after: slash)...] == "." + VersionNote.fileName + ".icloud" {
                    let folder = String(object.path[..<slash])
                    if page.token == "listing" { listed.insert(folder + "/" + VersionNote.fileName) }
                    if folder == me.hex { ownNoteTag = "" }   // (as left, unread: see ``noteVersions``)
                    continue
                }
                if let slash = object.path.firstIndex(of: "/"), object.path[object.path.index(after: slash)...] == VersionNote.fileName {
                    if page.token == "listing" { listed.insert(object.path) }
                    let folder = String(object.path[..<slash])
                    if folder == me.hex { ownNoteTag = object.tag } else { versionNotes.append((object.path, folder, object.tag)) }
                    continue
                }
                // A device's note that it left this location for another.
                if let slash = object.path.firstIndex(of: "/"), object.path[object.path.index(after: slash)...] == MovedNotice.fileName {
                    if page.token == "listing" { listed.insert(object.path) }
                    if noteAuthors == nil { noteAuthors = Set(try log.heads(in: family).keys.map(\.hex)) }
                    readMovedNotice(object.path, folder: String(object.path[..<slash]), tag: object.tag, authors: noteAuthors ?? [], into: &report)
                    continue
                }
                if !object.tag.isEmpty { tags[object.path] = object.tag }
                if object.path.hasPrefix(me.hex + "/"), let known = ownTags[String(object.path.dropFirst(me.hex.count + 1))],
                   known != object.tag, !tried.contains(object.path) {
                    tried.insert(object.path)
                    if try checkOwn(object.path, listedTag: object.tag, into: &report) { report.repaired += 1 }
                    continue
                }
                guard !done.contains(object.path) || promisesMissing.contains(object.path), !tried.contains(object.path), !failedBefore.contains(object.path) else { continue }
                tried.insert(object.path)
                if try attempt(object.path, retryingOld: false) == true { done.insert(object.path) }
            }
            try ingestGroup()
            token = page.token
            try setMeta("token", page.token)
            more = page.moreComing
        }
        failedInARow = 0
        // A file whose content failed to verify is read again only once its
        // tag changes (it was still arriving, or has been replaced): the same
        // bytes would fail the same way, and reading every planted file at
        // every round would let anyone with the folder make each round read
        // gigabytes. A file the peer failed to serve is asked for each round.
        // A tag that stays while the content changes (a writer that restores
        // the time, within one tick of the clock) is caught by the hourly read.
        let judged = try refusedFileTags()
        let stale = Int64(Date().timeIntervalSince1970 - Self.refusedRetryAfter)
        let old = try unverifiable().shuffled()
        for (i, (path, _)) in old.enumerated() where !done.contains(path) && !tried.contains(path) {
            if let refused = judged[path], refused.checkedAt > stale, refused.tag == Self.judgedTag(tags[path]) { continue }
            tried.insert(path)
            guard try attempt(path, retryingOld: true) != nil else {
                // The server failing: the others that failed before are not
                // asked this round, and are said as not yet arrived still.
                for (rest, reason) in old[(i + 1)...] where !done.contains(rest) && !tried.contains(rest) {
                    report.notYetArrived.append((rest, "not asked again this round, the server failing (before: \(reason))"))
                }
                break
            }
        }
        try ingestGroup()
        lastTags = tags
        // The others' notes of their famctl, of devices whose events the log
        // holds now (a device's first segments are read in the same round).
        // (The log's authors, once: after the round's events are in.)
        let versionAuthors = versionNotes.isEmpty && token != "listing" ? [] : Set(try log.heads(in: family).keys.map(\.hex))
        // (A server that stalls or asks to wait is not asked again this round.)
        for note in versionNotes where versionAuthors.contains(note.folder) {
            guard readVersionNote(note.path, folder: note.folder, tag: note.tag) else { break }
        }
        // What a full listing showed of the others' notes: none is news too
        // (a device that came back removed its own).
        if token == "listing", report.movedAway == nil, !report.movedNoticeUnread { report.movedAway = [] }
        if token == "listing" { try noteVersions(listed: listed, unreadFolders: unreadFolders, ownNoteTag: ownNoteTag, authors: versionAuthors) }
        if report.movedNoticeUnread { report.movedAway = nil }
        if !listed.isEmpty || token == "listing" {
            lastListing = listed
            lastUnreadFolders = unreadFolders
            // Said by `status` too until a listing reads them (a review:
            // only the round's output named another device's folder that
            // could not be read, while status showed it up to date).
            if token == "listing" {
                try setMeta("unreadable_folders", unreadSaid.isEmpty ? nil : unreadSaid.joined(separator: "\n"))
                try forgetFilesGone(listed: listed, unreadFolders: unreadFolders)
            }
            var present = listed
            // Its own folder unread: its files unseen, not missing (a review:
            // each was said to be missing, with advice to remove what is there).
            if !ownUnread {
                let rewritten = try republishMissing(listed: listed, into: &report, written: &present)
                report.rewritten += rewritten
                if rewritten > 0 { leaveVersionNoteIfOwed(missing: !listed.contains(me.hex + "/" + VersionNote.fileName)) }
            }
            report.copiesRemoved += try removeCopiesOfOwn(present: present, placeholders: placeholders)
            // Writing back another device's folder is housekeeping for the
            // devices joining later: a failure (a login that may only read,
            // a full server) is said, the round goes on, and the write-back
            // waits an hour (each try would cost the retries again) (a
            // review over WebDAV: exit 73 and no report at every round).
            report.writeBackFailure = try housekeeping("writeback_failed_at", failureIf: { $0 != .tokenExpired }) {
                report.restoredOthers += try writeBackVanished(listed: listed, unreadFolders: unreadFolders)
            }
            try scrubOne(listed: listed, own: own, done: done, tags: tags, into: &report)
            try forgetFilesOfNote(notIn: listed, unreadFolders: unreadFolders)
        }
        if let gapsAsked {
            // Looked for until none is left: another round may find the file
            // that holds one (still arriving, a folder unreadable this round).
            let left = try log.fillableChainGaps(in: family)
            report.gapsLeft = left.values.reduce(0) { $0 + $1.reduce(0) { $0 + Int($1.count) } }
            if left.isEmpty { try setMeta("gaps_checked", gapsAsked); try setMeta("gaps_retry_at", nil) }
            // Some left: looked for again in an hour, not at every round (each
            // reads the files that hold their seqs again: a review measured
            // a second a round for an 8 MB segment, under --watch too).
            else { try setMeta("gaps_retry_at", String(Int64(Date().timeIntervalSince1970) + Self.gapRetryAfter)) }
        }
        report.held = try log.pendingByAuthor(in: family).values.reduce(0, +)
        if try roundIsWorthRecording(report) { try setMeta("last_sync", ISO8601DateFormatter().string(from: Date())) }
        try setMeta("last_error", nil)
        return report
    }

    /// Reads another device's note that it left this location
    /// (``MovedNotice``), kept in the report when it verifies as that
    /// device's, of this family. This device's own is removed: it syncs
    /// here again. Nothing here ever fails the round.
    ///
    /// Only the notes in the folders of devices whose events this log holds
    /// are read (a folder anyone made is passed over), and a file that is
    /// not such a note is not read again until its tag changes: a planted
    /// file must not be downloaded at every round (a review).
    private func readMovedNotice(_ path: String, folder: String, tag: String, authors: Set<String>, into report: inout PullReport) {
        if folder == me.hex {
            do throws(PeerError) { try peer.deleteOnce(path) } catch {
                if error != .notFound { report.ownMovedNoticeLeft = error.description }
            }
            return
        }
        guard authors.contains(folder) else { return }
        let key = "moved_refused:" + path
        if !tag.isEmpty, (try? meta(key)) == tag { return }
        let bytes: [UInt8]
        do throws(PeerError) { (bytes, _) = try peer.getOnce(path) } catch {
            // Not read this round: what was known of it stands.
            if error != .notFound { report.movedNoticeUnread = true }
            return
        }
        guard let notice = MovedNotice(verifying: bytes), notice.author.hex == folder, notice.family == family else {
            if !tag.isEmpty { try? setMeta(key, tag) }
            return
        }
        report.movedAway = (report.movedAway ?? []) + [notice]
    }

    /// Reads another device's ``VersionNote`` when its tag is new, and keeps
    /// what it says (``versionsSeen()``). A file that is not its author's
    /// note of this family is passed over, and not read again until its
    /// tag changes. Nothing here ever fails the round.
    /// Returns `false` when the peer stalls or asks to wait (the round asks
    /// it for no more notes).
    @discardableResult
    private func readVersionNote(_ path: String, folder: String, tag: String) -> Bool {
        let key = "version_tag:" + folder
        if !tag.isEmpty, (try? meta(key)) == tag { return true }
        // A server that gives no tags: a note known is read again hourly,
        // not at every round.
        if tag.isEmpty, let known = try? meta("version_note:" + folder), known != "none",
           let checked = (try? meta(key)).flatMap({ $0.flatMap(Double.init) }), Date().timeIntervalSince1970 - checked < 3600 { return true }
        let bytes: [UInt8]
        do throws(PeerError) { (bytes, _) = try peer.getOnce(path) } catch {
            return !(error.isOffline || error.isThrottled || error.isTransient)
        }
        if let note = VersionNote(verifying: bytes), note.author.hex == folder, note.family == family {
            let said = Self.seenText(note)
            if (try? meta("version_note:" + folder)) != said { try? setMeta("version_note:" + folder, said) }
            if (try? meta("version_bytes:" + folder)) != Hex.encode(bytes) { try? setMeta("version_bytes:" + folder, Hex.encode(bytes)) }
        }
        try? setMeta(key, tag.isEmpty ? String(Date().timeIntervalSince1970) : tag)
        return true
    }

    /// After a full listing: a device whose folder holds segments and no
    /// note of its famctl runs one from before the notes (or its note has
    /// not arrived); and this device's own note is left where missing or
    /// out of date. Failing to leave it fails nothing: the next full
    /// listing tries again.
    private func noteVersions(listed: Set<String>, unreadFolders: Set<String>, ownNoteTag: String, authors heads: Set<String>) throws {
        let withSegments = Self.foldersWithSegments(listed)
        // A note seen once stands: a folder without one may hold segments
        // another device wrote there (a move, a folder written back) while
        // its author syncs elsewhere.
        for folder in withSegments where folder != me.hex && heads.contains(folder) && !unreadFolders.contains(folder) {
            if !listed.contains(folder + "/" + VersionNote.fileName), try meta("version_note:" + folder) == nil {
                try setMeta("version_note:" + folder, "none")
            }
        }
        // Only beside this device's segments: a folder gone (moved aside,
        // a drive not mounted) is not made again for a note, as its
        // absence is what the rounds that write segments back go by.
        guard let note = versionNote, withSegments.contains(me.hex) else { return }
        let path = me.hex + "/" + VersionNote.fileName
        guard listed.contains(path) else { leaveVersionNoteIfOwed(missing: true); return }
        // Its note as left, unchanged since it was checked: nothing to do
        // (a server that gives no tags: as left, whatever it holds).
        let said = Self.seenText(note)
        let checkedTag = try meta("version_tag:" + me.hex)
        if try meta(versionNoteKey) == said, ownNoteTag.isEmpty || checkedTag == ownNoteTag { return }
        // Changed, or not checked yet: read, and kept when it says what
        // this device would (a note replaced by another's is written again).
        // Not read (the server failing): left for a later round.
        let bytes: [UInt8]
        do throws(PeerError) { (bytes, _) = try peer.getOnce(path) } catch {
            if error == .notFound { leaveVersionNoteIfOwed(missing: true) }
            return
        }
        if let held = VersionNote(verifying: bytes), held.author == me, held.family == family, held.level == note.level, held.version == note.version {
            try setMeta(versionNoteKey, said)
            try setMeta("version_tag:" + me.hex, ownNoteTag.isEmpty ? nil : ownNoteTag)
            return
        }
        leaveVersionNoteIfOwed(missing: true)
    }

    /// What `r_meta` keeps of a note: its level and version, tab-separated
    /// (read back by ``versionsSeen()``).
    private static func seenText(_ note: VersionNote) -> String { "\(note.level)\t\(note.version)" }

    /// Where this device's note was last left at this location (`r_meta`):
    /// each location has its own (a move leaves one at the new location).
    private var versionNoteKey: String { "version_note_left@" + peer.label }

    /// Writes this device's ``versionNote`` into its folder, over another,
    /// unless it left this one here already (`missing`: the listing showed
    /// none, whatever was left). A failure fails nothing: a later round
    /// writes it.
    private func leaveVersionNoteIfOwed(missing: Bool = false) {
        guard let note = versionNote else { return }
        let said = Self.seenText(note)
        if !missing, (try? meta(versionNoteKey)) == said { return }
        do throws(PeerError) {
            try putOwnNote(me.hex + "/" + VersionNote.fileName, note.bytes)
            try? setMeta(versionNoteKey, said)
            try? setMeta("version_tag:" + me.hex, nil)
        } catch {}
    }

    /// What this device knows of the famctl each other device runs, by
    /// device id (hex): the level and version its note gave, or `nil` for
    /// a device whose folder held segments and no note at the last full
    /// listing. Devices not seen in a listing are not in it.
    public func versionsSeen() throws -> [String: (level: UInt32, version: String)?] {
        var seen: [String: (level: UInt32, version: String)?] = [:]
        var rows: [(String, String)] = []
        try log.database.statement("SELECT key, value FROM r_meta WHERE family = ?1 AND substr(key, 1, 13) = 'version_note:'")
            .forEachRow([.blob(family.bytes)]) { rows.append(($0.text(0), $0.text(1))) }
        for (key, value) in rows {
            let device = String(key.dropFirst("version_note:".count))
            let parts = value.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            if parts.count == 2, let level = UInt32(parts[0]) { seen[device] = (level, parts[1]) } else { seen[device] = .some(nil) }
        }
        return seen
    }

    /// Leaves this device's note in this location that it now syncs
    /// elsewhere (``MovedNotice``), in its own folder, over one left before.
    /// Asked once, without retries: the location may be gone.
    public func leaveMovedNotice(_ notice: MovedNotice) throws(PeerError) {
        try putOwnNote(me.hex + "/" + MovedNotice.fileName, notice.bytes)
    }

    /// Writes one of this device's notes at `path`, over one of its own
    /// there before: that one is removed first, only when it is in the way
    /// (a review: a read-only share failed on a needless DELETE).
    private func putOwnNote(_ path: String, _ bytes: [UInt8]) throws(PeerError) {
        do { try peer.createOnce(path, bytes) } catch {
            guard error == .alreadyExists else { throw error }
            do { try peer.deleteOnce(path) } catch { guard error == .notFound else { throw error } }
            try peer.createOnce(path, bytes)
        }
    }

    /// Whether this location holds exactly `notice` as this device's note:
    /// the same place as the one it was left in (another path or spelling).
    public func holdsMovedNotice(_ notice: MovedNotice) -> Bool {
        guard let (bytes, _) = try? peer.getOnce(me.hex + "/" + MovedNotice.fileName) else { return false }
        return bytes == notice.bytes
    }

    /// Removes this device's note from this location, should it be there
    /// (a move given up, or into the same folder under another path).
    public func removeMovedNotice() throws(PeerError) {
        do { try peer.deleteOnce(me.hex + "/" + MovedNotice.fileName) } catch { guard error == .notFound else { throw error } }
    }

    /// What reading one object came to.
    private enum ReadResult {
        /// A segment that verifies as a file: its events are to be ingested.
        case segment(Segment)
        /// Nothing to ingest, and nothing more to do with it (not ours to
        /// read, or removed since the listing).
        case done
        /// Not verifiable yet: recorded as such, read again later.
        case notYet
    }

    /// Reads one object.
    ///
    /// - Parameters:
    ///   - own: the segments this device wrote into its own folder.
    ///   - once: ask the peer once, without its retries (an object that
    ///     failed in an earlier round).
    ///   - listedTag: the object's tag in this round's listing, if it showed it.
    private func read(_ path: String, own: Set<String>, once: Bool, listedTag: String?, into report: inout PullReport) throws -> ReadResult {
        let parts = path.split(separator: "/")
        guard parts.count == 2, parts[0].count == 64, let folder = DeviceID(hex: String(parts[0])) else { return .done }
        let kind = SharedFileName(String(parts[1]))
        let promised: SegmentName
        switch kind {
        case .other, .placeholder: return .done   // placeholders: see `pull`
        case .segment(let n):
            // This device's own files are not read, but one in its folder that
            // it did not write is: another install of the same key (a cloned
            // home: ingest finds the fork), or this home restored from an older
            // backup (its later events come back instead of being forked).
            if folder == me, own.contains(String(parts[1])) { return .done }
            promised = n
        case .conflictCopy(let n): promised = n
        }
        report.filesRead += 1
        let bytes: [UInt8], tag: String
        do throws(PeerError) {
            (bytes, tag) = try once ? peer.getOnce(path) : peer.get(path)
        } catch {
            if error.isTransient || error.isOffline { report.filesNotWhole += 1; throw error }
            if error == .notFound {
                report.filesRead -= 1
                try log.database.run("DELETE FROM r_files WHERE family = ?1 AND path = ?2", [.blob(family.bytes), .text(path)])
                return .done   // removed since the listing (its author compacted it): nothing to read
            }
            // This one object cannot be read: not yet arrived. One refused
            // (too large, no permission) is asked for again when it changes,
            // or in an hour; anything else at the next round.
            report.notYetArrived.append((path, error.description))
            let refused = { if case .refused = error { true } else { false } }()
            try markUnverifiable(path, error.description,
                     tag: refused ? Self.judgedTag(listedTag) : nil)
            report.filesNotWhole += 1
            return .notYet
        }
        let segment: Segment
        let hashes = Segment.Hashes(of: bytes)
        do throws(SegmentError) {
            if case .segment = kind, !promised.matches(fileHash: hashes.file) { throw .nameMismatch }
            segment = try Segment(decoding: bytes, hashes: hashes)
            guard segment.author == folder, segment.author == promised.author, segment.family == family else { throw .wrongFolder }
            if case .segment = kind, segment.firstSeq != promised.firstSeq || segment.lastSeq != promised.lastSeq { throw .nameMismatch }
        } catch {
            // A whole segment of this folder's author under a name that
            // promises other seqs (a copy renamed, by mistake or to make its
            // author wait, since a device does not write past what its folder
            // names): nothing to wait for. Its events are taken as any (each
            // is verified), whether this log holds them yet or not (the
            // original may come later in the round); the file is marked read
            // with what it holds, and `status` names it while it stays
            // (``filesOfNote()``).
            if error == .nameMismatch, let copy = try? Segment(decoding: bytes, hashes: hashes), copy.author == folder, copy.family == family {
                let note = FileNote(.misplaced, "a copy of seqs \(copy.firstSeq)–\(copy.lastSeq) under a name that says seqs \(promised.firstSeq)–\(promised.lastSeq)")
                report.misnamed[path] = note
                report.misplaced.append((path, note))
                return .segment(copy)
            }
            // A whole segment of another author or family under this folder's
            // name: nothing of this folder's author to wait for (its events
            // are read from their own folder). Read, and named by `status`.
            if error == .wrongFolder, let other = try? Segment(decoding: bytes, hashes: hashes) {
                // Named as its folder's author's (a renamed copy), or as
                // another's (a file copied into the wrong folder).
                // (The folder is named too: a copy of another device's file
                // under its own name said the author twice, never whose
                // folder it was in; a review.)
                let name = promised.author == folder ? "under a name of this folder's"
                    : promised.author == other.author ? "under its own name, in device \(folder.short)'s folder"
                    : "named as device \(promised.author.short)'s, in device \(folder.short)'s folder"
                // This family's: its events are taken as any (each is
                // verified; where a file lies proves nothing), as a renamed
                // copy's are. It may be the only copy some device can read
                // (a security review: moved out of its author's folder, its
                // events were left out, and the file called removable).
                if other.family == family {
                    let note = FileNote(.misplaced, "a segment of author \(other.author.short) \(name); \(FileNote.readFromIt)")
                    report.misnamed[path] = note
                    report.misplaced.append((path, note))
                    return .segment(other)
                }
                let note = FileNote(.misplaced, "a segment of another family \(name); nothing here is this folder's")
                try markRead(path, note)
                report.misplaced.append((path, note))
                return .done
            }
            // A sync engine's conflict copy is made whole (a rename of a
            // file it had): one that does not verify is not on its way, it
            // is damaged. Nothing to wait for: named by `status` while it
            // stays, as a leftover that can be deleted, not "not yet arrived"
            // at every round for good (a review over real Syncthing).
            if case .conflictCopy = kind {
                // (Not "still arriving": a conflict copy is made whole.)
                let why = error == .checksum ? "its checksum does not match" : error.description
                let note = FileNote(.damagedConflictCopy, FileNote.damagedConflictCopy + " (\(why)): no event file, nothing in it is read; it can be deleted")
                try markRead(path, note)
                report.misplaced.append((path, note))
                return .done
            }
            report.notYetArrived.append((path, error.description))
            try markUnverifiable(path, error.description, tag: Self.judgedTag(tag))
            report.filesNotWhole += 1
            return .notYet
        }
        return .segment(segment)
    }

    /// A segment's name at `path` when it lies in its author's folder
    /// (not a conflict copy, a placeholder, nor a copy in another folder).
    /// Whether the segment's seqs meet one of `gaps`.
    static func overlaps(_ n: SegmentName, _ gaps: [ClosedRange<UInt64>]?) -> Bool {
        gaps?.contains { $0.overlaps(n.firstSeq...n.lastSeq) } ?? false
    }

    /// When the log last asked for its chains' gaps to be looked for
    /// (``EventLog/chainGapsAsked()``), should no pull have found them
    /// all filled since.
    private func chainGapsAsked() throws -> String? {
        guard let asked = try log.chainGapsAsked(), try meta("gaps_checked") != asked else { return nil }
        if let retry = try meta("gaps_retry_at").flatMap({ Int64($0) }), Int64(Date().timeIntervalSince1970) < retry,
           try meta("gaps_retry_asked") == asked { return nil }
        try setMeta("gaps_retry_asked", asked)
        return asked
    }

    /// How long a round waits before it looks again for events missing
    /// from the middle of a chain that the last look left missing.
    static let gapRetryAfter: Int64 = 3600

    static func segmentInItsFolder(_ path: String) -> SegmentName? {
        guard let slash = path.firstIndex(of: "/"), case .segment(let n) = SharedFileName(String(path[path.index(after: slash)...])),
              n.author.hex == path[..<slash] else { return nil }
        return n
    }

    /// Of the files marked read without a reason (their events taken),
    /// those whose names promise events past the last one this log holds
    /// of their author or waits for in `pending` (a forked author's chain
    /// stops at its fork: left out). This device's own among them: ones it
    /// read back from its folder once (a home restored from a backup).
    ///
    /// With `gaps`, also those whose seqs meet one of their author's
    /// (events missing from the middle of a chain).
    private func readFilesPromisingMissingEvents(gaps: [DeviceID: [ClosedRange<UInt64>]] = [:]) throws -> Set<String> {
        let heads = try log.heads(in: family)
        var waiting: [DeviceID: UInt64] = [:]
        try log.database.statement("SELECT author, max(seq) FROM pending WHERE family = ?1 GROUP BY author").forEachRow([.blob(family.bytes)]) { r in
            let a = r.blob(0)
            if a.count == 32 { waiting[DeviceID(bytes: a)] = UInt64(r.int(1)) }
        }
        var out = Set<String>()
        var forked: [DeviceID: Bool] = [:]
        try log.database.statement("SELECT path FROM r_files WHERE family = ?1 AND status = 'read' AND reason IS NULL").forEachRow([.blob(family.bytes)]) { r in
            let path = r.text(0)
            guard let n = Self.segmentInItsFolder(path) else { return }
            // Seqs missing from the middle of its chain (below any fork point already).
            if Self.overlaps(n, gaps[n.author]) { out.insert(path); return }
            let held = max(heads[n.author]?.seq ?? 0, waiting[n.author] ?? 0)
            guard n.lastSeq > held else { return }
            if forked[n.author] == nil { forked[n.author] = try log.isForked(n.author, in: family) }
            if forked[n.author] == false { out.insert(path) }
        }
        return out
    }

    /// The names in `device`'s folder that a replicator of `log` has read
    /// (their events are in the log, waiting in `pending`, or in a fork
    /// proof) or that the log's own device wrote (`r_own`; a segment's name
    /// carries its author's key, so those match only that device's folder).
    /// A file found unverifiable (cut short, still arriving, damaged) is not
    /// among them. Empty when no replicator has run on this log yet. Without
    /// a peer: a check made before every local write.
    public static func namesRead(inFolderOf device: DeviceID, family: FamilyID, log: EventLog) -> Set<String> {
        var out = Set<String>()
        try? log.database.statement("SELECT path FROM r_files WHERE family = ?1 AND path LIKE ?2 AND status = 'read'")
            .forEachRow([.blob(family.bytes), .text(device.hex + "/%")]) { out.insert(String($0.text(0).dropFirst(device.hex.count + 1))) }
        out.formUnion((try? ownSegmentNames(family: family, log: log)) ?? [])
        return out
    }

    /// This device's own segments up to seq `head`, each with the tag its
    /// file had when it last read back whole (`nil`: not read back since it
    /// was written).
    private func ownSegmentTags(through head: UInt64) throws -> [String: String?] {
        var out: [String: String?] = [:]
        try log.database.statement("SELECT name, tag FROM r_own WHERE family = ?1 AND last_seq <= ?2").forEachRow([.blob(family.bytes), .integer(Int64(head))]) {
            out[$0.text(0)] = $0.isNull(1) ? String?.none : $0.text(1)
        }
        return out
    }

    /// Reads back one of this device's own segments whose file changed
    /// since it last read whole (or was never read back), and writes it
    /// again from the log when it no longer holds what its name promises
    /// (damaged, cut short, overwritten): the others would otherwise wait
    /// for its events for ever. Returns whether it was written again. A
    /// file that cannot be read or replaced now (whatever the peer answers)
    /// is left for the next round, asked for once: it never holds up the
    /// round.
    ///
    /// - Parameter listedTag: the file's tag in this round's listing, kept
    ///   once it reads back whole (the listing's, not the read's: a server
    ///   may spell the two differently, and the next listing is what it is
    ///   compared with).
    private func checkOwn(_ path: String, listedTag: String, into report: inout PullReport) throws -> Bool {
        let name = String(path.dropFirst(me.hex.count + 1))
        guard case .segment(let promised) = SharedFileName(name),
              let row = try log.database.statement("SELECT first_seq, last_seq FROM r_own WHERE family = ?1 AND name = ?2")
                .first([.blob(family.bytes), .text(name)], { (UInt64($0.int(0)), UInt64($0.int(1))) })
        else { return false }
        let bytes: [UInt8], tag: String
        /// What is wrong with the file as it is, should writing it again fail.
        var wrong = "it no longer holds what this device wrote"
        do throws(PeerError) {
            (bytes, tag) = try peer.getOnce(path)
        } catch {
            // Refused for what it is (not a file, too large, not readable),
            // or this login may not read it (a server's 403: the file's
            // permissions): not what the others can take, so written again
            // over what was listed; should that fail too, said.
            let why: String
            switch error {
            case .refused(let w), .forbidden(let w), .denied(let w): why = w
            default: return false   // gone (compacted, or removed: written again after a full listing) or failing: next round
            }
            (bytes, tag) = ([], listedTag)
            wrong = "it cannot be read (\(why))"
        }
        func remember(_ tag: String) throws {
            try log.database.run("UPDATE r_own SET tag = ?3 WHERE family = ?1 AND name = ?2", [.blob(family.bytes), .text(name), .text(tag)])
        }
        if promised.matches(bytes), let segment = try? Segment(decoding: bytes),
           segment.firstSeq == row.0, segment.lastSeq == row.1 {
            try remember(listedTag)
            return false
        }
        // Damaged in the log: the file, whatever it holds, is left as it is, said.
        guard let envs = try ownChain(row.0...row.1, path: path, into: &report), envs.count == Int(row.1 - row.0 + 1) else { return false }
        let rewritten = Segment(envelopes: envs).encoded()
        guard promised.matches(rewritten) else { return false }   // not what this log writes for that range: leave it
        let newTag: String
        do throws(PeerError) {
            newTag = try peer.replace(path, rewritten, expected: tag)
        } catch {
            // Changed again meanwhile, or the peer failing: next round. Refused
            // (a directory in its place, a server that forbids it): said, since
            // the others miss these events until someone clears the way.
            switch error {
            case .conflict, .throttled, .unavailable, .offline: break
            default: report.ownNotRestored.append((path, "\(wrong), and writing it again failed: \(error.description)"))
            }
            return false
        }
        try remember(newTag)
        return true
    }

    /// The segments this device wrote into its own folder (and has not
    /// compacted away). A pull reads them with their tags (``ownSegmentTags()``).
    private static func ownSegmentNames(family: FamilyID, log: EventLog) throws -> Set<String> {
        var out = Set<String>()
        try log.database.statement("SELECT name FROM r_own WHERE family = ?1").forEachRow([.blob(family.bytes)]) { out.insert($0.text(0)) }
        return out
    }

    /// Whether a pull's time is written as `last_sync`: always, unless
    /// ``idleRoundsRecordedEvery`` is set, the pull took in nothing, and the
    /// time written is younger than that.
    private func roundIsWorthRecording(_ report: PullReport) throws -> Bool {
        guard idleRoundsRecordedEvery > 0, report.accepted == 0,
              let last = try meta("last_sync"), let at = ISO8601DateFormatter().date(from: last) else { return true }
        let age = Date().timeIntervalSince(at)
        return age < 0 || age >= idleRoundsRecordedEvery
    }

    func meta(_ key: String) throws -> String? {
        try log.database.statement("SELECT value FROM r_meta WHERE family = ?1 AND key = ?2").first([.blob(family.bytes), .text(key)]) { $0.text(0) }
    }

    /// Records a replicator fact (`token`, `last_sync`, `last_error`); `nil` removes it.
    public func setMeta(_ key: String, _ value: String?) throws {
        // What is there already is not written again: an idle round would
        // otherwise commit (and fsync) the same listing token every time.
        guard try meta(key) != value else { return }
        if let value {
            try log.database.run("INSERT OR REPLACE INTO r_meta(family, key, value) VALUES(?1, ?2, ?3)", [.blob(family.bytes), .text(key), .text(value)])
        } else {
            try log.database.run("DELETE FROM r_meta WHERE family = ?1 AND key = ?2", [.blob(family.bytes), .text(key)])
        }
    }

    /// Forgets the files read before that a full listing no longer shows in
    /// their folder (merged away by their author's compaction, or removed),
    /// so that what a round loads grows with the files in the shared folder,
    /// not with every round ever read (a review: a row a round, for good).
    /// Files of a folder the listing did not show at all, or could not
    /// read, are kept: a drive not mounted, or a folder gone, is said and
    /// written back from them. A file that shows again is read again, its
    /// events already here.
    func forgetFilesGone(listed: Set<String>, unreadFolders: Set<String>) throws {
        let folders = Self.foldersWithSegments(listed)
        var gone: [String] = []
        try log.database.statement("SELECT path FROM r_files WHERE family = ?1 AND status = 'read'").forEachRow([.blob(family.bytes)]) { r in
            let path = r.text(0)
            guard !listed.contains(path), let slash = path.firstIndex(of: "/"), folders.contains(String(path[..<slash])),
                  !unreadFolders.contains(String(path[..<slash])) else { return }
            gone.append(path)
        }
        guard !gone.isEmpty else { return }
        try log.database.transaction {
            for path in gone { try log.database.run("DELETE FROM r_files WHERE family = ?1 AND path = ?2", [.blob(family.bytes), .text(path)]) }
        }
    }

    private func doneFiles() throws -> Set<String> {
        var out = Set<String>()
        try log.database.statement("SELECT path FROM r_files WHERE family = ?1 AND status = 'read'").forEachRow([.blob(family.bytes)]) { out.insert($0.text(0)) }
        return out
    }

    /// Marks a file read whole, with what there is to say of it, if anything.
    private func markRead(_ path: String, _ note: FileNote?) throws {
        try mark(path, "read", note?.storedReason, kind: note?.kind)
    }

    /// Marks a file not verifiable yet, with why.
    /// - Parameter tag: for a file whose content failed to verify, the
    ///   reader's version and the file's tag when it was read.
    private func markUnverifiable(_ path: String, _ reason: String, tag: String? = nil) throws {
        try mark(path, "unverifiable", reason, kind: nil, tag: tag)
    }

    private func mark(_ path: String, _ status: String, _ reason: String?, kind: FileNote.Kind?, tag: String? = nil) throws {
        try log.database.run("INSERT OR REPLACE INTO r_files(family, path, status, reason, checked_at, tag, kind) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                             [.blob(family.bytes), .text(path), .text(status), reason.map { .text($0) } ?? .null,
                              .integer(Int64(Date().timeIntervalSince1970)), tag.map { .text($0) } ?? .null, kind.map { .text($0.rawValue) } ?? .null])
    }

    /// The files refused for what they are (content, size, permission),
    /// with the tag they had then and when that was.
    private func refusedFileTags() throws -> [String: (tag: String, checkedAt: Int64)] {
        var out: [String: (tag: String, checkedAt: Int64)] = [:]
        try log.database.statement("SELECT path, tag, checked_at FROM r_files WHERE family = ?1 AND status = 'unverifiable' AND tag IS NOT NULL")
            .forEachRow([.blob(family.bytes)]) { out[$0.text(0)] = (tag: $0.text(1), checkedAt: $0.int(2)) }
        return out
    }

    /// How many of a file's events do not verify, and what its `r_files`
    /// reason says of them: `2 event(s) that do not verify (a bad signature)`.
    static func refusedEvents(_ r: IngestReport) -> (count: Int, reason: String) {
        var kinds: [String] = []
        var count = 0
        for (_, outcome) in r.outcomes {
            let kind: String
            switch outcome {
            case .badSignature: kind = "a bad signature"
            case .malformed: kind = "bytes that do not decode"
            case .foreignFamily: kind = "another family's"
            default: continue
            }
            count += 1
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        return (count, "\(count) event(s) that do not verify (\(kinds.joined(separator: ", "))); its other events were checked on their own" + Self.waitsForGoodCopy)
    }

    /// How a file's reason of refused events ends while events after them
    /// may wait for a good copy (`status` says otherwise once none do).
    public static let waitsForGoodCopy = " (any after it in its author's chain wait for a good copy of it)"

    // MARK: - Status

    /// Files read whose events did not all verify (a forged or damaged
    /// event among good ones), that are misplaced, or damaged conflict
    /// copies, each with its note: until the file leaves the shared folder
    /// (a full listing no longer shows it).
    public func filesOfNote() throws -> [(path: String, note: FileNote)] {
        var out: [(String, FileNote)] = []
        try log.database.statement("SELECT path, kind, reason FROM r_files WHERE family = ?1 AND status = 'read' AND reason IS NOT NULL ORDER BY path")
            .forEachRow([.blob(family.bytes)]) { row in
                // No kind: an earlier famctl sharing the home wrote it since this one opened.
                // A kind this famctl does not know (a later one wrote it): said as a refusal,
                // the most careful reading.
                let note = row.isNull(1) ? FileNote.fromEarlierBuild(row.text(2))
                    : FileNote(FileNote.Kind(rawValue: row.text(1)) ?? .refusedEvents, FileNote.fromEarlierBuild(row.text(2)).reason)
                out.append((row.text(0), note))
            }
        return out
    }

    /// Forgets the files of note a full listing no longer shows (those in
    /// a folder it could not read are unseen, not gone).
    private func forgetFilesOfNote(notIn listed: Set<String>, unreadFolders: Set<String>) throws {
        for (path, _) in try filesOfNote() where !listed.contains(path) {
            if let slash = path.firstIndex(of: "/"), unreadFolders.contains(String(path[..<slash])) { continue }
            try log.database.run("DELETE FROM r_files WHERE family = ?1 AND path = ?2", [.blob(family.bytes), .text(path)])
        }
    }

    /// Files seen but not verifiable yet, with the reason.
    public func unverifiable() throws -> [(path: String, reason: String)] {
        var out: [(String, String)] = []
        // The other devices' folders the last full listing could not read.
        for line in (try meta("unreadable_folders") ?? "").split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            if parts.count == 2 { out.append((String(parts[0]), "the folder cannot be read: " + parts[1])) }
        }
        try log.database.statement("SELECT path, reason FROM r_files WHERE family = ?1 AND status = 'unverifiable' ORDER BY path")
            .forEachRow([.blob(family.bytes)]) { out.append(($0.text(0), $0.text(1))) }
        return out
    }

    public func lastSync() throws -> String? { try meta("last_sync") }
    public func lastError() throws -> String? { try meta("last_error") }
}

@available(*, unavailable)
extension Replicator: Sendable {}
