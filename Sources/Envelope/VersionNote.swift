import Foundation

/// A device's signed note of the famctl it runs, kept in its own folder of
/// the family's location: the others learn which devices run an older (or
/// newer) famctl, which keeps the changes it cannot read unapplied and does
/// not follow every setting, instead of each device only seeing stale
/// values. Advisory: it changes nothing a device applies.
///
/// Layout: tag `famctlvn` (8), version 1 (1), family id (16), author's
/// device id (32), time in milliseconds since the Unix epoch (8,
/// big-endian), format level (4, big-endian), the length of the famctl
/// version's text (2, big-endian), that text (UTF-8, at most 256 bytes),
/// then the author's Ed25519 signature (64) over every byte before it. Not
/// encrypted: it says which famctl, nothing of the family's records.
public struct VersionNote: Sendable, Equatable {
    /// The file's name in its author's folder: not a segment's, so a reader
    /// that does not know it (an older famctl) passes it over.
    public static let fileName = "famctl-version"
    /// This build's format level: raised whenever a build writes something
    /// an earlier one reads differently or not at all (a record schema, an
    /// envelope version, a notice in the shared folder). 1 is the first
    /// build that leaves notes.
    public static let currentLevel: UInt32 = 1
    static let tag: [UInt8] = Array("famctlvn".utf8)
    static let headerCount = 8 + 1 + 16 + 32 + 8 + 4 + 2
    /// The longest version text a note holds, in UTF-8 bytes.
    static let maximumText = 256
    /// Larger files are not notes.
    public static let maximumCount = headerCount + maximumText + 64

    public let family: FamilyID
    public let author: DeviceID
    /// When it was written (its author's clock).
    public let at: Date
    public let level: UInt32
    /// The famctl version its author runs, as `famctl --version` prints it.
    public let version: String
    /// The signed bytes, verbatim.
    public let bytes: [UInt8]

    /// Signs a note that `signer` runs `version`, of format `level`.
    public static func make(family: FamilyID, signer: SigningKey, at: Date, level: UInt32 = currentLevel, version: String) -> VersionNote {
        Sodium.ensureReady()
        let ms = UInt64(min(max(0, at.timeIntervalSince1970 * 1000), Double(HLC.maxMilliseconds)))
        var text: [UInt8] = []
        for ch in version {
            guard text.count + ch.utf8.count <= maximumText else { break }
            text += Array(ch.utf8)
        }
        var signed = tag + [1] + family.bytes + signer.publicKey.bytes
        signed += (0..<8).reversed().map { UInt8(truncatingIfNeeded: ms >> (8 * UInt64($0))) }
        signed += (0..<4).reversed().map { UInt8(truncatingIfNeeded: level >> (8 * UInt32($0))) }
        signed += [UInt8(text.count >> 8), UInt8(text.count & 0xff)] + text
        let signature = signed.withUnsafeBytes { signer.sign($0) }
        return VersionNote(verifying: signed + signature)!
    }

    /// Reads a note; `nil` when the bytes are not one, or its signature
    /// does not verify under the author it names.
    public init?(verifying bytes: [UInt8]) {
        guard bytes.count >= Self.headerCount + 64, bytes.count <= Self.maximumCount,
              Array(bytes[0..<8]) == Self.tag, bytes[8] == 1 else { return nil }
        let count = Int(bytes[69]) << 8 | Int(bytes[70])
        guard count <= Self.maximumText, bytes.count == Self.headerCount + count + 64 else { return nil }
        let author = DeviceID(bytes: Array(bytes[25..<57]))
        let valid = bytes.withUnsafeBytes { b in
            Sodium.verify(signature: UnsafeRawBufferPointer(rebasing: b[(b.count - 64)...]),
                          message: UnsafeRawBufferPointer(rebasing: b[..<(b.count - 64)]), publicKey: author.bytes)
        }
        guard valid, let version = String(validating: bytes[Self.headerCount..<(Self.headerCount + count)], as: UTF8.self) else { return nil }
        let ms = bytes[57..<65].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard ms <= HLC.maxMilliseconds else { return nil }
        family = FamilyID(bytes: Array(bytes[9..<25]))
        self.author = author
        at = Date(timeIntervalSince1970: Double(ms) / 1000)
        level = bytes[65..<69].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        self.version = version
        self.bytes = bytes
    }
}
