import Foundation
import Projections
import Testing

/// Numbers typed on the command line (`amountMl=120`, `--interval 2.5`)
/// are read as decimals only: what `Double(_:)` takes besides — hex
/// floats, `inf`, `nan` — is refused, not turned into a value nobody meant.
struct DecimalTextTests {
    @Test func decimalsReadAsSwiftReadsThem() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            // Any finite double as Swift prints it (`1e-05`, `123.25`, `-0.0`), and any integer.
            let d = Double(bitPattern: rng.next())
            guard d.isFinite else { continue }
            let text = String(describing: d)
            #expect(DecimalText.parse(text) == d, "\(text)")
            let i = Int64(bitPattern: rng.next()) >> Int64.random(in: 0..<63)
            #expect(DecimalText.parse(String(i)) == Double(i))
        }
        for (text, value) in [("12", 12.0), ("0.5", 0.5), (".5", 0.5), ("5.", 5.0), ("+5", 5), ("-0", 0), ("1e2", 100), ("1E+2", 100), ("2.5e-1", 0.25), ("0e-999", 0), ("0.000", 0)] {
            #expect(DecimalText.parse(text) == value, "\(text)")
        }
    }

    @Test func whatIsNotADecimalIsRefused() {
        for text in ["", "0x10", "0X1p4", "0x1.8p1", "inf", "-inf", "infinity", "nan", "NaN", "1_000", " 7", "7 ", "1,5", ".", "+", "-", "e5", "1e", "1e+",
                     "1.2.3", "--1", "+-1", "١٢", "1e400", "1e-400", "-2.5e-999", "12abc", "0b11", "0o17"] {
            #expect(DecimalText.parse(text) == nil, "\(text)")
        }
    }
}
