@testable import famctl
import Foundation
import Projections
import Testing

/// The hints for a time written short and a number written with its unit.
struct ValueHintTests {
    @Test func aTimeWrittenShortIsCompleted() throws {
        #expect(ValueHint.completedTime("2026-12-04T08:00+0200")! == ("2026-12-04T08:00:00+02:00", false))
        #expect(ValueHint.completedTime("2026-12-04 08:00:05Z")! == ("2026-12-04T08:00:05Z", false))
        #expect(ValueHint.completedTime("2026-12-04T08:00:05.250-05")! == ("2026-12-04T08:00:05.250-05:00", false))
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
            ValueHint.forField(try #require(StoreSchema.schema(for: store).field(field)), text: text)
        }
        #expect(try hint(.feeding, "amountMl", "4oz") == "amountMl is in millilitres: 4oz is about 118 ml, amountMl=118.")
        #expect(try hint(.feeding, "amountMl", "120 ml") == "Give the number alone: amountMl is in millilitres, amountMl=120.")
        #expect(try hint(.growth, "weightKg", "7.5lb") == "weightKg is in kilograms: 7.5lb is about 3.402 kg, weightKg=3.402.")
        #expect(try hint(.growth, "weightKg", "3500g") == "weightKg is in kilograms: 3500g is about 3.5 kg, weightKg=3.5.")
        #expect(try hint(.growth, "lengthCm", "20in") == "lengthCm is in centimetres: 20in is about 50.8 cm, lengthCm=50.8.")
        #expect(try hint(.health, "temperatureC", "99.5°F") == "temperatureC is in degrees Celsius: 99.5°F is about 37.5 °C, temperatureC=37.5.")
        #expect(try hint(.health, "temperatureC", "37,5C") == "Give the number alone: temperatureC is in degrees Celsius, temperatureC=37,5.")
        // Out of the field's range once converted: the value, not a field=value to copy.
        #expect(try hint(.feeding, "amountMl", "2l") == "amountMl is in millilitres: 2l is about 2000 ml.")
        #expect(try hint(.feeding, "amountMl", "12kg") == "amountMl is in millilitres: give the number alone, in millilitres (amountMl=NUMBER).")
        #expect(try hint(.feeding, "amountMl", "lots") == nil)
    }

    @Test func recordAddSaysIt() throws {
        let mum = try FamctlRunner.mum()
        let r = try mum.run("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3", "--at", "2026-12-04T08:00+01:00")
        #expect(r.code == 65 && r.stderr.contains("famctl: Write it in full, with seconds and an offset: --at 2026-12-04T08:00:00+01:00."), "\(r.stderr)")
        let baby = try mum.ok("subject", "add", "baby")
        let f = try mum.run("record", "add", "--focus", baby, "--store", "feeding", "kind=bottle", "amountMl=4oz", "start=2026-12-04T08:00:00Z")
        #expect(f.code == 65 && f.stderr.contains("famctl: amountMl is in millilitres: 4oz is about 118 ml, amountMl=118."), "\(f.stderr)")
        let s = try mum.run("record", "add", "--focus", baby, "--store", "sleep", "start=2026-12-04T08:00:00Z", "end=2026-12-04T09:00Z")
        #expect(s.code == 65 && s.stderr.contains("famctl: Write the time in full, with seconds and an offset: end=2026-12-04T09:00:00Z."), "\(s.stderr)")
    }
}
