import Foundation
import Testing

/// What a power cut may take: a folder famctl makes is in its parent only
/// once the parent is fsynced, and files fsynced into a new folder are lost
/// with it otherwise (a `kill -9` cannot show this: the kernel's cache
/// survives a killed process, not a power cut). famctl is run under
/// `strace`, which records its real system calls, and every folder it makes
/// must have its parent fsynced before the command ends; so must a file
/// `photo get --out` makes through a link.
struct DurableFoldersTests {
    /// One traced run: famctl's result, and its `mkdir`s and fsyncs in order.
    struct Trace {
        enum Call: Equatable { case made(String), synced(String) }
        let result: (code: Int32, stdout: String, stderr: String)
        let calls: [Call]
        /// Every line strace wrote.
        let lines: [Substring]

        /// The folders made whose parent no later fsync covers.
        var foldersNotDurable: [String] {
            calls.enumerated().compactMap { i, call in
                guard case .made(let folder) = call else { return nil }
                let parent = (folder as NSString).deletingLastPathComponent
                return calls[(i + 1)...].contains(.synced(parent)) ? nil : folder
            }
        }

        var made: [String] { calls.compactMap { if case .made(let f) = $0 { f } else { nil } } }
    }

    /// Runs `famctl args…` for `runner` under strace.
    static func traced(_ runner: FamctlRunner, _ args: String..., calls traced: String = "mkdir,mkdirat,fsync,fdatasync") throws -> Trace {
        let log = runner.root + "/strace-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: log) }
        // -f: every thread; -y: the path behind each descriptor; -s: whole paths.
        let result = try runner.run(args, under: ["/usr/bin/strace", "-f", "-y", "-s", "4096", "-e", "trace=" + traced, "-e", "signal=none", "-o", log])
        let text = try String(contentsOfFile: log, encoding: .utf8)
        let made = try Regex(#"\bmkdir(?:at)?\((?:AT_FDCWD, )?"([^"]+)""#)
        let synced = try Regex(#"\bf(?:data)?sync\(\d+<([^>]+)>"#)
        var calls: [Trace.Call] = []
        let lines = text.split(separator: "\n")
        for line in lines {
            // A mkdir that failed (the folder was there) made nothing.
            if let m = try made.firstMatch(in: line), !line.contains("= -1") {
                calls.append(.made(String(m.output[1].substring ?? "")))
            } else if let m = try synced.firstMatch(in: line) {
                calls.append(.synced(String(m.output[1].substring ?? "")))
            }
        }
        return Trace(result: (result.code, result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), result.stderr), calls: calls, lines: lines)
    }

    @Test func everyFolderMadeIsDurableBeforeTheCommandEnds() throws {
        let mum = FamctlRunner()
        let root = mum.root
        let shared = root + "/sync/family"
        let export = root + "/backup/stores/today"
        var traces: [String: Trace] = [:]
        func step(_ name: String, _ trace: Trace) throws -> String {
            #expect(trace.result.code == 0, "\(name): \(trace.result.stderr)")
            traces[name] = trace
            return trace.result.stdout
        }
        _ = try step("init", Self.traced(mum, "init", "--name", "Mum"))
        _ = try step("family create", Self.traced(mum, "family", "create", "--name", "F", "--dir", shared))
        let baby = try mum.ok("subject", "add", "baby")
        let record = try mum.ok("record", "add", "--focus", baby, "--store", "solidFood", "foods=carrot")
        let file = root + "/carrots.jpg"
        try Data(PhotoTests.jpeg(4_000, marker: "durable")).write(to: URL(fileURLWithPath: file))
        let photo = try step("photo add", Self.traced(mum, "photo", "add", record, file))
        _ = try step("sync", Self.traced(mum, "sync"))
        _ = try step("export stores", Self.traced(mum, "export", "stores", export))
        // `--out` through a link whose target is not there yet: written
        // through the link, as a file of its own.
        try FileManager.default.createDirectory(atPath: root + "/pictures", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/latest.jpg", withDestinationPath: root + "/pictures/carrots.jpg")
        let get = try Self.traced(mum, "photo", "get", "--out", root + "/latest.jpg", photo)
        _ = try step("photo get", get)

        // The folders each step must make: without them the check below
        // would pass on a trace that made none.
        let made = Set(traces.values.flatMap(\.made))
        let family = try #require(try visibleNames(shared).first, "the family's folder under \(shared)")
        for folder in [mum.home, root + "/sync", shared, shared + "/" + family, shared + "/" + family + "/blobs",
                       mum.home + "/photos", root + "/backup", root + "/backup/stores", export] {
            #expect(made.contains(folder), "no step made \(folder): \(made.sorted())")
        }
        for (name, trace) in traces.sorted(by: { $0.key < $1.key }) {
            #expect(trace.foldersNotDurable.isEmpty, "\(name) made folders whose parent it never fsynced: \(trace.foldersNotDurable)")
        }
        // The file made through the link, and its entry in its folder.
        let written = try Data(contentsOf: URL(fileURLWithPath: root + "/pictures/carrots.jpg"))
        #expect(Array(written) == PhotoTests.jpeg(4_000, marker: "durable"))
        #expect(get.calls.contains(Trace.Call.synced(root + "/pictures/carrots.jpg")), "photo get --out through a link never fsynced the file: \(String(describing: get.calls))")
        #expect(get.calls.contains(Trace.Call.synced(root + "/pictures")), "photo get --out through a link never fsynced its folder: \(String(describing: get.calls))")
    }

    /// A shared folder on another file system than the home (NFS, another
    /// disk; a tmpfs here): the first file's rename from the home's staging
    /// folder fails (`EXDEV`) and it is written again beside its name; the
    /// round's later files go there at once, each written once, not twice.
    @Test(.enabled(if: CommandLineTests.mayMount(), "needs a tmpfs mount (root, and mounts allowed)"))
    func aSharedFolderOnAnotherFileSystemGetsEachFileWrittenOnce() throws {
        let mum = FamctlRunner()
        let shared = mum.root + "/shared"
        try PermissionTests.withTmpfs(shared, size: "16m") {
            try mum.ok("init", "--name", "Mum")
            try mum.ok("family", "create", "--name", "F", "--dir", shared + "/fam")
            let baby = try mum.ok("subject", "add", "baby")
            let record = try mum.ok("record", "add", "--focus", baby, "--store", "solidFood", "foods=carrot")
            var photos: [String: [UInt8]] = [:]
            for marker in ["first", "second"] {
                let file = mum.root + "/\(marker).jpg"
                let bytes = PhotoTests.jpeg(3_000, marker: marker)
                try Data(bytes).write(to: URL(fileURLWithPath: file))
                photos[try mum.ok("photo", "add", record, file)] = bytes
            }
            let sync = try Self.traced(mum, "sync", calls: "openat,rename,renameat,renameat2")
            #expect(sync.result.code == 0, "\(sync.result.stderr)")
            let created = sync.lines.filter { $0.contains("openat(") && $0.contains("O_CREAT") }
            let staged = created.filter { $0.contains("\"" + mum.home + "/staging/") }
            let beside = created.filter { $0.contains("/.famctl-") }
            // A segment and the two photos' blobs, at least.
            #expect(beside.count >= 3, "files written beside their names: \(beside)")
            #expect(staged.count == 1, "files written in staging first: \(staged)")
            // What went out is whole: Dad reads the record and both photos.
            let dad = FamctlRunner()
            try dad.ok("accept", try mum.ok("invite"), "--name", "Dad", "--dir", shared + "/fam")
            try mum.ok("sync")
            try dad.ok("sync")
            #expect(try dad.ok("record", "list").contains("carrot"))
            for (photo, bytes) in photos {
                let out = dad.root + "/" + photo + ".jpg"
                try dad.ok("photo", "get", "--out", out, photo)
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: out))) == bytes)
            }
        }
    }

    /// The names in a folder (what `ls` shows), hidden ones left out.
    private func visibleNames(_ dir: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir).filter { !$0.hasPrefix(".") }.sorted()
    }
}
