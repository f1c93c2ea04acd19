/// The kinds of care subject. A baby has its own focus key `baby:<UUID>`;
/// there is one `pregnancy` and one `newMom` per family.
public enum SubjectKind: String, CaseIterable, Sendable, Hashable {
    case baby, pregnancy, newMom

    public init(_ focus: FocusKey) {
        switch focus {
        case .baby: self = .baby
        case .pregnancy: self = .pregnancy
        case .newMom: self = .newMom
        }
    }
}
