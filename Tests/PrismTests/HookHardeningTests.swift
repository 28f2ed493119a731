import Foundation
import PrismCore
import PrismFilters
import XCTest

/// Hook files whose sizes or offsets are numbers no target can have, through the built tool: each is one
/// line at the hook file's line and nothing written (`run`), a refused value with the old graph running on
/// (`--control`), an error on the page with frames going on (`prism dev`). Before, 1e39, 1e400, 1e19, a
/// parameter of 1e20 and a COMPUTE block of Int.max trapped the process; `OFFSET nan nan` failed as
/// generated GLSL; a CRLF file was one "unknown stage" line.
final class HookHardeningTests: XCTestCase {
    let dir = ScratchDirectory()

    /// A MAIN pass whose directives are `directives` (lines 3 on), copying the picture.
    static func pass(_ directives: [String]) -> String {
        (["//!DESC sized", "//!HOOK MAIN", "//!BIND HOOKED"] + directives
            + ["vec4 hook() { return HOOKED_tex(HOOKED_pos); }", ""]).joined(separator: "\n")
    }

    /// A float parameter `scale` (no maximum) that sizes the pass: line 9 is WIDTH.
    static let scaled = """
        //!PARAM scale
        //!TYPE float
        //!MINIMUM 0
        1.0
        //!DESC scaled
        //!HOOK MAIN
        //!BIND HOOKED
        //!HEIGHT HOOKED.h
        //!WIDTH HOOKED.w scale *
        vec4 hook() { return HOOKED_tex(HOOKED_pos); }

        """

    func testSizesAndOffsetsNoTargetCanHaveAreOneLineAtTheirLine() throws {
        let cases: [(text: String, line: Int, words: [String])] = [
            (Self.pass(["//!WIDTH 1e39"]), 4, ["beyond single precision"]),
            (Self.pass(["//!HEIGHT 1e400"]), 4, ["beyond single precision"]),
            (Self.pass(["//!WIDTH 1e19"]), 4, ["outside 1...16384"]),
            (Self.pass(["//!WIDTH HOOKED.w", "//!HEIGHT 0 1e19 -"]), 5, ["outside 1...16384"]),
            (Self.scaled.replacingOccurrences(of: "\n1.0\n", with: "\n1e20\n"), 9, ["outside 1...16384"]),
            (Self.pass(["//!COMPUTE 9223372036854775807 2"]), 4, ["//!COMPUTE", "1...16384"]),
            (Self.pass(["//!COMPUTE 8 8 4096 4096"]), 4, ["//!COMPUTE", "threads per group"]),
            (Self.pass(["//!OFFSET nan nan"]), 4, ["//!OFFSET"]),
            (Self.pass(["//!OFFSET 1e300 0"]), 4, ["//!OFFSET"]),
        ]
        for (index, (text, line, words)) in cases.enumerated() {
            let hook = dir.path("h\(index).glsl"), out = dir.path("out\(index).mp4")
            try text.write(toFile: hook, atomically: true, encoding: .utf8)
            let run = try Tools.run(Tools.prism, ["run", "pattern", "--frames", "2", "--size", "64x48", "--filter", "'\(hook)'",
                                                  "-o", out], timeout: 60)
            let lines = run.stderrLines.filter { !$0.hasPrefix("prism: GPU") }
            XCTAssertNotEqual(run.status, 0, "case \(index)")
            XCTAssertEqual(lines.count, 1, "case \(index): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("h\(index).glsl:\(line):"), "case \(index) at line \(line): \(run.stderr)")
            for word in words { XCTAssertTrue(run.stderr.contains(word), "case \(index): \(run.stderr)") }
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "case \(index)")
        }
    }

    /// Windows line ends are line ends: the CRLF file renders what its LF twin renders.
    func testACRLFHookFileRunsAsItsLFTwin() throws {
        let text = Self.pass(["//!WIDTH HOOKED.w 2 /", "//!HEIGHT HOOKED.h 2 /"])
        let lf = dir.path("lf.glsl"), crlf = dir.path("crlf.glsl")
        try text.write(toFile: lf, atomically: true, encoding: .utf8)
        try text.replacingOccurrences(of: "\n", with: "\r\n").write(toFile: crlf, atomically: true, encoding: .utf8)
        var frames: [Data] = []
        for hook in [lf, crlf] {
            let run = try Tools.run(Tools.prism, ["run", "pattern", "--frames", "2", "--size", "64x48", "--filter", "'\(hook)'",
                                                  "-o", "-", "--quiet"], timeout: 60)
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.stdout.count, 2 * 64 * 48 * 4, run.stderr)
            frames.append(run.stdout)
        }
        XCTAssertEqual(frames[0], frames[1], "the CRLF file renders otherwise")
        // A CRLF file's errors name its lines as an editor counts them.
        let bad = dir.path("bad.glsl")
        try Self.pass(["//!WIDTH 1e39"]).replacingOccurrences(of: "\n", with: "\r\n").write(toFile: bad, atomically: true, encoding: .utf8)
        let run = try Tools.run(Tools.prism, ["run", "pattern", "--frames", "1", "--size", "64x48", "--filter", "'\(bad)'",
                                              "-o", dir.path("bad.mp4")], timeout: 60)
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("bad.glsl:4:"), run.stderr)
    }

    /// `{"set": {"scale": 1e20}}` on a run whose hook sizes a pass by `scale`: refused at the hook's line,
    /// the old values and program kept, the run going on to a clean end.
    /// A parameter given a value beyond its range (a live `set`, the dev page) is planned as the nearest value
    /// it can hold; before, 1e20 for a DEFINE or an int CONSTANT trapped converting it to Int.
    func testValuesBeyondAParametersRangeArePlannedWithinIt() throws {
        let text = """
            //!PARAM steps
            //!TYPE DEFINE
            //!MAXIMUM 9
            3
            //!PARAM taps
            //!TYPE CONSTANT int
            //!MINIMUM 1
            4
            //!PARAM gain
            //!TYPE CONSTANT float
            //!MINIMUM 0
            //!MAXIMUM 2
            1.0
            //!HOOK MAIN
            //!BIND HOOKED
            vec4 hook() { return HOOKED_tex(HOOKED_pos) * float(steps + taps) * gain; }

            """
        let file = try HookFile.parse(text: text, path: "/t/clamp.glsl")
        let size = Size(width: 16, height: 16)
        let cases: [(value: Double, defines: [String])] = [
            (1e20, ["#define steps 9\n", "#define taps 2147483647\n", "#define gain 2.0\n"]),
            (-1e300, ["#define steps -2147483648\n", "#define taps 1\n", "#define gain 0.0\n"]),
            (.nan, ["#define steps 3\n", "#define taps 4\n", "#define gain 1.0\n"]),
            (2.6, ["#define steps 3\n", "#define taps 3\n", "#define gain 2.0\n"]),
        ]
        for (value, defines) in cases {
            let plan = try HookPlan.make(files: [file], inputSize: size, outputSize: size,
                                         values: ["steps": value, "taps": value, "gain": value])
            let source = try XCTUnwrap(plan.steps.last?.main)
            for define in defines { XCTAssertTrue(source.contains(define), "\(value): \(define) in\n\(source)") }
        }
    }

    func testALiveParameterThatWouldSizeAPassBeyondRangeIsRefused() throws {
        let hook = dir.path("scaled.glsl")
        try Self.scaled.write(toFile: hook, atomically: true, encoding: .utf8)
        let run = try ControlTests.ControlledRun(["run", "pattern", "--size", "64x48", "--frames", "1000000", "--filter", "'\(hook)'",
                                                  "-o", "-", "--control", "stdin", "--quiet"])
        try run.waitForFrames(3)
        for value in ["1e20", "1e39", "1e300"] {
            let reply = try run.send(#"{"set": {"scale": \#(value)}}"#)
            XCTAssertEqual(reply["ok"] as? Bool, false, "\(value): \(reply)")
            let error = reply["error"] as? String ?? ""
            XCTAssertTrue(error.contains("scaled.glsl:9:"), "\(value): \(error)")
            XCTAssertTrue(error.contains("values kept"), "\(value): \(error)")
        }
        let count = run.frameCount
        try run.waitForFrames(count + 3)
        XCTAssertEqual(try run.send(#"{"set": {"scale": 0.5}}"#)["ok"] as? Bool, true)
        try run.waitForFrames(run.frameCount + 2)
        XCTAssertEqual(try run.send(#"{"quit": true}"#)["ok"] as? Bool, true)
        XCTAssertEqual(run.finish(), 0, run.stderr)
        XCTAssertEqual(run.byteCount % ControlTests.frameBytes, 0, "a frame was cut short")
    }

    /// `prism dev` on the hook: a huge value from the page, then a save with a huge WIDTH. Each is an error on
    /// the page at the hook's line; frames go on from the last good program; a good value recovers.
    func testDevKeepsTheLastGoodHookProgram() throws {
        let directory = try TemporaryDirectory()
        try Self.scaled.write(toFile: directory.file("scaled.glsl"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("scaled.glsl"), "--size", "160x90"])
        defer { dev.stop() }
        func frames(_ state: [String: Any]) -> Int { state["frames"] as? Int ?? 0 }
        func errorText(_ state: [String: Any]) -> String? { (state["error"] as? [String: Any])?["text"] as? String }
        try dev.waitForState("frames") { frames($0) > 2 && errorText($0) == nil }
        let huge = try dev.post("/param", ["name": "scale", "value": 1e20])
        XCTAssertTrue([200, 400].contains(huge.status), "\(huge.status) \(huge.text)")
        let reported = try dev.waitForState("the size error") { errorText($0) != nil }
        XCTAssertTrue(errorText(reported)?.contains("outside 1...16384") == true, "\(reported)")
        var count = frames(reported)
        try dev.waitForState("frames after the huge value") { frames($0) > count + 5 }
        XCTAssertTrue(dev.process.isRunning, dev.stderr)

        try directory.save("scaled.glsl", Self.scaled.replacingOccurrences(of: "HOOKED.w scale *", with: "1e39"))
        let saved = try dev.waitForState(timeout: 30, "the error of the saved file") { errorText($0)?.contains("single precision") == true }
        count = frames(saved)
        try dev.waitForState("frames after the bad save") { frames($0) > count + 5 }
        XCTAssertTrue(dev.process.isRunning, dev.stderr)
        try directory.save("scaled.glsl", Self.scaled)
        try dev.waitForState(timeout: 30, "recovery") { errorText($0) == nil }
    }
}
