import Envelope
import Projections
@testable import famctl
import Foundation

import Testing

/// Runs the built `famctl` binary as a user would, in a temporary home.
final class FamctlRunner {
    struct Result {
        let code: Int32
        let stdout: String
        let stderr: String
    }

    let root: String
    var home: String { root + "/home" }
    /// Variables set for every run of this runner (a run's own `env`
    /// overrides them): a test of a server that fails on purpose shortens
    /// the back-off it does not test.
    var environment: [String: String] = [:]

    init() {
        root = NSTemporaryDirectory() + "famctl-e2e-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    static var binary: URL {
        if let d = ProcessInfo.processInfo.environment["FAMCTL_PRODUCTS"] { return URL(fileURLWithPath: d + "/famctl") }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("famctl")
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue { return candidate }
        }
        return URL(fileURLWithPath: "famctl")
    }

    /// Runs `famctl args…` with `FAMCTL_HOME` set to this runner's home (unless `env` overrides it).
    @discardableResult
    /// - Parameter throughPath: when given, famctl is started by its name
    ///   by `/bin/sh`, after running this shell text (setting `PATH`, a
    ///   `cd`), as a user's shell starts it.
    /// - Parameter under: a program and its arguments that famctl is run
    ///   under (`strace …`), given famctl's path and `args` after them.
    func run(_ args: [String], env: [String: String] = [:], throughPath: String? = nil, under: [String] = []) throws -> Result {
        let p = Process()
        if let program = under.first {
            p.executableURL = URL(fileURLWithPath: program)
            p.arguments = Array(under.dropFirst()) + [Self.binary.path] + args
        } else if let throughPath {
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", throughPath + "; exec famctl \"$@\"", "famctl"] + args
        } else {
            p.executableURL = Self.binary
            p.arguments = args
        }
        var environment = ProcessInfo.processInfo.environment
        environment["FAMCTL_HOME"] = home
        environment["TZ"] = "UTC"
        for (k, v) in self.environment { environment[k] = v }
        for (k, v) in env { environment[k] = v }
        p.environment = environment
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Both pipes read at once (a child filling one while the other is
        // read would wait for ever), with read(2) asked again when a signal
        // interrupts it: Foundation's readDataToEndOfFile traps on EINTR.
        let errorText = Self.drainInBackground(err.fileHandleForReading.fileDescriptor)
        let o = Self.drain(out.fileHandleForReading.fileDescriptor)
        let e = errorText()
        p.waitUntilExit()
        return Result(code: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    /// Everything `fd` gives until its end.
    static func drain(_ fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { out += buffer[0..<n]; continue }
            if n < 0, errno == EINTR { continue }
            return out
        }
    }

    /// ``drain(_:)`` on another thread; the returned function waits for it.
    static func drainInBackground(_ fd: Int32) -> () -> [UInt8] {
        final class Box: @unchecked Sendable { var bytes: [UInt8] = [] }
        let box = Box(), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            box.bytes = drain(fd)
            done.signal()
        }
        return {
            done.wait()
            return box.bytes
        }
    }

    func run(_ args: String...) throws -> Result { try run(args) }

    /// Mum, owner of family "F" over the WebDAV server at `url`, with the
    /// new mom as its care subject, and Dad, who accepted her invitation.
    static func webDAVFamily(_ url: String) throws -> (mum: FamctlRunner, dad: FamctlRunner) {
        let mum = FamctlRunner(), dad = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--peer", url)
        try mum.ok("subject", "add", "newMom")
        try dad.ok("accept", try mum.ok("invite"), "--name", "Dad")
        return (mum, dad)
    }

    /// A device named Mum with the new mom as its care subject: in a family
    /// of its own, or the owner of one over the WebDAV `peer` or, with
    /// `shared`, over a shared folder in its root (`ROOT/shared`).
    static func mum(shared: Bool = false, peer: String? = nil) throws -> FamctlRunner {
        let r = FamctlRunner()
        try r.ok("init", "--name", "Mum")
        if let peer {
            try r.ok("family", "create", "--name", "F", "--peer", peer)
        } else if shared {
            try r.ok("family", "create", "--name", "F", "--dir", r.root + "/shared")
        }
        try r.ok("subject", "add", "newMom")
        return r
    }

    /// Runs and requires exit 0; returns stdout without its final newline.
    @discardableResult
    func ok(_ args: String...) throws -> String { try ok(args) }

    @discardableResult
    func ok(_ args: [String]) throws -> String {
        let r = try run(args)
        #expect(r.code == 0, "famctl \(args.joined(separator: " ")) exited \(r.code): \(r.stderr)")
        return r.stdout.hasSuffix("\n") ? String(r.stdout.dropLast()) : r.stdout
    }

    /// `accept` as by a device that could not read the family's events
    /// first (its folder not synced yet): made against an empty folder of
    /// its own, then pointed at `dir` (else the code's folder). Its join is
    /// written whatever the events say, and judged once they arrive.
    func acceptUnread(_ code: String, name: String, dir: String? = nil) throws {
        let empty = root + "/not-synced-yet"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try ok("accept", code, "--name", name, "--dir", empty)
        guard let folder = dir ?? Self.folder(of: code) else { throw CocoaError(.fileNoSuchFile) }
        try ok("settings", "sync", "--dir", folder)
    }

    /// The shared folder an invitation code names.
    static func folder(of code: String) -> String? {
        guard let parsed = try? InviteCode(parsing: code), case .directory(let d) = parsed.location else { return nil }
        return d
    }
}

/// A family sharing one folder: Mum owns it and has the `newMom` subject; each
/// named member has accepted an invitation; everyone has synced twice.
struct SharedFamily {
    let folderOwner = FamctlRunner()   // holds the shared folder, removed with it
    let dir: String
    let mum = FamctlRunner()
    let members: [FamctlRunner]

    init(_ names: [String] = ["Dad"]) throws {
        dir = folderOwner.root + "/shared"
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", dir)
        try mum.ok("subject", "add", "newMom")
        var members: [FamctlRunner] = []
        for name in names {
            let m = FamctlRunner()
            try m.ok("accept", try mum.ok("invite"), "--name", name, "--dir", dir)
            members.append(m)
        }
        self.members = members
        for _ in 0..<2 { for r in [mum] + members { try r.ok("sync") } }
    }

    var dad: FamctlRunner { members[0] }
}

/// Mum owns a family (its shared folder under her runner's root); Dad has a
/// home of his own, in no family yet, with the `newMom` subject and one
/// record: what `accept` on an initialised home starts from.
struct FamilyAndPrivateHome {
    let mum = FamctlRunner()
    let dad = FamctlRunner()
    /// Dad's record.
    let record: String

    init(family: String = "F", dadName: String = "Dad") throws {
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", family, "--dir", mum.root + "/shared")
        try dad.ok("init", "--name", dadName)
        try dad.ok("subject", "add", "newMom")
        record = try dad.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4")
    }
}

extension FamctlRunner {
    /// Waits (up to `timeout` seconds) until process `p` has taken Ctrl-C
    /// over: famctl reads SIGINT from a dispatch source, which catches it
    /// (`/proc/PID/status` shows it in `SigCgt`; `SigIgn` in between). A
    /// test that sends SIGINT before that kills the process instead of
    /// stopping it, however long it slept first on a loaded machine.
    /// - Returns: whether it did in time.
    @discardableResult
    static func waitUntilCtrlCIsHandled(_ p: Process, timeout: TimeInterval = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        func mask(_ status: String, _ name: String) -> UInt64 {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) ?? 0
        }
        while Date() < deadline, p.isRunning {
            if let status = try? String(contentsOfFile: "/proc/\(p.processIdentifier)/status", encoding: .utf8),
               mask(status, "SigCgt") & (1 << UInt64(SIGINT - 1)) != 0 {
                return true
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }
}
