@testable import Envelope
import Foundation
import Testing

/// ``Parallel/cores`` counts no more CPUs than the process may run on:
/// the `Cpus_allowed` mask of `/proc/self/status` (what `taskset` or a
/// container's CPU set leaves it).
struct ParallelTests {
    @Test func theAffinityMaskIsCounted() {
        #expect(Parallel.allowedCPUs(status: "Name:\tfamctl\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n") == 2)
        #expect(Parallel.allowedCPUs(status: "Cpus_allowed:\t1\n") == 1)
        #expect(Parallel.allowedCPUs(status: "Cpus_allowed:\t00000000,00000004\n") == 1)
        #expect(Parallel.allowedCPUs(status: "Cpus_allowed:\tffffffff,ffffffff\n") == 64)
        #expect(Parallel.allowedCPUs(status: "Cpus_allowed:\ta5\n") == 4)
        // Nothing to go by: Foundation's count alone decides.
        #expect(Parallel.allowedCPUs(status: "Name:\tfamctl\n") == nil)
        #expect(Parallel.allowedCPUs(status: "Cpus_allowed:\tzz\n") == nil)
        #expect(Parallel.allowedCPUs(status: "Cpus_allowed:\t0\n") == nil)
    }

    @Test func coresAreNoMoreThanTheProcessMayRunOn() {
        #expect(Parallel.cores >= 1)
        #expect(Parallel.cores <= ProcessInfo.processInfo.activeProcessorCount)
        if let allowed = Parallel.allowedCPUs { #expect(Parallel.cores <= allowed) }
    }
}
