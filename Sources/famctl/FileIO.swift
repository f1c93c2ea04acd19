import Envelope
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The seam for file system calls: every syscall goes through here, retries
/// `EINTR`, and reports `errno` as text.
enum FileIO {
    struct Failure: Error {
        let reason: String
        let permissionDenied: Bool
    }

    static func failure(_ what: String) -> Failure {
        let e = errno
        return Failure(reason: "\(what): \(String(cString: strerror(e)))", permissionDenied: e == EACCES || e == EPERM)
    }

    static func reason(_ error: any Error) -> String {
        if let f = error as? Failure { return f.reason }
        return (error as NSError).localizedDescription
    }

    /// Retries a syscall interrupted by a signal.
    static func retrying(_ call: () -> Int) -> Int {
        while true {
            let r = call()
            if r >= 0 || errno != EINTR { return r }
        }
    }

    /// Reads a whole secret file (at most 4 KiB) straight into wiped-on-release memory.
    static func readSecret(_ path: String) throws(Failure) -> SecretBytes {
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

    /// Writes `bytes` to `path` with mode 0600: to a temporary name beside it,
    /// fsync, rename over, fsync the directory.
    static func writeSecretAtomically(_ bytes: SecretBytes, to path: String, mode: mode_t = 0o600) throws(Failure) {
        let tmp = path + ".tmp-\(getpid())"
        let fd = Int32(retrying { Int(open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)) })
        guard fd >= 0 else { throw failure("open") }
        var ok = true
        bytes.withUnsafeBytes { b in
            var off = 0
            while off < b.count {
                let n = retrying { write(fd, b.baseAddress! + off, b.count - off) }
                if n <= 0 { ok = false; return }
                off += n
            }
        }
        if !ok { let f = failure("write"); close(fd); unlink(tmp); throw f }
        guard fsync(fd) == 0 else { let f = failure("fsync"); close(fd); unlink(tmp); throw f }
        close(fd)
        guard rename(tmp, path) == 0 else { let f = failure("rename"); unlink(tmp); throw f }
        try fsyncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// Writes a file atomically with the given mode (temporary name, fsync,
    /// rename, fsync directory).
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Failure) {
        try writeSecretAtomically(SecretBytes(bytes), to: path, mode: mode)
    }

    static func fsyncDirectory(_ dir: String) throws(Failure) {
        let fd = Int32(retrying { Int(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) })
        guard fd >= 0 else { throw failure("open directory") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("fsync directory") }
    }
}
