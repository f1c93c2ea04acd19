import Envelope
import Foundation
import PropertySeeds
import Testing

struct SyncEnvelopeTests {
    static var signer: SigningKey { SigningKey(seed: [UInt8](repeating: 9, count: 32)) }
    static let family = FamilyID(string: "11111111-2222-4333-8444-555555555555")!

    static func sample(seq: UInt64 = 1, previous: EventID = .none, body: String = #"{"schema":1,"type":"record.put"}"#) throws -> (SyncEnvelope, EpochKey) {
        let key = EpochKey.generate(epoch: 2)
        let env = try SyncEnvelope.seal(
            body: Array(body.utf8), family: family, signer: signer, seq: seq, previous: previous,
            hlc: HLC(milliseconds: 1_795_000_000_123, counter: 7), key: key)
        return (env, key)
    }

    @Test func roundTrip() throws {
        let (env, key) = try Self.sample()
        let decoded = try SyncEnvelope(decoding: env.bytes)
        #expect(decoded.bytes == env.bytes)
        #expect(decoded.id == env.id)
        #expect(decoded.version == 2)
        #expect(decoded.id == EventID.of(signedBytes: Array(env.bytes.dropLast(64))))
        #expect(decoded.hasValidSignature)
        #expect(decoded.author == Self.signer.publicKey)
        #expect(decoded.family == Self.family)
        #expect(decoded.hlc == HLC(milliseconds: 1_795_000_000_123, counter: 7))
        #expect(decoded.epoch == 2)
        #expect(String(decoding: try decoded.openBody(with: key), as: UTF8.self) == #"{"schema":1,"type":"record.put"}"#)
    }

    /// Decoding next to another envelope shares its family and author only
    /// when they are the same bytes: every pair of authors and families
    /// decodes to what decoding alone gives, and the previous id and the
    /// nonce, read from the bytes, are the sealed ones.
    @Test func aNeighboursFamilyAndAuthorAreSharedOnlyWhenTheyAreTheSame() throws {
        let families = [Self.family, FamilyID(string: "11111111-2222-4333-8444-555555555556")!]
        let signers = [Self.signer, SigningKey(seed: [UInt8](repeating: 10, count: 32))]
        var all: [SyncEnvelope] = []
        for f in families {
            for signer in signers {
                let previous = EventID(bytes: [UInt8](repeating: UInt8(all.count + 1), count: 32))
                let nonce = [UInt8](repeating: UInt8(all.count + 40), count: 24)
                all.append(try SyncEnvelope.seal(body: Array(#"{"schema":1,"type":"x"}"#.utf8), family: f, signer: signer, seq: 2, previous: previous,
                                                 hlc: HLC(milliseconds: 1_795_000_000_000, counter: 0), key: EpochKey.generate(epoch: 1), nonce: nonce))
                #expect(all.last!.previous == previous && all.last!.nonce == nonce)
            }
        }
        for a in all {
            for b in all + [nil] as [SyncEnvelope?] {
                let shared = try SyncEnvelope(decoding: a.bytes, storedID: a.id, sharingWith: b)
                #expect(shared == (try SyncEnvelope(decoding: a.bytes)))
                #expect(shared.family == a.family && shared.author == a.author && shared.previous == a.previous && shared.nonce == a.nonce)
            }
        }
    }

    /// Bytes read back from a log with their stored id decode to the same
    /// envelope without hashing again; the id is the log's, and the format
    /// checks still apply.
    @Test func decodingWithAStoredIDTakesTheIDAndChecksTheRest() throws {
        let (env, key) = try Self.sample()
        let back = try SyncEnvelope(decoding: env.bytes, storedID: env.id)
        #expect(back == (try SyncEnvelope(decoding: env.bytes)))
        #expect(try back.openBody(with: key) == (try env.openBody(with: key)))
        let other = EventID(bytes: [UInt8](repeating: 7, count: 32))
        #expect(try SyncEnvelope(decoding: env.bytes, storedID: other).id == other, "taken as given: replay is what compares ids with bytes")
        #expect(throws: EnvelopeError.badTag) { try SyncEnvelope(decoding: [0] + env.bytes.dropFirst(), storedID: env.id) }
        #expect(throws: EnvelopeError.truncated(count: 10)) { try SyncEnvelope(decoding: Array(env.bytes.prefix(10)), storedID: env.id) }
    }

    /// Every single bit of an envelope, flipped: either the bytes no longer
    /// parse or the signature no longer verifies. Nothing slips through.
    @Test func everyFlippedBitIsDetected() throws {
        let (env, _) = try Self.sample()
        var undetected: [Int] = []
        for bit in 0..<(env.bytes.count * 8) {
            var b = env.bytes
            b[bit / 8] ^= UInt8(1 << (bit % 8))
            if let d = try? SyncEnvelope(decoding: b), d.hasValidSignature { undetected.append(bit) }
        }
        #expect(undetected.isEmpty, "bits whose flip went unnoticed: \(undetected)")
    }

    /// A version-2 id names the signed bytes: any change to them changes
    /// it, a change to the signature does not (and the signature then fails,
    /// so such bytes never enter a log). Version 1 hashed the signature too.
    @Test func theIDNamesTheSignedBytesNotTheSignature() throws {
        let (env, _) = try Self.sample()
        let signed = env.bytes.count - 64
        for i in stride(from: 0, to: signed, by: 7) {
            var b = env.bytes
            b[i] ^= 0x10
            guard let d = try? SyncEnvelope(decoding: b) else { continue }
            #expect(d.id != env.id, "byte \(i) changed and the id did not")
        }
        for i in signed..<env.bytes.count {
            var b = env.bytes
            b[i] ^= 0x01
            let d = try SyncEnvelope(decoding: b)
            #expect(d.id == env.id)
            #expect(!d.hasValidSignature)
        }
        // The same bytes read as version 1 (signed again, as version 1 would
        // be): the id covers the signature.
        var v1 = env.bytes
        v1[8] = 1
        v1.replaceSubrange(signed..., with: v1.prefix(signed).withUnsafeBytes { Self.signer.sign($0) })
        let old = try SyncEnvelope(decoding: v1)
        #expect(old.hasValidSignature)
        #expect(old.version == 1)
        #expect(old.id == EventID.of(signedBytes: v1))
        v1[signed] ^= 0x01
        #expect(try SyncEnvelope(decoding: v1).id != old.id)
    }

    @Test func wrongKeyOrEpochDoesNotOpen() throws {
        let (env, key) = try Self.sample()
        #expect(throws: EnvelopeError.decryptionFailed) { try env.openBody(with: EpochKey.generate(epoch: 2)) }
        #expect(throws: EnvelopeError.decryptionFailed) { try env.openBody(with: EpochKey(epoch: 3, key: key.key)) }
    }

    @Test func malformedInputIsNamed() throws {
        let (env, _) = try Self.sample()
        #expect(throws: EnvelopeError.truncated(count: 10)) { try SyncEnvelope(decoding: Array(env.bytes.prefix(10))) }
        #expect(throws: EnvelopeError.badTag) { try SyncEnvelope(decoding: [0x58] + env.bytes.dropFirst()) }
        var v = env.bytes; v[8] = 3
        #expect(throws: EnvelopeError.unsupportedVersion(3)) { try SyncEnvelope(decoding: v) }
        var v0 = env.bytes; v0[8] = 0
        #expect(throws: EnvelopeError.unsupportedVersion(0)) { try SyncEnvelope(decoding: v0) }
        var f = env.bytes; f[9] = 1
        #expect(throws: EnvelopeError.reservedFlags(1)) { try SyncEnvelope(decoding: f) }
        #expect(throws: EnvelopeError.lengthMismatch(declared: env.ciphertextCount, actual: env.ciphertextCount - 1)) {
            try SyncEnvelope(decoding: Array(env.bytes.dropLast()))
        }
        #expect(throws: EnvelopeError.lengthMismatch(declared: env.ciphertextCount, actual: env.ciphertextCount + 1)) {
            try SyncEnvelope(decoding: env.bytes + [0])
        }
        var z = env.bytes; for i in 58..<66 { z[i] = 0 }
        #expect(throws: EnvelopeError.zeroSequence) { try SyncEnvelope(decoding: z) }
        var p = env.bytes; p[70] = 1   // seq 1 naming a previous event
        #expect(throws: EnvelopeError.previousMismatch(seq: 1)) { try SyncEnvelope(decoding: p) }
        var big = env.bytes; big[134] = 0x7f
        #expect(throws: EnvelopeError.tooLarge(0x7f00_0000 + env.ciphertextCount)) { try SyncEnvelope(decoding: big) }
    }

    @Test func randomBytesNeverCrashTheDecoder() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let n = Int.random(in: 0..<400, using: &rng)
            var b = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if n >= 9, Bool.random(using: &rng) { b.replaceSubrange(0..<9, with: SyncEnvelope.tag + [1]) }
            if let e = try? SyncEnvelope(decoding: b) { #expect(!e.hasValidSignature) }
        }
    }

    @Test func laterEventsNeedAPrevious() throws {
        let (first, _) = try Self.sample()
        let (second, _) = try Self.sample(seq: 2, previous: first.id)
        #expect(second.previous == first.id)
        #expect(second.hasValidSignature)
    }

    @Test func bodyKeepsUnknownKeysAndRejectsNonObjects() throws {
        let body = try EventBody(decoding: Array(#"{"type":"record.put","schema":2,"future":{"x":[1,2.5,"y",null,true]}}"#.utf8))
        #expect(body.schema == 2)
        #expect(body["future"] == .object(["x": .array([.int(1), .double(2.5), .string("y"), .null, .bool(true)])]))
        let again = try EventBody(decoding: body.encoded())
        #expect(again == body)
        #expect(throws: EnvelopeError.badBody("not a JSON object")) { try EventBody(decoding: Array("[1]".utf8)) }
        #expect(throws: EnvelopeError.badBody("not JSON")) { try EventBody(decoding: Array("{".utf8)) }
        #expect(throws: EnvelopeError.badBody("missing \"type\"")) { try EventBody(decoding: Array(#"{"schema":1}"#.utf8)) }
        #expect(throws: EnvelopeError.badBody("missing \"schema\"")) { try EventBody(decoding: Array(#"{"type":"a"}"#.utf8)) }
        #expect(throws: EnvelopeError.badBody("\"schema\" is 2147483648, not a whole number from 1 to 2147483647")) {
            try EventBody(decoding: Array(#"{"type":"a","schema":2147483648}"#.utf8))
        }
    }
}

struct JSONParserTests {
    @Test func agreesWithFoundationOnValidJSONAndRefusesTheRest() throws {
        let samples = [
            #"{"a":1,"b":[true,false,null],"c":{"d":"e\n\"f\" \u00e9 \ud83e\udd55"},"g":-0.5,"h":1e3,"i":9007199254740993}"#,
            #"[]"#, #"{}"#, #" [1, 2.5, "x"] "#, #""\/\b\f\r\t""#,
        ]
        for s in samples {
            let mine = try #require(JSONValue.parse(s), "refused \(s)")
            let theirs = try JSONDecoder().decode(JSONValue.self, from: Data(s.utf8))
            #expect(mine.jsonText == theirs.jsonText || s.contains("1e3"), "\(s): \(mine.jsonText) vs \(theirs.jsonText)")
        }
        #expect(JSONValue.parse(#"{"a":1,"a":2}"#) == nil, "duplicate keys must be refused")
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "tru", "\"\u{01}\"", "[1] 2", "\"\\x\"", "\"\\ud800\""] {
            #expect(JSONValue.parse(bad) == nil, "accepted \(bad)")
        }
        #expect(JSONValue.parse("9007199254740993") == .int(9_007_199_254_740_993))
        // Foundation reads 2.0 as the integer 2; a fraction written is kept as one.
        #expect(JSONValue.parse("2.0") == .double(2))
    }

    /// A string is quoted as escaping it byte by byte would quote it, the
    /// bytes that need an escape anywhere in the eight-byte words the fast
    /// check reads (and in the bytes after the last whole word), and the
    /// quoted text reads back as the string.
    @Test(arguments: PropertySeeds.range(0..<20))
    func quotingEscapesExactlyTheBytesThatNeedIt(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        let pieces = ["a", "Z", "0", " ", "é", "🍼", "\"", "\\", "\n", "\t", "\r", "\u{01}", "\u{1F}", "\u{7F}", "/", "~"]
        for _ in 0..<200 {
            var s = ""
            for _ in 0..<Int(rng.next() % 40) {
                // Mostly plain bytes, so that whole plain words occur around the odd escape.
                s += rng.next() % 4 == 0 ? pieces[Int(rng.next() % UInt64(pieces.count))] : pieces[Int(rng.next() % 4)]
            }
            var expected: [UInt8] = [UInt8(ascii: "\"")]
            for b in s.utf8 {
                switch b {
                case UInt8(ascii: "\""): expected += Array(#"\""#.utf8)
                case UInt8(ascii: "\\"): expected += Array(#"\\"#.utf8)
                case UInt8(ascii: "\n"): expected += Array(#"\n"#.utf8)
                case UInt8(ascii: "\r"): expected += Array(#"\r"#.utf8)
                case UInt8(ascii: "\t"): expected += Array(#"\t"#.utf8)
                case ..<0x20: expected += Array(String(format: "\\u%04x", b).utf8)
                default: expected.append(b)
                }
            }
            expected.append(UInt8(ascii: "\""))
            var quoted: [UInt8] = []
            JSONValue.quote(s, into: &quoted)
            #expect(quoted == expected, "seed \(seed): \(s.debugDescription)")
            #expect(JSONValue.parse(quoted) == .string(s), "seed \(seed): \(s.debugDescription) does not read back")
        }
    }

    /// Random values written canonically read back equal; every strict
    /// prefix of their text, and the text with one byte changed, is either
    /// refused or read as some value, never read past its end.
    @Test(arguments: PropertySeeds.range(0..<30))
    func randomValuesRoundTripAndDamagedTextIsHandled(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        func value(_ depth: Int) -> JSONValue {
            let pick = rng.next() % (depth < 3 ? 7 : 5)
            switch pick {
            case 0: return .null
            case 1: return .bool(rng.next() % 2 == 0)
            case 2: return .int(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 64))
            case 3: return .double(Double(Int64(bitPattern: rng.next()) >> 20) / 1024)
            case 4:
                let alphabet = Array("aZ09 \"\\/\n\t\u{1}é宝🥕-_$")
                return .string(String((0..<Int(rng.next() % 12)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }))
            case 5: return .array((0..<Int(rng.next() % 5)).map { _ in value(depth + 1) })
            default:
                var o: [String: JSONValue] = [:]
                for k in 0..<Int(rng.next() % 5) { o["k\(k)\(rng.next() % 3)"] = value(depth + 1) }
                return .object(o)
            }
        }
        for _ in 0..<20 {
            let v = value(0)
            let text = v.jsonBytes
            #expect(JSONValue.parse(text)?.jsonBytes == text, "seed \(seed): \(v.jsonText) did not read back")
            if case .object = v {
                for n in 0..<text.count { #expect(JSONValue.parse(Array(text[0..<n])) == nil, "a prefix of \(v.jsonText) was accepted") }
            }
            if !text.isEmpty {
                var damaged = text
                damaged[Int(rng.next() % UInt64(text.count))] = UInt8(truncatingIfNeeded: rng.next())
                _ = JSONValue.parse(damaged)   // refused or read: either way, within its bytes
            }
        }
    }
}
