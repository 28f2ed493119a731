import Foundation
import Synchronization
import XCTest
@testable import Prism
#if canImport(Glibc)
import Glibc
#endif

/// The preview server's promises, over real sockets against an `HTTPServer` in this process (the same
/// type and gate `prism dev` runs; `DevHardeningTests` checks them on the tool itself): other hosts,
/// other origins and untyped POSTs are refused before any route runs, and slow or idle clients
/// cannot lock a normal client out.
final class PreviewServerSecurityTests: XCTestCase {
    /// A server whose routes count their calls: "/state" answers JSON, "/stream" streams forever
    /// until the client leaves, POST "/param" echoes.
    final class CountingServer: Sendable {
        final class Calls: Sendable { let list = Mutex<[String]>([]) }
        let server: HTTPServer
        let calls = Calls()

        init(limits: HTTPServerLimits = HTTPServerLimits()) throws {
            let calls = self.calls
            server = try HTTPServer(address: "127.0.0.1", port: 0, limits: limits) { request in
                calls.list.withLock { $0.append("\(request.method) \(request.path)") }
                switch (request.method, request.path) {
                case ("GET", "/state"): return .json(200, "{\"ok\":true}")
                case ("GET", "/stream"): return .stream(status: 200, contentType: "text/plain", source: EndlessStream())
                case ("POST", "/param"): return .json(200, "{\"ok\":true}")
                default: return .error(404, "not found")
                }
            }
        }

        var port: Int { server.port }
        var routed: [String] { calls.list.withLock { $0 } }
        deinit { server.stop() }

        func request(_ lines: [String], body: String = "") throws -> HTTPReply {
            var text = lines.joined(separator: "\r\n") + "\r\nConnection: close\r\n"
            if !body.isEmpty { text += "Content-Length: \(body.utf8.count)\r\n" }
            return try Self.boundedFetch(port: port, raw: Array((text + "\r\n" + body).utf8))
        }

        /// `HTTPReply.fetch`, but reading at most 64 KiB or 5 s, so a stream that should have been
        /// refused fails the test instead of hanging it.
        static func boundedFetch(port: Int, raw: [UInt8]) throws -> HTTPReply {
            let fd = try HTTPReply.connect(port: port, timeout: 5)
            defer { close(fd) }
            _ = raw.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var data: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16384)
            let deadline = Date(timeIntervalSinceNow: 5)
            while data.count < 65536 && Date() < deadline {
                let n = recv(fd, &chunk, chunk.count, 0)
                if n <= 0 { break }
                data += chunk[0..<n]
            }
            return try HTTPReply.parse(data)
        }
    }

    /// Bytes as fast as the client takes them, until it goes.
    final class EndlessStream: HTTPStreamSource, Sendable {
        func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
            usleep(20_000)
            let count = min(capacity, 64)
            memset(buffer, 0x61, count)
            return count
        }
        func finish() {}
    }

    func testForeignHostIsRefusedBeforeTheRoute() throws {
        let server = try CountingServer()
        let port = server.port
        XCTAssertEqual(try server.request(["GET /state HTTP/1.1", "Host: 127.0.0.1:\(port)"]).status, 200)
        XCTAssertEqual(try server.request(["GET /state HTTP/1.1", "Host: localhost:\(port)"]).status, 200)
        XCTAssertEqual(try server.request(["GET /state HTTP/1.1", "Host: LOCALHOST:\(port)"]).status, 200)
        XCTAssertEqual(server.routed.count, 3)
        // DNS rebinding: the attacker's name resolves to 127.0.0.1, the browser sends that name.
        for host in ["rebind.attacker.example:\(port)", "rebind.attacker.example", "127.0.0.1", "127.0.0.1:\(port + 1)",
                     "localhost.attacker.example:\(port)", "127.0.0.1:\(port)@evil", "[::1]:\(port + 1)", ""] {
            let reply = try server.request(["GET /state HTTP/1.1", "Host: \(host)"])
            XCTAssertTrue([400, 403].contains(reply.status), "Host '\(host)': \(reply.status) \(reply.text)")
        }
        // HTTP/1.0 without Host at all.
        XCTAssertEqual(try server.request(["GET /state HTTP/1.0"]).status, 400)
        XCTAssertEqual(try server.request(["GET /stream HTTP/1.1", "Host: rebind.attacker.example:\(port)"]).status, 403)
        XCTAssertEqual(server.routed.count, 3, "no refused request reached a route: \(server.routed)")
        let refused = try server.request(["GET /state HTTP/1.1", "Host: evil.example:\(port)"])
        XCTAssertTrue(refused.text.contains("Host 'evil.example:\(port)' refused"), refused.text)
    }

    func testCrossOriginAndUntypedPostsAreRefused() throws {
        let server = try CountingServer()
        let host = "Host: 127.0.0.1:\(server.port)"
        let body = #"{"name":"amount","value":1}"#
        // What any web page can send without a preflight: a text/plain fetch or a form.
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
            let reply = try server.request(["POST /param HTTP/1.1", host, "Origin: https://evil.example",
                                            "Content-Type: \(type)"], body: body)
            XCTAssertEqual(reply.status, 403, type)
            let noOrigin = try server.request(["POST /param HTTP/1.1", host, "Content-Type: \(type)"], body: body)
            XCTAssertEqual(noOrigin.status, 415, "\(type) without Origin")
        }
        XCTAssertEqual(try server.request(["POST /param HTTP/1.1", host], body: body).status, 415, "no Content-Type")
        // JSON from another origin (it would need a preflight the server never grants, but is refused anyway).
        for origin in ["https://evil.example", "http://127.0.0.1:\(server.port + 1)", "null", "http://localhost.evil.example:\(server.port)"] {
            let reply = try server.request(["POST /param HTTP/1.1", host, "Origin: \(origin)", "Content-Type: application/json"],
                                           body: body)
            XCTAssertEqual(reply.status, 403, origin)
        }
        // Another site's subresource request, even without Origin (an <img> of /stream on a page).
        XCTAssertEqual(try server.request(["GET /stream HTTP/1.1", host, "Sec-Fetch-Site: cross-site",
                                           "Sec-Fetch-Mode: no-cors"]).status, 403)
        XCTAssertEqual(server.routed, [], "refused before any route ran")

        // The page's own requests pass.
        let own = try server.request(["POST /param HTTP/1.1", host, "Origin: http://127.0.0.1:\(server.port)",
                                      "Content-Type: application/json; charset=utf-8", "Sec-Fetch-Site: same-origin"], body: body)
        XCTAssertEqual(own.status, 200, own.text)
        XCTAssertEqual(try server.request(["GET /state HTTP/1.1", host, "Sec-Fetch-Site: same-origin"]).status, 200)
        // A link to the page from elsewhere still opens it (a navigation, not a read by the other page).
        XCTAssertEqual(try server.request(["GET /state HTTP/1.1", host, "Sec-Fetch-Site: cross-site",
                                           "Sec-Fetch-Mode: navigate"]).status, 200)
        XCTAssertEqual(server.routed, ["POST /param", "GET /state", "GET /state"])
    }

    /// Opens a connection and sends the start of a request, never its end.
    private func slowClient(port: Int) throws -> Int32 {
        let fd = try HTTPReply.connect(port: port, timeout: 20)
        let start = Array("GET /state HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n".utf8)
        _ = start.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    private func trickle(_ fds: [Int32]) {
        for fd in fds { _ = send(fd, "X-Slow: 1\r\n", 11, Int32(MSG_NOSIGNAL)) }
    }

    /// Whether the server has closed `fd` (recv answers 0 or an error without blocking long).
    private func isClosedByServer(_ fd: Int32) -> Bool {
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollfd, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
    }

    /// A normal client's request, retried while the server is making room; nil if it never got an answer.
    private func normalRequest(_ server: CountingServer, within seconds: Double, trickling: [Int32]) -> HTTPReply? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            trickle(trickling)
            if let reply = try? server.request(["GET /state HTTP/1.1", "Host: 127.0.0.1:\(server.port)"]), reply.status == 200 {
                return reply
            }
            usleep(100_000)
        }
        return nil
    }

    /// Today's failure: 32 slow clients trickling headers filled the table for good. Now the table
    /// keeps room: the longest-waiting connections are closed once it fills, and a normal client is
    /// served while the slow ones keep sending (well before the request deadline).
    func testSlowlorisDoesNotLockOutANormalClient() throws {
        var limits = HTTPServerLimits()
        limits.requestDeadline = .seconds(60)  // so eviction, not the deadline, is what makes room here
        let server = try CountingServer(limits: limits)
        var slow: [Int32] = []
        defer { for fd in slow { close(fd) } }
        for _ in 0..<(limits.connections + 8) {
            if let fd = try? slowClient(port: server.port) { slow.append(fd) }
        }
        XCTAssertGreaterThanOrEqual(slow.count, limits.connections, "the attack opened its connections")
        usleep(1_200_000)  // older than `evictableAfter`
        trickle(slow)
        let reply = normalRequest(server, within: 8, trickling: slow)
        XCTAssertEqual(reply?.status, 200, "a normal client is served while slow clients hold connections")
        XCTAssertLessThanOrEqual(server.server.connections.count, limits.connections)
        XCTAssertGreaterThan(slow.filter(isClosedByServer).count, 0, "some slow clients were closed to make room")
    }

    /// A client that trickles a header line now and then never reaches libmicrohttpd's idle timeout;
    /// the whole-request deadline closes it.
    func testRequestDeadlineClosesATricklingClient() throws {
        var limits = HTTPServerLimits()
        limits.requestDeadline = .seconds(1)
        let server = try CountingServer(limits: limits)
        let fd = try slowClient(port: server.port)
        defer { close(fd) }
        let deadline = Date(timeIntervalSinceNow: 15)
        var closed = false
        while Date() < deadline && !closed {
            trickle([fd])
            usleep(200_000)
            closed = isClosedByServer(fd)
        }
        XCTAssertTrue(closed, "the trickling client was closed by the deadline")
        XCTAssertEqual(server.routed, [], "its request never ran")
        // A connection that is answered is not under the deadline while it streams.
        let stream = try HTTPReply.connect(port: server.port)
        defer { close(stream) }
        let request = DevProcess.requestText("GET", "/stream", body: nil, host: "127.0.0.1:\(server.port)")
        _ = request.withUnsafeBytes { send(stream, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received = 0
        var chunk = [UInt8](repeating: 0, count: 4096)
        let until = Date(timeIntervalSinceNow: 2.5)
        while Date() < until {
            let n = recv(stream, &chunk, chunk.count, 0)
            if n <= 0 { break }
            received += n
        }
        XCTAssertGreaterThan(received, 2000, "the stream ran past the 1 s request deadline")
        XCTAssertFalse(isClosedByServer(stream))
    }

    /// Streams are capped, so stream clients (200 of them in the report) can neither fill the
    /// connection table nor push out `/state`.
    func testStreamClientsCannotCrowdOutTheState() throws {
        let server = try CountingServer()
        var streams: [Int32] = []
        defer { for fd in streams { close(fd) } }
        var statuses: [Int] = []
        for _ in 0..<40 {
            let fd = try HTTPReply.connect(port: server.port)
            let request = DevProcess.requestText("GET", "/stream", body: nil, host: "127.0.0.1:\(server.port)")
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var head = [UInt8](repeating: 0, count: 512)
            let n = recv(fd, &head, head.count, 0)
            let line = n > 12 ? String(decoding: head[0..<n], as: UTF8.self) : ""
            statuses.append(Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0)
            streams.append(fd)
        }
        let limit = server.server.limits.streams
        XCTAssertEqual(statuses.filter { $0 == 200 }.count, limit, "\(statuses)")
        XCTAssertEqual(statuses.filter { $0 == 503 }.count, 40 - limit, "\(statuses)")
        XCTAssertEqual(server.server.activeStreams, limit)
        for _ in 0..<5 {
            XCTAssertEqual(try server.request(["GET /state HTTP/1.1", "Host: 127.0.0.1:\(server.port)"]).status, 200)
        }
        // Streams that end free their slots.
        for fd in streams { close(fd) }
        streams.removeAll()
        let deadline = Date(timeIntervalSinceNow: 10)
        while server.server.activeStreams > 0 && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(server.server.activeStreams, 0)
    }

    func testGateForWildcardBindTakesAddressLiteralsOnly() {
        let gate = RequestGate(bindAddress: "0.0.0.0", port: 8080)
        let header: ([String: String]) -> (String) -> String? = { headers in { headers[$0] } }
        XCTAssertNil(gate.refusal(method: "GET", path: "/", header: header(["Host": "192.168.1.5:8080"])))
        XCTAssertNil(gate.refusal(method: "GET", path: "/", header: header(["Host": "[fe80::1]:8080"])))
        XCTAssertNotNil(gate.refusal(method: "GET", path: "/", header: header(["Host": "rebind.example:8080"])))
        XCTAssertNotNil(gate.refusal(method: "GET", path: "/", header: header(["Host": "192.168.1.5:8081"])))
        XCTAssertNil(gate.refusal(method: "POST", path: "/param", header: header(
            ["Host": "192.168.1.5:8080", "Origin": "http://192.168.1.5:8080", "Content-Type": "application/json"])))
        XCTAssertNotNil(gate.refusal(method: "POST", path: "/param", header: header(
            ["Host": "192.168.1.5:8080", "Origin": "http://10.0.0.9:8080", "Content-Type": "application/json"])))
        let loopback = RequestGate(bindAddress: "127.0.0.1", port: 80)
        XCTAssertNil(loopback.refusal(method: "GET", path: "/", header: header(["Host": "localhost"])))
        XCTAssertNotNil(loopback.refusal(method: "GET", path: "/", header: header(["Host": "192.168.1.5"])))
    }
}
