import Foundation
@testable import Replicator
import Testing

/// `Retry-After` in both of its forms (RFC 9110 §10.2.3); anything else is
/// taken as no header, not as a wait of some guessed length.
struct RetryAfterTests {
    @Test func delaySecondsAndHTTPDatesAreRead() {
        let now = Date(timeIntervalSince1970: 1_445_412_450) // Wed, 21 Oct 2015 07:27:30 GMT
        #expect(WebDAVPeer.retryAfterSeconds("120", now: now) == 120)
        #expect(WebDAVPeer.retryAfterSeconds(" 0 ", now: now) == 0)
        #expect(WebDAVPeer.retryAfterSeconds("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == 30)
        // A date already past asks for no wait.
        #expect(WebDAVPeer.retryAfterSeconds("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == 0)
        for junk in ["abc", "", "-5", "1.5e3", "30 s", "tomorrow"] {
            #expect(WebDAVPeer.retryAfterSeconds(junk, now: now) == nil, "\(junk)")
        }
    }
}
