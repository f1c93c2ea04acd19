import Envelope
import Foundation

/// The one-line invitation `famctl invite` prints: a bearer capability.
///
/// Text: `famctl1-` followed by lowercase RFC 4648 base32 (no padding) of:
///
/// | size | field |
/// | ---: | --- |
/// | 1 | version = 1 |
/// | 16 | family id |
/// | 16 | invite id |
/// | 32 | invite secret |
/// | 32 | owner's device key |
/// | 4 | key epoch (big-endian) |
/// | 32 | that epoch's key |
/// | 1 | role: 0 member, 1 viewer |
/// | 8 | expires, ms since the Unix epoch (big-endian) |
/// | 8 | the HLC of the `invite.create` event (big-endian): the join must come after it |
/// | 1 | location kind: 0 none, 1 shared directory, 2 peer URL |
/// | 2 | location length *n* (big-endian) |
/// | *n* | location, UTF-8 |
/// | 4 | checksum: the first 4 bytes of BLAKE2b-256 of everything before it |
///
/// The checksum turns a mistyped character into a clear "typo" error.
public struct InviteCode {
    public static let prefix = "famctl1-"
    public static let version: UInt8 = 1

    public enum Location: Equatable, Sendable {
        case none
        case directory(String)
        case peer(String)
    }

    public let family: FamilyID
    public let invite: InviteID
    public let secret: SecretBytes
    public let owner: DeviceID
    public let key: EpochKey
    public let role: Role
    public let expiresMs: UInt64
    public let issued: HLC
    public let location: Location

    public init(family: FamilyID, invite: InviteID, secret: SecretBytes, owner: DeviceID, key: EpochKey, role: Role, expiresMs: UInt64,
                issued: HLC, location: Location) {
        self.family = family
        self.invite = invite
        self.secret = secret
        self.owner = owner
        self.key = key
        self.role = role
        self.expiresMs = expiresMs
        self.issued = issued
        self.location = location
    }

    public var text: String {
        var b: [UInt8] = [Self.version] + family.bytes + invite.bytes
        secret.withUnsafeBytes { b += $0 }
        b += owner.bytes
        b += withUnsafeBytes(of: key.epoch.bigEndian) { Array($0) }
        key.key.withUnsafeBytes { b += $0 }
        b.append(role == .viewer ? 1 : 0)
        b += withUnsafeBytes(of: expiresMs.bigEndian) { Array($0) }
        b += issued.bigEndianBytes
        let (kind, loc): (UInt8, String) = switch location {
        case .none: (0, "")
        case .directory(let d): (1, d)
        case .peer(let u): (2, u)
        }
        let l = Array(loc.utf8)
        b.append(kind)
        b += [UInt8(l.count >> 8), UInt8(l.count & 0xff)]
        b += l
        b += Sodium.blake2b256(b).prefix(4)
        defer { _ = b.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        return Self.prefix + Base32.encode(b)
    }

    /// Parses and checks an invite code.
    /// - Throws: ``InviteCodeError`` naming what is wrong: not an invite, a character
    ///   outside the alphabet, a typo (checksum), an unknown version, a cut-off code.
    public init(parsing raw: String) throws(InviteCodeError) {
        // Spaces and line breaks are no part of a code: a mail client that
        // wraps a long line puts them in (the checksum still catches a typo).
        let text = String(raw.filter { !$0.isWhitespace }).lowercased()
        guard text.hasPrefix(Self.prefix) else { throw .notAnInvite }
        let body = String(text.dropFirst(Self.prefix.count))
        let bytes: [UInt8]
        switch Base32.decode(body) {
        case .success(let b): bytes = b
        case .failure(let e): throw e
        }
        let fixed = 1 + 16 + 16 + 32 + 32 + 4 + 32 + 1 + 8 + 8 + 1 + 2
        guard bytes.count >= fixed + 4 else { throw .truncated }
        let declared = Int(bytes[fixed - 2]) << 8 | Int(bytes[fixed - 1])
        if bytes.count < fixed + declared + 4 { throw bytes.count < fixed + 4 + declared - 2 ? .truncated : .typo }
        let payload = Array(bytes.dropLast(4))
        guard Array(Sodium.blake2b256(payload).prefix(4)) == Array(bytes.suffix(4)) else { throw .typo }
        guard bytes[0] == Self.version else { throw .unsupportedVersion(bytes[0]) }
        var i = 1
        func take(_ n: Int) -> [UInt8] { defer { i += n }; return Array(payload[i..<i + n]) }
        family = FamilyID(bytes: take(16))
        invite = InviteID(bytes: take(16))
        secret = SecretBytes(take(32))
        owner = DeviceID(bytes: take(32))
        let epoch = take(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        key = EpochKey(epoch: epoch, key: SecretBytes(take(32)))
        role = take(1)[0] == 1 ? .viewer : .member
        expiresMs = take(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        issued = HLC(rawValue: take(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let kind = take(1)[0]
        let len = take(2).reduce(0) { $0 << 8 | Int($1) }
        guard i + len == payload.count, let loc = String(bytes: take(len), encoding: .utf8) else { throw .truncated }
        switch kind {
        case 1: location = .directory(loc)
        case 2: location = .peer(loc)
        default: location = .none
        }
        // The family's id is derived from its owner's key: a code whose
        // owner does not own its family was altered (its checksum is no
        // seal: whoever passes it on can rewrite it whole). Taken as it is,
        // the device would learn keys only from that "owner", and write
        // under whatever key it planted.
        guard FamilyID.owned(by: owner) == family else { throw .altered }
    }
}

@available(*, unavailable)
extension InviteCode: Sendable {}

public enum InviteCodeError: Error, Equatable, Sendable, CustomStringConvertible {
    case notAnInvite
    case badCharacter(position: Int, character: Character)
    case typo
    case truncated
    case unsupportedVersion(UInt8)
    /// Well formed, but its owner does not own the family it names.
    case altered

    public var description: String {
        switch self {
        case .notAnInvite: "this is not a famctl invite code (it should start with \(InviteCode.prefix))"
        case .badCharacter(let p, let c): "the invite code has a character that cannot be in one: '\(c)' at position \(p + InviteCode.prefix.count + 1)"
        case .typo: "the invite code has a typo: its checksum does not match (copy it again, whole)"
        case .truncated: "the invite code is incomplete (copy it again, whole)"
        case .unsupportedVersion(let v): "the invite code is version \(v); this famctl reads version 1 (upgrade famctl)"
        case .altered: "the invite code was altered: the owner it names does not own the family it names; nothing was written (ask the family's owner for a new code, over a channel you trust)"
        }
    }
}

/// RFC 4648 base32, lowercase, without padding.
enum Base32 {
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        var buffer = 0, bits = 0
        for b in bytes {
            buffer = buffer << 8 | Int(b)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> Result<[UInt8], InviteCodeError> {
        var out = [UInt8]()
        var buffer = 0, bits = 0
        for (i, c) in text.enumerated() {
            guard let a = c.asciiValue, let v = alphabet.firstIndex(of: a) else { return .failure(.badCharacter(position: i, character: c)) }
            buffer = buffer << 5 | v
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> (bits - 8)) & 0xff))
                bits -= 8
            }
            buffer &= (1 << bits) - 1
        }
        // What base32 of whole bytes leaves over: fewer than 5 bits, all zero.
        // Anything else is a mangled code; the caller's length check speaks first.
        return .success(bits < 5 && buffer == 0 ? out : out + [0])
    }
}
