#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// An HTTP server on 127.0.0.1 that ignores `Range`, as some WebDAV servers
/// do: every request is answered `200 OK` with a body of `size` bytes
/// (announced in `Content-Length`), or, with `size` nil, a body without a
/// length (512 MiB, then the connection closes), at about 32 MB/s. It counts what it manages to
/// send on each connection before the client stops reading and closes it.
final class RangeIgnoringServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private let size: Int?
    private let sentCounts = Mutex<[Int]>([])
    private let finished = DispatchSemaphore(value: 0)

    /// Bytes of body sent on each connection that has ended.
    var sent: [Int] { sentCounts.withLock { $0 } }

    init(size: Int?) throws {
        self.size = size
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        guard bound == 0, listen(fd, 8) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        port = UInt16(bigEndian: addr.sin_port)
        listener = fd
        Thread.detachNewThread { [self] in serve() }
    }

    /// Stops accepting and waits for the accepting thread to end.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        finished.wait()
        close(listener)
    }

    private func serve() {
        defer { finished.signal() }
        while true {
            let c = accept(listener, nil, nil)
            guard c >= 0 else { return }
            Thread.detachNewThread { [self] in answer(c) }
        }
    }

    private func answer(_ c: Int32) {
        defer { close(c) }
        // The request's head, up to its blank line.
        var head = [UInt8]()
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
            guard recv(c, &byte, 1, 0) == 1 else { return }
            head.append(byte)
        }
        let length = size.map { "Content-Length: \($0)\r\n" } ?? ""
        guard write(c, Array("HTTP/1.1 200 OK\r\nETag: \"x\"\r\n\(length)Connection: close\r\n\r\n".utf8)) else { return }
        let chunk = [UInt8](repeating: 0x5A, count: 64 << 10)
        var sent = 0
        // Without a length, 512 MiB: endless to any reader that keeps a limit,
        // and a reader that does not fails in seconds rather than hanging.
        let end = size ?? 512 << 20
        while sent < end {
            let n = min(chunk.count, end - sent)
            guard write(c, Array(chunk.prefix(n))) else { break }
            sent += n
            usleep(2_000)   // about 32 MB/s, a fast network's pace: loopback's would outrun any reader
        }
        sentCounts.withLock { $0.append(sent) }
    }

    /// Sends all of `bytes`; false once the client has gone (no SIGPIPE).
    private func write(_ c: Int32, _ bytes: [UInt8]) -> Bool {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { send(c, $0.baseAddress! + off, bytes.count - off, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            off += n
        }
        return true
    }
}
