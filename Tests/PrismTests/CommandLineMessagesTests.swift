import XCTest
import PrismCore
import PrismMedia

/// Issue 9, messages: errors say what is wrong with the user's input, in one line, with one exit status
/// for every mistake in what was typed (2), and nothing read from a file reaches the terminal raw.
final class CommandLineMessagesTests: XCTestCase {
    let dir = ScratchDirectory()

    private func assertUsageError(_ arguments: [String], mentioning expected: [String], stdin: Data? = nil,
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try Tools.run(Tools.prism, arguments, stdin: stdin)
        XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr, file: file, line: line)
        for word in expected {
            XCTAssertTrue(result.stderr.contains(word), "'\(result.stderr)' should mention \(word)", file: file, line: line)
        }
    }

    func testMistakesInWhatWasTypedExitWithTwo() throws {
        let out = dir.path("out.mp4")
        // Several -o are several outputs (issue 26); one place named twice is the mistake.
        try assertUsageError(["run", "--frames", "2", "-o", out, "-o", out], mentioning: ["given twice"])
        try assertUsageError(["run", "--frames", "2", "--crf", "20", "-o", out, "--crf", "30", "--crf", "31", "-o", dir.path("b.mp4")],
                             mentioning: ["--crf given twice"])
        try assertUsageError(["run", "--frames", "2", "-o", out, "--crf", "20", "--crf", "30"], mentioning: ["--crf given twice"])
        try assertUsageError(["render", Tools.fixture("chelsea.png"), "-o", dir.path("a.png"), "--quality", "0"], mentioning: ["--quality"])
        try assertUsageError(["run", "--frames", "2", "-o", out, "--crf", "99"], mentioning: ["--crf"])
        try assertUsageError(["run", "--frames", "2", "-o", out, "--filter", "pixellate(scale=0)"], mentioning: ["scale"])
        try assertUsageError(["run", "--frames", "2", "-o", out, "--filter", "invert, sparkle"], mentioning: ["sparkle"])
        try assertUsageError(["run", "--frames", "2", "-o", out, "--fps", "0.0000001"], mentioning: ["--fps", "0.0000001"])
        try assertUsageError(["run", "-", "--input-format", "64x48:yuv420p:0.0000001", "-o", out],
                             mentioning: ["frame rate", "0.0000001"], stdin: Data(count: 64 * 48 * 3 / 2))
        try assertUsageError(["bench", "--quick", "--json", "--json=1"], mentioning: ["--json takes no value"])
        try assertUsageError(["dev", "--port", "1", "--port", "2"], mentioning: ["--port given twice"])
        XCTAssertEqual(dir.contents(), [])
    }

    func testAnEncoderTooSmallForTheFrameSaysSo() throws {
        // FFV1 refuses a frame 1 pixel wide; FFmpeg's own words are "Function not implemented".
        let out = dir.path("thin.mkv")
        let result = try Tools.run(Tools.prism, ["run", "-", "--input-format", "1x16:rgba:25", "--codec", "ffv1", "-o", out, "--quiet"],
                                   stdin: Data(count: 16 * 4 * 2))
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertEqual(result.stderrLines, ["prism: \(out): ffv1 encodes frames of at least 2x1, not 1x16"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testFileContentsInAnErrorAreEscaped() throws {
        // A "LUT" whose first word is a terminal escape sequence (setting the window title).
        let evil = dir.path("evil.cube")
        try Data("\u{1B}]0;owned\u{07}TITLE 1\n".utf8).write(to: URL(fileURLWithPath: evil))
        let result = try Tools.run(Tools.prism, ["render", "--filter", "lut(file=\(evil))", Tools.fixture("chelsea.png"),
                                                 "-o", dir.path("x.png")])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertFalse(result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, result.stderr)
        XCTAssertTrue(result.stderr.contains("\\x1b]0;owned\\x07"), result.stderr)
    }

    func testHelpDescribesEveryOptionTheCommandTakes() throws {
        let run = try Tools.run(Tools.prism, ["run", "--help"])
        XCTAssertEqual(run.status, 0)
        let text = String(decoding: run.stdout, as: UTF8.self)
        for option in ["--threads N", "-o, --output OUTPUT", "--input-format WxH:PIXFMT:RATE", "--verbose, -v"] {
            XCTAssertTrue(text.contains(option), "\(option) missing from: \(text)")
        }
        XCTAssertFalse(text.contains("--switch-camera-after"), "test hooks stay out of the help")
        let render = String(decoding: try Tools.run(Tools.prism, ["render", "--help"]).stdout, as: UTF8.self)
        XCTAssertTrue(render.contains("--quality N"), render)
    }

    func testATruncatedMovieThatDecodesCleanlyIsReported() throws {
        // A faststart MP4 (index first) cut right after its 6th frame's data: it decodes cleanly, so the only
        // sign of the loss is the index announcing 50 frames.
        let whole = dir.path("front.mp4")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25:duration=2", "-c:v", "libx264",
                          "-preset", "ultrafast", "-movflags", "+faststart", whole])
        guard let ffprobe = Tools.which("ffprobe") else { throw UsageError("this test needs ffprobe") }
        let probe = try Tools.run(ffprobe, ["-v", "error", "-show_entries", "packet=pos,size", "-of", "csv=p=0", whole])
        // One "size,pos" line per packet, in file order.
        let packets = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",").compactMap { Int($0) } }
        XCTAssertEqual(packets.count, 50)
        let sixth = packets[5]
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = dir.path("cut.mp4")
        try data.prefix(sixth[0] + sixth[1]).write(to: URL(fileURLWithPath: cut))
        let out = dir.path("out.mkv")
        let result = try Tools.run(Tools.prism, ["run", cut, "-o", out, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderrLines, ["prism: warning: \(cut) ended after 6 of the 50 frames its header announces, at 0.24 s (truncated or damaged?)"])
        XCTAssertEqual(try MediaInspector.inspect(out).videoFrameCount, 6)
        // The whole file: no warning.
        let clean = try Tools.run(Tools.prism, ["run", whole, "-o", dir.path("whole.mkv"), "--quiet"])
        XCTAssertEqual(clean.status, 0)
        XCTAssertEqual(clean.stderr, "")
    }
}
