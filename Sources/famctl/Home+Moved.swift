import Envelope
import Foundation
import Projections
import Replicator

/// The notes devices leave in a location the family's events no longer
/// travel through (``MovedNotice``): left by `settings sync`, read by
/// every `sync` there.
extension Home {
    /// A device that left this device's location, as its note says.
    struct MovedAway: Equatable {
        let author: DeviceID
        let at: Date
        /// The new location as the leaving device names it (its path, or
        /// the server's URL); `nil` without the family's key of its epoch.
        let location: String?
    }

    /// Leaves this device's note in the location it syncs with now, before
    /// it moves to `new`: the devices still syncing there are told at
    /// their next sync that it left, and where to (sealed with the
    /// family's key). Returns a warning when the note could not be left
    /// (the old location gone, say); the move goes on.
    ///
    /// Called once `new` is stored (a location refused leaves no note), with
    /// the location it leaves.
    func leaveMovedNotice(leaving old: Location, for new: Location) -> String? {
        // What was said of the others at the old location is not said of the new one.
        try? state.remove(.movedAway)
        let text: String
        switch new {
        case .directory(let d): text = d
        case .peer(let p): text = p
        case .none: return nil
        }
        if case .none = old { return nil }
        // A folder gone from its path (renamed, unmounted): nobody syncs there.
        if case .directory(let d) = old, !FileManager.default.fileExists(atPath: d) { return nil }
        guard let (family, key) = try? currentKey() else { return nil }
        // After every event of this device: a reader that holds one of its
        // events dated later knows the note is old (the device came back).
        let head = (try? log.head(of: deviceID, in: family).hlc.date) ?? .distantPast
        let at = max(Date(), head.addingTimeInterval(0.001))
        let notice = MovedNotice.make(family: family, signer: identity.signing, at: at, location: text, key: key)
        do {
            let replicator = try self.replicator(probe: false, at: old)
            try replicator.leaveMovedNotice(notice)
            // The same place reached another way (a mount point renamed, a
            // link, the server's URL spelled otherwise): the new location
            // shows this very note (its bytes: not an older note of an
            // earlier move), which would tell the family this device left.
            if let there = try? self.replicator(probe: false, at: new) {
                if there.holdsMovedNotice(notice) { try replicator.removeMovedNotice() }
                // Back at a place it left before: its note there goes now,
                // not at its next sync there (a review).
                else { do throws(PeerError) { try there.removeMovedNotice() } catch {} }
            }
            return nil
        } catch {
            let place = switch old {
            case .directory(let d): "the shared folder \(d)"
            case .peer(let p): "the peer \(p)"
            case .none: "the old location"
            }
            return "famctl: warning: could not leave a note in \(place) that this device moved (\(error)): the devices still syncing there are told only after two weeks without its events"
        }
    }

    /// Keeps what the last round's full listing showed of the others'
    /// notes (nothing when it made none), for `sync` and `status`.
    func noteMovedAway(_ notices: [MovedNotice]?) {
        guard let notices else { return }
        let keys = (try? state.keyring.keys(family: family)) ?? [:]
        let household = projector.household
        // The family's members' alone (a note under any other key says nothing).
        let rows: [[String: Any]] = notices.filter { n in
            n.family == family && n.author != deviceID && (household.members[n.author] != nil || household.owner == n.author)
        }.map { n in
            ["author": n.author.hex, "at": Int64(clamping: UInt64(max(0, n.at.timeIntervalSince1970 * 1000).rounded())),
             "location": keys[n.epoch].flatMap { n.location(with: $0) } ?? NSNull()]
        }
        if rows.isEmpty { try? state.remove(.movedAway); return }
        guard let data = try? JSONSerialization.data(withJSONObject: rows, options: [.sortedKeys]) else { return }
        try? state.set(.movedAway, String(decoding: data, as: UTF8.self))
    }

    /// The devices whose notes say they left this device's location: those
    /// of the family's active members whose events here all came before
    /// their note (one that wrote here since came back).
    func movedAway() -> [MovedAway] {
        guard let text = (try? state.get(.movedAway)) ?? nil,
              let rows = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] else { return [] }
        let household = projector.household
        return rows.compactMap { row -> MovedAway? in
            guard let hex = row["author"] as? String, let author = DeviceID(hex: hex), let ms = row["at"] as? Int64 else { return nil }
            let at = Date(timeIntervalSince1970: Double(ms) / 1000)
            guard household.members[author]?.isActive == true || household.owner == author else { return nil }
            if let head = try? log.head(of: author, in: family), head.seq > 0, head.hlc.date > at { return nil }
            return MovedAway(author: author, at: at, location: row["location"] as? String)
        }.sorted { $0.at < $1.at }
    }

    /// What `sync` and `status` say of a device that left.
    func movedAwayText(_ m: MovedAway) -> String {
        let name = projector.household.members[m.author]?.name ?? m.author.short
        let here = if case .peer(let url) = Location.stored(in: self) { "the peer \(url)" } else { "this shared folder" }
        // The kind of the new location, as the note names it (a review: this one's was named).
        let option = m.location.map { $0.lowercased().hasPrefix("http://") || $0.lowercased().hasPrefix("https://") } == true ? "--peer URL"
            : m.location == nil ? "--dir PATH (or --peer URL)" : "--dir PATH"
        let there = m.location.map { " (\($0), as that device names it)" } ?? ""
        return "\(name) (\(m.author.short)) left \(here) for another location\(there) on \(TimeText.format(m.at)): "
            + "what this device writes here no longer reaches it. If the family moved, point this device at the new location: 'famctl settings sync \(option)', then 'famctl sync'."
    }
}
