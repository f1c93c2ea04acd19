internal import CSodium
import Foundation

/// Where libsodium is initialised, and its general primitives (random bytes,
/// hashing, signing, wiping). The key types (``SigningKey``, ``BoxKey``) and
/// ``SyncEnvelope`` call their own primitives, after ``ensureReady()``.
///
/// `sodium_init()` is idempotent and thread-safe.
public enum Sodium {
    /// `sodium_init()` result, evaluated once.
    static let ready: Bool = sodium_init() >= 0

    static func ensureReady() {
        precondition(ready, "libsodium failed to initialise (sodium_init)")
    }

    /// Cryptographically secure random bytes (`randombytes_buf`).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        ensureReady()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return out
    }

    /// Random key material, generated straight into wiped memory.
    public static func randomSecret(_ count: Int) -> SecretBytes {
        ensureReady()
        return SecretBytes(count: count) { randombytes_buf($0.baseAddress!, count) }
    }

    /// Keyed BLAKE2b (`crypto_generichash` with a key) written into `out`
    /// (16 to 64 bytes; straight into ``SecretBytes`` when the result is key
    /// material), keyed with `key` (16 to 64 bytes), over the message that
    /// `feed` hands to `update` part by part (parts that are key material
    /// need not be copied out, and nothing is joined into a new array).
    public static func blake2b(
        into out: UnsafeMutableRawBufferPointer, key: UnsafeRawBufferPointer,
        feed: ((UnsafeRawBufferPointer) -> Void) -> Void
    ) {
        ensureReady()
        precondition((16...64).contains(out.count), "a BLAKE2b output of 16 to 64 bytes")
        precondition((16...64).contains(key.count), "a BLAKE2b key of 16 to 64 bytes")
        withUnsafeTemporaryAllocation(byteCount: crypto_generichash_statebytes(), alignment: 64) { buffer in
            let state = OpaquePointer(buffer.baseAddress!)
            defer { wipe(buffer) }
            _ = crypto_generichash_init(state, key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count, out.count)
            feed { b in
                _ = crypto_generichash_update(state, b.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(b.count))
            }
            _ = crypto_generichash_final(state, out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
        }
    }

    /// Unkeyed BLAKE2b with a 32-byte output (`crypto_generichash`).
    public static func blake2b256(_ data: some ContiguousBytes) -> [UInt8] {
        ensureReady()
        var out = [UInt8](repeating: 0, count: 32)
        data.withUnsafeBytes { input in
            _ = out.withUnsafeMutableBytes { o in
                crypto_generichash(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                    input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                    nil, 0)
            }
        }
        return out
    }

    /// Unkeyed BLAKE2b-256 of all of `data` and of its first `count` bytes,
    /// in one pass over the bytes: the state after the first `count` is
    /// copied (it holds no pointers) and finished apart. The same values as
    /// ``blake2b256(_:)`` of each; a segment's reader needs both (its name
    /// hashes the whole file, its checksum all but the last 32 bytes).
    public static func blake2b256(_ data: UnsafeRawBufferPointer, andOfFirst count: Int) -> (all: [UInt8], first: [UInt8]) {
        ensureReady()
        precondition((0...data.count).contains(count), "a prefix of the data")
        var all = [UInt8](repeating: 0, count: 32)
        var first = [UInt8](repeating: 0, count: 32)
        let size = crypto_generichash_statebytes()
        // The copy 64-byte aligned as the state is, whatever its size.
        let stride = (size + 63) & ~63
        withUnsafeTemporaryAllocation(byteCount: stride + size, alignment: 64) { buffer in
            let state = OpaquePointer(buffer.baseAddress!)
            let copy = OpaquePointer(buffer.baseAddress!.advanced(by: stride))
            let bytes = data.baseAddress?.assumingMemoryBound(to: UInt8.self)
            _ = crypto_generichash_init(state, nil, 0, 32)
            _ = crypto_generichash_update(state, bytes, UInt64(count))
            UnsafeMutableRawPointer(copy).copyMemory(from: buffer.baseAddress!, byteCount: size)
            _ = first.withUnsafeMutableBytes { crypto_generichash_final(copy, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 32) }
            _ = crypto_generichash_update(state, bytes.map { $0 + count }, UInt64(data.count - count))
            _ = all.withUnsafeMutableBytes { crypto_generichash_final(state, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 32) }
        }
        return (all, first)
    }

    /// Bare Ed25519 detached signature (`crypto_sign_detached`).
    static func sign(_ message: UnsafeRawBufferPointer, secretKey: SecretBytes) -> [UInt8] {
        ensureReady()
        var sig = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
        secretKey.withUnsafeBytes { sk in
            _ = sig.withUnsafeMutableBytes { s in
                crypto_sign_detached(
                    s.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                    message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                    sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return sig
    }

    /// Ed25519 detached verification (`crypto_sign_verify_detached`). A bad
    /// signature is a result, not an error.
    public static func verify(
        signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, publicKey: [UInt8]
    ) -> Bool {
        ensureReady()
        guard signature.count == Int(crypto_sign_BYTES), publicKey.count == Int(crypto_sign_PUBLICKEYBYTES)
        else { return false }
        return publicKey.withUnsafeBytes { pk in
            crypto_sign_verify_detached(
                signature.baseAddress!.assumingMemoryBound(to: UInt8.self),
                message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                pk.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }

    /// Constant-time comparison (`sodium_memcmp`).
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        ensureReady()
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }

    /// Overwrites memory with zeros in a way the optimiser keeps (`sodium_memzero`).
    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }

    /// Ed25519 verifications per second on `threads` threads at once, each
    /// verifying for `duration` seconds: what the machine's cores really
    /// give together (a virtual machine's cores may share a physical one,
    /// which "one core × cores" does not see).
    public static func bareVerificationRate(duration: Double = 0.5, threads: Int, repeated: Bool = false, lengths: [Int]) -> Double {
        guard threads > 1 else { return bareVerificationRate(duration: duration, repeated: repeated, lengths: lengths) }
        // Each thread verifies for `duration`; the rate is their sum.
        final class Sum: @unchecked Sendable {
            let lock = NSLock()
            var value = 0.0
        }
        let sum = Sum()
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            let rate = bareVerificationRate(duration: duration, repeated: repeated, lengths: lengths)
            sum.lock.withLock { sum.value += rate }
        }
        return sum.value
    }

    /// The bound's inputs: `count` different messages, of the `lengths`
    /// given in turn (those of the events measured against the bound: the
    /// hashing inside a signature and a verification takes longer for a
    /// longer message), signed by one key, as a device's events are.
    /// Verifying one signature again and again runs 3-6 % faster than
    /// verifying different ones (the processor learns the variable-time
    /// arithmetic's branches); an ingest never verifies one twice.
    private static func boundInputs(_ count: Int, lengths: [Int]) -> (SigningKey, [[UInt8]], [[UInt8]]) {
        precondition(!lengths.isEmpty && lengths.allSatisfy { $0 >= 0 }, "the bound needs message lengths")
        let key = SigningKey(seed: [UInt8](repeating: 7, count: 32))
        var rng = SplitMixRNG(seed: 7)
        let messages = (0..<count).map { i in (0..<lengths[i % lengths.count]).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        return (key, messages, messages.map { m in m.withUnsafeBytes { key.sign($0) } })
    }

    /// Number of Ed25519 verifications per second on one core with libsodium
    /// alone: the bound the ingest benchmark compares itself to (× cores).
    /// With `repeated`, of one signature verified again and again (what the
    /// bound was before: for the record).
    public static func bareVerificationRate(duration: Double = 0.5, repeated: Bool = false, lengths: [Int]) -> Double {
        let (key, messages, signatures) = boundInputs(repeated ? 1 : 256, lengths: lengths)
        // A signature that fails is rejected early, faster than a check: the bound must time good ones.
        precondition(zip(signatures, messages).allSatisfy { s, m in
            s.withUnsafeBytes { s in m.withUnsafeBytes { m in verify(signature: s, message: m, publicKey: key.publicKey.bytes) } }
        }, "the bound's signatures must verify")
        let start = Date()
        var count = 0
        while Date().timeIntervalSince(start) < duration {
            for i in 0..<64 {
                let k = (count + i) % messages.count
                _ = signatures[k].withUnsafeBytes { s in messages[k].withUnsafeBytes { m in verify(signature: s, message: m, publicKey: key.publicKey.bytes) } }
            }
            count += 64
        }
        return Double(count) / Date().timeIntervalSince(start)
    }

    /// Number of Ed25519 signatures per second this machine makes with libsodium
    /// alone, measured over `duration` seconds: the bound the append benchmark
    /// compares itself to. Of different messages, as for verification.
    public static func bareSigningRate(duration: Double = 0.5, lengths: [Int]) -> Double {
        let (key, messages, _) = boundInputs(256, lengths: lengths)
        let start = Date()
        var count = 0
        while Date().timeIntervalSince(start) < duration {
            for i in 0..<64 { _ = messages[(count + i) % messages.count].withUnsafeBytes { key.sign($0) } }
            count += 64
        }
        return Double(count) / Date().timeIntervalSince(start)
    }
}

/// Incremental unkeyed BLAKE2b-256 (`crypto_generichash_init/update/final`),
/// for hashing a stream (a digest of projected state) without holding it.
/// Owns its (64-byte aligned) libsodium state.
public final class Blake2bHasher {
    private let state: UnsafeMutableRawPointer

    public init() {
        Sodium.ensureReady()
        state = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        crypto_generichash_init(OpaquePointer(state), nil, 0, 32)
    }

    deinit {
        Sodium.wipe(UnsafeMutableRawBufferPointer(start: state, count: crypto_generichash_statebytes()))
        state.deallocate()
    }

    public func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { b in
            _ = crypto_generichash_update(OpaquePointer(state), b.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(b.count))
        }
    }

    /// Feeds a length-prefixed item, so that item boundaries are part of the hash.
    public func update(item bytes: [UInt8]) {
        update(SyncEnvelopeBytes.u64(UInt64(bytes.count)))
        update(bytes)
    }

    /// ``update(item:)-([UInt8])`` of bytes held elsewhere, without a copy.
    public func update(item bytes: UnsafeRawBufferPointer) {
        withUnsafeBytes(of: UInt64(bytes.count).bigEndian) { update(unsafe: $0) }
        update(unsafe: bytes)
    }

    private func update(unsafe b: UnsafeRawBufferPointer) {
        _ = crypto_generichash_update(OpaquePointer(state), b.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(b.count))
    }

    /// The 32-byte hash. Call once.
    public func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = out.withUnsafeMutableBytes { crypto_generichash_final(OpaquePointer(state), $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 32) }
        return out
    }
}

@available(*, unavailable)
extension Blake2bHasher: Sendable {}

enum SyncEnvelopeBytes {
    static func u64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
}
