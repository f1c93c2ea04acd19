internal import CSodium

/// One signed, encrypted event: the unit of the log and of replication.
///
/// Layout (version 2, integers big-endian; see `docs/format.md`):
///
/// | offset | size | field |
/// | ---: | ---: | --- |
/// | 0 | 8 | tag `famctlev` (domain separation) |
/// | 8 | 1 | version = 2 (1 is read too) |
/// | 9 | 1 | flags = 0 (reserved) |
/// | 10 | 16 | family id |
/// | 26 | 32 | author key (Ed25519 public key) |
/// | 58 | 8 | seq (per author, from 1) |
/// | 66 | 32 | previous event id (zeros when seq = 1) |
/// | 98 | 8 | HLC |
/// | 106 | 4 | key epoch |
/// | 110 | 24 | nonce |
/// | 134 | 4 | ciphertext length *n* |
/// | 138 | *n* | XChaCha20-Poly1305 ciphertext; associated data = bytes 0..<138 |
/// | 138+*n* | 64 | Ed25519 signature over bytes 0..<138+*n* |
///
/// The event id is BLAKE2b-256 of bytes `0..<138+n`, the bytes the signature
/// covers (a version-1 envelope's id hashed the signature too). The value
/// keeps the exact bytes it was decoded from; verification and the id use
/// those bytes and never a re-encoding.
public struct SyncEnvelope: Sendable, Hashable {
    public static let tag: [UInt8] = Array("famctlev".utf8)
    /// ``tag`` as one word, as the first eight bytes are compared with it.
    static let tagWord: UInt64 = tag.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    /// The version famctl writes. Version 1 (read, no longer written)
    /// differs only in its id, which hashes the signature too.
    public static let version: UInt8 = 2
    /// The versions famctl reads.
    public static let readableVersions: ClosedRange<UInt8> = 1...2
    public static let headerCount = 138
    public static let tagCount = 16
    public static let signatureCount = 64
    public static let minimumCount = headerCount + tagCount + signatureCount
    /// Bodies above 1 MiB are refused: photos travel as separate blobs.
    public static let maximumCiphertext = 1 << 20
    /// The largest seq an envelope may carry: what a signed 64-bit integer
    /// (SQLite's) holds, 2^63 − 1.
    public static let maximumSeq = UInt64(Int64.max)
    /// The largest body an event carries: ``maximumCiphertext`` less the tag
    /// (1 048 560 bytes).
    public static let maximumBody = maximumCiphertext - tagCount

    /// The signed bytes, verbatim.
    public let bytes: [UInt8]
    public let id: EventID
    public let family: FamilyID
    public let author: DeviceID
    public let seq: UInt64
    public let hlc: HLC
    public let epoch: UInt32
    /// The previous event's id (`EventID.none` for an author's first event).
    /// Read from the bytes when asked for, as is the nonce: a rebuild needs
    /// neither, and two arrays an event made and freed were a measurable
    /// part of its worker.
    public var previous: EventID { EventID(bytes: Array(bytes[66..<98])) }
    /// The XChaCha20-Poly1305 nonce.
    public var nonce: [UInt8] { Array(bytes[110..<134]) }

    /// Parses the structure of an envelope. Says nothing about its signature.
    /// - Throws: ``EnvelopeError`` when the bytes are not a well-formed envelope of a version this build reads.
    public init(decoding bytes: [UInt8]) throws(EnvelopeError) {
        try self.init(decoding: bytes, id: nil)
    }

    /// Decodes bytes read back from a log that stored them with their id
    /// (computed by ``init(decoding:)`` when they entered it): the id is
    /// taken as given rather than hashed again. A rebuild reads every event
    /// this way; `replay` checks stored ids against their bytes.
    public init(decoding bytes: [UInt8], storedID: EventID) throws(EnvelopeError) {
        try self.init(decoding: bytes, id: storedID)
    }

    /// ``init(decoding:storedID:)``, sharing the family and author of
    /// `neighbour` (an envelope decoded just before, most often by the same
    /// author in the same family) when they are the same bytes, rather than
    /// making arrays of its own: a rebuild reads the log this way.
    public init(decoding bytes: [UInt8], storedID: EventID, sharingWith neighbour: SyncEnvelope?) throws(EnvelopeError) {
        try self.init(decoding: bytes, id: storedID, neighbour: neighbour)
    }

    private init(decoding bytes: [UInt8], id: EventID?, neighbour: SyncEnvelope? = nil) throws(EnvelopeError) {
        let checked = bytes.withUnsafeBytes { b -> Result<UInt64, EnvelopeError> in
            do throws(EnvelopeError) { return .success(try Self.checkStructure(of: b)) } catch { return .failure(error) }
        }
        let seq = try checked.get()

        self.bytes = bytes
        self.id = id ?? Self.id(of: bytes)
        if let neighbour, Self.same(bytes, 10, neighbour.family.bytes) {
            self.family = neighbour.family
        } else {
            self.family = FamilyID(bytes: Array(bytes[10..<26]))
        }
        if let neighbour, Self.same(bytes, 26, neighbour.author.bytes) {
            self.author = neighbour.author
        } else {
            self.author = DeviceID(bytes: Array(bytes[26..<58]))
        }
        self.seq = seq
        self.hlc = HLC(rawValue: Self.uint(bytes, at: 98, count: 8))
        self.epoch = UInt32(Self.uint(bytes, at: 106, count: 4))
    }

    /// Checks what ``init(decoding:)`` checks of the structure (length, tag,
    /// version, flags, the declared ciphertext length, the seq and the
    /// previous id's presence) on bytes in place, without hashing the id or
    /// making arrays, and returns the seq. A segment's reader checks each of
    /// its envelopes so (family, author and seq in place), and leaves the
    /// id to the ingest, which decodes every envelope again.
    /// - Throws: ``EnvelopeError``, as ``init(decoding:)`` would.
    public static func checkStructure(of bytes: UnsafeRawBufferPointer) throws(EnvelopeError) -> UInt64 {
        guard bytes.count >= Self.minimumCount else { throw .truncated(count: bytes.count) }
        guard bytes.loadUnaligned(as: UInt64.self) == Self.tagWord else { throw .badTag }
        guard Self.readableVersions.contains(bytes[8]) else { throw .unsupportedVersion(bytes[8]) }
        guard bytes[9] == 0 else { throw .reservedFlags(bytes[9]) }
        let declared = Int(Self.uint(bytes, at: 134, count: 4))
        let actual = bytes.count - Self.headerCount - Self.signatureCount
        guard declared <= Self.maximumCiphertext else { throw .tooLarge(declared) }
        guard declared == actual else { throw .lengthMismatch(declared: declared, actual: actual) }
        let seq = Self.uint(bytes, at: 58, count: 8)
        guard seq >= 1 else { throw .zeroSequence }
        guard seq <= Self.maximumSeq else { throw .sequenceTooLarge(seq) }
        let firstEvent = bytes[66..<98].allSatisfy { $0 == 0 }
        guard (seq == 1) == firstEvent else { throw .previousMismatch(seq: seq) }
        return seq
    }

    /// The event id of well-formed envelope bytes: BLAKE2b-256 of the
    /// signed bytes `0..<138 + n` (version 2), or of all the bytes, the
    /// signature included (version 1).
    static func id(of bytes: [UInt8]) -> EventID {
        if bytes[8] == 1 { return EventID.of(signedBytes: bytes) }
        return bytes.withUnsafeBytes { EventID.of(signedBytes: UnsafeRawBufferPointer(rebasing: $0[..<(bytes.count - signatureCount)])) }
    }

    /// Whether `bytes` hold `part` at `offset`.
    /// (`part` is a family or device id: 16 or 32 bytes, compared eight at a time.)
    private static func same(_ bytes: [UInt8], _ offset: Int, _ part: [UInt8]) -> Bool {
        precondition(part.count % 8 == 0 && offset + part.count <= bytes.count)
        return bytes.withUnsafeBytes { b in
            part.withUnsafeBytes { p in
                var i = 0
                while i < p.count {
                    if b.loadUnaligned(fromByteOffset: offset + i, as: UInt64.self) != p.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
                    i += 8
                }
                return true
            }
        }
    }

    /// The version byte.
    public var version: UInt8 { bytes[8] }

    /// The number of ciphertext bytes (body plus the 16-byte Poly1305 tag).
    public var ciphertextCount: Int { bytes.count - Self.headerCount - Self.signatureCount }
    var signedCount: Int { bytes.count - Self.signatureCount }

    /// Whether the Ed25519 signature by ``author`` covers exactly ``bytes``.
    public var hasValidSignature: Bool {
        bytes.withUnsafeBytes { all in
            Sodium.verify(
                signature: UnsafeRawBufferPointer(rebasing: all[signedCount...]),
                message: UnsafeRawBufferPointer(rebasing: all[..<signedCount]),
                publicKey: author.bytes)
        }
    }

    /// The signature bytes.
    public var signature: [UInt8] { Array(bytes[signedCount...]) }

    /// Decrypts the body with the key of this envelope's epoch
    /// (`crypto_aead_xchacha20poly1305_ietf_decrypt`).
    /// - Throws: ``EnvelopeError/decryptionFailed`` for the wrong key or altered bytes.
    public func openBody(with key: EpochKey) throws(EnvelopeError) -> [UInt8] {
        guard key.epoch == epoch else { throw .decryptionFailed }
        Sodium.ensureReady()
        let n = ciphertextCount
        var plain = [UInt8](repeating: 0, count: n - Self.tagCount)
        var plainCount: UInt64 = 0
        let rc = bytes.withUnsafeBytes { all in
            key.key.withUnsafeBytes { k in
                plain.withUnsafeMutableBytes { p in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        p.baseAddress?.assumingMemoryBound(to: UInt8.self), &plainCount, nil,
                        all.baseAddress!.advanced(by: Self.headerCount).assumingMemoryBound(to: UInt8.self), UInt64(n),
                        all.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(Self.headerCount),
                        all.baseAddress!.advanced(by: 110).assumingMemoryBound(to: UInt8.self),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard rc == 0 else { throw .decryptionFailed }
        return plain
    }

    /// The nonce famctl gives a body: BLAKE2b-192 keyed with `random` (32
    /// fresh random bytes) over the seq and the HLC (8 bytes each,
    /// big-endian) and the body. To anyone without `random` it is as random
    /// as `random`, which must stay secret (whoever knew it could test
    /// guesses of a body against the nonce) and is not used again; and
    /// should the random source repeat itself (a device restored from a
    /// virtual machine's snapshot whose kernel reseeds late or not at all),
    /// a different event still gets a different nonce, so that
    /// XChaCha20-Poly1305 never seals two events with one nonce under one
    /// key. Readers take the nonce as it is written: nothing checks how it
    /// was made.
    public static func hedgedNonce(random: UnsafeRawBufferPointer, seq: UInt64, hlc: HLC, body: [UInt8]) -> [UInt8] {
        precondition(random.count == 32, "32 random bytes")
        var nonce = [UInt8](repeating: 0, count: 24)
        nonce.withUnsafeMutableBytes { out in
            Sodium.blake2b(into: out, key: random) { update in
                withUnsafeBytes(of: seq.bigEndian, update)
                withUnsafeBytes(of: hlc.rawValue.bigEndian, update)
                body.withUnsafeBytes(update)
            }
        }
        return nonce
    }

    /// Builds, encrypts and signs a new envelope
    /// (``prepare(body:family:author:seq:previous:hlc:key:nonce:)``, then
    /// ``Unsigned/signed(by:)``).
    ///
    /// - Parameters:
    ///   - nonce: 24 bytes; when `nil`, ``hedgedNonce(random:seq:hlc:body:)``
    ///     of 32 fresh random bytes. Only test vectors pass one.
    /// - Throws: ``EnvelopeError/tooLarge(_:)`` for a body over the limit.
    public static func seal(
        body: [UInt8], family: FamilyID, signer: SigningKey, seq: UInt64, previous: EventID,
        hlc: HLC, key: EpochKey, nonce: [UInt8]? = nil
    ) throws(EnvelopeError) -> SyncEnvelope {
        try prepare(body: body, family: family, author: signer.publicKey, seq: seq, previous: previous, hlc: hlc, key: key, nonce: nonce)
            .signed(by: signer)
    }

    /// A new envelope's header and ciphertext, and its id, before the
    /// signature: the id does not depend on the signature, so the next
    /// event of the chain can be built at once, and the signatures made
    /// later, on any core and in any order.
    public struct Unsigned: Sendable {
        /// Bytes `0..<138 + n`, with room for the signature.
        let bytes: [UInt8]
        public let id: EventID

        /// The envelope, signed by `signer` (the author named in the header).
        public func signed(by signer: SigningKey) -> SyncEnvelope {
            precondition(signer.publicKey.bytes.elementsEqual(bytes[26..<58]), "signed by another key than its author's")
            var out = bytes
            out += out.withUnsafeBytes { signer.sign($0) }
            do throws(EnvelopeError) {
                return try SyncEnvelope(decoding: out, id: id)
            } catch {
                preconditionFailure("an envelope famctl built does not parse: \(error)")
            }
        }
    }

    /// Builds and encrypts a new envelope, and computes its id
    /// (``seal(body:family:signer:seq:previous:hlc:key:nonce:)`` signs it too).
    public static func prepare(
        body: [UInt8], family: FamilyID, author: DeviceID, seq: UInt64, previous: EventID,
        hlc: HLC, key: EpochKey, nonce: [UInt8]? = nil
    ) throws(EnvelopeError) -> Unsigned {
        let out = try signedBytes(body: body, family: family, author: author, seq: seq, previous: previous, hlc: hlc, key: key, nonce: nonce)
        return Unsigned(bytes: out, id: EventID.of(signedBytes: out))
    }

    /// A version-1 envelope, as famctl wrote them before version 2: for
    /// tests of logs that hold both.
    static func sealVersion1(
        body: [UInt8], family: FamilyID, signer: SigningKey, seq: UInt64, previous: EventID, hlc: HLC, key: EpochKey
    ) throws(EnvelopeError) -> SyncEnvelope {
        var out = try signedBytes(body: body, family: family, author: signer.publicKey, seq: seq, previous: previous, hlc: hlc, key: key,
                                  nonce: nil, version: 1)
        out += out.withUnsafeBytes { signer.sign($0) }
        return try SyncEnvelope(decoding: out)
    }

    /// Bytes `0..<138 + n` of a new envelope: the header and the encrypted
    /// body, with room for the signature.
    private static func signedBytes(
        body: [UInt8], family: FamilyID, author: DeviceID, seq: UInt64, previous: EventID,
        hlc: HLC, key: EpochKey, nonce: [UInt8]?, version: UInt8 = version
    ) throws(EnvelopeError) -> [UInt8] {
        precondition(seq >= 1 && (seq == 1) == (previous == .none), "seq and previous disagree")
        let n = body.count + tagCount
        guard n <= maximumCiphertext else { throw .tooLarge(n) }
        let nonce = nonce ?? Sodium.randomSecret(32).withUnsafeBytes { hedgedNonce(random: $0, seq: seq, hlc: hlc, body: body) }
        precondition(nonce.count == 24, "an XChaCha20 nonce is 24 bytes")
        var out = [UInt8]()
        out.reserveCapacity(headerCount + n + signatureCount)
        out += tag
        out.append(version)
        out.append(0)
        out += family.bytes
        out += author.bytes
        append(seq, count: 8, to: &out)
        out += previous.bytes
        append(hlc.rawValue, count: 8, to: &out)
        append(UInt64(key.epoch), count: 4, to: &out)
        out += nonce
        append(UInt64(n), count: 4, to: &out)
        out += [UInt8](repeating: 0, count: n)
        out.withUnsafeMutableBytes { all in
            key.key.withUnsafeBytes { k in
                body.withUnsafeBytes { m in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        all.baseAddress!.advanced(by: headerCount).assumingMemoryBound(to: UInt8.self), nil,
                        m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                        all.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(headerCount),
                        nil,
                        all.baseAddress!.advanced(by: 110).assumingMemoryBound(to: UInt8.self),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return out
    }

    static func uint<Bytes: RandomAccessCollection<UInt8>>(_ b: Bytes, at offset: Int, count: Int) -> UInt64 where Bytes.Index == Int {
        var v: UInt64 = 0
        for i in offset..<offset + count { v = v << 8 | UInt64(b[i]) }
        return v
    }

    static func append(_ v: UInt64, count: Int, to out: inout [UInt8]) {
        for i in stride(from: count - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    public static func == (a: SyncEnvelope, b: SyncEnvelope) -> Bool { a.bytes == b.bytes }
    public func hash(into h: inout Hasher) { h.combine(id) }
}
