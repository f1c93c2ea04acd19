import Envelope
import Foundation

/// Household ("library") events: the family, its invitations, its members
/// and its key epochs. Body keys are listed per case; ids and keys are
/// lowercase hex.
public enum LibraryEvent: Sendable, Hashable {
    /// `family.create` {name, ownerName, ownerBox}: the family's first event; its author is the owner.
    case familyCreate(name: String, ownerName: String, ownerBox: [UInt8])
    /// `invite.create` {invite, role, expires (ms since epoch), verifier (Ed25519 public key derived
    /// from the invite secret), epoch (the key epoch the invite code carries)}.
    case inviteCreate(invite: InviteID, role: Role, expiresMs: UInt64, verifier: [UInt8], epoch: UInt32)
    /// `invite.revoke` {invite}.
    case inviteRevoke(invite: InviteID)
    /// `invite.used` {invite, member}: the owner records whose join used the
    /// invitation (the one it counted), so that no other join with it counts,
    /// whatever its clock says.
    case inviteUsed(invite: InviteID, member: DeviceID)
    /// `member.join` {invite, name, box, proof}: signed by the new device; `proof` is the
    /// invite key's signature over ``JoinProof/message(family:invite:device:)``.
    case memberJoin(invite: InviteID, name: String, box: [UInt8], proof: [UInt8])
    /// `member.remove` {member, cutoff}: the member's events after seq `cutoff` are rejected.
    case memberRemove(member: DeviceID, cutoff: UInt64)
    /// `member.role` {member, role}.
    case memberRole(member: DeviceID, role: Role)
    /// `key.rotate` {epoch, sealed: {device: sealed box of the new key}}: written under the
    /// old epoch's key, so every remaining member can read whom the new key was sealed to.
    case keyRotate(epoch: UInt32, sealed: [DeviceID: [UInt8]])
    /// `key.previous` {epoch, previousKey}: written under epoch `epoch`'s key, carrying the
    /// key of `epoch − 1`, so whoever holds the newest key can read all history.
    case keyPrevious(epoch: UInt32, previousKey: [UInt8])
    /// `key.share` {epoch, member, sealed}: the owner seals an epoch key to a member who
    /// joined with an older one.
    case keyShare(epoch: UInt32, member: DeviceID, sealed: [UInt8])

    public static let schema = 1
    public static let types: Set<String> = [
        "family.create", "invite.create", "invite.revoke", "invite.used", "member.join", "member.remove", "member.role",
        "key.rotate", "key.previous", "key.share",
    ]

    public static func isLibrary(_ body: EventBody) -> Bool { types.contains(body.type) }

    public var type: String {
        switch self {
        case .familyCreate: "family.create"
        case .inviteCreate: "invite.create"
        case .inviteRevoke: "invite.revoke"
        case .inviteUsed: "invite.used"
        case .memberJoin: "member.join"
        case .memberRemove: "member.remove"
        case .memberRole: "member.role"
        case .keyRotate: "key.rotate"
        case .keyPrevious: "key.previous"
        case .keyShare: "key.share"
        }
    }

    public var body: EventBody {
        let f: [String: JSONValue] = switch self {
        case .familyCreate(let name, let ownerName, let box):
            ["name": .string(name), "ownerName": .string(ownerName), "ownerBox": .string(Hex.encode(box))]
        case .inviteCreate(let invite, let role, let expires, let verifier, let epoch):
            ["invite": .string(invite.hex), "role": .string(role.rawValue), "expires": .int(Int64(expires)), "verifier": .string(Hex.encode(verifier)),
             "epoch": .int(Int64(epoch))]
        case .inviteRevoke(let invite):
            ["invite": .string(invite.hex)]
        case .inviteUsed(let invite, let member):
            ["invite": .string(invite.hex), "member": .string(member.hex)]
        case .memberJoin(let invite, let name, let box, let proof):
            ["invite": .string(invite.hex), "name": .string(name), "box": .string(Hex.encode(box)), "proof": .string(Hex.encode(proof))]
        case .memberRemove(let member, let cutoff):
            ["member": .string(member.hex), "cutoff": .int(Int64(cutoff))]
        case .memberRole(let member, let role):
            ["member": .string(member.hex), "role": .string(role.rawValue)]
        case .keyRotate(let epoch, let sealed):
            ["epoch": .int(Int64(epoch)), "sealed": .object(Dictionary(uniqueKeysWithValues: sealed.map { ($0.key.hex, .string(Hex.encode($0.value))) }))]
        case .keyPrevious(let epoch, let previous):
            ["epoch": .int(Int64(epoch)), "previousKey": .string(Hex.encode(previous))]
        case .keyShare(let epoch, let member, let sealed):
            ["epoch": .int(Int64(epoch)), "member": .string(member.hex), "sealed": .string(Hex.encode(sealed))]
        }
        return EventBody(type: type, schema: Self.schema, fields: f)
    }

    /// Reads a library event; `nil` for other types.
    /// - Throws: ``EnvelopeError/badBody(_:)`` for a library type with missing or malformed keys.
    public init?(_ body: EventBody) throws(EnvelopeError) {
        guard Self.types.contains(body.type) else { return nil }
        func str(_ k: String) throws(EnvelopeError) -> String {
            guard let s = body[k]?.stringValue else { throw .badBody("\(body.type) without \"\(k)\"") }
            return s
        }
        func hex(_ k: String, _ n: Int) throws(EnvelopeError) -> [UInt8] {
            guard let b = Hex.decode(try str(k)), b.count == n else { throw .badBody("\(body.type): \"\(k)\" is not \(n) bytes of hex") }
            return b
        }
        func int(_ k: String) throws(EnvelopeError) -> Int64 {
            guard case .int(let i)? = body[k], i >= 0 else { throw .badBody("\(body.type) without integer \"\(k)\"") }
            return i
        }
        func device(_ k: String) throws(EnvelopeError) -> DeviceID { DeviceID(bytes: try hex(k, 32)) }
        func invite() throws(EnvelopeError) -> InviteID { InviteID(bytes: try hex("invite", 16)) }
        func role() throws(EnvelopeError) -> Role {
            guard let r = Role(rawValue: try str("role")), r != .owner else { throw .badBody("\(body.type): role must be member or viewer") }
            return r
        }
        func epoch() throws(EnvelopeError) -> UInt32 {
            let e = try int("epoch")
            guard e <= Int64(UInt32.max) else { throw .badBody("\(body.type): epoch out of range") }
            return UInt32(e)
        }
        switch body.type {
        case "family.create": self = .familyCreate(name: try str("name"), ownerName: try str("ownerName"), ownerBox: try hex("ownerBox", 32))
        case "invite.create":
            self = .inviteCreate(invite: try invite(), role: try role(), expiresMs: UInt64(try int("expires")), verifier: try hex("verifier", 32), epoch: try epoch())
        case "invite.revoke": self = .inviteRevoke(invite: try invite())
        case "invite.used": self = .inviteUsed(invite: try invite(), member: try device("member"))
        case "member.join": self = .memberJoin(invite: try invite(), name: try str("name"), box: try hex("box", 32), proof: try hex("proof", 64))
        case "member.remove": self = .memberRemove(member: try device("member"), cutoff: UInt64(try int("cutoff")))
        case "member.role": self = .memberRole(member: try device("member"), role: try role())
        case "key.rotate":
            guard case .object(let o)? = body["sealed"] else { throw .badBody("key.rotate without \"sealed\"") }
            var sealed: [DeviceID: [UInt8]] = [:]
            for (k, v) in o {
                guard let d = DeviceID(hex: k), let s = v.stringValue, let b = Hex.decode(s) else { throw .badBody("key.rotate: bad sealed entry") }
                sealed[d] = b
            }
            self = .keyRotate(epoch: try epoch(), sealed: sealed)
        case "key.previous": self = .keyPrevious(epoch: try epoch(), previousKey: try hex("previousKey", 32))
        default: self = .keyShare(epoch: try epoch(), member: try device("member"), sealed: try hex("sealed", 80))
        }
    }
}

/// An invitation's id: 16 random bytes.
public struct InviteID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 16, "an InviteID is 16 bytes")
        self.bytes = bytes
    }
    public init?(hex: String) {
        guard let b = Hex.decode(hex), b.count == 16 else { return nil }
        bytes = b
    }
    public static func random() -> InviteID { InviteID(bytes: Sodium.randomBytes(16)) }
    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }
}

/// The proof a joining device gives that it holds the invite secret: the
/// secret derives an Ed25519 key (whose public half, the verifier, is in the
/// `invite.create` event) and that key signs the family, the invite and the
/// joining device. Nobody learns the secret from the proof.
public enum JoinProof {
    static let seedTag = Array("famctl-invite-key-v1".utf8)
    static let messageTag = Array("famctl-join-v1".utf8)

    /// The invite key derived from the invite secret: BLAKE2b-256(tag ‖ secret) as the seed.
    public static func key(secret: SecretBytes) -> SigningKey {
        let seed = secret.withUnsafeBytes { s in Sodium.blake2b256(seedTag + Array(s)) }
        return SigningKey(seed: seed)
    }

    public static func message(family: FamilyID, invite: InviteID, device: DeviceID) -> [UInt8] {
        messageTag + family.bytes + invite.bytes + device.bytes
    }

    public static func sign(secret: SecretBytes, family: FamilyID, invite: InviteID, device: DeviceID) -> [UInt8] {
        message(family: family, invite: invite, device: device).withUnsafeBytes { key(secret: secret).sign($0) }
    }

    public static func verify(proof: [UInt8], verifier: [UInt8], family: FamilyID, invite: InviteID, device: DeviceID) -> Bool {
        let m = message(family: family, invite: invite, device: device)
        return proof.withUnsafeBytes { p in m.withUnsafeBytes { Sodium.verify(signature: p, message: $0, publicKey: verifier) } }
    }
}
