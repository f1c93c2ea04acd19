import Foundation

/// A relay on 127.0.0.1 to a server on 127.0.0.1 that holds back the
/// answers: whatever the server sends after the client has spoken reaches
/// the client `delay` later, for the first `turns` turns of each
/// connection (those of a TLS handshake included), as over a slow or
/// distant link.
/// `stop()` ends it and every connection (each pair's threads close its
/// sockets; `stop` only shuts them down).
final class DelayingRelay: @unchecked Sendable {
    // @unchecked: `stopped` and `sockets` are guarded by `lock`.
    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var stopped = false
    private var sockets: [Int32] = []

    init(to target: UInt16, delay: TimeInterval, turns: Int = .max) throws {
        let (fd, port) = try ScriptedHTTPServer.listeningSocket()
        listener = fd
        self.port = port
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }   // the listener was shut down
                let server = Self.connect(to: target)
                let keep = server >= 0 && lock.withLock { () -> Bool in
                    if stopped { return false }
                    sockets += [client, server]
                    return true
                }
                guard keep else {
                    close(client)
                    if server >= 0 { close(server) }
                    continue
                }
                let pair = Pair(client: client, server: server, delay: delay, turns: turns) { [self] in
                    lock.withLock { sockets.removeAll { $0 == client || $0 == server } }
                }
                Thread.detachNewThread { pair.pump(from: client, to: server) }
                Thread.detachNewThread { pair.pump(from: server, to: client) }
            }
        }
    }

    func stop() {
        let open = lock.withLock { () -> [Int32] in
            guard !stopped else { return [] }
            stopped = true
            return sockets
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for s in open { shutdown(s, Int32(SHUT_RDWR)) }
    }

    deinit {
        stop()
        close(listener)
    }

    private static func connect(to port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let ok = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard ok else {
            close(fd)
            return -1
        }
        return fd
    }

    /// One client's connection and the relay's to the server: two pumps,
    /// the last of which to end closes both.
    private final class Pair: @unchecked Sendable {
        // @unchecked: `clientSpoke`, `turns` and `running` are guarded by `lock`.
        let client: Int32
        let server: Int32
        let delay: TimeInterval
        let ended: () -> Void
        private let lock = NSLock()
        private var clientSpoke = false
        private var turns: Int
        private var running = 2

        init(client: Int32, server: Int32, delay: TimeInterval, turns: Int, ended: @escaping () -> Void) {
            self.client = client
            self.server = server
            self.delay = delay
            self.turns = turns
            self.ended = ended
        }

        func pump(from source: Int32, to target: Int32) {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let n = recv(source, &buffer, buffer.count, 0)
                guard n > 0 else { break }
                if source == client {
                    lock.withLock { clientSpoke = true }
                } else if lock.withLock({ () -> Bool in
                    defer { clientSpoke = false }
                    guard clientSpoke, turns > 0 else { return false }
                    turns -= 1
                    return true
                }) {
                    Thread.sleep(forTimeInterval: delay)   // the answer to what the client said
                }
                guard Self.send(buffer[..<n], to: target) else { break }
            }
            shutdown(source, Int32(SHUT_RDWR))
            shutdown(target, Int32(SHUT_RDWR))
            let last = lock.withLock { () -> Bool in
                running -= 1
                return running == 0
            }
            if last {
                ended()
                close(client)
                close(server)
            }
        }

        /// Sends all of `bytes`; false once the other end has gone.
        private static func send(_ bytes: ArraySlice<UInt8>, to fd: Int32) -> Bool {
            var sent = 0
            return bytes.withUnsafeBytes { raw in
                while sent < raw.count {
                    let n = Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                    guard n > 0 else { return false }
                    sent += n
                }
                return true
            }
        }
    }
}
