internal import CSodium

/// A photo's bytes, encrypted with the photo's own key, as stored in the
/// peer's blob area under the BLAKE2b-256 of the blob (content-addressed:
/// written once, never rewritten).
///
/// Layout: tag `famctlph` (8), version 1 (1), nonce (24), XChaCha20-Poly1305
/// ciphertext of the photo (associated data: the photo id, 16 bytes).
public enum PhotoBlob {
    public static let tag: [UInt8] = Array("famctlph".utf8)
    static let headerCount = 8 + 1 + 24
    /// How many bytes a sealed photo's file holds besides the photo: the
    /// header and the authentication tag.
    public static let overhead = headerCount + 16

    /// The key famctl gives a photo: BLAKE2b-256 keyed with `random` (32
    /// fresh random bytes) over the photo's `hash` (BLAKE2b-256 of its
    /// bytes) and its `id`. As secret as `random`; and should the random
    /// source repeat itself (a device restored from a virtual machine's
    /// snapshot), a different photo still gets a different key, so that no
    /// two photos are ever sealed with one key and nonce.
    public static func hedgedKey(random: SecretBytes, hash: [UInt8], id: [UInt8]) -> SecretBytes {
        precondition(random.count == 32, "32 random bytes")
        return SecretBytes(count: 32) { out in
            random.withUnsafeBytes { r in
                Sodium.blake2b(into: out, key: r) { update in
                    hash.withUnsafeBytes(update)
                    id.withUnsafeBytes(update)
                }
            }
        }
    }

    /// Encrypts `plain` for photo `id` with `key` (32 bytes).
    public static func seal(_ plain: [UInt8], id: [UInt8], key: SecretBytes, nonce: [UInt8]? = nil) -> [UInt8] {
        Sodium.ensureReady()
        let nonce = nonce ?? Sodium.randomBytes(24)
        // Made in place: a zeroed array added to the header would hold the
        // photo's size once more until the two were joined; the cipher
        // writes every byte past the header.
        let total = headerCount + plain.count + 16
        let out = [UInt8](unsafeUninitializedCapacity: total) { o, count in
            let base = o.baseAddress!
            for (i, b) in (tag + [1] + nonce).enumerated() { base[i] = b }
            key.withUnsafeBytes { k in
                plain.withUnsafeBytes { m in
                    id.withUnsafeBytes { ad in
                        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                            base.advanced(by: headerCount), nil,
                            m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                            ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count), nil,
                            base.advanced(by: 9),
                            k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
            count = total
        }
        return out
    }

    /// Decrypts a blob; `nil` when it is not a photo blob, was altered, or the key is wrong.
    public static func open(_ blob: [UInt8], id: [UInt8], key: SecretBytes) -> [UInt8]? {
        guard blob.count >= headerCount + 16, Array(blob[0..<8]) == tag, blob[8] == 1 else { return nil }
        Sodium.ensureReady()
        var plain = [UInt8](repeating: 0, count: blob.count - headerCount - 16)
        let rc = blob.withUnsafeBytes { b in
            key.withUnsafeBytes { k in
                plain.withUnsafeMutableBytes { p in
                    id.withUnsafeBytes { ad in
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            p.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, nil,
                            b.baseAddress!.advanced(by: headerCount).assumingMemoryBound(to: UInt8.self), UInt64(blob.count - headerCount),
                            ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                            b.baseAddress!.advanced(by: 9).assumingMemoryBound(to: UInt8.self),
                            k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        return rc == 0 ? plain : nil
    }

    /// The type of an image from its first bytes: jpeg, png, heic, webp.
    public static func sniff(_ b: [UInt8]) -> String? {
        if b.count >= 3, b[0] == 0xFF, b[1] == 0xD8, b[2] == 0xFF { return "jpeg" }
        if b.count >= 8, Array(b[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return "png" }
        if b.count >= 12, Array(b[0..<4]) == Array("RIFF".utf8), Array(b[8..<12]) == Array("WEBP".utf8) { return "webp" }
        if b.count >= 12, Array(b[4..<8]) == Array("ftyp".utf8),
           ["heic", "heix", "hevc", "heim", "heis", "mif1", "msf1"].contains(String(decoding: b[8..<12], as: UTF8.self)) { return "heic" }
        return nil
    }
}
