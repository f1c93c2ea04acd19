import Foundation

/// The cores the CPU-bound steps of a batch (signature checks, body
/// decryption) are spread over (``OrderedWork``, ``OrderedStream``).
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
}
