/// A record that breaks its store's rules: which store, which field, which rule.
public struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let store: String
    /// The field at fault, or the fields a cross-field rule names (`end,start`).
    public let field: String
    public let rule: String

    public init(store: String, field: String, rule: String) {
        self.store = store
        self.field = field
        self.rule = rule
    }

    public var description: String { "\(store).\(field): \(rule)" }
}
