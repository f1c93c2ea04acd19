import Envelope
import EventLog
import Foundation
import Projections

/// Epoch keys: learned from the owner's key events, shared by the owner with
/// members who joined holding an older key.
extension Home {
    /// The family's owner as this device knows it: itself after `family
    /// create`, the invitation's owner key after `accept`.
    var knownOwner: DeviceID? { (try? state.get(.owner)).flatMap { $0 }.flatMap(DeviceID.init(hex:)) }

    /// Reads every key event of the owner this device can open and stores the
    /// keys it reveals (sealed to this device, or earlier keys carried by
    /// later ones), until no new key appears. Only the owner's key events are
    /// trusted: anyone else could plant a key.
    func learnKeys() throws {
        guard let owner = knownOwner else { return }
        var learned = true
        while learned {
            learned = false
            try log.forEachEvent(order: .chain, in: family) { stored in
                guard stored.author == owner, let env = try? SyncEnvelope(decoding: stored.bytes),
                      case .body(let body) = try openBody(env), let event = try? LibraryEvent(body) else { return }
                var found: EpochKey?
                switch event {
                case .keyRotate(let epoch, let sealed):
                    if let box = sealed[deviceID], let k = identity.box.open(sealed: box), k.count == 32 { found = EpochKey(epoch: epoch, key: k) }
                case .keyShare(let epoch, let member, let sealed) where member == deviceID:
                    if let k = identity.box.open(sealed: sealed), k.count == 32 { found = EpochKey(epoch: epoch, key: k) }
                case .keyPrevious(let epoch, let previous) where epoch > 0:
                    found = EpochKey(epoch: epoch - 1, key: SecretBytes(previous))
                default: break
                }
                if let found, try state.keyring.key(family: family, epoch: found.epoch) == nil {
                    try state.keyring.store(found, family: family)
                    learned = true
                }
            }
        }
    }

    /// The owner seals the current key to each active member who joined with
    /// an older one (an invitation made before a rotation it then missed).
    func shareKeysIfOwner() throws {
        guard projector.household.owner == deviceID, let current = try state.keyring.current(family: family) else { return }
        let h = projector.household
        let missing = h.membersMissingKey(epoch: current.epoch)
        guard !missing.isEmpty else { return }
        // Each share is written under the key the member joined with: the one
        // it can open. Only the sealed box inside carries the new key.
        var shares: [(EventBody, EpochKey)] = []
        for m in missing {
            let joinedEpoch = m.invite.flatMap { h.invites[$0]?.epoch } ?? 0
            guard let readable = try state.keyring.key(family: family, epoch: joinedEpoch) else { continue }
            shares.append((LibraryEvent.keyShare(epoch: current.epoch, member: m.device, sealed: BoxKey.seal(current.key, to: m.box)).body, readable))
        }
        if !shares.isEmpty { try append(shares) }
    }
}
