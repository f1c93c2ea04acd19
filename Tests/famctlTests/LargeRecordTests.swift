import Foundation
import Testing

/// A record must stay exportable and carriable: as a whole it fits in one
/// event. `record update` refuses a change that would grow it past that;
/// one grown past it all the same, by changes merged from two devices, is
/// imported (and carried into a family) as several puts.
struct LargeRecordTests {
    static let big = String(repeating: "x", count: 120_000)

    @Test func anUpdateThatGrowsARecordPastOneEventIsRefused() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let baby = try f.ok("subject", "add", "baby")
        let id = try f.ok("record", "add", "--focus", baby, "--store", "milestone", "title=carrots", "x1=\(Self.big)")
        var refused: FamctlRunner.Result?
        for i in 2...12 {
            let r = try f.run("record", "update", id, "x\(i)=\(Self.big)")
            if r.code != 0 { refused = r; break }
        }
        let r = try #require(refused, "the record grew past one event")
        #expect(r.code == 65 && r.stderr.contains("too large for one event as a whole"), "\(r.stderr)")
        // What it holds exports and imports whole.
        let out = f.root + "/export"
        try f.ok("export", "stores", out)
        let g = FamctlRunner()
        try g.ok("init", "--name", "Gran")
        try g.ok("import", "stores", out)
        func fields(_ r: FamctlRunner) throws -> NSDictionary? {
            (try JSONSerialization.jsonObject(with: Data(try r.ok("record", "show", id, "--json").utf8)) as? [String: Any])?["fields"] as? NSDictionary
        }
        let mine = try #require(try fields(f))
        let theirs = try fields(g)
        #expect(mine.count >= 8 && theirs == mine, "the import did not give back every field")
    }

    @Test func aRecordGrownPastOneEventByAMergeIsImportedAsSeveralPuts() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let id = try mum.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        for _ in 0..<2 { try mum.ok("sync"); try dad.ok("sync") }
        // Each device adds half a megabyte to the same record, then they sync.
        for i in 1...5 { try mum.ok("record", "update", id, "m\(i)=\(Self.big)") }
        for i in 1...5 { try dad.ok("record", "update", id, "d\(i)=\(Self.big)") }
        for _ in 0..<2 { try mum.ok("sync"); try dad.ok("sync") }
        let merged = try mum.ok("record", "show", id, "--json")
        #expect(merged.contains("\"m5\"") && merged.contains("\"d5\""))
        let out = mum.root + "/export"
        try mum.ok("export", "stores", out)
        let g = FamctlRunner()
        try g.ok("init", "--name", "Gran")
        let imported = try g.run("import", "stores", out)
        #expect(imported.code == 0, "\(imported.stderr)")
        let back = try JSONSerialization.jsonObject(with: Data(try g.ok("record", "show", id, "--json").utf8)) as? [String: Any]
        let fields = try #require(back?["fields"] as? [String: Any])
        #expect(fields.count == 12 && (1...5).allSatisfy { fields["m\($0)"] as? String == Self.big && fields["d\($0)"] as? String == Self.big }, "\(fields.keys.sorted())")
        #expect(try g.ok("replay").hasSuffix("result: OK"))
    }
}
