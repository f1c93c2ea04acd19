import Envelope
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A family's area in a shared directory kept in sync by another program
/// (Syncthing, Dropbox, iCloud Drive, NFS…):
///
/// ```
/// DIR/<family id>/<author key hex>/<segment name>
/// ```
///
/// Each device writes only into its own author folder, and only whole files:
/// written elsewhere, fsynced, renamed into place, directory fsynced. It never
/// deletes what others wrote.
public final class SharedDirectory {
    public let root: String
    public let family: FamilyID
    /// Where files are written before being renamed in: outside the synced
    /// folder, so no sync engine ever sees a half-written file.
    let staging: String
    /// The device folders whose killed writers' leftovers this instance
    /// has removed (``removeLeftovers(in:)``).
    private var cleaned: Set<String> = []
    /// The file systems (`st_dev`) this instance found apart from the
    /// staging folder's (a rename from there failed with `EXDEV`): later
    /// files for a folder on one are written beside their names at once,
    /// not once in staging and again there.
    private var besideOnly: Set<UInt64> = []

    public init(root: String, family: FamilyID, staging: String) {
        self.root = root
        self.family = family
        self.staging = staging
        removeLeftovers()
    }

    /// Removes what a writer killed mid-file left in `staging`
    /// (`NAME.PID.tmp`, up to a segment's 8 MiB each): files of processes
    /// that are gone. One of a process still running is its file in the writing.
    func removeLeftovers() {
        FileIO.removeLeftovers(in: staging) { name in
            name.hasSuffix(".tmp") ? name.dropLast(4).split(separator: ".").last.flatMap { Int32($0) } : nil
        }
    }

    public var familyPath: String { root + "/" + family.description }
    public func folder(_ author: DeviceID) -> String { familyPath + "/" + author.hex }

    /// A file found in the family's area.
    public struct Entry: Sendable, Hashable {
        /// The author folder it sits in, when the folder's name is a device key.
        public let folder: DeviceID
        public let name: String
        public var path: String { folder.hex + "/" + name }
    }

    /// Lists every file in every author folder. Folders whose names are not
    /// device keys are ignored.
    /// - Throws: ``SharedDirectoryError`` when the directory is missing or unreadable.
    public func list() throws(SharedDirectoryError) -> [Entry] {
        var unreadable: [UnreadableFolder] = []
        return try list(unreadable: &unreadable)
    }

    /// ``list()``, and the author folders that could not be read (no
    /// permission, an I/O error): their files are not listed, and the
    /// caller says so rather than take them for empty.
    public func list(unreadable: inout [UnreadableFolder]) throws(SharedDirectoryError) -> [Entry] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDir) else { throw .missing(root) }
        guard isDir.boolValue else { throw .notADirectory(root) }
        guard FileManager.default.fileExists(atPath: familyPath) else { return [] }
        var out: [Entry] = []
        let folders: [String]
        do { folders = try FileIO.list(familyPath) } catch {
            if error.code == ENOTDIR { throw .notADirectory(familyPath) }
            // No permission: asking again will not change it.
            if error.permissionDenied { throw .denied(familyPath, error.reason) }
            throw .unreadable(familyPath, error.reason)
        }
        for f in folders {
            guard f.count == 64, let author = DeviceID(hex: f) else { continue }
            let names: [String]
            do { names = try FileIO.list(familyPath + "/" + f) } catch {
                // Vanished meanwhile: nothing to list. A file in place of a
                // device's folder: its files are unseen, said so (it was
                // taken for a folder gone, and the shared folder for one
                // not mounted).
                if error.code == ENOTDIR { unreadable.append(UnreadableFolder(f, "a file is in its place, not a folder; move it out of the shared folder", fileInPlace: true)) }
                else if error.code != ENOENT { unreadable.append(UnreadableFolder(f, error.reason)) }
                continue
            }
            out += names.map { Entry(folder: author, name: $0) }
        }
        return out
    }

    public func read(_ e: Entry) throws(FileIO.Failure) -> [UInt8] {
        try FileIO.readFile(familyPath + "/" + e.path)
    }

    /// Publishes `bytes` as `name` in `author`'s folder, atomically.
    public func publish(_ bytes: [UInt8], as name: String, author: DeviceID) throws(SharedDirectoryError) {
        try publish(bytes, as: name, into: author.hex)
    }

    /// Removes what a writer killed at its last step left in a device's
    /// folder when its staging folder is on another file system
    /// (`.famctl-PID-NAME.tmp`, up to a segment's 8 MiB, which a sync
    /// engine copies to every device): files of no process of this machine
    /// untouched for ten minutes (a write in flight, here or on the machine
    /// of that device, takes seconds). In the blobs' folder, everyone's,
    /// only those whose blob is there whole (written by whoever): a killed
    /// upload's copy nothing can need any more (a review found one left
    /// for good at every upload killed, copied to every device).
    func removeLeftovers(in dir: String, onlyOfFilesThere: Bool = false) {
        // Once a folder for this instance (a sync round), not at every
        // segment it publishes there: it lists the whole folder.
        guard cleaned.insert(dir).inserted else { return }
        FileIO.removeLeftovers(in: dir, untouchedFor: 600) { name in
            guard name.hasPrefix(".famctl-"), name.hasSuffix(".tmp") else { return nil }
            let parts = name.dropFirst(".famctl-".count).dropLast(".tmp".count).split(separator: "-", maxSplits: 1)
            guard parts.count == 2, let pid = Int32(parts[0]) else { return nil }
            if onlyOfFilesThere {
                var st = stat()
                guard lstat(dir + "/" + parts[1], &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
            }
            return pid
        }
    }

    /// Publishes `bytes` as `name` in the family's folder `folderName`
    /// (an author's, or `blobs` for photos), atomically.
    public func publish(_ bytes: [UInt8], as name: String, into folderName: String) throws(SharedDirectoryError) {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDir) else { throw .missing(root) }
        // A file in its place is not missing: waiting will not help (a review).
        guard isDir.boolValue else { throw .notADirectory(root) }
        let dir = familyPath + "/" + folderName
        // Neither folder is made through a link (see below).
        for path in [familyPath, dir] where Self.isLink(path) { throw .link(path) }
        // A file in place of either folder: said as such, as a WebDAV
        // server's is (waiting will not make it a folder).
        for path in [familyPath, dir] {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue { throw .notADirectory(path) }
        }
        do {
            try FileIO.createDirectories(atPath: dir)
        } catch {
            throw .notWritable(dir, FileIO.reason(error, creating: dir))
        }
        do {
            try FileIO.createDirectories(atPath: staging, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .staging(staging, FileIO.reason(error, creating: staging))
        }
        // The folder is reached through no symbolic link: a sync engine may
        // bring one from another machine (Syncthing copies links as links),
        // and a link in its place would send this device's files into any
        // folder of this machine it may write. Opened once, without
        // following a link at either level, and written through its
        // descriptor, so that a link put there meanwhile is not followed
        // either.
        let folder = try openRealFolder(folderName)
        defer { close(folder) }
        removeLeftovers(in: dir, onlyOfFilesThere: folderName == "blobs")
        let tmp = staging + "/\(name).\(getpid()).tmp"
        var st = stat()
        let device = fstat(folder, &st) == 0 ? UInt64(st.st_dev) : nil
        let viaStaging = device.map { !besideOnly.contains($0) } ?? true
        // Written first in this home's staging folder: a failure there is
        // this device's, not the shared folder's.
        if viaStaging {
            do { try write(bytes, to: tmp) } catch {
                // The process's own file-size limit, wherever the file is.
                if error.code == EFBIG { throw .overSizeLimit(dir, error.reason) }
                let full = error.code == ENOSPC || error.code == EDQUOT
                throw .staging(staging, (full ? "the disk holding it is full: " : "") + error.reason)
            }
        }
        do {
            let renamed = viaStaging && renameat(AT_FDCWD, tmp, folder, name) == 0
            if !renamed {
                if viaStaging {
                    let e = errno
                    unlink(tmp)
                    guard e == EXDEV else { throw FileIO.Failure(reason: "rename: \(String(cString: strerror(e)))", permissionDenied: e == EACCES, code: e) }
                    if let device { besideOnly.insert(device) }
                }
                // Another file system: stage beside the target under a name no reader accepts.
                let beside = ".famctl-\(getpid())-\(name).tmp"
                try write(bytes, to: beside, in: folder)
                guard renameat(folder, beside, folder, name) == 0 else { let f = FileIO.failure("rename"); unlinkat(folder, beside, 0); throw f }
            }
            guard fsync(folder) == 0 else { throw FileIO.failure("fsync directory") }
        } catch {
            if let f = error as? FileIO.Failure {
                switch f.code {
                case ENOSPC, EDQUOT: throw .full(dir, f.reason)
                case EFBIG: throw .overSizeLimit(dir, f.reason)
                case EIO: throw .ioError(dir, f.reason)
                default: break
                }
            }
            throw .notWritable(dir, FileIO.reason(error))
        }
    }

    /// Writes `bytes` to a new file at `path` (relative to the folder
    /// `dir` opened, else to the working directory), never through a link.
    private func write(_ bytes: [UInt8], to path: String, in dir: Int32 = AT_FDCWD) throws(FileIO.Failure) {
        let fd = Int32(FileIO.retrying { Int(openat(dir, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0o644)) })
        guard fd >= 0 else { throw FileIO.failure("open \(path)") }
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { b in FileIO.retrying { Glibc.write(fd, b.baseAddress! + off, b.count - off) } }
            if n <= 0 { let f = FileIO.failure("write"); close(fd); unlinkat(dir, path, 0); throw f }
            off += n
        }
        guard fsync(fd) == 0 else { let f = FileIO.failure("fsync"); close(fd); unlinkat(dir, path, 0); throw f }
        close(fd)
    }

    /// The family's folder `folderName`, opened (a descriptor to close)
    /// without following a symbolic link, at the family's level or its own.
    /// - Throws: ``SharedDirectoryError/link(_:)`` for a link,
    ///   ``SharedDirectoryError/notADirectory(_:)`` for a file.
    private func openRealFolder(_ folderName: String) throws(SharedDirectoryError) -> Int32 {
        let family = Int32(FileIO.retrying { Int(open(familyPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) })
        guard family >= 0 else { throw Self.folderFailure(familyPath) }
        defer { close(family) }
        let fd = Int32(FileIO.retrying { Int(openat(family, folderName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) })
        guard fd >= 0 else { throw Self.folderFailure(familyPath + "/" + folderName) }
        return fd
    }

    private static func isLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK
    }

    /// Why a folder of the family did not open (`errno` as the open left it).
    private static func folderFailure(_ path: String) -> SharedDirectoryError {
        let e = errno
        if isLink(path) { return .link(path) }
        if e == ENOTDIR { return .notADirectory(path) }
        return .notWritable(path, String(cString: strerror(e)))
    }

    /// Removes `name` from the family's folder `folderName`, never through
    /// a link in place of the folder.
    /// - Returns: 0, or the `errno` of the removal (`ENOENT`: not there).
    /// - Throws: when the folder is a link or not a folder.
    public func remove(_ name: String, in folderName: String) throws(SharedDirectoryError) -> Int32 {
        let folder: Int32
        do {
            folder = try openRealFolder(folderName)
        } catch {
            if case .notWritable = error, access(familyPath + "/" + folderName, F_OK) != 0, errno == ENOENT { return ENOENT }
            throw error
        }
        defer { close(folder) }
        return unlinkat(folder, name, 0) == 0 ? 0 : errno
    }

    /// Removes one of this device's own files (after compaction).
    public func removeOwn(_ name: String, author: DeviceID) {
        _ = try? remove(name, in: author.hex)
    }
}

@available(*, unavailable)
extension SharedDirectory: Sendable {}

public enum SharedDirectoryError: Error, Sendable, CustomStringConvertible {
    case missing(String)
    /// The shared folder, or the family's folder in it, is a file (or
    /// something else that holds no files): waiting will not make it one.
    case notADirectory(String)
    /// The family's folder, or a device's folder in it, is a symbolic
    /// link: famctl does not write through one (it could lead anywhere on
    /// this machine).
    case link(String)
    case unreadable(String, String)
    /// This user may not read it: asking again will not change that.
    case denied(String, String)
    case notWritable(String, String)
    /// No room to write into it: its disk is full or its quota used up.
    case full(String, String)
    /// A file over this process's file-size limit (`ulimit -f`).
    case overSizeLimit(String, String)
    /// The disk (or the network file system) failed the write: a later
    /// round may succeed.
    case ioError(String, String)
    /// This home's staging folder, where segments are written before they
    /// are moved into the shared folder, cannot be made or written.
    case staging(String, String)

    public var description: String {
        switch self {
        case .missing(let p): "the shared directory \(p) is missing (unmounted, or not created yet)"
        case .notADirectory(let p): "\(p) is not a folder (a file is in its place)"
        case .link(let p): "\(p) is a symbolic link, not a folder: famctl writes only into real folders in the shared folder (a link, which a sync engine may bring from another machine, could send this device's files anywhere on it)"
        case .unreadable(let p, let why): "cannot read \(p): \(why)"
        case .denied(let p, let why): "cannot read \(p): \(why)"
        case .notWritable(let p, let why): "cannot write into \(p): \(why)"
        case .full(let p, let why): "cannot write into \(p): the disk holding the shared folder is full (or its quota used up): \(why)"
        case .overSizeLimit(let p, let why): "cannot write into \(p): a file is over this process's file-size limit (ulimit -f): \(why)"
        case .ioError(let p, let why): "cannot write into \(p): an I/O error (the disk, or the network file system): \(why)"
        case .staging(let p, let why): "cannot write this home's staging folder \(p): \(why)"
        }
    }
}
