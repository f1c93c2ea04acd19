import Foundation

/// A server on 127.0.0.1 that answers every request with what `answer`
/// writes, for the ways real servers misbehave (a redirect, a refusal, a
/// body that trickles). It reads each request's headers, then hands the
/// connection to `answer`. `stop()` ends it, and every connection (its
/// threads keep it alive until then).
final class ScriptedHTTPServer: @unchecked Sendable {
    // @unchecked: `stopped` and `connections` are guarded by `lock`.
    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var stopped = false
    private var connections: [Int32] = []
    private var answered = 0

    /// How many requests it has read.
    var requests: Int { lock.withLock { answered } }

    /// A connection `answer` writes to; `write` returns false once the
    /// client has gone or the server stops.
    struct Connection {
        let fd: Int32
        let request: String
        let isStopped: () -> Bool
        /// Reads up to `count` bytes of what follows the headers (a body);
        /// the number read, 0 once the client has gone.
        func read(upTo count: Int) -> Int {
            var buffer = [UInt8](repeating: 0, count: count)
            return max(0, recv(fd, &buffer, count, 0))
        }

        @discardableResult
        func write(_ text: String) -> Bool {
            guard !isStopped() else { return false }
            return Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == text.utf8.count
        }
    }

    /// A socket listening on 127.0.0.1, on a port the kernel chose. Left
    /// alone (never accepted on), it is a server that takes connections
    /// (the kernel completes them in its backlog) and never answers.
    static func listeningSocket() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { close(fd); throw POSIXError(.EADDRINUSE) }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    init(answer: @escaping @Sendable (Connection) -> Void) throws {
        let (fd, port) = try Self.listeningSocket()
        listener = fd
        self.port = port
        Thread.detachNewThread { [self] in
            while true {
                let c = accept(fd, nil, nil)
                guard c >= 0 else { return }   // the listener was shut down
                let keep = lock.withLock { () -> Bool in
                    if stopped { return false }
                    connections.append(c)
                    return true
                }
                guard keep else { close(c); return }
                Thread.detachNewThread { [self] in
                    var request: [UInt8] = []
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while !request.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
                        let n = recv(c, &buffer, 1, 0)
                        guard n > 0 else {
                            lock.withLock { connections.removeAll { $0 == c } }
                            close(c)
                            return
                        }
                        request.append(buffer[0])
                    }
                    lock.withLock { answered += 1 }
                    answer(Connection(fd: c, request: String(decoding: request, as: UTF8.self), isStopped: { [self] in lock.withLock { stopped } }))
                    // This thread alone closes its connection (`stop` only shuts it down).
                    lock.withLock { connections.removeAll { $0 == c } }
                    shutdown(c, Int32(SHUT_RDWR))
                    close(c)
                }
            }
        }
    }

    var url: String { "http://127.0.0.1:\(port)/dav/" }

    func stop() {
        let open = lock.withLock { () -> [Int32] in
            guard !stopped else { return [] }
            stopped = true
            return connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for c in open { shutdown(c, Int32(SHUT_RDWR)) }
    }

    deinit {
        stop()
        close(listener)
    }
}
