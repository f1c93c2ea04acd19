/// A row of the stores' tables that cannot be read back: the projection file
/// was altered or damaged where SQLite does not look (its pages are sound,
/// a value in them is not). The stores derive from the log, so a rebuild
/// makes them whole again; a query never skips such a row in silence.
public struct DamagedRow: Error, Equatable, Sendable, CustomStringConvertible {
    /// The entity's kind (`record`, `subject`, `photo`).
    public let kind: String
    /// Its id as stored.
    public let id: String
    /// Which of its values cannot be read (`fields`, `versions`, `id`).
    public let value: String

    public init(kind: String, id: String, value: String) {
        self.kind = kind
        self.id = id
        self.value = value
    }

    public var description: String { "the \(kind) \(id.isEmpty ? "with an empty id" : id) has unreadable \(value)" }
}
