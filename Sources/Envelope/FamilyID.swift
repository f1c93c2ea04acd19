import Foundation

/// A family (household): 16 random bytes, written as a lowercase UUID.
public struct FamilyID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Compared a word at a time (``ByteEquality``).
    public static func == (a: FamilyID, b: FamilyID) -> Bool { ByteEquality.equal(a.bytes, b.bytes) }

    /// - Precondition: `bytes.count == 16`.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 16, "a FamilyID is 16 bytes")
        self.bytes = bytes
    }

    public init(uuid: UUID) {
        let u = uuid.uuid
        bytes = [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }

    public init?(string: String) {
        guard let uuid = UUID(uuidString: string) else { return nil }
        self.init(uuid: uuid)
    }

    /// A new random family id (a version-4 UUID).
    public static func random() -> FamilyID { FamilyID(uuid: UUID()) }

    /// The family a device creates: BLAKE2b-256("famctl-family-v1" ‖ owner key),
    /// first 16 bytes, marked as a version-8 UUID. The id itself names its
    /// owner, so nobody else can sign a valid `family.create` for it.
    public static func owned(by owner: DeviceID) -> FamilyID {
        var b = Array(Sodium.blake2b256(Array("famctl-family-v1".utf8) + owner.bytes).prefix(16))
        b[6] = (b[6] & 0x0f) | 0x80   // version 8 (custom)
        b[8] = (b[8] & 0x3f) | 0x80   // RFC 4122 variant
        return FamilyID(bytes: b)
    }

    public var uuid: UUID {
        let b = bytes
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    public var description: String { uuid.uuidString.lowercased() }

    /// Hashes the bytes in one go (an array's own hash feeds them one by one,
    /// which topped the projection's profile).
    public func hash(into h: inout Hasher) { bytes.withUnsafeBytes { h.combine(bytes: $0) } }
}
