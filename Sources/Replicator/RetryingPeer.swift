import Foundation

/// Retries a peer's transient failures: waits out `throttled(retryAfter:)`
/// exactly, backs off exponentially with jitter on `unavailable`, and gives
/// up after `attempts`. It never busy-loops: every retry is preceded by a wait.
public final class RetryingPeer: Peer {
    public let base: any Peer
    public let attempts: Int
    public let initialDelay: Double
    public let maximumDelay: Double
    /// How it waits; tests substitute a clock that records instead of sleeping.
    public let sleep: (Double) -> Void
    var rng: any RandomNumberGenerator
    /// Every wait taken, in seconds (for `status` and tests).
    public private(set) var waits: [Double] = []
    public private(set) var lastError: PeerError?
    /// Whether ``getOnce(_:)`` has waited out its one throttle.
    private var waitedOutAThrottleOnce = false

    /// Every request asked for once, without the back-off: set by a caller
    /// that has already waited one out this round (a publish that kept
    /// failing) and goes on with what may still work (the pull), so that a
    /// server that died meanwhile does not cost the round a second wait.
    public var singleAttempts = false

    /// Whether the caller has given up (Ctrl-C in `sync --watch`): a wait
    /// ends within a tenth of a second of it, and the failure is then
    /// passed on instead of the request being made again.
    public let isCancelled: () -> Bool

    public init(_ base: any Peer, attempts: Int = 8, initialDelay: Double = 0.2, maximumDelay: Double = 30,
                rng: any RandomNumberGenerator = SystemRandomNumberGenerator(),
                isCancelled: @escaping () -> Bool = { false },
                sleep: ((Double) -> Void)? = nil) {
        self.isCancelled = isCancelled
        self.base = base
        self.attempts = attempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.rng = rng
        self.sleep = sleep ?? Self.interruptibleSleep(isCancelled: isCancelled)
    }

    public var label: String { base.label }

    /// A wait of up to `seconds` that ends within a tenth of a second of
    /// `isCancelled` turning true: a `Retry-After: 30` must not hold a
    /// Ctrl-C for half a minute.
    static func interruptibleSleep(isCancelled: @escaping () -> Bool) -> (Double) -> Void {
        { seconds in
            let end = Date().addingTimeInterval(seconds)
            while !isCancelled() {
                let left = end.timeIntervalSinceNow
                guard left > 0 else { return }
                Thread.sleep(forTimeInterval: min(left, 0.1))
            }
        }
    }

    /// The most one request waits in all before its failure is passed on:
    /// the back-off alone comes to about 25 s; a server asking for longer
    /// (`Retry-After: 600`, seven times over) would hold a `sync` silent for
    /// over an hour. The failure then says how long it asked for, and a
    /// `--watch` tries again later.
    public static let waitBudget: Double = 45

    func retrying<T>(_ op: () throws(PeerError) -> T) throws(PeerError) -> T {
        var delay = initialDelay
        var attempt = 1
        var waited = 0.0
        while true {
            do {
                return try op()
            } catch {
                lastError = error
                guard error.isTransient, attempt < attempts, !singleAttempts else { throw error }
                let wait: Double
                if case .throttled(let after) = error, after.isFinite {
                    // Honoured as given, but never zero (no hammering); a
                    // value that is no number (`nan`) gets the back-off.
                    wait = max(after, 0.05)
                } else {
                    wait = min(delay, maximumDelay) * Double.random(in: 0.5...1.5, using: &rng)
                    delay *= 2
                }
                guard waited + wait <= Self.waitBudget else { throw error }
                waited += wait
                waits.append(wait)
                sleep(wait)
                if isCancelled() { throw error }
                attempt += 1
            }
        }
    }

    public func namesOnce(in folder: String) throws(PeerError) -> [String]? {
        try base.namesOnce(in: folder)
    }
    public func changes(since token: String?, limit: Int) throws(PeerError) -> ChangePage {
        try retrying { () throws(PeerError) in try base.changes(since: token, limit: limit) }
    }
    public func create(_ path: String, _ bytes: [UInt8]) throws(PeerError) {
        try retrying { () throws(PeerError) in try base.create(path, bytes) }
    }
    public func replace(_ path: String, _ bytes: [UInt8], expected: String?) throws(PeerError) -> String {
        try retrying { () throws(PeerError) in try base.replace(path, bytes, expected: expected) }
    }
    public func get(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) {
        try retrying { () throws(PeerError) in try base.get(path) }
    }
    /// One request, and no back-off; but the first `throttled(retryAfter:)`
    /// met by this peer (a replicator makes one per round) is waited out
    /// and the request made again, since a rate-limited server would
    /// otherwise refuse these files (read at the end of a round, when a limit
    /// is likeliest reached) round after round. Later throttles are passed
    /// on at once, so a server that throttles often costs a round one wait.
    public func getOnce(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) {
        do throws(PeerError) {
            return try base.getOnce(path)
        } catch {
            lastError = error
            guard case .throttled(let after) = error, !waitedOutAThrottleOnce, after.isFinite, after <= Self.waitBudget else { throw error }
            waitedOutAThrottleOnce = true
            let wait = max(after, 0.05)
            waits.append(wait)
            sleep(wait)
            if isCancelled() { throw error }
            do throws(PeerError) {
                return try base.getOnce(path)
            } catch {
                lastError = error
                throw error
            }
        }
    }
    public func createOnce(_ path: String, _ bytes: [UInt8]) throws(PeerError) {
        do throws(PeerError) {
            try base.createOnce(path, bytes)
        } catch {
            lastError = error
            throw error
        }
    }
    public func deleteOnce(_ path: String) throws(PeerError) {
        do throws(PeerError) {
            try base.deleteOnce(path)
        } catch {
            lastError = error
            throw error
        }
    }
    public func delete(_ path: String) throws(PeerError) {
        try retrying { () throws(PeerError) in try base.delete(path) }
    }
}
