internal import CSodium
import Foundation

/// A device's signed note, left in its own folder of a location the family
/// no longer syncs through (`settings sync` to another folder or server):
/// the devices still syncing there learn at once that it left, when, and
/// (with the family's key) where to, instead of writing for a family that
/// no longer reads them.
///
/// Layout: tag `famctlmv` (8), version 1 (1), family id (16), author's
/// device id (32), time in milliseconds since the Unix epoch (8,
/// big-endian), key epoch (4, big-endian), nonce (24), XChaCha20-Poly1305
/// ciphertext of the new location's text under the family's key of that
/// epoch (associated data: the 69 bytes from the tag to the epoch), then
/// the author's Ed25519 signature (64) over every byte before it. Its tag
/// differs from an envelope's in its first bytes, so that neither can be
/// taken for the other.
public struct MovedNotice: Sendable {
    /// The file's name in its author's folder: not a segment's, so a
    /// reader that does not know it passes it over.
    public static let fileName = "famctl-moved"
    static let tag: [UInt8] = Array("famctlmv".utf8)
    static let headerCount = 8 + 1 + 16 + 32 + 8 + 4
    static let minimumCount = headerCount + 24 + 16 + 64
    /// Larger files are not notices (a location is a path or a URL).
    public static let maximumCount = 64 * 1024
    /// The longest location a note holds, in UTF-8 bytes.
    static let maximumLocation = 4096

    public let family: FamilyID
    public let author: DeviceID
    /// When its author left (its clock).
    public let at: Date
    public let epoch: UInt32
    /// The signed bytes, verbatim.
    public let bytes: [UInt8]

    /// Signs a notice that `signer` left for `location`, sealed with `key`.
    /// - Parameter nonce: 24 bytes, fresh random ones unless given (test vectors).
    public static func make(family: FamilyID, signer: SigningKey, at: Date, location: String, key: EpochKey, nonce: [UInt8]? = nil) -> MovedNotice {
        Sodium.ensureReady()
        let ms = UInt64(min(max(0, at.timeIntervalSince1970 * 1000), Double(HLC.maxMilliseconds)))
        var header = tag + [1] + family.bytes + signer.publicKey.bytes
        header += (0..<8).reversed().map { UInt8(truncatingIfNeeded: ms >> (8 * UInt64($0))) }
        header += (0..<4).reversed().map { UInt8(truncatingIfNeeded: key.epoch >> (8 * UInt32($0))) }
        let nonce = nonce ?? Sodium.randomBytes(24)
        // A location longer than any path or URL a system takes is cut to
        // its first 4 KiB (whole characters): the note stays well under its
        // bound (a review: a 65 KB URL trapped).
        var (end, bytes) = (location.startIndex, 0)
        for ch in location {
            let n = ch.utf8.count
            guard bytes + n <= Self.maximumLocation else { break }
            bytes += n
            end = location.index(after: end)
        }
        let plain = Array(location[..<end].utf8)
        var sealed = [UInt8](repeating: 0, count: plain.count + 16)
        sealed.withUnsafeMutableBytes { o in
            key.key.withUnsafeBytes { k in
                plain.withUnsafeBytes { m in
                    header.withUnsafeBytes { ad in
                        nonce.withUnsafeBytes { n in
                            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                                o.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                                m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                                ad.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ad.count), nil,
                                n.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                        }
                    }
                }
            }
        }
        let signed = header + nonce + sealed
        let signature = signed.withUnsafeBytes { signer.sign($0) }
        return MovedNotice(verified: signed + signature)!
    }

    /// Reads a notice; `nil` when the bytes are not one, or its signature
    /// does not verify under the author it names.
    public init?(verifying bytes: [UInt8]) {
        self.init(verified: bytes)
    }

    private init?(verified bytes: [UInt8]) {
        guard bytes.count >= Self.minimumCount, bytes.count <= Self.maximumCount,
              Array(bytes[0..<8]) == Self.tag, bytes[8] == 1 else { return nil }
        let author = DeviceID(bytes: Array(bytes[25..<57]))
        let valid = bytes.withUnsafeBytes { b in
            Sodium.verify(signature: UnsafeRawBufferPointer(rebasing: b[(b.count - 64)...]),
                          message: UnsafeRawBufferPointer(rebasing: b[..<(b.count - 64)]), publicKey: author.bytes)
        }
        guard valid else { return nil }
        family = FamilyID(bytes: Array(bytes[9..<25]))
        self.author = author
        let ms = bytes[57..<65].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // A time no clock of famctl's gives (past an HLC's 48 bits): no note.
        guard ms <= HLC.maxMilliseconds else { return nil }
        at = Date(timeIntervalSince1970: Double(ms) / 1000)
        epoch = bytes[65..<69].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        self.bytes = bytes
    }

    /// The new location's text, opened with the family's key of its epoch;
    /// `nil` with another key (or bytes that do not authenticate).
    public func location(with key: EpochKey) -> String? {
        guard key.epoch == epoch else { return nil }
        let header = Array(bytes[0..<Self.headerCount])
        let nonce = Array(bytes[Self.headerCount..<(Self.headerCount + 24)])
        let sealed = Array(bytes[(Self.headerCount + 24)..<(bytes.count - 64)])
        var plain = [UInt8](repeating: 0, count: sealed.count - 16)
        let rc = plain.withUnsafeMutableBytes { p in
            key.key.withUnsafeBytes { k in
                sealed.withUnsafeBytes { c in
                    header.withUnsafeBytes { ad in
                        nonce.withUnsafeBytes { n in
                            crypto_aead_xchacha20poly1305_ietf_decrypt(
                                p.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, nil,
                                c.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(c.count),
                                ad.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
                                n.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                        }
                    }
                }
            }
        }
        guard rc == 0 else { return nil }
        return String(validating: plain, as: UTF8.self)
    }
}
