/// The ten record stores. The raw values are the contract.
public enum StoreName: String, CaseIterable, Sendable, Hashable {
    case feeding, solidFood, sleep, diaper, growth, health, vaccination, milestone, pregnancy, postpartum

    /// The names, comma-separated, for error messages and help.
    public static var list: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
