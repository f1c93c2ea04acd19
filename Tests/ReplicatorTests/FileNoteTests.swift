import Envelope
import EventLog
import Foundation
@testable import Replicator
import Testing

/// What `status` keeps saying of a file read whole is typed (``FileNote``,
/// kept as `r_files.kind`). The notes an earlier famctl kept as text alone
/// (a file read is not read again, so they stay as written) get their kind
/// when the replicator opens, and keep what they say.
struct FileNoteTests {
    static let damaged = "a sync engine's conflict copy that is damaged (its checksum does not match): no event file, nothing in it is read; it can be deleted"

    @Test func notesKeptByAnEarlierBuildGetTheirKind() throws {
        let dir = NSTemporaryDirectory() + "famctl-notes-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = try EventLog(path: dir + "/log.sqlite")
        let family = FamilyID.random(), me = DeviceID(bytes: [UInt8](repeating: 7, count: 32))
        // The table as the famctl before `kind` made it, with what it kept.
        try log.database.execute("""
            CREATE TABLE r_files(family BLOB NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL, reason TEXT,
                checked_at INTEGER NOT NULL, tag TEXT, PRIMARY KEY(family, path))
            """)
        let copy = "a copy of seqs 1–3 under a name that says seqs 7–9"
        let other = "a segment of author 0123456789ab under a name of this folder's; nothing here is this folder's"
        let refused = "2 event(s) that do not verify (a bad signature); its other events were checked on their own"
        let kept: [(String, String, String?)] = [
            ("a.seg", "read", "misplaced: " + copy),
            ("b.seg", "read", other),                       // from before the "misplaced: " mark
            ("c.seg", "read", "misplaced: " + Self.damaged),
            ("d.seg", "read", refused),
            ("e.seg", "read", "a segment of nothing"),
            ("f.seg", "unverifiable", "not whole yet"),     // not a file read: no note
            ("g.seg", "read", nil),                         // read, nothing to say
        ]
        for (path, status, reason) in kept {
            try log.database.run("INSERT INTO r_files(family, path, status, reason, checked_at) VALUES(?1, ?2, ?3, ?4, 0)",
                                 [.blob(family.bytes), .text(path), .text(status), reason.map { .text($0) } ?? .null])
        }
        let expected = [
            ("a.seg", FileNote(.misplaced, copy)), ("b.seg", FileNote(.misplaced, other)),
            ("c.seg", FileNote(.damagedConflictCopy, Self.damaged)), ("d.seg", FileNote(.refusedEvents, refused)),
            ("e.seg", FileNote(.refusedEvents, "a segment of nothing")),
        ]
        let notes = try Replicator(log: log, peer: MemoryPeer(), family: family, me: me).filesOfNote()
        #expect(notes.map(\.path) == expected.map(\.0))
        #expect(notes.map(\.note) == expected.map(\.1))
        // Kept as typed: the column holds the kind; the text stays as it was
        // written, for an earlier famctl that shares the home and tells the
        // kinds by it (a code review: taking the mark off made it call a
        // misplaced file forged).
        var stored: [String: [String]] = [:]
        try log.database.statement("SELECT path, kind, reason FROM r_files WHERE kind IS NOT NULL").forEachRow { stored[$0.text(0)] = [$0.text(1), $0.text(2)] }
        let written = Dictionary(uniqueKeysWithValues: kept.compactMap { k in k.2.map { (k.0, $0) } })
        #expect(stored == Dictionary(uniqueKeysWithValues: expected.map { ($0.0, [$0.1.kind.rawValue, written[$0.0]!]) }))

        // Opened again, nothing changes; a kind this famctl does not know
        // (a later one wrote it) is said as a refusal, its text kept.
        try log.database.run("UPDATE r_files SET kind = 'from-a-later-famctl' WHERE path = 'a.seg'")
        let again = try Replicator(log: log, peer: MemoryPeer(), family: family, me: me).filesOfNote()
        #expect(again.map(\.note) == [FileNote(.refusedEvents, copy)] + expected.dropFirst().map(\.1))
    }

    /// A note this famctl keeps carries the mark an earlier famctl tells a
    /// misplaced file by; read back, it is said without it.
    @Test func aNoteKeepsTheMarkAnEarlierBuildReads() {
        let misplaced = FileNote(.misplaced, "a copy of seqs 1–3 under a name that says seqs 7–9")
        let refused = FileNote(.refusedEvents, "2 event(s) that do not verify (a bad signature)")
        let damaged = FileNote(.damagedConflictCopy, Self.damaged)
        for note in [misplaced, refused, damaged] {
            #expect(FileNote.fromEarlierBuild(note.storedReason) == note, "\(note)")
        }
        #expect(misplaced.storedReason.hasPrefix("misplaced: ") && !refused.storedReason.hasPrefix("misplaced: "))
    }
}
