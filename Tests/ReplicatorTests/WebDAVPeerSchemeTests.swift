import Foundation
@testable import Replicator
import Testing

/// The WebDAV peer speaks http and https alone: libcurl knows many more
/// protocols (file, gopher, dict…), and a URL from an invitation must not
/// reach them.
struct WebDAVPeerSchemeTests {
    @Test func aURLOfAnotherProtocolIsRefusedNotFollowed() throws {
        let dir = NSTemporaryDirectory() + "famctl-scheme-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("a secret of this machine".utf8).write(to: URL(fileURLWithPath: dir + "/secret"))
        for url in [URL(fileURLWithPath: dir + "/"), URL(string: "gopher://127.0.0.1:9/")!, URL(string: "dict://127.0.0.1:9/")!] {
            let peer = WebDAVPeer(url: url, timeout: 2)
            do {
                let got = try peer.get("secret")
                Issue.record("\(url): read \(got.bytes.count) bytes")
            } catch {
                guard case .unsupported(let why) = error else { Issue.record("\(url): \(error)"); continue }
                #expect(why.lowercased().contains("protocol"), "\(url): \(why)")
            }
        }
    }

    /// The look at a device's own collection before a write gives up after
    /// a few seconds on a server that takes the request and never answers,
    /// not the peer's whole timeout (a review: an `invite` waited 21 s).
    @Test func theOwnFolderLookGivesUpSoon() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(listening)
        // Never accepted: the kernel completes the connection, nobody answers.
        let peer = WebDAVPeer(url: URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/dav/")!, timeout: 60)
        let started = Date()
        #expect(throws: PeerError.self) { _ = try peer.namesOnce(in: String(repeating: "ab", count: 32)) }
        let took = Date().timeIntervalSince(started)
        #expect(took < WebDAVPeer.quickTimeout + 10, "waited \(took) s, the peer's timeout being 60 s")
    }
}
