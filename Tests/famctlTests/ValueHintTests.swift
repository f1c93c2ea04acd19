@testable import famctl
import Foundation
import Projections
import Testing

/// The hints for a time written short and a number written with its unit.
struct ValueHintTests {
    /// A time of day alone, or a word for a day: the day is asked for,
    /// today's time when it has come, else yesterday's (just after midnight).
    @Test func aTimeOfDayAloneGetsItsDay() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let noon = try #require(TimeValue.parse("2026-07-04T12:00:00+02:00"))
        #expect(ValueHint.timeOfDayAlone("start", "7:30", now: noon, in: berlin) == "Give the date too: start=2026-07-04T07:30:00+02:00 (today, this machine's offset).")
        #expect(ValueHint.timeOfDayAlone("start", "23:55", now: noon, in: berlin) == "Give the date too: start=2026-07-03T23:55:00+02:00 (yesterday: today's 23:55 is still to come).")
        #expect(ValueHint.timeOfDayAlone("start", "now", now: noon, in: berlin) == "Give the moment in full: start=2026-07-04T12:00:00+02:00 (now, this machine's offset).")
        #expect(ValueHint.timeOfDayAlone("start", "yesterday", now: noon, in: berlin)?.contains("start=2026-07-03T08:15:00+02:00") == true)
        #expect(ValueHint.timeOfDayAlone("start", "today", now: noon, in: berlin)?.contains("start=2026-07-04T12:00:00+02:00 for now") == true)
        // Yesterday by the calendar, on days of 25 and 23 hours.
        let longDay = try #require(TimeValue.parse("2026-10-25T23:30:00+01:00")), shortNight = try #require(TimeValue.parse("2026-03-30T00:30:00+02:00"))
        #expect(ValueHint.timeOfDayAlone("start", "23:45", now: longDay, in: berlin) == "Give the date too: start=2026-10-24T23:45:00+02:00 (yesterday: today's 23:45 is still to come).")
        #expect(ValueHint.timeOfDayAlone("start", "23:45", now: shortNight, in: berlin) == "Give the date too: start=2026-03-29T23:45:00+02:00 (yesterday: today's 23:45 is still to come).")
        #expect(ValueHint.timeOfDayAlone("start", "25:00", now: noon, in: berlin) == nil && ValueHint.timeOfDayAlone("start", "soon", now: noon, in: berlin) == nil)
        // Through the command line, a field and --at alike.
        let mum = try FamctlRunner.mum()
        let field = try mum.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=pumping", "leftMl=30", "--at", "00:00")
        #expect(field.code == 65 && field.stderr.contains("famctl: Give the date too: --at ") && field.stderr.contains("T00:00:00Z (today"), "\(field.stderr)")
    }

    @Test func aTimeWrittenShortIsCompleted() throws {
        func completed(_ text: String, in zone: TimeZone = .current) -> String? { ValueHint.completedTime(text, in: zone)?.text }
        #expect(completed("2026-12-04T08:00+0200") == "2026-12-04T08:00:00+02:00")
        #expect(completed("2026-12-04 08:00:05Z") == "2026-12-04T08:00:05Z")
        #expect(completed("2026-12-04T08:00:05.250-05") == "2026-12-04T08:00:05.250-05:00")
        #expect(ValueHint.completedTime("2026-12-04T08:00Z")?.offsetAdded == false)
        // Where the clocks change: a time skipped, a time that comes twice, said.
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        #expect(completed("2026-07-04T08:30", in: berlin) == "2026-07-04T08:30:00+02:00")
        #expect(completed("2026-12-04T08:30", in: berlin) == "2026-12-04T08:30:00+01:00")
        let skipped = try #require(ValueHint.completedTime("2026-03-29T02:30", in: berlin))
        #expect(skipped.note == "02:30 does not exist here that day (the clocks went forward from +01:00 to +02:00): check the time", "\(skipped)")
        let twice = try #require(ValueHint.completedTime("2026-10-25T02:30", in: berlin))
        #expect(twice.text == "2026-10-25T02:30:00+02:00" && twice.note == "02:30 comes twice here that day (the clocks went back): +02:00 is the first, +01:00 the second", "\(twice)")
        #expect(ValueHint.completedTime("2026-10-25T04:30", in: berlin)?.note == nil)
        // No offset: this machine's, at that time; the same wall-clock time.
        let local = try #require(ValueHint.completedTime("2026-07-04T08:30"))
        #expect(local.offsetAdded && local.text.hasPrefix("2026-07-04T08:30:00"))
        let date = try #require(TimeValue.parse(local.text))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        #expect(calendar.component(.hour, from: date) == 8 && calendar.component(.minute, from: date) == 30)
        // Already a time famctl takes, or not a time at all: nothing to suggest.
        for text in ["2026-12-04T08:00:00Z", "yesterday", "2026-12-04", "08:00", "2026-13-04T08:00", "2026-12-04T08:00 +01:00"] {
            #expect(ValueHint.completedTime(text) == nil, "\(text)")
        }
    }

    @Test func aNumberWithAUnitIsConvertedToTheFieldsOwn() throws {
        func hint(_ store: StoreName, _ field: String, _ text: String) throws -> String? {
            ValueHint.forField(try #require(StoreSchema.schema(for: store).field(field)), text: text, in: StoreSchema.schema(for: store))
        }
        #expect(try hint(.feeding, "amountMl", "4oz") == "amountMl is in millilitres: 4oz is about 118 ml, amountMl=118.")
        #expect(try hint(.feeding, "amountMl", "120 ml") == "Give the number alone: amountMl is in millilitres, amountMl=120.")
        #expect(try hint(.growth, "weightKg", "7.5lb") == "weightKg is in kilograms: 7.5lb is about 3.402 kg, weightKg=3.402.")
        #expect(try hint(.growth, "weightKg", "3500g") == "weightKg is in kilograms: 3500g is about 3.5 kg, weightKg=3.5.")
        #expect(try hint(.growth, "lengthCm", "20in") == "lengthCm is in centimetres: 20in is about 50.8 cm, lengthCm=50.8.")
        #expect(try hint(.health, "temperatureC", "99.5°F") == "temperatureC is in degrees Celsius: 99.5°F is about 37.5 °C, temperatureC=37.5.")
        #expect(try hint(.health, "temperatureC", "37,5C") == "Give the number alone: temperatureC is in degrees Celsius, temperatureC=37.5.")
        // Out of the field's range once converted: the value and the bound, not a field=value to copy.
        #expect(try hint(.feeding, "amountMl", "2l") == "amountMl is in millilitres: 2l is about 2000 ml, more than the 500 ml it takes at most.")
        #expect(try hint(.growth, "weightKg", "100g") == "weightKg is in kilograms: 100g is about 0.1 kg, less than the 0.3 kg it takes at least.")
        // A unit the store has a field for; Fahrenheit without its unit; a choice or a yes/no in other words.
        #expect(try hint(.health, "dose", "2.5ML") == "Give the number and its unit apart: dose=2.5 doseUnit=ml.")
        #expect(try hint(.health, "temperatureC", "101") == "temperatureC is in degrees Celsius: 101 looks like Fahrenheit, about 38.3 °C (temperatureC=38.3).")
        #expect(try hint(.health, "temperatureC", "50") == nil, "neither Celsius nor a body's Fahrenheit")
        #expect(try hint(.health, "doseUnit", "mL") == "Did you mean doseUnit=ml? The values are written as listed.")
        #expect(try hint(.feeding, "kind", "Bottle") == "Did you mean kind=bottle? The values are written as listed.")
        // A letter or two off (a review: `milk=formular`, `side=lefft`, `color=yelow`).
        #expect(try hint(.feeding, "milk", "formular") == "Did you mean milk=formula? The values are written as listed.")
        #expect(try hint(.feeding, "side", "lefft") == "Did you mean side=left? The values are written as listed.")
        #expect(try hint(.diaper, "color", "yelow") == "Did you mean color=yellow? The values are written as listed.")
        #expect(try hint(.feeding, "side", "middle") == nil)
        // Never for a unit (mcg is not mg), nor between two as near.
        #expect(try hint(.health, "doseUnit", "mcg") == nil && hint(.health, "doseUnit", "mgl") == nil)
        #expect(try hint(.solidFood, "reaction", "lived") == nil)
        // A weight in grams where kilograms go.
        #expect(try hint(.growth, "weightKg", "3900") == "weightKg is in kilograms: 3900 looks like grams, 3.9 kg (weightKg=3.9).")
        #expect(try hint(.growth, "weightKg", "260000") == nil && hint(.growth, "weightKg", "320") == nil)
        #expect(try hint(.feeding, "kind", "cup") == nil)
        #expect(try hint(.diaper, "wet", "Y") == "Write true or false (yes and no, 1 and 0 are taken too).")
        // A day for a moment; an hour of one digit.
        let day = try #require(try hint(.sleep, "start", "2026-12-04"))
        #expect(day.hasPrefix("start is a moment, not a day: give the time of day too, as start=2026-12-04T08:15:00") && day.hasSuffix("for a quarter past eight (this machine's offset)."), "\(day)")
        #expect(ValueHint.completedTime("2026-12-04T8:05:00Z")?.text == "2026-12-04T08:05:00Z")
        #expect(try hint(.feeding, "amountMl", "12kg") == "amountMl is in millilitres: give the number alone, in millilitres (amountMl=NUMBER).")
        #expect(try hint(.feeding, "amountMl", "lots") == nil)
        // A decimal comma given back as a point; a unit its unit field does not take; a number past any bound.
        #expect(try hint(.feeding, "amountMl", "120,5ml") == "Give the number alone: amountMl is in millilitres, amountMl=120.5.")
        #expect(try hint(.health, "dose", "2tsp") == "Give the number alone, dose=2, and its unit in doseUnit, one of mg/ml/drops/tablets/IU.")
        #expect(try hint(.feeding, "amountMl", "99999999999999999999oz")?.hasSuffix("more than the 500 ml it takes at most.") == true)
    }

    @Test func aDateWrittenOtherwiseIsSaidAsOne() throws {
        #expect(ValueHint.forDate("--birth", "2026-2-4") == "Write the month and day with two digits: --birth 2026-02-04.")
        #expect(ValueHint.forDate("--birth", "2026-12-01T08:00:00Z") == "Give the day alone: --birth 2026-12-01.")
        #expect(ValueHint.forDate("--due", "12/01/2026") == "Write it as YYYY-MM-DD: --due 2026-01-12 or --due 2026-12-01, as you meant it.")
        #expect(ValueHint.forDate("--due", "25.12.2026") == "Write it as YYYY-MM-DD: --due 2026-12-25.")
        #expect(ValueHint.forDate("--birth", "2026-2-30") == nil, "no such day")
        #expect(ValueHint.forDate("--birth", "yesterday") == nil)
        let mum = try FamctlRunner.mum()
        let r = try mum.run("subject", "add", "baby", "--name", "Zed", "--birth", "2026-1-4")
        #expect(r.code == 65 && r.stderr.contains("famctl: Write the month and day with two digits: --birth 2026-01-04."), "\(r.stderr)")
    }

    /// `--at` given a day says it is a moment, as a time field does (a user
    /// review: only an example), and a time in the future says what time
    /// this device's clock gives (a clock review: a device behind could
    /// not tell why the right time was refused).
    @Test func aDayForAMomentAndATimeAheadOfTheClockAreSaid() throws {
        let mum = try FamctlRunner.mum()
        let day = try mum.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2", "--at", "2026-12-05")
        #expect(day.code == 65 && day.stderr.contains("--at is a moment, not a day: give the time of day too, as --at 2026-12-05T08:15:00Z"), "\(day.stderr)")
        let ahead = try mum.run(["record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=2", "--at", "2026-12-06T09:00:00Z"],
                                env: try HouseholdTests.clockOff("@2026-12-06 08:00:00"))
        #expect(ahead.code == 65 && ahead.stderr.contains("must not be more than 5 minutes in the future")
                && ahead.stderr.contains("This device's clock says it is 2026-12-06T08:00:"), "\(ahead.stderr)")
    }

    @Test func importSaysItInTheRowsMessage() throws {
        let mum = try FamctlRunner.mum()
        let dir = mum.root + "/in"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let rows = #"[{"id":"0b0c7a52-59a8-4c36-9d0c-2c3f4b0e6a11","focus":"newMom","at":"2026-12-04T08:00+01:00","fields":{"kind":"pumping","leftMl":"4oz"}}]"#
        try Data(rows.utf8).write(to: URL(fileURLWithPath: dir + "/postpartum.json"))
        let first = try mum.run("import", "stores", dir)
        #expect(first.code == 65 && first.stderr.contains(#"postpartum.json[0]: "at" '2026-12-04T08:00+01:00' is not an ISO-8601 time with offset (in full: 2026-12-04T08:00:00+01:00)"#), "\(first.stderr)")
        // Every problem of a row's shape at once, not one per run.
        try Data(#"[{"id":"nope","focus":"Lily","at":"soon","fields":{}}]"#.utf8).write(to: URL(fileURLWithPath: dir + "/diaper.json"))
        let shape = try mum.run("import", "stores", dir)
        #expect(shape.stderr.contains(#"diaper.json[0]: "id" "nope" is not a UUID; "focus" 'Lily' is not a focus key (baby:<UUID>, pregnancy or newMom): a baby is named by its key, as 'famctl subject list' shows it; "at" 'soon' is not an ISO-8601 time with offset"#), "\(shape.stderr)")
        try FileManager.default.removeItem(atPath: dir + "/diaper.json")
        try Data(rows.replacingOccurrences(of: "08:00+01:00", with: "08:00:00+01:00").utf8).write(to: URL(fileURLWithPath: dir + "/postpartum.json"))
        let second = try mum.run("import", "stores", dir)
        #expect(second.code == 65 && second.stderr.contains("postpartum.leftMl: must be a number from 0 to 500 (leftMl is in millilitres: 4oz is about 118 ml, leftMl=118.)"), "\(second.stderr)")
    }

    /// A whole number written with ".0" and a duration written with its
    /// unit are said for what they are (a review: `severity=3.0` and
    /// `durationSec=1m` got only "must be an integer from …").
    @Test func aWholeNumberWithItsPointAndADurationWithItsUnitAreSaid() throws {
        func hint(_ store: StoreName, _ field: String, _ text: String) throws -> String? {
            ValueHint.forField(try #require(StoreSchema.schema(for: store).field(field)), text: text, in: StoreSchema.schema(for: store))
        }
        #expect(try hint(.health, "severity", "3.0") == "severity takes a whole number: write 3, not 3.0.")
        #expect(try hint(.health, "severity", "11.0") == nil, "out of range: the rule says it")
        #expect(try hint(.health, "severity", "3.5") == nil)
        #expect(try hint(.pregnancy, "durationSec", "45s") == "durationSec is in seconds: 45s is 45 seconds, durationSec=45.")
        #expect(try hint(.pregnancy, "durationSec", "1 min 30 s") == "durationSec is in seconds: 1 min 30 s is 90 seconds, durationSec=90.")
        #expect(try hint(.pregnancy, "durationSec", "10m") == "durationSec is in seconds: 10m is 600 seconds, more than the 300 it takes at most.")
        #expect(try hint(.pregnancy, "durationSec", "2s") == "durationSec is in seconds: 2s is 2 seconds, less than the 5 it takes at least.")
        #expect(try hint(.pregnancy, "durationSec", "90") == nil && hint(.pregnancy, "durationSec", "1m x") == nil && hint(.pregnancy, "durationSec", "m") == nil)
        #expect(ValueHint.seconds(in: "1h 2min 3sec") == 3_723)

        let mum = try FamctlRunner.mum()
        let baby = try mum.ok("subject", "add", "baby")
        let cli = try mum.run("record", "add", "--focus", baby, "--store", "health", "kind=symptom", "symptom=cough", "severity=3.0")
        #expect(cli.code == 65 && cli.stderr.contains("famctl: severity takes a whole number: write 3, not 3.0."), "\(cli.stderr)")
        let json = try mum.run("record", "add", "--focus", baby, "--store", "health", "kind=symptom", "symptom=cough", "--json-fields", #"{"severity": 3.0}"#)
        #expect(json.code == 65 && json.stderr.contains("famctl: severity takes a whole number: write 3, not 3.0."), "\(json.stderr)")
        // A yes/no given as a JSON text: JSON's own true or false, not "write true".
        for (text, meant) in [("true", ": \"wet\": true."), ("yes", ": \"wet\": true."), ("no", ": \"wet\": false."), ("maybe", ".")] {
            let r = try mum.run("record", "add", "--focus", baby, "--store", "diaper", "--json-fields", #"{"wet": ""# + text + #""}"#)
            #expect(r.code == 65 && r.stderr.contains("\"\(text)\" is given as a text (in quotes); in JSON a yes/no is true or false without quotes" + meant)
                    && !r.stderr.contains("yes and no, 1 and 0 are taken too"), "\(text): \(r.stderr)")
        }
        // As a number, which `wet=1` takes and JSON does not.
        for (number, meant) in [("1", ": \"wet\": true."), ("0", ": \"wet\": false."), ("2.5", ".")] {
            let r = try mum.run("record", "add", "--focus", baby, "--store", "diaper", "--json-fields", #"{"wet": "# + number + "}")
            #expect(r.code == 65 && r.stderr.contains("famctl: In JSON a yes/no is true or false, not a number" + meant)
                    && !r.stderr.contains("1 and 0 are taken too"), "\(number): \(r.stderr)")
        }
        try mum.ok("subject", "add", "pregnancy", "--due", "2027-03-01")
        let d = try mum.run("record", "add", "--focus", "pregnancy", "--store", "pregnancy", "kind=contraction", "durationSec=1m")
        #expect(d.code == 65 && d.stderr.contains("famctl: durationSec is in seconds: 1m is 60 seconds, durationSec=60."), "\(d.stderr)")
    }

    @Test func recordAddSaysIt() throws {
        let mum = try FamctlRunner.mum()
        let r = try mum.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--at", "2026-12-04T08:00+01:00")
        #expect(r.code == 65 && r.stderr.contains("famctl: Write it in full, with seconds and an offset: --at 2026-12-04T08:00:00+01:00."), "\(r.stderr)")
        let baby = try mum.ok("subject", "add", "baby")
        let f = try mum.run("record", "add", "--focus", baby, "--store", "feeding", "kind=bottle", "amountMl=4oz", "start=2026-12-04T08:00:00Z")
        #expect(f.code == 65 && f.stderr.contains("famctl: amountMl is in millilitres: 4oz is about 118 ml, amountMl=118."), "\(f.stderr)")
        // A number in range of Fahrenheit, not of the field: checked after parsing, hinted all the same.
        let t = try mum.run("record", "add", "--focus", baby, "--store", "health", "kind=temperature", "temperatureC=101")
        #expect(t.code == 65 && t.stderr.contains("famctl: temperatureC is in degrees Celsius: 101 looks like Fahrenheit, about 38.3 °C (temperatureC=38.3)."), "\(t.stderr)")
        let s = try mum.run("record", "add", "--focus", baby, "--store", "sleep", "start=2026-12-04T08:00:00Z", "end=2026-12-04T09:00Z")
        #expect(s.code == 65 && s.stderr.contains("famctl: Write the time in full, with seconds and an offset: end=2026-12-04T09:00:00Z."), "\(s.stderr)")
    }

    @Test func aLowerCaseTOrZIsStoredUpperCase() throws {
        #expect(TimeValue.canonical("2026-12-04t08:00:00.5z") == "2026-12-04T08:00:00.5Z")
        #expect(TimeValue.canonical("2026-12-04t08:00:00+01:00") == "2026-12-04T08:00:00+01:00")
        for kept in ["2026-12-04T08:00:00Z", "tomorrow", "2026-12-04t08:00z"] { #expect(TimeValue.canonical(kept) == kept) }
        let mum = try FamctlRunner.mum()
        let baby = try mum.ok("subject", "add", "baby")
        let id = try mum.ok("record", "add", "--focus", baby, "--store", "sleep", "start=2026-12-04t08:00:00z", "end=2026-12-04t09:00:00+01:00")
        let shown = try mum.ok("record", "show", id)
        // (Shown in this device's zone, UTC here; kept as written.)
        #expect(shown.contains("start=2026-12-04T08:00:00Z") && shown.contains("end=2026-12-04T08:00:00Z") && shown.contains("  2026-12-04T08:00:00Z  "), "\(shown)")
        #expect(try mum.ok("record", "show", id, "--json").contains("\"2026-12-04T09:00:00+01:00\""))
        let other = try mum.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true", "--at", "2026-12-04t10:00:00z")
        #expect(try mum.ok("record", "show", other).contains("  2026-12-04T10:00:00Z  "))
        // The same time in other letters' case is no change.
        let same = try mum.run("record", "update", other, "--at", "2026-12-04T10:00:00z")
        #expect(same.code == 64 && same.stderr.contains("already has that time"), "\(same.stderr)")
    }

    @Test func anAtApartFromTheStartIsNoted() throws {
        let mum = try FamctlRunner.mum()
        let baby = try mum.ok("subject", "add", "baby")
        let apart = try mum.run("record", "add", "--focus", baby, "--store", "feeding", "kind=bottle", "amountMl=90",
                                "start=2026-12-04T08:00:00Z", "--at", "2026-12-04T10:00:00+01:00")
        #expect(apart.code == 0 && apart.stderr.contains("famctl: note: --at 2026-12-04T10:00:00+01:00 (2026-12-04T09:00:00Z here) and start=2026-12-04T08:00:00Z name different moments"), "\(apart.stderr)")
        let id = apart.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // The same moment at another offset, or no --at: nothing to say.
        let same = try mum.run("record", "add", "--focus", baby, "--store", "feeding", "kind=bottle", "amountMl=90",
                               "start=2026-12-04T11:00:00Z", "--at", "2026-12-04T12:00:00+01:00")
        let plain = try mum.run("record", "add", "--focus", baby, "--store", "feeding", "kind=bottle", "amountMl=90", "start=2026-12-04T13:00:00Z")
        #expect(same.code == 0 && plain.code == 0 && same.stderr.isEmpty && plain.stderr.isEmpty, "\(same.stderr) \(plain.stderr)")
        // An update that moves --at away from the record's start says it too; one that puts it back does not.
        let moved = try mum.run("record", "update", id, "--at", "2026-12-04T08:30:00Z")
        #expect(moved.code == 0 && moved.stderr.contains("--at 2026-12-04T08:30:00Z and start=2026-12-04T08:00:00Z"), "\(moved.stderr)")
        let back = try mum.run("record", "update", id, "--at", "2026-12-04T08:00:00Z")
        #expect(back.code == 0 && back.stderr.isEmpty, "\(back.stderr)")
    }

    /// A word in other letters' case, a field of another kind of subject,
    /// a deleted record: each refusal says what would work.
    @Test func refusalsSayWhatWouldWork() throws {
        let mum = try FamctlRunner.mum()
        func refused(_ args: String..., code: Int32 = 65, hint: String) throws {
            let out = try mum.run(args)
            #expect(out.code == code && out.stderr.contains("famctl: " + hint), "\(args): exit \(out.code): \(out.stderr)")
        }
        try refused("subject", "add", "Baby", hint: "Did you mean baby?")
        try refused("subject", "add", "baby", "--sex", "Female", hint: "Did you mean --sex female?")
        try refused("settings", "include-shared", "Off", hint: "Did you mean off?")
        try refused("settings", "photos", "--prefetch", "ON", hint: "Did you mean --prefetch on?")
        let baby = try mum.ok("subject", "add", "baby", "--name", "Max")
        // A date written in full is not "to be written with two digits": the field is the pregnancy's.
        let due = try mum.run("subject", "update", "Max", "--due", "2027-01-01")
        #expect(due.code == 65 && due.stderr.contains("famctl: A due date is the pregnancy's: famctl subject update pregnancy --due YYYY-MM-DD.")
                && !due.stderr.contains("two digits"), "\(due.stderr)")
        try refused("subject", "update", "newMom", "--birth", "2027-01-01", hint: "Only a baby has a birth date.")
        try refused("subject", "update", "Max", "--birth", "2027-1-01", hint: "Write the month and day with two digits: --birth 2027-01-01.")
        let id = try mum.ok("record", "add", "--focus", baby, "--store", "diaper", "wet=true")
        try mum.ok("record", "delete", id)
        try refused("record", "update", id, "wet=false", hint: "Bring it back first with 'famctl record restore \(id)', then update it")
        try mum.ok("family", "create", "--name", "F", "--dir", mum.root + "/shared")
        try refused("invite", "--role", "Viewer", hint: "Did you mean --role viewer?")
        try refused("member", "role", "Mum", "Member", hint: "Did you mean member?")
    }
}
