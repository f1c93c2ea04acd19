import Foundation
import Testing

/// A private Apache httpd with mod_dav on 127.0.0.1
/// (`scripts/apache-webdav.sh`), for the tests that sync through a real
/// WebDAV server.
enum ApacheWebDAV {
    static let script = Subprocess.repositoryScript("apache-webdav.sh")

    /// Starts a server, runs `body` with its WebDAV URL and its directory,
    /// then stops it. With `login`, `/dav` asks for mum / s3cret (HTTP
    /// Basic); with `tls`, it serves `https://` with a self-signed
    /// certificate, in its directory as `cert.pem`.
    static func with(login: Bool = false, tls: Bool = false, _ body: (_ url: String, _ directory: String) throws -> Void) throws {
        let base = NSTemporaryDirectory() + "famctl-apache-" + UUID().uuidString
        var env = login ? ["WEBDAV_USER": "mum", "WEBDAV_PASSWORD": "s3cret"] : [:]
        if tls { env["WEBDAV_TLS"] = "1" }
        let (code, out) = Subprocess.script([script, "start", base], env: env)
        defer { _ = Subprocess.script([script, "stop", base]) }
        try #require(code == 0, "could not start Apache: \(out)")
        let ready = try #require(out.split(separator: "\n").last { $0.hasPrefix("ready ") })
        try body(String(ready.dropFirst(6)), base)
    }
}
