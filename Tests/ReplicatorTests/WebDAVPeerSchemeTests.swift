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
}
