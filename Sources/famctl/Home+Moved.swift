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

/// Babies of one name: most often one baby added on two devices (or
/// carried in by an `accept`) before either saw the other's.
extension Home {
    /// Groups of live babies sharing a name (letters' case aside), each
    /// with the one to keep first: the most records, then the one added
    /// first (the merge hint moves the others' records to it).
    func sameNameBabies(subjects: [SubjectState]? = nil, recordCounts: [String: Int]? = nil) throws -> [[String]] {
        let subjects = try subjects ?? projector.subjects()
        let babies = subjects.filter { $0.kind == .baby && $0.name != nil }
        guard Set(babies.map { $0.name!.lowercased() }).count < babies.count else { return [] }
        let recordCounts = try recordCounts ?? projector.liveRecordCounts()
        return Dictionary(grouping: babies, by: { $0.name!.lowercased() })
            .values.filter { $0.count > 1 }
            .map { group in
                group.sorted { a, b in
                    let (ra, rb) = (recordCounts[a.focus.description] ?? 0, recordCounts[b.focus.description] ?? 0)
                    return ra != rb ? ra > rb : (a.created != b.created ? a.created < b.created : a.focus.description < b.focus.description)
                }.map(\.focus.description)
            }
            .sorted { $0[0] < $1[0] }
    }

    /// What `status`, `sync` and `accept` say of one group.
    /// - Parameter counts: with each baby's number of records (`status`;
    ///   a sync's warning leaves them out, so that a watch says it once).
    static func sameNameText(_ keys: [String], subjects: [SubjectState], recordCounts: [String: Int], counts: Bool = true) -> String {
        let names = keys.map { k in subjects.first { $0.focus.description == k }?.name ?? "" }
        let name = names[0]
        // Names alike but for letters' case: each spelling names its own baby (a review).
        let which = Set(names).count == 1 ? "'--focus \(name)' names \(keys.count == 2 ? "neither" : "none of them")"
            : "each spelling (\(names.map { "'\($0)'" }.joined(separator: ", "))) names its own with --focus, easily mixed up"
        return "\(keys.count) babies are named \(name): \(keys.map { counts ? "\($0) (\(recordCounts[$0] ?? 0) record(s))" : $0 }.joined(separator: ", ")); "
            + which + ". If one baby was added twice, "
            + keys.dropFirst().map { "'famctl subject remove \($0) --move-records-to \(keys[0])'" }.joined(separator: " then ")
            + " merges them into the first"
    }

    /// The warnings of ``sameNameBabies(subjects:recordCounts:)``, for `sync` and `accept`.
    func sameNameWarnings() -> [String] {
        guard let subjects = try? projector.subjects(), let groups = try? sameNameBabies(subjects: subjects), !groups.isEmpty,
              let counts = try? projector.liveRecordCounts() else { return [] }
        return groups.map { "famctl: warning: " + Self.sameNameText($0, subjects: subjects, recordCounts: counts, counts: false) }
    }
}

/// Photos of a record its photos list does not name: two devices adding a
/// photo at once each wrote a list, and one list won.
extension Home {
    /// Each live record with live photos its list does not name (ids in lowercase).
    func unlistedPhotos() -> [UUID: Set<String>] {
        guard let photos = try? projector.photos() else { return [:] }
        var out: [UUID: Set<String>] = [:]
        for (key, its) in Dictionary(grouping: photos, by: \.record) {
            guard let record = key, let r = try? projector.record(record), !r.deleted else { continue }
            let listed = Set(Self.photoList(r).compactMap { $0.stringValue?.lowercased() })
            let missing = Set(its.map(\.id.lowercasedText)).subtracting(listed)
            if !missing.isEmpty { out[record] = missing }
        }
        return out
    }

    /// What a sync says of the photos its round left out of their records'
    /// lists (those not left out before it).
    func unlistedPhotoWarnings(before: [UUID: Set<String>]) -> [String] {
        unlistedPhotos().sorted { $0.key.uuidString < $1.key.uuidString }.compactMap { record, missing in
            let new = missing.subtracting(before[record] ?? [])
            guard !new.isEmpty, let r = try? projector.record(record) else { return nil }
            let listed = Self.photoList(r).compactMap(\.stringValue)
            let all = listed + missing.sorted().filter { id in !listed.contains { $0.lowercased() == id } }
            let one = new.count == 1
            // Neutral: a list written on purpose without it ('record update
            // … photos=' on another device) looks the same (a review).
            return "famctl: warning: photo\(one ? "" : "s") \(new.sorted().joined(separator: ", ")) of record \(record.lowercasedText) \(one ? "is" : "are") no longer in its photos list "
                + "(another device wrote the list without \(one ? "it" : "them"): by 'record update … photos=', or adding a photo at the same time, where its list won; the photo\(one ? " is" : "s are") kept): "
                + "if that was not meant, 'famctl record update \(record.lowercasedText) photos=\(all.joined(separator: ","))' puts \(one ? "it" : "them") back; 'famctl photo delete ID' deletes a photo for good."
        }
    }
}
