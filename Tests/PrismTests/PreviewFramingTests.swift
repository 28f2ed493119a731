import Foundation
import XCTest
@testable import Prism

/// Issue 20, item 10: no other page may frame the preview (clickjacking). A page on another localhost
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
