import CCurl
import Foundation
import Synchronization

/// HTTP requests over libcurl's easy interface, each performed on the
/// calling thread, with a pool of handles so that connections (and TLS
/// sessions) are kept between requests.
///
/// Foundation's `URLSession` on Linux drives libcurl through dispatch
/// sources, and two of its faults hit a sync: a request that got a 401 with
/// `WWW-Authenticate` waited for credentials for ever, and a request the
/// server accepted and never answered kept a core busy (about 100 000
/// wake-ups a second) until its timeout. libcurl's own loop, driven here,
/// waits in `poll` and has neither.
///
/// Every request: `http` and `https` only (no other of libcurl's
/// protocols, whatever the URL says); no redirect followed; no proxy for
/// this machine's own addresses (a loopback peer may be given a password
/// over `http://`, which a proxy would see); TLS certificates and host
/// names checked.
final class CurlSession: Sendable {
    /// libcurl's process-wide set-up, done once before the first handle.
    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    /// A transfer slower than ``minimumRate`` bytes a second for this long
    /// fails (a server that stopped, or trickles); so does a connection not
    /// made in this time.
    let timeout: TimeInterval
    /// A PEM file of the certificates to trust for `https://` in place of
    /// the system's (a server with a certificate of its own).
    let caFile: String?
    /// Asked about once a second during each request: `true` stops it
    /// (Ctrl-C in `sync --watch`).
    let isCancelled: @Sendable () -> Bool
    private let idle = Mutex<[EasyHandle]>([])

    /// Slower than this, for ``timeout`` seconds, a transfer fails.
    static let minimumRate = 1024
    /// How fast a body handed over is taken to leave the buffers on its
    /// way (the wait for an answer after an upload grows by its size at
    /// this rate).
    static let drainRate = 64 << 10
    /// No request takes longer than this, however it trickles.
    static let longest: TimeInterval = 3600

    init(timeout: TimeInterval, caFile: String? = nil, isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.timeout = timeout
        self.caFile = caFile
        self.isCancelled = isCancelled
    }

    struct Response: Sendable {
        let status: Int
        let body: Data
        /// Header names lowercased; of a header sent twice, the last.
        let headers: [String: String]
        /// The body went past the request's limit and was not read further.
        let overLimit: Bool
    }

    /// What to do with a body past the request's limit.
    enum PastLimit: Sendable {
        /// Stop the transfer there (``Response/overLimit``): a read, or a
        /// listing, that large is not one famctl asked for.
        case stop
        /// Read it to its end and drop what is past the limit: the answer
        /// to a write, whose status is what counts.
        case drop
    }

    /// Performs one request.
    ///
    /// - Parameters:
    ///   - headers: sent as given, after libcurl's own (an empty `Expect`
    ///     and `Content-Type` are added so that libcurl sends neither of its
    ///     defaults for a body).
    ///   - limit: keep at most this many bytes of the body; past it, see
    ///     `pastLimit`. With `.stop`, a successful answer whose
    ///     `Content-Length` already goes past it is not read at all.
    /// - Returns: the response, or why none came (as libcurl says it).
    func perform(_ method: String, url: String, headers: [String: String], body: Data?, limit: Int,
                 pastLimit: PastLimit = .stop) -> Result<Response, CurlFailure> {
        guard Self.initialised else { return .failure(CurlFailure(reason: "libcurl could not be initialised")) }
        guard let handle = idle.withLock({ $0.popLast() }) ?? EasyHandle() else {
            return .failure(CurlFailure(reason: "libcurl could not make a handle"))
        }
        let transfer = Transfer(limit: limit, pastLimit: pastLimit, announcesBody: method != "HEAD", idleLimit: timeout, isCancelled: isCancelled)
        let result = handle.perform(method: method, url: url, headers: headers, body: body, session: self, transfer: transfer)
        idle.withLock { $0.append(handle) }
        return result
    }

    /// What one transfer has received so far; the callbacks' context.
    final class Transfer {
        let limit: Int
        let pastLimit: PastLimit
        /// Whether `Content-Length` is the length of a body that follows
        /// (not for `HEAD`).
        let announcesBody: Bool
        var status = 0
        var headers: [String: String] = [:]
        var body = Data()
        var overLimit = false
        /// How long the transfer may go without a byte moving either way.
        let idleLimit: TimeInterval
        let isCancelled: @Sendable () -> Bool
        private var moved: (Int64, Int64) = (-1, -1)
        private var movedAt = DispatchTime.now()
        /// Whether the connection is made (and TLS set up): before, the
        /// connect timeout counts, not the idle one.
        var connected: () -> Bool = { true }
        /// Why the progress callback stopped the transfer, if it did.
        var stopped: String?

        init(limit: Int, pastLimit: PastLimit, announcesBody: Bool, idleLimit: TimeInterval, isCancelled: @escaping @Sendable () -> Bool) {
            self.limit = limit
            self.pastLimit = pastLimit
            self.announcesBody = announcesBody
            self.idleLimit = idleLimit
            self.isCancelled = isCancelled
        }

        /// Where the current window of ``minimumRate`` began, and the bytes moved then.
        private var windowAt = DispatchTime.now()
        private var windowBytes: Int64 = 0

        /// libcurl's progress report (about once a second, and whenever
        /// bytes move); `false` stops the transfer: the request was
        /// cancelled, no byte moved for `idleLimit`, or fewer than
        /// ``CurlSession/minimumRate`` bytes a second over that long (a
        /// trickle). Once a body is all handed over and before the answer
        /// begins, the wait may be longer by the time the body takes to
        /// drain from the buffers between here and the server at
        /// ``CurlSession/drainRate``: a slow link holds megabytes there,
        /// which the counts show as sent.
        func progress(downloaded: Int64, uploaded: Int64, uploadTotal: Int64) -> Bool {
            if isCancelled() {
                stopped = "interrupted"
                return false
            }
            let now = DispatchTime.now()
            func since(_ t: DispatchTime) -> Double { Double(now.uptimeNanoseconds - t.uptimeNanoseconds) / 1e9 }
            let total = downloaded + uploaded
            if !connected() {
                // Connecting: the connect timeout counts, not these.
                (moved, movedAt, windowAt, windowBytes) = ((downloaded, uploaded), now, now, total)
                return true
            }
            let draining = uploadTotal > 0 && uploaded >= uploadTotal && downloaded == 0
            let limit = idleLimit + (draining ? Double(uploadTotal) / Double(CurlSession.drainRate) : 0)
            if (downloaded, uploaded) != moved {
                moved = (downloaded, uploaded)
                movedAt = now
            } else if since(movedAt) >= limit {
                stopped = "no answer in time (no byte in \(String(format: "%.0f", limit)) s)"
                return false
            }
            if since(windowAt) >= limit {
                if !draining, Double(total - windowBytes) < Double(CurlSession.minimumRate) * since(windowAt) {
                    stopped = "no answer in time (under \(CurlSession.minimumRate) bytes a second for \(String(format: "%.0f", since(windowAt))) s)"
                    return false
                }
                (windowAt, windowBytes) = (now, total)
            }
            return true
        }

        /// One header line (the status line included), as libcurl hands it;
        /// `false` stops the transfer.
        func header(_ line: String) -> Bool {
            let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.hasPrefix("HTTP/") {
                // A new response (after `100 Continue`, say): its headers alone count.
                let parts = text.split(separator: " ", maxSplits: 2)
                status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
                headers = [:]
                return true
            }
            guard let colon = text.firstIndex(of: ":") else { return true }
            let name = text[..<colon].lowercased(), value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = value
            // A successful answer that announces more than the limit is not read at all.
            if pastLimit == .stop, announcesBody, name == "content-length", (200...299).contains(status), let n = Int(value), n > limit {
                overLimit = true
                return false
            }
            return true
        }

        /// A piece of the body; `false` stops the transfer (past the limit).
        func data(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard body.count + bytes.count <= limit else {
                overLimit = true
                if pastLimit == .drop {
                    body.append(contentsOf: bytes.prefix(limit - body.count))
                    return true
                }
                return false
            }
            body.append(contentsOf: bytes)
            return true
        }
    }
}

/// Why a request got no response: libcurl's own words for it.
struct CurlFailure: Error, Sendable, CustomStringConvertible {
    let reason: String
    /// libcurl's code (`CURLE_…`), 0 when libcurl was not reached.
    var code: UInt32 = 0
    var description: String { reason }

    /// The request got no answer in time, or was interrupted: asking again
    /// at once will not help (the server is stalled, or famctl is stopping).
    var isStalled: Bool {
        [CURLE_OPERATION_TIMEDOUT, CURLE_ABORTED_BY_CALLBACK].map(\.rawValue).contains(code)
    }

    /// The server's certificate was not trusted (or not for this host): no
    /// retry will change that.
    var isUntrustedCertificate: Bool {
        [CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH].map(\.rawValue).contains(code)
    }

    /// Nothing answered at the URL's host and port (the connection was
    /// refused, or the name did not resolve): the server is down, or the
    /// address is wrong.
    var isUnreachable: Bool {
        [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST].map(\.rawValue).contains(code)
    }

    /// The TLS handshake failed: a network fault, or a server that does
    /// not speak TLS on that port (which asking again will not mend).
    var isTLSHandshakeFailure: Bool { code == CURLE_SSL_CONNECT_ERROR.rawValue }

    /// A request that no retry will mend: the URL or the set-up is wrong
    /// (a protocol other than http or https, a malformed URL, a CA file
    /// that holds no certificate).
    var isPermanent: Bool {
        [CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_SSL_CACERT_BADFILE].map(\.rawValue).contains(code)
    }
}

/// One libcurl easy handle, owned: cleaned up when released. It keeps its
/// connection open between the requests it performs.
private final class EasyHandle: @unchecked Sendable {
    // @unchecked: a handle is used by one thread at a time (taken out of the
    // session's pool for the length of a request).
    let handle: UnsafeMutableRawPointer
    /// libcurl writes a failure's details here (`CURLOPT_ERRORBUFFER`).
    let errors = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    init?() {
        guard let h = curl_easy_init() else {
            errors.deallocate()
            return nil
        }
        handle = h
    }

    deinit {
        curl_easy_cleanup(handle)
        errors.deallocate()
    }

    func perform(method: String, url: String, headers: [String: String], body: Data?, session: CurlSession,
                 transfer: CurlSession.Transfer) -> Result<CurlSession.Response, CurlFailure> {
        // A reset keeps the connection cache: the next request reuses the connection.
        curl_easy_reset(handle)
        errors[0] = 0
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        for line in ["Expect:", "Content-Type:"] + headers.sorted(by: { $0.key < $1.key }).map({ "\($0.key): \($0.value)" }) {
            list = curl_slist_append(list, line)
        }
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var code = CURLE_OK
        func set(_ c: CURLcode) { if code == CURLE_OK { code = c } }
        set(famctl_curl_set_string(handle, CURLOPT_URL, url))
        set(famctl_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(famctl_curl_set_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        set(famctl_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        // This machine's own addresses never go through a proxy (the
        // environment's `http_proxy` would otherwise see a loopback peer's
        // password); others follow the environment, as before.
        set(famctl_curl_set_string(handle, CURLOPT_NOPROXY, "localhost,127.0.0.0/8,::1"))
        set(famctl_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errors))
        set(famctl_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        // A name lookup that hangs does not hold the request past its timeout.
        set(famctl_curl_set_long(handle, CURLOPT_QUICK_EXIT, 1))
        set(famctl_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int((session.timeout * 1000).rounded(.up))))
        // Stalled, or trickling: the progress callback below (libcurl's own
        // low-speed limit cannot wait longer after an upload).
        set(famctl_curl_set_long(handle, CURLOPT_TIMEOUT, Int(CurlSession.longest)))
        if let caFile = session.caFile {
            // In place of the system's certificates, not besides them.
            set(famctl_curl_set_string(handle, CURLOPT_CAINFO, caFile))
            set(famctl_curl_set_pointer(handle, CURLOPT_CAPATH, nil))
        }
        set(famctl_curl_set_list(handle, CURLOPT_HTTPHEADER, list))
        set(famctl_curl_set_pointer(handle, CURLOPT_HEADERDATA, context))
        set(famctl_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, { data, size, count, context in
            let n = size * count
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<CurlSession.Transfer>.fromOpaque(context).takeUnretainedValue()
            let line = String(decoding: UnsafeRawBufferPointer(start: data, count: n), as: UTF8.self)
            return transfer.header(line) ? n : 0
        }))
        set(famctl_curl_limit_unsent(handle))
        let handle = handle
        transfer.connected = {
            var ready: curl_off_t = 0
            return famctl_curl_get_offset(handle, CURLINFO_PRETRANSFER_TIME_T, &ready) == CURLE_OK && ready > 0
        }
        set(famctl_curl_set_long(handle, CURLOPT_NOPROGRESS, 0))
        set(famctl_curl_set_pointer(handle, CURLOPT_XFERINFODATA, context))
        set(famctl_curl_set_progress(handle, { context, _, downloaded, uploadTotal, uploaded in
            guard let context else { return 1 }
            let transfer = Unmanaged<CurlSession.Transfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.progress(downloaded: Int64(downloaded), uploaded: Int64(uploaded), uploadTotal: Int64(uploadTotal)) ? 0 : 1
        }))
        set(famctl_curl_set_pointer(handle, CURLOPT_WRITEDATA, context))
        set(famctl_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, { data, size, count, context in
            let n = size * count
            guard let context else { return 0 }
            let transfer = Unmanaged<CurlSession.Transfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.data(UnsafeRawBufferPointer(start: data, count: n)) ? n : 0
        }))
        switch method {
        case "GET": set(famctl_curl_set_long(handle, CURLOPT_HTTPGET, 1))
        // HEAD as a custom method would wait for a body that never comes.
        case "HEAD": set(famctl_curl_set_long(handle, CURLOPT_NOBODY, 1))
        default: set(famctl_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method))
        }
        guard code == CURLE_OK else { return .failure(failure(code, transfer: transfer)) }
        let result: CURLcode
        if let body {
            // libcurl reads the body where it lies during the perform (it
            // keeps the pointer, not a copy); an empty one needs an address too.
            var empty: UInt8 = 0
            result = body.withUnsafeBytes { bytes in
                withUnsafeMutablePointer(to: &empty) { none in
                    _ = famctl_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
                    _ = famctl_curl_set_pointer(handle, CURLOPT_POSTFIELDS, bytes.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(none))
                    return curl_easy_perform(handle)
                }
            }
        } else {
            result = curl_easy_perform(handle)
        }
        if transfer.overLimit && transfer.pastLimit == .stop {
            return .success(.init(status: transfer.status, body: transfer.body, headers: transfer.headers, overLimit: true))
        }
        guard result == CURLE_OK else { return .failure(failure(result, transfer: transfer)) }
        var status = 0
        _ = famctl_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(.init(status: status, body: transfer.body, headers: transfer.headers, overLimit: transfer.overLimit))
    }

    /// A failure in libcurl's words: its details (the error buffer), else
    /// the code's text.
    private func failure(_ code: CURLcode, transfer: CurlSession.Transfer) -> CurlFailure {
        if code == CURLE_ABORTED_BY_CALLBACK, let why = transfer.stopped { return CurlFailure(reason: why, code: code.rawValue) }
        let detail = String(cString: errors)
        var reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR:
            reason = "the server's certificate is not trusted (\(reason))"
        case CURLE_SSL_CACERT_BADFILE:
            reason = "the CA file holds no certificate libcurl can use (\(reason))"
        case CURLE_OPERATION_TIMEDOUT:
            reason = "no answer in time (\(reason))"
        default: break
        }
        return CurlFailure(reason: reason, code: code.rawValue)
    }
}
