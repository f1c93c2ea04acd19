import Envelope
import Foundation

/// A care subject added or changed: body type `subject.put`, keys `subject`
/// (the focus key), `kind`, and `fields` (`name`, `birth`, `sex`, `due`).
/// Field-level last-writer-wins, like records.
public struct SubjectEvent: Sendable, Hashable {
    public static let type = "subject.put"
    public static let schema = 1

    public let focus: FocusKey
    public let fields: [String: JSONValue]

    public init(focus: FocusKey, fields: [String: JSONValue]) {
        self.focus = focus
        self.fields = fields
    }

    public var body: EventBody {
        EventBody(type: Self.type, schema: Self.schema, fields: [
            "subject": .string(focus.description), "kind": .string(SubjectKind(focus).rawValue), "fields": .object(fields),
        ])
    }

    public init?(_ body: EventBody) throws(EnvelopeError) {
        guard body.type == Self.type else { return nil }
        guard let s = body["subject"]?.stringValue, let focus = FocusKey(s) else { throw .badBody("subject event without a valid \"subject\"") }
        self.focus = focus
        self.fields = body["fields"]?.objectValue ?? [:]
    }

    /// Checks the subject's own fields: a name (1–100 characters, no control characters),
    /// birth date (YYYY-MM-DD, a day the calendar has), sex; a pregnancy's due date.
    public static func validate(kind: SubjectKind, fields: [String: JSONValue]) throws(ValidationError) {
        let allowed: [String] = switch kind {
        case .baby: ["name", "birth", "sex"]
        case .pregnancy: ["due", "name"]
        case .newMom: ["name"]
        }
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
