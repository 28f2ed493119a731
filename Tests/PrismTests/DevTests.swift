import Foundation
import PrismMedia
import XCTest

/// End-to-end tests of `prism dev`: the built binary as a subprocess, its preview server over HTTP,
/// its page in headless Chromium. Short runs on a small test pattern, so they suit llvmpipe in CI.
final class DevTests: XCTestCase {
    // A .cube LUT is a file filter `prism dev` hot-reloads like a shader: it has a line-numbered error
    // format and a float parameter (intensity), and it works in every build.
    static let invertCube = "LUT_3D_SIZE 2\n1 1 1\n0 1 1\n1 0 1\n0 0 1\n1 1 0\n0 1 0\n1 0 0\n0 0 0\n"
    static let redCube = "LUT_3D_SIZE 2\n" + String(repeating: "1 0 0\n", count: 8)
    static let brokenCube = "LUT_3D_SIZE 2\n1 1 1\nthis is not a row\n"  // error on line 3

    static let isfShader = """
        /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" },
          { "NAME": "amount", "TYPE": "float", "DEFAULT": 0.5, "MIN": 0.0, "MAX": 1.0 } ] }*/
        void main() {
            vec4 c = IMG_THIS_PIXEL(inputImage);
            gl_FragColor = vec4(mix(c.rgb, vec3(1.0, 0.0, 0.0), amount), 1.0);
        }
        """
    /// Line 5 of the file is broken.
    static let brokenISF = isfShader.replacingOccurrences(of: "    gl_FragColor = vec4(mix(c.rgb", with: "    gl_FragColor = vec4(mix(c.rgb +* ")
    static let blueISF = isfShader.replacingOccurrences(of: "vec3(1.0, 0.0, 0.0)", with: "vec3(0.0, 0.0, 1.0)")

    private func frames(_ state: [String: Any]) -> Int { state["frames"] as? Int ?? 0 }
    private func error(_ state: [String: Any]) -> [String: Any]? { state["error"] as? [String: Any] }
    private func parameterValue(_ state: [String: Any], _ name: String) -> Any? {
        (state["parameters"] as? [[String: Any]])?.first { $0["name"] as? String == name }?["value"]
    }

    /// Break and fix the file: the error arrives with its line, frames keep flowing, the fix takes
    /// effect, and a parameter set before the break is kept.
    private func checkHotReload(dev: DevProcess, directory: TemporaryDirectory, file: String, parameter: String,
                                value: Double, broken: String, brokenLine: Int, fixed: String,
                                fixedPixel: ((r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> Bool) throws {
        try dev.waitForState("frames flowing") { frames($0) > 5 }
        XCTAssertEqual(try dev.post("/param", ["name": parameter, "value": value]).status, 200)
        try dev.waitForState("the parameter") { (parameterValue($0, parameter) as? Double) == value }

        try directory.save(file, broken)
        let failed = try dev.waitForState("the compile error") { error($0) != nil }
        let diagnostic = try XCTUnwrap(error(failed))
        XCTAssertEqual(diagnostic["line"] as? Int, brokenLine, "\(diagnostic)")
        XCTAssertTrue((diagnostic["file"] as? String ?? "").hasSuffix(file), "\(diagnostic)")
        XCTAssertTrue((diagnostic["text"] as? String ?? "").contains("\(file):\(brokenLine)"), "\(diagnostic)")
        let before = frames(failed)
        try dev.waitForState("frames flowing while broken") { frames($0) > before + 10 && error($0) != nil }

        try directory.save(file, fixed)
        let recovered = try dev.waitForState("the fix") { error($0) == nil && ($0["reloads"] as? Int ?? 0) >= 1 }
        XCTAssertEqual(parameterValue(recovered, parameter) as? Double, value, "the parameter survives the reload")
        let after = frames(recovered)
        try dev.waitForState("frames after the fix") { frames($0) > after + 5 }
        let image = try dev.snapshot()
        var bad = 0
        for y in stride(from: 0, to: image.size.height, by: 3) {
            for x in stride(from: 0, to: image.size.width, by: 3) where !fixedPixel(image.pixel(x: x, y: y)) { bad += 1 }
        }
        XCTAssertEqual(bad, 0, "pixels not showing the fixed shader")
    }

    func testHotReloadOfALookFileEndToEnd() throws {
        let directory = try TemporaryDirectory()
        try Self.invertCube.write(toFile: directory.file("look.cube"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("look.cube"), "--size", "160x90"])
        defer { dev.stop() }
        // Constant red at intensity 0.5: half the input plus half red.
        try checkHotReload(dev: dev, directory: directory, file: "look.cube", parameter: "intensity", value: 0.5,
                           broken: Self.brokenCube, brokenLine: 3, fixed: Self.redCube) { p in
            p.r >= 125 && p.g <= 131 && p.b <= 131
        }
    }

    func testHotReloadOfAUserShaderEndToEnd() throws {
        let directory = try TemporaryDirectory()
        try Self.isfShader.write(toFile: directory.file("tint.fs"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("tint.fs"), "--size", "160x90"])
        defer { dev.stop() }
        let first = try dev.waitForState("the first frames or an error") { frames($0) > 2 || error($0) != nil }
        XCTAssertNil(error(first), "the shader should load")
        // amount 1 makes the output the constant colour: red before, blue after the fix.
        try checkHotReload(dev: dev, directory: directory, file: "tint.fs", parameter: "amount", value: 1,
                           broken: Self.brokenISF, brokenLine: 5, fixed: Self.blueISF) { p in
            p.b >= 240 && p.r <= 15 && p.g <= 15
        }
    }

    func testPreviewSecurity() throws {
        let directory = try TemporaryDirectory()
        try Self.invertCube.write(toFile: directory.file("look.cube"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("look.cube"), "--size", "160x90"])
        defer { dev.stop() }
        XCTAssertTrue(dev.stderr.contains("preview at http://127.0.0.1:"), "loopback by default: \(dev.stderr)")
        try dev.waitForState("frames") { frames($0) > 2 }

        // Only the page's own resources exist; paths never reach the file system.
        let page = try dev.get("/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("<img id=\"video\""))
        for path in ["/../etc/passwd", "/etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/look.cube", "/state/../../etc/passwd", "/favicon.ico"] {
            XCTAssertEqual(try dev.get(path).status, 404, path)
        }
        XCTAssertEqual(try dev.get("/stream?view=../../etc/passwd").status, 400)
        XCTAssertEqual(try dev.request("PUT", "/state", body: []).status, 405)
        XCTAssertEqual(try dev.request("DELETE", "/").status, 405)

        // Bodies are size-limited and parameters validated.
        let huge = Array(#"{"name":"intensity","value":0.5,"pad":""#.utf8) + [UInt8](repeating: 0x41, count: 100_000) + Array("\"}".utf8)
        XCTAssertEqual(try dev.request("POST", "/param", body: huge).status, 413)
        XCTAssertEqual(try dev.post("/param", ["name": "intensity", "value": 2.0]).status, 400, "out of range")
        XCTAssertEqual(try dev.post("/param", ["name": "intensity", "value": "0.5"]).status, 400, "wrong type")
        XCTAssertEqual(try dev.post("/param", ["name": "intensity", "value": true]).status, 400, "wrong type")
        XCTAssertEqual(try dev.post("/param", ["name": "nosuch", "value": 1]).status, 400, "unknown name")
        XCTAssertEqual(try dev.post("/param", ["name": "file", "value": "/etc/passwd"]).status, 400, "paths are not settable")
        XCTAssertEqual(try dev.post("/param", ["name": "interp", "value": "cubic"]).status, 400, "not an option")
        XCTAssertEqual(try dev.request("POST", "/param", body: Array("{not json".utf8)).status, 400)
        XCTAssertEqual(try dev.post("/record", ["action": "rm -rf"]).status, 400)
        // The test pattern is not a camera: no switching, and /state says so.
        XCTAssertEqual(try dev.post("/camera", ["device": "/dev/video0"]).status, 409)
        XCTAssertEqual(try dev.get("/camera").status, 405)
        XCTAssert(try dev.json("/state")["camera"] is NSNull)
        let ok = try dev.post("/param", ["name": "interp", "value": "trilinear"])
        XCTAssertEqual(ok.status, 200, ok.text)
        XCTAssertEqual(ok.headers["content-type"], "application/json; charset=utf-8")

        // A client that opens the stream and never reads cannot stall the loop.
        let stalled = try HTTPReply.connect(port: dev.port)
        defer { close(stalled) }
        let request = DevProcess.requestText("GET", "/stream", body: nil, host: "127.0.0.1:\(dev.port)", extraHeaders: [dev.cookie])
        _ = request.withUnsafeBytes { send(stalled, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var size: Int32 = 4096
        setsockopt(stalled, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let start = frames(try dev.json("/state"))
        try dev.waitForState("frames while a client stalls") { frames($0) > start + 30 }
        // A second client still gets a stream.
        let frame = try dev.get("/frame.jpg")
        XCTAssertEqual(frame.status, 200)
        XCTAssertEqual(Array(frame.body.prefix(2)), [0xFF, 0xD8], "a JPEG")
    }

    /// The page in headless Chromium: it loads, the stream shows a non-blank picture, moving a slider
    /// changes it, and the error overlay appears for a broken shader. The page tests itself
    /// (`?selftest=`) and posts its findings to the server, which `/state` reports.
    func testPreviewPageInHeadlessChromium() throws {
        let chromium = try Self.requireChromium()
        let directory = try TemporaryDirectory()
        let dev = try pageSelfTestDev("look.cube", Self.invertCube, in: directory)
        defer { dev.stop() }

        let stream = try runPage(chromium, dev: dev, directory: directory, mode: "stream")
        XCTAssertEqual(stream["loaded"] as? Bool, true, "\(stream)")
        XCTAssertEqual(stream["nonBlank"] as? Bool, true, "\(stream)")
        XCTAssertEqual(stream["sliderChanges"] as? Bool, true, "\(stream)")

        try directory.save("look.cube", Self.brokenCube)
        try dev.waitForState("the error") { error($0) != nil }
        let broken = try runPage(chromium, dev: dev, directory: directory, mode: "error")
        XCTAssertEqual(broken["errorShown"] as? Bool, true, "\(broken)")
        XCTAssertEqual(broken["errorVisible"] as? Bool, true, "\(broken)")
        XCTAssertEqual(broken["errorLine"] as? Int, 3, "\(broken)")
        XCTAssertTrue((broken["errorText"] as? String ?? "").contains("line 3"), "\(broken)")
        XCTAssertEqual(broken["nonBlank"] as? Bool, true, "the last good program keeps running: \(broken)")
    }

    /// ShaderToy's iMouse from the page itself: pointer events on the picture, converted to output pixels
    /// from the bottom left and posted to /mouse, change the picture; the last position (released three
    /// quarters across, a quarter down) is what the shader shows.
    func testPagePointerDrivesIMouseInHeadlessChromium() throws {
        let chromium = try Self.requireChromium()
        let directory = try TemporaryDirectory()
        let dev = try pageSelfTestDev("mouse.frag", DevMouseTests.mouseShader, in: directory)
        defer { dev.stop() }
        let result = try runPage(chromium, dev: dev, directory: directory, mode: "mouse")
        XCTAssertEqual(result["mouseChanges"] as? Bool, true, "\(result)")
        XCTAssertEqual(result["mouseSent"] as? Bool, true, "\(result)")
        let now = frames(try dev.json("/state"))
        try dev.waitForState("frames after the release") { frames($0) > now + 4 }
        let pixel = try dev.snapshot().pixel(x: 5, y: 5)
        XCTAssertEqual(Double(pixel.r), 0.75 * 255, accuracy: 3, "x: three quarters across")
        XCTAssertEqual(Double(pixel.g), 0.75 * 255, accuracy: 3, "y: a quarter down is three quarters up")
        XCTAssertEqual(pixel.b, 0, "released")
    }

    /// Headless Chromium's path. Without it the test is skipped, or fails where CI asks for it
    /// (`PRISM_REQUIRE_CHROMIUM=1`, set by `.ci/run`, which installs it).
    static func requireChromium() throws -> String {
        if let chromium = findChromium() { return chromium }
        let message = "headless Chromium is not installed (Debian package `chromium`); the preview page test needs it"
        if ProcessInfo.processInfo.environment["PRISM_REQUIRE_CHROMIUM"] == "1" {
            struct Missing: Error, CustomStringConvertible { let description: String }
            throw Missing(description: message)
        }
        throw XCTSkip(message)
    }

    /// `prism dev` on `contents` saved as `name`, with the page's self-test on, once it is drawing frames.
    private func pageSelfTestDev(_ name: String, _ contents: String, in directory: TemporaryDirectory) throws -> DevProcess {
        try directory.save(name, contents)
        let dev = try DevProcess(arguments: [directory.file(name), "--size", "320x180", "--page-self-test"])
        do {
            try dev.waitForState("frames") { frames($0) > 2 }
        } catch {
            dev.stop()
            throw error
        }
        return dev
    }

    static func findChromium() -> String? {
        ["chromium", "chromium-browser", "google-chrome"].lazy.compactMap { Tools.which($0) }.first
    }

    private func runPage(_ chromium: String, dev: DevProcess, directory: TemporaryDirectory, mode: String) throws -> [String: Any] {
        let browser = Process()
        browser.executableURL = URL(fileURLWithPath: chromium)
        browser.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                             "--mute-audio", "--user-data-dir=\(directory.file("chromium-\(mode)"))",
                             "--window-size=1280,900", "http://127.0.0.1:\(dev.port)/?token=\(dev.token)&selftest=\(mode)"]
        browser.standardOutput = FileHandle.nullDevice
        browser.standardError = FileHandle.nullDevice
        try browser.run()
        defer {
            browser.terminate()
            browser.waitUntilExit()
        }
        let state = try dev.waitForState(timeout: 60, "the page's \(mode) self-test") { state in
            guard let text = state["selfTest"] as? [String: Any] else { return false }
            return text["mode"] as? String == mode
        }
        return try XCTUnwrap(state["selfTest"] as? [String: Any])
    }
}
