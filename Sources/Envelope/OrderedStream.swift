import Dispatch
import Foundation

/// Inputs handed over one after another, transformed on worker threads,
/// their outputs taken back in the order the inputs came: a worker takes
/// the next input as soon as it is done with one, and never waits for
/// another worker, only for inputs.
///
/// The caller bounds what is held: it submits while fewer than some number
/// are ``pending``, and takes the oldest output otherwise (``OrderedWork``
/// does this for a range of blocks, ``streamBlocks(of:window:blockWeight:weight:feed:consume:)``
/// for items read one by one). Submitting and taking happen on one
/// thread, the owner's. With no workers (one core) the transform runs
/// inline, in ``submit(_:)``.
///
/// The workers are threads of their own, not Dispatch's: they wait for
/// inputs for as long as the stream lives, and parked in Dispatch's pool
/// (as wide as the machine has cores) they would hold up any other work
/// sent there, another stream's included, until the pool grew.
public final class OrderedStream<Input: Sendable, Output: Sendable> {
    private let state = State()
    private let group = DispatchGroup()
    private let transform: @Sendable (Input) -> Output
    private let inline: Bool
    /// Sequence numbers: of the next input submitted, of the next output
    /// taken (the owner's thread only).
    private var submitted = 0
    private var taken = 0

    /// - Parameter workers: the threads that transform the inputs; with
    ///   none, the transform runs inline, in ``submit(_:)``.
    public init(workers: Int, _ transform: @escaping @Sendable (Input) -> Output) {
        self.transform = transform
        inline = workers < 1
        guard !inline else { return }
        for _ in 0..<workers {
            group.enter()
            let thread = Thread { [state, group] in
                while let (i, input) = state.claim() {
                    state.finish(i, transform(input))
                }
                group.leave()
            }
            thread.qualityOfService = .userInitiated
            thread.start()
        }
    }

    /// Inputs submitted whose outputs were not taken yet.
    public var pending: Int { submitted - taken }

    /// Hands an input over.
    public func submit(_ input: Input) {
        if inline {
            state.finish(submitted, transform(input))
        } else {
            state.add(submitted, input)
        }
        submitted += 1
    }

    /// The output of the oldest input not taken yet, once it is ready.
    public func take() -> Output {
        precondition(pending > 0, "nothing submitted to take")
        let output = state.take(taken)
        taken += 1
        return output
    }

    /// Gives back an output the owner is done with, for a worker to free
    /// (deallocating what another core made is work this thread is spared).
    public func release(_ output: Output) {
        if !inline { state.release(output) }
    }

    /// Stops the workers, once they are done with the inputs they hold;
    /// the inputs no worker took are dropped. Nothing runs after this
    /// returns.
    public func close() {
        state.close()
        group.wait()
    }

    deinit { close() }

    /// The inputs waiting, the outputs ready, and what to free, under one
    /// lock.
    private final class State: @unchecked Sendable {
        private let condition = NSCondition()
        /// Inputs with their sequence numbers, oldest first; those before
        /// `head` were claimed (and let go).
        private var inputs: [(Int, Input)?] = []
        private var head = 0
        private var outputs: [Int: Output] = [:]
        private var closed = false
        /// Outputs the owner is done with, for a worker to free.
        private var garbage: [Output] = []

        func add(_ i: Int, _ input: Input) {
            condition.lock()
            precondition(!closed, "an input submitted to a closed stream")
            if head > 64, head * 2 > inputs.count {
                inputs.removeFirst(head)
                head = 0
            }
            inputs.append((i, input))
            condition.broadcast()
            condition.unlock()
        }

        /// The next input, once one is there; `nil` once closed. Frees
        /// what the owner gave back on the way.
        func claim() -> (Int, Input)? {
            while true {
                condition.lock()
                while !closed, head == inputs.count, garbage.isEmpty { condition.wait() }
                let freed = garbage
                garbage = []
                var claimed: (Int, Input)?
                if !closed, head < inputs.count {
                    claimed = inputs[head].take()
                    head += 1
                }
                let isClosed = closed
                condition.unlock()
                withExtendedLifetime(freed) {}   // freed here, outside the lock
                if claimed != nil || isClosed { return claimed }
            }
        }

        func finish(_ i: Int, _ output: Output) {
            condition.lock()
            outputs[i] = output
            condition.broadcast()
            condition.unlock()
        }

        func take(_ i: Int) -> Output {
            condition.lock()
            precondition(!closed || outputs[i] != nil, "an output taken from a closed stream")
            while outputs[i] == nil { condition.wait() }
            let output = outputs.removeValue(forKey: i)!
            condition.unlock()
            return output
        }

        func release(_ output: Output) {
            condition.lock()
            garbage.append(output)
            condition.broadcast()
            condition.unlock()
        }

        func close() {
            condition.lock()
            closed = true
            inputs = []
            head = 0
            condition.broadcast()
            condition.unlock()
        }
    }
}

@available(*, unavailable)
extension OrderedStream: Sendable {}
