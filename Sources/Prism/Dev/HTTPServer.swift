import CMicroHTTPD
import Foundation
import PrismCore
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP request as the preview's routes see it: parsed by libmicrohttpd, never by hand.
struct HTTPRequest {
    let method: String
    /// The path without the query, exactly as libmicrohttpd decoded it.
    let path: String
    let body: [UInt8]
    /// Looks up one query argument (`MHD_lookup_connection_value`, GET argument kind).
    let query: (String) -> String?
}

/// What a route answers.
enum HTTPResponse {
    /// A complete body.
    case data(status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = [])
    /// A body produced while it is sent, for as long as the source wants (the MJPEG stream).
    case stream(status: Int, contentType: String, source: any HTTPStreamSource)

    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        .data(status: status, contentType: "application/json; charset=utf-8", body: Array(text.utf8))
    }

    static func error(_ status: Int, _ message: String) -> HTTPResponse {
        json(status, "{\"error\":\(JSONText.string(message))}")
    }
}

/// Fills a streamed response. Called on the connection's own thread (libmicrohttpd's thread per
/// connection), so it may block waiting for data without stalling anyone else.
protocol HTTPStreamSource: AnyObject, Sendable {
    /// Writes up to `capacity` bytes; returns the count, or nil at the end of the stream.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int?
    /// The client is gone or the server is stopping.
    func finish()
}

/// An embedded HTTP server: libmicrohttpd with a thread per connection, on a listening socket this
/// type opens itself (so the bound port is known even for port 0, and the address is exactly the one
/// asked for).
///
/// Limits: `connectionLimit` connections in all (`MHD_OPTION_CONNECTION_LIMIT`), a per-connection
/// memory pool (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`, which also bounds header sizes), an idle
/// timeout, and `bodyLimit` bytes of request body (413 beyond it).
final class HTTPServer: @unchecked Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    let port: Int
    let address: String
    fileprivate let handler: Handler
    fileprivate let bodyLimit: Int
    private var daemon: OpaquePointer?
    private var listenSocket: Int32

    init(address: String, port: Int, connectionLimit: Int = 32, bodyLimit: Int = 16 * 1024,
         handler: @escaping Handler) throws {
        self.handler = handler
        self.bodyLimit = bodyLimit
        self.address = address
        (listenSocket, self.port) = try Self.listen(address: address, port: port)
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: MHD_OPTION.LISTEN_SOCKET, value: Int(listenSocket), ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_LIMIT, value: connectionLimit, ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.PER_IP_CONNECTION_LIMIT, value: connectionLimit, ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_MEMORY_LIMIT, value: 64 * 1024, ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.CONNECTION_TIMEOUT, value: 30, ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.NOTIFY_COMPLETED, value: unsafeBitCast(requestCompleted, to: Int.self),
                           ptr_value: nil),
            MHD_OptionItem(option: MHD_OPTION.END, value: 0, ptr_value: nil),
        ]
        let flags = UInt32(MHD_USE_THREAD_PER_CONNECTION.rawValue) | UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue)
            | UInt32(MHD_USE_POLL.rawValue)
        let context = Unmanaged.passUnretained(self).toOpaque()
        daemon = options.withUnsafeMutableBufferPointer { items in
            withVaList([Int32(MHD_OPTION.ARRAY.rawValue), items.baseAddress!,
                        Int32(MHD_OPTION.END.rawValue)]) { list in
                MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, context, list)
            }
        }
        guard daemon != nil else {
            close(listenSocket)
            throw UsageError("cannot start the preview server on \(address):\(self.port) (MHD_start_daemon failed)")
        }
    }

    /// Stops accepting, ends every connection (streams see `finish` first) and frees the daemon.
    func stop() {
        guard let daemon else { return }
        self.daemon = nil
        MHD_stop_daemon(daemon)
        close(listenSocket)
    }

    deinit { stop() }

    /// socket + bind + listen on `address` (IPv4 or IPv6 literal); returns the socket and its port.
    private static func listen(address: String, port: Int) throws -> (Int32, Int) {
        guard (0...65535).contains(port) else { throw UsageError("--port takes 0...65535, not \(port)") }
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
            throw UsageError("--bind takes a numeric IPv4 or IPv6 address, not '\(address)'")
        }
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket", code: errno, context: "preview server") }
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
            throw SystemError("bind", code: code, context: "preview server on \(address):\(port)")
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
}

/// Frees the per-request state (`MHD_OPTION_NOTIFY_COMPLETED`).
private let requestCompleted: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?,
                                              UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                              MHD_RequestTerminationCode) -> Void = { _, _, state, _ in
    guard let state, let pointer = state.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(pointer).release()
    state.pointee = nil
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
            return send(.error(405, "method \(methodName) not allowed"), on: connection)
        }
        if methodName == "POST" {
            if let length = MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Content-Length"),
               Int(String(cString: length)).map({ $0 > server.bodyLimit }) ?? true {
                return send(.error(413, "request body over \(server.bodyLimit) bytes"), on: connection)
            }
            return MHD_Result.YES  // the body follows
        }
    }
    let request = Unmanaged<RequestState>.fromOpaque(state.pointee!).takeUnretainedValue()
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
    let response = server.handler(HTTPRequest(method: methodName == "HEAD" ? "GET" : methodName, path: path,
                                              body: request.body, query: query))
    return send(response, on: connection)
}

/// Queues `response` (`MHD_create_response_from_buffer` / `_from_callback`, `MHD_queue_response`).
private func send(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
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
        let context = Unmanaged.passRetained(StreamBox(source)).toOpaque()
        made = MHD_create_response_from_callback(UInt64.max, 32 * 1024, streamReader, context, streamFree)
        if let made {
            MHD_add_response_header(made, "Content-Type", type)
        } else {
            Unmanaged<StreamBox>.fromOpaque(context).release()
        }
    }
    guard let made else { return MHD_Result.NO }
    MHD_add_response_header(made, "Cache-Control", "no-store")
    MHD_add_response_header(made, "X-Content-Type-Options", "nosniff")
    MHD_add_response_header(made, "Referrer-Policy", "no-referrer")
    defer { MHD_destroy_response(made) }
    return MHD_queue_response(connection, UInt32(status), made)
}

private final class StreamBox {
    let source: any HTTPStreamSource
    init(_ source: any HTTPStreamSource) { self.source = source }
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
}

/// Minimal JSON text building for the preview's responses (values are escaped, numbers finite).
enum JSONText {
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<": out += "\\u003c"  // safe inside HTML too
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }

    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
