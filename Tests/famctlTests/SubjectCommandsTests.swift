import Envelope
import Foundation
@testable import famctl
import Projections
import Testing

/// `subject update`, `subject remove` and `record update --focus`: a care
/// subject added with a typo, twice, or for the wrong baby can be put
/// right (a user trial: none of them could).
struct SubjectCommandsTests {
    static func subjects(_ r: FamctlRunner, removed: Bool = false) throws -> [String: [String: Any]] {
        let args = removed ? ["subject", "list", "--json", "--removed"] : ["subject", "list", "--json"]
        let list = try JSONSerialization.jsonObject(with: Data(try r.ok(args).utf8)) as! [[String: Any]]
        return Dictionary(uniqueKeysWithValues: list.map { ($0["focus"] as! String, $0) })
    }

    @Test func aSubjectIsUpdatedByKeyOrNameAndAFieldCleared() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily", "--birth", "2026-05-01")
        #expect(try f.ok("subject", "update", "lily", "--sex", "female", "--birth", "2026-05-02") == lily)
        #expect(try f.ok("subject", "update", lily, "--name", "Lilly") == lily)
        var s = try #require(try Self.subjects(f)[lily])
        #expect(s["name"] as? String == "Lilly" && s["birth"] as? String == "2026-05-02" && s["sex"] as? String == "female", "\(s)")
        try f.ok("subject", "update", "Lilly", "--sex", "")
        s = try #require(try Self.subjects(f)[lily])
        #expect(s["sex"] == nil && s["name"] as? String == "Lilly", "\(s)")

        let same = try f.run("subject", "update", lily, "--name", "Lilly")
        #expect(same.code == 64 && same.stderr.contains("nothing to change"), "\(same.stderr)")
        let none = try f.run("subject", "update", lily)
        #expect(none.code == 64 && none.stderr.contains("--name, --birth, --sex"), "\(none.stderr)")
        let wrong = try f.run("subject", "update", lily, "--due", "2027-01-01")
        #expect(wrong.code == 65 && wrong.stderr.contains("subject.due: is not a field of baby"), "\(wrong.stderr)")
        let wrongCleared = try f.run("subject", "update", lily, "--due", "")
        #expect(wrongCleared.code == 65 && wrongCleared.stderr.contains("subject.due: is not a field of baby"), "\(wrongCleared.stderr)")
        let missing = try f.run("subject", "update", "Tom", "--sex", "male")
        #expect(missing.code == 66 && missing.stderr.contains("no care subject 'Tom'"), "\(missing.stderr)")
        try f.ok("subject", "add", "pregnancy", "--due", "2027-03-01")
        try f.ok("subject", "update", "pregnancy", "--due", "2027-03-08")
        #expect(try Self.subjects(f)["pregnancy"]?["due"] as? String == "2027-03-08")
        // Every change is an event in the log, by this device.
        #expect(try f.ok("log").components(separatedBy: "subject.put").count - 1 == 6)
    }

    /// A record line names a baby by its name where `--focus NAME` names
    /// it alone, and by its key otherwise (two of one name, none, removed).
    @Test func recordLinesNameABabyWhereTheNameIsItsAlone() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let ada = try f.ok("subject", "add", "baby", "--name", "Ada", "--birth", "2026-05-01")
        let bee = try f.ok("subject", "add", "baby", "--name", "Bee", "--birth", "2026-05-01")
        let plain = try f.ok("subject", "add", "baby", "--birth", "2026-05-01")
        try f.ok("subject", "add", "pregnancy", "--due", "2027-05-01", "--name", "Second")
        let adaDiaper = try f.ok("record", "add", "--focus", ada, "--store", "diaper", "wet=true", "--at", "2026-11-29T07:00:00Z")
        let beeDiaper = try f.ok("record", "add", "--focus", bee, "--store", "diaper", "wet=true", "--at", "2026-11-29T08:00:00Z")
        let plainDiaper = try f.ok("record", "add", "--focus", plain, "--store", "diaper", "wet=true", "--at", "2026-11-29T09:00:00Z")
        let visit = try f.ok("record", "add", "--focus", "pregnancy", "--store", "pregnancy", "kind=checkup", "--at", "2026-11-29T10:00:00Z")
        func line(_ id: String, _ args: [String] = []) throws -> String {
            try f.ok(["record", "list"] + args).split(separator: "\n").first { $0.hasPrefix(id) }.map(String.init) ?? "none for \(id)"
        }
        #expect(try line(adaDiaper).contains("  diaper  Ada  wet=true"))
        #expect(try line(beeDiaper).contains("  diaper  Bee  wet=true"))
        #expect(try line(plainDiaper).contains("  diaper  \(plain)  wet=true"))
        #expect(try line(visit).contains("  pregnancy  pregnancy  kind=checkup"))
        #expect(try f.ok("record", "show", beeDiaper).hasPrefix("\(beeDiaper)  2026-11-29T08:00:00Z  diaper  Bee  "))
        // A name that could pass for columns is quoted; one with an '=' (it could read as a field) shown by its key.
        let rose = try f.ok("subject", "add", "baby", "--name", "Rose  (deleted)")
        let odd = try f.ok("subject", "add", "baby", "--name", "a=b x=1")
        let roseDiaper = try f.ok("record", "add", "--focus", rose, "--store", "diaper", "wet=true", "--at", "2026-11-29T11:00:00Z")
        let oddDiaper = try f.ok("record", "add", "--focus", odd, "--store", "diaper", "wet=true", "--at", "2026-11-29T12:00:00Z")
        #expect(try line(roseDiaper).contains(#"  diaper  "Rose  (deleted)"  wet=true"#))
        #expect(try line(oddDiaper).contains("  diaper  \(odd)  wet=true"))
        // JSON keeps the key.
        let listed = try JSONSerialization.jsonObject(with: Data(try f.ok("record", "list", "--json").utf8)) as! [[String: Any]]
        #expect(listed.first { $0["id"] as? String == adaDiaper }?["focus"] as? String == ada)
        // A second "ada": neither name names one baby, so both show keys; Bee stays Bee.
        let ada2 = try f.ok("subject", "add", "baby", "--name", "ada", "--birth", "2026-05-02")
        #expect(try line(adaDiaper).contains("  diaper  \(ada)  wet=true"))
        #expect(try line(beeDiaper).contains("  diaper  Bee  wet=true"))
        // Merged into one, the name is Ada's alone again; a removed subject is shown by key.
        try f.ok("subject", "remove", ada2)
        #expect(try line(adaDiaper).contains("  diaper  Ada  wet=true"))
        try f.ok("subject", "remove", bee, "--with-records")
        #expect(try line(beeDiaper, ["--include-deleted"]).contains("  diaper  \(bee)  (deleted)"))
    }

    /// A name `--focus` would read as a key (`pregnancy`, `newMom`,
    /// `baby:<UUID>`, as written) is refused: the baby could not be named
    /// by it (a review: a baby named pregnancy took its records elsewhere).
    /// The pregnancy named "pregnancy" is named so by its key anyway.
    @Test func aNameThatReadsAsAKeyIsRefused() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily")
        for name in ["pregnancy", "newMom", "baby:\(UUID().uuidString.lowercased())"] {
            for args in [["subject", "add", "baby", "--name", name], ["subject", "update", lily, "--name", name]] {
                let r = try f.run(args)
                #expect(r.code == 65 && r.stderr.contains("subject.name: '\(name)' is a care subject's key: --focus \(name) names ") && r.stderr.contains("Give the subject another name."), "\(args): \(r.stderr)")
            }
        }
        // Written otherwise, `--focus` takes them as names: kept.
        let other = try f.ok("subject", "add", "baby", "--name", "NewMom")
        #expect(try f.ok("subject", "update", "NewMom", "--name", "Baby:x") == other)
        try f.ok("subject", "add", "pregnancy", "--name", "pregnancy", "--due", "2027-05-01")
        let dir = f.root + "/in"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try #"[{"focus":"\#(lily)","name":"newMom"}]"#.write(toFile: dir + "/subjects.json", atomically: true, encoding: .utf8)
        let imported = try f.run("import", "stores", dir)
        #expect(imported.code == 65 && imported.stderr.contains("subjects.json[0]: subject.name: 'newMom' is a care subject's key"), "\(imported.stderr)")
        #expect(try Self.subjects(f)[lily]?["name"] as? String == "Lily")
    }

    /// A birth after today is refused on add and update (most often the
    /// year mistyped, or a baby still expected: the pregnancy).
    @Test func aBirthAfterTodayIsRefused() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let next = Calendar(identifier: .gregorian).date(byAdding: .day, value: 2, to: Date())!
        let later = String(TimeText.formatLocal(next).prefix(10))
        let add = try f.run("subject", "add", "baby", "--name", "Tom", "--birth", later)
        #expect(add.code == 65 && add.stderr.contains("subject.birth: \(later) is after today") && add.stderr.contains("subject add pregnancy --due \(later)"), "\(add.stderr)")
        #expect(try f.ok("subject", "list").isEmpty)
        let today = SubjectInput.todayLocal()
        let tom = try f.ok("subject", "add", "baby", "--name", "Tom", "--birth", today)
        let update = try f.run("subject", "update", tom, "--birth", later)
        #expect(update.code == 65 && update.stderr.contains("is after today"), "\(update.stderr)")
        #expect(try Self.subjects(f)[tom]?["birth"] as? String == today)
        // Tomorrow here is today somewhere: a baby born there today is taken
        // (a clock review: New York refused a birth Shanghai took).
        let samoa = ["TZ": "Pacific/Pago_Pago"]
        let here = try f.run(["subject", "list"], env: samoa)
        #expect(here.code == 0)
        let tomorrowThere = SubjectInput.latestToday()
        let twin = try f.run(["subject", "add", "baby", "--name", "Twin", "--birth", tomorrowThere], env: samoa)
        #expect(twin.code == 0, "\(twin.stderr)")
        let past = try f.run(["subject", "add", "baby", "--name", "Late", "--birth", later], env: samoa)
        #expect(past.code == 65, "\(past.stderr)")
    }

    /// The new mom (or the pregnancy) added again is updated: a value it
    /// changes is said (a second phone renamed "Mei" without a word).
    @Test func addingTheNewMomAgainSaysWhatItChanges() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "newMom", "--name", "Mei")
        let renamed = try f.run("subject", "add", "newMom", "--name", "Mom")
        #expect(renamed.code == 0 && renamed.stderr.contains("famctl: warning: newMom was already a care subject; adding it again changed its name from Mei to Mom"), "\(renamed.stderr)")
        let same = try f.run("subject", "add", "newMom", "--name", "Mom")
        #expect(same.code == 0 && !same.stderr.contains("warning"), "\(same.stderr)")
        try f.ok("subject", "add", "pregnancy", "--due", "2027-03-01")
        let added = try f.run("subject", "add", "pregnancy", "--name", "Bump")
        #expect(added.code == 0 && !added.stderr.contains("warning"), "a field it did not have: \(added.stderr)")
    }

    /// A second baby of the same name is said, naming both keys and how to
    /// take the new one back; two of one name are then named by key.
    @Test func aSecondBabyOfTheSameNameIsSaid() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let first = try f.ok("subject", "add", "baby", "--name", "Lily")
        let again = try f.run("subject", "add", "baby", "--name", "lily")
        let second = again.stdout.trimmingCharacters(in: .newlines)
        #expect(again.code == 0 && again.stderr.contains("a baby named Lily was already a care subject (\(first)); this added another, \(second)")
                && again.stderr.contains("famctl subject remove \(second)"), "\(again.stderr)")
        #expect(!(try f.run("subject", "add", "baby", "--name", "Tom").stderr.contains("warning")))
        // "Lily" names the one of that exact spelling; "LILY" either.
        #expect(try f.ok("subject", "update", "Lily", "--sex", "female") == first)
        let ambiguous = try f.run("subject", "update", "LILY", "--sex", "female")
        #expect(ambiguous.code == 64 && ambiguous.stderr.contains("2 care subjects are named 'LILY'") && ambiguous.stderr.contains(second), "\(ambiguous.stderr)")
        // A record for either: which is which, and how to make them one.
        let which = try f.run("record", "add", "--focus", "LILY", "--store", "diaper", "wet=true")
        #expect(which.code == 64 && which.stderr.contains("Give --focus one of the keys: \(first) (0 record(s)), \(second) (0 record(s)).")
                && which.stderr.contains("'famctl subject remove \(second) --move-records-to \(first)' merges them"), "\(which.stderr)")
        // Status names the pair, with the command that merges them: into
        // the one with the most records, else the one added first (not
        // whichever key sorts first).
        let status = try f.ok("status")
        #expect(status.contains("2 babies are named") && status.contains("famctl subject remove \(second) --move-records-to \(first)"), "\(status)")
        try f.ok("record", "add", "--focus", second, "--store", "diaper", "wet=true")
        let busier = try f.ok("status")
        #expect(busier.contains("\(second) (1 record(s)), \(first) (0 record(s))")
                && busier.contains("famctl subject remove \(first) --move-records-to \(second)' merges them into the first"), "\(busier)")
        try f.ok("subject", "remove", second, "--with-records")
        // Brought back beside the live baby of its name: said (a review).
        let restored = try f.run("subject", "restore", second)
        #expect(restored.code == 0 && restored.stderr.contains("warning: 2 babies are named"), "\(restored.stderr)")
        try f.ok("subject", "remove", second)
        #expect(try Set(Self.subjects(f).keys).count == 2)
        #expect(!(try f.ok("status")).contains("babies are named"))
        // (Two spellings: each names its own, which the status says, not "neither".)
        #expect(status.contains("each spelling ('Lily', 'lily') names its own with --focus") || status.contains("each spelling ('lily', 'Lily') names its own with --focus"), "\(status)")
        // The listings take the name as the live baby's, not the removed one's too.
        let record = try f.ok("record", "add", "--focus", "LILY", "--store", "diaper", "wet=true")
        #expect(try f.ok("record", "list", "--focus", "LILY").contains(record))
        #expect(try f.ok("log", "--focus", "LILY").contains("record.put"))
        // Spelt as the removed one is ("lily"): still the live one.
        #expect(try f.ok("record", "list", "--focus", "lily").contains(record))
        // A short word suggests nothing it is merely a letter or two from.
        let short = try f.run("record", "add", "--focus", "Li", "--store", "diaper", "wet=true")
        #expect(short.code == 65 && !short.stderr.contains("did you mean"), "\(short.stderr)")
        // A store name a letter off is suggested.
        let typo = try f.run("record", "add", "--focus", "Lily", "--store", "feedng", "kind=bottle")
        #expect(typo.code == 65 && typo.stderr.contains("--store 'feedng' is not a store; did you mean 'feeding'?"), "\(typo.stderr)")
        let name = try f.run("record", "add", "--focus", "Lilly", "--store", "diaper", "wet=true")
        #expect(name.code == 65 && name.stderr.contains("--focus 'Lilly' is not a care subject; did you mean 'Lily'?"), "\(name.stderr)")
        // The same in the commands that name a subject to change it.
        for args in [["subject", "update", "Lilly", "--name", "L"], ["subject", "remove", "Lilly"], ["record", "update", record, "--focus", "Lilly"]] {
            let r = try f.run(args)
            #expect(r.code == 66 && r.stderr.contains("no care subject 'Lilly'; did you mean 'Lily'?"), "\(args): \(r.stderr)")
        }
        let gone = try f.run("subject", "restore", "lilly")
        #expect(gone.code == 66 && gone.stderr.contains("no removed care subject 'lilly'; did you mean 'lily'?"), "\(gone.stderr)")
    }

    @Test func theListNamesEachSubject() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily", "--birth", "2026-06-01", "--sex", "female")
        let unnamed = try f.ok("subject", "add", "baby")
        try f.ok("subject", "add", "pregnancy", "--due", "2027-03-01")
        try f.ok("subject", "add", "newMom")
        let lines = try f.ok("subject", "list", "--long").split(separator: "\n").map(String.init).sorted()
        #expect(lines == [lily + "  Lily, born 2026-06-01, female", unnamed, "newMom", "pregnancy  due 2027-03-01"].sorted(), "\(lines)")
        // Each line's first word is the key --focus takes.
        for line in lines { #expect(try f.ok("record", "list", "--focus", String(line.split(separator: " ")[0])).isEmpty) }
    }

    @Test func aSubjectWithRecordsIsRemovedOnlyWithThem() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily")
        let tom = try f.ok("subject", "add", "baby", "--name", "Tom")
        let r1 = try f.ok("record", "add", "--focus", lily, "--store", "diaper", "wet=true")
        let r2 = try f.ok("record", "add", "--focus", lily, "--store", "growth", "weightKg=4.2")
        let kept = try f.ok("record", "add", "--focus", tom, "--store", "diaper", "dirty=true")
        let refused = try f.run("subject", "remove", "Lily")
        #expect(refused.code == 65 && refused.stderr.contains("\(lily) has 2 record(s); it is not removed") && refused.stderr.contains("--with-records"), "\(refused.stderr)")
        #expect(try Self.subjects(f)[lily] != nil)
        let removed = try f.run("subject", "remove", lily, "--with-records")
        #expect(removed.code == 0 && removed.stdout == lily + "\n" && removed.stderr.contains("deleted 2 record(s)"), "\(removed.stderr)")
        #expect(try Self.subjects(f)[lily] == nil)
        #expect(try Self.subjects(f, removed: true)[lily]?["removed"] as? Bool == true)
        #expect(try f.ok("subject", "list", "--removed", "--long").contains("\(lily)  Lily  (removed)"))
        #expect(try f.ok("subject", "list", "--removed", "--keys").split(separator: "\n").sorted() == [Substring(lily) + "  (removed)", Substring(tom)].sorted())
        for r in [r1, r2] { #expect(try f.ok("record", "show", r, "--json").contains("\"deleted\" : true")) }
        #expect(try f.ok("record", "list") .contains(kept))
        // Nothing more can be written for it; naming it says why.
        let add = try f.run("record", "add", "--focus", lily, "--store", "diaper", "wet=true")
        #expect(add.code == 65 && add.stderr.contains("diaper.focus: care subject \(lily) is removed"), "\(add.stderr)")
        let update = try f.run("subject", "update", lily, "--name", "L")
        #expect(update.code == 66 && update.stderr.contains("care subject \(lily) is removed"), "\(update.stderr)")
        let twice = try f.run("subject", "remove", lily)
        #expect(twice.code == 66 && twice.stderr.contains("is removed"), "\(twice.stderr)")
        // One without records goes at once; the fixed subjects come back when added again.
        try f.ok("subject", "add", "newMom", "--name", "Lin")
        try f.ok("subject", "remove", "newMom")
        #expect(try Self.subjects(f)["newMom"] == nil)
        try f.ok("subject", "add", "newMom")
        // A new one, not the old one back: the name it had is not brought back.
        let again = try #require(try Self.subjects(f)["newMom"])
        #expect(again["name"] == nil, "\(again)")
        #expect(try f.ok("replay").hasSuffix("result: OK"))
    }

    /// An import does not bring a removed subject back by the way: a
    /// record row naming it is refused; a subjects.json row adds it again
    /// with that row's fields alone.
    @Test func anImportDoesNotBringARemovedSubjectBack() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily", "--sex", "female")
        try f.ok("record", "add", "--focus", lily, "--store", "diaper", "wet=true")
        let dir = f.root + "/export"
        try f.ok("export", "stores", dir)
        try f.ok("subject", "remove", lily, "--with-records")
        let subjectsFile = dir + "/subjects.json"
        try FileManager.default.removeItem(atPath: subjectsFile)
        let refused = try f.run("import", "stores", dir)
        #expect(refused.code == 65 && refused.stderr.contains("its care subject \(lily) is removed"), "\(refused.stderr)")
        #expect(try Self.subjects(f)[lily] == nil)
        // Named in subjects.json: added again, with the row's fields only.
        try #"[{"focus":"\#(lily)","name":"Lily"}]"#.write(toFile: subjectsFile, atomically: true, encoding: .utf8)
        let back = try f.run("import", "stores", dir)
        #expect(back.code == 0, "\(back.stderr)")
        let s = try #require(try Self.subjects(f)[lily])
        #expect(s["name"] as? String == "Lily" && s["sex"] == nil, "\(s)")
        // Its record, deleted with it after the export, is a later change the row would undo: kept out, unless asked for.
        #expect(back.stderr.contains("diaper.json: 1 row(s) of records deleted since the export: kept out"), "\(back.stderr)")
        #expect(!(try f.ok("record", "list", "--focus", lily)).contains("wet=true"))
        try f.ok("import", "stores", dir, "--overwrite-newer")
        #expect(try f.ok("record", "list", "--focus", lily).contains("wet=true"))
    }

    /// A record added for the wrong baby moves to the right one; the move
    /// obeys the store's rules (a sleep of the other baby that overlaps, a
    /// subject of the wrong kind).
    @Test func aRecordMovesToAnotherSubject() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily")
        let tom = try f.ok("subject", "add", "baby", "--name", "Tom")
        try f.ok("subject", "add", "newMom")
        let diaper = try f.ok("record", "add", "--focus", lily, "--store", "diaper", "wet=true")
        #expect(try f.ok("record", "update", diaper, "--focus", "Tom") == diaper)
        #expect(try f.ok("record", "list", "--focus", tom).contains(diaper))
        #expect(!(try f.ok("record", "list", "--focus", lily).contains(diaper)))
        #expect(try f.ok("record", "show", diaper).contains("wet=true"))
        let same = try f.run("record", "update", diaper, "--focus", tom)
        #expect(same.code == 64 && same.stderr.contains("already has that care subject"), "\(same.stderr)")
        // Fields it already has, and ones it has not: each named as given.
        let fields = try f.run("record", "update", diaper, "wet=true", "note=", "rash=")
        #expect(fields.code == 64 && fields.stderr.contains("already has wet=true, and no note, no rash\n"), "\(fields.stderr)")
        let kind = try f.run("record", "update", diaper, "--focus", "newMom")
        #expect(kind.code == 65 && kind.stderr.contains("diaper.focus"), "\(kind.stderr)")
        let nobody = try f.run("record", "update", diaper, "--focus", "Sam")
        #expect(nobody.code == 66 && nobody.stderr.contains("no care subject 'Sam'"), "\(nobody.stderr)")
        try f.ok("record", "add", "--focus", lily, "--store", "sleep", "start=2026-11-29T20:00:00+01:00", "end=2026-11-29T22:00:00+01:00")
        let tomSleep = try f.ok("record", "add", "--focus", tom, "--store", "sleep", "start=2026-11-29T21:00:00+01:00", "end=2026-11-29T21:30:00+01:00")
        let overlap = try f.run("record", "update", tomSleep, "--focus", lily)
        #expect(overlap.code == 65 && overlap.stderr.contains("overlaps sleep"), "\(overlap.stderr)")
        #expect(try f.ok("record", "list", "--focus", tom).contains(tomSleep))
        // The move is a put in the record's history.
        let shown = try JSONSerialization.jsonObject(with: Data(try f.ok("record", "show", diaper, "--history", "--json").utf8)) as! [String: Any]
        #expect((shown["history"] as? [[String: Any]])?.count == 2, "\(shown)")
    }

    /// A removal reaches the other devices; a viewer's is refused by its
    /// own famctl and, forged, by every member.
    @Test func aRemovalSyncsAndAViewersIsRejected() throws {
        let mum = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", mum.root + "/shared")
        let lily = try mum.ok("subject", "add", "baby", "--name", "Lily")
        let tom = try mum.ok("subject", "add", "baby", "--name", "Tom")
        let lilys = try mum.ok("record", "add", "--focus", lily, "--store", "diaper", "wet=true")
        let dad = FamctlRunner(), grandma = FamctlRunner()
        try dad.ok("accept", try mum.ok("invite"), "--name", "Dad")
        try grandma.ok("accept", try mum.ok("invite", "--role", "viewer"), "--name", "Grandma")
        let all = [mum, dad, grandma]
        for _ in 0..<2 { for r in all { try r.ok("sync") } }
        #expect(try Set(Self.subjects(grandma).keys) == [lily, tom])
        try dad.ok("subject", "remove", "Tom")
        // Told it may not write first (it was told how to deal with Lily's
        // records, or that a change changing nothing changes nothing).
        let viewer = try grandma.run("subject", "remove", "Lily")
        #expect(viewer.code == 65 && viewer.stderr.contains("viewers cannot change") && !viewer.stderr.contains("record(s)"), "\(viewer.stderr)")
        let same = try grandma.run("record", "update", lilys, "wet=true")
        #expect(same.code == 65 && same.stderr.contains("viewers cannot change"), "exit \(same.code): \(same.stderr)")
        let sameName = try grandma.run("subject", "update", "Lily", "--name", "Lily")
        #expect(sameName.code == 65 && sameName.stderr.contains("viewers cannot change"), "exit \(sameName.code): \(sameName.stderr)")
        try Home.open(grandma.home).append([SubjectEvent.delete(try #require(FocusKey(lily))).body])
        for _ in 0..<2 { for r in all { try r.ok("sync") } }
        for r in all {
            #expect(try Set(Self.subjects(r).keys) == [lily], "\(r.home)")
            #expect(try Self.subjects(r, removed: true)[tom]?["removed"] as? Bool == true)
        }
        #expect(try mum.ok("digest") == dad.ok("digest"))
        #expect(try dad.ok("digest") == grandma.ok("digest"))
        let status = try JSONSerialization.jsonObject(with: Data(try mum.ok("status", "--json").utf8)) as! [String: Any]
        let reasons = (status["unauthorized"] as! [[String: Any]]).map { $0["reason"] as! String }
        #expect(reasons == ["viewers cannot change records or care subjects"], "\(reasons)")
    }

    /// A removed subject comes back with `subject restore`, with its
    /// fields; the records deleted with it stay deleted. Named by a name
    /// it had, it is said to be removed.
    @Test func aRemovedSubjectIsRestored() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let noah = try f.ok("subject", "add", "baby", "--name", "Noah", "--birth", "2026-01-02")
        let r = try f.ok("record", "add", "--focus", "Noah", "--store", "diaper", "wet=true")
        try f.ok("subject", "remove", "Noah", "--with-records")
        let byName = try f.run("subject", "update", "Noah", "--sex", "male")
        #expect(byName.code == 66 && byName.stderr.contains("care subject 'Noah' (\(noah)) is removed") && byName.stderr.contains("famctl subject restore \(noah)"), "\(byName.stderr)")
        let live = try f.run("subject", "restore", "newMom")
        #expect(live.code == 66, "\(live.stderr)")
        #expect(try f.ok("subject", "restore", "Noah") == noah)
        let s = try #require(try Self.subjects(f)[noah])
        #expect(s["name"] as? String == "Noah" && s["birth"] as? String == "2026-01-02", "\(s)")
        #expect(try f.ok("record", "show", r, "--json").contains("\"deleted\" : true"))
        let again = try f.run("subject", "restore", noah)
        #expect(again.code == 65 && again.stderr.contains("is not removed"), "\(again.stderr)")
        let againByName = try f.run("subject", "restore", "Noah")
        #expect(againByName.code == 65 && againByName.stderr.contains("care subject \(noah) ('Noah') is not removed"), "\(againByName.stderr)")
        // A live subject's exact name is that subject's, though a removed one has it in other letters' case.
        let other = try f.ok("subject", "add", "baby", "--name", "noah")
        try f.ok("subject", "remove", other)
        let exact = try f.run("subject", "restore", "Noah")
        #expect(exact.code == 65 && exact.stderr.contains("care subject \(noah) ('Noah') is not removed"), "\(exact.stderr)")
        #expect(try Self.subjects(f)[other] == nil)
        #expect(try f.ok("subject", "restore", "noah") == other)
        try f.ok("subject", "remove", other)
        // A birth date's year mistyped is refused as a record's time is.
        let year = try f.run("subject", "update", "Noah", "--birth", "0026-01-02")
        #expect(year.code == 65 && year.stderr.contains("subject.birth: 0026-01-02 is before 1900 (is the year mistyped?)"), "\(year.stderr)")
        // Named by name in --focus too, for adding and listing.
        let added = try f.ok("record", "add", "--focus", "noah", "--store", "diaper", "dirty=true")
        #expect(try f.ok("record", "list", "--focus", "Noah").contains(added))
    }

    /// A device joining with its own baby of a name the family's baby has:
    /// `accept` says so, and so does every device's `sync` until they are
    /// merged; the merge may name the kept one by the name both share
    /// (a review: both said nothing, and the merge by name was refused as
    /// ambiguous).
    @Test func aBabyCarriedInUnderTheFamilysBabysNameIsSaidAndMergedByName() throws {
        let mum = FamctlRunner(), nanny = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        let dir = mum.root + "/shared"
        try mum.ok("family", "create", "--name", "F", "--dir", dir)
        let lily = try mum.ok("subject", "add", "baby", "--name", "Lily", "--birth", "2026-06-01")
        try mum.ok("sync")
        try nanny.ok("init", "--name", "Nanny")
        let hers = try nanny.ok("subject", "add", "baby", "--name", "Lily", "--birth", "2026-06-01")
        let joined = try nanny.run("accept", try mum.ok("invite"), "--name", "Nanny", "--dir", dir)
        #expect(joined.code == 0 && joined.stderr.contains("famctl: warning: 2 babies are named Lily") && joined.stderr.contains("'--focus Lily' names neither"), "\(joined.stderr)")
        try nanny.ok("sync")
        let round = try mum.run("sync")
        #expect(round.code == 0 && round.stderr.contains("2 babies are named Lily") && round.stderr.contains("--move-records-to"), "\(round.stderr)")
        // Merged by the name both share: the other Lily is meant.
        let merged = try mum.run("subject", "remove", hers, "--move-records-to", "Lily")
        #expect(merged.code == 0 && merged.stdout == hers + "\n", "\(merged.stderr)")
        #expect(!(try mum.run("sync")).stderr.contains("babies are named"))
        #expect(try mum.ok("record", "add", "--focus", "Lily", "--store", "diaper", "wet=true").count > 0)
        // The name of the subject being removed alone: said as such.
        let alone = try mum.run("subject", "remove", lily, "--move-records-to", "Lily")
        #expect(alone.code == 64 && alone.stderr.contains("the subject being removed"), "\(alone.stderr)")
    }

    /// A baby added twice: `subject remove --move-records-to` moves its
    /// records to the one kept and removes it, in one step; a record that
    /// cannot move (a store the other subject's kind does not take) stops
    /// it, naming the record, and nothing is written.
    @Test func aDuplicateSubjectIsMergedIntoTheOther() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily")
        let twin = try f.ok("subject", "add", "baby", "--name", "Lily again")
        try f.ok("subject", "add", "newMom")
        let mine = try f.ok("record", "add", "--focus", lily, "--store", "diaper", "wet=true")
        let moved = [try f.ok("record", "add", "--focus", twin, "--store", "diaper", "dirty=true"),
                     try f.ok("record", "add", "--focus", twin, "--store", "feeding", "kind=bottle", "start=2026-11-29T08:00:00+01:00")]
        let wrongKind = try f.run("subject", "remove", twin, "--move-records-to", "newMom")
        #expect(wrongKind.code == 65 && wrongKind.stderr.contains("cannot move to newMom: ") && wrongKind.stderr.contains(" records are for baby only; nothing was written")
                && wrongKind.stderr.contains("or keep \(twin): its records stay listed under it") && !wrongKind.stderr.contains("Move or delete"), "\(wrongKind.stderr)")
        #expect(try Self.subjects(f)[twin] != nil)
        let both = try f.run("subject", "remove", twin, "--with-records", "--move-records-to", lily)
        #expect(both.code == 64, "\(both.stderr)")
        let merged = try f.run("subject", "remove", "Lily again", "--move-records-to", "Lily")
        #expect(merged.code == 0 && merged.stdout == twin + "\n" && merged.stderr.contains("moved 2 record(s) of \(twin) to \(lily)"), "\(merged.stderr)")
        let list = try f.ok("record", "list", "--focus", lily)
        #expect(([mine] + moved).allSatisfy(list.contains), "\(list)")
        #expect(try Self.subjects(f)[twin] == nil)
        #expect(try f.ok("record", "show", moved[0]).contains("dirty=true"))
        let history = try f.ok("record", "show", moved[0], "--history")
        // Named as its record line names it.
        #expect(history.contains("(moved to Lily)"), "\(history)")
    }

    /// A move on one device and an edit on another that had not seen it:
    /// the trail says the move moved the record, and not that the edit
    /// (which names the subject from before, and keeps nothing) moved it
    /// back; `replay --record` says the same.
    @Test func aTrailNamesTheMovesAloneWhateverTheEditsName() throws {
        let family = try SharedFamily()
        let (mum, dad) = (family.mum, family.dad)
        let ada = try mum.ok("subject", "add", "baby", "--name", "Ada"), bo = try mum.ok("subject", "add", "baby", "--name", "Bo")
        let id = try mum.ok("record", "add", "--focus", ada, "--store", "diaper", "wet=true")
        for r in [mum, dad] { try r.ok("sync") }
        try mum.ok("record", "update", id, "--focus", bo)
        try dad.ok("record", "update", id, "note=dad's edit")
        for r in [mum, dad, mum, dad] { try r.ok("sync") }
        for r in [mum, dad] {
            let trail = try r.ok("record", "show", id, "--history").split(separator: "\n")
            #expect(trail.filter { $0.contains("(moved to") }.count == 1 && trail.contains { $0.contains("(moved to Bo)") }
                    && !trail.contains { $0.contains("note=") && $0.contains("moved to") }, "\(trail)")
            #expect(try r.ok("record", "show", id).contains("  diaper  Bo  "))
            let audit = try r.ok("replay", "--record", id)
            #expect(audit.contains("(moved to Bo)") && !audit.contains("(moved to Ada)"), "\(audit)")
        }
    }

    /// A record a device adds for a subject while another removes it stays
    /// live under the removed subject on every device; status says so, with
    /// what to do.
    @Test func recordsOfARemovedSubjectAreSaid() throws {
        let mum = FamctlRunner(), dad = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", mum.root + "/shared")
        let noah = try mum.ok("subject", "add", "baby", "--name", "Noah")
        try dad.ok("accept", try mum.ok("invite"), "--name", "Dad")
        for _ in 0..<2 { for r in [mum, dad] { try r.ok("sync") } }
        try mum.ok("subject", "remove", noah)
        let orphan = try dad.ok("record", "add", "--focus", noah, "--store", "diaper", "wet=true")
        for _ in 0..<2 { for r in [mum, dad] { try r.ok("sync") } }
        #expect(try mum.ok("digest") == dad.ok("digest"))
        for r in [mum, dad] {
            let status = try r.ok("status")
            #expect(status.contains("1 record(s) of the removed care subject \(noah)") && status.contains("famctl subject restore \(noah)"), "\(status)")
            let json = try JSONSerialization.jsonObject(with: Data(try r.ok("status", "--json").utf8)) as! [String: Any]
            #expect((json["recordsOfRemovedSubjects"] as? [String: Int]) == [noah: 1], "\(json)")
        }
        let update = try mum.run("record", "update", orphan, "color=yellow")
        #expect(update.code == 65 && update.stderr.contains("--focus OTHER") && update.stderr.contains("subject restore \(noah)"), "\(update.stderr)")
        // Its home's export, imported there again, changes nothing (the row is the record as it is).
        try mum.ok("export", "stores", mum.root + "/out")
        // Imported into a new home: the subject comes with its name, and is
        // removed again once its record is in, as where it was exported.
        let fresh = FamctlRunner()
        try fresh.ok("init", "--name", "New")
        let moved = try fresh.run("import", "stores", mum.root + "/out")
        #expect(moved.code == 0 && moved.stdout.contains("subjects.json: 1 added, 0 already there (of the added, 1 removed again, as the file has it, with its records)")
                && moved.stdout.contains("diaper.json: 1 added"), "\(moved.stdout) \(moved.stderr)")
        #expect(try Self.subjects(fresh)[noah] == nil)
        #expect(try Self.subjects(fresh, removed: true)[noah]?["name"] as? String == "Noah")
        #expect(try fresh.ok("record", "list", "--focus", noah).contains(orphan))
        #expect(try fresh.ok("status").contains("1 record(s) of the removed care subject \(noah)"))
        let freshAgain = try fresh.run("import", "stores", mum.root + "/out")
        #expect(freshAgain.code == 0 && freshAgain.stdout.contains("subjects.json: 0 added, 1 already there") && freshAgain.stdout.contains("diaper.json: 0 added, 0 updated, 1 unchanged"),
                "\(freshAgain.stdout) \(freshAgain.stderr)")
        let again = try mum.run("import", "stores", mum.root + "/out")
        #expect(again.code == 0 && again.stdout.contains("diaper.json: 0 added, 0 updated, 1 unchanged"), "\(again.stdout) \(again.stderr)")
        // An import into a new home stopped midway (a file-size limit, as a
        // full disk) leaves the subject removed, never live; run again, it
        // adds the records still missing.
        for i in 0..<200 {
            let row = #"{"id":"\#(UUID().uuidString.lowercased())","focus":"\#(noah)","at":"2026-11-2\#(i % 9)T08:00:00Z","fields":{"wet":true,"note":"\#(String(repeating: "n", count: 2_000))"}}"#
            let file = mum.root + "/out/diaper.json"
            var text = try String(contentsOfFile: file, encoding: .utf8)
            text = text.replacingOccurrences(of: "[\n", with: "[\n" + row + ",\n", options: [], range: text.range(of: "[\n"))
            try text.write(toFile: file, atomically: true, encoding: .utf8)
        }
        let cut = FamctlRunner()
        try cut.ok("init", "--name", "Cut")
        let (stopped, said) = try ResourceFaultTests.shell("ulimit -f 250; '\(FamctlRunner.binary.path)' import stores '\(mum.root)/out'", env: ["FAMCTL_HOME": cut.home])
        #expect(stopped == 73, "\(said)")
        #expect(try Self.subjects(cut)[noah] == nil, "the removed subject is never live")
        let resumed = try cut.run("import", "stores", mum.root + "/out")
        #expect(resumed.code == 0, "\(resumed.stdout) \(resumed.stderr)")
        #expect(try Self.subjects(cut)[noah] == nil && Self.subjects(cut, removed: true)[noah]?["name"] as? String == "Noah")
        #expect(try cut.ok("record", "list", "--focus", noah).split(separator: "\n").count == 201)
        // Changed in the file, it is refused, as a record added for a removed subject is.
        let file = mum.root + "/out/diaper.json"
        try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: "\"wet\" : true", with: "\"wet\" : true, \"note\" : \"later\"")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let changed = try mum.run("import", "stores", mum.root + "/out")
        #expect(changed.code == 65 && changed.stderr.contains("its care subject \(noah) is removed"), "\(changed.stderr)")
    }

    /// Two sleeps of one baby that a merge left overlapping can still have
    /// their other fields changed; `record show` names the overlap.
    @Test func sleepsAMergeLeftOverlappingCanBeEdited() throws {
        let mum = FamctlRunner(), dad = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", mum.root + "/shared")
        let baby = try mum.ok("subject", "add", "baby", "--name", "Lily")
        try dad.ok("accept", try mum.ok("invite"), "--name", "Dad")
        for _ in 0..<2 { for r in [mum, dad] { try r.ok("sync") } }
        let a = try mum.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-29T13:00:00+01:00", "end=2026-11-29T14:00:00+01:00")
        let b = try dad.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-11-29T13:10:00+01:00", "end=2026-11-29T14:10:00+01:00")
        for _ in 0..<2 { for r in [mum, dad] { try r.ok("sync") } }
        let shown = try mum.run("record", "show", a)
        #expect(shown.stderr.contains("overlaps sleep \(b)"), "\(shown.stderr)")
        #expect(try mum.ok("record", "update", a, "location=cot") == a)
        #expect(try mum.ok("record", "update", b, "nap=true") == b)
        // A change of its times must still not overlap.
        let moved = try mum.run("record", "update", b, "end=2026-11-29T14:20:00+01:00")
        #expect(moved.code == 65 && moved.stderr.contains("overlaps sleep \(a)") && moved.stderr.contains("(the record already overlapped it: sleeps written on two devices before they synced)")
                && moved.stderr.contains("or correct the other: 'famctl record update \(a) start=… end=…'"), "\(moved.stderr)")
        // Given times clear of the other, the change is taken.
        #expect(try mum.ok("record", "update", b, "start=2026-11-29T14:00:00+01:00", "end=2026-11-29T14:20:00+01:00") == b)
    }

    /// A baby renamed to another baby's name: said, as on add.
    @Test func aRenameToAnotherBabysNameIsSaid() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily")
        let max = try f.ok("subject", "add", "baby", "--name", "Max")
        let r = try f.run("subject", "update", max, "--name", "lily")
        #expect(r.code == 0 && r.stderr.contains("warning: \(lily) is a baby named Lily too"), "\(r.stderr)")
        #expect(!(try f.run("subject", "update", max, "--name", "Maxi")).stderr.contains("warning"))
    }

    /// A move is not undone by a change of other fields written on a device
    /// that had not seen it, whichever is later (every put names the
    /// record's subject; a change that keeps it says which write of the
    /// subject it repeats). Of two moves, the later wins, on every device.
    @Test func aMoveSurvivesAConcurrentChangeOfOtherFields() throws {
        let mum = FamctlRunner(), dad = FamctlRunner()
        try mum.ok("init", "--name", "Mum")
        try mum.ok("family", "create", "--name", "F", "--dir", mum.root + "/shared")
        let lily = try mum.ok("subject", "add", "baby", "--name", "Lily")
        let max = try mum.ok("subject", "add", "baby", "--name", "Max")
        let sam = try mum.ok("subject", "add", "baby", "--name", "Sam")
        let r = try mum.ok("record", "add", "--focus", lily, "--store", "diaper", "wet=true")
        let both = try mum.ok("record", "add", "--focus", lily, "--store", "diaper", "dirty=true")
        try dad.ok("accept", try mum.ok("invite"), "--name", "Dad")
        for _ in 0..<2 { for d in [mum, dad] { try d.ok("sync") } }
        // Mum moves both; Dad, later and unaware, changes the colour of one
        // and moves the other elsewhere.
        try mum.ok("record", "update", r, "--focus", max)
        try mum.ok("record", "update", both, "--focus", max)
        try dad.ok("record", "update", r, "color=yellow")
        try dad.ok("record", "update", both, "--focus", sam)   // a second move, later: wins
        for _ in 0..<2 { for d in [mum, dad] { try d.ok("sync") } }
        #expect(try mum.ok("digest") == dad.ok("digest"))
        for d in [mum, dad] {
            let shown = try JSONSerialization.jsonObject(with: Data(try d.ok("record", "show", r, "--json").utf8)) as! [String: Any]
            #expect(shown["focus"] as? String == max && (shown["fields"] as? [String: Any])?["color"] as? String == "yellow", "\(shown)")
            #expect(try d.ok("record", "list", "--focus", sam).contains(both))
        }
        // The same after a rebuild from the log.
        try mum.ok("rebuild")
        #expect(try mum.ok("digest") == dad.ok("digest"))
        #expect(try mum.ok("record", "list", "--focus", max).contains(r))
    }
}

extension FocusByNameTests {
    /// A name given again is said naming the baby of exactly that name,
    /// not one of that name in other letters' case (a review: adding "Lily"
    /// beside "Lily" and "lily" named "lily").
    @Test func aDuplicateNameIsSaidNamingTheBabyOfThatExactName() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lower = try f.ok("subject", "add", "baby", "--name", "ada")
        let upper = try f.ok("subject", "add", "baby", "--name", "Ada")
        let third = try f.run("subject", "add", "baby", "--name", "Ada")
        #expect(third.code == 0 && third.stderr.contains("a baby named Ada was already a care subject (\(upper))"), "\(third.stderr)")
        let fourth = try f.run("subject", "add", "baby", "--name", "ada")
        #expect(fourth.code == 0 && fourth.stderr.contains("a baby named ada was already a care subject (\(lower))"), "\(fourth.stderr)")
    }

    /// A subject's name is trimmed, as a device's is, and spaces alone are
    /// refused (a review: `subject update Lily --name "   "` blanked the
    /// baby's name, after which `--focus Lily` found nothing; "  Zoë  " was
    /// neither found as Zoë nor warned of as a duplicate).
    @Test func aSubjectsNameIsTrimmedAndSpacesAloneRefused() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let zoe = try f.ok("subject", "add", "baby", "--name", "  Zoë  ")
        #expect(try SubjectCommandsTests.subjects(f)[zoe]?["name"] as? String == "Zoë")
        try f.ok("record", "add", "--focus", "Zoë", "--store", "diaper", "wet=true")
        let again = try f.run("subject", "add", "baby", "--name", "Zoë")
        #expect(again.code == 0 && again.stderr.contains("a baby named Zoë was already a care subject (\(zoe))"), "\(again.stderr)")
        for args in [["subject", "add", "baby", "--name", "   "], ["subject", "update", zoe, "--name", "   "], ["subject", "add", "newMom", "--name", " "]] {
            let blank = try f.run(args)
            #expect(blank.code == 65 && blank.stderr.contains("subject.name: '") && blank.stderr.contains("is only spaces"), "\(args): \(blank.stderr)")
        }
        #expect(try SubjectCommandsTests.subjects(f)[zoe]?["name"] as? String == "Zoë")
        #expect(try SubjectCommandsTests.subjects(f).values.contains { $0["kind"] as? String == "newMom" } == false)
        // subjects.json likewise.
        let dir = f.root + "/in"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let max = "baby:" + UUID().uuidString.lowercased()
        try JSONSerialization.data(withJSONObject: [["focus": max, "name": "  Max  "]]).write(to: URL(fileURLWithPath: dir + "/subjects.json"))
        try f.ok("import", "stores", dir)
        #expect(try SubjectCommandsTests.subjects(f)[max]?["name"] as? String == "Max")
        try JSONSerialization.data(withJSONObject: [["focus": "baby:" + UUID().uuidString.lowercased(), "name": "   "]]).write(to: URL(fileURLWithPath: dir + "/subjects.json"))
        let blank = try f.run("import", "stores", dir)
        #expect(blank.code == 65 && blank.stderr.contains("subjects.json[0]: subject.name: '   ' is only spaces"), "\(blank.stderr)")
    }
}

/// A new due date on the pregnancy that has records says that they stay
/// under it, listed as the new pregnancy's, and how to keep them apart.
struct NextPregnancyTests {
    @Test func aNewDueDateSaysTheRecordsBeforeStay() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        try f.ok("subject", "add", "pregnancy", "--due", "2026-03-01")
        let quiet = try f.run("subject", "add", "pregnancy", "--due", "2026-03-02")
        #expect(quiet.code == 0 && !quiet.stderr.contains("record(s) written before"), "no records, nothing to say: \(quiet.stderr)")
        try f.ok("record", "add", "--focus", "pregnancy", "--store", "pregnancy", "kind=kicks", "count=10", "--at", "2026-01-10T10:00:00Z")
        let again = try f.run("subject", "add", "pregnancy", "--due", "2027-06-01")
        #expect(again.code == 0 && again.stderr.contains("the pregnancy has 1 record(s) written before this due date")
                && again.stderr.contains("'famctl subject remove pregnancy --with-records'"), "\(again.stderr)")
        // The same date again changes nothing, and says nothing.
        #expect(!(try f.run("subject", "add", "pregnancy", "--due", "2027-06-01").stderr.contains("record(s) written before")))
        // Given by `subject update`, it is said the same.
        let updated = try f.run("subject", "update", "pregnancy", "--due", "2027-07-01")
        #expect(updated.code == 0 && updated.stderr.contains("the pregnancy has 1 record(s) written before this due date"), "\(updated.stderr)")
        #expect(!(try f.run("subject", "update", "pregnancy", "--name", "Bump").stderr.contains("record(s) written before")))
        // Its records can go to no other subject: the advice says to keep it, not to move them.
        try f.ok("subject", "add", "newMom")
        let moved = try f.run("subject", "remove", "pregnancy", "--move-records-to", "newMom")
        #expect(moved.code == 65 && moved.stderr.contains("famctl: Keep pregnancy: its records stay listed under it") && !moved.stderr.contains("Give --move-records-to"), "\(moved.stderr)")
    }
}

/// A record a merge left breaking its store's rules does not stop its
/// subject's removal with `--move-records-to`: the move writes none of its
/// fields, and it moves as it is.
struct MoveOfABrokenRecordTests {
    /// Mum and Dad, babies Ada and Bee, and a diaper of Ada's (`fields`) both hold.
    static func adaAndBee(_ fields: String...) throws -> (mum: FamctlRunner, dad: FamctlRunner, id: String) {
        let (mum, others) = try HouseholdTests.family()
        try mum.ok("subject", "add", "baby", "--name", "Ada")
        try mum.ok("subject", "add", "baby", "--name", "Bee")
        let id = try mum.ok(["record", "add", "--focus", "Ada", "--store", "diaper"] + fields)
        try HouseholdTests.exchange([mum, others[0]])
        return (mum, others[0], id)
    }

    @Test func aRecordAMergeLeftBrokenMovesAsItIs() throws {
        let (mum, dad, id) = try Self.adaAndBee("wet=true", "dirty=true")
        try dad.ok("record", "update", id, "wet=false")
        try mum.ok("record", "update", id, "dirty=false")
        try HouseholdTests.exchange([mum, dad])
        #expect(try mum.run("record", "show", id).stderr.contains("at least one of wet and dirty must be true"))
        // With the view of this device's own records, the count given is the
        // family's: the listing it names says so.
        try dad.ok("settings", "include-shared", "off")
        let counted = try dad.run("subject", "remove", "Ada")
        #expect(counted.code == 65 && counted.stderr.contains("has 1 record(s)") && counted.stderr.contains("'famctl settings include-shared on'"), "\(counted.stderr)")
        try dad.ok("settings", "include-shared", "on")
        #expect(!(try dad.run("subject", "remove", "Ada").stderr.contains("include-shared")))
        let removed = try mum.run("subject", "remove", "Ada", "--move-records-to", "Bee")
        #expect(removed.code == 0 && removed.stderr.contains("moved 1 record(s)"), "\(removed.stderr)")
        let shown = try mum.ok("record", "show", id, "--json")
        let bee = try mum.ok("subject", "list").split(separator: "\n").map(String.init).filter { $0.hasPrefix("baby:") }
        #expect(bee.count == 1 && shown.contains(bee[0]) && shown.contains("\"wet\" : false") && shown.contains("\"dirty\" : false"), "\(shown)")
    }
}

/// `log --focus` lists every event of a record that is the subject's now:
/// those written before it was moved there, and a deletion by a device
/// that had not seen the move (naming the subject it knew).
struct LogOfAMovedRecordTests {
    @Test func aMovedRecordsEventsAreListedUnderItsSubject() throws {
        let (mum, dad, id) = try MoveOfABrokenRecordTests.adaAndBee("wet=true")
        try dad.ok("record", "update", id, "--focus", "Bee")
        try mum.ok("record", "delete", id)        // not seen the move: names Ada
        try HouseholdTests.exchange([mum, dad])
        for device in [mum, dad] {
            #expect(try device.ok("record", "show", id, "--json").contains("\"deleted\" : true"))
            let bee = try device.ok("log", "--focus", "Bee").split(separator: "\n").filter { $0.contains(id) }
            #expect(bee.count == 3 && bee.contains { $0.contains("record.delete") }, "\(bee)")
            // Under the subject the events name, they are listed as well.
            let ada = try device.ok("log", "--focus", "Ada").split(separator: "\n").filter { $0.contains(id) }
            #expect(ada.count == 2, "\(ada)")
        }
    }
}

/// A care subject is named the same way wherever a command takes one, and
/// a near miss says what was meant (a user trial: `log --focus Lily` said
/// Lily was no care subject; a removed subject's name did too).
struct FocusByNameTests {
    @Test func everyCommandTakesASubjectsNameAndSaysWhatIsWrongWithIt() throws {
        let f = FamctlRunner()
        try f.ok("init", "--name", "Mum")
        let lily = try f.ok("subject", "add", "baby", "--name", "Lily", "--birth", "2026-05-01")
        let tom = try f.ok("subject", "add", "baby", "--name", "Tom", "--birth", "2026-05-01")
        let a = try f.ok("record", "add", "--focus", "lily", "--store", "diaper", "wet=true")
        let b = try f.ok("record", "add", "--focus", tom, "--store", "diaper", "wet=true")
        let log = try f.ok("log", "--focus", "Lily")
        #expect(log.contains(a) && !log.contains(b), "\(log)")
        #expect(try f.ok("log", "--focus", lily) == log)

        try f.ok("subject", "remove", "Tom", "--with-records")
        #expect(try f.ok("log", "--focus", "Tom").contains(b), "a removed subject's events are listed by its name")
        let byName = try f.run("record", "add", "--focus", "Tom", "--store", "diaper", "wet=true")
        let byKey = try f.run("record", "add", "--focus", tom, "--store", "diaper", "wet=true")
        #expect(byName.code == 65 && byName.stderr == byKey.stderr && byName.stderr.contains("care subject \(tom) is removed"), "\(byName.stderr)")

        let store = try f.run("record", "list", "--store", "Diaper")
        #expect(store.code == 65 && store.stderr.contains("did you mean 'diaper'?"), "\(store.stderr)")
        let word = try f.run("record", "add", "--focus", "Lily", "--store", "feeding", "amountMl")
        #expect(word.code == 65 && word.stderr.contains("with no space around it: amountMl=VALUE"), "\(word.stderr)")
        let member = try f.run("member", "remove", "Dad")
        #expect(member.code == 65 && member.stderr.contains("this device has no family yet"), "\(member.stderr)")
    }
}
