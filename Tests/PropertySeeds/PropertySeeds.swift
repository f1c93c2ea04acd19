import Foundation

/// The seeds a property test runs. By default its own range, chosen to keep
/// `make test` quick; with `FAMCTL_PROPERTY_RUNS=K` in the environment
/// (`make test-deep`), K times as many: the same first seeds, then new
/// ones. A failure names its seed, which the default range can then take
/// in.
public enum PropertySeeds {
    /// How many times the default seeds each property test runs.
    public static var runs: UInt64 {
        guard let text = ProcessInfo.processInfo.environment["FAMCTL_PROPERTY_RUNS"], let k = UInt64(text), k >= 1 else { return 1 }
        return min(k, 1_000)
    }

    /// `base`, or `runs` times as many seeds from its first one.
    public static func range(_ base: Range<UInt64>) -> Range<UInt64> {
        base.lowerBound..<(base.lowerBound + UInt64(base.count) * runs)
    }
}
