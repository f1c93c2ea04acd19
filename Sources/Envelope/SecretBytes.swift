/// Key material in memory this type owns, wiped (`sodium_memzero`) when it
/// is released.
///
/// The bytes live in a manually allocated buffer, never in a copy-on-write
/// array, so no hidden copy escapes the wipe. Deliberately not `Sendable`.
public final class SecretBytes {
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `bytes` in. The caller wipes its own copy if it matters.
    public convenience init(_ bytes: [UInt8]) {
        self.init(count: bytes.count) { dst in bytes.withUnsafeBytes { if $0.count > 0 { dst.copyMemory(from: $0) } } }
    }

    /// Allocates `count` zero bytes and lets `fill` write them.
    public init(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        fill(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
        self.count = count
    }

    public let count: Int

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// A copy of the bytes as an array, for writing to a 0600 file or the
    /// keyring. The array is the caller's to wipe.
    public func copyBytes() -> [UInt8] { withUnsafeBytes { Array($0) } }

    deinit {
        Sodium.wipe(buffer)
        buffer.deallocate()
    }
}

@available(*, unavailable)
extension SecretBytes: Sendable {}
