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
    /// The route `replay` took before its scratch was written in bulk, kept
    /// as the reference: every event read, decoded, opened and applied one
    /// at a time through an `EventBody`, household events first.
    static func formerRoute(_ home: Home, upTo mark: Int64, leavingOut failed: Set<EventID>, until: HLC?) throws -> (digest: String, rejections: [String]) {
        let scratch = try ScratchProjection(family: home.family)
        try scratch.database.transaction(.immediate) {
            for libraryPass in [true, false] {
                try home.log.forEachEvent(order: .chain, in: home.family) { stored in
                    guard stored.position <= mark, !failed.contains(stored.id), until.map({ stored.hlc <= $0 }) ?? true,
                          let env = try? SyncEnvelope(decoding: stored.bytes), !home.isPastForkPoint(env),
                          case .body(let body) = try home.openBody(env),
                          LibraryEvent.isLibrary(body) == libraryPass else { return }
                    try scratch.projector.apply(env, body: body)
                }
            }
        }
        return (Hex.encode(try scratch.projector.digest()), try scratch.projector.rejections().map { "\($0.event.hex)|\($0.reason)" })
    }

    /// The scratch made with no hint, then with hints that hold too much,
    /// too little, or are empty, on `runner`'s home: at its whole log, as
    /// of a random moment, and up to a random position with random events
    /// left out (as failed), household ones among them. Whenever a
    /// projection is made it is the one the former route makes (digest and
    /// rejections), and one is made whenever the hint names every
    /// household event.
    static func hintsAgree(_ runner: FamctlRunner, rng: inout SplitMix) throws {
        let home = try Home.open(runner.home)
        let last = try home.log.lastPosition()
        var all: [EventID] = [], clocks: [HLC] = [], positions: [Int64] = []
        try home.log.forEachEvent(in: home.family) {
            all.append($0.id)
            clocks.append($0.hlc)
            positions.append($0.position)
        }
        let household = try home.projector.libraryEventIDs()
        try #require(!household.isEmpty && all.count > household.count)
        let others = all.filter { !household.contains($0) }
        let someFailed = Set(all.shuffled(using: &rng).prefix(5)).union([household.randomElement(using: &rng)!])
        let scenarios: [(until: HLC?, failed: Set<EventID>, mark: Int64)] = [
            (nil, [], last),
            (clocks.randomElement(using: &rng)!, [], last),
            (nil, someFailed, positions.randomElement(using: &rng)!),
        ]
        for (n, scenario) in scenarios.enumerated() {
            let reference = try formerRoute(home, upTo: scenario.mark, leavingOut: scenario.failed, until: scenario.until)
            func made(_ hint: Set<EventID>?) throws -> (made: Bool, digest: String, rejections: [String]) {
                let scratch = try ScratchProjection(family: home.family)
                let made = try scratch.rebuild(from: home, upTo: scenario.mark, leavingOut: scenario.failed, until: scenario.until, householdHint: hint)
                return (made, Hex.encode(try scratch.projector.digest()), try scratch.projector.rejections().map { "\($0.event.hex)|\($0.reason)" })
            }
            let extra = Set(others.shuffled(using: &rng).prefix(10))
            for hint in [nil, household, household.union(extra)] {
                let m = try made(hint)
                #expect(m.made, "scenario \(n): a hint naming every household event (\(hint?.count ?? -1) events) made no projection")
                #expect(m.digest == reference.digest && m.rejections == reference.rejections, "scenario \(n): the projection differs from the former route's")
            }
            // Without one household event the live projection holds: either
            // no projection (the second pass met it), or, when that event is
            // left out anyway, the same one.
            var fewer = household
            fewer.remove(household.randomElement(using: &rng)!)
            for hint in [fewer, Set(extra)] {
                let m = try made(hint)
                if m.made {
                    #expect(m.digest == reference.digest && m.rejections == reference.rejections, "scenario \(n): a projection made despite a missing hint differs")
                }
            }
            if n == 0 {
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
            // The live projection forgets the last join (Grandma's, or Dad's).
            try home.log.database.execute("""
                DELETE FROM \(Home.projectionSchema).p_library WHERE rowid = (
                    SELECT max(rowid) FROM \(Home.projectionSchema).p_library WHERE body LIKE '%"type":"member.join"%')
                """)
            #expect(home.log.database.changes == 1)
        }
        let home = try Home.open(mum.home)
        // The live projection's hint now misses an event: no projection from it.
        let hint = try home.projector.libraryEventIDs().union(home.projector.rejections().map(\.event))
        #expect(try !ScratchProjection(family: home.family).rebuild(from: home, upTo: try home.log.lastPosition(), leavingOut: [], until: nil, householdHint: hint))
        let compared = try ReplayCommand.compare(home, failed: [], until: nil)
        #expect(compared.rebuilt == reference, "the scratch made after the hint missed an event differs from one made without a hint")
        #expect(compared.live != compared.rebuilt, "the live projection's lost row went unnoticed")
    }
}
