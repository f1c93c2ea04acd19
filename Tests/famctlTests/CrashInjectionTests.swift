import Envelope
@testable import famctl
import Foundation
import Testing

/// famctl killed with SIGKILL at random moments while appending, publishing
/// and compacting, ingesting, importing store files, and rebuilding the
/// stores. After every kill the
/// home opens and `replay` passes; every acknowledged record survives; no
/// half-written segment is ever ingested; the household converges afterwards.
struct CrashInjectionTests {
    static var kills: Int { Int(ProcessInfo.processInfo.environment["FAMCTL_CRASH_KILLS_MIXED"] ?? "") ?? 160 }

    /// Runs famctl and SIGKILLs it after `delay` µs, unless it finished first.
    /// Returns its stdout when it finished on its own.
    static func runKilled(_ args: [String], after delay: UInt32) throws -> String? {
        let p = Process()
        p.executableURL = FamctlRunner.binary
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        usleep(delay)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return p.terminationReason == .exit && p.terminationStatus == 0 ? text : nil
    }

    @Test(.againstAHang)
    func killedAnywhereLosesNothing() throws {
        var rng = SystemRandomNumberGenerator()
        let family = try SharedFamily()
        let (root, mum, dad) = (family.folderOwner, family.mum, family.dad)
        // A store file to import, 300 rows.
        let imports = root.root + "/import"
        try FileManager.default.createDirectory(atPath: imports, withIntermediateDirectories: true)
        let rows = (0..<300).map { i in #"{"id":"\#(UUID().uuidString.lowercased())","focus":"newMom","at":"2026-11-29T08:00:00Z","fields":{"kind":"mood","mood":\#(i % 5 + 1)}}"# }
        try ("[" + rows.joined(separator: ",") + "]").write(toFile: imports + "/postpartum.json", atomically: true, encoding: .utf8)

        var acknowledged: [String] = []
        var counts: [String: Int] = [:]
        for round in 0..<Self.kills {
            let delay = UInt32.random(in: 0...60_000, using: &rng)
            let op: String
            let args: [String]
            switch round % 5 {
            case 0: op = "record add"; args = ["--home", dad.home, "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=\(round % 5 + 1)"]
            case 1: op = "sync (publish, compaction)"; args = ["--home", dad.home, "sync"]
            case 2: op = "sync (ingest)"; args = ["--home", mum.home, "sync"]
            case 3: op = "import stores"; args = ["--home", mum.home, "import", "stores", imports]
            default: op = "rebuild"; args = ["--home", mum.home, "rebuild"]
            }
            counts[op, default: 0] += 1
            if let out = try Self.runKilled(args, after: delay), op == "record add" {
                acknowledged.append(out.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            for r in [mum, dad] {
                let replay = try r.run("replay")
                #expect(replay.code == 0, "round \(round) after killing \(op): replay failed: \(replay.stdout.suffix(400))")
            }
            // A half-written segment is never ingested: nothing the reader took is damaged.
            if round % 20 == 19 {
                let stuck = try Home.open(mum.home).replicator(probe: false).unverifiable()
                #expect(stuck.isEmpty, "round \(round): files left unverifiable: \(stuck)")
            }
        }
        for r in [dad, mum, dad, mum] { try r.ok("sync") }
        #expect(try mum.ok("digest") == dad.ok("digest"), "the household did not converge after the kills")
        let list = try mum.ok("record", "list")
        for id in acknowledged { #expect(list.contains(id), "acknowledged record \(id) lost") }
        print("crash injection: \(Self.kills) SIGKILLs (\(counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))), \(acknowledged.count) acknowledged records, all present, digests equal")
    }
}
