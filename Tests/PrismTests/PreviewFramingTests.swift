import Foundation
import XCTest
@testable import Prism
#if canImport(Glibc)
import Glibc
#endif

/// No other page may frame the preview (clickjacking). A page on another localhost
/// port is same-site, so a frame of it would carry the `SameSite=Strict` cookie: framing navigations are
/// refused, and every response forbids framing to browsers that do not send `Sec-Fetch-*`.
final class PreviewFramingTests: XCTestCase {
    func testFramesAreRefusedAndEveryResponseForbidsThem() throws {
        let server = try PreviewServerSecurityTests.CountingServer()
        let host = "Host: 127.0.0.1:\(server.port)"
        for destination in ["iframe", "frame", "embed", "object"] {
            for site in ["same-site", "cross-site", "same-origin", "none"] {
                let reply = try server.request(["GET /state HTTP/1.1", host, "Sec-Fetch-Dest: \(destination)",
                                                "Sec-Fetch-Mode: navigate", "Sec-Fetch-Site: \(site)"])
                XCTAssertEqual(reply.status, 403, "\(destination) from \(site)")
            }
        }
        // A same-site page's navigation that is not top-level is not a link someone followed.
        let nested = try server.request(["GET /state HTTP/1.1", host, "Sec-Fetch-Site: same-site", "Sec-Fetch-Mode: navigate",
                                         "Sec-Fetch-Dest: empty"])
        XCTAssertEqual(nested.status, 403)
        XCTAssertEqual(server.routed, [], "refused before any route ran")
        // A link followed from another page (a top-level navigation) still opens it, and says it may not be framed.
        let link = try server.request(["GET /state HTTP/1.1", host, "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate",
                                       "Sec-Fetch-Dest: document"])
        XCTAssertEqual(link.status, 200)
        for reply in [link, nested, try server.request(["GET /nowhere HTTP/1.1", host])] {
            XCTAssertEqual(reply.headers["x-frame-options"], "DENY", "\(reply.status)")
            XCTAssertEqual(reply.headers["content-security-policy"], "frame-ancestors 'none'", "\(reply.status)")
        }
    }

    func testThePageItselfForbidsFramingInItsPolicy() throws {
        let directory = try TemporaryDirectory()
        try DevTests.invertCube.write(toFile: directory.file("look.cube"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("look.cube"), "--size", "64x48"])
        defer { dev.stop() }
        let page = try dev.get("/")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["x-frame-options"], "DENY")
        XCTAssertTrue(page.headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true,
                      "\(page.headers["content-security-policy"] ?? "none")")
    }
}

/// A body refused while its headers are read (413) is answered once, with each
/// header once.
final class PreviewRefusalTests: XCTestCase {
    /// Everything the server sends back for `raw` within 3 s (or until it closes).
    private func exchange(port: Int, _ raw: String) throws -> String {
        let fd = try HTTPReply.connect(port: port, timeout: 5)
        defer { close(fd) }
        _ = Array(raw.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var data: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 16384)
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let deadline = Date(timeIntervalSinceNow: 3)
        while Date() < deadline {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n == 0 { break }
            if n > 0 { data += chunk[0..<n] }
        }
        return String(decoding: data, as: UTF8.self)
    }

    func testAnOversizedBodyIsAnsweredOnce() throws {
        let server = try PreviewServerSecurityTests.CountingServer()
        let chunk = String(repeating: "a", count: 4000)
        let chunked = (0..<10).map { _ in String(format: "%x\r\n", 4000) + chunk + "\r\n" }.joined() + "0\r\n\r\n"
        for (framing, payload) in [("Transfer-Encoding: chunked", chunked), ("Content-Length: 40000", String(repeating: "a", count: 40000))] {
            let text = try exchange(port: server.port, "POST /param HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
                                    + "Content-Type: application/json\r\n\(framing)\r\n\r\n" + payload)
            XCTAssertTrue(text.hasPrefix("HTTP/1.1 413"), "\(framing): \(text.prefix(200))")
            XCTAssertEqual(text.components(separatedBy: "HTTP/1.1 ").count - 1, 1, "\(framing): one response\n\(text)")
            XCTAssertEqual(text.components(separatedBy: "\r\nContent-Type:").count - 1, 1, "\(framing): headers once\n\(text)")
        }
        XCTAssertEqual(server.routed, [], "the route never ran for a refused body")
    }
}
