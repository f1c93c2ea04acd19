import Foundation
import Testing

/// A home holds the device's private key; a shared folder is copied to
/// every member. Neither may hold the other, however the paths are typed.
struct HomeApartFromSharedFolderTests {
    @Test func aSharedFolderThatHoldsOrIsTheHomeIsRefused() throws {
        let r = FamctlRunner()
        try r.ok("init", "--name", "Mum")
        for (dir, how) in [(r.home, "is the home itself"), (r.home + "/./", "is the home itself"), (r.home + "/shared", "lies inside the home"),
                           (r.root, "holds the home")] {
            let out = try r.run("family", "create", "--name", "F", "--dir", dir)
            #expect(out.code == 64 && out.stderr.contains(how) && out.stderr.contains("private key (identity.key)"), "\(dir): \(out.stderr)")
        }
        // Through a symbolic link too.
        try FileManager.default.createSymbolicLink(atPath: r.root + "/link", withDestinationPath: r.home)
        let linked = try r.run("family", "create", "--name", "F", "--dir", r.root + "/link/sync")
        #expect(linked.code == 64 && linked.stderr.contains("lies inside the home"), "\(linked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: r.home + "/shared") && !FileManager.default.fileExists(atPath: r.home + "/sync"), "no folder made")
        try r.ok("family", "create", "--name", "F", "--dir", r.root + "/shared")
        let moved = try r.run("settings", "sync", "--dir", r.home + "/elsewhere")
        #expect(moved.code == 64 && moved.stderr.contains("lies inside the home"), "\(moved.stderr)")
        #expect(try r.ok("settings", "sync").contains("shared directory \(r.root)/shared"))
    }

    /// A home moved into its family's shared folder afterwards (`mv`):
    /// `sync` refuses, as `family create` refuses such a folder (a review:
    /// it synced, its private key in the folder the engine copies).
    @Test func aHomeMovedIntoItsSharedFolderIsNotSynced() throws {
        let r = FamctlRunner()
        try r.ok("init", "--name", "Mum")
        let shared = r.root + "/shared"
        try r.ok("family", "create", "--name", "F", "--dir", shared)
        try r.ok("sync")
        let moved = shared + "/mum-home"
        try FileManager.default.moveItem(atPath: r.home, toPath: moved)
        let sync = try r.run("sync", "--home", moved)
        #expect(sync.code == 64 && sync.stderr.contains("the shared folder \(shared) holds the home") && sync.stderr.contains("private key (identity.key)"), "\(sync.stderr)")
        try FileManager.default.moveItem(atPath: moved, toPath: r.home)
        try r.ok("sync")
    }

    @Test func noHomeIsMadeOrOpenedInASharedFolder() throws {
        let f = try SharedFamily()
        let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: f.dir).first)
        // The shared folder given as a home by mistake: said so, not "run famctl init there".
        let status = try f.mum.run("status", "--home", f.dir)
        #expect(status.code == 66 && status.stderr.contains("\(f.dir) is not a famctl home: it is a family's shared folder (it holds \(f.dir)/\(folder))")
                && !status.stderr.contains("famctl init") && !status.stderr.contains("need --home"), "\(status.stderr)")
        for home in [f.dir, f.dir + "/" + folder + "/new", f.dir + "/" + folder] {
            let made = try f.mum.run("init", "--name", "X", "--home", home)
            #expect(made.code == 64 && made.stderr.contains("is in a family's shared folder (\(f.dir)/\(folder))"), "\(home): \(made.stderr)")
            #expect(!FileManager.default.fileExists(atPath: home + "/identity.key"))
        }
        let accepted = try FamctlRunner().run("accept", try f.mum.ok("invite"), "--name", "Gran", "--dir", f.dir, "--home", f.dir + "/gran")
        #expect(accepted.code == 64 && accepted.stderr.contains("the shared folder \(f.dir) holds the home \(f.dir)/gran") && accepted.stderr.contains("nothing was written"), "\(accepted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.dir + "/gran"))
    }

    @Test func aSharedFolderIsKeptAsOnePath() throws {
        let r = FamctlRunner()
        try r.ok("init", "--name", "Mum")
        try r.ok("family", "create", "--name", "F", "--dir", r.root + "//shared/./")
        #expect(try r.ok("settings", "sync") == "sync: shared directory \(r.root)/shared")
        #expect(try r.ok("settings", "sync", "--dir", r.root + "/shared/").contains("(unchanged: this device syncs there already)"))
    }
}
