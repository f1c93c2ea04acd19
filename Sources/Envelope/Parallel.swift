import Dispatch
import Foundation

/// Order-preserving parallel maps over the machine's cores, for the
/// CPU-bound steps of a batch (signature checks, body decryption) that do
/// not depend on one another.
public enum Parallel {
    /// Cores this process may use: those Foundation counts (the machine's,
    /// or a container's CPU quota), and no more than the CPUs the process
    /// may run on (`taskset`, a container's CPU set).
    /// (Read once: on Linux, Foundation reads the cgroup files on every call.)
    public static let cores: Int = max(1, min(ProcessInfo.processInfo.activeProcessorCount, allowedCPUs ?? .max))

    /// How many CPUs this process may run on (its affinity mask, the
    /// `Cpus_allowed` line of `/proc/self/status`: hexadecimal words
    /// separated by commas); `nil` where the system does not say.
    static var allowedCPUs: Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return allowedCPUs(status: status)
    }

    static func allowedCPUs(status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return nil }
        var count = 0
        for digit in line.dropFirst("Cpus_allowed:".count) where digit != "," && !digit.isWhitespace {
            guard let value = digit.hexDigitValue else { return nil }
            count += value.nonzeroBitCount
        }
        return count > 0 ? count : nil
    }

    /// `items.map(transform)`, with the items split into contiguous runs
    /// spread over the cores. Inputs too small to be worth a thread run inline.
    public static func map<T: Sendable, U: Sendable>(
        _ items: [T], minimumPerCore: Int = 32, _ transform: @Sendable (T) -> U
    ) -> [U] {
        let n = items.count
        guard cores > 1, n / max(1, minimumPerCore) > 1 else { return items.map(transform) }
        // More runs than cores, taken by whichever thread is free: with one
        // run per core, a run whose core was shared with other work (the
        // caller's sequential part, in a pipeline) finished last while the
        // other cores sat idle.
        let runs = min(cores * 4, n / max(1, minimumPerCore))
        let out = Slots<U>(count: n)
        DispatchQueue.concurrentPerform(iterations: runs) { w in
            for i in (n * w / runs)..<(n * (w + 1) / runs) { out.set(i, transform(items[i])) }
        }
        return out.take()
    }

    /// Write-once result slots, each written by exactly one worker.
    private final class Slots<U>: @unchecked Sendable {
        private let base: UnsafeMutablePointer<U>
        private let count: Int

        init(count: Int) {
            self.count = count
            base = .allocate(capacity: count)
        }

        func set(_ i: Int, _ value: U) { (base + i).initialize(to: value) }

        /// Moves the values out; every slot must have been set.
        func take() -> [U] {
            let result = Array(UnsafeBufferPointer(start: base, count: count))
            base.deinitialize(count: count)
            return result
        }

        deinit { base.deallocate() }
    }
}
