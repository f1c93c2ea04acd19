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

    /// Reads a whole secret file into wiped-on-release memory.
    static func readSecret(_ path: String) throws(Failure) -> SecretBytes {
        let fd = Int32(retrying { Int(open(path, O_RDONLY | O_CLOEXEC)) })
        guard fd >= 0 else { throw failure("open") }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while total < buf.count {
            let n = buf.withUnsafeMutableBytes { b in retrying { read(fd, b.baseAddress! + total, b.count - total) } }
            guard n >= 0 else { throw failure("read") }
            if n == 0 { break }
            total += n
        }
        let out = SecretBytes(Array(buf[0..<total]))
        buf.withUnsafeMutableBytes { b in b.initializeMemory(as: UInt8.self, repeating: 0) }
        return out
    }

    /// Writes `bytes` to `path` with mode 0600: to a temporary name beside it,
    /// fsync, rename over, fsync the directory.
    static func writeSecretAtomically(_ bytes: SecretBytes, to path: String) throws(Failure) {
        let tmp = path + ".tmp-\(getpid())"
        let fd = Int32(retrying { Int(open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)) })
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

    static func fsyncDirectory(_ dir: String) throws(Failure) {
        let fd = Int32(retrying { Int(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) })
        guard fd >= 0 else { throw failure("open directory") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("fsync directory") }
    }
}
