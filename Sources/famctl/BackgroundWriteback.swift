import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes a file's dirty pages to disk on a thread of its own while another
/// thread is still writing the file, so that the writer's final fsync finds
/// little left to do.
///
/// A rebuild writes its new projection file (about 670 MB at 1M events)
/// with no journal and one fsync at its commit; without this, that fsync
/// wrote nearly every page then, while both cores waited (0.30–0.37 s at
/// 1M events, 0.02 s with it). Here an `fdatasync` of a descriptor of its
/// own runs, then again ``interval`` after each one ends, until ``stop()``.
/// The writer's own fsync still decides durability: Linux (since 4.13)
/// reports a write-back error to every descriptor open on the file when it
/// happened, the writer's included, so ignoring it here hides nothing.
///
/// ``stop()`` closes that descriptor, and closing any descriptor of a file
/// drops every POSIX lock the process holds on the file, SQLite's
/// included: call it only where SQLite holds no lock on the file.
final class BackgroundWriteback: @unchecked Sendable {
    /// Between two `fdatasync`s.
    static let interval: TimeInterval = 0.3

    private let fd: Int32
    private let condition = NSCondition()
    private var stopped = false
    private var finished = false
    private var syncs = 0

    /// How many `fdatasync`s have succeeded so far.
    var completedSyncs: Int {
        condition.lock()
        defer { condition.unlock() }
        return syncs
    }

    /// Starts writing back `path`; when it cannot be opened, does nothing
    /// (the writer's fsync then writes everything, as it would anyway).
    init(path: String) {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            finished = true
            return
        }
        let thread = Thread { [self] in run() }
        thread.name = "famctl-writeback"
        thread.start()
    }

    private func run() {
        condition.lock()
        while !stopped {
            condition.unlock()
            let written = fdatasync(fd) == 0
            condition.lock()
            if written { syncs += 1 }
            if !stopped { _ = condition.wait(until: Date().addingTimeInterval(Self.interval)) }
        }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the thread and waits for it (an `fdatasync` under way ends
    /// first). Idempotent.
    func stop() {
        condition.lock()
        let first = !stopped
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
        if first, fd >= 0 { close(fd) }
    }
}
