/// A family's symmetric key for one key epoch: bodies written in that epoch
/// are encrypted with it (XChaCha20-Poly1305).
public final class EpochKey {
    public let epoch: UInt32
    public let key: SecretBytes

    /// - Precondition: `key.count == 32`.
    public init(epoch: UInt32, key: SecretBytes) {
        precondition(key.count == 32, "an epoch key is 32 bytes")
        self.epoch = epoch
        self.key = key
    }

    public static func generate(epoch: UInt32) -> EpochKey {
        EpochKey(epoch: epoch, key: Sodium.randomSecret(32))
    }
}

@available(*, unavailable)
extension EpochKey: Sendable {}
