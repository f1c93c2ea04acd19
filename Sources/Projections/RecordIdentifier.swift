import Envelope
import Foundation

/// New record and photo ids: UUID version 7 (RFC 9562), the creation
/// millisecond in the first 48 bits, then random bits.
///
/// Any UUID names a record (ids from other devices, from imported store
/// files, of version 4, are all accepted). famctl makes time-ordered ones
/// because the projection indexes records by id: ids that grow with time
/// land at the end of that index instead of on a random page of it, which
/// at a million records decides whether an append writes one page or
/// several. The time they carry is already in the record's (encrypted)
/// body; ids appear only inside encrypted bodies and the local database.
public enum RecordIdentifier {
    public static func make(now: Date = Date()) -> UUID {
        var b = Sodium.randomBytes(16)
        let ms = HLC.milliseconds(of: now)
        for i in 0..<6 { b[i] = UInt8(truncatingIfNeeded: ms >> (8 * (5 - UInt64(i)))) }
        b[6] = 0x70 | (b[6] & 0x0F)   // version 7
        b[8] = 0x80 | (b[8] & 0x3F)   // variant 10
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
