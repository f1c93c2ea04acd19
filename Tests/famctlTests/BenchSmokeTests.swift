import Envelope
import Foundation
import Projections
@testable import famctl
import Testing

/// `famctl bench` keeps working: a small run of every part but the peer's
/// prints its table and writes its JSON, each figure with its bound and
/// ratio where it has one. No figure is judged here: performance is what
/// `make bench` measures, not the tests.
struct BenchSmokeTests {
    @Test func smallRunPrintsEveryFigureWithItsBound() throws {
        let f = FamctlRunner()
        // A folder that does not exist yet (as `bench-results/` in a fresh checkout) is made.
        let out = f.root + "/results/new/bench.json"
        let r = try f.run("bench", "--scale", "0.1", "--only", "core,sync,cli,convergence", "--out", out)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("famctl bench: 1000 events, "))
        let data = try #require(FileManager.default.contents(atPath: out))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((json["events"] as? NSNumber)?.intValue == 1000)
        #expect(((json["bareSignPerSecond"] as? NSNumber)?.doubleValue ?? 0) > 0)
        let rows = try #require(json["rows"] as? [[String: Any]])
        func row(_ prefix: String) -> [String: Any]? { rows.first { ($0["metric"] as? String)?.hasPrefix(prefix) == true } }
        for name in ["append (batched)", "ingest", "rebuild projections", "peak RSS of the rebuild process", "sync of 1 new event", "first sync of a new device", "record add,", "record add of a sleep"] {
            let found = row(name)
            #expect(found != nil, "no row \(name)")
            let value = (found?["value"] as? NSNumber)?.doubleValue ?? 0
            let bound = (found?["bound"] as? NSNumber)?.doubleValue ?? 0
            let ratio = (found?["ratio"] as? NSNumber)?.doubleValue ?? -1
            #expect(value > 0 && bound > 0, "\(name): \(value) against \(bound)")
            #expect(abs(ratio - value / bound) < 1e-9, "\(name): the ratio is value ÷ bound")
        }
        // Append's and ingest's bounds are the mean of the bare rates measured
        // at the start, between the timed calls (none in a run this small:
        // one call) and right after each figure (the machine's speed moves).
        let number = { (key: String) in (json[key] as? NSNumber)?.doubleValue ?? 0 }
        #expect(number("bareSignAfterAppendPerSecond") > 0 && number("bareVerifyAfterIngestPerSecond") > 0)
        #expect(number("bareVerifyRepeatedPerSecond") > 0)
        let cores = Double((json["cores"] as? NSNumber)?.intValue ?? 0)
        let appendBound = (row("append (batched)")?["bound"] as? NSNumber)?.doubleValue ?? 0
        let ingestBound = (row("ingest (verify")?["bound"] as? NSNumber)?.doubleValue ?? 0
        let signSamples = (json["bareSignSamplesPerSecond"] as? [NSNumber])?.map(\.doubleValue) ?? []
        let verifySamples = (json["bareVerifySamplesPerSecond"] as? [NSNumber])?.map(\.doubleValue) ?? []
        #expect(signSamples.count >= 2 && signSamples.first == number("bareSignPerSecond") && signSamples.last == number("bareSignAfterAppendPerSecond"), "\(signSamples)")
        #expect(verifySamples.count >= 2 && verifySamples.first == number("bareVerifyPerSecond") && verifySamples.last == number("bareVerifyAfterIngestPerSecond"), "\(verifySamples)")
        #expect(abs(appendBound - BenchCommand.mean(signSamples)) < 1e-6)
        #expect(abs(ingestBound - BenchCommand.mean(verifySamples) * cores) < 1e-6)
        #expect(BenchCommand.mean([1, 2, 6]) == 3)
        #expect(r.stderr.contains("bare signing: ") && r.stderr.contains("right after the append") && r.stderr.contains("the bound is their mean"))

        // The rebuild's peak memory is its own process's, not this run's.
        let rebuildPeak = (row("peak RSS of the rebuild process")?["value"] as? NSNumber)?.doubleValue ?? 0
        #expect(rebuildPeak > 5 && rebuildPeak < 1000)
        // The rebuild's figure is the median of its runs, each printed.
        let note = try #require(r.stderr.split(separator: "\n").first { $0.hasPrefix("bench: rebuild: ") })
        let rates = note.dropFirst("bench: rebuild: ".count).split(separator: " events/s")[0].split(separator: ", ").compactMap { Double($0) }
        #expect(rates.count == BenchCommand.rebuildRuns, "\(note)")
        let figure = (row("rebuild projections")?["value"] as? NSNumber)?.doubleValue ?? 0
        #expect(!rates.isEmpty && abs(figure - BenchCommand.median(rates)) <= 0.5, "the figure \(figure) is the median of \(rates)")
        #expect(BenchCommand.median([5, 1, 3]) == 3 && BenchCommand.median([4, 1, 3, 2]) == 2.5 && BenchCommand.median([7]) == 7)
        #expect(row("convergence")?["bound"] is NSNull)
    }

    /// A run of more than one timed call (16 000 events a call) measures
    /// each bound again between the calls, and the bound is the mean of all
    /// its measurements, not only of those at the two ends.
    @Test func boundsAreMeasuredBetweenTimedCallsToo() throws {
        let f = FamctlRunner()
        let out = f.root + "/bench.json"
        let r = try f.run("bench", "--scale", "1.7", "--only", "core", "--out", out)
        #expect(r.code == 0, "\(r.stderr)")
        let data = try #require(FileManager.default.contents(atPath: out))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let rows = try #require(json["rows"] as? [[String: Any]])
        func bound(_ prefix: String) -> Double { (rows.first { ($0["metric"] as? String)?.hasPrefix(prefix) == true }?["bound"] as? NSNumber)?.doubleValue ?? 0 }
        let signSamples = (json["bareSignSamplesPerSecond"] as? [NSNumber])?.map(\.doubleValue) ?? []
        let verifySamples = (json["bareVerifySamplesPerSecond"] as? [NSNumber])?.map(\.doubleValue) ?? []
        // 17 000 events: two calls, so one measurement between them.
        #expect(signSamples.count == 3 && verifySamples.count == 3, "\(signSamples) \(verifySamples)")
        #expect(abs(bound("append (batched)") - signSamples.reduce(0, +) / 3) < 1e-6)
        #expect(abs(bound("ingest (verify") - verifySamples.reduce(0, +) / 3 * Double((json["cores"] as? NSNumber)?.intValue ?? 0)) < 1e-6)
        #expect(r.stderr.contains("/s in between, ") && r.stdout.contains("mean of 3"), "\(r.stdout) \(r.stderr)")
        // So is the bound of two threads verifying at once, where there are two cores.
        if let together = (json["bareVerifyAllCoresSamplesPerSecond"] as? [NSNumber])?.map(\.doubleValue) {
            #expect(together.count == 3 && together.first == (json["bareVerifyAllCoresPerSecond"] as? NSNumber)?.doubleValue, "\(together)")
            #expect(abs(bound("ingest, against verify") - together.reduce(0, +) / 3) < 1e-6)
        } else {
            #expect((json["cores"] as? NSNumber)?.intValue == 1)
        }
    }

    /// With K events per record, the workload writes a tenth as many
    /// records at K = 10, of many stores; the reader's rebuilt projection
    /// holds exactly the writer's, each record with its last changes.
    @Test func eventsPerRecordWritesFewerRecordsEachChangedOften() throws {
        let f = FamctlRunner()
        let out = f.root + "/bench.json"
        // Started as a user starts it, by its name through PATH, from
        // another folder: the rebuild it times runs this same program.
        let dir = FamctlRunner.binary.deletingLastPathComponent().path
        let r = try f.run(["bench", "--scale", "0.1", "--only", "core", "--events-per-record", "10", "--keep", "--out", out, "--json"],
                          throughPath: "PATH=\(dir):$PATH; cd \(f.root)")
        #expect(r.code == 0, "\(r.stderr)")
        let data = try #require(FileManager.default.contents(atPath: out))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((json["eventsPerRecord"] as? NSNumber)?.intValue == 10)
        // With --json, stdout is the same document alone; the table is on stderr.
        let printed = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "stdout is not one JSON document: \(r.stdout.prefix(200))")
        #expect((printed["eventsPerRecord"] as? NSNumber)?.intValue == 10 && (printed["rows"] as? [Any])?.count == (json["rows"] as? [Any])?.count)
        #expect(r.stderr.contains("famctl bench: ") && r.stderr.contains("ratio   target"), "\(r.stderr)")
        let kept = try #require(r.stderr.range(of: "homes kept in ").map { r.stderr[$0.upperBound...].prefix { $0 != " " } })
        defer { try? FileManager.default.removeItem(atPath: String(kept)) }
        let written = try f.run("--home", kept + "/a", "record", "list", "--json")
        let read = try f.run("--home", kept + "/b", "record", "list", "--json")
        #expect(written.code == 0 && read.code == 0, "\(written.stderr) \(read.stderr)")
        let records = try #require(try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [[String: Any]])
        #expect(records.count == 100)
        #expect(Set(records.compactMap { $0["store"] as? String }).count >= 5, "records of many stores")
        #expect(read.stdout == written.stdout, "the reader's records are the writer's")
        // The workload's own records (the same seed), each merged from its
        // ten events, by `at` (one per record): the same fields.
        var w = BenchWorkload(eventsPerRecord: 10)
        var expected: [String: [String: JSONValue]] = [:]
        for body in w.next(1000) {
            let e = try #require(try RecordEvent(body))
            expected[e.at!, default: [:]].merge(e.fields) { $1 }
        }
        #expect(expected.count == 100)
        for record in records {
            let at = try #require(record["at"] as? String)
            let fields = try #require(expected[at], "no record at \(at) in the workload")
            let want = try JSONSerialization.jsonObject(with: Data(JSONValue.object(fields).jsonText.utf8)) as? NSDictionary
            #expect(want == record["fields"] as? NSDictionary, "\(at)")
        }

        let bad = try f.run("bench", "--events-per-record", "0")
        #expect(bad.code == 65)
        #expect(bad.stderr.contains("--events-per-record '0'"))
    }

    @Test func partsAreCheckedBeforeAnythingRuns() throws {
        let f = FamctlRunner()
        let unknown = try f.run("bench", "--only", "core,warp")
        #expect(unknown.code == 64)
        #expect(unknown.stderr.contains("unknown part 'warp'"))
        let alone = try f.run("bench", "--only", "cli")
        #expect(alone.code == 64)
        #expect(alone.stderr.contains("add core"))
        // A results file that cannot be written fails before anything is measured.
        let file = f.root + "/plain-file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let unwritable = try f.run("bench", "--only", "core", "--out", file + "/bench.json")
        #expect(unwritable.code == 73)
        #expect(unwritable.stderr.contains("--out: cannot create the folder \(file)"))
        #expect(unwritable.stdout.isEmpty)
        // So do a folder as --out, no part at all, and a --peer that is not there (a review: found after the whole run).
        let folder = try f.run("bench", "--only", "core", "--out", f.root)
        #expect(folder.code == 73 && folder.stderr.contains("--out: \(f.root) is a folder") && folder.stdout.isEmpty, "\(folder.stderr)")
        let none = try f.run("bench", "--only", ",")
        #expect(none.code == 64 && none.stderr.contains("--only names no part"), "\(none.stderr)")
        let peer = try f.run("bench", "--peer", "no-such-python-here")
        #expect(peer.code == 66 && peer.stderr.contains("--peer 'no-such-python-here': no such program on PATH") && !peer.stderr.contains("bench: bare"), "\(peer.stderr)")
    }

    /// Interrupted, the bench removes its temporary homes (gigabytes at
    /// --scale 100) and exits as the signal would (a review: they were left).
    @Test func anInterruptedRunRemovesItsHomes() throws {
        let f = FamctlRunner()
        let tmp = f.root + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = FamctlRunner.binary
        p.arguments = ["bench", "--scale", "5", "--only", "core"]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = tmp + "/"
        environment["FAMCTL_HOME"] = f.home
        p.environment = environment
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        // Until its homes are there (the bounds take a few seconds first).
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, ((try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []).allSatisfy({ !$0.hasPrefix("famctl-bench-") }) { usleep(100_000) }
        usleep(1_500_000)
        kill(p.processIdentifier, SIGINT)
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 130, "\(said)")
        #expect(said.contains("bench: interrupted; its temporary homes (") && said.contains(") removed"), "\(said)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? ["?"]).isEmpty, "left in \(tmp)")
    }
}
