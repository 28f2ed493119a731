import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Hostile input to a running `prism dev` (the built binary): requests another web page could send,
/// parameter values and shader edits that used to kill the server. It must refuse or report each one
/// and keep serving frames from the last good program.
final class DevHardeningTests: XCTestCase {
    /// An ISF shader with a float input without MIN/MAX that sizes a pass.
    static func sizedShader(width: String) -> String {
        """
        /*{ "ISFVSN": "2",
          "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" }, { "NAME": "scale", "TYPE": "float", "DEFAULT": 0.5 } ],
          "PASSES": [ { "TARGET": "small", "WIDTH": "\(width)", "HEIGHT": "$HEIGHT" }, {} ] }*/
        void main() {
            if (PASSINDEX == 0) gl_FragColor = IMG_THIS_NORM_PIXEL(inputImage);
            else gl_FragColor = vec4(1.0) - IMG_NORM_PIXEL(small, isf_FragNormCoord);
        }
        """
    }

    private func frames(_ state: [String: Any]) -> Int { state["frames"] as? Int ?? 0 }
    private func errorText(_ state: [String: Any]) -> String? { (state["error"] as? [String: Any])?["text"] as? String }

    private func raw(_ dev: DevProcess, _ lines: [String], body: String = "") throws -> HTTPReply {
        var text = (lines + [dev.cookie]).joined(separator: "\r\n") + "\r\nConnection: close\r\n"
        if !body.isEmpty { text += "Content-Length: \(body.utf8.count)\r\n" }
        return try HTTPReply.fetch(port: dev.port, raw: Array((text + "\r\n" + body).utf8))
    }

    func testOtherPagesCannotDriveOrReadPrismDev() throws {
        let directory = try TemporaryDirectory()
        try Self.sizedShader(width: "$WIDTH*$scale").write(toFile: directory.file("sized.fs"), atomically: true, encoding: .utf8)
        let out = directory.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let dev = try DevProcess(arguments: [directory.file("sized.fs"), "--size", "160x90", "--out", out])
        defer { dev.stop() }
        try dev.waitForState("frames") { frames($0) > 2 && errorText($0) == nil }
        let host = "Host: 127.0.0.1:\(dev.port)"

        // 1. A cross-origin "simple" request (text/plain: no preflight) cannot start a recording or set a parameter.
        let record = try raw(dev, ["POST /record HTTP/1.1", host, "Origin: https://evil.example", "Content-Type: text/plain"],
                             body: #"{"action":"start"}"#)
        XCTAssertEqual(record.status, 403, record.text)
        let untyped = try raw(dev, ["POST /record HTTP/1.1", host, "Content-Type: text/plain"], body: #"{"action":"start"}"#)
        XCTAssertEqual(untyped.status, 415, untyped.text)
        let param = try raw(dev, ["POST /param HTTP/1.1", host, "Origin: https://evil.example", "Content-Type: text/plain"],
                            body: #"{"name":"scale","value":0.25}"#)
        XCTAssertEqual(param.status, 403)
        usleep(500_000)
        let state = try dev.json("/state")
        XCTAssertEqual((state["recording"] as? [String: Any])?["active"] as? Bool, false, "\(state)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out), [], "nothing was recorded")
        let scale = (state["parameters"] as? [[String: Any]])?.first { $0["name"] as? String == "scale" }?["value"] as? Double
        XCTAssertEqual(scale, 0.5, "the parameter is unchanged")

        // 3. DNS rebinding: the page's own host name is refused for state and frames.
        for path in ["/state", "/snapshot", "/frame.jpg", "/"] {
            XCTAssertEqual(try raw(dev, ["GET \(path) HTTP/1.1", "Host: rebind.evil.example:\(dev.port)"]).status, 403, path)
        }

        // The session's token: without it (another local user, a program that did not read the terminal)
        // nothing is served; the printed URL carries it and sets it as the page's cookie.
        let plain = "GET /state HTTP/1.1\r\n\(host)\r\nConnection: close\r\n\r\n"
        XCTAssertEqual(try HTTPReply.fetch(port: dev.port, raw: Array(plain.utf8)).status, 403)
        let wrong = "GET /?token=0123 HTTP/1.1\r\n\(host)\r\nConnection: close\r\n\r\n"
        XCTAssertEqual(try HTTPReply.fetch(port: dev.port, raw: Array(wrong.utf8)).status, 403)
        let opened = "GET /?token=\(dev.token) HTTP/1.1\r\n\(host)\r\nConnection: close\r\n\r\n"
        let page = try HTTPReply.fetch(port: dev.port, raw: Array(opened.utf8))
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["set-cookie"], "prism-token-\(dev.port)=\(dev.token); Path=/; HttpOnly; SameSite=Strict")
        XCTAssertEqual(dev.token.count, 32)

        // 2. The remote crash: a huge value for a float that sizes a pass. The server answers, reports the
        // limit, and frames keep flowing from the last good program.
        let huge = try dev.post("/param", ["name": "scale", "value": 1e300])
        XCTAssertTrue([200, 400].contains(huge.status), "\(huge.status) \(huge.text)")
        let reported = try dev.waitForState("the size error") { errorText($0) != nil }
        XCTAssertTrue(errorText(reported)?.contains("limit") == true, "\(reported)")
        let before = frames(reported)
        try dev.waitForState("frames after the huge value") { frames($0) > before + 10 }
        XCTAssertEqual(try dev.post("/param", ["name": "scale", "value": 0.5]).status, 200)
        XCTAssertTrue(dev.process.isRunning, dev.stderr)
    }

    /// Saving a shader whose pass size overflows Int, or whose size expression nests 20,000 deep, used
    /// to kill `prism dev`; it must show the error and keep the last good program running.
    func testShaderEditsThatUsedToCrashKeepTheLastGoodProgram() throws {
        let directory = try TemporaryDirectory()
        try Self.sizedShader(width: "$WIDTH/2.0").write(toFile: directory.file("sized.fs"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("sized.fs"), "--size", "160x90"])
        defer { dev.stop() }
        try dev.waitForState("frames") { frames($0) > 2 && errorText($0) == nil }
        let bad = ["$WIDTH*1e20", "pow(2.0,1000.0)", String(repeating: "(", count: 20_000) + "1"]
        for (index, width) in bad.enumerated() {
            try directory.save("sized.fs", Self.sizedShader(width: width))
            let failed = try dev.waitForState(timeout: 30, "the error for \(width.prefix(20))") { errorText($0) != nil }
            let count = frames(failed)
            try dev.waitForState("frames while broken (\(index))") { frames($0) > count + 5 }
            XCTAssertTrue(dev.process.isRunning, dev.stderr)
            // Back to good before the next edit, so each error is fresh.
            try directory.save("sized.fs", Self.sizedShader(width: "$WIDTH/2.0"))
            try dev.waitForState("recovery (\(index))") { errorText($0) == nil }
        }
        // Far below Int's range: the pass is 1 pixel wide (at least 1), and that works.
        let reloads = try dev.json("/state")["reloads"] as? Int ?? 0
        try directory.save("sized.fs", Self.sizedShader(width: "-$WIDTH*1e300"))
        let reloaded = try dev.waitForState("the reload") { ($0["reloads"] as? Int ?? 0) > reloads }
        XCTAssertNil(errorText(reloaded))
        let count = frames(reloaded)
        try dev.waitForState("frames with a 1-pixel pass") { frames($0) > count + 5 }
    }
}
