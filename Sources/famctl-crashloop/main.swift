// famctl-crashloop: appends to an event log in a loop and prints the id of
// every acknowledged event, one per line, flushed. The crash-safety tests
// kill it with SIGKILL at random moments and check that every printed id
// survived.
//
//   famctl-crashloop DB_PATH SEED_HEX [MAX_BATCH]
import Envelope
import EventLog
import Foundation

let args = CommandLine.arguments
guard args.count >= 3, let seed = Hex.decode(args[2]), seed.count == 32 else {
    FileHandle.standardError.write(Data("usage: famctl-crashloop DB_PATH SEED_HEX [MAX_BATCH]\n".utf8))
    exit(64)
}
let maxBatch = args.count > 3 ? max(1, Int(args[3]) ?? 1) : 1
let identity = DeviceIdentity(signing: SigningKey(seed: seed), box: BoxKey(seed: seed))
let family = FamilyID(string: "c0ffee00-0000-4000-8000-000000000001")!
let key = EpochKey(epoch: 0, key: SecretBytes([UInt8](repeating: 0x5a, count: 32)))
do {
    let log = try EventLog(path: args[1])
    var n = 0
    while true {
        let batch = Int.random(in: 1...maxBatch)
        let bodies = (0..<batch).map { i in
            EventBody(type: "record.put", fields: ["n": .int(Int64(n + i)), "pad": .string(String(repeating: "x", count: Int.random(in: 0...600)))]).encoded()
        }
        let envs = try log.append(bodies: bodies, as: identity, family: family, key: key)
        n += batch
        let line = envs.map { $0.id.hex + "\n" }.joined()
        FileHandle.standardOutput.write(Data(line.utf8))
    }
} catch {
    FileHandle.standardError.write(Data("famctl-crashloop: \(error)\n".utf8))
    exit(1)
}
