import Envelope
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The seam for file system calls: every syscall goes through here, retries
/// `EINTR`, and reports `errno` as text.
public enum FileIO {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let reason: String
        public let permissionDenied: Bool
        /// `errno` of the failed call, when there was one.
        public var code: Int32 = 0
        /// The path names something other than a regular file (a FIFO, a
        /// device, a socket, a directory): nothing to read as a file.
        public var notRegularFile = false
        /// A lock another process held for longer than the wait allowed
        /// (``withExclusiveLock(_:mode:waitingAtMost:willWait:_:)``).
        public var timedOut = false
        public var description: String { reason }
    }

    static func failure(_ what: String, code e: Int32 = errno) -> Failure {
        Failure(reason: "\(what): \(String(cString: strerror(e)))", permissionDenied: e == EACCES || e == EPERM, code: e)
    }

    public static func reason(_ error: any Error) -> String {
        if let f = error as? Failure { return f.reason }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        // Foundation's own words for these ("The operation could not be
        // completed. The file doesn't exist.") name no cause: the system's do.
        if ns.domain == NSCocoaErrorDomain, let code = [
            CocoaError.fileNoSuchFile.rawValue: ENOENT, CocoaError.fileReadNoSuchFile.rawValue: ENOENT,
            CocoaError.fileWriteFileExists.rawValue: EEXIST, CocoaError.fileWriteNoPermission.rawValue: EACCES,
            CocoaError.fileReadNoPermission.rawValue: EACCES, CocoaError.fileWriteVolumeReadOnly.rawValue: EROFS,
            CocoaError.fileWriteOutOfSpace.rawValue: ENOSPC,
        ][ns.code] {
            return String(cString: strerror(code))
        }
        return ns.localizedDescription
    }

    /// Why `path` could not be created, for a person: Foundation's own
    /// text for some failures is a bare code ("NSCocoaErrorDomain error
    /// 512"), so the path is looked at: the nearest part of it that exists
    /// names the cause when it is a file, or not writable.
    public static func reason(_ error: any Error, creating path: String) -> String {
        var isFile: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFile), !isFile.boolValue {
            return "\(path) exists and is a file, not a directory"
        }
        var ancestor = (path as NSString).deletingLastPathComponent
        while !ancestor.isEmpty, ancestor != "/", access(ancestor, F_OK) != 0 {
            ancestor = (ancestor as NSString).deletingLastPathComponent
        }
        var isDirectory: ObjCBool = false
        if !ancestor.isEmpty, FileManager.default.fileExists(atPath: ancestor, isDirectory: &isDirectory) {
            if !isDirectory.boolValue { return "\(ancestor) is a file, not a directory" }
            if access(ancestor, W_OK) != 0 { return "\(ancestor) is not writable (\(String(cString: strerror(errno))))" }
        }
        return reason(error)
    }

    /// Whether a regular file is at `path` (not a folder, a device, a pipe),
    /// links followed.
    public static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    /// Whether a directory is at `path`, links followed.
    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    /// The size of the regular file at `path` (links followed); `nil` when
    /// there is none.
    public static func size(_ path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(st.st_size)
    }

    /// Retries a syscall interrupted by a signal.
    public static func retrying(_ call: () -> Int) -> Int {
        while true {
            let r = call()
            if r >= 0 || errno != EINTR { return r }
        }
    }

    /// Reads a whole secret file (at most 4 KiB) straight into wiped-on-release memory.
    public static func readSecret(_ path: String) throws(Failure) -> SecretBytes {
        let fd = Int32(retrying { Int(open(path, O_RDONLY | O_CLOEXEC)) })
        guard fd >= 0 else { throw failure("open") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw failure("stat") }
        let size = Int(st.st_size)
        guard size <= 4096 else { throw Failure(reason: "file is \(size) bytes, too large for a key file", permissionDenied: false) }
        var failed: Failure?
        var total = 0
        let out = SecretBytes(count: size) { b in
            while total < size {
                let n = retrying { read(fd, b.baseAddress! + total, size - total) }
                if n < 0 { failed = failure("read"); return }
                if n == 0 { break }
                total += n
            }
        }
        if let failed { throw failed }
        guard total == size else { throw Failure(reason: "file shrank while being read", permissionDenied: false) }
        return out
    }

    /// Removes the files in `directory` that writers killed mid-file left:
    /// those whose name `pid` reads a process id from, when no process of
    /// this machine has that id and the file is unchanged for `age`
    /// seconds. A running process's file is its file in the writing.
    /// Returns how many were removed.
    @discardableResult
    public static func removeLeftovers(in directory: String, untouchedFor age: TimeInterval = 0, pid: (String) -> Int32?) -> Int {
        let before = Date().addingTimeInterval(-age).timeIntervalSince1970
        var removed = 0
        for name in (try? list(directory)) ?? [] {
            guard let id = pid(name), id > 0, kill(id, 0) != 0 && errno == ESRCH else { continue }
            var st = stat()
            guard age <= 0 || (lstat(directory + "/" + name, &st) == 0 && Double(st.st_mtim.tv_sec) < before) else { continue }
            if unlink(directory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// Removes the temporary files an ``AtomicFile`` (``writeAtomically(_:to:mode:)``,
    /// ``writeSecretAtomically(_:to:mode:)``) leaves in `directory` when the
    /// process writing them is killed (`NAME.tmp-PID`, as large as what was
    /// being written).
    @discardableResult
    public static func removeLeftoverTemporaries(in directory: String) -> Int {
        removeLeftovers(in: directory) { name in name.range(of: ".tmp-", options: .backwards).flatMap { Int32(name[$0.upperBound...]) } }
    }

    /// Writes `bytes` to `path` with mode 0600 as an ``AtomicFile``: to a
    /// temporary name beside it, fsync, rename over, fsync the directory.
    public static func writeSecretAtomically(_ bytes: SecretBytes, to path: String, mode: mode_t = 0o600) throws(Failure) {
        try writeAtomically(to: path, mode: mode) { write in bytes.withUnsafeBytes { write($0) } }
    }

    /// Writes what `bytes` hands over, atomically, from its own storage.
    private static func writeAtomically(to path: String, mode: mode_t, _ bytes: ((UnsafeRawBufferPointer) -> Void) -> Void) throws(Failure) {
        let file = try AtomicFile(path: path, mode: mode)
        var failed: Failure?
        bytes { b in
            do throws(Failure) { try file.write(b) } catch { failed = error }
        }
        if let failed { throw failed }
        try file.commit()
    }

    /// What a file of `mode` (`st_mode`) is, said in words: "a directory", "a FIFO"…
    public static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a file"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    /// Reads a whole regular file (at most `limit` bytes). Anything else at
    /// `path` is refused without waiting on it: opening a FIFO for reading
    /// blocks until a writer comes, so the file is opened non-blocking and
    /// looked at before a byte is read.
    public static func readFile(_ path: String, limit: Int = 256 << 20) throws(Failure) -> [UInt8] {
        let fd = try openForReading(path)
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw failure("stat \(path)") }
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw Failure(reason: "\(path) is \(kind(of: st.st_mode)), not a file", permissionDenied: false,
                          code: st.st_mode & S_IFMT == S_IFDIR ? EISDIR : EINVAL, notRegularFile: true)
        }
        let size = Int(st.st_size)
        guard size <= limit else { throw Failure(reason: "\(path) is \(size) bytes, over the \(limit)-byte limit", permissionDenied: false, code: EFBIG) }
        return try readBytes(upTo: size, from: fd, path: path)
    }

    /// The first `count` bytes of a file (fewer when it is shorter).
    public static func readPrefix(_ path: String, count: Int) throws(Failure) -> [UInt8] {
        let fd = try openForReading(path)
        defer { close(fd) }
        return try readBytes(upTo: count, from: fd, path: path)
    }

    /// `path` opened for reading, non-blocking: a FIFO does not wait for a writer.
    private static func openForReading(_ path: String) throws(Failure) -> Int32 {
        let fd = Int32(retrying { Int(open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) })
        guard fd >= 0 else { throw failure("open \(path)") }
        return fd
    }

    /// Up to `count` bytes of `fd` (fewer at its end), read straight into
    /// the array's storage, neither zeroed first nor copied after (a segment
    /// file is up to a few megabytes; the two were a tenth of a read's
    /// instructions).
    private static func readBytes(upTo count: Int, from fd: Int32, path: String) throws(Failure) -> [UInt8] {
        var failedWith: Int32? = nil
        let out = [UInt8](unsafeUninitializedCapacity: count) { b, filled in
            var total = 0
            while total < count {
                let n = retrying { read(fd, b.baseAddress! + total, count - total) }
                if n < 0 { failedWith = errno; break }
                if n == 0 { break }
                total += n
            }
            filled = total
        }
        if let code = failedWith { throw failure("read \(path)", code: code) }
        return out
    }

    /// The names in a directory (`.` and `..` excluded).
    public static func list(_ dir: String) throws(Failure) -> [String] {
        guard let d = opendir(dir) else { throw failure("open directory \(dir)") }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in String(cString: raw.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    /// Writes a file atomically with the given mode (temporary name, fsync,
    /// rename, fsync directory).
    public static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Failure) {
        // Written from the array itself: a copy would hold a photo's blob
        // (up to 256 MiB) twice.
        try writeAtomically(to: path, mode: mode) { write in bytes.withUnsafeBytes { write($0) } }
    }

    /// Writes `bytes` where a user asked for them (`--out`): a regular file,
    /// or none yet, atomically (``writeAtomically(_:to:mode:)``); through a
    /// symbolic link to the file it names (atomically when that is a regular
    /// file); and into a device, a pipe or a socket as it is (`/dev/stdout`, a
    /// FIFO), never replacing it with a file. A directory is refused.
    public static func writeOut(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Failure) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return try writeAtomically(bytes, to: path, mode: mode) }
        var kind = st.st_mode & S_IFMT
        var target = path
        if kind == S_IFLNK {
            // What the link names: a file that is not there yet is created through it.
            guard stat(path, &st) == 0 else { return try writeThrough(bytes, to: path, create: mode) }
            kind = st.st_mode & S_IFMT
            if kind == S_IFREG, let resolved = realpath(path, nil) {
                target = String(cString: resolved)
                free(resolved)
            }
        }
        switch kind {
        case S_IFREG: try writeAtomically(bytes, to: target, mode: mode)
        case S_IFDIR: throw Failure(reason: "\(path) is a directory", permissionDenied: false, code: EISDIR)
        default: try writeThrough(bytes, to: path, create: nil)
        }
    }

    /// Opens `path` for writing (creating it with `create` when given) and
    /// writes all of `bytes` into what it is.
    private static func writeThrough(_ bytes: [UInt8], to path: String, create: mode_t?) throws(Failure) {
        let flags = O_WRONLY | O_CLOEXEC | (create != nil ? O_CREAT | O_TRUNC : 0)
        let fd = Int32(retrying { Int(open(path, flags, create ?? 0)) })
        guard fd >= 0 else { throw failure("open") }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { b in retrying { write(fd, b.baseAddress! + done, b.count - done) } }
            guard n > 0 else { throw failure("write") }
            done += n
        }
        // A file made through a link (its target was not there yet) is a
        // file like any other once written: it and its entry are made
        // durable before the write is said done. A device, a pipe or a
        // socket has nothing to keep.
        var st = stat()
        guard create != nil, fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return }
        guard fsync(fd) == 0 else { throw failure("fsync") }
        guard let resolved = realpath(path, nil) else { throw failure("realpath") }
        defer { free(resolved) }
        try fsyncDirectory((String(cString: resolved) as NSString).deletingLastPathComponent)
    }

    /// Creates an empty file with `mode`; fails if `path` exists.
    public static func createNew(_ path: String, mode: mode_t) throws(Failure) {
        let fd = Int32(retrying { Int(open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode)) })
        guard fd >= 0 else { throw failure("create") }
        close(fd)
    }

    /// Set by ``cancelLockWaits()``: every bounded wait of
    /// ``withExclusiveLock(_:mode:waitingAtMost:willWait:_:)`` ends at once.
    private static let lockWaitsCancelled = Atomic<Bool>(false)

    /// Ends every bounded wait for another process's `flock` in this
    /// process, now and from now on (it fails as timed out): for a process
    /// that is stopping (`sync --watch` after Ctrl-C), as
    /// `Database.cancelLockWaits()` does for SQLite's locks.
    public static func cancelLockWaits() { lockWaitsCancelled.store(true, ordering: .relaxed) }

    /// Runs `body` holding an exclusive `flock` on `path` (created with
    /// `mode` when missing). The kernel releases it should the process die.
    ///
    /// - Parameters:
    ///   - limit: how many seconds to wait while another process holds it,
    ///     after which this fails (``Failure/timedOut``; 0: at once);
    ///     `nil` waits as long as it is held.
    ///   - willWait: called once when another process holds it: at once
    ///     when the wait has no limit, else after the first second of
    ///     waiting (a short wait is not worth a word; none when the limit
    ///     is under a second).
    public static func withExclusiveLock<T>(_ path: String, mode: mode_t = 0o600, waitingAtMost limit: Int? = nil,
                                            willWait: () -> Void = {}, _ body: () throws -> T) throws -> T {
        let fd = Int32(retrying { Int(open(path, O_CREAT | O_RDWR | O_CLOEXEC, mode)) })
        guard fd >= 0 else { throw failure("open") }
        defer { close(fd) }
        if retrying({ Int(flock(fd, LOCK_EX | LOCK_NB)) }) != 0 {
            guard errno == EWOULDBLOCK else { throw failure("lock") }
            if let limit {
                let start = Date()
                var said = false
                while true {
                    let waited = Date().timeIntervalSince(start)
                    guard waited < Double(limit), !lockWaitsCancelled.load(ordering: .relaxed) else {
                        var f = Failure(reason: "held by another process for over \(limit) second\(limit == 1 ? "" : "s")", permissionDenied: false, code: EWOULDBLOCK)
                        f.timedOut = true
                        throw f
                    }
                    if !said, waited >= 1 { willWait(); said = true }
                    usleep(20_000)
                    if retrying({ Int(flock(fd, LOCK_EX | LOCK_NB)) }) == 0 { break }
                    guard errno == EWOULDBLOCK else { throw failure("lock") }
                }
            } else {
                willWait()
                guard retrying({ Int(flock(fd, LOCK_EX)) }) == 0 else { throw failure("lock") }
            }
        }
        return try body()
    }

    /// Makes the folder `path` and each missing folder above it, as
    /// `FileManager.createDirectory(atPath:withIntermediateDirectories:attributes:)`
    /// does (its errors as it throws them), then makes each new folder's
    /// entry durable: a folder made is in its parent only once the parent is
    /// fsynced, and a power cut before that may take it away with every file
    /// fsynced into it since (a new home with its key, the family's folder
    /// with the segments published there, the photo cache with a photo's
    /// only copy). Each new folder's parent is fsynced, the topmost first.
    /// - Throws: Foundation's error when a folder cannot be made; a
    ///   ``Failure`` when a parent cannot be fsynced.
    public static func createDirectories(atPath path: String, attributes: [FileAttributeKey: Any]? = nil) throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var missing: [String] = []
        var folder = (absolute as NSString).standardizingPath
        while folder != "/", !folder.isEmpty {
            var st = stat()
            if lstat(folder, &st) == 0 { break }
            missing.append(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: attributes)
        for made in missing.reversed() {
            try fsyncDirectory((made as NSString).deletingLastPathComponent)
        }
    }

    public static func fsyncDirectory(_ dir: String) throws(Failure) {
        let fd = Int32(retrying { Int(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) })
        guard fd >= 0 else { throw failure("open directory") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("fsync directory") }
    }
}
