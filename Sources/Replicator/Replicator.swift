import Envelope
import EventLog
import Foundation

/// Exchanges a family's events through a ``SharedDirectory``: publishes this
/// device's new events as segments into its own folder, and pulls what the
/// others published, handing it to `ingest` (which verifies and applies).
///
/// What it has read is remembered (table `r_files`), so a round reads only
/// files it has not read before: its cost follows what is new, not history.
/// Files that cannot be verified yet (incomplete, damaged, placeholders) are
/// "not yet arrived": recorded with the reason, retried next round, never
/// deleted. The replicator knows nothing of projections.
public final class Replicator {
    public let log: EventLog
    public let directory: SharedDirectory
    public let me: DeviceID
    public var family: FamilyID { directory.family }
    /// Own segments smaller than this are merged once there are ``compactAfter`` of them.
    public static let smallSegment = 256 << 10
    public static let compactAfter = 8

    public init(log: EventLog, directory: SharedDirectory, me: DeviceID) throws {
        self.log = log
        self.directory = directory
        self.me = me
        try log.database.execute("""
            CREATE TABLE IF NOT EXISTS r_published(family BLOB PRIMARY KEY, last_seq INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS r_files(
                family BLOB NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, checked_at INTEGER NOT NULL,
                PRIMARY KEY(family, path));
            CREATE TABLE IF NOT EXISTS r_meta(family BLOB NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(family, key));
            """)
    }

    // MARK: - Publish

    public struct PublishReport: Sendable {
        public var segments: [String] = []
        public var events = 0
        public var compacted = 0
    }

    /// Writes this device's events not yet published as segments, then
    /// compacts its own small segments.
    public func publish() throws -> PublishReport {
        var report = PublishReport()
        let head = try log.head(of: me, in: family)
        var last = try publishedSeq()
        while head.seq > last {
            let upper = min(head.seq, last + UInt64(Segment.maximumEvents))
            let envs = try log.chain(of: me, in: family, seqs: (last + 1)...upper)
            guard !envs.isEmpty else { break }
            let name = try write(Segment(envelopes: envs))
            report.segments.append(name)
            report.events += envs.count
            last = envs.last!.seq
            try log.database.run("INSERT OR REPLACE INTO r_published(family, last_seq) VALUES(?1, ?2)", [.blob(family.bytes), .integer(Int64(last))])
        }
        report.compacted = try compact()
        return report
    }

    func publishedSeq() throws -> UInt64 {
        try log.database.statement("SELECT last_seq FROM r_published WHERE family = ?1").first([.blob(family.bytes)]) { UInt64($0.int(0)) } ?? 0
    }

    private func write(_ segment: Segment) throws -> String {
        let bytes = segment.encoded()
        let name = segment.name(for: bytes).description
        try directory.publish(bytes, as: name, author: me)
        return name
    }

    /// Merges this device's small segments into one, so its folder does not
    /// grow by a file per edit. Returns how many files it replaced.
    func compact() throws -> Int {
        let mine = try directory.list().filter { $0.folder == me }.compactMap { e -> (SharedDirectory.Entry, SegmentName, Int)? in
            guard case .segment(let n) = SharedFileName(e.name), n.author == me else { return nil }
            let size = (try? FileManager.default.attributesOfItem(atPath: directory.familyPath + "/" + e.path)[.size] as? Int) ?? 0
            return (e, n, size ?? 0)
        }
        let small = mine.filter { $0.2 < Self.smallSegment }.sorted { $0.1.firstSeq < $1.1.firstSeq }
        guard small.count >= Self.compactAfter else { return 0 }
        // One contiguous run from the first small segment.
        var run = [small[0]]
        for s in small.dropFirst() where s.1.firstSeq <= run.last!.1.lastSeq + 1 { run.append(s) }
        guard run.count >= 2 else { return 0 }
        let first = run[0].1.firstSeq, last = run.map(\.1.lastSeq).max()!
        guard last - first < UInt64(Segment.maximumEvents) else { return 0 }
        let envs = try log.chain(of: me, in: family, seqs: first...last)
        guard envs.count == Int(last - first + 1) else { return 0 }
        let merged = try write(Segment(envelopes: envs))
        for s in run where s.0.name != merged { directory.removeOwn(s.0.name, author: me) }
        return run.count
    }

    // MARK: - Pull

    public struct PullReport: Sendable {
        public var filesRead = 0
        public var eventsIngested = 0
        public var accepted = 0
        /// Files that could not be verified yet: path and reason.
        public var notYetArrived: [(String, String)] = []
        public var forks = 0
    }

    /// Reads every file of the family's area not read before and hands its
    /// events to `ingest`.
    public func pull(ingest: ([[UInt8]]) throws -> IngestReport) throws -> PullReport {
        var report = PullReport()
        let done = try doneFiles()
        for entry in try directory.list() where !done.contains(entry.path) {
            let kind = SharedFileName(entry.name)
            let promised: SegmentName
            switch kind {
            case .other: continue
            case .segment(let n):
                if entry.folder == me { continue }   // this device's own files
                promised = n
            case .conflictCopy(let n): promised = n
            }
            report.filesRead += 1
            let segment: Segment
            do {
                let bytes = try directory.read(entry)
                if case .segment = kind, !promised.matches(bytes) { throw SegmentError.nameMismatch }
                segment = try Segment(decoding: bytes)
                guard segment.author == entry.folder, segment.author == promised.author, segment.family == family else { throw SegmentError.wrongFolder }
            } catch let e as FileIO.Failure where e.code == ENOENT {
                continue   // removed since the listing (its author compacted it): nothing to read
            } catch {
                let why = (error as? SegmentError)?.description ?? FileIO.reason(error)
                report.notYetArrived.append((entry.path, why))
                try mark(entry.path, "unverifiable", why)
                continue
            }
            let r = try ingest(segment.events)
            report.eventsIngested += segment.events.count
            report.accepted += r.accepted.count
            report.forks += r.count { if case .fork = $0 { true } else { false } }
            try mark(entry.path, "read", nil)
        }
        try log.database.run("INSERT OR REPLACE INTO r_meta(family, key, value) VALUES(?1, 'last_sync', ?2)",
                             [.blob(family.bytes), .text(ISO8601DateFormatter().string(from: Date()))])
        return report
    }

    private func doneFiles() throws -> Set<String> {
        var out = Set<String>()
        try log.database.statement("SELECT path FROM r_files WHERE family = ?1 AND status = 'read'").forEachRow([.blob(family.bytes)]) { out.insert($0.text(0)) }
        return out
    }

    private func mark(_ path: String, _ status: String, _ reason: String?) throws {
        try log.database.run("INSERT OR REPLACE INTO r_files(family, path, status, reason, checked_at) VALUES(?1, ?2, ?3, ?4, ?5)",
                             [.blob(family.bytes), .text(path), .text(status), reason.map { .text($0) } ?? .null,
                              .integer(Int64(Date().timeIntervalSince1970))])
    }

    // MARK: - Status

    /// Files seen but not verifiable yet, with the reason.
    public func unverifiable() throws -> [(path: String, reason: String)] {
        var out: [(String, String)] = []
        try log.database.statement("SELECT path, reason FROM r_files WHERE family = ?1 AND status = 'unverifiable' ORDER BY path")
            .forEachRow([.blob(family.bytes)]) { out.append(($0.text(0), $0.text(1))) }
        return out
    }

    public func lastSync() throws -> String? {
        try log.database.statement("SELECT value FROM r_meta WHERE family = ?1 AND key = 'last_sync'").first([.blob(family.bytes)]) { $0.text(0) }
    }
}

@available(*, unavailable)
extension Replicator: Sendable {}
