import Envelope
import Testing

struct DeviceIdentityTests {
    @Test func storedFormRoundTrips() throws {
        let id = DeviceIdentity.generate()
        let stored = id.encoded()
        #expect(stored.count == DeviceIdentity.encodedCount)
        let back = try DeviceIdentity(encoded: stored)
        #expect(back.deviceID == id.deviceID)
        #expect(back.box.publicKey == id.box.publicKey)
        // The restored key signs like the original.
        let msg: [UInt8] = Array("hello".utf8)
        let sig = msg.withUnsafeBytes { back.signing.sign($0) }
        #expect(sig.withUnsafeBytes { s in msg.withUnsafeBytes { m in Sodium.verify(signature: s, message: m, publicKey: id.deviceID.bytes) } })
    }

    @Test func damagedStoredFormIsRefused() throws {
        let good = DeviceIdentity.generate().encoded().copyBytes()
        for i in [0, 16, 20, 60, 100, 112] {
            var b = good
            b[i] ^= 0x01
            #expect(throws: IdentityError.self) { try DeviceIdentity(encoded: SecretBytes(b)) }
        }
        #expect(throws: IdentityError.self) { try DeviceIdentity(encoded: SecretBytes(Array(good.dropLast()))) }
    }

    @Test func sealedBoxOpensOnlyForItsRecipient() throws {
        let alice = BoxKey.generate(), bob = BoxKey.generate()
        let secret = SecretBytes(Sodium.randomBytes(32))
        let sealed = BoxKey.seal(secret, to: alice.publicKey, random: Sodium.randomSecret(32))
        #expect(alice.open(sealed: sealed)?.copyBytes() == secret.copyBytes())
        #expect(bob.open(sealed: sealed) == nil)
        var tampered = sealed; tampered[tampered.count - 1] ^= 1
        #expect(alice.open(sealed: tampered) == nil)
    }

    /// A random source that repeats itself (a device restored from a
    /// virtual machine's snapshot) must not seal two epoch keys with one
    /// ephemeral key (and so one nonce): the ephemeral key hashes the
    /// recipient and the message with the random bytes. What comes out is
    /// still a sealed box `crypto_box_seal_open` opens.
    @Test func aRepeatingRandomSourceStillGivesEverySealedBoxItsOwnEphemeralKey() throws {
        let alice = BoxKey.generate(), bob = BoxKey.generate()
        let random = { SecretBytes([UInt8](repeating: 5, count: 32)) }
        let one = SecretBytes(Sodium.randomBytes(32)), two = SecretBytes(Sodium.randomBytes(32))
        let boxes = [BoxKey.seal(one, to: alice.publicKey, random: random()), BoxKey.seal(two, to: alice.publicKey, random: random()),
                     BoxKey.seal(one, to: bob.publicKey, random: random())]
        #expect(Set(boxes.map { Array($0.prefix(32)) }).count == 3, "three ephemeral public keys")
        #expect(alice.open(sealed: boxes[0])?.copyBytes() == one.copyBytes())
        #expect(alice.open(sealed: boxes[1])?.copyBytes() == two.copyBytes())
        #expect(bob.open(sealed: boxes[2])?.copyBytes() == one.copyBytes())
        #expect(bob.open(sealed: boxes[0]) == nil)
        // Made from its inputs alone: the same ones give the same box.
        #expect(BoxKey.seal(one, to: alice.publicKey, random: random()) == boxes[0])
    }
}
