import Envelope

/// An in-memory peer with CloudKit's semantics, and deterministic, seedable
/// faults: throttles with retry-after, 503s, expired tokens, short pages, a
/// competing writer. A test double for the replicator; it also lets the
/// contract suite pin the semantics every backend must share.
public final class MemoryPeer: Peer {
    public struct Faults: Sendable {
        /// Percent of calls answered `throttled(retryAfter:)`.
        public var throttle = 0
        public var retryAfter = 2.0
        /// Percent of calls answered `unavailable` (an HTTP 503).
        public var unavailable = 0
        /// Percent of `changes` calls whose token is declared expired.
        public var expireToken = 0
        /// Percent of pages cut shorter than asked (`moreComing` stays honest).
        public var shortPage = 0
        /// Percent of `replace` calls that find another writer got there first.
        public var competingWriter = 0
        /// Objects whose every `get` answers `unavailable` (an HTTP 500 for
        /// that object alone: a damaged disk block, a planted object the
        /// server cannot serve).
        public var brokenPaths: Set<String> = []
        /// Objects whose reads stall until the timeout (`offline`): a server
        /// that takes the request and never answers it.
        public var stalledPaths: Set<String> = []
        /// Paths under this prefix whose every write answers `unavailable`
        /// (a server failing on one folder: the photos' blob area, say).
        public var failingWritesUnder: String? = nil
        public init() {}
    }

    public var label: String { "memory" }
    public var faults: Faults
    private var rng: SplitMixRNG
    private var objects: [String: (bytes: [UInt8], tag: String)] = [:]
    /// The change log: sequence number → (path, deleted).
    private var log: [(seq: Int, path: String)] = []
    private var seq = 0
    private var version = 0
    /// Every call made, for tests ("was the throttle hammered?").
    public private(set) var calls = 0

    public init(seed: UInt64 = 0, faults: Faults = Faults()) {
        self.rng = SplitMixRNG(seed: seed)
        self.faults = faults
    }

    private func roll(_ percent: Int) -> Bool { percent > 0 && Int(rng.next() % 100) < percent }

    private func gate() throws(PeerError) {
        calls += 1
        if roll(faults.throttle) { throw .throttled(retryAfter: faults.retryAfter) }
        if roll(faults.unavailable) { throw .unavailable("503 Service Unavailable (injected)") }
    }

    private func record(_ path: String) {
        seq += 1
        log.removeAll { $0.path == path }
        log.append((seq, path))
    }

    private func nextTag() -> String {
        version += 1
        return "v\(version)"
    }

    public func namesOnce(in folder: String) throws(PeerError) -> [String]? {
        try gate()
        let prefix = folder + "/"
        return objects.keys.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }.map { String($0.dropFirst(prefix.count)) }
    }

    public func changes(since token: String?, limit: Int) throws(PeerError) -> ChangePage {
        try gate()
        let from: Int
        if let token {
            guard let n = Int(token), n <= seq else { throw .tokenExpired }
            if roll(faults.expireToken) { throw .tokenExpired }
            from = n
        } else {
            from = 0
        }
        var size = max(1, limit)
        if roll(faults.shortPage) { size = max(1, size / 3) }
        let pending = log.filter { $0.seq > from }
        let page = Array(pending.prefix(size))
        let objects = page.map { e in PeerObject(path: e.path, tag: self.objects[e.path]?.tag ?? "", deleted: self.objects[e.path] == nil) }
        return ChangePage(objects: objects, token: String(page.last?.seq ?? from), moreComing: pending.count > page.count)
    }

    public func create(_ path: String, _ bytes: [UInt8]) throws(PeerError) {
        try gate()
        if let prefix = faults.failingWritesUnder, path.hasPrefix(prefix) { throw .unavailable("HTTP 500 (injected, for writes here)") }
        guard objects[path] == nil else { throw .alreadyExists }
        objects[path] = (bytes, nextTag())
        record(path)
    }

    public func replace(_ path: String, _ bytes: [UInt8], expected: String?) throws(PeerError) -> String {
        try gate()
        if let prefix = faults.failingWritesUnder, path.hasPrefix(prefix) { throw .unavailable("HTTP 500 (injected, for writes here)") }
        if roll(faults.competingWriter) {
            // Someone else wrote first: the caller's expectation is now stale.
            objects[path] = ((objects[path]?.bytes ?? []) + [0], nextTag())
            record(path)
        }
        guard objects[path]?.tag == expected else { throw .conflict(current: objects[path]?.tag) }
        let tag = nextTag()
        objects[path] = (bytes, tag)
        record(path)
        return tag
    }

    public func get(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) {
        try gate()
        if faults.brokenPaths.contains(path) { throw .unavailable("HTTP 500 (injected, for this object)") }
        if faults.stalledPaths.contains(path) { throw .offline("no answer in time (injected, for this object)") }
        guard let o = objects[path] else { throw .notFound }
        return o
    }

    public func delete(_ path: String) throws(PeerError) {
        try gate()
        guard objects.removeValue(forKey: path) != nil else { throw .notFound }
        record(path)
    }
}

@available(*, unavailable)
extension MemoryPeer: Sendable {}
