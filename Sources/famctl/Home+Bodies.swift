import Envelope
import Foundation

extension Home {
    /// The outcome of opening an event's body on this device.
    enum OpenedBody {
        case body(EventBody)
        /// This device holds no key for the event's family and epoch.
        case noKey(epoch: UInt32)
        /// A key was held but the body failed: altered or mis-encrypted.
        case failed(EnvelopeError)
    }

    func openBody(_ env: SyncEnvelope) throws -> OpenedBody {
        Self.openBody(env, with: try state.keyring.key(family: env.family, epoch: env.epoch))
    }

    /// The event's body opened with `key`, the key of its family and epoch
    /// if this device holds it (any thread: `log` opens bodies on every core).
    static func openBody(_ env: SyncEnvelope, with key: EpochKey?) -> OpenedBody {
        guard let key else { return .noKey(epoch: env.epoch) }
        do throws(EnvelopeError) {
            return .body(try EventBody(decoding: env.openBody(with: key)))
        } catch {
            return .failed(error)
        }
    }

    var deviceName: String { (try? state.get(.deviceName)) ?? "?" }
}
