import Envelope
import EventLog
import Foundation

/// A temporary directory removed when the test's value goes.
final class TempDir {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "famctl-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// An author writing a chain of envelopes outside any log.
final class Author {
    let signer: SigningKey
    let family: FamilyID
    let key: EpochKey
    var seq: UInt64 = 0
    var previous = EventID.none
    var clock: UInt64

    init(seed: UInt8, family: FamilyID = Author.family, key: EpochKey = Author.key, startMs: UInt64 = 1_795_000_000_000) {
        signer = SigningKey(seed: [UInt8](repeating: seed, count: 32))
        self.family = family
        self.key = key
        clock = startMs
    }

    static var family: FamilyID { FamilyID(string: "a0a0a0a0-0000-4000-8000-000000000001")! }
    static var key: EpochKey { EpochKey(epoch: 0, key: SecretBytes([UInt8](repeating: 1, count: 32))) }

    var id: DeviceID { signer.publicKey }

    /// The next event of the chain.
    func next(_ text: String = "x") -> SyncEnvelope {
        seq += 1
        clock += 1000
        let env = try! SyncEnvelope.seal(
            body: EventBody(type: "test", fields: ["text": .string(text)]).encoded(), family: family, signer: signer,
            seq: seq, previous: previous, hlc: HLC(milliseconds: clock, counter: 0), key: key)
        previous = env.id
        return env
    }

    /// An event at an arbitrary position, not advancing the chain.
    func forged(seq: UInt64, previous: EventID, hlcMs: UInt64, text: String = "fork") -> SyncEnvelope {
        try! SyncEnvelope.seal(
            body: EventBody(type: "test", fields: ["text": .string(text)]).encoded(), family: family, signer: signer,
            seq: seq, previous: previous, hlc: HLC(milliseconds: hlcMs, counter: 0), key: key)
    }
}

/// Where the package's executables are built: beside the test bundle.
func productsDirectory() -> URL {
    if let d = ProcessInfo.processInfo.environment["FAMCTL_PRODUCTS"] { return URL(fileURLWithPath: d) }
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("famctl-crashloop").path) { return url }
    }
    return Bundle.main.bundleURL
}
