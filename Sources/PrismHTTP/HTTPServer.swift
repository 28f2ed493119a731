import CHTTPShims
import CMicroHTTPD
import Foundation
import PrismCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP request as the preview's routes see it: parsed by libmicrohttpd, never by hand.
package struct HTTPRequest {
    package let method: String
    /// The path without the query, exactly as libmicrohttpd decoded it.
    package let path: String
    package let body: [UInt8]
    /// Looks up one query argument (`MHD_lookup_connection_value`, GET argument kind).
    package let query: (String) -> String?
}

/// What a route answers.
package enum HTTPResponse {
    /// A complete body.
    case data(status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = [])
    /// A body produced while it is sent, for as long as the source wants (the MJPEG stream).
    case stream(status: Int, contentType: String, source: any HTTPStreamSource)

    package static func json(_ status: Int, _ text: String) -> HTTPResponse {
        .data(status: status, contentType: "application/json; charset=utf-8", body: Array(text.utf8))
    }

    package static func error(_ status: Int, _ message: String) -> HTTPResponse {
        json(status, "{\"error\":\(JSONText.string(message))}")
    }
}

/// Fills a streamed response. Called on the connection's own thread (libmicrohttpd's thread per
/// connection), so it may block waiting for data without stalling anyone else.
package protocol HTTPStreamSource: AnyObject, Sendable {
    /// Writes up to `capacity` bytes; returns the count, or nil at the end of the stream.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int?
    /// The client is gone or the server is stopping.
    func finish()
}

/// Bounds that keep one client (or a hostile page, or a slowloris script) from locking others out.
package struct HTTPServerLimits: Sendable {
    /// Connections in all (`MHD_OPTION_CONNECTION_LIMIT`); every client is on loopback, so a per-IP
    /// limit could not tell them apart.
    package var connections = 64
    /// Connections kept free for new clients: past `connections - reserve` open, the connections that
    /// have waited longest for a complete request (idle keep-alives, slowloris) are closed.
    package var reserve = 16
    /// A connection waiting that long for a complete request may be closed to make room.
    package var evictableAfter: Duration = .seconds(1)
    /// Whole-request deadline: from the connection's start (or its previous response) to a complete
    /// request, headers and body. libmicrohttpd's own timeout is an idle timeout, which a client
    /// sending a byte now and then never reaches.
    package var requestDeadline: Duration = .seconds(10)
    /// Idle timeout of a connection in any state (`MHD_OPTION_CONNECTION_TIMEOUT`, seconds).
    package var idleTimeout = 30
    /// Streams (MJPEG) at once; more get 503, so streams can never fill the connection table.
    package var streams = 8
    /// Request body bytes (413 beyond).
    package var body = 16 * 1024

    package init() {}
}

/// Why a server did not start. The front ends say which of their options it concerns.
package enum HTTPServerError: PrismError, Equatable {
    /// The address to listen on is not a numeric IPv4 or IPv6 address.
    case notAnAddress(String)
    case portOutOfRange(Int)
    /// libmicrohttpd refused to start (`MHD_start_daemon`).
    case cannotStart(address: String, port: Int)

    package var description: String {
        switch self {
        case .notAnAddress(let address): return "'\(address)' is not a numeric IPv4 or IPv6 address"
        case .portOutOfRange(let port): return "port \(port) is outside 0...65535"
        case .cannotStart(let address, let port): return "cannot start the HTTP server on \(address):\(port) (MHD_start_daemon failed)"
        }
    }
}

/// An embedded HTTP server: libmicrohttpd with a thread per connection, on a listening socket this
/// type opens itself (so the bound port is known even for port 0, and the address is exactly the one
/// asked for).
///
/// Every request first passes the `RequestGate` (Host, Origin, Sec-Fetch-Site, JSON POSTs). Limits
/// (`HTTPServerLimits`): connections in all, a per-connection memory pool
/// (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`, which also bounds header sizes), a whole-request deadline
/// and eviction of the longest-waiting connections when the table fills (a watchdog thread shuts
/// their sockets down), a cap on concurrent streams, and a request body limit.
package final class HTTPServer: Sendable {
    package typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    package let port: Int
    package let address: String
    package let limits: HTTPServerLimits
    package let gate: RequestGate
    fileprivate let handler: Handler
    fileprivate var bodyLimit: Int { limits.body }
    package let connections: ConnectionTable
    private let streamCount = Mutex(0)
    /// The running daemon (its address: a handle only libmicrohttpd dereferences) and its socket; nil once
    /// stopped.
    private let running = Mutex<(daemon: UInt, socket: Int32)?>(nil)

    /// - Parameters:
    ///   - tokenInPostQuery, tokenHint: see `RequestGate` (the control endpoint's scripts send the token in the URL).
    package init(address: String, port: Int, limits: HTTPServerLimits = HTTPServerLimits(), token: String? = nil,
         tokenInPostQuery: Bool = false, tokenHint: String? = nil, handler: @escaping Handler) throws {
        self.handler = handler
        self.limits = limits
        self.address = address
        let listenSocket: Int32
        (listenSocket, self.port) = try Self.listen(address: address, port: port)
        var gate = RequestGate(bindAddress: address, port: self.port, token: token)
        gate.tokenInPostQuery = tokenInPostQuery
        if let tokenHint { gate.tokenHint = tokenHint }
        self.gate = gate
        connections = ConnectionTable(limits: limits)
        let context = Unmanaged.passUnretained(self).toOpaque()
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: MHD_OPTION.LISTEN_SOCKET, value: Int(listenSocket), ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_LIMIT, value: limits.connections, ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_MEMORY_LIMIT, value: 64 * 1024, ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_TIMEOUT, value: limits.idleTimeout, ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.NOTIFY_COMPLETED, value: unsafeBitCast(requestCompleted, to: Int.self),
                           ptr_value: context),
            MHD_OptionItem(option: MHD_OPTION.NOTIFY_CONNECTION, value: unsafeBitCast(connectionNotified, to: Int.self),
                           ptr_value: context),
            MHD_OptionItem(option: MHD_OPTION.END, value: 0, ptr_value: nil),
        ]
        let flags = UInt32(MHD_USE_THREAD_PER_CONNECTION.rawValue) | UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue)
            | UInt32(MHD_USE_POLL.rawValue)
        let daemon = options.withUnsafeMutableBufferPointer { items in
            withVaList([Int32(MHD_OPTION.ARRAY.rawValue), items.baseAddress!,
                        Int32(MHD_OPTION.END.rawValue)]) { list in
                MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, context, list)
            }
        }
        guard let daemon else {
            close(listenSocket)
            throw HTTPServerError.cannotStart(address: address, port: self.port)
        }
        let handle = UInt(bitPattern: daemon)
        running.withLock { $0 = (handle, listenSocket) }
        connections.startWatchdog()
    }

    /// Counts a stream in, or answers false when `limits.streams` are already running.
    fileprivate func admitStream() -> Bool {
        streamCount.withLock { count in
            guard count < limits.streams else { return false }
            count += 1
            return true
        }
    }

    fileprivate func streamEnded() { streamCount.withLock { $0 -= 1 } }

    /// Streams running now (for tests and `/state`).
    package var activeStreams: Int { streamCount.withLock { $0 } }

    /// Stops accepting, ends every connection (streams see `finish` first) and frees the daemon.
    package func stop() {
        guard let (handle, socket) = running.withLock({ running in defer { running = nil }; return running }) else { return }
        connections.stopWatchdog()
        MHD_stop_daemon(OpaquePointer(bitPattern: handle))
        close(socket)
    }

    deinit { stop() }

    /// socket + bind + listen on `address` (IPv4 or IPv6 literal); returns the socket and its port.
    private static func listen(address: String, port: Int) throws -> (Int32, Int) {
        guard (0...65535).contains(port) else { throw HTTPServerError.portOutOfRange(port) }
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, address, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
        } else if inet_pton(AF_INET6, address, &v6.sin6_addr) == 1 {
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
        } else {
            throw HTTPServerError.notAnAddress(address)
        }
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket", code: errno, context: "HTTP server") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32 = family == AF_INET
            ? withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            : withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw SystemError("bind", code: code, context: "HTTP server on \(address):\(port)")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let actual: UInt16 = withUnsafePointer(to: &storage) { pointer in
            family == AF_INET
                ? pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
                : pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
        }
        return (fd, Int(actual))
    }
}

/// Per-request state across libmicrohttpd's calls to the access handler (kept in `*con_cls`).
private final class RequestState {
    var body: [UInt8] = []
    var tooLarge = false
    /// A response was queued while the headers were read (a refusal): the body that may still follow is
    /// read and dropped, and no second response is queued for this request.
    var answered = false
    /// The token cookie to set on the answer (the request carried the token in its URL).
    var setCookie: String?
}

/// Frees the per-request state (`MHD_OPTION_NOTIFY_COMPLETED`); the connection waits for its next
/// request from now on, under the request deadline again.
private let requestCompleted: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?,
                                              UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                              MHD_RequestTerminationCode) -> Void = { cls, connection, state, _ in
    if let cls, let connection {
        Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().connections.waiting(connection)
    }
    guard let state, let pointer = state.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(pointer).release()
    state.pointee = nil
}

/// Connections opening and closing (`MHD_OPTION_NOTIFY_CONNECTION`), for the deadlines and eviction.
private let connectionNotified: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?,
                                                UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                                MHD_ConnectionNotificationCode) -> Void = { cls, connection, _, code in
    guard let cls, let connection else { return }
    let table = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().connections
    if code.rawValue == 0 {  // MHD_CONNECTION_NOTIFY_STARTED
        table.opened(connection, socket: prism_mhd_connection_fd(connection))
    } else {
        table.closed(connection)
    }
}

/// The access handler: libmicrohttpd calls it once with the headers, then with each piece of the body,
/// then once more with none left. Bodies are collected up to the server's limit; the route runs last.
private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, state in
    guard let cls, let connection, let url, let method, let uploadSize, let state else { return MHD_Result.NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let methodName = String(cString: method)
    if state.pointee == nil {
        let request = RequestState()
        state.pointee = Unmanaged.passRetained(request).toOpaque()
        guard ["GET", "HEAD", "POST"].contains(methodName) else {
            request.answered = true
            return send(.error(405, "method \(methodName) not allowed"), on: connection)
        }
        let header: (String) -> String? = { name in
            MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, name).map { String(cString: $0) }
        }
        let query: (String) -> String? = { name in
            MHD_lookup_connection_value(connection, MHD_ValueKind.GET_ARGUMENT_KIND, name).map { String(cString: $0) }
        }
        switch server.gate.check(method: methodName, path: String(cString: url), header: header, query: query) {
        case .refuse(let refusal):
            request.answered = true
            return send(refusal, on: connection)
        case .allow(let setCookie): request.setCookie = setCookie
        }
        if methodName == "POST" {
            if let length = MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Content-Length"),
               Int(String(cString: length)).map({ $0 > server.bodyLimit }) ?? true {
                request.answered = true
                return send(.error(413, "request body over \(server.bodyLimit) bytes"), on: connection)
            }
            return MHD_Result.YES  // the body follows
        }
    }
    let request = Unmanaged<RequestState>.fromOpaque(state.pointee!).takeUnretainedValue()
    if request.answered {
        uploadSize.pointee = 0
        return MHD_Result.YES
    }
    if uploadSize.pointee > 0 {
        if let uploadData, !request.tooLarge {
            if request.body.count + uploadSize.pointee > server.bodyLimit {
                request.tooLarge = true
                request.body = []
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                    request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                }
            }
        }
        uploadSize.pointee = 0
        return MHD_Result.YES
    }
    if request.tooLarge { return send(.error(413, "request body over \(server.bodyLimit) bytes"), on: connection) }
    let path = String(cString: url)
    let query: (String) -> String? = { name in
        MHD_lookup_connection_value(connection, MHD_ValueKind.GET_ARGUMENT_KIND, name).map { String(cString: $0) }
    }
    server.connections.served(connection)
    var response = server.handler(HTTPRequest(method: methodName == "HEAD" ? "GET" : methodName, path: path,
                                              body: request.body, query: query))
    var streamEnded: (@Sendable () -> Void)?
    if case .stream(_, _, let source) = response {
        if server.admitStream() {
            streamEnded = { [weak server] in server?.streamEnded() }
        } else {
            source.finish()
            response = .error(503, "too many preview streams open (at most \(server.limits.streams))")
        }
    }
    if let cookie = request.setCookie, case .data(let status, let type, let body, let headers) = response {
        response = .data(status: status, contentType: type, body: body, headers: headers + [("Set-Cookie", cookie)])
    }
    return send(response, on: connection, streamEnded: streamEnded)
}

/// Queues `response` (`MHD_create_response_from_buffer` / `_from_callback`, `MHD_queue_response`).
private func send(_ response: HTTPResponse, on connection: OpaquePointer,
                  streamEnded: (@Sendable () -> Void)? = nil) -> MHD_Result {
    let made: OpaquePointer?
    let status: Int
    switch response {
    case .data(let code, let type, var body, let headers):
        status = code
        made = body.withUnsafeMutableBytes {
            MHD_create_response_from_buffer($0.count, $0.baseAddress, MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
        }
        if let made {
            MHD_add_response_header(made, "Content-Type", type)
            for (name, value) in headers { MHD_add_response_header(made, name, value) }
        }
    case .stream(let code, let type, let source):
        status = code
        let context = Unmanaged.passRetained(StreamBox(source, ended: streamEnded)).toOpaque()
        made = MHD_create_response_from_callback(UInt64.max, 32 * 1024, streamReader, context, streamFree)
        if let made {
            MHD_add_response_header(made, "Content-Type", type)
        } else {
            Unmanaged<StreamBox>.fromOpaque(context).release()
            streamEnded?()
        }
    }
    guard let made else { return MHD_Result.NO }
    MHD_add_response_header(made, "Cache-Control", "no-store")
    MHD_add_response_header(made, "X-Content-Type-Options", "nosniff")
    MHD_add_response_header(made, "Referrer-Policy", "no-referrer")
    for (name, value) in RequestGate.antiFramingHeaders where MHD_get_response_header(made, name) == nil {
        MHD_add_response_header(made, name, value)
    }
    defer { MHD_destroy_response(made) }
    return MHD_queue_response(connection, UInt32(status), made)
}

private final class StreamBox {
    let source: any HTTPStreamSource
    /// Counts the stream out of the server's stream limit.
    let ended: (@Sendable () -> Void)?
    init(_ source: any HTTPStreamSource, ended: (@Sendable () -> Void)?) {
        self.source = source
        self.ended = ended
    }
}

private let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
    guard let cls, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let box = Unmanaged<StreamBox>.fromOpaque(cls).takeUnretainedValue()
    guard let count = box.source.read(into: buffer, capacity: capacity) else { return -1 }  // END_OF_STREAM
    return count
}

private let streamFree: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let box = Unmanaged<StreamBox>.fromOpaque(cls).takeRetainedValue()
    box.source.finish()
    box.ended?()
}
