internal import CSodium

/// An X25519 key pair (`crypto_box_seed_keypair`): epoch keys are sealed to it
/// (sealed boxes in `crypto_box_seal`'s format, see ``seal(_:to:random:)``)
/// when the family rotates its key.
public final class BoxKey {
    let secret: SecretBytes
    public let publicKey: [UInt8]

    public convenience init(seed: [UInt8]) {
        self.init(seed: SecretBytes(seed))
    }

    public init(seed: SecretBytes) {
        precondition(seed.count == Int(crypto_box_SEEDBYTES), "an X25519 seed is 32 bytes")
        Sodium.ensureReady()
        var pk = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        secret = SecretBytes(count: Int(crypto_box_SECRETKEYBYTES)) { sk in
            _ = pk.withUnsafeMutableBytes { p in
                seed.withUnsafeBytes { s in
                    crypto_box_seed_keypair(
                        p.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        sk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        publicKey = pk
    }

    /// Restores a key pair from its 32-byte secret key (`crypto_scalarmult_base`).
    public init(secretKey: SecretBytes) throws(IdentityError) {
        guard secretKey.count == Int(crypto_box_SECRETKEYBYTES) else { throw .malformed("X25519 secret key is not 32 bytes") }
        Sodium.ensureReady()
        var pk = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        secretKey.withUnsafeBytes { sk in
            _ = pk.withUnsafeMutableBytes { p in
                crypto_scalarmult_base(p.baseAddress!.assumingMemoryBound(to: UInt8.self), sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        secret = secretKey
        publicKey = pk
    }

    public static func generate() -> BoxKey {
        BoxKey(seed: Sodium.randomSecret(32))
    }

    /// Encrypts `message` so only the holder of `recipient`'s secret key can
    /// read it: a sealed box, as `crypto_box_seal` makes it (the ephemeral
    /// public key, then `crypto_box_easy` under the nonce BLAKE2b-192 of the
    /// ephemeral and the recipient's public keys), which
    /// `crypto_box_seal_open` opens. The ephemeral key pair is not drawn
    /// from the random source alone, as `crypto_box_seal`'s is, but seeded
    /// with BLAKE2b-256 keyed with `random` (32 fresh random bytes, secret)
    /// over the recipient's public key and the message: should the random
    /// source repeat itself (a device restored from a virtual machine's
    /// snapshot), two different messages, or one message to two
    /// recipients, still get two ephemeral keys.
    public static func seal(_ message: SecretBytes, to recipient: [UInt8], random: SecretBytes) -> [UInt8] {
        precondition(random.count == 32, "32 random bytes")
        precondition(recipient.count == Int(crypto_box_PUBLICKEYBYTES), "an X25519 public key is 32 bytes")
        Sodium.ensureReady()
        let seed = SecretBytes(count: Int(crypto_box_SEEDBYTES)) { seed in
            random.withUnsafeBytes { r in
                Sodium.blake2b(into: seed, key: r) { update in
                    recipient.withUnsafeBytes(update)
                    message.withUnsafeBytes(update)
                }
            }
        }
        let ephemeral = BoxKey(seed: seed)
        let pk = Int(crypto_box_PUBLICKEYBYTES)
        var out = ephemeral.publicKey + [UInt8](repeating: 0, count: message.count + Int(crypto_box_MACBYTES))
        var nonce = [UInt8](repeating: 0, count: Int(crypto_box_NONCEBYTES))
        _ = nonce.withUnsafeMutableBytes { n in
            (ephemeral.publicKey + recipient).withUnsafeBytes { keys in
                crypto_generichash(n.baseAddress!.assumingMemoryBound(to: UInt8.self), n.count,
                                   keys.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(keys.count), nil, 0)
            }
        }
        message.withUnsafeBytes { m in
            ephemeral.secret.withUnsafeBytes { esk in
                _ = out.withUnsafeMutableBytes { o in
                    recipient.withUnsafeBytes { r in
                        crypto_box_easy(
                            o.baseAddress!.advanced(by: pk).assumingMemoryBound(to: UInt8.self),
                            m.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                            nonce, r.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            esk.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        return out
    }

    /// Opens a sealed box addressed to this key (`crypto_box_seal_open`);
    /// `nil` when it was not addressed to us or was altered.
    public func open(sealed: [UInt8]) -> SecretBytes? {
        guard sealed.count >= Int(crypto_box_sealbytes()) else { return nil }
        var ok = false
        let out = SecretBytes(count: sealed.count - Int(crypto_box_sealbytes())) { o in
            secret.withUnsafeBytes { sk in
                publicKey.withUnsafeBytes { pk in
                    sealed.withUnsafeBytes { c in
                        ok = crypto_box_seal_open(
                            o.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            c.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(c.count),
                            pk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            sk.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
                    }
                }
            }
        }
        return ok ? out : nil
    }
}

@available(*, unavailable)
extension BoxKey: Sendable {}
