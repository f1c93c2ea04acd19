import Envelope
import Foundation
import Replicator
import Testing

/// One contract, written once, run against every backend: the shared
/// directory, the in-memory emulator, and WebDAV on a real Apache httpd
/// (`mod_dav`, started on 127.0.0.1 by the test and stopped by it).
struct PeerContractTests {
    static let author = String(repeating: "ab", count: 32)
    static func path(_ i: Int) -> String { "\(author)/\(author)-\(String(format: "%016x", i))-\(String(format: "%016x", i))-\(String(repeating: "0", count: 32)).seg" }

    /// Checks every operation's documented behaviour.
    static func contract(_ peer: any Peer) throws {
        let a = path(1), b = path(2), missing = path(99)
        try peer.create(a, [1, 2, 3])
        #expect(throws: PeerError.alreadyExists) { try peer.create(a, [9]) }
        let got = try peer.get(a)
        #expect(got.bytes == [1, 2, 3])
        #expect(!got.tag.isEmpty)
        #expect(throws: PeerError.notFound) { try peer.get(missing) }
        #expect(throws: PeerError.notFound) { try peer.delete(missing) }

        // Compare-and-swap.
        let wrong = #expect(throws: PeerError.self) { _ = try peer.replace(a, [4], expected: "\"not-the-tag\"") }
        if case .conflict(let current)? = wrong { #expect(current != nil) } else { Issue.record("expected conflict, got \(String(describing: wrong))") }
        #expect(throws: PeerError.self) { _ = try peer.replace(a, [4], expected: nil) }   // exists: only-if-absent fails
        let newTag = try peer.replace(a, [4, 5], expected: got.tag)
        #expect(try peer.get(a).bytes == [4, 5])
        #expect(!newTag.isEmpty)
        _ = try peer.replace(b, [7], expected: nil)                                        // absent: creates
        #expect(try peer.get(b).bytes == [7])

        // Listing, paged: following the tokens until `moreComing` is false sees everything.
        for i in 3..<12 { try peer.create(path(i), [UInt8(i)]) }
        var seen = Set<String>()
        var token: String?
        var pages = 0
        repeat {
            let page = try peer.changes(since: token, limit: 4)
            for o in page.objects where !o.deleted { seen.insert(o.path) }
            token = page.token
            pages += 1
            if !page.moreComing { break }
        } while pages < 100
        #expect(seen.isSuperset(of: Set([a, b] + (3..<12).map(path))))

        // One folder's names, listed apart: exactly its objects.
        let names = try #require(try peer.namesOnce(in: author))
        #expect(Set(names) == Set(([a, b] + (3..<12).map(path)).map { String($0.dropFirst(author.count + 1)) }), "\(names.sorted())")
        #expect(try peer.namesOnce(in: String(repeating: "cd", count: 32)) == [], "a folder nobody wrote lists nothing")

        try peer.delete(b)
        #expect(throws: PeerError.notFound) { try peer.get(b) }
        let after = try peer.changes(since: nil, limit: 1000)
        #expect(!after.objects.contains { $0.path == b && !$0.deleted })
    }

    @Test func memoryPeerKeepsTheContract() throws {
        try Self.contract(MemoryPeer())
    }

    /// A writer killed mid-file leaves `NAME.PID.tmp` in the home's
    /// staging directory (up to 8 MiB): the next opening of the shared
    /// directory removes those of processes that are gone, and keeps those
    /// of one still running.
    @Test func stagingLeftoversOfGoneWritersAreRemoved() throws {
        let dir = NSTemporaryDirectory() + "famctl-staging-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir + "/staging", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let dead = "a.seg.\(gone.processIdentifier).tmp", alive = "b.seg.\(getpid()).tmp", other = "notes.txt"
        for name in [dead, alive, other] { #expect(FileManager.default.createFile(atPath: dir + "/staging/" + name, contents: Data([1, 2, 3]))) }
        _ = SharedDirectory(root: dir + "/shared", family: FamilyID.random(), staging: dir + "/staging")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/staging").sorted() == [alive, other])
    }

    @Test func sharedDirectoryKeepsTheContract() throws {
        let dir = NSTemporaryDirectory() + "famctl-peer-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let family = FamilyID.random()
        try Self.contract(DirectoryPeer(SharedDirectory(root: dir, family: family, staging: dir + "-staging")))
        try? FileManager.default.removeItem(atPath: dir + "-staging")
    }

    @Test(.againstAHang)
    func webDAVOnApacheKeepsTheContract() throws {
        try ApacheServer.with { url in
            let peer = WebDAVPeer(url: url.appendingPathComponent(FamilyID.random().description + "/"))
            try peer.probe()
            try Self.contract(peer)
        }
    }

    /// Over `https://`, with a login: a certificate this machine does not
    /// trust is refused as such, before anything is sent; trusted through
    /// `caFile`, the contract holds.
    @Test(.againstAHang)
    func webDAVOverTLSWithItsOwnCertificateKeepsTheContract() throws {
        try ApacheServer.with(login: ("mum", "s3cret"), tls: true) { url, base in
            #expect(url.scheme == "https")
            let family = url.appendingPathComponent(FamilyID.random().description + "/")
            let untrusted = WebDAVPeer(url: family, credentials: ("mum", "s3cret"))
            let error = #expect(throws: PeerError.self) { try untrusted.probe() }
            if case .untrustedCertificate(let why)? = error { #expect(why.contains("not trusted")) } else { Issue.record("\(String(describing: error))") }
            let peer = WebDAVPeer(url: family, credentials: ("mum", "s3cret"), caFile: base + "/cert.pem")
            try peer.probe()
            try Self.contract(peer)
        }
    }

    /// A server that asks for a login (401 with WWW-Authenticate) gets an
    /// answer at once: without the login, every call is refused as such
    /// (it used to wait for ever, in Foundation's challenge handling); with
    /// it, the contract holds. Both sessions (requests, downloads) are asked.
    @Test(.againstAHang)
    func webDAVWithALoginRefusesAtOnceWithoutIt() throws {
        try ApacheServer.with(login: ("mum", "s3cret")) { url, _ in
            let family = url.appendingPathComponent(FamilyID.random().description + "/")
            for credentials in [nil, ("mum", "wrong")] as [(user: String, password: String)?] {
                let peer = WebDAVPeer(url: family, credentials: credentials, allowPlainHTTP: true)
                let calls: [(String, () throws -> Void)] = [
                    ("probe", { try peer.probe() }),
                    ("changes", { _ = try peer.changes(since: nil, limit: 10) }),
                    ("get", { _ = try peer.get(Self.path(1)) }),
                ]
                for (name, call) in calls {
                    let start = Date()
                    let error = #expect(throws: PeerError.self, "\(name)") { try call() }
                    #expect(Date().timeIntervalSince(start) < 15, "\(name) took \(Date().timeIntervalSince(start)) s")
                    if case .loginRefused(let why) = error { #expect(why.hasPrefix("401"), "\(name): \(why)") } else { Issue.record("\(name): \(String(describing: error))") }
                }
            }
            let peer = WebDAVPeer(url: family, credentials: ("mum", "s3cret"), allowPlainHTTP: true)
            try peer.probe()
            try Self.contract(peer)
        }
    }

    /// An object over the limit is refused without being read whole: the
    /// request asks for one byte more than the limit, which Apache honours.
    @Test(.againstAHang)
    func webDAVOnApacheRefusesObjectsOverTheLimit() throws {
        try ApacheServer.with { url, base in
            let family = url.appendingPathComponent(FamilyID.random().description + "/")
            let writer = WebDAVPeer(url: family)
            try writer.probe()
            let big = Self.path(1), exact = Self.path(2), empty = Self.path(3)
            let bigBytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let exactBytes = (0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            try writer.create(big, bigBytes)
            try writer.create(exact, exactBytes)
            try writer.create(empty, [])
            #expect(try writer.get(big).bytes == bigBytes, "the default limit reads it")

            let reader = WebDAVPeer(url: family, maximumObjectBytes: 4_096)
            let refused = #expect(throws: PeerError.self) { try reader.get(big) }
            #expect(refused == .refused("\(big) is over the 4096-byte limit"))
            let got = try reader.get(exact)
            #expect(got.bytes == exactBytes && !got.tag.isEmpty)
            #expect(try reader.get(empty).bytes == [])
            #expect(throws: PeerError.notFound) { try reader.get(Self.path(99)) }
            // What the server sent for the refused object: the limit and one byte, not the 10 000.
            // Apache logs a request when it ends, from whichever worker served it, so the two
            // lines may come in either order.
            let name = String(big.split(separator: "/").last!)
            var sent: [Int] = []
            for _ in 0..<50 {
                let log = (try? String(contentsOfFile: base + "/access.log", encoding: .utf8)) ?? ""
                sent = log.split(separator: "\n").filter { $0.hasPrefix("GET ") && $0.contains(name) }.compactMap { Int($0.split(separator: " ").last!) }
                if sent.count >= 2 { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            #expect(sent.sorted() == [4_097, 10_000], "bytes sent for the big object's two GETs: \(sent)")
        }
    }

    /// A server that ignores `Range` (it answers `200` with the whole body)
    /// is read only up to the limit: a body whose `Content-Length` is over
    /// it is not read at all, a body without a length is cut off once past
    /// it; a small object still reads whole.
    @Test(.againstAHang)
    func webDAVStopsReadingAServerThatIgnoresRange() throws {
        for size in [1 << 30, nil] as [Int?] {
            let server = try RangeIgnoringServer(size: size)
            defer { server.stop() }
            let peer = WebDAVPeer(url: URL(string: "http://127.0.0.1:\(server.port)/family/")!, maximumObjectBytes: 4_096)
            let started = Date()
            let refused = #expect(throws: PeerError.self) { try peer.get("segments/a.seg") }
            #expect(refused == .refused("segments/a.seg is over the 4096-byte limit"), "\(String(describing: refused))")
            #expect(Date().timeIntervalSince(started) < 8, "\(Date().timeIntervalSince(started)) s")
            var sent: [Int] = []
            for _ in 0..<200 where sent.isEmpty {
                sent = server.sent
                Thread.sleep(forTimeInterval: 0.05)
            }
            // What the server got into the connection before famctl closed it: what arrived
            // while the cancellation landed (8 s of it, for a machine busy with other
            // tests), not the body (famctl keeps none of it either way).
            #expect(sent.count == 1 && sent[0] < 256 << 20, "a body of \(size.map(String.init) ?? "no length"): sent \(sent)")
        }
        let small = try RangeIgnoringServer(size: 100)
        defer { small.stop() }
        let got = try WebDAVPeer(url: URL(string: "http://127.0.0.1:\(small.port)/family/")!, maximumObjectBytes: 4_096).get("segments/b.seg")
        #expect(got.bytes == [UInt8](repeating: 0x5A, count: 100) && got.tag == "\"x\"")
    }

    @Test func expiredTokensMeanRelistingAndShortPagesStillCoverEverything() throws {
        var faults = MemoryPeer.Faults()
        faults.shortPage = 50
        let peer = MemoryPeer(seed: 3, faults: faults)
        for i in 0..<40 { try peer.create(Self.path(i), [UInt8(i)]) }
        var seen = Set<String>()
        var token: String?
        while true {
            let page = try peer.changes(since: token, limit: 10)
            seen.formUnion(page.objects.map(\.path))
            token = page.token
            if !page.moreComing { break }
        }
        #expect(seen.count == 40)
        #expect(throws: PeerError.tokenExpired) { _ = try peer.changes(since: "999999", limit: 10) }
    }

    @Test func throttlesAreWaitedOutNotHammered() throws {
        var faults = MemoryPeer.Faults()
        faults.throttle = 40
        faults.retryAfter = 3
        faults.unavailable = 10
        let memory = MemoryPeer(seed: 11, faults: faults)
        var slept: [Double] = []
        let peer = RetryingPeer(memory, attempts: 50, rng: SplitMixRNG(seed: 1), sleep: { slept.append($0) })
        for i in 0..<30 { try peer.create(Self.path(i), [UInt8(i)]) }
        for i in 0..<30 { #expect(try peer.get(Self.path(i)).bytes == [UInt8(i)]) }
        let failures = memory.calls - 60
        #expect(failures > 0, "no fault was injected")
        #expect(slept.count == failures, "every failed call is followed by a wait: \(slept.count) waits for \(failures) failures")
        #expect(slept.filter { $0 == 3 }.count > 0, "retry-after was honoured")
        #expect(slept.allSatisfy { $0 > 0 }, "never retried without waiting")
    }

    /// A server that asks for long waits (`Retry-After: 600`, or 10 s
    /// again and again) does not hold a request for more than
    /// ``RetryingPeer/waitBudget`` seconds in all: the throttle is passed
    /// on, saying how long it asked for. `nan` gets the back-off.
    @Test func longThrottlesArePassedOnNotWaitedForAnHour() throws {
        for (after, most) in [(600.0, 0), (10.0, 4)] {
            var faults = MemoryPeer.Faults()
            faults.throttle = 100
            faults.retryAfter = after
            var slept: [Double] = []
            let peer = RetryingPeer(MemoryPeer(seed: 5, faults: faults), attempts: 8, rng: SplitMixRNG(seed: 1), sleep: { slept.append($0) })
            #expect(throws: PeerError.throttled(retryAfter: after)) { try peer.create(Self.path(1), [1]) }
            #expect(slept.count == most && slept.reduce(0, +) <= RetryingPeer.waitBudget, "Retry-After \(after): waited \(slept)")
        }
        var faults = MemoryPeer.Faults()
        faults.throttle = 100
        faults.retryAfter = .nan
        var slept: [Double] = []
        let peer = RetryingPeer(MemoryPeer(seed: 5, faults: faults), attempts: 8, rng: SplitMixRNG(seed: 1), sleep: { slept.append($0) })
        #expect(throws: PeerError.self) { try peer.create(Self.path(1), [1]) }
        #expect(slept.count == 7 && slept.allSatisfy { $0.isFinite && $0 >= 0.1 }, "nan: \(slept)")
    }

    /// `getOnce` (a file that failed in an earlier round) asks once: no
    /// back-off on failure, but a throttle is waited out once.
    @Test func getOnceAsksOnceAndWaitsOutOneThrottle() throws {
        let memory = MemoryPeer(seed: 3)
        var slept: [Double] = []
        let peer = RetryingPeer(memory, attempts: 8, rng: SplitMixRNG(seed: 1), sleep: { slept.append($0) })
        try peer.create(Self.path(1), [7])
        memory.faults.brokenPaths = [Self.path(1)]
        var calls = memory.calls
        #expect(throws: PeerError.self) { _ = try peer.getOnce(Self.path(1)) }
        #expect(slept.isEmpty && memory.calls == calls + 1, "one request, no back-off")
        memory.faults.brokenPaths = []
        memory.faults.throttle = 100
        memory.faults.retryAfter = 2
        calls = memory.calls
        #expect(throws: PeerError.throttled(retryAfter: 2)) { _ = try peer.getOnce(Self.path(1)) }
        #expect(slept == [2] && memory.calls == calls + 2, "one throttle waited out, then asked again once: \(slept)")
        calls = memory.calls
        #expect(throws: PeerError.throttled(retryAfter: 2)) { _ = try peer.getOnce(Self.path(1)) }
        #expect(slept == [2] && memory.calls == calls + 1, "only the first throttle of a round is waited out: \(slept)")
        memory.faults.throttle = 0
        #expect(try peer.getOnce(Self.path(1)).bytes == [7])
    }
}

/// A private Apache httpd with mod_dav on 127.0.0.1 (scripts/apache-webdav.sh).
enum ApacheServer {
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/apache-webdav.sh").path
    }

    static func run(_ args: [String], env: [String: String] = [:]) -> (Int32, String) {
        let log = NSTemporaryDirectory() + "famctl-apache-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: log) }
        // The environment on the command line, not setenv: other tests start servers at the same time.
        let vars = env.map { "\($0.key)='\($0.value)' " }.joined()
        let status = system(vars + "/bin/bash " + args.map { "'\($0)'" }.joined(separator: " ") + " </dev/null >'\(log)' 2>&1")
        return (status == -1 ? -1 : (status >> 8) & 0xff, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// Starts the server, runs `body` with its WebDAV URL, stops it.
    static func with(_ body: (URL) throws -> Void) throws {
        try with { url, _ in try body(url) }
    }

    /// The same, with the server's directory too (its `access.log` has a
    /// line per request: method, path, status, body bytes sent), and, with
    /// `login`, `/dav` asking for it (HTTP Basic).
    /// With `tls`, it serves `https://` with a self-signed certificate, in
    /// the server's directory as `cert.pem`.
    static func with(login: (user: String, password: String)? = nil, tls: Bool = false, _ body: (URL, String) throws -> Void) throws {
        let base = NSTemporaryDirectory() + "famctl-apache-" + UUID().uuidString
        var env = login.map { ["WEBDAV_USER": $0.user, "WEBDAV_PASSWORD": $0.password] } ?? [:]
        if tls { env["WEBDAV_TLS"] = "1" }
        let (code, out) = run([script, "start", base], env: env)
        defer { _ = run([script, "stop", base]) }
        try #require(code == 0, "could not start Apache: \(out)")
        let line = try #require(out.split(separator: "\n").last { $0.hasPrefix("ready ") })
        try body(try #require(URL(string: String(line.dropFirst(6)))), base)
    }
}
