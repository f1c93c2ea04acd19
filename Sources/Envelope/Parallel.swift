import Dispatch
import Foundation

/// Order-preserving parallel maps over the machine's cores, for the
/// CPU-bound steps of a batch (signature checks, body decryption) that do
/// not depend on one another.
public enum Parallel {
    /// Cores this process may use.
    /// (Read once: on Linux, Foundation reads the cgroup files on every call.)
    public static let cores: Int = max(1, ProcessInfo.processInfo.activeProcessorCount)

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

/// A two-stage pipeline: while the caller consumes one chunk, the next is
/// transformed on another core (bodies opened while the previous chunk is
/// projected, say). With one core it transforms inline.
public final class Pipeline<Input: Sendable, Output: Sendable> {
    private let transform: @Sendable ([Input]) -> [Output]
    private var running: (group: DispatchGroup, result: Result)?

    private final class Result: @unchecked Sendable {
        // Written by the worker before `leave()`, read after `wait()`.
        var value: [Output] = []
    }

    public init(_ transform: @escaping @Sendable ([Input]) -> [Output]) {
        self.transform = transform
    }

    /// Holds what the consumer is done with until the worker frees it.
    private final class Garbage: @unchecked Sendable {
        // Set before the worker starts, emptied by the worker.
        var value: [Output]?
        init(_ value: [Output]?) { self.value = value }
    }

    /// Starts on `chunk` and returns the previous chunk's output, if any
    /// (waiting for it when it is not ready).
    ///
    /// - Parameter done: an earlier output the caller has finished with
    ///   (and holds no other reference to), freed on the worker's core
    ///   rather than the caller's: deallocating a chunk of opened events is
    ///   a measurable part of a rebuild's projecting thread.
    public func push(_ chunk: [Input], releasing done: [Output]? = nil) -> [Output]? {
        let previous = finish()
        let r = Result()
        let g = DispatchGroup()
        if Parallel.cores < 2 {
            r.value = transform(chunk)
        } else {
            let transform = self.transform
            let garbage = Garbage(done)
            g.enter()
            DispatchQueue.global(qos: .userInitiated).async {
                r.value = transform(chunk)
                garbage.value = nil
                g.leave()
            }
        }
        running = (g, r)
        return previous
    }

    /// The last chunk's output, once ready.
    public func finish() -> [Output]? {
        guard let (g, r) = running else { return nil }
        g.wait()
        running = nil
        return r.value
    }
}

@available(*, unavailable)
extension Pipeline: Sendable {}
