/// A remote store with CloudKit's primitives, as small as the replicator
/// needs. Paths are relative (`<author hex>/<segment name>`); objects are
/// opaque bytes with a version tag that changes on every write.
///
/// One contract test suite runs against every implementation.
public protocol Peer: AnyObject {
    /// A short name for messages and `status` (`dir:/…`, `webdav:https://…`, `memory`).
    var label: String { get }

    /// Objects changed since `token` (`nil`: everything), at most `limit` per page.
    /// Apply a page, then persist its token; ask again while `moreComing`.
    /// - Throws: ``PeerError/tokenExpired`` when the token is too old: drop it
    ///   and list from scratch. Transient errors: `throttled`, `unavailable`.
    func changes(since token: String?, limit: Int) throws(PeerError) -> ChangePage

    /// Creates `path` with `bytes`; never overwrites.
    /// - Throws: ``PeerError/alreadyExists`` when the path exists.
    func create(_ path: String, _ bytes: [UInt8]) throws(PeerError)

    /// Replaces `path` only if its current tag is `expected` (`nil`: only if
    /// it does not exist). Returns the new tag.
    /// - Throws: ``PeerError/conflict(current:)`` with the current tag otherwise.
    func replace(_ path: String, _ bytes: [UInt8], expected: String?) throws(PeerError) -> String

    /// The object's bytes and tag.
    /// - Throws: ``PeerError/notFound``.
    func get(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String)

    /// The object's bytes and tag, asked for once: no waiting and asking
    /// again on a transient failure. The replicator reads this way an object
    /// that already failed in an earlier round, so that an object the server
    /// keeps failing on does not cost every round the retries' back-off.
    /// Peers that never retry answer it as ``get(_:)``.
    func getOnce(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String)

    /// Deletes `path` with one request: no waiting and asking again on a
    /// transient failure. For best-effort clean-up that must not cost every
    /// round the retries' back-off when a server keeps refusing it.
    func deleteOnce(_ path: String) throws(PeerError)

    /// Deletes `path`.
    /// - Throws: ``PeerError/notFound``.
    func delete(_ path: String) throws(PeerError)

    /// Creates `path` with one request, as ``deleteOnce(_:)`` deletes: for
    /// a note left in a location that may be gone, which must not hold up
    /// the command through the retries' back-off.
    func createOnce(_ path: String, _ bytes: [UInt8]) throws(PeerError)

    /// The names of the objects in one folder of the family's area (`folder`:
    /// a device's id), with one request and no retries; `nil` when this
    /// peer has no listing cheaper than ``changes(since:limit:)``. For a
    /// look before a write that a full listing would make too costly.
    func namesOnce(in folder: String) throws(PeerError) -> [String]?
}

extension Peer {
    public func namesOnce(in folder: String) throws(PeerError) -> [String]? { nil }
    public func createOnce(_ path: String, _ bytes: [UInt8]) throws(PeerError) {
        try create(path, bytes)
    }
    public func getOnce(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) {
        try get(path)
    }
    public func deleteOnce(_ path: String) throws(PeerError) {
        try delete(path)
    }
}

/// One object in a change listing.
public struct PeerObject: Sendable, Hashable {
    public let path: String
    public let tag: String
    /// The object was deleted since the token.
    public let deleted: Bool
    public init(path: String, tag: String, deleted: Bool = false) {
        self.path = path
        self.tag = tag
        self.deleted = deleted
    }
}

/// An author folder a listing could not read, and why.
public struct UnreadableFolder: Sendable {
    public let folder: String
    public let reason: String
    /// A file is where the folder belongs; otherwise the folder is there
    /// and cannot be read (its permissions, the server's refusal).
    public let fileInPlace: Bool

    public init(_ folder: String, _ reason: String, fileInPlace: Bool = false) {
        self.folder = folder
        self.reason = reason
        self.fileInPlace = fileInPlace
    }
}

public struct ChangePage: Sendable {
    public let objects: [PeerObject]
    public let token: String
    public let moreComing: Bool
    /// Author folders the listing could not read: what is in them is not
    /// listed, and the round says so.
    public let unreadableFolders: [UnreadableFolder]
    public init(objects: [PeerObject], token: String, moreComing: Bool, unreadableFolders: [UnreadableFolder] = []) {
        self.objects = objects
        self.token = token
        self.moreComing = moreComing
        self.unreadableFolders = unreadableFolders
    }
}

/// What a peer operation can answer instead of success.
public enum PeerError: Error, Equatable, Sendable, CustomStringConvertible {
    case alreadyExists
    case conflict(current: String?)
    case notFound
    case tokenExpired
    /// Too many requests: wait `retryAfter` seconds before the next one.
    case throttled(retryAfter: Double)
    /// The peer cannot be reached or failed (HTTP 5xx, connection refused, …).
    case unavailable(String)
    /// The peer answered in a way this famctl cannot work with (a misconfigured server).
    case unsupported(String)
    /// The server refused this device's login (HTTP 401): a login is
    /// missing or wrong; asking again with the same one will not help.
    case loginRefused(String)
    /// The URL is not a place to keep objects: not a WebDAV collection, or
    /// the collection that should hold it does not exist.
    case notACollection(String)
    /// A shared folder, or the family's folder in it, is a file (or a
    /// folder of it a symbolic link): waiting will not make it a folder.
    case notAFolder(String)
    /// This user may not read the shared folder (no permission): asking
    /// again will not change it.
    case denied(String)
    /// The server's TLS certificate is not trusted by this machine (or is
    /// not for this host).
    case untrustedCertificate(String)
    /// The server refuses this login this request (HTTP 403): it may not
    /// write there, say (a read-only share).
    case forbidden(String)
    /// The server sends the request elsewhere (HTTP 3xx), which famctl does
    /// not follow: the URL is not the one to use.
    case redirected(String)
    /// The peer will not serve this object as it stands: it is over the size
    /// limit, or this device may not read it. Asking again makes sense only
    /// once the object has changed.
    case refused(String)
    /// The peer has no room for this write: its disk is full or its quota
    /// used up (`ENOSPC`, `EDQUOT`; HTTP 507). Not a permission problem.
    case full(String)
    /// The peer is not there at all (an unmounted folder): retrying within a
    /// round is pointless, a later round may succeed.
    case offline(String)
    /// This device's own side failed, not the peer: its home's staging
    /// folder, where a file is written before it goes to a shared folder,
    /// cannot be written (its permissions, its disk full).
    case homeNotWritable(String)
    /// This device may not write into the shared folder (its permissions,
    /// a read-only mount, something in the way).
    case notWritable(String)

    /// The peer is not there, or stalled: not asked again within the round.
    public var isOffline: Bool {
        if case .offline = self { true } else { false }
    }

    /// The peer asked to wait before the next request.
    public var isThrottled: Bool {
        if case .throttled = self { true } else { false }
    }

    /// Worth retrying after a pause.
    public var isTransient: Bool {
        switch self {
        case .throttled, .unavailable: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .alreadyExists: "already exists"
        case .conflict(let c): "conflict (current version \(c ?? "none"))"
        case .notFound: "not found"
        case .tokenExpired: "change token expired"
        // Whole seconds (a date's wait came out as 2305835407.1542554); a
        // value no clock can wait out (an injected infinity) said as such.
        case .throttled(let s): s.isFinite ? "throttled: retry after \(Int(min(max(s, 0), 1e9).rounded(.up))) s" : "throttled: retry after \(s) s"
        case .unavailable(let why): "unavailable: \(why)"
        case .unsupported(let why): "unsupported: \(why)"
        case .full(let why): why
        case .homeNotWritable(let why), .notWritable(let why): why
        case .loginRefused(let why): "login refused: \(why)"
        case .notACollection(let why): "not a collection: \(why)"
        case .notAFolder(let why): why
        case .denied(let why): why
        case .untrustedCertificate(let why): why
        case .forbidden(let why): "forbidden: \(why)"
        case .redirected(let why): "redirected: \(why)"
        case .refused(let why): "refused: \(why)"
        case .offline(let why): why
        }
    }
}
