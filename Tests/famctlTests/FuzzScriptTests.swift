import Foundation
import Testing

/// `make fuzz` keeps building: the fuzz targets are compiled from a list of
/// source files kept in `scripts/fuzz.sh`, outside the package, so a file
/// they come to need (a type moved into a file of its own) must be added
/// there too. The targets are type-checked with that list, as the build
/// would compile them (each target is a function compiled whatever the
/// flag, so one type-check covers the five); the fuzzing itself is not run
/// here.
struct FuzzScriptTests {
    @Test func everyFuzzTargetTypeChecksWithTheScriptsSourceList() {
        let (code, out) = Subprocess.script([Subprocess.repositoryScript("fuzz.sh"), "--typecheck"])
        #expect(code == 0, "\(out)")
        #expect(out.contains("== envelope segment invite json field: type-check"), "\(out)")
    }

    @Test func aRunCountThatIsNotANumberIsRefused() {
        let (code, out) = Subprocess.script([Subprocess.repositoryScript("fuzz.sh"), "many"])
        #expect(code == 64)
        #expect(out.contains("usage: scripts/fuzz.sh"))
    }
}
