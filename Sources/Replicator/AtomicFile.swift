import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file written in pieces and put in place whole: the bytes go to a
/// temporary name beside `path` (`NAME.tmp-PID`, which
/// ``FileIO/removeLeftoverTemporaries(in:)`` removes once its process is
/// gone), and ``commit()`` fsyncs it, renames it over `path` and fsyncs the
/// directory. Until then `path` keeps what it held; a file dropped or
/// abandoned before its commit takes its temporary file with it. So a
/// store file of a million records is written as it is made
/// (`export stores`), never held whole, and never seen half written.
public final class AtomicFile {
    /// Where the file goes once committed.
    public let path: String
    private let temporary: String
    /// The temporary file, until it is committed or abandoned.
    private var fd: Int32

    /// Creates the temporary file beside `path`, with `mode`.
    public init(path: String, mode: mode_t) throws(FileIO.Failure) {
        self.path = path
        let temporary = path + ".tmp-\(getpid())"
        self.temporary = temporary
        // A new file of its own: whatever has the name already (a file an
        // earlier process of this pid left, a link put there) is removed,
        // never written through nor kept with its own permissions.
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        var fd = Int32(FileIO.retrying { Int(open(temporary, flags, mode)) })
        if fd < 0, errno == EEXIST, unlink(temporary) == 0 {
            fd = Int32(FileIO.retrying { Int(open(temporary, flags, mode)) })
        }
        guard fd >= 0 else { throw FileIO.failure("open") }
        self.fd = fd
    }

    deinit { abandon() }

    /// Appends `bytes`; on a failure (a full disk) the file is abandoned.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(FileIO.Failure) {
        guard fd >= 0 else { throw FileIO.Failure(reason: "write: the file was already committed or abandoned", permissionDenied: false, code: EBADF) }
        var off = 0
        while off < bytes.count {
            let n = FileIO.retrying { systemWrite(fd, bytes.baseAddress! + off, bytes.count - off) }
            guard n > 0 else {
                let f = FileIO.failure("write", code: n < 0 ? errno : EIO)
                abandon()
                throw f
            }
            off += n
        }
    }

    public func write(_ bytes: [UInt8]) throws(FileIO.Failure) {
        var failed: FileIO.Failure?
        bytes.withUnsafeBytes { b in
            do throws(FileIO.Failure) { try write(b) } catch { failed = error }
        }
        if let failed { throw failed }
    }

    /// Puts the file in place: fsync, rename over `path`, fsync the directory.
    public func commit() throws(FileIO.Failure) {
        guard fd >= 0 else { throw FileIO.Failure(reason: "commit: the file was already committed or abandoned", permissionDenied: false, code: EBADF) }
        guard fsync(fd) == 0 else { let f = FileIO.failure("fsync"); abandon(); throw f }
        close(fd)
        fd = -1
        guard rename(temporary, path) == 0 else { let f = FileIO.failure("rename"); unlink(temporary); throw f }
        do {
            try FileIO.fsyncDirectory((path as NSString).deletingLastPathComponent)
        } catch {
            throw FileIO.Failure(reason: "\(error.reason) (the new file is in place, but a crash now may lose it)",
                                 permissionDenied: error.permissionDenied, code: error.code)
        }
    }

    /// Removes the temporary file; `path` keeps what it held. Does nothing
    /// once committed.
    public func abandon() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        unlink(temporary)
    }
}

/// `write(2)`, named apart from ``AtomicFile/write(_:)-(UnsafeRawBufferPointer)``.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, bytes, count)
}
