@testable import Envelope
import Foundation
import Testing

/// The note a device leaves in a location it moved away from.
struct MovedNoticeTests {
    let family = FamilyID(string: "a0a0a0a0-0000-4000-8000-000000000002")!
    let key = EpochKey(epoch: 3, key: SecretBytes([UInt8](repeating: 7, count: 32)))

    @Test func aNoteReadsBackWithItsAuthorTimeAndLocation() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 9, count: 32)))
        let at = Date(timeIntervalSince1970: 1_800_000_000.123)
        let note = MovedNotice.make(family: family, signer: signer, at: at, location: "/mnt/nas/famctl", key: key)
        let read = try #require(MovedNotice(verifying: note.bytes))
        #expect(read.author == signer.publicKey && read.family == family && read.epoch == 3)
        #expect(abs(read.at.timeIntervalSince(at)) < 0.001)
        #expect(read.location(with: key) == "/mnt/nas/famctl")
        // Another key, or another epoch's: the location stays sealed.
        #expect(read.location(with: EpochKey(epoch: 3, key: SecretBytes([UInt8](repeating: 8, count: 32)))) == nil)
        #expect(read.location(with: EpochKey(epoch: 4, key: key.key)) == nil)
    }

    /// A location past any system's is cut to 4 KiB: the note is made, never a trap.
    @Test func aLocationTooLongIsCut() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 12, count: 32)))
        let long = "https://example.com/" + String(repeating: "é", count: 40_000)
        let note = MovedNotice.make(family: family, signer: signer, at: Date(), location: long, key: key)
        let location = try #require(MovedNotice(verifying: note.bytes)?.location(with: key))
        #expect(location.utf8.count <= 4096 && long.hasPrefix(location) && location.count > 2000)
    }

    /// Every byte counts: any one changed, the note is not its author's.
    @Test func anyChangedByteMakesItNoNote() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 10, count: 32)))
        let bytes = MovedNotice.make(family: family, signer: signer, at: Date(), location: "https://dav.example.org/f/", key: key).bytes
        for i in bytes.indices {
            var changed = bytes
            changed[i] ^= 0x40
            #expect(MovedNotice(verifying: changed) == nil, "byte \(i)")
        }
        #expect(MovedNotice(verifying: Array(bytes.dropLast())) == nil)
        #expect(MovedNotice(verifying: []) == nil)
    }

    /// An event is never taken for a note, nor a note for an event.
    @Test func anEnvelopeIsNoNote() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 11, count: 32)))
        let env = try SyncEnvelope.seal(body: EventBody(type: "test", fields: [:]).encoded(), family: family, signer: signer,
                                        seq: 1, previous: .none, hlc: HLC(milliseconds: 1_800_000_000_000, counter: 0), key: key)
        #expect(MovedNotice(verifying: env.bytes) == nil)
        let note = MovedNotice.make(family: family, signer: signer, at: Date(), location: "/x", key: key)
        #expect((try? SyncEnvelope(decoding: note.bytes)) == nil)
    }
}

extension MovedNoticeTests {
    /// The vector of format.md: its bytes, from a fixed seed, key, time and nonce.
    @Test func theFormatVector() throws {
        let signer = SigningKey(seed: SecretBytes([UInt8](repeating: 1, count: 32)))
        let family = FamilyID(string: "1d053da4-6f6f-8360-807e-036bab021cca")!
        let key = EpochKey(epoch: 0, key: SecretBytes([UInt8](repeating: 2, count: 32)))
        let note = MovedNotice.make(family: family, signer: signer, at: Date(timeIntervalSince1970: 1_796_000_000), location: "/mnt/nas/famctl",
                                    key: key, nonce: [UInt8](repeating: 3, count: 24))
        let hex = note.bytes.map { String(format: "%02x", $0) }.joined()
        print("moved-notice vector:", hex)
        #expect(hex == Self.vector, "\(hex)")
    }

    static let vector = "66616d63746c6d76011d053da46f6f8360807e036bab021cca8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c000001a229f128000000000003030303030303030303030303030303030303030303030372644f2b123d5bf4af55e6a357fb143c08432eadc8930a828a550718e32bd8df6bdc9ce520e7fa501fd9e0328591d9ab2a12836d6f0369042ba792d586eb0db5bedfaa4dba45e029be4e178d239d914bd0b97d37eed4aa717546f622e8ef08"
}
