/// Key material that is wiped (`sodium_memzero`) when the last reference goes.
///
/// Secrets never travel as bare `[UInt8]`: this owner is the only place their
/// bytes live, and it is deliberately not `Sendable`.
public final class SecretBytes {
    private var storage: [UInt8]

    public init(_ bytes: [UInt8]) { storage = bytes }

    public init(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        storage = [UInt8](repeating: 0, count: count)
        storage.withUnsafeMutableBytes { fill($0) }
    }

    public var count: Int { storage.count }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes(body)
    }

    /// A copy of the bytes, for writing to a 0600 file or sealing to another key.
    public func copyBytes() -> [UInt8] { storage }

    deinit { storage.withUnsafeMutableBytes { Sodium.wipe($0) } }
}

@available(*, unavailable)
extension SecretBytes: Sendable {}
