import Envelope

/// A set that may answer "maybe" for a key it never saw, never "no" for one
/// it did: during a rebuild into emptied tables, the entities not yet
/// written need no lookup (about 1.2 MB for a million keys at 1 % false
/// "maybe"s, where a set of the keys would hold them all).
struct BloomFilter {
    private var bits: [UInt64]
    private let mask: UInt64
    private static let probes = 7

    /// Sized for `capacity` keys at about 1 % false positives.
    init(capacity: Int) {
        var n: UInt64 = 1 << 16
        while n < UInt64(max(1, capacity)) * 10 { n <<= 1 }
        bits = [UInt64](repeating: 0, count: Int(n / 64))
        mask = n - 1
    }

    mutating func insert(_ key: String) {
        let (h1, h2) = Self.hashes(key)
        for i in 0..<UInt64(Self.probes) {
            let bit = (h1 &+ i &* h2) & mask
            bits[Int(bit >> 6)] |= 1 << (bit & 63)
        }
    }

    /// Inserts `key`; returns whether the filter may have held it before
    /// (`mayContain` then `insert`, hashing the key once).
    mutating func insertReportingPresence(of key: String) -> Bool {
        insertReportingPresence(Self.hashes(key))
    }

    /// ``insertReportingPresence(of:)`` of `kind + "\u{1F}" + id`, hashed
    /// in parts: no joined string (an allocation per event of a rebuild).
    mutating func insertReportingPresence(kind: String, id: String) -> Bool {
        var h = Hash()
        h.feed(kind)
        h.feed(0x1F)
        h.feed(id)
        return insertReportingPresence(h.pair)
    }

    private mutating func insertReportingPresence(_ hashes: (UInt64, UInt64)) -> Bool {
        let (h1, h2) = hashes
        var present = true
        for i in 0..<UInt64(Self.probes) {
            let bit = (h1 &+ i &* h2) & mask
            let word = Int(bit >> 6), flag: UInt64 = 1 << (bit & 63)
            if bits[word] & flag == 0 { present = false; bits[word] |= flag }
        }
        return present
    }

    func mayContain(_ key: String) -> Bool {
        let (h1, h2) = Self.hashes(key)
        for i in 0..<UInt64(Self.probes) {
            let bit = (h1 &+ i &* h2) & mask
            if bits[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { return false }
        }
        return true
    }

    private static func hashes(_ key: String) -> (UInt64, UInt64) {
        var h = Hash()
        h.feed(key)
        return h.pair
    }

    /// Two 64-bit FNV-1a hashes of the UTF-8 bytes (different offsets), for
    /// double hashing. Deterministic: no per-process seed is needed here.
    private struct Hash {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4

        mutating func feed(_ byte: UInt8) {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }

        mutating func feed(_ s: String) {
            var s = s
            s.withUTF8 { for byte in $0 { feed(byte) } }
        }

        var pair: (UInt64, UInt64) { (a, b | 1) }
    }
}
