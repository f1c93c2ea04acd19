/// The ten record stores. The raw values are the contract.
public enum StoreName: String, CaseIterable, Sendable, Hashable {
    case feeding, solidFood, sleep, diaper, growth, health, vaccination, milestone, pregnancy, postpartum

    /// Whether `name` is a store's: the same as `StoreName(rawValue:) !=
    /// nil`, compared as short strings rather than through the string
    /// `switch` that `init(rawValue:)` is (a thousand instructions, a
    /// rebuild's every event).
    public static func isKnown(_ name: String) -> Bool { rawValues.contains(name) }

    private static let rawValues = allCases.map(\.rawValue)

    /// The names, comma-separated, for error messages and help.
    public static var list: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
