internal import CSodium

/// An Ed25519 signing key (`crypto_sign_seed_keypair`), derived from a 32-byte seed.
public final class SigningKey {
    /// libsodium's 64-byte secret key (seed ‖ public key).
    let secret: SecretBytes
    public let publicKey: DeviceID

    public convenience init(seed: [UInt8]) {
        self.init(seed: SecretBytes(seed))
    }

    /// Derives the key pair from a seed held in wiped memory.
    public init(seed: SecretBytes) {
        precondition(seed.count == Int(crypto_sign_SEEDBYTES), "an Ed25519 seed is 32 bytes")
        Sodium.ensureReady()
        var pk = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        secret = SecretBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { sk in
            _ = pk.withUnsafeMutableBytes { p in
                seed.withUnsafeBytes { s in
                    crypto_sign_seed_keypair(
                        p.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        sk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        publicKey = DeviceID(bytes: pk)
    }

    /// A new key from a fresh random seed.
    public static func generate() -> SigningKey {
        SigningKey(seed: Sodium.randomSecret(32))
    }

    /// The 32-byte seed (the first half of libsodium's secret key), for the identity file.
    public func seed() -> SecretBytes {
        secret.withUnsafeBytes { sk in SecretBytes(count: 32) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: sk[0..<32])) } }
    }

    /// Signs exactly the given bytes (`crypto_sign_detached`).
    public func sign(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        Sodium.sign(message, secretKey: secret)
    }
}

@available(*, unavailable)
extension SigningKey: Sendable {}
