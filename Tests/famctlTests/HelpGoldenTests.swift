import Foundation
import Testing

/// `--help` of every command matches the checked-in text exactly.
/// To accept a deliberate change: FAMCTL_UPDATE_GOLDEN=1 swift test --filter HelpGoldenTests.
struct HelpGoldenTests {
    static let commands: [[String]] = [
        [], ["init"], ["family"], ["family", "create"], ["family", "rotate-key"], ["invite"], ["accept"], ["members"], ["member"], ["member", "remove"], ["member", "role"], ["subject"], ["subject", "add"], ["subject", "update"], ["subject", "remove"], ["subject", "restore"], ["subject", "list"], ["record"], ["record", "add"], ["record", "update"],
        ["record", "delete"], ["record", "restore"], ["record", "list"], ["record", "show"], ["record", "fields"], ["digest"], ["log"], ["status"], ["replay"],
        ["export", "stores"], ["import", "stores"], ["settings", "include-shared"], ["settings", "photos"], ["settings", "sync"], ["sync"],
        ["photo", "add"], ["photo", "get"], ["photo", "list"], ["photo", "delete"], ["verify"], ["bench"], ["rebuild"],
    ]

    static func fixture(_ words: [String]) -> URL {
        let name = words.isEmpty ? "famctl" : words.joined(separator: "-")
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/help")
        return dir.appendingPathComponent(name + ".txt")
    }

    @Test(arguments: commands)
    func helpMatchesGolden(_ words: [String]) throws {
        let r = try FamctlRunner().run(words + ["--help"])
        #expect(r.code == 0)
        #expect(r.stderr.isEmpty)
        let url = Self.fixture(words)
        if ProcessInfo.processInfo.environment["FAMCTL_UPDATE_GOLDEN"] == "1" {
            try r.stdout.write(to: url, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOf: url, encoding: .utf8)
        #expect(r.stdout == golden)
    }

    /// The synopsis at the top of docs/cli.md is each command's USAGE line,
    /// as its `--help` prints it (a user review found two in another order).
    @Test func theDocsSynopsisIsTheUsageLines() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/cli.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let block = try #require(text.components(separatedBy: "```").dropFirst().first)
        let lines = block.split(separator: "\n").filter { $0.hasPrefix("famctl ") }
        #expect(lines.count >= 30)
        for line in lines {
            let words = line.split(separator: " ").dropFirst().prefix { w in
                !(w.hasPrefix("[") || w.hasPrefix("-") || w.hasPrefix("(") || w == w.uppercased())
            }.map(String.init)
            let usage = try FamctlRunner().run(words + ["--help"]).stdout.split(separator: "\n").first { $0.hasPrefix("USAGE: ") }
            #expect(usage.map { String($0.dropFirst("USAGE: ".count)) } == String(line), "docs/cli.md: \(line)")
        }
    }

    @Test func helpIsAcceptedAnywhereAndAsDashH() throws {
        let runner = FamctlRunner()
        let a = try runner.run("record", "add", "--help")
        let b = try runner.run("--help", "record", "add")
        let c = try runner.run("record", "-h", "add")
        let d = try runner.run("help", "record", "add")
        #expect(a.stdout == b.stdout && b.stdout == c.stdout && c.stdout == d.stdout)
        #expect(a.stdout.hasPrefix("OVERVIEW: Record something"))
        let top = try runner.run("help"), plain = try runner.run("--help")
        #expect(top.code == 0 && top.stdout == plain.stdout)
        // After global options too (an alias that gives --home).
        let e = try runner.run("--home", runner.root + "/h", "help", "record", "add")
        let f = try runner.run("--home=\(runner.root)/h", "--json", "help", "record", "add")
        #expect(e.code == 0 && e.stdout == a.stdout && f.stdout == a.stdout, "\(e.stderr)")
        // `help` as a value or an argument is not the help word.
        let note = try runner.run("--home", runner.root + "/h", "record", "add", "--focus", "help")
        #expect(!note.stdout.hasPrefix("OVERVIEW"), "\(note.stdout)")
    }

    /// The global flags take no value: `--json=false` printed JSON all the
    /// same, `--help=no` the help.
    @Test func globalFlagsRefuseAValue() throws {
        let runner = FamctlRunner()
        for args in [["digest", "--json=false"], ["--json=", "status"], ["status", "--help=no"]] {
            let r = try runner.run(args)
            let flag = args.first { $0.hasPrefix("-") }!.split(separator: "=")[0]
            #expect(r.code == 64 && r.stderr.contains("option \(flag) takes no value") && r.stdout.isEmpty, "\(args): \(r.stderr)")
        }
    }
}
