import Envelope
import Foundation

/// A care subject added or changed, or removed: body type `subject.put`,
/// keys `subject` (the focus key), `kind`, and `fields` (`name`, `birth`,
/// `sex`, `due`); or `subject.delete`, keys `subject` and `kind`.
/// Field-level last-writer-wins with tombstones, like records.
public struct SubjectEvent: Sendable, Hashable {
    public enum Kind: String, Sendable { case put = "subject.put", delete = "subject.delete" }
    /// The put's type.
    public static let type = Kind.put.rawValue
    public static let schema = 1

    public let kind: Kind
    public let focus: FocusKey
    public let fields: [String: JSONValue]

    /// A put of `fields`.
    public init(focus: FocusKey, fields: [String: JSONValue]) {
        self.kind = .put
        self.focus = focus
        self.fields = fields
    }

    /// The subject's removal (a tombstone).
    public static func delete(_ focus: FocusKey) -> SubjectEvent { SubjectEvent(kind: .delete, focus: focus) }

    private init(kind: Kind, focus: FocusKey) {
        self.kind = kind
        self.focus = focus
        self.fields = [:]
    }

    public var body: EventBody {
        var o: [String: JSONValue] = ["subject": .string(focus.description), "kind": .string(SubjectKind(focus).rawValue)]
        if kind == .put { o["fields"] = .object(fields) }
        return EventBody(type: kind.rawValue, schema: Self.schema, fields: o)
    }

    public init?(_ body: EventBody) throws(EnvelopeError) {
        guard let kind = Kind(rawValue: body.type) else { return nil }
        guard let s = body["subject"]?.stringValue, let focus = FocusKey(s) else { throw .badBody("subject event without a valid \"subject\"") }
        self.kind = kind
        self.focus = focus
        self.fields = kind == .put ? body["fields"]?.objectValue ?? [:] : [:]
    }

    /// The fields a kind of subject has.
    public static func allowedFields(kind: SubjectKind) -> [String] {
        switch kind {
        case .baby: ["name", "birth", "sex"]
        case .pregnancy: ["due", "name"]
        case .newMom: ["name"]
        }
    }

    /// Checks the subject's own fields: a name (1–100 characters, no control characters),
    /// birth date (YYYY-MM-DD, a day the calendar has), sex; a pregnancy's due date.
    public static func validate(kind: SubjectKind, fields: [String: JSONValue]) throws(ValidationError) {
        let allowed = allowedFields(kind: kind)
        for (k, v) in fields.sorted(by: { $0.key < $1.key }) {
            guard allowed.contains(k) else { throw ValidationError(store: "subject", field: k, rule: "is not a field of \(kind.rawValue) (use \(allowed.joined(separator: ", ")))") }
            guard case .string(let s) = v else { throw ValidationError(store: "subject", field: k, rule: "must be text") }
            switch k {
            case "name":
                if let why = PlainText.nameViolation(s) { throw ValidationError(store: "subject", field: k, rule: why) }
            case "birth" where !CalendarDate.isValid(s), "due" where !CalendarDate.isValid(s):
                throw ValidationError(store: "subject", field: k, rule: CalendarDate.impossibility(in: s) ?? "must be a date YYYY-MM-DD")
            case "sex" where !["female", "male", "other"].contains(s): throw ValidationError(store: "subject", field: k, rule: "must be one of female/male/other")
            default: break
            }
        }
    }
}
