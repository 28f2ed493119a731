import Foundation
import XCTest
import PrismCore
import PrismMedia
#if canImport(Glibc)
import Glibc
#endif

/// One command and parameter suite, run against every way into the control plane: `prism run --control
/// stdin`, `POST /control` of `prism run --control PORT`, and `prism dev`'s page endpoints (`/param`,
/// `/camera`). The same commands get the same replies — the same `ok`, the same error text, the same node,
/// filter and typed values, the same HTTP status where there is one — and the same effects: the values
/// `/state` shows, the output's pixels against the CPU maths of the shader and `color`, and the values
/// carried over when the shader file is saved again.
final class ControlWaysTests: XCTestCase {
    static let size = (width: 64, height: 48)

    /// A red/green/blue shader with a float, a bool and a colour; `blue` is what a save changes.
    static func shader(blue: String) -> String {
        """
        /*{ "ISFVSN": "2", "INPUTS": [
          { "NAME": "inputImage", "TYPE": "image" },
          { "NAME": "amount", "TYPE": "float", "MIN": 0.0, "MAX": 1.0, "DEFAULT": 0.0 },
          { "NAME": "on", "TYPE": "bool", "DEFAULT": true },
          { "NAME": "tint", "TYPE": "color", "DEFAULT": [0.0, 0.0, 0.0, 1.0] } ] }*/
        void main() {
            gl_FragColor = on ? vec4(amount, tint.g, \(blue), 1.0) : vec4(0.0, 0.0, 1.0, 1.0);
        }
        """
    }

    /// One `set` in neutral form: the page's `/param` takes one parameter of one node (or of the first node
    /// that has it).
    struct Set {
        var node: Int?
        var name: String
        var value: Any
    }

    /// What a reply says, whichever way it came.
    struct Reply {
        var status: Int?
        var json: [String: Any]
        var ok: Bool? { json["ok"] as? Bool }
        var error: String? { json["error"] as? String }
    }

    /// A way in: sends commands, reads the published values and the newest output pixel.
    protocol Way: AnyObject {
        var name: String { get }
        func set(_ set: Set) throws -> Reply
        func camera(_ device: String) throws -> Reply
        /// node index → parameter name → value, as `/state` shows them.
        func values() throws -> [Int: [String: Any]]
        /// The centre pixel of an output frame rendered after everything sent so far.
        func pixel() throws -> [Int]
        /// Waits until a save of the shader has been reloaded.
        func waitForReload() throws
        func stop()
    }

    // MARK: The suite

    /// The same commands on all three ways; every way's replies and effects must equal the others'.
    func testTheSameCommandsGetTheSameRepliesAndEffectsOnEveryWay() throws {
        let directory = try TemporaryDirectory()
        let shader = directory.file("look.fs")
        try directory.save("look.fs", Self.shader(blue: "0.0"))
        let sets = [
            Set(node: 0, name: "amount", value: 1.0),
            Set(node: nil, name: "brightness", value: 0.1),                // the first node that has it: color
            Set(node: 0, name: "tint", value: "#00ff00"),                  // typed: [0, 1, 0, 1]
            Set(node: 1, name: "sparkle", value: 1),                       // no such parameter
            Set(node: 0, name: "amount", value: 2.0),                      // out of range
            Set(node: 0, name: "amount", value: "x"),                      // wrong type
            Set(node: 0, name: "on", value: 1),                            // a bool takes true or false
            Set(node: 7, name: "amount", value: 1.0),                      // no such node
            Set(node: nil, name: "nosuch", value: 1),                      // no node has it
        ]
        var replies: [String: [Reply]] = [:]
        var cameras: [String: Reply] = [:]
        var values: [String: [Int: [String: Any]]] = [:]
        var pixels: [String: [Int]] = [:]
        var reloaded: [String: (values: [Int: [String: Any]], pixel: [Int])] = [:]
        let ways: [() throws -> any Way] = [
            { try RunWay(shader: shader, stdin: true) },
            { try RunWay(shader: shader, stdin: false) },
            { try PageWay(shader: shader) },
        ]
        for makeWay in ways {
            try directory.save("look.fs", Self.shader(blue: "0.0"))
            let way = try makeWay()
            defer { way.stop() }
            replies[way.name] = try sets.map { try way.set($0) }
            cameras[way.name] = try way.camera("/dev/video0")
            values[way.name] = try way.values()
            pixels[way.name] = try way.pixel()
            try directory.save("look.fs", Self.shader(blue: "0.5"))
            try way.waitForReload()
            reloaded[way.name] = (try way.values(), try way.pixel())
        }
        let names = ["stdin", "POST /control", "dev page"]
        XCTAssertEqual(Swift.Set(replies.keys), Swift.Set(names))

        // Replies: the same outcome, error text, node, filter and typed values on every way.
        for (index, set) in sets.enumerated() {
            let first = try XCTUnwrap(replies["stdin"]?[index])
            for name in names.dropFirst() {
                let other = try XCTUnwrap(replies[name]?[index])
                let what = "\(set.name) on \(set.node.map(String.init) ?? "any node") by \(name): \(other.json) vs stdin's \(first.json)"
                XCTAssertEqual(other.ok, first.ok, what)
                XCTAssertEqual(other.error, first.error, what)
                for key in ["node", "filter"] { XCTAssertEqual(other.json[key] as? AnyHashable, first.json[key] as? AnyHashable, what) }
                XCTAssertEqual(other.json["values"] as? NSDictionary, first.json["values"] as? NSDictionary, what)
            }
            XCTAssertEqual(replies["POST /control"]?[index].status, replies["dev page"]?[index].status, set.name)
        }
        let oks = try XCTUnwrap(replies["stdin"]).map { $0.ok }
        XCTAssertEqual(oks, [true, true, true, false, false, false, false, false, false], "\(replies["stdin"]!.map(\.json))")
        XCTAssertEqual(replies["stdin"]?[0].json["filter"] as? String, "look.fs")
        XCTAssertEqual(replies["stdin"]?[1].json["node"] as? Int, 1)
        XCTAssertEqual(replies["stdin"]?[1].json["filter"] as? String, "color")
        XCTAssertEqual((replies["stdin"]?[2].json["values"] as? [String: Any])?["tint"] as? [Double], [0, 1, 0, 1])
        XCTAssert(replies["stdin"]?[3].error?.contains("no parameter 'sparkle'") == true)
        XCTAssert(replies["stdin"]?[7].error?.contains("no node 7") == true)
        XCTAssertEqual(replies["dev page"]?[3].status, 400)
        // The page's own fields are still there.
        XCTAssertEqual(replies["dev page"]?[2].json["name"] as? String, "tint")
        XCTAssertEqual(replies["dev page"]?[2].json["value"] as? [Double], [0, 1, 0, 1])

        // A camera switch without a camera: the same refusal everywhere.
        for name in names {
            XCTAssertEqual(cameras[name]?.ok, false, name)
            XCTAssertEqual(cameras[name]?.error, cameras["stdin"]?.error, name)
        }
        XCTAssertEqual(cameras["POST /control"]?.status, 409)
        XCTAssertEqual(cameras["dev page"]?.status, 409)

        // Effects: the values published, and the pixels (shader: amount, tint.g, 0; then color +0.1).
        for name in names {
            let published = try XCTUnwrap(values[name], name)
            XCTAssertEqual(published[0]?["amount"] as? Double, 1, "\(name): \(published)")
            XCTAssertEqual(published[0]?["tint"] as? [Double], [0, 1, 0, 1], "\(name): \(published)")
            XCTAssertEqual(published[1]?["brightness"] as? Double, 0.1, "\(name): \(published)")
            try assertPixel(pixels[name], [255, 255, 26], "\(name) after the sets")
            // A save reloads the shader and keeps the values set (blue is now 0.5 + 0.1).
            let after = try XCTUnwrap(reloaded[name], name)
            XCTAssertEqual(after.values[0]?["amount"] as? Double, 1, "\(name) after the reload: \(after.values)")
            XCTAssertEqual(after.values[1]?["brightness"] as? Double, 0.1, "\(name) after the reload: \(after.values)")
            try assertPixel(after.pixel, [255, 255, 153], "\(name) after the reload")
        }
    }

    private func assertPixel(_ pixel: [Int]?, _ expected: [Int], _ what: String) throws {
        let pixel = try XCTUnwrap(pixel, what)
        for channel in 0..<3 { XCTAssertLessThanOrEqual(abs(pixel[channel] - expected[channel]), 3, "\(what): \(pixel) vs \(expected)") }
    }

    // MARK: The ways

    /// `prism run pattern … -o -` (not quiet: reloads are said) with `--control stdin,0 --watch` (commands on stdin, `/state` on the port)
    /// or `--control 0 --watch` (commands as `POST /control`); its frames are read as they come (`ControlTests.ControlledRun`).
    final class RunWay: Way, @unchecked Sendable {
        let name: String
        private let stdin: Bool
        private let run: ControlTests.ControlledRun
        private var port = 0, token = ""

        init(shader: String, stdin: Bool) throws {
            self.stdin = stdin
            name = stdin ? "stdin" : "POST /control"
            run = try ControlTests.ControlledRun(["run", "pattern", "--size", "\(size.width)x\(size.height)", "--frames", "1000000",
                                                  "--filter", "\"\(shader)\", color", "-o", "-", "--watch",
                                                  "--control", stdin ? "stdin,0" : "0"])
            let line = try waitForLine(containing: "control at http://")
            let url = try XCTUnwrap(line.range(of: #"127\.0\.0\.1:\d+/control\?token=[0-9a-f]+"#, options: .regularExpression)
                .map { String(line[$0]) })
            port = Int(url.split(separator: ":")[1].split(separator: "/")[0])!
            token = String(url.split(separator: "=")[1])
            try run.waitForFrames(3)
        }

        private func waitForLine(containing text: String, after count: Int = 0) throws -> String {
            let deadline = Date(timeIntervalSinceNow: 60)
            while Date() < deadline {
                let lines = run.stderr.split(separator: "\n").filter { $0.contains(text) }
                if lines.count > count { return String(lines[count]) }
                guard run.process.isRunning else { break }
                usleep(10_000)
            }
            throw DevProcessError(message: "no '\(text)' on stderr:\n\(run.stderr)")
        }

        private func send(_ command: [String: Any]) throws -> Reply {
            let body = try JSONSerialization.data(withJSONObject: command)
            guard stdin else {
                let reply = try post("/control?token=\(token)", body: [UInt8](body))
                return Reply(status: reply.status, json: (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any] ?? [:])
            }
            return Reply(status: nil, json: try run.send(String(decoding: body, as: UTF8.self)))
        }

        private func post(_ path: String, body: [UInt8]) throws -> HTTPReply {
            try HTTPReply.fetch(port: port, raw: DevProcess.requestText("POST", path, body: body, host: "127.0.0.1:\(port)"))
        }

        func set(_ set: Set) throws -> Reply {
            var arguments: [String: Any] = [set.name: set.value]
            if let node = set.node { arguments["node"] = node }
            return try send(["set": arguments])
        }

        func camera(_ device: String) throws -> Reply { try send(["camera": device]) }

        func values() throws -> [Int: [String: Any]] {
            let reply = try HTTPReply.fetch(port: port, raw: DevProcess.requestText("GET", "/state?token=\(token)", body: nil,
                                                                                     host: "127.0.0.1:\(port)"))
            let state = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any], reply.text)
            var values: [Int: [String: Any]] = [:]
            for node in state["nodes"] as? [[String: Any]] ?? [] {
                values[node["index"] as? Int ?? -1] = node["parameters"] as? [String: Any] ?? [:]
            }
            return values
        }

        func pixel() throws -> [Int] {
            try run.waitForFrames(run.frameCount + 5)
            let frame = run.frame(run.frameCount - 1)
            let at = ((size.height / 2) * size.width + size.width / 2) * 4
            return frame[at..<(at + 3)].map(Int.init)
        }

        func waitForReload() throws {
            _ = try waitForLine(containing: "prism: reload")
            XCTAssertFalse(run.stderr.contains("reload failed"), run.stderr)
        }

        func stop() {
            if run.process.isRunning { run.process.terminate() }
            _ = run.finish()
        }
    }

    /// `prism dev SHADER --filter color` and its page's endpoints.
    final class PageWay: Way {
        let name = "dev page"
        private let dev: DevProcess

        init(shader: String) throws {
            dev = try DevProcess(arguments: [shader, "--filter", "color", "--size", "\(size.width)x\(size.height)"])
            _ = try dev.waitForState("frames") { ($0["frames"] as? Int ?? 0) > 2 }
        }

        private func reply(_ reply: HTTPReply) -> Reply {
            Reply(status: reply.status, json: (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any] ?? [:])
        }

        func set(_ set: Set) throws -> Reply {
            var body: [String: Any] = ["name": set.name, "value": set.value]
            if let node = set.node { body["node"] = node }
            return reply(try dev.post("/param", body))
        }

        func camera(_ device: String) throws -> Reply { reply(try dev.post("/camera", ["device": device])) }

        func values() throws -> [Int: [String: Any]] {
            var values: [Int: [String: Any]] = [:]
            for parameter in try dev.json("/state")["parameters"] as? [[String: Any]] ?? [] {
                values[parameter["node"] as? Int ?? -1, default: [:]][parameter["name"] as? String ?? ""] = parameter["value"]
            }
            return values
        }

        func pixel() throws -> [Int] {
            let frames = try dev.json("/state")["frames"] as? Int ?? 0
            _ = try dev.waitForState("frames after the commands") { ($0["frames"] as? Int ?? 0) > frames + 5 }
            let image = try dev.snapshot()
            let p = image.pixel(x: image.size.width / 2, y: image.size.height / 2)
            return [Int(p.r), Int(p.g), Int(p.b)]
        }

        func waitForReload() throws {
            let state = try dev.waitForState(timeout: 60, "the reload") { ($0["reloads"] as? Int ?? 0) >= 1 || $0["error"] is [String: Any] }
            XCTAssert(state["error"] is NSNull, "\(state)")
        }

        func stop() { dev.stop() }
    }
}
