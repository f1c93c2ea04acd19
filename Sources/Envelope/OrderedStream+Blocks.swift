extension OrderedStream {
    /// Streams the items `feed` hands over (a query's rows, say) through
    /// this stream in blocks: a block is submitted once it holds
    /// `blockCount` items, or earlier once their `weight` reaches
    /// `blockWeight`; each output is handed to `consume`, in order, on this
    /// thread, while at most `window` blocks are submitted and not taken,
    /// then given back to the workers to free. Returns once every block's
    /// output was consumed.
    @inlinable
    public func streamBlocks<Item>(
        of blockCount: Int, window: Int, blockWeight: Int = .max, weight: (Item) -> Int = { _ in 0 },
        feed: ((Item) throws -> Void) throws -> Void, consume: (Output) throws -> Void
    ) throws where Input == [Item] {
        // `feed` calls back into what these two closures do: marked as not
        // escaping it (they do not), which Swift cannot see by itself.
        try withoutActuallyEscaping(consume) { consume in
            try withoutActuallyEscaping(weight) { weight in
                func consumeOldest() throws {
                    let output = take()
                    try consume(output)
                    release(output)
                }
                var block: [Item] = []
                var blockWeightSoFar = 0
                block.reserveCapacity(blockCount)
                try feed { item in
                    block.append(item)
                    blockWeightSoFar += weight(item)
                    guard block.count >= blockCount || blockWeightSoFar >= blockWeight else { return }
                    submit(block)
                    block = []
                    blockWeightSoFar = 0
                    block.reserveCapacity(blockCount)
                    while pending > window { try consumeOldest() }
                }
                if !block.isEmpty { submit(block) }
                while pending > 0 { try consumeOldest() }
            }
        }
    }
}
