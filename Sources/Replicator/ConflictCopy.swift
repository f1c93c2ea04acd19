/// Names sync engines give to copies and placeholders, recognised so that a
/// conflict copy of a segment can still be read (and prove a fork when its
/// content differs), and everything else is left alone.
public enum SharedFileName: Equatable, Sendable {
    /// An exact segment name.
    case segment(SegmentName)
    /// A conflict copy of a segment: Syncthing's `stem.sync-conflict-DATE-TIME-DEVICE.seg`
    /// or Dropbox's `stem (… conflicted copy …).seg`. The name's hash is not trusted.
    case conflictCopy(of: SegmentName)
    /// iCloud Drive's placeholder of a segment (`.NAME.icloud`): the file is
    /// in the folder, its bytes not downloaded to this machine yet (or
    /// evicted to save space since).
    case placeholder(of: SegmentName)
    /// Anything else: temporary files (`.syncthing.*.tmp`, `~syncthing~*`),
    /// placeholders of other files, other programs' files.
    case other

    public init(_ name: String) {
        if let s = SegmentName(parsing: name) { self = .segment(s); return }
        if name.hasPrefix("."), name.hasSuffix(".icloud"), let s = SegmentName(parsing: String(name.dropFirst().dropLast(".icloud".count))) {
            self = .placeholder(of: s); return
        }
        guard name.hasSuffix(SegmentName.suffix), !name.hasPrefix(".") else { self = .other; return }
        let stem = String(name.dropLast(SegmentName.suffix.count))
        if let r = stem.range(of: ".sync-conflict-"), let s = SegmentName(parsing: String(stem[..<r.lowerBound]) + SegmentName.suffix) {
            self = .conflictCopy(of: s); return
        }
        if let r = stem.range(of: " ("), stem.hasSuffix(")"), stem[r.upperBound...].contains("conflicted copy"),
           let s = SegmentName(parsing: String(stem[..<r.lowerBound]) + SegmentName.suffix) {
            self = .conflictCopy(of: s); return
        }
        self = .other
    }
}
