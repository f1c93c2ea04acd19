import Envelope
import EventLog
@testable import famctl
import Foundation
import Projections
import Testing

/// `replay`'s scratch projection opens first only the events its hint (the
/// live projection's household events) names: whatever the hint holds, the
/// projection it makes is the one made without a hint, or it says it could
/// not make it (a household event the hint missed).
struct ReplayScratchTests {
    /// The scratch made with no hint, then with hints that hold too much,
    /// too little, or are empty, on `runner`'s home, at its whole log and
    /// as of a random moment: the same digest and rejections whenever a
    /// projection is made, and one is made whenever the hint names every
    /// household event.
    static func hintsAgree(_ runner: FamctlRunner, rng: inout SplitMix) throws {
        let home = try Home.open(runner.home)
        let mark = try home.log.lastPosition()
        var all: [EventID] = [], clocks: [HLC] = []
        try home.log.forEachEvent(in: home.family) {
            all.append($0.id)
            clocks.append($0.hlc)
        }
        let household = try home.projector.libraryEventIDs()
        try #require(!household.isEmpty && all.count > household.count)
        let others = all.filter { !household.contains($0) }
        let moment = clocks.randomElement(using: &rng)!
        for until in [nil, moment] {
            func made(_ hint: Set<EventID>?) throws -> (made: Bool, digest: String, rejections: [String]) {
                let scratch = try ScratchProjection(family: home.family)
                let made = try scratch.rebuild(from: home, upTo: mark, leavingOut: [], until: until, householdHint: hint)
                return (made, Hex.encode(try scratch.projector.digest()), try scratch.projector.rejections().map { "\($0.event.hex)|\($0.reason)" })
            }
            let reference = try made(nil)
            #expect(reference.made)
            let extra = Set(others.shuffled(using: &rng).prefix(10))
            for hint in [household, household.union(extra)] {
                let m = try made(hint)
                #expect(m.made, "a hint naming every household event (\(hint.count) events) made no projection")
                #expect(m.digest == reference.digest && m.rejections == reference.rejections, "the hint changed the projection")
            }
            // Without one household event the live projection holds: either
            // no projection (the second pass met it), or, when that event is
            // left out anyway (its clock after `until`), the same one.
            let missing = household.randomElement(using: &rng)!
            var fewer = household
            fewer.remove(missing)
            for hint in [fewer, Set(extra)] {
                let m = try made(hint)
                if m.made {
                    #expect(m.digest == reference.digest && m.rejections == reference.rejections, "a projection made despite a missing hint differs")
                }
            }
            if until == nil {
                #expect(try !made(fewer).made, "the hint missed a household event and the projection was made all the same")
            }
        }
    }

    /// `replay` on a home whose live projection lost a household event's
    /// row: the hint misses it, the scratch is made again without a hint,
    /// and the comparison finds the live projection wrong.
    @Test func replayMakesTheScratchAgainWhenTheHintMissesAnEvent() throws {
        let (mum, others) = try HouseholdTests.family([("Dad", "member"), ("Grandma", "viewer")])
        try mum.ok("subject", "add", "newMom")
        try HouseholdTests.exchange([mum] + others)
        try others[0].ok("record", "add", "--focus", "newMom", "--store", "postpartum", "kind=mood", "mood=3")
        try HouseholdTests.exchange([mum] + others)
        let reference: String
        do {
            let home = try Home.open(mum.home)
            let scratch = try ScratchProjection(family: home.family)
            #expect(try scratch.rebuild(from: home, upTo: try home.log.lastPosition(), leavingOut: [], until: nil, householdHint: nil))
            reference = Hex.encode(try scratch.projector.digest())
            #expect(try ReplayCommand.compare(home, failed: [], until: nil).rebuilt == reference)
            // The live projection forgets Grandma's role: the last household row.
            try home.log.database.execute("DELETE FROM \(Home.projectionSchema).p_library WHERE rowid = (SELECT max(rowid) FROM \(Home.projectionSchema).p_library)")
        }
        let home = try Home.open(mum.home)
        let compared = try ReplayCommand.compare(home, failed: [], until: nil)
        #expect(compared.rebuilt == reference, "the scratch made after the hint missed an event differs from one made without a hint")
    }
}
