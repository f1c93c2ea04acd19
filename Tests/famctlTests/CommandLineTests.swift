import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Testing

struct CommandLineTests {
    static let baby = "baby:0f8e2d4c-5b6a-4978-8c1d-2e3f4a5b6c7d"

    @Test func demoFlowInitAddLogStatusReplay() throws {
        let f = FamctlRunner()
        let created = try f.ok("init", "--name", "Mum's phone")
        #expect(created.hasPrefix("Created device "))
        let baby = try f.ok("subject", "add", "baby", "--name", "Lily")
        #expect(baby.hasPrefix("baby:") && FocusKey(baby) != nil)
        #expect(try f.ok("subject", "add", "newMom") == "newMom")
        // The brief's contract: stdout is the focus keys.
        #expect(try f.ok("subject", "list").split(separator: "\n").sorted() == [Substring(baby), "newMom"])
        #expect(try f.ok("subject", "list", "--keys").split(separator: "\n").sorted() == [Substring(baby), "newMom"])
        #expect(try f.ok("subject", "list", "--long").split(separator: "\n").sorted() == [Substring(baby) + "  Lily", "newMom"])
        #expect(try f.run("subject", "list", "--long", "--keys").code == 64)
        var ids: [String] = []
        ids.append(try f.ok("record", "add", "--focus", baby, "--store", "feeding", "kind=bottle", "amountMl=120", "start=2026-11-29T08:00:00+01:00"))
        ids.append(try f.ok("--json", "record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=4"))
        ids.append(try f.ok("record", "add", "--store", "diaper", "wet=true", "--focus", baby, "--at", "2026-11-29T09:00:00Z"))
        #expect(UUID(uuidString: ids[0]) != nil)
        #expect(ids[1].contains("\"id\""))
        let log = try f.ok("log")
        #expect(log.split(separator: "\n").count == 5)   // two subjects, three records
        #expect(log.contains("feeding") && log.contains("amountMl=120") && log.contains("wet=true"))
        // Each record's whole id, which `record show` takes.
        #expect(log.contains(" \(ids[0]) ") && log.contains(" \(ids[2]) "))
        #expect(try f.ok("record", "show", String(log.split(separator: "\n")[2].split(separator: " ").first { UUID(uuidString: String($0)) != nil }!)).contains("amountMl=120"))
        let focused = try f.ok("log", "--focus", "newMom")
        #expect(focused.split(separator: "\n").count == 2 && focused.contains("mood=4") && focused.contains("subject.put  newMom"))
        let json = try f.ok("log", "--json")
        let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [[String: Any]]
        #expect(rows.count == 5)
        #expect((rows[2]["fields"] as? [String: Any])?["amountMl"] as? Int == 120)
        // A subject's put shows its fields too.
        #expect(rows.contains { $0["subject"] as? String == baby && ($0["fields"] as? [String: Any])?["name"] as? String == "Lily" }, "\(rows)")
        // A 1 and a 0 are numbers, as written (they were printed as true and false).
        try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=pain", "pain=0")
        let numbers = try f.ok("log", "--json", "--focus", "newMom").filter { !$0.isWhitespace }
        #expect(numbers.contains("\"pain\":0") && !numbers.contains("\"pain\":false"), "\(numbers)")
        let status = try f.ok("status")
        #expect(status.contains("6 in the log"))
        #expect(status.contains("4 live, 2 care subjects"))
        let replay = try f.ok("replay")
        #expect(replay.contains("6 events from 1 author"))
        #expect(replay.hasSuffix("result: OK"))
    }

    /// Under libfaketime with a fixed time, the Swift runtime is handed no
    /// arguments at all: famctl read them from the kernel's copy instead
    /// of crashing ("Range requires lowerBound <= upperBound", a clock
    /// review), also an empty one.
    @Test func argumentsHiddenFromTheRuntimeAreReadFromTheKernel() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        var frozen = try HouseholdTests.clockOff("2026-12-06 06:00:00")
        frozen["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        let version = try f.run(["--version"], env: frozen)
        #expect(version.code == 0 && version.stdout.hasPrefix("famctl "), "\(version.stdout)\(version.stderr)")
        let added = try f.run(["subject", "add", "baby", "--name", "Ada Lin"], env: frozen)
        #expect(added.code == 0, "\(added.stderr)")
        #expect(try f.ok("subject", "list", "--long").contains("Ada Lin"))
        let empty = try f.run(["", "status"], env: frozen)
        #expect(empty.code == 64 && empty.stderr.contains("unknown command ''"), "\(empty.stderr)")
    }

    /// A home that is not there: the hint's command makes it there, the
    /// path quoted for the shell when it must be (it said "famctl init",
    /// which makes the default home, and "pass --home" to a user who had).
    @Test func aMissingHomesHintMakesItThere() throws {
        let f = FamctlRunner()
        let missing = f.root + "/our home"
        let r = try f.run("--home", missing, "status")
        #expect(r.code == 66 && r.stderr.contains("no famctl home at \(missing)"), "\(r.stderr)")
        let command = try #require(r.stderr.split(separator: "'").first { $0.hasPrefix("famctl init") }, "\(r.stderr)")
        #expect(command == "famctl init --name NAME --home \"\(missing)\"")
        let made = try ResourceFaultTests.shell(String(command).replacingOccurrences(of: "famctl ", with: "'\(FamctlRunner.binary.path)' ").replacingOccurrences(of: "NAME", with: "Mum"), env: [:])
        #expect(made.0 == 0, "\(made.1)")
        #expect(try f.run("--home", missing, "status").code == 0)
    }

    /// Text output cannot be misread: a list item holding a comma, a text
    /// holding a space or a quote, an empty text, are printed in quotes (as
    /// in JSON); plain words are not; `log` prints fields as `record` does.
    @Test func textOutputQuotesWhatWouldReadAsSomethingElse() throws {
        let f = FamctlRunner()
        _ = try f.ok("init", "--name", "Mum")
        let baby = try f.ok("subject", "add", "baby", "--name", "Lily")
        let id = try f.ok("record", "add", "--focus", baby, "--store", "solidFood",
                          "--json-fields", #"{"foods":["rice, mashed","pear","say \"yum\""],"allergens":["egg"]}"#)
        let shown = try f.ok("record", "show", id)
        #expect(shown.contains(#"foods="rice, mashed",pear,"say \"yum\"""#) && shown.contains("allergens=egg"), "\(shown)")
        #expect(try f.ok("log").contains(#"foods="rice, mashed",pear,"say \"yum\"""#))
        // A list item holding a backslash is quoted too: `rice\,mashed` would read as one item.
        let slash = try f.ok("record", "add", "--focus", baby, "--store", "solidFood", #"foods=rice\, mashed,pear"#)
        #expect(try f.ok("record", "show", slash).contains(#"foods="rice\\",mashed,pear"#))
        // An empty list is not taken for a cleared field (a record's last photo deleted).
        try f.ok("record", "update", id, "--json-fields", #"{"allergens":[]}"#)
        let emptied = try f.ok("record", "show", id)
        #expect(emptied.contains("allergens=[] "), "\(emptied)")
        let note = try f.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true", "note=after lunch")
        #expect(try f.ok("record", "show", note).contains(#"note="after lunch" wet=true"#))
        #expect(try f.ok("record", "list").contains(#"note="after lunch" wet=true"#))
        // The trail's "(cleared)" is a cleared field's only, not a text beginning with "null".
        try f.ok("record", "update", note, "note=nullish", "dirty=true", "wet=")
        let trail = try f.ok("record", "show", note, "--history")
        #expect(trail.contains("dirty=true note=nullish wet= (cleared)"), "\(trail)")
    }

    /// Output that cannot be written (a full disk: /dev/full) is an error,
    /// exit 73, not a cut-short file taken for the whole; what the command
    /// did stays done.
    @Test func outputThatCannotBeWrittenIsAnError() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let baby = try f.ok("subject", "add", "baby", "--name", "Lily")
        let added = try Subprocess.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" > /dev/full", FamctlRunner.binary.path, "record", "add", "--focus", baby, "--store", "diaper", "wet=true"],
                                       env: ["FAMCTL_HOME": f.home])
        #expect(added.0 == 73 && added.1.contains("famctl: error: the output could not be written: No space left on device")
                && added.1.contains("What the command did is done"), "\(added.1)")
        #expect(try f.ok("record", "list").split(separator: "\n").count == 1)
        let listed = try Subprocess.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" > /dev/full", FamctlRunner.binary.path, "record", "list", "--json"], env: ["FAMCTL_HOME": f.home])
        #expect(listed.0 == 73, "\(listed.1)")
        let version = try Subprocess.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" > /dev/full", FamctlRunner.binary.path, "--version"], env: [:])
        #expect(version.0 == 73 && version.1.contains("Free some space"), "\(version.1)")
        let fine = try Subprocess.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" > /dev/null", FamctlRunner.binary.path, "record", "list"], env: ["FAMCTL_HOME": f.home])
        #expect(fine.0 == 0 && fine.1.isEmpty)
        // A reader that stopped reading (`| head -1`; here one that reads
        // nothing) is no failure: exit 0, not killed by SIGPIPE (141 to
        // `set -o pipefail`), nothing on stderr.
        for args in [["log"], ["record", "list"], ["--help"]] {
            let gone = try Subprocess.run("/bin/bash", ["-c", "set -o pipefail; \"$0\" \"$@\" | exec true", FamctlRunner.binary.path] + args, env: ["FAMCTL_HOME": f.home])
            #expect(gone.0 == 0 && gone.1.isEmpty, "\(args): exit \(gone.0): \(gone.1)")
        }
    }

    /// Something else in the place of a home's file or folder is named for
    /// what it is: a folder as identity.key (not "readable by others"), a
    /// file as the photo cache's folder (not a bare "File exists", exit 1).
    @Test func somethingInAHomeFilesPlaceIsNamed() throws {
        let f = try FamctlRunner.mum()
        let record = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        let key = f.home + "/identity.key"
        try FileManager.default.moveItem(atPath: key, toPath: key + ".bak")
        try FileManager.default.createDirectory(atPath: key, withIntermediateDirectories: false)
        let keyless = try f.run("status")
        #expect(keyless.code == 65 && keyless.stderr.contains("identity.key is not a file (a folder, a device or a pipe is in its place)"), "\(keyless.stderr)")
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.moveItem(atPath: key + ".bak", toPath: key)
        try? FileManager.default.removeItem(atPath: f.home + "/photos")
        #expect(FileManager.default.createFile(atPath: f.home + "/photos", contents: Data()))
        let photo = f.root + "/p.jpg"
        #expect(FileManager.default.createFile(atPath: photo, contents: Data([0xFF, 0xD8, 0xFF, 0xDA, 1, 2, 3])))
        let blocked = try f.run("photo", "add", record, photo)
        #expect(blocked.code == 73 && blocked.stderr.contains("cannot make the photo cache's folder: \(f.home)/photos exists and is a file"), "\(blocked.stderr)")
        try FileManager.default.removeItem(atPath: f.home + "/photos")
        try f.ok("photo", "add", record, photo)
    }

    /// What a famctl killed mid-write leaves is removed once its process
    /// is gone: a photo's temporary copy in the cache (by the next sync),
    /// a segment's in this device's own folder of the
    /// shared folder (by the next publish). A running process's is kept.
    @Test func leftoversOfKilledWritersAreRemoved() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let shared = f.root + "/shared"
        try f.ok("family", "create", "--name", "F", "--dir", shared)
        try f.ok("subject", "add", "newMom")
        try f.ok("sync")
        // The family's folder, and this device's in it: the only ones there.
        let family = try #require(try FileManager.default.contentsOfDirectory(atPath: shared).first)
        let me = try #require(try FileManager.default.contentsOfDirectory(atPath: "\(shared)/\(family)").first)
        let gone: Int32 = 2_147_480_000   // no such process
        try FileManager.default.createDirectory(atPath: f.home + "/photos", withIntermediateDirectories: true)
        let photoLeft = f.home + "/photos/abc.tmp-\(gone)", photoLive = f.home + "/photos/def.tmp-\(getpid())"
        let segmentLeft = "\(shared)/\(family)/\(me)/.famctl-\(gone)-x.seg.tmp", segmentLive = "\(shared)/\(family)/\(me)/.famctl-\(getpid())-y.seg.tmp"
        for path in [photoLeft, photoLive, segmentLeft, segmentLive] {
            #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 1000)))
            // Untouched for an hour: a write in flight elsewhere is not.
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: path)
        }
        try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2")
        try f.ok("sync")
        #expect(!FileManager.default.fileExists(atPath: photoLeft) && !FileManager.default.fileExists(atPath: segmentLeft))
        #expect(FileManager.default.fileExists(atPath: photoLive) && FileManager.default.fileExists(atPath: segmentLive))
        // In the blobs' folder, everyone's: a killed upload's copy of a blob
        // that is there whole goes, at the next upload; one of a blob not
        // there (another device's write, maybe) stays.
        let record = try f.ok("record", "add", "--focus", "newMom", "--store", "growth", "weightKg=60")
        try f.ok("photo", "add", record, try PhotoTests.jpegFile(f, 3_000, marker: "ONE").path)
        try f.ok("sync")
        let blobs = "\(shared)/\(family)/blobs"
        let there = try #require(try FileManager.default.contentsOfDirectory(atPath: blobs).first { $0.hasSuffix(".blob") })
        let blobLeft = "\(blobs)/.famctl-\(gone)-\(there).tmp", blobOther = "\(blobs)/.famctl-\(gone)-\(String(repeating: "ab", count: 32)).blob.tmp"
        for path in [blobLeft, blobOther] {
            #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 1000)))
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: path)
        }
        try f.ok("photo", "add", record, try PhotoTests.jpegFile(f, 3_000, marker: "TWO").path)
        try f.ok("sync")
        #expect(!FileManager.default.fileExists(atPath: blobLeft), "a killed upload's copy of a blob that is there stayed")
        #expect(FileManager.default.fileExists(atPath: blobOther))
    }

    /// An init killed while writing its key leaves it under a temporary
    /// name (`identity.key.tmp-PID`): the init run again removes it, and
    /// keeps one of a process still running.
    @Test func anInitRunAgainRemovesTheKeyAKilledOneLeft() throws {
        let f = FamctlRunner()
        try FileManager.default.createDirectory(atPath: f.home, withIntermediateDirectories: true)
        let gone: Int32 = 2_147_480_000   // no such process
        let left = f.home + "/identity.key.tmp-\(gone)", live = f.home + "/identity.key.tmp-\(getpid())"
        for path in [left, live] {
            #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 64), attributes: [.posixPermissions: 0o600]))
        }
        try f.ok("init", "--name", "Mum")
        #expect(!FileManager.default.fileExists(atPath: left), "the killed init's key stayed")
        #expect(FileManager.default.fileExists(atPath: live))
        #expect(try f.ok("replay").hasSuffix("result: OK"))
    }

    /// Two inits of one new home at once: one makes it, the other waits
    /// and says the home exists (73); the device that said it was made is
    /// the home's. (Both used to say "Created device", one key replacing
    /// the other's.)
    @Test func twoInitsOfOneHomeAtOnceMakeOneDevice() throws {
        for _ in 0..<4 {
            let f = FamctlRunner()
            let bin = FamctlRunner.binary.path
            let (_, out) = try ResourceFaultTests.shell("'\(bin)' init --name A & '\(bin)' init --name B; wait", env: ["FAMCTL_HOME": f.home])
            let made = out.split(separator: "\n").filter { $0.hasPrefix("Created device ") }
            #expect(made.count == 1 && out.contains("is already a famctl home"), "\(out)")
            let status = try f.ok("status")
            #expect(made.first.map { status.contains("device   " + $0.split(separator: " ")[2]) } == true, "\(made) vs \(status)")
        }
    }

    @Test func homeFilesArePrivate() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Dad")
        let fm = FileManager.default
        func mode(_ p: String) throws -> Int { (try fm.attributesOfItem(atPath: p)[.posixPermissions] as! NSNumber).intValue }
        #expect(try mode(f.home) == 0o700)
        #expect(try mode(f.home + "/identity.key") == 0o600)
        #expect(try mode(f.home + "/famctl.sqlite") == 0o600)
        // After a family's usual work too, every file the home holds (the
        // stores, the photos' cache, the locks, staging) and the log's
        // -wal and -shm files while a connection holds them open.
        try f.ok("family", "create", "--name", "F", "--dir", f.root + "/shared")
        try f.ok("subject", "add", "newMom")
        let id = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        try f.ok("photo", "add", id, try PhotoTests.jpegFile(f, 2_000, marker: "MODES").path)
        try f.ok("sync")
        try f.ok("export", "stores", f.home + "/export")
        let open = try Home.open(f.home)
        _ = try open.append([RecordEvent(kind: .put, record: UUID(), store: "postpartum", focus: "newMom", at: "2026-11-29T08:00:00Z", fields: ["kind": .string("mood"), "mood": .int(2)]).body])
        let files = try #require(fm.enumerator(atPath: f.home)).compactMap { $0 as? String }
        #expect(files.contains("famctl.sqlite-wal") && files.contains { $0.hasPrefix("photos/") }, "\(files)")
        for name in files {
            var isDir: ObjCBool = false
            _ = fm.fileExists(atPath: f.home + "/" + name, isDirectory: &isDir)
            let m = try mode(f.home + "/" + name)
            #expect(isDir.boolValue ? m == 0o700 : m == 0o600, "\(name): \(String(m, radix: 8))")
        }
        _ = open
    }

    @Test func usageErrorsExit64AndNameTheProblem() throws {
        let f = FamctlRunner()
        let unknownCommand = try f.run("frobnicate")
        #expect(unknownCommand.code == 64)
        #expect(unknownCommand.stderr.contains("unknown command 'frobnicate'") && !unknownCommand.stderr.contains("Did you mean"))
        // A typo one or two letters off: the command suggested.
        let typo = try f.run("recrd", "list")
        #expect(typo.code == 64 && typo.stderr.contains("unknown command 'recrd'") && typo.stderr.contains("Did you mean 'famctl record'?"), "\(typo.stderr)")
        let dashes = try f.run("--", "status")
        #expect(dashes.code == 64 && !dashes.stderr.contains("Did you mean") && dashes.stderr.contains("comes after '--'") && dashes.stderr.contains("Put the command's words before '--'"), "\(dashes.stderr)")
        let option = try f.run("subject", "list", "--remove")
        #expect(option.code == 64 && option.stderr.contains("unknown option '--remove'") && option.stderr.contains("Did you mean --removed?"), "\(option.stderr)")
        let json = try f.run("status", "--jsn")
        #expect(json.code == 64 && json.stderr.contains("Did you mean --json?"), "\(json.stderr)")
        let sub = try f.run("record", "lsit")
        #expect(sub.code == 64 && sub.stderr.contains("Did you mean 'famctl record list'?"), "\(sub.stderr)")
        // A field written as an option, where fields are taken: said so (not "did you mean --home").
        let field = try f.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "--note=slept well")
        #expect(field.code == 64 && field.stderr.contains("unknown option '--note'") && field.stderr.contains("A field is given without dashes: 'note=slept well'")
                && !field.stderr.contains("--home"), "\(field.stderr)")
        let flagField = try f.run("record", "update", "abcdef", "--wet")
        #expect(flagField.code == 64 && flagField.stderr.contains("A field is given without dashes: wet=VALUE"), "\(flagField.stderr)")
        // A name no store has a field of is an option's typo still.
        for typo in ["--focsu", "--foc=newMom"] {
            let focusTypo = try f.run("record", "add", typo, "newMom", "--store", "postpartum", "kind=mood")
            #expect(focusTypo.code == 64 && focusTypo.stderr.contains("Did you mean --focus?") && !focusTypo.stderr.contains("without dashes"), "\(focusTypo.stderr)")
        }
        let force = try f.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "--force")
        #expect(force.code == 64 && !force.stderr.contains("without dashes"), "\(force.stderr)")
        let unknownFlag = try f.run("status", "--verbose")
        #expect(unknownFlag.code == 64)
        #expect(unknownFlag.stderr.contains("unknown option '--verbose'"))
        let missing = try f.run("init")
        #expect(missing.code == 64)
        #expect(missing.stderr.contains("missing required option --name"))
        let noValue = try f.run("init", "--name")
        #expect(noValue.code == 64)
        let group = try f.run("record")
        #expect(group.code == 64)
        #expect(group.stderr.contains("add"))
        let extra = try f.run("status", "surplus")
        #expect(extra.code == 64 && extra.stderr.contains("unexpected argument 'surplus'"))
    }

    /// A value option given twice (`--home` too), a value forgotten before
    /// the next option, and options that exclude each other are usage
    /// errors that say which, and change nothing.
    @Test func optionsGivenTwiceForgottenOrTogetherAreRefused() throws {
        let f = FamctlRunner()
        let twice = try f.run("--home", f.root + "/a", "init", "--name", "Mum", "--home", f.root + "/b")
        #expect(twice.code == 64 && twice.stderr.contains("option --home given more than once"), "\(twice.code) \(twice.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.root + "/a") && !FileManager.default.fileExists(atPath: f.root + "/b"))
        let forgottenHome = try f.run("--home", "--json", "init", "--name", "Mum")
        #expect(forgottenHome.code == 64 && forgottenHome.stderr.contains("option --home needs a value DIR, but is followed by the option --json"),
                "\(forgottenHome.stderr)")
        try f.ok("init", "--name", "Mum")
        let forgotten = try f.run("photo", "get", "--out", "--json", "0d5c8e7e-3a4b-4c5d-8e9f-0a1b2c3d4e5f")
        #expect(forgotten.code == 64 && forgotten.stderr.contains("option --out needs a value FILE, but is followed by the option --json"),
                "\(forgotten.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "--json"))
        // A value that merely starts with a dash is a value.
        let dashed = try f.run("family", "create", "--name", "-The Lins-", "--dir", f.root + "/shared")
        #expect(dashed.code == 0, "\(dashed.stderr)")
        let g = FamctlRunner()
        try g.ok("init", "--name", "Dad")
        let both = try g.run("family", "create", "--name", "F", "--dir", g.root + "/s", "--peer", "https://dav.example.org/")
        #expect(both.code == 64 && both.stderr.contains("give either --dir or --peer, not both"), "\(both.stderr)")
        let neither = try g.run("family", "create", "--name", "F")
        #expect(neither.code == 64 && neither.stderr.contains("give --dir PATH or --peer URL"), "\(neither.stderr)")
        let empty = try g.run("family", "create", "--name", "F", "--dir", "")
        #expect(empty.code == 64 && empty.stderr.contains("option --dir needs a path, not an empty one"), "\(empty.stderr)")
        let code = try f.ok("invite")
        let views = try FamctlRunner().run("accept", code, "--name", "Dad", "--merge", "--keep-private")
        #expect(views.code == 64 && views.stderr.contains("give either --merge or --keep-private, not both"), "\(views.stderr)")
        // Listing, revoking and making a code are three things: one at a time.
        let id = String(try f.ok("invite", "--list").prefix(8))
        let listAndRevoke = try f.run("invite", "--list", "--revoke", id)
        #expect(listAndRevoke.code == 64 && listAndRevoke.stderr.contains("give either --list or --revoke, not both"), "\(listAndRevoke.stderr)")
        #expect(try f.ok("invite", "--list").hasPrefix(id), "a refused invite --list --revoke revoked the invitation")
        // An empty id or member (a script's unset variable) names nothing:
        // refused, nothing revoked (a review: the only open invitation was
        // revoked and the key rotated).
        let emptyRevoke = try f.run("invite", "--revoke", "")
        #expect(emptyRevoke.code == 64 && emptyRevoke.stderr.contains("--revoke needs an invitation's id"), "\(emptyRevoke.stderr)")
        #expect(try f.ok("invite", "--list").hasPrefix(id), "an empty --revoke revoked the invitation")
        let emptyMember = try f.run("member", "remove", "")
        #expect(emptyMember.code == 64 && emptyMember.stderr.contains("MEMBER is empty"), "\(emptyMember.stderr)")
        let revokeAndExpires = try f.run("invite", "--revoke", id, "--expires", "1d")
        #expect(revokeAndExpires.code == 64 && revokeAndExpires.stderr.contains("give either --revoke or --expires, not both"), "\(revokeAndExpires.stderr)")
        // A code that would expire before it could be typed in is refused, and no invitation is made.
        let invitations = try f.ok("invite", "--list").split(separator: "\n").count
        for tooShort in ["0.001m", "59s", "0.5m"] {
            let made = try f.run("invite", "--expires", tooShort)
            #expect(made.code == 65 && made.stdout.isEmpty, "invite --expires \(tooShort): \(made.code) \(made.stderr)")
        }
        #expect(try f.run("invite", "--expires", "0.5m").stderr.contains("--expires is at least 1m"))
        #expect(try f.ok("invite", "--list").split(separator: "\n").count == invitations)
        #expect(!FileManager.default.fileExists(atPath: g.root + "/s"), "a refused family create made its folder")
    }

    /// A hint that names famctl commands, on a command run with a --home
    /// other than the one they would use without it, says they need it too.
    @Test func hintsOfACommandGivenAHomeSayTheirCommandsNeedIt() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let other = f.root + "/other home"
        #expect(try f.run(["init", "--name", "Dad", "--home", other]).code == 0)
        let r = try f.run(["sync", "--home", other])
        #expect(r.code == 64 && r.stderr.contains("(The commands named for this home need --home \"\(other)\" too, as this one was given it.)"), "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "(The commands named for this home").count == 2, "said once: \(r.stderr)")
        // The home they would use anyway (FAMCTL_HOME): nothing to add.
        let same = try f.run(["sync", "--home", f.home])
        #expect(same.code == 64 && !same.stderr.contains("need --home"), "\(same.stderr)")
        // A hint that gives a --home itself: as it is.
        let none = try f.run(["status", "--home", f.root + "/nohome"])
        #expect(none.code == 66 && none.stderr.contains("--home") && !none.stderr.contains("need --home"), "\(none.stderr)")
        // A note that names commands, likewise (a review: they went to the default home).
        try f.ok(["subject", "add", "newMom", "--home", other])
        let id = try f.ok(["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--home", other])
        let deleted = try f.run(["record", "delete", id, "--home", other])
        #expect(deleted.code == 0 && deleted.stderr.contains("famctl: deleted the record; 'famctl record restore")
                && deleted.stderr.contains("(The commands named for this home need --home \"\(other)\" too, as this one was given it.)"), "\(deleted.stderr)")
        try f.ok(["record", "restore", id, "--home", other])
        // A text naming one command with a --home (another home's) and others without names those for this home too;
        // prose ("other famctl commands") names none.
        #expect(CLI.namesCommandWithoutHome("accept it in a new home: 'famctl accept CODE --home NEWDIR'; 'famctl status' counts them"))
        #expect(!CLI.namesCommandWithoutHome("accept it in a new home: 'famctl accept CODE --name NAME --home NEWDIR'."))
        #expect(CLI.namesCommandWithoutHome("If it is the same baby: famctl subject remove baby:1 --move-records-to baby:2"))
        #expect(!CLI.namesCommandWithoutHome("famctl: warning: the disk is full, and other famctl commands of this home wait for this one."))
        // Commands that use no home: help, the stores' fields, the bench.
        #expect(!CLI.namesCommandWithoutHome("Run 'famctl family create --help'."))
        #expect(!CLI.namesCommandWithoutHome("('famctl record fields --store feeding' lists the store's fields)"))
        let deletedHere = try f.run(["record", "delete", id, "--home", other], env: ["FAMCTL_HOME": other])
        #expect(deletedHere.code == 0 && deletedHere.stderr.contains("'famctl record restore") && !deletedHere.stderr.contains("need --home"), "\(deletedHere.stderr)")
    }

    /// A home reached through a symbolic link (a linked parent folder, a
    /// linked $HOME) opens and is made as any other (a review: SQLite,
    /// refusing every link in the path, left it unusable, even to `init`).
    /// The database file itself a link is still refused.
    @Test func aHomeThroughALinkedFolderWorks() throws {
        let f = FamctlRunner()
        let real = f.root + "/real", link = f.root + "/link"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let home = link + "/home"
        #expect(try f.run(["init", "--name", "Mum", "--home", home]).code == 0)
        try f.ok(["subject", "add", "newMom", "--home", home])
        let id = try f.ok(["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--home", home])
        #expect(try f.ok(["record", "list", "--home", real + "/home"]).contains(id))
        #expect(try f.ok(["replay", "--home", home]).hasSuffix("result: OK"))
        // The log itself a link to another file: refused, not followed.
        let other = f.root + "/other"
        try f.ok(["init", "--name", "Other", "--home", other])
        try FileManager.default.removeItem(atPath: other + "/famctl.sqlite")
        try FileManager.default.createSymbolicLink(atPath: other + "/famctl.sqlite", withDestinationPath: real + "/home/famctl.sqlite")
        #expect(try f.run(["status", "--home", other]).code != 0)
        // A link whose target is not there (a drive not mounted): said so, not "no home" then "File exists".
        let dangling = f.root + "/dangling"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: f.root + "/unmounted/home")
        for args in [["status", "--home", dangling], ["init", "--name", "Mum", "--home", dangling], ["init", "--name", "Mum", "--home", dangling + "/h"]] {
            let r = try f.run(args)
            #expect(r.code == 66 && r.stderr.contains("\(dangling) is a symbolic link to \(f.root)/unmounted/home, which is not there"), "\(args): \(r.stderr)")
        }
        try FileManager.default.createSymbolicLink(atPath: f.root + "/loop1", withDestinationPath: f.root + "/loop2")
        try FileManager.default.createSymbolicLink(atPath: f.root + "/loop2", withDestinationPath: f.root + "/loop1")
        let loop = try f.run(["init", "--name", "Mum", "--home", f.root + "/loop1"])
        #expect(loop.code == 66 && loop.stderr.contains("is a symbolic link in a loop of links"), "\(loop.stderr)")
    }

    /// A home path with a '~' no shell expanded is refused with the path
    /// in full (a review: it made a folder named '~', a second home); the
    /// default home is tidied as --home is.
    @Test func aLiteralTildeIsRefusedAndTheDefaultHomeIsTidied() throws {
        let f = FamctlRunner()
        let tilde = try f.run(["init", "--name", "Mum", "--home", "~/famhome"], env: ["HOME": f.root])
        #expect(tilde.code == 64 && tilde.stderr.contains("--home '~/famhome' begins with a '~' that no shell expanded")
                && tilde.stderr.contains("--home \(f.root)/famhome"), "\(tilde.stderr)")
        let fromEnvironment = try f.run(["status"], env: ["FAMCTL_HOME": "~/fh", "HOME": f.root])
        #expect(fromEnvironment.code == 64 && fromEnvironment.stderr.contains("FAMCTL_HOME '~/fh' begins with a '~'") && fromEnvironment.stderr.contains("FAMCTL_HOME=\(f.root)/fh"), "\(fromEnvironment.stderr)")
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/~"))
        let made = try f.run(["init", "--name", "Mum"], env: ["FAMCTL_HOME": "", "XDG_DATA_HOME": "", "HOME": f.root + "/"])
        #expect(made.code == 0 && made.stdout.contains(" in \(f.root)/.local/share/famctl") && !made.stdout.contains("//"), "\(made.stdout)")
    }

    @Test func wordsAfterDoubleDashAreNeverCommandWords() throws {
        let f = FamctlRunner()
        let bare = try f.run("--", "--home", "a")
        #expect(bare.code == 64 && bare.stdout.isEmpty)
        #expect(bare.stderr.contains("unknown command '--home'"))
        let inGroup = try f.run("record", "--", "list")
        #expect(inGroup.code == 64 && inGroup.stderr.contains("'list' comes after '--', where every word is an argument, not a command word"), "\(inGroup.stderr)")
        #expect(try f.run("record", "--", "lst").stderr.contains("unknown command 'record lst'"))
        #expect(try f.run("--").code == 0)   // nothing after it: the overview, as `famctl` alone
        try f.ok("init", "--name", "Mum")
        #expect(try f.ok("subject", "add", "--", "newMom") == "newMom")
        // After it, a word that begins with a dash is an argument, not an
        // option: a name given so (`--name=-Bob`) can be named again.
        let bob = try f.ok("subject", "add", "baby", "--name=-Bob")
        #expect(try f.ok("subject", "update", "--sex", "male", "--", "-Bob") == bob)
        let shown = try f.run("record", "show", "--", "--json")
        #expect(shown.code == 65 && shown.stderr.contains("'--json' is not a record id"), "\(shown.stderr)")
        #expect(try f.ok("subject", "remove", "--json", "--", "-Bob").contains(bob))
        // A second `--` is an argument like any word after the first.
        let dashes2 = try f.ok("subject", "add", "baby", "--name", "--")
        #expect(try f.ok("subject", "remove", "--", "--") == dashes2)
        // `help COMMAND --` is the help, not the command run (its --help is put before the `--`).
        let dir = FamctlRunner.binary.deletingLastPathComponent().path
        let help = try f.run(["help", "export", "stores", "--"], throughPath: "PATH=\(dir):$PATH; cd \(f.root)")
        #expect(help.code == 0 && help.stdout.contains("OVERVIEW: Write the ten store files"), "\(help.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.root + "/--help"), "help ran the export")
    }

    @Test func badDataExits65AndWritesNothing() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        for args in [
            ["record", "add", "--focus", "baby:not-a-uuid", "--store", "feeding"],
            ["record", "add", "--focus", Self.baby, "--store", "nappies"],
            ["record", "add", "--focus", Self.baby, "--store", "feeding", "--at", "yesterday"],
            ["record", "add", "--focus", Self.baby, "--store", "feeding", "--at", "2026-11-29T08:00:00"],
            ["record", "add", "--focus", Self.baby, "--store", "feeding", "novalue"],
            ["record", "add", "--focus", Self.baby, "--store", "feeding", "a=1", "a=2"],
        ] {
            let r = try f.run(args)
            #expect(r.code == 65, "\(args): \(r.code) \(r.stderr)")
            #expect(r.stderr.hasPrefix("famctl: error: "))
        }
        #expect(try f.ok("status").contains("0 in the log"))
        // The change given where the id goes: the order is said.
        let swapped = try f.run("record", "update", "amountMl=130", "01a237ca-e092-7719-b697-ba35d6ba1c3a")
        #expect(swapped.code == 64 && swapped.stderr.contains("'amountMl=130' is not a record id")
                && swapped.stderr.contains("give the record's id first, then the changes"), "\(swapped.stderr)")
        // Other commands that take an id say nothing of changes.
        let shown = try f.run("record", "show", "note=x")
        #expect(shown.code == 65 && !shown.stderr.contains("changes"), "\(shown.stderr)")
        let bench = try f.run("bench", "--scale", "1001")
        #expect(bench.code == 65 && bench.stderr.contains("is not a positive number up to 1000"), "\(bench.stderr)")
    }

    @Test func missingHomeSaysWhichPath() throws {
        let f = FamctlRunner()
        let r = try f.run("status")
        #expect(r.code == 66)
        #expect(r.stderr.contains(f.home))
        #expect(r.stderr.contains("famctl init"))
        let twice = FamctlRunner()
        try twice.ok("init", "--name", "A")
        let again = try twice.run("init", "--name", "B")
        #expect(again.code == 73)
        #expect(again.stderr.contains("already a famctl home"))
    }

    @Test func unreadableOrDamagedIdentityIsExplained() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: f.home + "/identity.key"))
        bytes[40] ^= 0xff
        try bytes.write(to: URL(fileURLWithPath: f.home + "/identity.key"))
        let r = try f.run("status")
        #expect(r.code == 65)
        #expect(r.stderr.contains("identity.key is damaged"))
    }

    @Test func homeFromFlagBeatsEnvironment() throws {
        let f = FamctlRunner()
        let other = f.root + "/other"
        try f.ok("--home", other, "init", "--name", "Elsewhere")
        #expect(FileManager.default.fileExists(atPath: other + "/identity.key"))
        #expect(!FileManager.default.fileExists(atPath: f.home))
        #expect(try f.run("status", "--home=" + other).code == 0)
    }

    @Test func emptyHomeIsAMissingValue() throws {
        let f = FamctlRunner()
        let fallback = f.root + "/fallback"
        let env = ["HOME": fallback, "XDG_DATA_HOME": "", "FAMCTL_HOME": ""]
        for args in [["--home", "", "init", "--name", "Oops"], ["init", "--home=", "--name", "Oops"]] {
            let r = try f.run(args, env: env)
            #expect(r.code == 64, "\(args): \(r.code) \(r.stderr)")
            #expect(r.stderr.contains("option --home needs a value"))
        }
        #expect(!FileManager.default.fileExists(atPath: fallback))
        // An empty FAMCTL_HOME is taken as unset: the default home is used.
        let defaulted = try f.run(["init", "--name", "Default"], env: env)
        #expect(defaulted.code == 0, "\(defaulted.stderr)")
        #expect(FileManager.default.fileExists(atPath: fallback + "/.local/share/famctl/identity.key"))
    }

    /// An empty path argument (an unset variable in a script) is refused,
    /// not taken for the current directory: nothing is written there.
    @Test func emptyPathArgumentsAreRefused() throws {
        let f = try FamctlRunner.mum()
        let record = try f.ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        let cwd = f.root + "/cwd"
        try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: true)
        for (args, named) in [(["export", "stores", ""], "DIR needs a path"), (["import", "stores", ""], "DIR needs a path"),
                              (["photo", "add", record, ""], "FILE needs a path"),
                              (["photo", "get", "0f0e0d0c-0b0a-4909-8807-060504030201", "--out", ""], "option --out needs a path")] {
            let r = try Subprocess.run("/bin/sh", ["-c", "cd '\(cwd)' && exec \"$0\" \"$@\"", FamctlRunner.binary.path] + args, env: ["FAMCTL_HOME": f.home])
            #expect(r.0 == 64, "\(args): \(r.0) \(r.1)")
            #expect(r.1.contains(named), "\(args): \(r.1)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: cwd).isEmpty, "something was written into the current directory")
    }

    /// A `--peer` URL with a query or a fragment is refused: famctl's
    /// requests are paths under it, and would drop them silently.
    @Test func aPeerURLWithAQueryIsRefused() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        for url in ["https://dav.example.org/fam/?q=1", "https://dav.example.org/fam/#top"] {
            let r = try f.run("family", "create", "--name", "F", "--peer", url)
            #expect(r.code == 65 && r.stderr.contains("has a query (?…) or fragment (#…)"), "\(url): \(r.stderr)")
        }
        let empty = try f.run("family", "create", "--name", "F", "--peer", "")
        #expect(empty.code == 64 && empty.stderr.contains("option --peer needs a URL"), "\(empty.stderr)")
        #expect(try f.ok("status").contains("private to this device"))
    }

    /// `accept --dir` naming a file is refused before the home is made or
    /// switched: nothing half done, and the same accept with a folder works.
    @Test func acceptWithADirThatIsAFileWritesNothing() throws {
        let mum = FamctlRunner(), dad = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", mum.root + "/shared")
        let code = try mum.ok("invite")
        let file = dad.root + "/a-file"
        try FileManager.default.createDirectory(atPath: dad.root, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let r = try dad.run("accept", code, "--name", "Dad", "--dir", file)
        #expect(r.code == 73, "exit \(r.code): \(r.stderr)")
        #expect(r.stderr.contains("exists and is a file") && r.stderr.contains("nothing was written"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dad.home), "a home was made for a join that cannot go on")
        try dad.ok("accept", code, "--name", "Dad", "--dir", mum.root + "/shared")
        try dad.ok("sync")
        try mum.ok("sync")
        #expect(try mum.ok("members").contains("Dad"))
    }

    /// A home or export directory that cannot be created is explained in
    /// words, not with a bare Foundation error code.
    @Test func aPathThatCannotBeCreatedIsExplained() throws {
        let f = FamctlRunner()
        try FileManager.default.createDirectory(atPath: f.root, withIntermediateDirectories: true)
        try "x".write(toFile: f.root + "/afile", atomically: true, encoding: .utf8)
        let r = try f.run("--home", f.root + "/afile/sub", "init", "--name", "X")
        #expect(r.code == 73)
        #expect(r.stderr.contains("afile is a file, not a directory"), "\(r.stderr)")
        #expect(!r.stderr.contains("NSCocoaErrorDomain"))
        try f.ok("init", "--name", "X")
        let e = try f.run("export", "stores", f.root + "/afile/out")
        #expect(e.code == 73 && e.stderr.contains("afile is a file, not a directory"), "\(e.stderr)")
    }


    /// A home on a read-only file system is refused (exit 73) with the
    /// cause and what to do, not a hint about permissions. It needs a
    /// read-only bind mount, so it runs where the tests may mount (as root).
    @Test(.enabled(if: Self.mayMount(), "needs a read-only bind mount (root, and mounts allowed)"))
    func aHomeOnAReadOnlyFileSystemIsExplained() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "X")
        let ro = f.root + "/ro"
        try FileManager.default.createDirectory(atPath: ro, withIntermediateDirectories: true)
        let (mounted, out) = try ResourceFaultTests.shell("mount --bind '\(f.root)' '\(ro)' && mount -o remount,ro,bind '\(ro)'", env: [:])
        try #require(mounted == 0, "mount: \(out)")
        defer { _ = try? ResourceFaultTests.shell("umount '\(ro)'", env: [:]) }
        let r = try f.run("--home", ro + "/home", "status")
        #expect(r.code == 73)
        #expect(r.stderr.contains("read-only file system") && r.stderr.contains("copy the home"), "\(r.stderr)")
    }


    /// Whether this process may make (and undo) a read-only bind mount.
    static func mayMount() -> Bool {
        guard getuid() == 0 else { return false }
        let dir = NSTemporaryDirectory() + "famctl-mount-probe-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: dir + "/ro", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        guard let (code, _) = try? ResourceFaultTests.shell("mount --bind '\(dir)' '\(dir)/ro' && mount -o remount,ro,bind '\(dir)/ro'", env: [:]) else { return false }
        _ = try? ResourceFaultTests.shell("umount '\(dir)/ro' 2>/dev/null", env: [:])
        return code == 0
    }

    /// Small print a review found: `--version` before a command dropped the
    /// command in silence; an empty `photo list` printed nothing at all;
    /// `replay` named the authors by id alone, where `status` names them.
    @Test func versionAloneEmptyPhotoListAndReplaysAuthorsAreSaid() throws {
        let f = FamctlRunner()
        let version = try f.run("--version", "status")
        #expect(version.code == 64 && version.stderr.contains("--version takes no command or argument (given: status)") && version.stdout.isEmpty, "\(version.stderr)")
        // The version, and the formats this build writes and reads (an upgrade review: two builds both said "famctl 0.1.0").
        #expect(try f.ok("--version") == "famctl 0.1.0 (format level \(VersionNote.currentLevel): envelope v2, log schema \(EventLog.schemaVersion), record changes to schema 3, stores schema \(Projector.schemaVersion))")
        let valued = try f.run("--version=1")
        #expect(valued.code == 64 && valued.stderr.contains("option --version takes no value"), "\(valued.stderr)")
        try f.ok("init", "--name", "Mum's phone")
        let baby = try f.ok("subject", "add", "baby")
        let id = try f.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true")
        let photos = try f.run("photo", "list")
        #expect(photos.code == 0 && photos.stdout.isEmpty && photos.stderr.contains("famctl: no photos"), "\(photos.stderr)")
        let ofRecord = try f.run("photo", "list", "--record", id)
        #expect(ofRecord.code == 0 && ofRecord.stderr.contains("famctl: no photos of record \(id)"), "\(ofRecord.stderr)")
        // No such record, by its whole id as by a part of one: 66 both.
        for unknown in ["00000000-0000-4000-8000-000000000000", "ffffffffffff"] {
            let r = try f.run("photo", "list", "--record", unknown)
            #expect(r.code == 66, "\(unknown): exit \(r.code): \(r.stderr)")
        }
        #expect(try f.ok("photo", "list", "--json") == "[]")
        let replay = try f.ok("replay")
        #expect(replay.contains(" \"Mum's phone\" (this device): 2 events"), "\(replay)")
    }
}
