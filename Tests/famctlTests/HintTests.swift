import Foundation
import Testing

/// Mistakes a new user makes get a hint that says what to do (a review of
/// the docs against the tool found these with none).
struct HintTests {
    @Test func badValuesSayWhereTheGoodOnesAre() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("family", "create", "--name", "F", "--dir", f.root + "/shared")
        let cases: [([String], String)] = [
            (["settings", "include-shared", "maybe"], "Give on (the whole family's records) or off (this device's own)."),
            (["settings", "photos", "--prefetch", "maybe"], "Give --prefetch on or --prefetch off."),
            (["invite", "--revoke", "abcd"], "'famctl invite --list' lists the open invitations with their ids."),
            (["photo", "delete", "not-a-uuid"], "'famctl photo list' lists the photos with their ids."),
        ]
        for (args, hint) in cases {
            let r = try f.run(args)
            #expect(r.code == 65 && r.stderr.contains(hint), "\(args): \(r.stderr)")
        }
        let one = FamctlRunner()
        try one.ok("init", "--name", "Solo")
        try one.ok("subject", "add", "newMom")
        let replay = try one.ok("replay")
        #expect(replay.contains(": 1 event, ") && !replay.contains("1 events"), "\(replay)")
    }
}
