import Foundation

/// A stand-in for a sync engine between per-device views of one shared
/// folder, behaving as badly as the real ones were seen to: files arrive in
/// any order, partially, empty or damaged under their final name before the
/// right bytes; temporary files, placeholders and conflict copies appear;
/// deletions travel late; another family's folder shows up. `settle()` ends
/// with every view holding the authors' files intact (plus the litter).
final class SyncEngineSimulator {
    let views: [String]
    var rng: SplitMix
    let faults: Bool
    private(set) var injected: [String: Int] = [:]

    init(views: [String], seed: UInt64, faults: Bool) {
        self.views = views
        self.rng = SplitMix(seed: seed)
        self.faults = faults
        for v in views { try? FileManager.default.createDirectory(atPath: v, withIntermediateDirectories: true) }
    }

    /// Files as their authors hold them: `family/author/name` in the view of the device that wrote them.
    func canonical() -> [String: (Data, Int)] {
        var out: [String: (Data, Int)] = [:]
        for (i, v) in views.enumerated() {
            for path in files(in: v) where path.hasSuffix(".seg") && !path.contains("conflict") {
                let parts = path.split(separator: "/")
                guard parts.count == 3, ownerOf(author: String(parts[1])) == i,
                      let d = FileManager.default.contents(atPath: v + "/" + path) else { continue }
                out[path] = (d, i)
            }
        }
        return out
    }

    /// Which view an author writes in: the view where its folder holds a file the others lack… simply, the view whose device wrote it.
    var authorViews: [String: Int] = [:]
    func register(author: String, view: Int) { authorViews[author] = view }
    func ownerOf(author: String) -> Int? { authorViews[author] }

    func files(in root: String) -> [String] {
        guard let e = FileManager.default.enumerator(atPath: root) else { return [] }
        var out: [String] = []
        while let p = e.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + p, isDirectory: &isDir), !isDir.boolValue { out.append(p) }
        }
        return out
    }

    private func chance(_ percent: UInt64) -> Bool { rng.next() % 100 < percent }
    private func note(_ k: String) { injected[k, default: 0] += 1 }

    private func put(_ data: Data, _ path: String) {
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        precondition(FileManager.default.createFile(atPath: path, contents: data), "the simulated sync engine cannot write \(path)")
    }

    /// One round of partial, faulty propagation.
    func step() {
        let truth = canonical()
        for (i, v) in views.enumerated() {
            for (path, (data, owner)) in truth where owner != i {
                let target = v + "/" + path
                if FileManager.default.contents(atPath: target) == data { continue }
                guard chance(50) else { continue }
                if faults && chance(35) {
                    switch rng.next() % 6 {
                    case 0: put(Data(), target); note("zero-length")
                    case 1: put(data.prefix(Int(rng.next() % UInt64(max(data.count, 1)))), target); note("truncated")
                    case 2:
                        var d = data; let k = Int(rng.next() % UInt64(d.count)); d[k] ^= 0x20; put(d, target); note("bit-flipped")
                    case 3: put(data.prefix(data.count / 2), v + "/" + (path as NSString).deletingLastPathComponent + "/.syncthing." + (path as NSString).lastPathComponent + ".tmp"); note("temp file")
                    case 4: put(Data("placeholder".utf8), v + "/" + (path as NSString).deletingLastPathComponent + "/." + (path as NSString).lastPathComponent + ".icloud"); note("icloud placeholder")
                    default:
                        let stem = String((path as NSString).lastPathComponent.dropLast(4))
                        let dir = v + "/" + (path as NSString).deletingLastPathComponent
                        put(data, dir + "/" + (chance(50) ? "\(stem).sync-conflict-20261129-120000-ABCDEFG.seg" : "\(stem) (Dad's conflicted copy 2026-11-29).seg"))
                        note("conflict copy (same content)")
                    }
                } else {
                    put(data, target)
                }
            }
            // Deletions (compaction) travel late.
            for path in files(in: v) where path.hasSuffix(".seg") && !path.contains("conflict") && truth[path] == nil {
                let parts = path.split(separator: "/")
                if parts.count == 3, ownerOf(author: String(parts[1])) != i, chance(40) { try? FileManager.default.removeItem(atPath: v + "/" + path) }
            }
            if faults && chance(5) {
                put(Data("not ours".utf8), v + "/\(UUID().uuidString.lowercased())/\(String(repeating: "ab", count: 32))/x.seg"); note("other family's folder")
            }
        }
    }

    /// Delivers everything intact and removes what authors removed.
    func settle() {
        let truth = canonical()
        for (i, v) in views.enumerated() {
            for (path, (data, owner)) in truth where owner != i { put(data, v + "/" + path) }
            for path in files(in: v) where path.hasSuffix(".seg") && !path.contains("conflict") && truth[path] == nil {
                let parts = path.split(separator: "/")
                if parts.count == 3, ownerOf(author: String(parts[1])) != nil, ownerOf(author: String(parts[1])) != i {
                    try? FileManager.default.removeItem(atPath: v + "/" + path)
                }
            }
        }
    }
}
