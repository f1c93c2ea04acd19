import Foundation

/// The care subject a record belongs to: `baby:<UUID>`, `pregnancy` or `newMom`.
public enum FocusKey: Hashable, Sendable, CustomStringConvertible {
    case baby(UUID)
    case pregnancy
    case newMom

    /// Parses the textual form; `nil` for anything else. The UUID is accepted in
    /// either case and always written lowercase.
    public init?(_ text: String) {
        switch text {
        case "pregnancy": self = .pregnancy
        case "newMom": self = .newMom
        default:
            guard text.hasPrefix("baby:"), let u = UUID(text: String(text.dropFirst(5))) else { return nil }
            self = .baby(u)
        }
    }

    public var description: String {
        switch self {
        case .baby(let u): "baby:" + u.lowercasedText
        case .pregnancy: "pregnancy"
        case .newMom: "newMom"
        }
    }
}
