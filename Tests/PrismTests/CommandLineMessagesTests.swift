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
        // Several -o are several outputs; one place named twice is the mistake.
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
        guard let ffprobe = Tools.which("ffprobe") else { throw InvalidRequest("this test needs ffprobe") }
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

/// The command line as a product: near misses suggested, one exit status per kind of mistake, choices listed from
/// the parser's own tables, completions and a man page from the same tables.
final class CommandLineProductTests: XCTestCase {
    let dir = ScratchDirectory()

    func testNearMissesOfCommandsFlagsAndCodecsAreSuggested() throws {
        let out = dir.path("out.mp4")
        let cases: [([String], String)] = [
            (["runn"], "prism: unknown command 'runn'; did you mean 'run'? (prism --help lists them)"),
            (["rendr", "x.png"], "prism: unknown command 'rendr'; did you mean 'render'? (prism --help lists them)"),
            (["run", "--fillter", "invert", "-o", out], "prism: unknown option --fillter for run; did you mean '--filter'? (prism run --help lists them)"),
            (["bench", "--quik"], "prism: unknown option --quik for bench; did you mean '--quick'? (prism bench --help lists them)"),
            (["run", "-o", out, "--codec", "vp9"], "prism: --codec takes h264, hevc, ffv1, prores or av1, not 'vp9'"),
        ]
        for (arguments, line) in cases {
            let result = try Tools.run(Tools.prism, arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertEqual(result.stderrLines, [line])
        }
        // No suggestion for something nothing resembles.
        let far = try Tools.run(Tools.prism, ["xyzzyplugh"])
        XCTAssertEqual(far.stderrLines, ["prism: unknown command 'xyzzyplugh' (prism --help lists them)"])
        XCTAssertEqual(dir.contents(), [])
    }

    func testH265IsHEVC() throws {
        let out = dir.path("h265.mkv")
        let result = try Tools.run(Tools.prism, ["run", "--frames", "2", "--size", "64x48", "--codec", "h265", "-o", out, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let probe = try Tools.run(try XCTUnwrap(Tools.which("ffprobe")), ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                                       "stream=codec_name", "-of", "csv=p=0", out])
        XCTAssertEqual(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), "hevc")
    }

    /// Missing or malformed files the user named are bad input, whatever kind of file: exit 2 and one line.
    func testEveryMissingFileIsBadInputWithTheSameStatus() throws {
        let out = dir.path("out.mp4")
        for filter in [dir.path("missing.fs"), dir.path("missing.glsl"), "lut(file=\(dir.path("missing.cube")))", dir.path("missing.onnx")] {
            let result = try Tools.run(Tools.prism, ["run", "--frames", "2", "-o", out, "--filter", filter])
            XCTAssertEqual(result.status, 2, "\(filter): \(result.stderr)")
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("no such file"), result.stderr)
        }
        let broken = dir.path("broken.fs")
        try "/*{ \"INPUTS\": [ }*/\nvoid main() {}\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let result = try Tools.run(Tools.prism, ["run", "--frames", "2", "-o", out, "--filter", broken])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    /// Bash's own completion machinery (`compgen` inside the generated function) completes commands, options,
    /// filter names and choices.
    func testBashCompletesCommandsFlagsFiltersAndChoices() throws {
        let script = dir.path("prism.bash")
        let generated = try Tools.run(Tools.prism, ["completions", "bash"])
        XCTAssertEqual(generated.status, 0, generated.stderr)
        try generated.stdout.write(to: URL(fileURLWithPath: script))
        func complete(_ words: [String]) throws -> [String] {
            let array = words.map { "'\($0)'" }.joined(separator: " ")
            let program = "cd '\(dir.url.path)'; source '\(script)'; COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); _prism; printf '%s\\n' \"${COMPREPLY[@]}\""
            let result = try Tools.run("/bin/bash", ["-c", program])
            XCTAssertEqual(result.status, 0, result.stderr)
            return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init).sorted()
        }
        XCTAssertEqual(try complete(["prism", "re"]), ["record", "render"])
        XCTAssertEqual(try complete(["prism", "run", "--fil"]), ["--filter"])
        XCTAssertEqual(try complete(["prism", "run", "--filter", "face-"]), ["face-blur", "face-mask", "face-outline", "face-pixellate"])
        XCTAssertEqual(try complete(["prism", "run", "--codec", ""]), ["av1", "ffv1", "h264", "hevc", "prores"])
        XCTAssertTrue(try complete(["prism", "bench", "--qu"]).contains("--quick"))
        // prism help completes the topics (one per guide) and the commands.
        XCTAssertEqual(try complete(["prism", "he"]), ["help"])
        XCTAssertEqual(try complete(["prism", "help", "fa"]), ["faces"])
        XCTAssertEqual(try complete(["prism", "help", "isf-"]), ["isf-audio", "isf-conventions"])
        XCTAssertEqual(try complete(["prism", "help", "ru"]), ["run"])
        XCTAssertEqual(try complete(["prism", "help", "b"]), ["batch", "bench", "benchmarks"])
        for shell in ["zsh", "fish"] {
            let text = String(decoding: try Tools.run(Tools.prism, ["completions", shell]).stdout, as: UTF8.self)
            XCTAssertTrue(text.contains("face-pixellate") && text.contains("filter"), shell)
            XCTAssertTrue(text.contains("isf-conventions") && text.contains("media-errors"), shell)
        }
        XCTAssertEqual(try Tools.run(Tools.prism, ["completions", "tcsh"]).status, 2)
    }

    /// The man page is roff that groff reads without a warning, and it lists every command and every visible option.
    func testTheManualRendersAndListsEveryOption() throws {
        let manual = try Tools.run(Tools.prism, ["manual"])
        XCTAssertEqual(manual.status, 0, manual.stderr)
        let page = dir.path("prism.1")
        try manual.stdout.write(to: URL(fileURLWithPath: page))
        let groff = try XCTUnwrap(Tools.which("groff"), "groff renders the man page (install-deps installs groff-base)")
        let rendered = try Tools.run(groff, ["-man", "-Tutf8", "-ww", page])
        XCTAssertEqual(rendered.status, 0, rendered.stderr)
        XCTAssertEqual(rendered.stderr, "", "groff warns: \(rendered.stderr)")
        // grotty's bold and underline are overstrikes (c, backspace, c); hyphens and minus signs are Unicode.
        let text = String(decoding: rendered.stdout, as: UTF8.self)
            .replacingOccurrences(of: ".\u{8}", with: "", options: .regularExpression)
            .replacingOccurrences(of: "[\u{2010}\u{2212}]", with: "-", options: .regularExpression)
            .replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
        for word in ["EXIT STATUS", "prism run [INPUT...] -o OUTPUT", "--filter", "--codec", "--faces-out", "completions", "130 interrupted",
                     "prism help [TOPIC|COMMAND]", "TOPICS prism help TOPIC prints the summary of a guide",
                     "faces Faces: privacy filters and what they promise", "isf-conventions ISF conventions in Prism"] {
            XCTAssertTrue(text.contains(word), "the rendered page lacks \(word)")
        }
    }
}
