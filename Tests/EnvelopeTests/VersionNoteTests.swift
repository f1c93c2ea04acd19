@testable import Envelope
import Foundation
import Testing

/// The note of the famctl a device runs, in its folder of the family's location.
struct VersionNoteTests {
    let family = FamilyID(string: "a0a0a0a0-0000-4000-8000-000000000003")!

    @Test func aNoteReadsBackWithItsAuthorLevelAndVersion() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 21, count: 32)))
        let at = Date(timeIntervalSince1970: 1_800_000_000.5)
        let note = VersionNote.make(family: family, signer: signer, at: at, level: 7, version: "famctl 0.3.1")
        let read = try #require(VersionNote(verifying: note.bytes))
        #expect(read.author == signer.publicKey && read.family == family && read.level == 7 && read.version == "famctl 0.3.1")
        #expect(abs(read.at.timeIntervalSince(at)) < 0.001)
        #expect(note.bytes.count == 71 + "famctl 0.3.1".utf8.count + 64)
        #expect(VersionNote.make(family: family, signer: signer, at: at, version: "x").level == VersionNote.currentLevel)
    }

    /// A version text past 256 bytes is cut (whole characters): a note is always made.
    @Test func aLongVersionIsCut() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 22, count: 32)))
        let long = String(repeating: "é", count: 300)
        let read = try #require(VersionNote(verifying: VersionNote.make(family: family, signer: signer, at: Date(), version: long).bytes))
        #expect(read.version.utf8.count <= 256 && long.hasPrefix(read.version) && read.version.count == 128)
    }

    /// Every byte counts: any one changed, or one too few or too many, it is no note.
    @Test func anyChangedByteMakesItNoNote() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 23, count: 32)))
        let bytes = VersionNote.make(family: family, signer: signer, at: Date(), version: "famctl 0.1.0").bytes
        for i in bytes.indices {
            var changed = bytes
            changed[i] ^= 0x40
            #expect(VersionNote(verifying: changed) == nil, "byte \(i)")
        }
        #expect(VersionNote(verifying: Array(bytes.dropLast())) == nil)
        #expect(VersionNote(verifying: bytes + [0]) == nil)
        #expect(VersionNote(verifying: []) == nil)
    }

    /// A moved notice is not a version note, nor the reverse.
    @Test func aMovedNoticeIsNoVersionNote() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 24, count: 32)))
        let key = EpochKey(epoch: 0, key: SecretBytes([UInt8](repeating: 7, count: 32)))
        let moved = MovedNotice.make(family: family, signer: signer, at: Date(), location: "/mnt/x", key: key)
        #expect(VersionNote(verifying: moved.bytes) == nil)
        #expect(MovedNotice(verifying: VersionNote.make(family: family, signer: signer, at: Date(), version: "famctl 0.1.0").bytes) == nil)
    }

    /// The vector of docs/format.md, computed with PyNaCl from the layout.
    @Test func theFormatVector() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 1, count: 32)))
        let family = FamilyID(string: "1d053da4-6f6f-8360-807e-036bab021cca")!
        let note = VersionNote.make(family: family, signer: signer, at: Date(timeIntervalSince1970: 1_796_000_000), level: 1, version: "famctl 0.1.0")
        let hex = note.bytes.map { String(format: "%02x", $0) }.joined()
        #expect(hex == Self.vector, "\(hex)")
    }

    static let vector = "66616d63746c766e011d053da46f6f8360807e036bab021cca8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c000001a229f1280000000001000c66616d63746c20302e312e30dd04def042f1e3a296f07ce96e1b972b3544c0fae968609dbe0de2e870817885c5ae50c9ca7465f5d28f5049b1e17c0cdcf908124133f93ad87aca10fcdad80c"
}
