import Foundation
import Synchronization
import XCTest
@testable import Prism
import PrismCore
import PrismMedia
#if canImport(Glibc)
import Glibc
#endif

/// The live control channel of `prism run` and `prism record` (`--control stdin|PORT`, `--watch`), end
/// to end on the built tool: a command's reply names the frame it takes effect from, and the raw frames
/// written are decoded and checked against a reference run of the same input — unchanged before that
/// frame, changed as the CPU maths of the command says from it on.
final class ControlTests: XCTestCase {
    let dir = ScratchDirectory()
    static let size = (width: 64, height: 48)
    static var frameBytes: Int { size.width * size.height * 4 }

    /// A `prism run … -o -` whose raw RGBA frames are read as they come (so the run never waits for the
    /// test), with its stdin for commands and its stderr collected line by line.
    final class ControlledRun: @unchecked Sendable {
        let process = Process()
        private let input = Pipe(), output = Pipe(), errors = Pipe()
        private let lock = NSLock()
        private var frameData = Data()
        private var errorText = ""
        private let outputDone = DispatchSemaphore(value: 0)

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: Tools.prism)
            process.arguments = arguments
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                self.lock.withLock { self.errorText += String(decoding: data, as: UTF8.self) }
            }
            try process.run()
            let reading = output.fileHandleForReading
            Thread.detachNewThread { [self] in
                while true {
                    let data = reading.availableData
                    if data.isEmpty { break }
                    lock.withLock { frameData.append(data) }
                }
                outputDone.signal()
            }
        }

        deinit { if process.isRunning { process.terminate() } }

        var stderr: String { lock.withLock { errorText } }
        var frameCount: Int { byteCount / ControlTests.frameBytes }
        var byteCount: Int { lock.withLock { frameData.count } }

        /// Frame `index`'s RGBA bytes.
        func frame(_ index: Int) -> [UInt8] {
            lock.withLock { Array(frameData[(index * ControlTests.frameBytes)..<((index + 1) * ControlTests.frameBytes)]) }
        }

        func waitForFrames(_ count: Int, timeout: Double = 60) throws {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while frameCount < count {
                guard Date() < deadline, process.isRunning else {
                    throw DevProcessError(message: "waited for \(count) frames, got \(frameCount); stderr:\n\(stderr)")
                }
                usleep(10_000)
            }
        }

        /// The JSON lines on stderr (replies, with `-o -`), in order.
        var replies: [[String: Any]] {
            stderr.split(separator: "\n").compactMap { line in
                guard line.hasPrefix("{") else { return nil }
                return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }
        }

        /// Sends one command line and waits for its reply (the next JSON line on stderr).
        @discardableResult
        func send(_ line: String, timeout: Double = 60) throws -> [String: Any] {
            let before = replies.count
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
            let deadline = Date(timeIntervalSinceNow: timeout)
            while Date() < deadline {
                let all = replies
                if all.count > before { return all[before] }
                usleep(10_000)
            }
            throw DevProcessError(message: "no reply to \(line); stderr:\n\(stderr)")
        }

        /// Waits for the exit (after `quit`) and for the last frames.
        func finish(timeout: Double = 60) -> Int32 {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            _ = outputDone.wait(timeout: .now() + 10)
            errors.fileHandleForReading.readabilityHandler = nil
            return process.terminationStatus
        }
    }

    /// The pattern's first `count` frames through `filter` as a plain run writes them (the reference).
    private func reference(filter: String, count: Int) throws -> [[UInt8]] {
        let result = try Tools.run(Tools.prism, ["run", "pattern", "--size", "\(Self.size.width)x\(Self.size.height)",
                                                 "--frames", String(count), "--filter", filter, "-o", "-", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let bytes = [UInt8](result.stdout)
        XCTAssertEqual(bytes.count, count * Self.frameBytes)
        return (0..<count).map { Array(bytes[($0 * Self.frameBytes)..<(($0 + 1) * Self.frameBytes)]) }
    }

    private func endlessRun(filter: String, extra: [String] = []) throws -> ControlledRun {
        try ControlledRun(["run", "pattern", "--size", "\(Self.size.width)x\(Self.size.height)", "--frames", "1000000",
                           "--filter", filter, "-o", "-", "--control", "stdin"] + extra)
    }

    /// The largest difference, over R, G and B of every pixel, between `frame` and `expected(reference pixel)`.
    private func largestError(_ frame: [UInt8], _ reference: [UInt8], _ expected: (Double) -> Double) -> Double {
        var worst = 0.0
        for index in stride(from: 0, to: frame.count, by: 4) {
            for channel in 0..<3 {
                worst = max(worst, abs(Double(frame[index + channel]) - expected(Double(reference[index + channel]))))
            }
        }
        return worst
    }

    func testParameterSetMidRunChangesFramesFromTheRepliedFrameOn() throws {
        let run = try endlessRun(filter: "color", extra: ["--quiet"])
        try run.waitForFrames(5)
        let reply = try run.send(#"{"set": {"node": "color", "brightness": 0.25}}"#)
        XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
        let from = try XCTUnwrap(reply["frame"] as? Int, "\(reply)")
        XCTAssertGreaterThanOrEqual(from, 5, "frames were read before the command was sent")
        XCTAssertEqual(reply["filter"] as? String, "color")
        try run.waitForFrames(from + 4)
        XCTAssertEqual(try run.send(#"{"quit": true}"#)["ok"] as? Bool, true)
        XCTAssertEqual(run.finish(), 0, run.stderr)
        let reference = try reference(filter: "color", count: from + 4)
        for index in 0..<from { XCTAssertEqual(run.frame(index), reference[index], "frame \(index), before the set, changed") }
        // color's maths: rgb' = (mix(luma, rgb, 1) - 0.5) * 1 + 0.5 + brightness = rgb + 0.25, clamped.
        for index in from..<(from + 4) {
            let error = largestError(run.frame(index), reference[index]) { min(255, $0 + 0.25 * 255) }
            XCTAssertLessThanOrEqual(error, 3, "frame \(index), after the set, is not the reference brightened by 0.25")
        }
        XCTAssertNotEqual(run.frame(from), reference[from])
    }

    func testGraphSwapBetweenFramesAndABadGraphKeepsTheOldOne() throws {
        let run = try endlessRun(filter: "mono", extra: ["--quiet"])
        try run.waitForFrames(3)
        // Bad input first: none of it stops the run or drops a frame.
        let notJSON = try run.send("sparkle please")
        XCTAssertEqual(notJSON["ok"] as? Bool, false)
        XCTAssert((notJSON["error"] as? String ?? "").contains("not JSON"), "\(notJSON)")
        let unknown = try run.send(#"{"graph": "invert, nosuchfilter"}"#)
        XCTAssertEqual(unknown["ok"] as? Bool, false)
        XCTAssert((unknown["error"] as? String ?? "").contains("nosuchfilter"), "\(unknown)")
        let reply = try run.send(#"{"graph": "invert"}"#)
        XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
        let from = try XCTUnwrap(reply["frame"] as? Int)
        try run.waitForFrames(from + 4)
        try run.send(#"{"quit": true}"#)
        XCTAssertEqual(run.finish(), 0, run.stderr)
        let mono = try reference(filter: "mono", count: from + 4)
        let plain = try reference(filter: "", count: from + 4)
        for index in 0..<from { XCTAssertEqual(run.frame(index), mono[index], "frame \(index), before the swap, is not mono's") }
        for index in from..<(from + 4) {
            // invert's maths: rgb' = 1 - rgb, on the unfiltered pattern.
            XCTAssertLessThanOrEqual(largestError(run.frame(index), plain[index]) { 255 - $0 }, 2, "frame \(index) is not inverted")
        }
        XCTAssertEqual(run.byteCount % Self.frameBytes, 0, "a frame was cut short")
    }

    func testShaderEditWithWatchRecompilesAndABrokenEditKeepsTheLastGoodOne() throws {
        let shader = dir.path("look.fs")
        func save(_ body: String) throws {
            let text = """
                /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ] }*/
                void main() {
                \(body)
                }
                """
            try text.write(toFile: shader, atomically: true, encoding: .utf8)
        }
        try save("    gl_FragColor = IMG_THIS_PIXEL(inputImage);")
        // The reference runs a copy of the shader as first saved.
        let original = dir.path("original.fs")
        try FileManager.default.copyItem(atPath: shader, toPath: original)
        let run = try endlessRun(filter: shader, extra: ["--watch"])
        try run.waitForFrames(3)
        try save("    gl_FragColor = vec4(1.0, 0.0, 0.0, 1.0);")
        let reloaded = try waitForLine(in: run, containing: "prism: reloaded")
        let json = try XCTUnwrap(reloaded.range(of: "{").map { String(reloaded[$0.lowerBound...]) })
        let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let from = try XCTUnwrap(reply["frame"] as? Int, reloaded)
        try run.waitForFrames(from + 3)
        try save("    gl_FragColor = vec4(0.0, 1.0, 0.0, 1.0) +;")
        _ = try waitForLine(in: run, containing: "reload failed")
        let broken = run.frameCount
        try run.waitForFrames(broken + 3)
        try run.send(#"{"quit": true}"#)
        XCTAssertEqual(run.finish(), 0, run.stderr)
        let unedited = try reference(filter: original, count: from)
        for index in 0..<from { XCTAssertEqual(run.frame(index), unedited[index], "frame \(index), before the edit, changed") }
        for index in from..<run.frameCount {
            let frame = run.frame(index)
            XCTAssertEqual(Array(frame[0..<4]), [255, 0, 0, 255], "frame \(index): the edited shader (red), or after a broken edit the last good one")
            XCTAssertEqual(Array(frame[(frame.count - 4)...]), [255, 0, 0, 255], "frame \(index)")
        }
    }

    private func waitForLine(in run: ControlledRun, containing text: String, timeout: Double = 60) throws -> String {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if let line = run.stderr.split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
            if !run.process.isRunning { break }
            usleep(20_000)
        }
        throw DevProcessError(message: "no '\(text)' on stderr:\n\(run.stderr)")
    }

    /// Commands that are wrong, or do not apply to `run`, are one JSON line each on stdout (no frames
    /// there with a movie output); the movie is finished and whole when `quit` ends the run.
    func testBadCommandsOnStdinAreOneJSONLineAndTheMovieIsIntact() throws {
        let movie = dir.path("out.mp4")
        let snapshot = dir.path("still.png")
        let existing = dir.path("taken.png")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: existing))
        let commands = [
            "{\"set\": {\"brightness\": 0.1",                      // not JSON
            #"{"set": {"node": "color", "sparkle": 1}}"#,           // no such parameter
            #"{"set": {"node": "vignette", "amount": 0.3}}"#,       // no such node
            #"{"set": {"node": 0, "brightness": "bright"}}"#,       // wrong type
            #"{"record": "start"}"#,                                // run has one output
            #"{"camera": "/dev/video0"}"#,                          // not a camera
            "{\"snapshot\": \"\(movie)\"}",                         // the output (and not a still)
            "{\"snapshot\": \"\(existing)\"}",                      // an existing file
            #"{"set": {"node": "color", "brightness": 0.1}}"#,
            "{\"snapshot\": \"\(snapshot)\"}",
        ]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["run", "pattern", "--size", "64x48", "--frames", "1000000", "--filter", "color", "--preset", "ultrafast",
                             "-o", movie, "--control", "stdin", "--quiet"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let lines = LineCollector(output.fileHandleForReading)
        for (number, command) in commands.enumerated() {
            input.fileHandleForWriting.write(Data((command + "\n").utf8))
            try lines.wait(for: number + 1)
        }
        input.fileHandleForWriting.write(Data("{\"quit\": true}\n".utf8))
        try lines.wait(for: commands.count + 1)
        process.waitUntilExit()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, log)
        let replies = try lines.all.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], $0) }
        XCTAssertEqual(replies.count, commands.count + 1, "\(lines.all)")
        for (index, reply) in replies.prefix(8).enumerated() {
            XCTAssertEqual(reply["ok"] as? Bool, false, "\(commands[index]) → \(reply)")
            XCTAssertFalse((reply["error"] as? String ?? "").isEmpty)
        }
        let errorsSaid = replies.prefix(8).map { $0["error"] as? String ?? "" }
        XCTAssert(errorsSaid[0].hasPrefix("not JSON"), errorsSaid[0])
        XCTAssert(errorsSaid[1].contains("no parameter 'sparkle'"), errorsSaid[1])
        XCTAssert(errorsSaid[2].contains("no node named 'vignette'"), errorsSaid[2])
        XCTAssert(errorsSaid[4].contains("one output"), errorsSaid[4])
        XCTAssert(errorsSaid[6].contains(".png"), errorsSaid[6])
        XCTAssert(errorsSaid[7].contains("exists"), errorsSaid[7])
        XCTAssertEqual(replies[8]["ok"] as? Bool, true, "\(replies[8])")
        XCTAssertEqual(replies[9]["ok"] as? Bool, true, "\(replies[9])")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: existing)), Data([1, 2, 3]), "an existing file was replaced")
        XCTAssertEqual(try ImageFile.read(path: snapshot).size, Size(width: 64, height: 48))
        let report = try MediaInspector.inspect(movie)
        XCTAssertGreaterThan(report.videoFrameCount, 0)
        XCTAssertEqual(report.size, Size(width: 64, height: 48))
    }

    func testControlPortHasDevsGateAndAnswersInJSON() throws {
        let movie = dir.path("out.mp4")
        let run = try ControlledRun(["run", "pattern", "--size", "64x48", "--frames", "1000000", "--filter", "mono[look]; [look]color",
                                     "--preset", "ultrafast", "-o", movie, "--control", "0"])
        let line = try waitForLine(in: run, containing: "control at http://")
        let url = try XCTUnwrap(line.range(of: #"127\.0\.0\.1:\d+/control\?token=[0-9a-f]+"#, options: .regularExpression).map { String(line[$0]) })
        let port = Int(url.split(separator: ":")[1].split(separator: "/")[0])!
        let token = String(url.split(separator: "=")[1])
        let host = "Host: 127.0.0.1:\(port)"
        func post(_ body: String, path: String = "/control?token=\(token)", headers: [String] = [],
                  type: String? = "application/json", hostHeader: String? = nil) throws -> HTTPReply {
            var head = "POST \(path) HTTP/1.1\r\n\(hostHeader ?? host)\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n"
            if let type { head += "Content-Type: \(type)\r\n" }
            for header in headers { head += header + "\r\n" }
            return try HTTPReply.fetch(port: port, raw: Array((head + "\r\n" + body).utf8))
        }
        func json(_ reply: HTTPReply) -> [String: Any] {
            ((try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any]) ?? [:]
        }
        let set = #"{"set": {"node": "color", "brightness": 0.1}}"#
        XCTAssertEqual(try post(set, path: "/control").status, 403, "no token")
        XCTAssertEqual(try post(set, path: "/control?token=0123").status, 403, "a wrong token")
        XCTAssertEqual(try post(set, hostHeader: "Host: attacker.example:\(port)").status, 403, "DNS rebinding")
        XCTAssertEqual(try post(set, headers: ["Origin: http://attacker.example"]).status, 403, "another page")
        XCTAssertEqual(try post(set, type: "text/plain").status, 415, "not typed JSON")
        let notJSON = try post("brightness=1")
        XCTAssertEqual(notJSON.status, 400)
        XCTAssertEqual(json(notJSON)["ok"] as? Bool, false, notJSON.text)
        let unknown = try post(#"{"set": {"node": "color", "sparkle": 1}}"#)
        XCTAssertEqual(unknown.status, 400)
        XCTAssert((json(unknown)["error"] as? String ?? "").contains("no parameter 'sparkle'"), unknown.text)
        let ok = try post(set)
        XCTAssertEqual(ok.status, 200, ok.text)
        XCTAssertEqual(json(ok)["ok"] as? Bool, true)
        // By label, and with the token as the cookie instead.
        let byLabel = try post(#"{"set": {"node": "look", "amount": 0.5}}"#, path: "/control",
                               headers: ["Cookie: prism-token-\(port)=\(token)"])
        XCTAssertEqual(byLabel.status, 400, "mono takes no amount: \(byLabel.text)")
        XCTAssert((json(byLabel)["error"] as? String ?? "").hasPrefix("mono"), byLabel.text)
        XCTAssertEqual(try post(#"{"record": "start"}"#).status, 409)
        let state = try HTTPReply.fetch(port: port, raw: DevProcess.requestText("GET", "/state?token=\(token)", body: nil,
                                                                                 host: "127.0.0.1:\(port)"))
        XCTAssertEqual(state.status, 200, state.text)
        let nodes = json(state)["nodes"] as? [[String: Any]] ?? []
        XCTAssertEqual(nodes.map { $0["filter"] as? String }, ["mono", "color"], state.text)
        XCTAssertEqual(nodes.first?["label"] as? String, "look")
        XCTAssertEqual((nodes.last?["parameters"] as? [String: Any])?["brightness"] as? Double, 0.1)
        XCTAssertEqual(try post(#"{"quit": true}"#).status, 200)
        XCTAssertEqual(run.finish(), 0, run.stderr)
        XCTAssertGreaterThan(try MediaInspector.inspect(movie).videoFrameCount, 0)
    }

    func testControlStdinIsRefusedWithRawInputOnStdin() throws {
        let result = try Tools.run(Tools.prism, ["run", "-", "--input-format", "64x48:rgba:25", "-o", dir.path("x.mp4"),
                                                 "--control", "stdin"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssert(result.stderr.contains("--control stdin"), result.stderr)
    }

    /// `prism record` takes the JSON commands on stdin beside its plain words, in order.
    func testRecordTakesJSONCommandsBesideItsWords() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["record", dir.url.path, "--size", "160x120", "--preset", "ultrafast", "--filter", "color"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let lines = LineCollector(output.fileHandleForReading)
        let photo = dir.path("look.jpg")
        let commands = [#"{"record": "start"}"#, #"{"set": {"brightness": 0.2}}"#, "{\"snapshot\": \"\(photo)\"}",
                        #"{"set": {"node": "color", "sparkle": 2}}"#, #"{"record": "stop"}"#]
        for (number, command) in commands.enumerated() {
            input.fileHandleForWriting.write(Data((command + "\n").utf8))
            try lines.wait(for: number + 1)
            Thread.sleep(forTimeInterval: 0.3)
        }
        input.fileHandleForWriting.write(Data("start\n".utf8))  // the plain words still work
        Thread.sleep(forTimeInterval: 0.5)
        input.fileHandleForWriting.write(Data("{\"quit\": true}\n".utf8))
        try lines.wait(for: commands.count + 1)
        let deadline = Date(timeIntervalSinceNow: 30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, log)
        let oks = try lines.all.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])["ok"] as? Bool }
        XCTAssertEqual(oks, [true, true, true, false, true, true], "\(lines.all)\n\(log)")
        let takes = dir.contents().filter { $0.hasPrefix("take-") && $0.hasSuffix(".mp4") }
        XCTAssertEqual(takes.count, 2, "\(dir.contents())\n\(log)")
        XCTAssertEqual(try ImageFile.read(path: photo).size, Size(width: 160, height: 120))
    }
}

/// The command model under the seeded mutation fuzzer: whatever a line holds, it decodes to a command or
/// to one error line (bounded, no terminal escapes), never a crash.
final class ControlCommandFuzzTests: XCTestCase {
    static let corpus = [#"{"set": {"node": "vignette", "amount": 0.3}}"#, #"{"set": {"node": 2, "color": [1, 0, 0.5, 1]}}"#,
                         #"{"graph": "invert, mono"}"#, #"{"reload": true}"#, #"{"camera": "/dev/video2"}"#,
                         #"{"snapshot": "a.png"}"#, #"{"snapshot": true}"#, #"{"record": "start"}"#, #"{"quit": true}"#]
    static let dictionary = ["{", "}", "[", "]", ":", ",", "\"", "\\u0000", "\u{1B}[31m", "null", "true", "1e999", "-0", "set",
                             "node", "graph", "record", "quit", String(repeating: "z", count: 200)]

    func testCommandsDecodeOrAreOneBoundedErrorLine() throws {
        var commands = 0
        let tried = Fuzzer(corpus: Self.corpus, dictionary: Self.dictionary).run("control-command") { text in
            do {
                _ = try ControlCommand(json: Array(text.utf8))
                commands += 1
            } catch let error as ControlError {
                let line = error.json
                XCTAssertFalse(line.contains("\n"), line)
                XCTAssertLessThan(error.description.count, 400, error.description)
                XCTAssertFalse(error.description.contains("\u{1B}"), error.description)
                XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(line.utf8)), line)
            } catch {
                XCTFail("not a ControlError: \(error)")
            }
        }
        XCTAssertGreaterThan(commands, 3)
        print("fuzz control commands: \(tried) inputs, \(commands) commands")
    }

    func testTheCommandTable() throws {
        XCTAssertEqual(try ControlCommand(json: Array(#"{"set": {"node": "look", "amount": 0.3}}"#.utf8)),
                       .set(node: .name("look"), values: ["amount": .number(0.3)]))
        XCTAssertEqual(try ControlCommand(json: Array(#"{"set": {"node": 1, "amount": 1}}"#.utf8)),
                       .set(node: .index(1), values: ["amount": .number(1)]))
        XCTAssertEqual(try ControlCommand(json: Array(#"{"graph": "invert"}"#.utf8)), .graph("invert"))
        XCTAssertEqual(try ControlCommand(json: Array(#"{"camera": "v4l2:/dev/video3"}"#.utf8)), .camera("/dev/video3"))
        XCTAssertEqual(try ControlCommand(json: Array(#"{"snapshot": true}"#.utf8)), .snapshot(nil))
        XCTAssertEqual(try ControlCommand(json: Array(#"{"record": "stop"}"#.utf8)), .record(start: false))
        for bad in [#"{"set": {"node": -1, "a": 1}}"#, #"{"set": {"node": "x"}}"#, #"{"graph": 3}"#, #"{"record": "pause"}"#,
                    #"{"quit": false}"#, #"{"reload": true, "quit": true}"#, "quit", ""] {
            XCTAssertThrowsError(try ControlCommand(json: Array(bad.utf8)), bad)
        }
    }
}

/// Lines from a pipe, collected on a thread of their own.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                lock.withLock { text += String(decoding: data, as: UTF8.self) }
            }
        }
    }

    var all: [String] { lock.withLock { text }.split(separator: "\n").map(String.init) }

    func wait(for count: Int, timeout: Double = 60) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while all.count < count {
            guard Date() < deadline else { throw DevProcessError(message: "waited for \(count) lines, got \(all)") }
            usleep(10_000)
        }
    }
}
