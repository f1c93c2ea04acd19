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
