import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Hostile and careless manifests and results files through the built
/// tool. Every refusal comes before any job starts: one line on stderr, exit status 2, nothing written.
final class BatchHardeningTests: XCTestCase {
    let dir = ScratchDirectory()

    private func writeManifest(_ lines: [String], name: String = "jobs.jsonl") throws -> String { try dir.writeLines(lines, name: name) }

    /// A small lossless clip (a movie input: its frames are timed by the rate conversion).
    private func makeClip(_ name: String) throws -> String {
        let path = dir.path(name)
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "5", "-c:v", "ffv1", path])
        return path
    }

    /// Runs `prism batch` on `lines` and checks it refused them before any job started: status 2, one
    /// line on stderr naming the manifest's line and every word of `words`, no output, no results file.
    @discardableResult
    private func assertRefused(_ lines: [String], line: Int, mentioning words: [String], outputs: [String] = [],
                               extra: [String] = [], file: StaticString = #filePath, sourceLine: UInt = #line) throws -> String {
        let manifest = try writeManifest(lines)
        let run = try Tools.run(Tools.prism, ["batch", manifest, "--progress", "lines"] + extra, timeout: 300)
        XCTAssertEqual(run.status, 2, "\(lines.joined(separator: "\n").prefix(300))\n\(run.stderr.prefix(2000))", file: file, line: sourceLine)
        XCTAssertEqual(run.stderrLines.count, 1, String(run.stderr.prefix(2000)), file: file, line: sourceLine)
        let message = run.stderrLines.first ?? ""
        XCTAssertTrue(message.contains("jobs.jsonl:\(line): "), message, file: file, line: sourceLine)
        for word in words { XCTAssertTrue(message.contains(word), "'\(message.prefix(500))' should mention \(word)", file: file, line: sourceLine) }
        for output in outputs {
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path(output)), "\(output) was written", file: file, line: sourceLine)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("jobs.results.jsonl")), "a job ran", file: file, line: sourceLine)
        return message
    }

    // MARK: item 5

    func testOutputsThroughASymlinkedFolderAreOneFile() throws {
        try FileManager.default.createDirectory(atPath: dir.path("sl1"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.path("sl2"), withDestinationPath: dir.path("sl1"))
        let job = #""frames": 2, "size": "64x48", "preset": "ultrafast""#
        try assertRefused([#"{"input": "pattern", "output": "sl1/a.mp4", \#(job)}"#,
                           #"{"input": "pattern", "output": "sl2/a.mp4", \#(job)}"#],
                          line: 2, mentioning: ["sl2/a.mp4", "also line 1", "two jobs cannot write one file"], outputs: ["sl1/a.mp4"])
        // A folder that does not exist yet below the link is the same folder too.
        try assertRefused([#"{"input": "pattern", "output": "sl1/new/a.mp4", \#(job)}"#,
                           #"{"input": "pattern", "output": "sl2/new/../new/a.mp4", \#(job)}"#],
                          line: 2, mentioning: ["also line 1"], outputs: ["sl1/new/a.mp4"])
    }

    func testAJobCannotReadAnotherJobsOutput() throws {
        // out/a.mkv is there from an earlier run; line 1 writes it again, line 2 would read the old one.
        try FileManager.default.createDirectory(atPath: dir.path("out"), withIntermediateDirectories: true)
        let stale = try makeClip("out/a.mkv")
        try FileManager.default.createSymbolicLink(atPath: dir.path("link"), withDestinationPath: dir.path("out"))
        XCTAssertEqual(link(stale, dir.path("hard.mkv")), 0)
        let writer = #"{"input": "pattern", "output": "out/a.mkv", "codec": "ffv1", "frames": 2, "size": "64x48"}"#
        for input in ["out/a.mkv", "link/a.mkv", "hard.mkv", "./out/../out/a.mkv"] {
            try assertRefused([writer, #"{"input": "\#(input)", "output": "b.mkv", "codec": "ffv1"}"#], line: 2,
                              mentioning: ["line 1's output", "cannot read what another job"], outputs: ["b.mkv"])
            // The reader first: the same refusal, found after every line was read.
            try assertRefused([#"{"input": "\#(input)", "output": "b.mkv", "codec": "ffv1"}"#, writer], line: 1,
                              mentioning: ["line 2's output"], outputs: ["b.mkv"])
        }
        // Its own output through a symlinked folder.
        try assertRefused([#"{"input": "link/a.mkv", "output": "out/a.mkv", "codec": "ffv1"}"#], line: 1, mentioning: ["output is the input"])
        XCTAssertEqual(try MediaInspector.inspect(stale).videoFrameCount, 5, "the earlier output is untouched")
    }

    // MARK: item 7

    func testManifestValuesGetExactlyTheCommandLinesChecks() throws {
        _ = try makeClip("clip.mkv")
        for fps in [#""0.0001""#, "0.0001", #""5000""#, #""0""#, #""-30""#, #""1e-300""#] {
            let message = try assertRefused([#"{"input": "clip.mkv", "output": "o.mkv", "codec": "ffv1", "fps": \#(fps)}"#], line: 1,
                                            mentioning: ["\"fps\"", "takes a frame rate from 0.001 to 1000"], outputs: ["o.mkv"])
            XCTAssertFalse(message.contains("crash"), message)
        }
        // The command line says the same about the same value: run, and batch's own defaults.
        let run = try Tools.run(Tools.prism, ["run", dir.path("clip.mkv"), "-o", dir.path("r.mkv"), "--fps", "5000"])
        XCTAssertEqual(run.status, 2, run.stderr)
        XCTAssertTrue(run.stderr.contains("--fps takes a frame rate from 0.001 to 1000"), run.stderr)
        try assertRefused([#"{"input": "clip.mkv", "output": "o.mkv", "codec": "ffv1", "crf": 52}"#], line: 1,
                          mentioning: ["\"crf\"", "takes a whole number in 0...51"])
        let manifest = try writeManifest([#"{"input": "clip.mkv", "output": "o.mkv", "codec": "ffv1"}"#])
        for (option, value) in [("--fps", "0.0001"), ("--fps", "5000"), ("--bitrate", "0.5"), ("--crf", "99")] {
            let batch = try Tools.run(Tools.prism, ["batch", manifest, option, value])
            XCTAssertEqual(batch.status, 2, batch.stderr)
            XCTAssertEqual(batch.stderrLines.count, 1, batch.stderr)
            XCTAssertTrue(batch.stderr.contains("\(option) takes"), batch.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("o.mkv")))
        }
        // A valid rate still converts: 5 frames at 25 fps → 2 frames at 10 fps, decoded again.
        let ok = try Tools.run(Tools.prism, ["batch", try writeManifest([#"{"input": "clip.mkv", "output": "o.mkv", "codec": "ffv1", "fps": "10"}"#],
                                                                           name: "ok.jsonl"), "--progress", "lines"], timeout: 300)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        let report = try MediaInspector.inspect(dir.path("o.mkv"))
        XCTAssertEqual(report.videoFrameCount, 2)
    }

    // MARK: item 8

    private func resultLine(_ job: String, frames: String = "10", fps: String = "5", seconds: String = "2",
                            started: String = "1000", finished: String = "1002") -> String {
        #"{"job":"\#(job)","status":"ok","frames":\#(frames),"fps":\#(fps),"seconds":\#(seconds),"input":"i","output":"o","#
            + #""fingerprint":"f","started":\#(started),"finished":\#(finished),"host":"h","worker":"w"}"#
    }

    func testReportSaysWhichResultsLinesAreBadAndNeverTraps() throws {
        let path = dir.path("r.jsonl")
        let lines = [
            resultLine("good"),
            resultLine("huge", frames: "9223372036854775807"),
            resultLine("huge2", frames: "9223372036854775807"),
            resultLine("negative", frames: "-1"),
            resultLine("slow", seconds: "1e308"),
            resultLine("fast", fps: "1e308"),
            resultLine("future", finished: "1e308"),
            resultLine("backwards", started: "2000", finished: "1000"),
            #"{"job":"torn","sta"#,
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let run = try Tools.run(Tools.prism, ["batch", "--report", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let text = String(decoding: run.stdout, as: UTF8.self)
        XCTAssertTrue(text.contains("jobs:        1 (1 ok, 0 failed"), text)
        XCTAssertTrue(text.contains("frames:      10\n"), text)
        XCTAssertTrue(text.contains("damaged:     8 line(s) skipped"), text)
        for (line, word) in [(2, "\"frames\" is 9223372036854775807"), (4, "\"frames\" is -1"), (5, "\"seconds\""), (6, "\"fps\""),
                             (7, "\"finished\""), (8, "\"finished\" is before \"started\""), (9, "not a result line")] {
            XCTAssertTrue(text.contains("\(path):\(line): \(word)"), "line \(line): \(word)\n\(text)")
        }
        let json = try Tools.run(Tools.prism, ["batch", "--report", path, "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let decoded = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        XCTAssertEqual(decoded["frames"] as? Int, 10)
        XCTAssertEqual(decoded["damagedLines"] as? Int, 8)
        // Nothing usable: one line saying so and why, status 2.
        try (resultLine("x", frames: "-5") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let none = try Tools.run(Tools.prism, ["batch", "--report", path])
        XCTAssertEqual(none.status, 2, none.stderr)
        XCTAssertEqual(none.stderrLines.count, 1, none.stderr)
        XCTAssertTrue(none.stderr.contains("\"frames\" is -5"), none.stderr)
    }

    // MARK: item 11

    func testManifestTextCannotDriveTheTerminal() throws {
        let hostileID = "\u{1B}[31mred\u{1B}]0;pwned\u{07}\u{9B}2J\u{202E}"
        let idJSON = String(decoding: try JSONSerialization.data(withJSONObject: [hostileID]), as: UTF8.self).dropFirst().dropLast()
        // The second job fails (its folder is a file): its failure line quotes the path.
        XCTAssertTrue(FileManager.default.createFile(atPath: dir.path("blocker\u{1B}[5m"), contents: Data("x".utf8)))
        let manifest = try writeManifest([
            #"{"input": "pattern", "id": \#(idJSON), "output": "o\u001b]2;title\u0007.mp4", "frames": 2, "size": "64x48", "preset": "ultrafast"}"#,
            #"{"input": "pattern", "id": "bad\u001b[2Jjob", "output": "blocker\u001b[5m/y.mp4", "frames": 2, "size": "64x48"}"#,
        ])
        for arguments in [["--progress", "lines"], ["--dry-run"], ["--force", "--progress", "bar"]] {
            let run = try Tools.run(Tools.prism, ["batch", manifest] + arguments, timeout: 300)
            let everything = String(decoding: run.stdout + Data(run.stderr.utf8), as: UTF8.self)
            // The bar draws with its own CSI sequences; nothing else may reach the terminal raw.
            var forbidden = ["\u{07}", "\u{1B}]", "\u{1B}[31m", "\u{1B}[2J", "\u{1B}[5m"]
            if arguments != ["--force", "--progress", "bar"] { forbidden.append("\u{1B}") }
            for sequence in forbidden {
                XCTAssertFalse(everything.contains(sequence), "\(arguments): \(sequence.debugDescription) reached the terminal:\n\(everything.debugDescription)")
            }
            XCTAssertFalse(everything.unicodeScalars.contains { $0.value == 0x9B || $0.value == 0x202E },
                           "\(arguments): a C1 or bidi control reached the terminal")
            switch arguments.first {
            case "--dry-run":
                XCTAssertEqual(run.status, 0, run.stderr)
                XCTAssertTrue(everything.contains("\\x1b[31mred"), everything)
            default:
                XCTAssertEqual(run.status, 3, run.stderr)
                XCTAssertTrue(run.stderr.contains("job bad\\x1b[2Jjob failed"), run.stderr)
            }
        }
    }

    func testManifestGraphsGetRunsLimitsBeforeTheyAreParsed() throws {
        let many = Array(repeating: "invert", count: 201).joined(separator: ", ")
        let message = try assertRefused([#"{"input": "pattern", "output": "o.mp4", "filter": "\#(many)"}"#], line: 1,
                                        mentioning: ["\"filter\"", "the graph has 201 filters, over the limit of 128"], extra: ["--dry-run"])
        XCTAssertLessThan(message.utf8.count, 400, "the message does not quote the graph")
        // run says the same of the same graph.
        let run = try Tools.run(Tools.prism, ["run", "-o", dir.path("r.mp4"), "--frames", "1", "--size", "64x48", "--filter", many])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("the graph has 201 filters, over the limit of 128"), run.stderr)
        // The limit is the same setting as run's.
        let raised = try Tools.run(Tools.prism, ["batch", try writeManifest([#"{"input": "pattern", "output": "o.mp4", "filter": "\#(many)"}"#],
                                                                               name: "raised.jsonl"), "--dry-run"],
                                   environment: ["PRISM_MAX_FILTERS": "300"])
        XCTAssertEqual(raised.status, 0, raised.stderr)
        // Graph text longer than one command-line argument can be, and a line longer than any job: refused unparsed.
        let long = String(repeating: "invert, ", count: 20_000)
        try assertRefused([#"{"input": "pattern", "output": "o.mp4", "filter": "\#(long)mono"}"#], line: 1,
                          mentioning: ["\"filter\"", "bytes of graph text", "128 KiB"], extra: ["--dry-run"])
        try assertRefused([#"{"input": "pattern", "output": "o.mp4", "id": "\#(String(repeating: "x", count: 300_000))"}"#], line: 1,
                          mentioning: ["300", "bytes", "256 KiB"], extra: ["--dry-run"])
        let defaults = try Tools.run(Tools.prism, ["batch", try writeManifest([#"{"input": "pattern", "output": "o.mp4"}"#], name: "d.jsonl"),
                                                   "--dry-run", "--filter", many])
        XCTAssertEqual(defaults.status, 2, defaults.stderr)
        XCTAssertTrue(defaults.stderr.contains("201 filters"), defaults.stderr)
    }
}
