import Envelope
import EventLog
import Foundation
import Projections
import Replicator
import Synchronization

/// `famctl bench [--scale S] [--out FILE] [--peer PYTHON] [--events-per-record K] [--only PARTS] [--keep]`
///
/// Measures famctl against the machine's own bounds, in one run: every
/// figure is printed next to the bound measured alongside it and the ratio.
enum BenchCommand: Command {
    static let spec = CommandSpec(
        path: ["bench"],
        abstract: "Measure append, ingest, rebuild, incremental sync, CLI latency and convergence against this machine's bounds.",
        discussion: """
            Everything runs in temporary homes, removed afterwards unless --keep. --scale 1 is a
            quick run (10,000 events); --scale 10 a fuller one. Build in release mode
            first ('make bench' does). With --peer, the same append and replay workload
            runs through the Python eventsourcing library for comparison.
            """,
        options: [
            .value("--scale", "S", "Size multiplier (default 1: 10,000 events of history)."),
            .value("--out", "FILE", "Also write the results as JSON to FILE."),
            .value("--peer", "PYTHON", "A Python with the eventsourcing library installed, to run the peer workload."),
            .value("--events-per-record", "K", "Core and peer workload: each record written by K events, a put and K-1 changes (default 1, at most 100)."),
            .value("--only", "PARTS", "Run only these parts, comma-separated: core (append, ingest, rebuild, memory), sync, cli, convergence, peer."),
            .flag("--keep", "Keep the temporary homes (to profile a rebuild or a command on them) and print where they are."),
        ])

    struct Row {
        let name: String
        let value: Double
        let unit: String
        let bound: Double?
        let boundName: String
        let target: String
    }

    static func run(_ inv: Invocation) throws {
        let scale = try inv.value("--scale").map { s -> Double in
            guard let v = DecimalText.parse(s), v > 0, v <= 1000 else { throw CLIError.data("--scale '\(s)' is not a positive number up to 1000") }
            return v
        } ?? 1
        let n = max(1000, Int(10_000 * scale))
        let perRecord = try inv.value("--events-per-record").map { s -> Int in
            guard let v = Int(s), (1...100).contains(v) else { throw CLIError.data("--events-per-record '\(s)' is not a whole number from 1 to 100") }
            return v
        } ?? 1
        let parts = Set(["core", "sync", "cli", "convergence", "peer"])
        let only = Set((inv.value("--only") ?? parts.sorted().joined(separator: ",")).split(separator: ",").map(String.init))
        if let bad = only.subtracting(parts).first { throw CLIError.usage("--only: unknown part '\(bad)' (known: \(parts.sorted().joined(separator: ", ")))") }
        // Nothing to measure (`--only ,`): said, not an empty table and exit 0.
        if only.isEmpty { throw CLIError.usage("--only names no part (known: \(parts.sorted().joined(separator: ", ")))") }
        func want(_ part: String) -> Bool { only.contains(part) }
        if want("cli") && !want("core") || want("peer") && !want("core") {
            throw CLIError.usage("--only: cli and peer compare with what core measures (cli times 'record add' on the home core fills); add core")
        }
        // The results' folder is made now (a fresh checkout has no
        // `bench-results/`), so that a path that cannot be written fails
        // before the minutes of measuring rather than after them.
        let out = try inv.value("--out").map { text throws(CLIError) in try Home.absolute(given: text, as: "option --out") }
        if let out {
            let dir = (out as NSString).deletingLastPathComponent
            do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
                throw CLIError(.cantCreate, "--out: cannot create the folder \(dir): \(FileIO.reason(error))")
            }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: out, isDirectory: &isFolder), isFolder.boolValue {
                throw CLIError(.cantCreate, "--out: \(out) is a folder", hint: "Give the path of a file to write, for example \(Home.shellWord(out + "/bench.json")).")
            }
        }
        // The peer, found before anything is measured (a review: a wrong
        // --peer failed after the whole run, its figures lost).
        let peer = try want("peer") && want("core") ? inv.value("--peer").map(Self.peerProgram) : nil
        func note(_ s: String) { Console.err("bench: " + s) }
        if want("peer"), want("core"), inv.value("--peer") == nil {
            note("no --peer: the comparison with the eventsourcing library is not run ('make bench' sets up a Python with it and passes it)")
        } else if inv.value("--peer") != nil, !(want("peer") && want("core")) {
            note("--peer is not used: --only leaves out the peer part")
        }
        let base = NSTemporaryDirectory() + "famctl-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let keep = inv.flag("--keep")
        // Interrupted (Ctrl-C, a timeout's SIGTERM): the temporary homes,
        // gigabytes at --scale 100, are removed, and the peer stopped (a
        // review: both were left behind).
        let interrupt = Self.onInterrupt(base: base, keep: keep)
        defer {
            interrupt.forEach { $0.cancel() }
            if keep {
                let kept = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).sorted()
                Console.err("bench: temporary homes kept in \(base)" + (kept.isEmpty ? "" : " (\(kept.joined(separator: ", ")))"))
            } else {
                try? FileManager.default.removeItem(atPath: base)
            }
        }
        var rows: [Row] = []

        // Ingest verifies on every core, append signs on one core while another
        // seals the rest and stores, rebuild opens bodies on one while another projects.
        let cores = Parallel.cores
        // The bounds sign and verify messages as long as the bytes the
        // workload's events sign: a signature hashes its message (twice,
        // to sign), so a longer one costs more.
        let lengths = Self.signedLengths(eventsPerRecord: perRecord)
        let meanLength = Double(lengths.reduce(0, +)) / Double(lengths.count)
        note(String(format: "the bounds sign and verify %d messages as long as the signed bytes of the workload's first %d events (%.0f bytes on average)",
                    lengths.count, lengths.count, meanLength))
        let sign = Sodium.bareSigningRate(duration: 1, lengths: lengths)
        let verify = Sodium.bareVerificationRate(duration: 1, lengths: lengths)
        // The brief's bound is one core's rate × cores; what the cores give
        // together is measured too, for the record.
        let verifyTogether = cores > 1 ? Sodium.bareVerificationRate(duration: 1, threads: cores, lengths: lengths) : verify
        note(String(format: "bare Ed25519: %.0f signatures/s, %.0f verifications/s (one core); %.0f verifications/s on %d cores at once",
                    sign, verify, verifyTogether, cores))
        // For the record: the bound verifies different signatures, as an
        // ingest does; one signature again and again verifies faster.
        let verifyRepeated = Sodium.bareVerificationRate(duration: 1, repeated: true, lengths: lengths)
        note(String(format: "bare Ed25519 verification of one signature again and again: %.0f/s (%+.1f %% against different ones, the bound's)",
                    verifyRepeated, (verifyRepeated / verify - 1) * 100))

        // Measured again right after the append and the ingest (with core).
        var signAfter = sign
        var verifyAfter = verify
        // Every measurement of each bound through its figure (with core).
        var signSamples = [sign]
        var verifySamples = [verify]
        var togetherSamples = [verifyTogether]
        /// How far a bound moved while its figure was measured: its
        /// measurements before, between the timed calls, and after.
        func drift(_ bound: String, samples: [Double], figure: String) -> String {
            let (low, high) = (samples.min() ?? 0, samples.max() ?? 0)
            let spread = (high / max(low, 1) - 1) * 100
            let inner = samples.dropFirst().dropLast()
            let between = switch inner.count {
            case 0: ""
            case 1: String(format: ", %.0f/s in between", inner.first!)
            default: String(format: ", %d times in between from %.0f/s to %.0f/s", inner.count, inner.min()!, inner.max()!)
            }
            return String(format: "%@: %.0f/s at the start%@, %.0f/s right after the %@; the bound is their mean, %.0f/s (highest %+.0f %% over lowest)%@",
                          bound, samples.first ?? 0, between, samples.last ?? 0, figure, Self.mean(samples), spread,
                          spread > 15 ? ": the machine's speed moved during this figure, so its ratio is uncertain by as much" : "")
        }

        // Append: realistic record events, batched (sign + encrypt + store + project).
        // Scoped, so that no connection to A stays open while the CLI is timed on it.
        let batch = Self.batch
        var t = Date()
        // The records, all ten stores (`BenchWorkload`). With --peer, the
        // same records (from the same seed; only their ids differ) go first
        // to a file, one JSON per line, synced before anything is timed, for
        // the peer to write.
        var workload = BenchWorkload(eventsPerRecord: perRecord)
        let peerWorkloadPath = base + "/workload.jsonl"
        if want("peer"), want("core"), inv.value("--peer") != nil {
            guard FileManager.default.createFile(atPath: peerWorkloadPath, contents: nil) else { throw CLIError(.failure, "cannot create \(peerWorkloadPath)") }
            let file = try FileHandle(forWritingTo: URL(fileURLWithPath: peerWorkloadPath))
            var same = BenchWorkload(eventsPerRecord: perRecord)
            var written = 0
            while written < n {
                let bodies = same.next(min(batch, n - written))
                try file.write(contentsOf: Data(bodies.flatMap { $0.encoded() + [0x0A] }))
                written += bodies.count
            }
            try file.synchronize()
            try file.close()
        }
        let (appendRate, _, rebuildRate) = try { () throws -> (Double, Double, Double) in
        guard want("core") else { return (0, 0, 0) }
        let a = try Home.create(base + "/a", name: "A")
        try a.append(workload.subjects)
        // Batches of 1 000 events, each a transaction committed in turn, as
        // `import stores` writes them (`Home.append(batches:)`): while one
        // commits, the next is being signed. The records of sixteen batches
        // are made before their timing starts, so that the figure covers
        // famctl's append only (a new UUID each: Foundation reads
        // /dev/urandom for every one).
        var elapsed: TimeInterval = 0
        var written = 0
        // The machine's speed moves from minute to minute: the bound is
        // measured again after each timed call (for a tenth of a second,
        // outside the timing) and right after the figure, and the ratio is
        // taken to the mean of all its measurements, so that it follows
        // the speed the figure ran at, not only at its two ends.
        while written < n {
            let bodies = workload.next(min(batch * Self.batchesTimedTogether, n - written))
            let start = Date()
            try a.append(batches: bodies, size: batch)
            elapsed += Date().timeIntervalSince(start)
            written += bodies.count
            if written < n { signSamples.append(Sodium.bareSigningRate(duration: Self.boundSample, lengths: lengths)) }
        }
        let appendRate = Double(n) / elapsed
        signAfter = Sodium.bareSigningRate(duration: 1, lengths: lengths)
        signSamples.append(signAfter)
        note(drift("bare signing", samples: signSamples, figure: "append"))
        rows.append(Row(name: "append (batched)", value: appendRate, unit: "events/s", bound: Self.mean(signSamples),
                        boundName: Self.boundName("bare signing", signSamples), target: "≥ 0.80"))

        // Ingest: B, another device of the family, ingests A's events in
        // segment-sized batches, each a transaction, sixteen to a call, as a
        // pull ingests the segment files it read (`Home.ingest(batches:)`).
        let b2 = try device(base + "/b", name: "B", of: a)
        // A's events are read sixteen segment-sized batches at a time, outside the timing.
        let total = try a.log.count(in: a.family)
        elapsed = 0
        var next: UInt64 = 1
        while next <= UInt64(total) {
            var batches: [[[UInt8]]] = []
            while batches.count < Self.batchesTimedTogether, next <= UInt64(total) {
                let events = try a.log.chain(of: a.deviceID, in: a.family, seqs: next...(next + UInt64(batch) - 1)).map(\.bytes)
                guard !events.isEmpty else { break }
                batches.append(events)
                next += UInt64(events.count)
            }
            guard !batches.isEmpty else { break }
            let start = Date()
            try b2.ingest(batches: batches) { _, _ in }
            elapsed += Date().timeIntervalSince(start)
            if next <= UInt64(total) {
                verifySamples.append(Sodium.bareVerificationRate(duration: Self.boundSample, lengths: lengths))
                if cores > 1 { togetherSamples.append(Sodium.bareVerificationRate(duration: Self.boundSample, threads: cores, lengths: lengths)) }
            }
        }
        let ingestRate = Double(total) / elapsed
        verifyAfter = Sodium.bareVerificationRate(duration: 1, lengths: lengths)
        verifySamples.append(verifyAfter)
        if cores > 1 {
            togetherSamples.append(Sodium.bareVerificationRate(duration: 1, threads: cores, lengths: lengths))
            note(drift("bare verification on \(cores) cores at once", samples: togetherSamples, figure: "ingest"))
        }
        note(drift("bare verification", samples: verifySamples, figure: "ingest"))
        rows.append(Row(name: "ingest (verify+chain+decrypt+project)", value: ingestRate, unit: "events/s", bound: Self.mean(verifySamples) * Double(cores),
                        boundName: Self.boundName("bare verify × \(cores) core\(cores == 1 ? "" : "s")", verifySamples), target: "≥ 0.80"))
        if cores > 1 {
            rows.append(Row(name: "ingest, against verify on \(cores) cores at once", value: ingestRate, unit: "events/s", bound: Self.mean(togetherSamples),
                            boundName: Self.boundName("bare verify, \(cores) threads", togetherSamples), target: "-"))
        }

        // Rebuild from the verified log, in a process of its own (as a user
        // runs `famctl rebuild`), so that its peak memory is its own. It
        // lasts seconds where the other figures last minutes, so a burst of
        // the machine's noise moves it most: it runs three times, each from
        // the whole log, and the figure is the median (the peak, the largest).
        var runs: [(rate: Double, peak: Double)] = []
        for _ in 0..<Self.rebuildRuns {
            let out = base + "/rebuild.json"
            let child = try spawn(["--home", base + "/b", "rebuild", "--json"], stdout: out)
            guard child.status == 0, let data = FileManager.default.contents(atPath: out),
                  let o = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let rate = (o["eventsPerSecond"] as? NSNumber)?.doubleValue
            else { throw CLIError(.failure, "famctl rebuild exited \(child.status) during the benchmark") }
            // The child reports its own peak: its ru_maxrss would include this process's, carried across exec.
            runs.append((rate, (o["peakRSSMB"] as? NSNumber)?.doubleValue ?? child.maxRSSMB))
        }
        let rebuildRate = Self.median(runs.map(\.rate))
        note("rebuild: " + runs.map { String(format: "%.0f", $0.rate) }.joined(separator: ", ") + " events/s in \(runs.count) runs; the figure is their median")
        rows.append(Row(name: "rebuild projections (median of \(runs.count))", value: rebuildRate, unit: "events/s", bound: 200_000, boundName: "target 200k/s", target: "≥ 1.00"))
        let peak = runs.map(\.peak).max() ?? 0
        rows.append(Row(name: "peak RSS of the rebuild process", value: peak, unit: "MB", bound: 100, boundName: "100 MB budget", target: "≤ 1.00"))
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        rows.append(Row(name: "peak RSS of the bench (append+ingest)", value: Double(usage.ru_maxrss) / 1024, unit: "MB", bound: nil, boundName: "", target: "-"))
        return (appendRate, ingestRate, rebuildRate)
        }()

        // Incremental sync: one new event after a small and after the full history.
        // A new device's first sync of the large history (reading and
        // checking the segment files as well as ingesting their events), and
        // the bound measured right before and after it.
        var firstSync: (events: Int, seconds: Double, bound: [Double])? = nil
        func incremental(history: Int, tag: String) throws -> Double {
            let dir = base + "/shared-\(tag)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let w = try Home.create(base + "/w-\(tag)", name: "W")
            var records = BenchWorkload()
            try w.append(records.subjects)
            try appendSamples(history, to: w, from: &records)
            let reader = try device(base + "/r-\(tag)", name: "R", of: w)
            let wp = DirectoryPeer(SharedDirectory(root: dir, family: w.family, staging: base + "/staging"))
            _ = try w.syncRound(over: wp)
            let timed = history == n
            let before = timed ? Sodium.bareVerificationRate(duration: 1, lengths: lengths) : 0
            let start = Date()
            let (_, pulled) = try reader.syncRound(over: wp)
            if timed {
                let seconds = Date().timeIntervalSince(start)
                firstSync = (pulled.eventsIngested, seconds, [before, Sodium.bareVerificationRate(duration: 1, lengths: lengths)])
            }
            // A round takes a millisecond or two: the median of 9 is reported.
            var times: [TimeInterval] = []
            for _ in 0..<9 {
                try w.append([records.next()])
                _ = try w.syncRound(over: wp)
                let start = Date()
                _ = try reader.syncRound(over: wp)
                times.append(Date().timeIntervalSince(start))
            }
            return times.sorted()[times.count / 2]
        }
        if want("sync") {
            let small = try incremental(history: 1_000, tag: "small")
            let large = try incremental(history: n, tag: "large")
            rows.append(Row(name: "sync of 1 new event (median of 9), \(n) vs 1000 history", value: large * 1000, unit: "ms", bound: small * 1000, boundName: "same with 1k history", target: "≤ 2.00"))
            if let f = firstSync {
                // What a user waits for: the ingest's figure plus reading the
                // segment files and the pauses between groups of them.
                rows.append(Row(name: "first sync of a new device (read+ingest)", value: Double(f.events) / f.seconds, unit: "events/s",
                                bound: Self.mean(f.bound) * Double(cores),
                                boundName: Self.boundName("bare verify × \(cores) core\(cores == 1 ? "" : "s")", f.bound), target: "-"))
            }
        }

        if want("cli") {
            // CLI latency: `famctl record add` end to end, process start included, on
            // A's home with nothing else holding it open (as on a phone).
            var times: [Double] = []
            for i in 0..<21 {
                // The baby's diapers and the mother's moods, in turn.
                let record = i % 2 == 0 ? ["--focus", workload.babyFocus, "--store", "diaper", "wet=true", i % 4 == 0 ? "dirty=true" : "rash=false"]
                    : ["--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(i % 5 + 1)"]
                let run = try spawn(["--home", base + "/a", "record", "add"] + record, stdout: "/dev/null")
                guard run.status == 0 else { throw CLIError(.failure, "famctl record add exited \(run.status) during the benchmark") }
                times.append(run.seconds * 1000)
            }
            times.sort()
            rows.append(Row(name: "record add, \(n) events in the log (median)", value: times[times.count / 2], unit: "ms", bound: 50, boundName: "50 ms target", target: "≤ 1.00"))
            // A sleep is checked against the baby's other sleeps before it is
            // written (an overlap is refused): an hour's sleep every two hours
            // back from now, none overlapping another, nor the workload's
            // (a record every five minutes at most from its start); should the
            // workload reach today (past about a million records), back from
            // its start instead.
            var sleeps: [Double] = []
            let workloadEnd = Date(timeIntervalSince1970: Double(BenchWorkload.start) + Double(n) * 300)
            let now = workloadEnd < Date().addingTimeInterval(-86_400) ? Date() : Date(timeIntervalSince1970: Double(BenchWorkload.start))
            let iso = ISO8601DateFormatter()
            for i in 0..<11 {
                let start = now.addingTimeInterval(-Double(i + 1) * 7_200)
                let run = try spawn(["--home", base + "/a", "record", "add", "--focus", workload.babyFocus, "--store", "sleep",
                                     "start=\(iso.string(from: start))", "end=\(iso.string(from: start.addingTimeInterval(3_600)))"], stdout: "/dev/null")
                guard run.status == 0 else { throw CLIError(.failure, "famctl record add of a sleep exited \(run.status) during the benchmark") }
                sleeps.append(run.seconds * 1000)
            }
            sleeps.sort()
            rows.append(Row(name: "record add of a sleep, \(n) events in the log (median)", value: sleeps[sleeps.count / 2], unit: "ms", bound: 50, boundName: "50 ms target", target: "≤ 1.00"))

        }
        if want("convergence") {
            // Convergence: 5 devices each writing over one shared directory.
            let dir = base + "/shared-conv"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let owner = try Home.create(base + "/c0", name: "C0")
            try owner.append(BenchWorkload().subjects)
            var homes = [owner]
            for i in 1..<5 {
                homes.append(try device(base + "/c\(i)", name: "C\(i)", of: owner))
            }
            let each = max(200, n / 50)
            for (i, h) in homes.enumerated() {
                // The same household's subjects, other records on each device.
                var records = BenchWorkload(device: UInt64(i))
                try appendSamples(each, to: h, from: &records)
            }
            let peer = DirectoryPeer(SharedDirectory(root: dir, family: owner.family, staging: base + "/staging"))
            t = Date()
            var rounds = 0
            repeat {
                rounds += 1
                for h in homes { _ = try h.syncRound(over: peer) }
            } while Set(try homes.map { try $0.projector.digest() }).count > 1 && rounds < 10
            let convergence = Date().timeIntervalSince(t)
            rows.append(Row(name: "convergence, 5 devices × \(each) events (\(rounds) rounds)", value: convergence, unit: "s", bound: nil, boundName: "", target: "-"))

        }

        var peerFigures: [String: Double] = [:]
        var peerFailed = false
        if let (python, script) = peer {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: python)
            p.arguments = [script, peerWorkloadPath]
            let out = Pipe()
            p.standardOutput = out
            try p.run()
            Self.child.withLock { $0 = p.processIdentifier }
            let data = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            Self.child.withLock { $0 = nil }
            if let o = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
                peerFigures = o.compactMapValues { ($0 as? NSNumber)?.doubleValue }
                let shape = perRecord == 1 ? "same records" : "same records, \(perRecord) events each"
                if let ap = peerFigures["append_eps"] {
                    rows.append(Row(name: "append vs eventsourcing (\(shape))", value: appendRate, unit: "events/s", bound: ap, boundName: "eventsourcing append, no signing", target: "≥ 2.00"))
                }
                if let rp = peerFigures["replay_eps"] {
                    rows.append(Row(name: "rebuild vs eventsourcing replay (\(shape))", value: rebuildRate, unit: "events/s", bound: rp, boundName: "eventsourcing replay", target: "≥ 10.00"))
                }
                // The library's fastest rebuild of all state: its log read in
                // order, every event folded in memory (no target: the brief's
                // figure for the peer is its replay above).
                if let sp = peerFigures["scan_eps"] {
                    rows.append(Row(name: "rebuild vs eventsourcing log scan (\(shape))", value: rebuildRate, unit: "events/s", bound: sp, boundName: "eventsourcing scan + fold", target: "-"))
                }
            } else {
                note("the eventsourcing peer did not run (exit \(p.terminationStatus)): its figures are missing (is eventsourcing==9.5.6 installed for \(python)? "
                     + "'\(python) -m pip install eventsourcing==9.5.6', or 'make bench', which sets one up)")
                peerFailed = true
            }
        }

        // With --json, the table is for people, on stderr: stdout is the JSON document alone.
        let table: (String) -> Void = inv.json ? { Console.err($0) } : { Console.out($0) }
        table(String(format: "famctl bench: %d events, %d core(s) used, bare sign %.0f/s, bare verify %.0f/s (one core each)", n, cores, sign, verify)
                    + (want("core") ? String(format: "; after append and ingest: %.0f/s, %.0f/s", signAfter, verifyAfter) : ""))
        // Columns: at least one space between them, however long a cell.
        func cell(_ text: String, _ width: Int) -> String { text.count < width ? text.padding(toLength: width, withPad: " ", startingAt: 0) : text + " " }
        table(cell("metric", 48) + cell("value", 18) + cell("bound", 36) + "ratio   target")
        // Two decimals under 100 (a sync of 2.1 ms against 3.0 ms), so that
        // the ratio can be checked from the figures shown.
        func figure(_ x: Double) -> String { String(format: abs(x) < 100 ? "%.2f" : "%.1f", x) }
        for r in rows {
            let v = figure(r.value) + " " + r.unit
            let b = r.bound.map { figure($0) + " (\(r.boundName))" } ?? "-"
            let ratio = r.bound.map { String(format: "%.2f", r.value / $0) } ?? "-"
            table(cell(r.name, 48) + cell(v, 18) + cell(b, 36) + cell(ratio, 8) + r.target)
        }
        if out != nil || inv.json {
            let json: [String: Any] = [
                "events": n, "eventsPerRecord": perRecord, "cores": cores, "bareSignPerSecond": sign, "bareVerifyPerSecond": verify,
                "bareSignAfterAppendPerSecond": want("core") ? signAfter : NSNull() as Any,
                "bareVerifyAfterIngestPerSecond": want("core") ? verifyAfter : NSNull() as Any,
                "bareSignSamplesPerSecond": want("core") ? signSamples : NSNull() as Any,
                "bareVerifySamplesPerSecond": want("core") ? verifySamples : NSNull() as Any,
                "bareVerifyAllCoresSamplesPerSecond": want("core") && cores > 1 ? togetherSamples : NSNull() as Any, "bareVerifyAllCoresPerSecond": verifyTogether, "bareVerifyRepeatedPerSecond": verifyRepeated,
                "boundMessageBytes": meanLength, "peer": peerFigures,
                "rows": rows.map { row -> [String: Any] in
                    ["metric": row.name, "value": row.value, "unit": row.unit, "bound": row.bound ?? NSNull(),
                     "boundName": row.boundName, "ratio": row.bound.map { row.value / $0 } ?? NSNull() as Any, "target": row.target]
                },
            ]
            if let out {
                let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
                // Through a link, into a FIFO or a device as they are (as `photo get --out`).
                do { try FileIO.writeOut(Array(data), to: out, mode: 0o644) } catch {
                    throw CLIError(.cantCreate, "--out: cannot write \(out): \(error.reason)")
                }
            }
            if inv.json { Console.json(json) }
        }
        if peerFailed {
            throw CLIError(.failure, "the eventsourcing peer did not run: the two targets against it are not measured (the other figures are above" + (out.map { " and in \($0)" } ?? "") + ")",
                           hint: "Give --peer a Python with eventsourcing==9.5.6 installed, or run 'make bench', which sets one up.")
        }
    }

    /// The peer's Python (`--peer`: a path, or a name looked up on PATH)
    /// and its script, the source tree's `bench/eventsourcing_peer.py`;
    /// refused before anything is measured when either is not there.
    static func peerProgram(_ given: String) throws -> (python: String, script: String) {
        var python: String?
        if given.contains("/") {
            python = Home.absolute(given)
        } else {
            for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/\(given)") {
                python = "\(dir)/\(given)"
                break
            }
        }
        guard let python, FileManager.default.isExecutableFile(atPath: python) else {
            throw CLIError(.noInput, "--peer '\(given)': no such program" + (given.contains("/") ? "" : " on PATH"),
                           hint: "Give the path of a Python with eventsourcing==9.5.6 installed ('make bench' makes one in .build/bench-venv).")
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("bench/eventsourcing_peer.py").path
        guard FileManager.default.fileExists(atPath: script) else {
            throw CLIError(.noInput, "--peer: the peer's script \(script) is not there (the source tree this famctl was built from)",
                           hint: "Run the peer part from famctl's source tree ('make bench'), or leave out --peer.")
        }
        return (python, script)
    }

    /// The peer's process while it runs, stopped on an interrupt.
    static let child = Mutex<Int32?>(nil)

    /// On SIGINT or SIGTERM: stops the peer, removes `base` (unless
    /// `keep`), says where it is or that it is gone, and exits 130 or
    /// 143, as the signal would.
    static func onInterrupt(base: String, keep: Bool) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                if let pid = child.withLock({ $0 }) { kill(pid, SIGTERM) }
                if !keep { try? FileManager.default.removeItem(atPath: base) }
                Console.err("bench: interrupted; its temporary homes " + (keep ? "are kept in \(base)" : "(\(base)) removed"))
                exit(128 + sig)
            }
            source.resume()
            return source
        }
    }

    /// Runs this famctl binary with `args` (posix_spawn and wait4: Foundation's
    /// `Process` polls for the exit and would add its own ~50 ms), stdout to a file.
    static func spawn(_ args: [String], stdout: String) throws -> (status: Int32, seconds: Double, maxRSSMB: Double) {
        // This very program, however it was started (through PATH, a
        // relative path, a link): the kernel names it.
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        var argv: [UnsafeMutablePointer<CChar>?] = ([exe] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pid: pid_t = 0
        let start = Date()
        guard posix_spawn(&pid, exe, &actions, nil, &argv, environ) == 0 else { throw CLIError(.failure, "cannot start \(exe)") }
        var status: Int32 = 0
        var usage = rusage()
        _ = wait4(pid, &status, 0, &usage)
        let seconds = Date().timeIntervalSince(start)
        let code: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (code, seconds, Double(usage.ru_maxrss) / 1024)
    }

    /// A second device of `owner`'s family, set up directly (no invitation):
    /// it holds the family's key and trusts the owner's key events.
    static func device(_ path: String, name: String, of owner: Home) throws -> Home {
        let h = try Home.create(path, name: name)
        try h.state.set(.family, owner.family.description)
        try h.state.set(.owner, owner.deviceID.hex)
        try h.state.keyring.store(try owner.currentKey().1, family: owner.family)
        try h.state.set(.projectionVersion, "stale")
        return try Home.open(path)
    }

    /// Rebuilds run for the rebuild's figure (their median).
    static let rebuildRuns = 3

    /// The bytes each of the workload's first 256 events signs (its header,
    /// body and tag: ``SyncEnvelope``), for the bounds' messages.
    static func signedLengths(eventsPerRecord: Int) -> [Int] {
        var workload = BenchWorkload(eventsPerRecord: eventsPerRecord)
        return workload.next(256).map { SyncEnvelope.headerCount + $0.encoded().count + SyncEnvelope.tagCount }
    }

    /// The middle value (the mean of the two middle ones for an even count).
    static func median(_ values: [Double]) -> Double {
        precondition(!values.isEmpty, "the median of nothing")
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// How long each measurement of a bound between two timed calls lasts.
    static let boundSample = 0.1

    static func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }

    /// The bound's name in the table: what it is, and how often it was measured.
    static func boundName(_ bound: String, _ samples: [Double]) -> String {
        samples.count > 2 ? "\(bound), mean of \(samples.count)" : "\(bound), before+after"
    }

    /// Events per append batch and per ingest call: one transaction each.
    static let batch = 1_000
    /// Append batches made ahead and timed as one stream (16 000 events'
    /// bodies held at once).
    static let batchesTimedTogether = 16

    /// Appends the workload's next `count` events in batches.
    static func appendSamples(_ count: Int, to home: Home, from workload: inout BenchWorkload) throws {
        var done = 0
        while done < count {
            let bodies = workload.next(min(batch, count - done))
            try home.append(bodies)
            done += bodies.count
        }
    }
}
