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
