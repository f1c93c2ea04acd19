import Envelope
import Foundation
import Testing

/// The vectors in Fixtures/vectors.json were written by an independent
/// implementation of docs/format.md (scripts/make-vectors.py, on PyNaCl).
struct EnvelopeVectorTests {
    struct Vector: Decodable {
        let name, authorSeed, family, epochKey, previous, hlc, nonce, body, authorKey, envelope, id, signature: String
        let epoch: UInt32
        let seq: UInt64
    }

    struct File: Decodable { let vectors: [Vector] }

    static func load() throws -> [Vector] {
        let url = try #require(Bundle.module.url(forResource: "vectors", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url)).vectors
    }

    @Test func vectorsAreThere() throws {
        #expect(try Self.load().count == 3)
    }

    @Test(arguments: try load())
    func sealingReproducesTheVectorByteForByte(_ v: Vector) throws {
        let signer = SigningKey(seed: try #require(Hex.decode(v.authorSeed)))
        #expect(signer.publicKey.hex == v.authorKey)
        let key = EpochKey(epoch: v.epoch, key: SecretBytes(try #require(Hex.decode(v.epochKey))))
        let env = try SyncEnvelope.seal(
            body: Array(v.body.utf8), family: try #require(FamilyID(string: v.family)), signer: signer, seq: v.seq,
            previous: try #require(EventID(hex: v.previous)), hlc: HLC(rawValue: try #require(UInt64(v.hlc))), key: key,
            nonce: try #require(Hex.decode(v.nonce)))
        #expect(Hex.encode(env.bytes) == v.envelope)
        #expect(env.id.hex == v.id)
        #expect(Hex.encode(env.signature) == v.signature)
    }

    @Test(arguments: try load())
    func decodingTheVectorVerifiesAndOpens(_ v: Vector) throws {
        let env = try SyncEnvelope(decoding: try #require(Hex.decode(v.envelope)))
        #expect(env.hasValidSignature)
        #expect(env.id.hex == v.id)
        #expect(env.author.hex == v.authorKey)
        #expect(env.seq == v.seq)
        #expect(env.previous.hex == v.previous)
        #expect(env.hlc.rawValue == UInt64(v.hlc))
        #expect(env.epoch == v.epoch)
        #expect(env.family.description == v.family)
        let key = EpochKey(epoch: v.epoch, key: SecretBytes(try #require(Hex.decode(v.epochKey))))
        #expect(String(decoding: try env.openBody(with: key), as: UTF8.self) == v.body)
        // The body parses and keeps keys it does not know.
        let body = try EventBody(decoding: try env.openBody(with: key))
        #expect(body.schema == 1)
        #expect(!body.type.isEmpty)
    }

    @Test func vectorsFormOneChain() throws {
        let vs = try Self.load()
        for (a, b) in zip(vs, vs.dropFirst()) {
            #expect(b.previous == a.id)
            #expect(UInt64(b.hlc)! > UInt64(a.hlc)!)
        }
    }
}
