/// One install's keys: an Ed25519 signing key (its ``DeviceID``) and an X25519
/// box key. A key is never copied to another install: a new phone is a new device.
///
/// The stored form (113 bytes) is the 16-byte tag `famctl-identity` followed by
/// version byte 1, the Ed25519 seed (32), the X25519 secret key (32) and a
/// BLAKE2b-256 checksum of the 80 bytes before it. Writing it to a 0600 file is
/// the caller's job; this type knows no storage.
public final class DeviceIdentity {
    public let signing: SigningKey
    public let box: BoxKey

    public var deviceID: DeviceID { signing.publicKey }

    public init(signing: SigningKey, box: BoxKey) {
        self.signing = signing
        self.box = box
    }

    public static func generate() -> DeviceIdentity {
        DeviceIdentity(signing: .generate(), box: .generate())
    }

    static let tag: [UInt8] = Array("famctl-identity".utf8) + [0]
    static let version: UInt8 = 1
    /// tag 16 + version 1 + seed 32 + X25519 secret 32 + checksum 32.
    public static let encodedCount = 113

    /// The stored form; the caller writes it with mode 0600 and drops it.
    public func encoded() -> SecretBytes {
        let seed = signing.seed()
        return SecretBytes(count: Self.encodedCount) { out in
            out.copyBytes(from: Self.tag + [Self.version])
            seed.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[17..<49]).copyMemory(from: $0) }
            box.secret.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[49..<81]).copyMemory(from: $0) }
            let sum = Sodium.blake2b256(UnsafeRawBufferPointer(rebasing: out[0..<81]))
            UnsafeMutableRawBufferPointer(rebasing: out[81..<113]).copyBytes(from: sum)
        }
    }

    /// Restores an identity from its stored form.
    /// - Throws: ``IdentityError/malformed(_:)`` for a wrong size, tag, version or checksum.
    public init(encoded: SecretBytes) throws(IdentityError) {
        guard encoded.count == Self.encodedCount else {
            throw .malformed("identity is \(encoded.count) bytes, expected \(Self.encodedCount)")
        }
        let (tagOK, version, checksumOK) = encoded.withUnsafeBytes { b in
            (Array(b[0..<16]) == Self.tag, b[16], Sodium.blake2b256(UnsafeRawBufferPointer(rebasing: b[0..<81])) == Array(b[81..<113]))
        }
        guard tagOK else { throw .malformed("not a famctl identity (bad tag)") }
        guard version == Self.version else { throw .malformed("unsupported identity version \(version)") }
        guard checksumOK else { throw .malformed("identity checksum does not match (file damaged)") }
        signing = encoded.withUnsafeBytes { b in SigningKey(seed: SecretBytes(count: 32) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[17..<49])) }) }
        box = try BoxKey(secretKey: encoded.withUnsafeBytes { b in SecretBytes(count: 32) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[49..<81])) } })
    }
}

@available(*, unavailable)
extension DeviceIdentity: Sendable {}

/// A stored identity could not be read.
public enum IdentityError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed(String)

    public var description: String {
        switch self { case .malformed(let why): why }
    }
}
