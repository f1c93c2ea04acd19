/// What is kept to say of a file the replicator read whole but that is not
/// simply done with (`r_files`, status `read`, columns `kind` and
/// `reason`): `status` names it for as long as the shared folder holds it.
public struct FileNote: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Some of its events do not verify (forged or damaged); its
        /// others were checked on their own.
        case refusedEvents = "refused"
        /// Its events were taken as any, none refused, but it lies under a
        /// name that is not its own (a renamed copy, another author's or
        /// family's segment).
        case misplaced
        /// A sync engine's conflict copy that does not verify: nothing in
        /// it was read, and it can be deleted.
        case damagedConflictCopy = "leftover"
    }

    public var kind: Kind
    /// What is wrong, as said to a user.
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// A note as a famctl from before the `kind` column kept it, told by
    /// the beginning of its text: `misplaced: ` marked a misplaced file
    /// (and a damaged conflict copy), and before that mark a misplaced
    /// file's reason began as it is said. The migration fills the column
    /// with its kind, once per row; the text stays as written (an earlier
    /// famctl sharing the home reads it), so its mark is taken off here
    /// when it is read.
    static func fromEarlierBuild(_ text: String) -> FileNote {
        let mark = "misplaced: "
        if text.hasPrefix(mark) {
            let reason = String(text.dropFirst(mark.count))
            return FileNote(reason.hasPrefix(damagedConflictCopy) ? .damagedConflictCopy : .misplaced, reason)
        }
        let unmarked = text.hasPrefix("a copy of seqs ") || (text.hasPrefix("a segment of ") && text.contains(" under a name of this folder's"))
        return FileNote(unmarked ? .misplaced : .refusedEvents, text)
    }

    /// The reason as kept in `r_files`: a misplaced file's and a damaged
    /// copy's with the `misplaced: ` mark an earlier famctl sharing the
    /// home tells them by (it would take them for refused events,
    /// forged or damaged, otherwise).
    var storedReason: String { kind == .refusedEvents ? reason : "misplaced: " + reason }

    /// What a misplaced segment of the family's, in a folder not its
    /// author's, says of its events: they were read as any.
    public static let readFromIt = "its events were read from it (each one verified), as from its author's folder"

    /// What to do about a misplaced file: remove it, or, for one whose
    /// events were read from it (``readFromIt``), wait until its author's
    /// own folder holds them, which may be the only other copy.
    public var removal: String {
        reason.hasSuffix(Self.readFromIt)
            ? "its author's next sync writes its events in its own folder again; remove this copy after that"
            : "the file can be removed"
    }

    /// How a damaged conflict copy's reason begins.
    static let damagedConflictCopy = "a sync engine's conflict copy that is damaged"
}
