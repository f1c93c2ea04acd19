import Foundation
import Envelope

/// A WebDAV server as a ``Peer`` (Apache `mod_dav`, Nextcloud, a NAS…), over
/// libcurl (``CurlSession``): PROPFIND lists, PUT with `If-None-Match: *`
/// creates, PUT with `If-Match` compares-and-swaps, GET reads, DELETE
/// deletes, MKCOL makes collections. ``probe()`` checks at start-up that the
/// server honours conditional requests, and refuses one that does not.
///
/// Objects live under `URL/<family id>/<path>`. WebDAV has no change feed:
/// `changes` lists everything (two PROPFIND levels) and the replicator skips
/// what it has read.
public final class WebDAVPeer: Peer {
    public let base: URL
    let authorization: String?
    /// The user name sent, for the message of a refused login.
    let loginUser: String?
    /// Credentials would cross the network in clear text; every request is refused.
    let refusesCredentials: Bool
    let maximumObjectBytes: Int
    let session: CurlSession
    /// ``session``'s settings with ``quickTimeout``.
    let quickSession: CurlSession
    public var label: String { "webdav:" + base.absoluteString }

    /// - Parameters:
    ///   - url: the collection for the family's area (its parent must exist).
    ///   - credentials: user and password for HTTP basic authentication.
    ///   - allowPlainHTTP: send `credentials` over `http://` to another
    ///     machine. Without it such a peer refuses every request
    ///     (``PeerError/unsupported(_:)``) before anything is sent: basic
    ///     authentication over `http://` shows the password to anyone on
    ///     the network path.
    ///   - maximumObjectBytes: the largest object ``get(_:)`` reads; a
    ///     larger one is refused (``PeerError/unsupported(_:)``), as a shared
    ///     directory refuses a file over 256 MiB.
    public init(url: URL, credentials: (user: String, password: String)? = nil, allowPlainHTTP: Bool = false,
                maximumObjectBytes: Int = 256 << 20, timeout: TimeInterval = 20, caFile: String? = nil,
                isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.maximumObjectBytes = max(1, maximumObjectBytes)
        base = url.absoluteString.hasSuffix("/") ? url : url.appendingPathComponent("")
        authorization = credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
        loginUser = credentials?.user
        refusesCredentials = credentials != nil && !allowPlainHTTP && !Self.protectsCredentials(base)
        session = CurlSession(timeout: timeout, caFile: caFile, isCancelled: isCancelled)
        quickSession = CurlSession(timeout: min(timeout, Self.quickTimeout), caFile: caFile, isCancelled: isCancelled)
    }

    /// The address a family's devices give as `--peer` (the collection
    /// above the family's), from a redirect's `location` of a request for
    /// `path` in the family's collection: `nil` when the location does not
    /// end in that path under a collection named as the family's is (then
    /// nothing can be told; a review: the family's own collection, given
    /// as told, made the device sync alone in one nested in it).
    func peerAddress(redirectedTo location: String, path: String) -> String? {
        guard let resolved = URL(string: location, relativeTo: base)?.absoluteURL, resolved.query == nil else { return nil }
        var text = resolved.absoluteString
        let relative = path == "./" ? "" : path
        if !relative.isEmpty {
            guard text.hasSuffix(relative) else { return nil }
            text.removeLast(relative.count)
        }
        if !text.hasSuffix("/") { text += "/" }
        let family = base.lastPathComponent + "/"
        guard family.count > 1, text.hasSuffix("/" + family) else { return nil }
        text.removeLast(family.count)
        return text
    }

    struct Reply: Sendable {
        let status: Int
        let body: Data
        let headers: [String: String]
        /// The body went past the limit the request was sent with, and was not read further.
        var overLimit = false
    }

    /// Whether credentials sent to `url` stay between this machine and the
    /// server: `https://`, or `http://` to this machine itself (a loopback
    /// address or `localhost`).
    public static func protectsCredentials(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http":
            guard var host = url.host?.lowercased() else { return false }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            if host == "localhost" || host == "::1" { return true }
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            // Four decimal bytes, ASCII digits only (`Character.isNumber` admits other numerals).
            return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { p in p.utf8.allSatisfy { (0x30...0x39).contains($0) } && UInt8(p) != nil }
        default: return false
        }
    }

    /// One request, synchronously.
    ///
    /// - Parameter limit: read at most this many bytes of the body; a body
    ///   that goes past it is cut off there (``Reply/overLimit``).
    func send(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:], limit: Int? = nil, via: CurlSession? = nil) throws(PeerError) -> Reply {
        if refusesCredentials {
            throw .unsupported("refusing to send the password in clear text over http:// to \(base.host ?? "the server"): anyone on the network path could read it")
        }
        guard let url = URL(string: path.isEmpty ? "./" : path, relativeTo: base)?.absoluteURL else { throw .unsupported("bad path \(path)") }
        var all = headers
        if let authorization { all["Authorization"] = authorization }
        let reply: Reply
        // A read stops at its limit; a listing is read whole up to the
        // objects' limit; the answer to a write matters by its status alone.
        let (keep, pastLimit): (Int, CurlSession.PastLimit) = switch method {
        case "GET": (limit ?? maximumObjectBytes, .stop)
        case "PROPFIND": (maximumObjectBytes, .stop)
        default: (64 << 10, .drop)
        }
        switch (via ?? session).perform(method, url: url.absoluteString, headers: all, body: body, limit: keep, pastLimit: pastLimit) {
        case .success(let r):
            // Only a read names its limit; a listing that large is not one famctl asked for.
            if r.overLimit && pastLimit == .stop && limit == nil {
                throw .refused("\(method) \(path): the answer is over the \(maximumObjectBytes)-byte limit")
            }
            reply = Reply(status: r.status, body: r.body, headers: r.headers, overLimit: r.overLimit && pastLimit == .stop)
        case .failure(let f):
            if f.isUntrustedCertificate { throw .untrustedCertificate(f.reason) }
            if f.isPermanent { throw .unsupported(f.reason) }
            if f.isTLSHandshakeFailure, let plain = plainHTTPAnswering() {
                throw .notACollection("\(plain) answers plain HTTP, not TLS (\(f.reason.trimmingCharacters(in: .whitespaces))): the URL's https:// does not fit this port; give the server's TLS port, or http:// (famctl sends a login over http:// only to this machine)")
            }
            // A stalled server is not asked again within the round (each
            // try would wait out the timeout once more); the next round is.
            if f.isStalled { throw .offline("\(base.host ?? "the server"): \(f.reason)") }
            // Waiting helps a server that is down, not a mistyped or moved
            // address (a review: a docs example's port was not the one
            // the server took).
            if f.isUnreachable {
                throw .unavailable("\(f.reason) (the server is down, or the address is wrong: 'famctl settings sync --peer URL' sets another)")
            }
            throw .unavailable(f.reason)
        }
        switch reply.status {
        case 401:
            if let loginUser {
                throw .loginRefused("401: the server refused the login of user '\(loginUser)' (a wrong password, or a user it does not know: check FAMCTL_PEER_USER/FAMCTL_PEER_PASSWORD or the netrc file's entry for this server)")
            }
            throw .loginRefused("401: the server asks for a login and famctl sent none (set FAMCTL_PEER_USER/FAMCTL_PEER_PASSWORD or a 0600 netrc file)")
        case 403: throw .forbidden("403: the server refuses \(method) \(path.isEmpty ? base.path : path) to this login")
        case 300...399 where reply.status != 304:
            // Not followed: the login would go along, wherever it points.
            let location = reply.headers["location"]
            throw .redirected("\(method) \(path.isEmpty ? base.absoluteString : path): the server answers \(reply.status) and sends famctl to \(location ?? "another address")"
                + (location.flatMap { peerAddress(redirectedTo: $0, path: path) }.map { " (the family's folder would be there; the --peer URL to give is then \($0))" } ?? ""))
        case 429, 503:
            if let s = reply.headers["retry-after"].flatMap({ Self.retryAfterSeconds($0) }) { throw .throttled(retryAfter: s) }
            throw reply.status == 429 ? .throttled(retryAfter: 1) : .unavailable("503 Service Unavailable")
        case 507: throw .full("\(method) \(path.isEmpty ? base.path : path): the server has no room left (HTTP 507 Insufficient Storage)")
        case 501:
            // Not Implemented: a server that knows no WebDAV (an ordinary
            // web server answers MKCOL and PROPFIND so); asking again will
            // not teach it.
            throw .notACollection("\(fullURL(of: path)): the server does not implement \(method) (HTTP 501 Not Implemented): it is not a WebDAV server")
        case 500...599: throw .unavailable("\(method) \(path.isEmpty ? base.path : path): HTTP \(reply.status)")
        default: return reply
        }
    }


    /// The seconds a `Retry-After` header asks for: delay-seconds, or an
    /// HTTP date (the seconds until then, none when it is past). `nil` for
    /// anything else, which is then taken as no header at all.
    static func retryAfterSeconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { return Double(text) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// `host:port` of ``base`` when a TLS handshake with it failed and it
    /// answers a plain HTTP request (`HEAD /`, no login sent): a URL with
    /// `https://` naming a plain-HTTP port. `nil` when it does not answer so.
    private func plainHTTPAnswering() -> String? {
        guard base.scheme?.lowercased() == "https", let host = base.host else { return nil }
        let hostPort = (host.contains(":") ? "[\(host)]" : host) + ":\(base.port ?? 443)"
        // An answer a plain-HTTP server gives to `HEAD /`; not 400, which a
        // TLS server gives a plain request on its TLS port (nginx, Apache:
        // "plain HTTP request was sent to HTTPS port"), its handshake having
        // failed for some other reason (a review).
        guard case .success(let r) = session.perform("HEAD", url: "http://\(hostPort)/", headers: [:], body: nil, limit: 0, pastLimit: .drop),
              (200..<400).contains(r.status) || [401, 403, 404, 405].contains(r.status) else { return nil }
        return hostPort
    }

    func familyRelative(_ path: String) -> String { path.split(separator: "/").map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String($0) }.joined(separator: "/") }

    /// `path` (relative to the family's collection; empty: the collection)
    /// as a whole URL, for messages.
    private func fullURL(of path: String) -> String {
        URL(string: path.isEmpty ? "./" : path, relativeTo: base)?.absoluteString ?? path
    }

    private func ensureCollection(_ path: String) throws(PeerError) {
        let r = try send("MKCOL", path.isEmpty ? "./" : (path.hasSuffix("/") ? path : path + "/"))
        guard [201, 405].contains(r.status) else {
            // 200 and other successes: WebDAV answers a collection made with
            // 201 Created; a server answering otherwise made none (an
            // ordinary web server, a page at this URL), and will not.
            if (200...299).contains(r.status) {
                throw .notACollection("cannot create the collection \(fullURL(of: path)): MKCOL was answered HTTP \(r.status), not 201 Created: it is not a WebDAV server, or the URL names something else than a WebDAV share")
            }
            // 409: the collection above it does not exist; 404 likewise on some servers. Waiting will not create it.
            if r.status == 409 || r.status == 404 {
                throw .notACollection("cannot create the collection \(fullURL(of: path)) (HTTP \(r.status)): the collection that should hold it does not exist on the server")
            }
            // 400 or 415: the URL names a file (or something else that holds
            // no files); asking again will not make it a collection.
            if [400, 415].contains(r.status) {
                throw .notACollection("cannot make \(fullURL(of: path)) a collection (MKCOL answered HTTP \(r.status)): the URL names a file, or something else that cannot hold files")
            }
            throw .unavailable("MKCOL \(fullURL(of: path)): HTTP \(r.status)")
        }
    }

    public func create(_ path: String, _ bytes: [UInt8]) throws(PeerError) {
        let p = familyRelative(path)
        var r = try send("PUT", p, body: Data(bytes), headers: ["If-None-Match": "*"])
        if r.status == 409 || r.status == 404 {
            try ensureCollection((p as NSString).deletingLastPathComponent)
            r = try send("PUT", p, body: Data(bytes), headers: ["If-None-Match": "*"])
        }
        try refuseCollection(r, p, path)
        switch r.status {
        case 200, 201, 204: return
        case 412: throw .alreadyExists
        default: throw .unavailable("PUT \(path): HTTP \(r.status)")
        }
    }

    /// A PUT answered 409 once its collection exists: Apache's `mod_dav`
    /// answers so for a collection (a folder) in the object's place, as for
    /// a missing parent. Asking again would not remove it: refused, said
    /// as what it is.
    ///
    /// A PUT answered 400: Apache's answer when a file stands where the
    /// object's folder goes (this device's folder, `blobs/`). Not something
    /// waiting mends either: said as a folder that is not one, as the
    /// shared directory says it (``PeerError/notAFolder(_:)``).
    private func refuseCollection(_ r: Reply, _ p: String, _ path: String) throws(PeerError) {
        if r.status == 409, try isCollection(p) {
            throw .refused("\(path) is a collection (a folder) on the server, not a file: nothing can be written in its place")
        }
        let parent = (p as NSString).deletingLastPathComponent
        if r.status == 400 || r.status == 409, !parent.isEmpty, try resourceType(parent) == .file {
            let folder = (path as NSString).deletingLastPathComponent
            throw .notAFolder("\(folder) is a file on the server, where a collection (a folder) belongs: nothing can be written in it; remove it (the next sync writes the folder's files again)")
        }
    }

    enum ResourceType { case collection, file }

    /// What stands at `p` (PROPFIND, Depth: 0): a collection, a file, or nothing.
    private func resourceType(_ p: String) throws(PeerError) -> ResourceType? {
        let body = #"<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/></D:prop></D:propfind>"#
        let found = try send("PROPFIND", p, body: Data(body.utf8), headers: ["Depth": "0", "Content-Type": "application/xml"])
        guard found.status == 207 else { return nil }
        return Self.elements("resourcetype", in: String(decoding: found.body, as: UTF8.self)).contains { $0.contains("collection") } ? .collection : .file
    }

    /// Whether a collection (a folder) stands at `p`.
    private func isCollection(_ p: String) throws(PeerError) -> Bool { try resourceType(p) == .collection }

    static func strong(_ tag: String) -> String { tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }

    public func replace(_ path: String, _ bytes: [UInt8], expected: String?) throws(PeerError) -> String {
        let p = familyRelative(path)
        var header = ["If-None-Match": "*"]
        if let expected {
            // Apache gives a weak tag to a file changed within the last second and
            // compares If-Match strongly: wait until the same tag is strong.
            var current = try head(p)
            if let c = current, c.hasPrefix("W/"), Self.strong(c) == Self.strong(expected) {
                Thread.sleep(forTimeInterval: 1.1)
                current = try head(p)
            }
            guard let c = current, Self.strong(c) == Self.strong(expected) else { throw .conflict(current: current) }
            header = ["If-Match": Self.strong(c)]
        }
        var r = try send("PUT", p, body: Data(bytes), headers: header)
        if expected == nil && (r.status == 409 || r.status == 404) {
            try ensureCollection((p as NSString).deletingLastPathComponent)
            r = try send("PUT", p, body: Data(bytes), headers: header)
        }
        try refuseCollection(r, p, path)
        switch r.status {
        case 200, 201, 204: return try head(p) ?? ""
        case 412: throw .conflict(current: try head(p))
        default: throw .unavailable("PUT \(path): HTTP \(r.status)")
        }
    }

    private func head(_ p: String) throws(PeerError) -> String? {
        let r = try send("HEAD", p)
        return r.status == 200 ? r.headers["etag"] : nil
    }

    /// Reads an object whole, up to ``maximumObjectBytes``. The request asks
    /// for one byte more than the limit (`Range`), so a server that honours
    /// ranges (Apache's `mod_dav` does) never sends a planted giant whole;
    /// from one that ignores them, reading stops once the body passes the
    /// limit (or at once, when its `Content-Length` says it will).
    public func get(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) {
        let r = try send("GET", familyRelative(path), headers: ["Range": "bytes=0-\(maximumObjectBytes)"], limit: maximumObjectBytes + 1)
        let tooLarge = PeerError.refused("\(path) is over the \(maximumObjectBytes)-byte limit")
        if r.overLimit, r.status == 200 || r.status == 206 { throw tooLarge }
        switch r.status {
        case 200:
            guard r.body.count <= maximumObjectBytes else { throw tooLarge }
            return ([UInt8](r.body), r.headers["etag"] ?? "")
        case 206:
            // "bytes 0-LAST/TOTAL": the whole object only if TOTAL is what came.
            guard r.body.count <= maximumObjectBytes else { throw tooLarge }
            let range = r.headers["content-range"] ?? ""
            guard let total = range.split(separator: "/").last.flatMap({ Int($0) }), range.hasPrefix("bytes 0-") else {
                throw .unsupported("GET \(path): a partial answer without a usable Content-Range (\(range))")
            }
            guard total <= maximumObjectBytes else { throw tooLarge }
            guard total == r.body.count else { throw .unavailable("GET \(path): \(r.body.count) of \(total) bytes") }
            return ([UInt8](r.body), r.headers["etag"] ?? "")
        case 416:
            // No byte in range: an empty object.
            return ([], r.headers["etag"] ?? "")
        case 404:
            // Apache answers a GET of a collection 404 as well: a folder
            // in an object's place is said for what it is (it would
            // otherwise be "not arrived yet" for good).
            if (try? isCollection(familyRelative(path))) == true {
                throw .refused("\(path) is a collection (a folder) on the server, not a file")
            }
            throw .notFound
        default: throw .unavailable("GET \(path): HTTP \(r.status)")
        }
    }

    public func delete(_ path: String) throws(PeerError) {
        // A DELETE of a collection removes it with everything in it: what
        // stands in an object's place is not this device's to remove.
        if try isCollection(familyRelative(path)) {
            throw .refused("\(path) is a collection (a folder) on the server, not a file: left as it is")
        }
        let r = try send("DELETE", familyRelative(path))
        switch r.status {
        case 200, 204: return
        case 404: throw .notFound
        default: throw .unavailable("DELETE \(path): HTTP \(r.status)")
        }
    }

    public func changes(since token: String?, limit: Int) throws(PeerError) -> ChangePage {
        var objects: [PeerObject] = []
        var unreadable: [UnreadableFolder] = []
        // Probes' objects left behind are deleted a few a listing, and none
        // more once one is refused (a server that refuses DELETE would be
        // asked for each, at every round, a review).
        var probesToDelete = 8
        for folder in try propfind("") {
            // A file where a device's folder belongs: that device's files
            // are unseen, said as not yet arrived (as a shared directory
            // says it), and nothing is written back into it.
            guard folder.collection else {
                // A probe's object left behind (a review: one a run where the
                // server refused its DELETE): removed, best effort.
                if probesToDelete > 0, Self.isStaleProbe(folder.name, now: Date()) {
                    probesToDelete -= 1
                    let deleted = (try? send("DELETE", familyRelative(folder.name))).map { [200, 204, 404].contains($0.status) } ?? false
                    if !deleted { probesToDelete = 0 }
                }
                if folder.name.count == 64, DeviceID(hex: folder.name) != nil {
                    unreadable.append(UnreadableFolder(folder.name, "a file is in its place, not a collection (a folder); remove it from the server", fileInPlace: true))
                }
                continue
            }
            let items: [Item]
            do throws(PeerError) {
                items = try propfind(folder.name + "/")
            } catch {
                // One folder the server will not list to this login (its
                // permissions): its files are unseen, said as not yet
                // arrived, and the other devices' are read (as a shared
                // directory's unreadable folder is).
                guard case .forbidden(let why) = error else { throw error }
                unreadable.append(UnreadableFolder(folder.name, why))
                continue
            }
            // A collection in a device's folder is listed as the shared
            // directory lists a folder there: one in a segment's place is
            // then read, refused for what it is, and said as not yet
            // arrived, not skipped in silence. (In `blobs/`, the photos'
            // own checks say it.)
            for item in items where !item.collection || folder.name != "blobs" {
                objects.append(PeerObject(path: folder.name + "/" + item.name, tag: item.tag))
            }
        }
        return ChangePage(objects: objects, token: "listing", moreComing: false, unreadableFolders: unreadable)
    }

    /// Within ``quickTimeout``: a look before a write, which a slow server
    /// must not hold up (a review: an `invite` waited out the 20 s timeout).
    public func namesOnce(in folder: String) throws(PeerError) -> [String]? {
        try propfind(familyRelative(folder) + "/", session: quickSession).filter { !$0.collection }.map(\.name)
    }

    /// How long ``namesOnce(in:)`` waits for a byte.
    public static let quickTimeout: TimeInterval = 3

    struct Item { let name: String; let tag: String; let collection: Bool }

    /// The members of a collection (PROPFIND, Depth: 1), by their last path component.
    func propfind(_ path: String, session: CurlSession? = nil) throws(PeerError) -> [Item] {
        let body = #"<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:resourcetype/></D:prop></D:propfind>"#
        let r = try send("PROPFIND", path, body: Data(body.utf8), headers: ["Depth": "1", "Content-Type": "application/xml"], via: session)
        if r.status == 404 { return [] }
        guard r.status == 207 else { throw .unavailable("PROPFIND \(path): HTTP \(r.status)") }
        let xml = String(decoding: r.body, as: UTF8.self)
        let selfPath = URL(string: path.isEmpty ? "./" : path, relativeTo: base)?.absoluteURL.path ?? ""
        var out: [Item] = []
        for block in Self.elements("response", in: xml) {
            guard let href = Self.elements("href", in: block).first?.removingPercentEncoding else { continue }
            let hrefPath = URL(string: href)?.path ?? href
            if hrefPath.trimmingCharacters(in: CharacterSet(charactersIn: "/")) == selfPath.trimmingCharacters(in: CharacterSet(charactersIn: "/")) { continue }
            let name = (hrefPath as NSString).lastPathComponent
            let tag = Self.elements("getetag", in: block).first ?? ""
            let type = Self.elements("resourcetype", in: block).first ?? ""
            out.append(Item(name: name, tag: tag, collection: type.contains("collection")))
        }
        return out
    }

    /// The contents of elements named `local`, whatever their namespace prefix and attributes.
    static func elements(_ local: String, in xml: String) -> [String] {
        guard let re = try? NSRegularExpression(pattern: "<(?:[A-Za-z0-9_-]+:)?\(local)(?:\\s[^>]*)?>(.*?)</(?:[A-Za-z0-9_-]+:)?\(local)>",
                                                options: [.dotMatchesLineSeparators]) else { return [] }
        let ns = xml as NSString
        return re.matches(in: xml, range: NSRange(location: 0, length: ns.length)).map { m in
            ns.substring(with: m.range(at: 1)).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    /// Checks that the server honours conditional requests, on a probe object.
    /// - Throws: ``PeerError/unsupported(_:)`` for a server that ignores them.
    /// Whether `name` is a probe's object (``probe()``) made over a day
    /// before `now`, as its name says: by the clock of the device that
    /// made it, which may be behind; a day, not an hour, so that a probe
    /// running now is not taken for one left behind (its object deleted
    /// between its writes, the server would seem to ignore If-None-Match).
    static func isStaleProbe(_ name: String, now: Date) -> Bool {
        let rest = name.hasPrefix(".famctl-probe-") ? name.dropFirst(".famctl-probe-".count)
            : name.hasPrefix("famctl-probe-") ? name.dropFirst("famctl-probe-".count) : nil
        guard let rest, let dash = rest.firstIndex(of: "-"), let made = Int(rest[..<dash]) else { return false }
        return now.timeIntervalSince1970 - Double(made) > 86_400
    }

    public func probe() throws(PeerError) {
        do throws(PeerError) { try ensureCollection("") } catch {
            // A share this login may only read refuses MKCOL too (403), as
            // may a server with no room left (507): what is there can still
            // be pulled.
            switch error {
            case .forbidden, .full: break
            default: throw error
            }
        }
        // The time in the name: a probe object whose DELETE failed (refused,
        // the connection cut) is removed by a later listing once it is a
        // day old (``isStaleProbe(_:now:)``), never one a probe running now
        // still needs.
        let stamp = "\(Int(Date().timeIntervalSince1970))-\(UUID().uuidString.lowercased())"
        var name = ".famctl-probe-" + stamp
        defer { _ = try? send("DELETE", name) }
        let first: Reply
        do throws(PeerError) {
            first = try send("PUT", name, body: Data("probe".utf8), headers: ["If-None-Match": "*"])
        } catch {
            // A server with no room left (507) takes no writes now: nothing
            // will be written there, so there is nothing to check; the round
            // pulls, and its publish reports the refusal.
            if case .full = error { return }
            guard case .forbidden = error else { throw error }
            // Some servers refuse names that start with a dot (403) and take
            // others: the conditions are checked with such a name then. A
            // share that refuses that too takes no writes at all (read-only):
            // nothing will be written there, so there is nothing to check;
            // the round pulls, and its publish reports the refusal.
            name = "famctl-probe-" + stamp
            do throws(PeerError) {
                first = try send("PUT", name, body: Data("probe".utf8), headers: ["If-None-Match": "*"])
            } catch {
                switch error {
                case .forbidden, .full: return
                default: throw error
                }
            }
        }
        guard [200, 201, 204].contains(first.status) else {
            // 405 Method Not Allowed, 501 Not Implemented: not a WebDAV collection; asking again will not make it one.
            if [405, 501].contains(first.status) { throw .notACollection("\(base.absoluteString) does not take writes (HTTP \(first.status)): it is not a WebDAV collection") }
            throw .unavailable("cannot write to \(base.absoluteString): HTTP \(first.status)")
        }
        let second = try send("PUT", name, body: Data("again".utf8), headers: ["If-None-Match": "*"])
        guard second.status == 412 else {
            throw .unsupported("\(base.absoluteString) ignores If-None-Match (answered \(second.status) where 412 was due); famctl would overwrite segments there")
        }
        let wrong = try send("PUT", name, body: Data("cas".utf8), headers: ["If-Match": "\"famctl-not-the-etag\""])
        guard wrong.status == 412 else {
            throw .unsupported("\(base.absoluteString) ignores If-Match (answered \(wrong.status) where 412 was due)")
        }
    }
}

@available(*, unavailable)
extension WebDAVPeer: Sendable {}
