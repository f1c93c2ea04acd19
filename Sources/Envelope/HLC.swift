import Foundation

/// A hybrid logical clock value: 48 bits of milliseconds since the Unix epoch
/// and a 16-bit logical counter, packed as `ms << 16 | counter`.
///
/// Ordering of packed values is the clock's order. Together with the author's
/// ``DeviceID`` it gives the total order used for last-writer-wins.
public struct HLC: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64

    public static let maxMilliseconds: UInt64 = (1 << 48) - 1
    public static let zero = HLC(rawValue: 0)

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// - Precondition: `milliseconds` fits in 48 bits.
    public init(milliseconds: UInt64, counter: UInt16) {
        precondition(milliseconds <= HLC.maxMilliseconds, "HLC milliseconds exceed 48 bits")
        rawValue = milliseconds << 16 | UInt64(counter)
    }

    public var milliseconds: UInt64 { rawValue >> 16 }
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    /// The wall-clock moment of the physical part.
    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// 8 bytes, big-endian: the wire form, and a form whose byte order is the clock's order.
    public var bigEndianBytes: [UInt8] { withUnsafeBytes(of: rawValue.bigEndian) { Array($0) } }

    /// Inlinable, so that the log's reader and `Version` (a call per event)
    /// get it specialised: unspecialised, it cost about 5 000 instructions a call.
    @inlinable
    public init?(bigEndianBytes b: some Collection<UInt8>) {
        guard b.count == 8 else { return nil }
        rawValue = b.withContiguousStorageIfAvailable { UInt64(bigEndian: UnsafeRawBufferPointer($0).loadUnaligned(as: UInt64.self)) }
            ?? b.reduce(0) { $0 << 8 | UInt64($1) }
    }

    public static func < (a: HLC, b: HLC) -> Bool { a.rawValue < b.rawValue }

    /// `2026-11-29T17:40:01.123Z/3`: the moment and the counter.
    public var description: String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return "\(f.string(from: date))/\(counter)"
    }

    /// Milliseconds since the epoch of a wall-clock `Date`, clamped to the 48-bit range.
    public static func milliseconds(of date: Date) -> UInt64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        if ms <= 0 { return 0 }
        return min(UInt64(ms), maxMilliseconds)
    }
}

/// The clock state of one device (Kulkarni et al., 2014).
///
/// ``tick(now:)`` stamps a local event; ``receive(_:now:)`` merges a remote
/// event's clock so that anything written afterwards is ordered after it.
/// Neither ever rejects a value: a far-future remote clock is followed, and the
/// audit flags it instead.
public struct HybridClock: Sendable, Equatable {
    public private(set) var last: HLC

    public init(last: HLC = .zero) { self.last = last }

    /// The next local timestamp: strictly greater than every value seen.
    public mutating func tick(now: Date = Date()) throws(HLCError) -> HLC {
        let pt = HLC.milliseconds(of: now)
        if pt > last.milliseconds {
            last = HLC(milliseconds: pt, counter: 0)
        } else {
            last = try HybridClock.increment(last)
        }
        return last
    }

    /// Merges a remote timestamp: the next ``tick(now:)`` is greater than it.
    public mutating func receive(_ remote: HLC) {
        last = max(last, remote)
    }

    /// The smallest HLC greater than `h`; the counter carries into the
    /// milliseconds when it wraps.
    static func increment(_ h: HLC) throws(HLCError) -> HLC {
        guard h.rawValue < UInt64.max else { throw .exhausted }
        return HLC(rawValue: h.rawValue + 1)
    }
}

/// The clock cannot move forward: a value at the very end of the 64-bit range
/// was merged. Only a forged, absurd timestamp can cause it.
public enum HLCError: Error, Equatable, Sendable {
    case exhausted
}
