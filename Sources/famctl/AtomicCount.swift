import Synchronization

/// A count kept across threads: the events the workers of
/// ``Home/forEachOpened(keys:upTo:unopened:skip:_:)`` could not open, the
/// records `export stores` writes with "problems".
final class AtomicCount: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
