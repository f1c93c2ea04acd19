/// A member's role, as CloudKit's CKShare has them: the owner manages
/// membership, members read and write, viewers only read.
public enum Role: String, Sendable, Hashable, CaseIterable {
    case owner, member, viewer

    public var canWrite: Bool { self != .viewer }
}
