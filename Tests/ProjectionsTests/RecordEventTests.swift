import Envelope
import Foundation
import Projections
import Testing

struct RecordEventTests {
    @Test func focusKeysParseAndPrintCanonically() {
        #expect(FocusKey("pregnancy") == .pregnancy)
        #expect(FocusKey("newMom") == .newMom)
        let u = UUID()
        #expect(FocusKey("baby:" + u.uuidString)?.description == "baby:" + u.uuidString.lowercased())
        for bad in ["", "baby:", "baby:xyz", "Pregnancy", "newmom", "child:" + u.uuidString, " pregnancy"] {
            #expect(FocusKey(bad) == nil, "accepted \(bad)")
        }
    }

    @Test func storeNamesAreTheTen() {
        #expect(StoreName.allCases.count == 10)
        #expect(StoreName(rawValue: "solidFood") != nil)
    }

    @Test func putAndDeleteRoundTripThroughABody() throws {
        let put = RecordEvent(kind: .put, record: UUID(), store: "feeding", focus: "newMom", at: "2026-11-29T08:00:00+01:00",
                              fields: ["amountMl": .int(90), "side": .string("left"), "cleared": .null])
        let back = try #require(try RecordEvent(EventBody(decoding: put.body.encoded())))
        #expect(back == put)
        let del = RecordEvent(kind: .delete, record: put.record, store: "feeding", focus: "newMom", at: nil, fields: [:])
        let back2 = try #require(try RecordEvent(EventBody(decoding: del.body.encoded())))
        #expect(back2 == del)
        #expect(del.body["fields"] == nil)
    }

    @Test func otherBodiesAreNotRecordEventsAndBrokenOnesAreErrors() throws {
        #expect(try RecordEvent(EventBody(type: "family.create", fields: [:])) == nil)
        #expect(throws: EnvelopeError.self) { try RecordEvent(EventBody(type: "record.put", fields: ["store": .string("x")])) }
    }
}
