import Envelope
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The shared directory seen as a ``Peer``. A folder has no change feed, so
/// `changes` lists everything each time (the token is the listing's
/// fingerprint, never expired) and the replicator skips what it has read.
/// Version tags are size and modification time. Writes go through
/// ``SharedDirectory`` (staged outside the folder, fsynced, renamed in).
public final class DirectoryPeer: Peer {
    public let directory: SharedDirectory
    public var label: String { "dir:" + directory.root }

    public init(_ directory: SharedDirectory) { self.directory = directory }

    private func full(_ path: String) -> String { directory.familyPath + "/" + path }

    /// - Parameter links: a symbolic link that leads nowhere (a loop, a
    ///   target gone) gets a tag of its own times, so that reading it says
    ///   what it is instead of the file passing unseen. Without (a blob, a
    ///   write that must not replace a file): it counts as absent, and the
    ///   blob is uploaded again over it, as a missing one is.
    private func tag(_ path: String, links: Bool = true) -> String? {
        var st = stat()
        guard stat(full(path), &st) == 0 else {
            guard links, lstat(full(path), &st) == 0, st.st_mode & S_IFMT == S_IFLNK else { return nil }
            return "link-\(st.st_size)-\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)-\(st.st_ino)-\(st.st_ctim.tv_sec).\(st.st_ctim.tv_nsec)"
        }
        // The change time too: a writer can set the modification time back,
        // nobody can set the change time.
        return "\(st.st_size)-\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)-\(st.st_ino)-\(st.st_ctim.tv_sec).\(st.st_ctim.tv_nsec)"
    }

    private func map(_ e: SharedDirectoryError) -> PeerError {
        switch e {
        case .missing(let p): .offline("the shared directory \(p) is missing (unmounted, or not created yet)")
        case .notADirectory, .link: .notAFolder(e.description)
        case .unreadable(let p, let why): .unavailable("cannot read \(p): \(why)")
        case .denied: .denied(e.description)
        case .notWritable(let p, let why): .notWritable("cannot write into \(p): \(why)")
        case .full, .overSizeLimit: .full(e.description)
        case .ioError: .unavailable(e.description)
        case .staging: .homeNotWritable(e.description)
        }
    }

    public func namesOnce(in folder: String) throws(PeerError) -> [String]? {
        do { return try FileIO.list(full(folder)) } catch {
            if error.code == ENOENT { return [] }
            throw .unavailable("cannot list \(full(folder)): \(error.reason)")
        }
    }

    public func changes(since token: String?, limit: Int) throws(PeerError) -> ChangePage {
        let entries: [SharedDirectory.Entry]
        var unreadable: [UnreadableFolder] = []
        do { entries = try directory.list(unreadable: &unreadable) } catch { throw map(error) }
        var objects = entries.compactMap { e in tag(e.path).map { PeerObject(path: e.path, tag: $0) } }
        // The photos' blobs too, as a server lists them: what a blob's tag
        // was is how a device holding a copy sees it was changed since.
        let blobs = (try? FileIO.list(directory.familyPath + "/blobs")) ?? []
        objects += blobs.compactMap { name in
            // An iCloud placeholder (`.NAME.blob.icloud`) lists the blob it
            // stands for: there, its bytes elsewhere, not to be uploaded again.
            let blob = name.hasPrefix(".") && name.hasSuffix(".blob.icloud") ? String(name.dropFirst().dropLast(".icloud".count)) : name
            guard blob.hasSuffix(".blob") else { return nil }
            return tag("blobs/" + name, links: false).map { PeerObject(path: "blobs/" + blob, tag: $0) }
        }
        return ChangePage(objects: objects, token: "listing", moreComing: false, unreadableFolders: unreadable)
    }

    public func create(_ path: String, _ bytes: [UInt8]) throws(PeerError) {
        guard tag(path, links: false) == nil else { throw .alreadyExists }
        let parts = path.split(separator: "/")
        guard parts.count == 2, parts[0] == "blobs" || DeviceID(hex: String(parts[0])) != nil else { throw .unsupported("bad path \(path)") }
        do { try directory.publish(bytes, as: String(parts[1]), into: String(parts[0])) } catch { throw map(error) }
    }

    public func replace(_ path: String, _ bytes: [UInt8], expected: String?) throws(PeerError) -> String {
        guard tag(path, links: expected != nil) == expected else { throw .conflict(current: tag(path)) }
        let parts = path.split(separator: "/")
        guard parts.count == 2 else { throw .unsupported("bad path \(path)") }
        do { try directory.publish(bytes, as: String(parts[1]), into: String(parts[0])) } catch { throw map(error) }
        return tag(path) ?? ""
    }

    public func get(_ path: String) throws(PeerError) -> (bytes: [UInt8], tag: String) {
        guard let t = tag(path) else { throw .notFound }
        do { return (try FileIO.readFile(full(path)), t) } catch {
            if t.hasPrefix("link-") {
                throw .refused("\(full(path)) is a symbolic link whose target cannot be read (\(String(cString: strerror(error.code)))); replace it with the file, or remove it")
            }
            if error.code == ENOENT { throw .notFound }
            // This one file cannot be read: not yet arrived. Too large, not
            // ours to read, not a file: refused until it changes; anything
            // else (an I/O error, a placeholder still downloading) may pass.
            if error.notRegularFile { throw .refused(error.reason + "; move it out of the shared folder (only files are read there)") }
            if error.permissionDenied || error.code == EFBIG { throw .refused(error.reason) }
            throw .unsupported(error.reason)
        }
    }

    public func delete(_ path: String) throws(PeerError) {
        let parts = path.split(separator: "/")
        guard parts.count == 2 else { throw .unsupported("bad path \(path)") }
        let e: Int32
        do { e = try directory.remove(String(parts[1]), in: String(parts[0])) } catch { throw map(error) }
        guard e == 0 else {
            if e == ENOENT { throw .notFound }
            throw .unavailable(String(cString: strerror(e)))
        }
    }
}

@available(*, unavailable)
extension DirectoryPeer: Sendable {}
