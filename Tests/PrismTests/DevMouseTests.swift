import Foundation
import PrismCore
import PrismMedia
import XCTest
@testable import Prism

/// ShaderToy's `iMouse` from the preview page: `POST /mouse` on a real `prism dev` (the built binary)
/// reaches the shader, behind the same gate as every other control request.
final class DevMouseTests: XCTestCase {
    /// Paints iMouse: red = x / width, green = y / height, blue = button down.
    static let mouseShader = """
        void mainImage(out vec4 fragColor, in vec2 fragCoord) {
            fragColor = vec4(iMouse.x / iResolution.x, iMouse.y / iResolution.y, iMouse.z > 0.0 ? 1.0 : 0.0, 1.0);
        }
        """

    private func frames(_ state: [String: Any]) -> Int { state["frames"] as? Int ?? 0 }

    /// The output a few frames from now, as the page's snapshot (PNG, full size).
    private func snapshotAfterFrames(_ dev: DevProcess) throws -> RGBAImage {
        let now = frames(try dev.json("/state"))
        try dev.waitForState("frames") { frames($0) > now + 4 }
        return try dev.snapshot()
    }

    private func raw(_ dev: DevProcess, _ lines: [String], body: String) throws -> HTTPReply {
        let text = lines.joined(separator: "\r\n") + "\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        return try HTTPReply.fetch(port: dev.port, raw: Array(text.utf8))
    }

    func testPointerFromThePageReachesTheShader() throws {
        let directory = try TemporaryDirectory()
        try directory.save("mouse.frag", Self.mouseShader)
        let dev = try DevProcess(arguments: [directory.file("mouse.frag"), "--size", "160x90"])
        defer { dev.stop() }
        try dev.waitForState("frames") { frames($0) > 2 && $0["error"] is NSNull }
        XCTAssertEqual(try snapshotAfterFrames(dev).pixel(x: 10, y: 10).r, 0, "iMouse is 0 before any press")

        // The gate: another origin, no token, an untyped body — all refused before the route runs.
        let host = "Host: 127.0.0.1:\(dev.port)"
        let press = #"{"x":40,"y":60,"down":true}"#
        XCTAssertEqual(try raw(dev, ["POST /mouse HTTP/1.1", host, dev.cookie, "Origin: https://evil.example",
                                     "Content-Type: application/json"], body: press).status, 403)
        XCTAssertEqual(try raw(dev, ["POST /mouse HTTP/1.1", host, "Content-Type: application/json"], body: press).status, 403,
                       "no token")
        XCTAssertEqual(try raw(dev, ["POST /mouse HTTP/1.1", host, dev.cookie, "Content-Type: text/plain"], body: press).status, 415)
        // The route's own checks: inside the frame, numbers, bounded.
        for body in [#"{"x":161,"y":10,"down":true}"#, #"{"x":-1,"y":10,"down":true}"#, #"{"x":1e400,"y":10,"down":true}"#,
                     #"{"x":"10","y":10,"down":true}"#, #"{"x":10,"y":10}"#, "[1,2]",
                     #"{"x":10,"y":10,"down":true,"pad":""# + String(repeating: " ", count: 300) + #""}"#] {
            let reply = try raw(dev, ["POST /mouse HTTP/1.1", host, dev.cookie, "Content-Type: application/json"], body: body)
            XCTAssertEqual(reply.status, 400, "\(body.prefix(60)): \(reply.text)")
            XCTAssertFalse(reply.text.isEmpty)
        }
        XCTAssertEqual(try snapshotAfterFrames(dev).pixel(x: 10, y: 10).r, 0, "nothing refused moved the pointer")

        // A press at (40, 60) from the bottom left, held: red 40/160, green 60/90, blue 1.
        XCTAssertEqual(try dev.post("/mouse", ["x": 40, "y": 60, "down": true]).status, 200)
        var pixel = try snapshotAfterFrames(dev).pixel(x: 100, y: 5)
        XCTAssertEqual(Double(pixel.r), 255 * 40 / 160, accuracy: 1.5)
        XCTAssertEqual(Double(pixel.g), 255 * 60 / 90, accuracy: 1.5)
        XCTAssertEqual(pixel.b, 255, "button down")
        // Released: the position stays, the button is up.
        XCTAssertEqual(try dev.post("/mouse", ["x": 120, "y": 30, "down": false]).status, 200)
        pixel = try snapshotAfterFrames(dev).pixel(x: 100, y: 5)
        XCTAssertEqual(Double(pixel.r), 255 * 40 / 160, accuracy: 1.5, "xy moves only while the button is down")
        XCTAssertEqual(pixel.b, 0, "button up")
        XCTAssertTrue(dev.process.isRunning, dev.stderr)
    }

    /// ShaderToy's encoding, frame by frame: xy where the pointer is while down, zw the click, z negative
    /// once released, w positive on the click's first frame only.
    func testMouseStateFollowsShaderToy() throws {
        let mouse = DevMouse()
        XCTAssertNil(mouse.next(), "nothing before the first press")
        mouse.update(.init(x: 10, y: 20, down: true))
        XCTAssertEqual(mouse.next(), SIMD4(10, 20, 10, 20), "the click's frame")
        XCTAssertEqual(mouse.next(), SIMD4(10, 20, 10, -20), "held")
        mouse.update(.init(x: 30, y: 40, down: true))
        XCTAssertEqual(mouse.next(), SIMD4(30, 40, 10, -20), "dragged")
        mouse.update(.init(x: 50, y: 60, down: false))
        XCTAssertEqual(mouse.next(), SIMD4(30, 40, -10, -20), "released where it was")
        mouse.update(.init(x: 5, y: 6, down: true))
        mouse.update(.init(x: 5, y: 6, down: false))
        XCTAssertEqual(mouse.next(), SIMD4(5, 6, -5, 6), "a click between two frames is still seen once")
        XCTAssertEqual(mouse.next(), SIMD4(5, 6, -5, -6))

        let size = Size(width: 160, height: 90)
        XCTAssertEqual(try DevMouse.parse(Array(#"{"x":160,"y":0,"down":false}"#.utf8), outputSize: size), .init(x: 160, y: 0, down: false))
        XCTAssertThrowsError(try DevMouse.parse(Array(#"{"x":10,"y":91,"down":true}"#.utf8), outputSize: size)) { error in
            XCTAssertTrue("\(error)".contains("inside the 160x90 output"), "\(error)")
        }
        XCTAssertThrowsError(try DevMouse.parse(Array(#"{"x":true,"y":1,"down":true}"#.utf8), outputSize: size))
    }
}
