import Envelope
import Projections
import Testing

/// Dates the calendar does not have are refused by name, not rolled over to
/// the next month.
struct CalendarDateTests {
    @Test func onlyDaysTheCalendarHasAreDates() {
        for good in ["2026-02-28", "2024-02-29", "2000-02-29", "2026-04-30", "2026-12-31", "2026-01-01"] {
            #expect(CalendarDate.isValid(good), "refused \(good)")
        }
        for bad in ["2026-02-29", "1900-02-29", "2026-02-30", "2026-04-31", "2026-13-01", "2026-00-10", "2026-01-00", "2026-01-32",
                    "2026-2-3", "2026-02-28T00:00:00Z", "26-02-28", ""] {
            #expect(!CalendarDate.isValid(bad), "accepted \(bad)")
        }
    }

    @Test func theReasonNamesTheDate() {
        #expect(CalendarDate.impossibility(in: "2026-02-30") == "the date 2026-02-30 does not exist (February 2026 has 28 days)")
        #expect(CalendarDate.impossibility(in: "2026-04-31T08:00:00+02:00") == "the date 2026-04-31 does not exist (April 2026 has 30 days)")
        #expect(CalendarDate.impossibility(in: "2026-13-01") == "the date 2026-13-01 does not exist (there is no month 13)")
        #expect(CalendarDate.impossibility(in: "2026-01-00") == "the date 2026-01-00 does not exist (there is no day 0)")
        for notImpossible in ["2024-02-29", "2026-11-29T08:00:00Z", "yesterday", "2026-2-30", ""] {
            #expect(CalendarDate.impossibility(in: notImpossible) == nil, "\(notImpossible)")
        }
    }

    @Test func subjectDatesMustExist() throws {
        for (kind, field) in [(SubjectKind.baby, "birth"), (.pregnancy, "due")] {
            try SubjectEvent.validate(kind: kind, fields: [field: .string("2024-02-29")])
            let why = ValidationError(store: "subject", field: field, rule: "the date 2026-02-30 does not exist (February 2026 has 28 days)")
            #expect(throws: why) { try SubjectEvent.validate(kind: kind, fields: [field: .string("2026-02-30")]) }
            #expect(throws: ValidationError.self) { try SubjectEvent.validate(kind: kind, fields: [field: .string("2026-04-31")]) }
        }
    }
}
