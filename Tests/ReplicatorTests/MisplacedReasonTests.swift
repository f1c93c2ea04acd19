import Replicator
import Testing

/// `status` tells a misplaced file (read whole, nothing refused) from one
/// whose events did not all verify, by the reason kept for it: marked by
/// this famctl, or as an earlier famctl wrote it, unmarked (a file read
/// is not read again, so its reason stays as it was written).
struct MisplacedReasonTests {
    @Test func reasonsKeptNowAndBeforeAreToldApart() {
        let copy = "a copy of seqs 1–3 under a name that says seqs 7–9"
        let other = "a segment of author 0123456789ab under a name of this folder's; nothing here is this folder's"
        let refused = "2 event(s) that do not verify (a bad signature); its other events were checked on their own"
        for reason in [copy, other] {
            #expect(Replicator.misplaced("misplaced: " + reason) == (true, reason))
            #expect(Replicator.misplaced(reason) == (true, reason), "as kept before the mark")
        }
        #expect(Replicator.misplaced(refused) == (false, refused))
        #expect(Replicator.misplaced("a segment of nothing") == (false, "a segment of nothing"))
    }
}
