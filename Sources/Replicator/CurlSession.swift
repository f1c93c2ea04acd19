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
final class CurlSession: Sendable {
    /// libcurl's process-wide set-up, done once before the first handle.
    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    /// A transfer that sees no byte for this long fails; so does a connection
    /// not made in this time.
    let timeout: TimeInterval
    /// A PEM file of the certificates to trust for `https://` in place of
    /// the system's (a server with a certificate of its own).
    let caFile: String?
    private let idle = Mutex<[EasyHandle]>([])

    init(timeout: TimeInterval, caFile: String? = nil) {
        self.timeout = timeout
        self.caFile = caFile
    }

    struct Response: Sendable {
        let status: Int
        let body: Data
        /// Header names lowercased; of a header sent twice, the last.
        let headers: [String: String]
        /// The body went past the request's limit and was not read further.
        let overLimit: Bool
    }

    /// Performs one request.
    ///
    /// - Parameters:
    ///   - headers: sent as given, after libcurl's own (an empty `Expect`
    ///     and `Content-Type` are added so that libcurl sends neither of its
    ///     defaults for a body).
    ///   - limit: read at most this many bytes of the body: a body that goes
    ///     past it is cut off there (``Response/overLimit``), and a
    ///     successful answer whose `Content-Length` already does is not read.
    /// - Returns: the response, or why none came (as libcurl says it).
    func perform(_ method: String, url: String, headers: [String: String], body: Data?, limit: Int) -> Result<Response, CurlFailure> {
        guard Self.initialised else { return .failure(CurlFailure(reason: "libcurl could not be initialised")) }
        guard let handle = idle.withLock({ $0.popLast() }) ?? EasyHandle() else {
            return .failure(CurlFailure(reason: "libcurl could not make a handle"))
        }
        let transfer = Transfer(limit: limit)
        let result = handle.perform(method: method, url: url, headers: headers, body: body, timeout: timeout, caFile: caFile, transfer: transfer)
        idle.withLock { $0.append(handle) }
        return result
    }

    /// What one transfer has received so far; the callbacks' context.
    final class Transfer {
        let limit: Int
        var status = 0
        var headers: [String: String] = [:]
        var body = Data()
        var overLimit = false

        init(limit: Int) { self.limit = limit }

        /// One header line (the status line included), as libcurl hands it.
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
            if name == "content-length", (200...299).contains(status), let n = Int(value), n > limit {
                overLimit = true
                return false
            }
            return true
        }

        /// A piece of the body; `false` stops the transfer (past the limit).
        func data(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard body.count + bytes.count <= limit else {
                overLimit = true
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

    /// The server's certificate was not trusted (or not for this host): no
    /// retry will change that.
    var isUntrustedCertificate: Bool {
        [CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH]
            .map(\.rawValue).contains(code)
    }
}

/// One libcurl easy handle, owned: cleaned up when released. It keeps its
/// connection open between the requests it performs.
private final class EasyHandle: @unchecked Sendable {
    // @unchecked: a handle is used by one thread at a time (taken out of the
    // session's pool for the length of a request).
    let handle: UnsafeMutableRawPointer

    init?() {
        guard let h = curl_easy_init() else { return nil }
        handle = h
    }

    deinit { curl_easy_cleanup(handle) }

    func perform(method: String, url: String, headers: [String: String], body: Data?, timeout: TimeInterval, caFile: String?,
                 transfer: CurlSession.Transfer) -> Result<CurlSession.Response, CurlFailure> {
        // A reset keeps the connection cache: the next request reuses the connection.
        curl_easy_reset(handle)
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        for line in ["Expect:", "Content-Type:"] + headers.sorted(by: { $0.key < $1.key }).map({ "\($0.key): \($0.value)" }) {
            list = curl_slist_append(list, line)
        }
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        let seconds = max(1, Int(timeout.rounded(.up)))
        var code = CURLE_OK
        func set(_ c: CURLcode) { if code == CURLE_OK { code = c } }
        set(famctl_curl_set_string(handle, CURLOPT_URL, url))
        set(famctl_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        set(famctl_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, seconds))
        // Idle for `timeout`: under one byte a second for that long.
        set(famctl_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1))
        set(famctl_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, seconds))
        set(famctl_curl_set_list(handle, CURLOPT_HTTPHEADER, list))
        if let caFile { set(famctl_curl_set_string(handle, CURLOPT_CAINFO, caFile)) }
        set(famctl_curl_set_pointer(handle, CURLOPT_HEADERDATA, context))
        set(famctl_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, { data, size, count, context in
            let n = size * count
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<CurlSession.Transfer>.fromOpaque(context).takeUnretainedValue()
            let line = String(decoding: UnsafeRawBufferPointer(start: data, count: n), as: UTF8.self)
            return transfer.header(line) ? n : 0
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
        guard code == CURLE_OK else { return .failure(CurlFailure(reason: String(cString: curl_easy_strerror(code)), code: code.rawValue)) }
        // libcurl reads the body from this buffer during the perform (it keeps
        // the pointer, not a copy); one byte more, so that an empty body has
        // an address too.
        let payload: [UInt8] = body.map { [UInt8]($0) + [0] } ?? []
        let result: CURLcode = payload.withUnsafeBytes { bytes in
            if let body {
                _ = famctl_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
                _ = famctl_curl_set_pointer(handle, CURLOPT_POSTFIELDS, bytes.baseAddress)
            }
            return curl_easy_perform(handle)
        }
        if transfer.overLimit {
            return .success(.init(status: transfer.status, body: transfer.body, headers: transfer.headers, overLimit: true))
        }
        guard result == CURLE_OK else {
            var reason = String(cString: curl_easy_strerror(result))
            if result == CURLE_PEER_FAILED_VERIFICATION || result == CURLE_SSL_CACERT_BADFILE {
                reason = "the server's certificate is not trusted (\(reason))"
            }
            return .failure(CurlFailure(reason: reason, code: result.rawValue))
        }
        var status = 0
        _ = famctl_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(.init(status: status, body: transfer.body, headers: transfer.headers, overLimit: false))
    }
}
