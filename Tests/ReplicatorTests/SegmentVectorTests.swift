import Envelope
import Foundation
import Replicator
import Testing

/// The segment vectors in Fixtures/segments.json were written by an
/// independent implementation of docs/format.md's segment layout and file
/// name (scripts/make-segment-vector.py, on Python's hashlib), over the
/// envelope vectors: famctl writes the same bytes under the same name,
/// and reads them back.
struct SegmentVectorTests {
    struct Vector: Decodable {
        let name, segment, fileName, family, author: String
        let envelopes: [String]
    }

    struct File: Decodable {
        let format: String
        let vectors: [Vector]
    }

    static func load() throws -> [Vector] {
        let url = try #require(Bundle.module.url(forResource: "segments", withExtension: "json", subdirectory: "Fixtures"))
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
        #expect(file.format == "famctl segment v1")
        return file.vectors
    }

    /// The envelope vectors, by name (the same file the envelope tests read).
    static func envelopes() throws -> [String: [UInt8]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("EnvelopeTests/Fixtures/vectors.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let vectors = try #require(object["vectors"] as? [[String: Any]])
        var out: [String: [UInt8]] = [:]
        for v in vectors {
            out[try #require(v["name"] as? String)] = try #require(Hex.decode(try #require(v["envelope"] as? String)))
        }
        return out
    }

    @Test func famctlWritesAndReadsTheVectors() throws {
        let vectors = try Self.load()
        #expect(vectors.count == 2)
        let known = try Self.envelopes()
        for v in vectors {
            let bytes = try #require(Hex.decode(v.segment))
            let envs = try v.envelopes.map { try SyncEnvelope(decoding: try #require(known[$0])) }
            // Written: the same bytes, under the same name.
            let segment = Segment(envelopes: envs)
            let encoded = segment.encoded()
            #expect(encoded == bytes, "\(v.name): famctl's bytes differ from the vector's")
            #expect(segment.name(for: encoded).description == v.fileName, "\(v.name)")
            // Read: the name parses, promises these bytes, and the file holds the envelopes as signed.
            let name = try #require(SegmentName(parsing: v.fileName))
            #expect(name.matches(bytes) && name.author.hex == v.author && name.firstSeq == envs[0].seq && name.lastSeq == envs.last!.seq)
            let read = try Segment(decoding: bytes)
            #expect(read.events == envs.map(\.bytes) && read.family.description == v.family && read.author.hex == v.author, "\(v.name)")
            // A byte flipped in the last event: the checksum says so.
            var damaged = bytes
            damaged[damaged.count - 40] ^= 1
            #expect(throws: SegmentError.checksum) { try Segment(decoding: damaged) }
        }
    }
}
