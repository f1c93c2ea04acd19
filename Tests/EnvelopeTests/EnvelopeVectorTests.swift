import Envelope
import Foundation
import Testing

/// The vectors in Fixtures/vectors.json (version 2, what famctl writes) and
/// Fixtures/vectors-v1.json (version 1, which it still reads) were written by
/// an independent implementation of docs/format.md (scripts/make-vectors.py,
/// on PyNaCl).
struct EnvelopeVectorTests {
    struct Vector: Decodable {
        let name, authorSeed, family, epochKey, previous, hlc, nonce, body, authorKey, envelope, id, signature: String
        let epoch: UInt32
        let seq: UInt64
    }

    struct File: Decodable {
        let format: String
        let vectors: [Vector]
    }

    static func file(_ name: String) throws -> File {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
    }

    /// The version-2 vectors.
    static func load() throws -> [Vector] { try file("vectors").vectors }

    /// Both versions' vectors.
    static func loadAll() throws -> [Vector] { try file("vectors").vectors + file("vectors-v1").vectors }

    @Test func vectorsAreThere() throws {
        #expect(try Self.file("vectors").format == "famctl envelope v2")
        #expect(try Self.file("vectors-v1").format == "famctl envelope v1")
        #expect(try Self.load().count == 3)
        #expect(try Self.loadAll().count == 6)
    }

    /// docs/format.md's vector for the nonce famctl makes, computed with
    /// Python's hashlib (BLAKE2b-192 keyed with the random bytes over the
    /// big-endian seq and HLC and the body).
    @Test func hedgedNonceReproducesTheVector() {
        let random = (0..<32).map { UInt8($0) }
        let hlc = HLC(rawValue: 0x0193_6b8a_3c00_0001)
        func nonce(_ body: String) -> String {
            random.withUnsafeBytes { Hex.encode(SyncEnvelope.hedgedNonce(random: $0, seq: 7, hlc: hlc, body: Array(body.utf8))) }
        }
        #expect(nonce(#"{"schema":1,"type":"t"}"#) == "cc4f97b6bc094da9f27182754ffca720b93422def09115a7")
        #expect(nonce(#"{"schema":1,"type":"u"}"#) == "8e423650c2700f4fe36f1e4d60c7272130b9d68f75792e79")
    }

    /// docs/format.md's vector for a photo's key, computed the same way
    /// (BLAKE2b-256 keyed with the random bytes over the photo's hash and id).
    @Test func hedgedPhotoKeyReproducesTheVector() {
        let random = SecretBytes((0..<32).map { UInt8($0) })
        let id = (16..<32).map { UInt8($0) }
        func key(_ photo: String) -> String {
            Hex.encode(PhotoBlob.hedgedKey(random: random, hash: Sodium.blake2b256(Array(photo.utf8)), id: id).copyBytes())
        }
        #expect(Hex.encode(Sodium.blake2b256(Array("photo".utf8))) == "3e2c08ce3771e0227f78b279de6d510e5f338704f93ac5c50c4127acfdd25619")
        #expect(key("photo") == "ef759055e293f8df951ad51c717082d690a469e74187d5ef7007430da9614b1e")
        #expect(key("photo2") == "1b10ec750b9d39dba193450fc792a9c3c84521ec12dcf37423f0a20241c9d293")
    }

    @Test(arguments: try load())
    func sealingReproducesTheVectorByteForByte(_ v: Vector) throws {
        let signer = SigningKey(seed: try #require(Hex.decode(v.authorSeed)))
        #expect(signer.publicKey.hex == v.authorKey)
        let key = EpochKey(epoch: v.epoch, key: SecretBytes(try #require(Hex.decode(v.epochKey))))
        let nonce: [UInt8] = try #require(Hex.decode(v.nonce))
        let env = try SyncEnvelope.seal(
            body: Array(v.body.utf8), family: try #require(FamilyID(string: v.family)), signer: signer, seq: v.seq,
            previous: try #require(EventID(hex: v.previous)), hlc: HLC(rawValue: try #require(UInt64(v.hlc))), key: key,
            nonce: nonce)
        #expect(Hex.encode(env.bytes) == v.envelope)
        #expect(env.id.hex == v.id)
        #expect(Hex.encode(env.signature) == v.signature)
    }

    @Test(arguments: try loadAll())
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

    @Test(arguments: ["vectors", "vectors-v1"])
    func vectorsFormOneChain(_ name: String) throws {
        let vs = try Self.file(name).vectors
        for (a, b) in zip(vs, vs.dropFirst()) {
            #expect(b.previous == a.id)
            #expect(UInt64(b.hlc)! > UInt64(a.hlc)!)
        }
    }

    /// The two versions' vectors are the same events but for the version
    /// byte, and their ids follow each version's rule: version 2 hashes
    /// the signed bytes, version 1 all of them.
    @Test func eachVersionHasItsOwnIDRule() throws {
        let v2 = try Self.file("vectors").vectors
        let v1 = try Self.file("vectors-v1").vectors
        #expect(v2.count == v1.count)
        for (a, b) in zip(v2, v1) {
            let bytes2: [UInt8] = try #require(Hex.decode(a.envelope))
            let bytes1: [UInt8] = try #require(Hex.decode(b.envelope))
            #expect(bytes2[8] == 2 && bytes1[8] == 1)
            #expect(a.id == EventID.of(signedBytes: Array(bytes2.dropLast(64))).hex)
            #expect(b.id == EventID.of(signedBytes: bytes1).hex)
            #expect(a.body == b.body && a.nonce == b.nonce && a.hlc == b.hlc)
        }
    }
}
