import Envelope
import Foundation

/// A record as projected: the latest value of each field, and its liveness.
public struct RecordState: Sendable, Equatable {
    public let id: UUID
    public let store: String
    public let focus: String
    public let at: String?
    /// Visible fields: written after the newest delete, not cleared.
    public let fields: [String: JSONValue]
    /// The author of the record's first put.
    public let creator: DeviceID
    public let created: Version
    /// The newest write (put or delete).
    public let updated: Version
    public let deleted: Bool

    /// A fingerprint of what the record says: its store, subject, moment
    /// and visible fields (the first 16 bytes of BLAKE2b-256 over them,
    /// each text ended by `0xff`, the fields as compact JSON). Any change
    /// merged into the record since changes it, however the change is
    /// dated; two homes holding the same record give the same, whoever
    /// wrote it there (a home that imported another's export included).
    /// What an export writes for each row, so that an import can tell
    /// whether the record changed since.
    public var revision: String {
        var b: [UInt8] = []
        for text in [store, focus, at ?? ""] { b += Array(text.utf8) + [0xff] }
        b += JSONValue.object(fields).jsonBytes
        return Hex.encode(Array(Sodium.blake2b256(b).prefix(16)))
    }
}

/// A care subject as projected.
public struct SubjectState: Sendable, Equatable {
    public let focus: FocusKey
    public let fields: [String: JSONValue]
    public let creator: DeviceID
    public let created: Version
    /// Its newest put's version.
    public let updated: Version
    /// Removed (`subject.delete`) and not added again since.
    public var removed = false

    /// A fingerprint of what the subject says: removed or not, and its
    /// fields (the first 16 bytes of BLAKE2b-256 over a byte 1 if removed,
    /// else 0, and the fields as compact JSON); the same on every home
    /// that holds the same subject, whoever wrote it there.
    public var revision: String {
        Hex.encode(Array(Sodium.blake2b256([removed ? 1 : 0] + JSONValue.object(fields).jsonBytes).prefix(16)))
    }

    public var kind: SubjectKind { SubjectKind(focus) }
    public var name: String? { fields["name"]?.stringValue }
}

/// One version in a record's trail.
public struct HistoryEntry: Sendable, Equatable {
    public enum Operation: String, Sendable { case put, delete }
    public let version: Version
    public let event: EventID
    public let operation: Operation
    /// The fields this write set (`null` = cleared); empty for a delete.
    public let changes: [String: JSONValue]
}
