import Foundation

/// A family (household): 16 random bytes, written as a lowercase UUID.
public struct FamilyID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

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

    public var uuid: UUID {
        let b = bytes
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    public var description: String { uuid.uuidString.lowercased() }
}
