import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Issue 9, data loss: an output never replaces the input, an existing output survives a run that
/// produced nothing, FIFOs / devices / symlinks are not replaced by regular files, and no `.partial`
/// temporary outlives a run (signals, SIGKILL).
final class OutputSafetyTests: XCTestCase {
    let dir = ScratchDirectory()

    private func makeMovie(_ path: String, frames: Int = 4) throws {
        let result = try Tools.run(Tools.prism, ["run", "--frames", String(frames), "--size", "64x48", "--preset", "ultrafast",
                                                 "-o", path, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    private func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    private func fileType(_ path: String) -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        return info.st_mode & S_IFMT
    }

    func partials() -> [String] { dir.contents().filter { $0.hasSuffix(".partial") } }

    // MARK: the output is the input

    func testRunRefusesToWriteOverItsInput() throws {
        let input = dir.path("same.mp4")
        try makeMovie(input)
        let original = try bytes(input)
        try FileManager.default.createSymbolicLink(atPath: dir.path("alias.mp4"), withDestinationPath: input)
        let spellings = [input, dir.url.path + "/./same.mp4", dir.url.path + "/../" + dir.url.lastPathComponent + "/same.mp4",
                         dir.path("alias.mp4")]
        for output in spellings {
            let result = try Tools.run(Tools.prism, ["run", input, "-o", output, "--filter", "invert", "--quiet"])
            XCTAssertEqual(result.status, 2, "\(output): \(result.stderr)")
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("is the input"), result.stderr)
            XCTAssertEqual(try bytes(input), original, "\(output) must not replace the input")
        }
        XCTAssertEqual(fileType(dir.path("alias.mp4")), S_IFLNK)
        XCTAssertEqual(partials(), [])
    }

    /// The input spelled as a `file:` URL is the input (before: it passed the check, and the run failed at
    /// its rename leaving a `.partial`); a `file:` URL elsewhere is written like the path it names.
    func testAFileURLIsTheFileItNames() throws {
        let input = dir.path("in.mp4")
        try makeMovie(input)
        let original = try bytes(input)
        for output in ["file://" + input, "file:" + input] {
            let result = try Tools.run(Tools.prism, ["run", input, "-o", output, "--quiet"])
            XCTAssertEqual(result.status, 2, "\(output): \(result.stderr)")
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("is the input"), result.stderr)
            XCTAssertEqual(try bytes(input), original)
        }
        let result = try Tools.run(Tools.prism, ["run", "file://" + input, "--filter", "invert", "-o", "file://" + dir.path("out.mp4"), "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try MediaInspector.inspect(dir.path("out.mp4")).videoFrameCount, 4)
        XCTAssertEqual(partials(), [])
    }

    func testRenderRefusesToWriteOverItsInput() throws {
        let image = dir.path("x.png")
        try FileManager.default.copyItem(atPath: Tools.fixture("chelsea.png"), toPath: image)
        let original = try bytes(image)
        for output in [image, dir.url.path + "/./x.png"] {
            let result = try Tools.run(Tools.prism, ["render", "--filter", "invert", image, "-o", output])
            XCTAssertEqual(result.status, 2, result.stderr)
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("is the input"), result.stderr)
            XCTAssertEqual(try bytes(image), original)
        }
    }

    // MARK: nothing to write

    func testEmptyStdinFailsAndKeepsTheExistingOutput() throws {
        let output = dir.path("kept.mp4")
        try Data("an earlier take".utf8).write(to: URL(fileURLWithPath: output))
        let result = try Tools.run(Tools.prism, ["run", "-", "--input-format", "64x48:yuv420p:25", "-o", output],
                                   stdin: Data())
        XCTAssertNotEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderrLines.filter { !$0.hasPrefix("prism: GPU:") && !$0.hasPrefix("prism: input:") }.count, 1,
                       result.stderr)
        XCTAssertTrue(result.stderr.contains("no frames"), result.stderr)
        XCTAssertEqual(try bytes(output), Data("an earlier take".utf8))
        XCTAssertEqual(partials(), [])
        // Raw output: nothing to protect, but zero frames is still a failure.
        let raw = try Tools.run(Tools.prism, ["run", "-", "--input-format", "64x48:yuv420p:25", "-o", "-", "--quiet"],
                                stdin: Data())
        XCTAssertNotEqual(raw.status, 0)
        XCTAssertTrue(raw.stderr.contains("no frames"), raw.stderr)
    }

    func testMovieWriterRefusesToFinishWithoutFrames() throws {
        let output = dir.path("empty.mkv")
        try Data("old".utf8).write(to: URL(fileURLWithPath: output))
        let writer = try MovieWriter(path: output, video: VideoStreamConfig(size: Size(width: 64, height: 48), timeBase: Rational(1, 25),
                                                                             frameRate: Rational(25, 1), colorSpace: YUVColorSpace(matrix: .bt601, range: .limited)))
        XCTAssertThrowsError(try writer.finish()) { error in
            XCTAssertTrue("\(error)".contains("no frames"), "\(error)")
        }
        XCTAssertEqual(try bytes(output), Data("old".utf8))
        XCTAssertEqual(partials(), [])
    }

    // MARK: outputs that are not regular files

    func testASymlinkOutputIsWrittenThrough() throws {
        let target = dir.path("real.mp4")
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        let link = dir.path("link.mp4")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.mp4")
        let result = try Tools.run(Tools.prism, ["run", "--frames", "3", "--size", "64x48", "-o", link, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(fileType(link), S_IFLNK, "the symlink stays a symlink")
        XCTAssertEqual(try MediaInspector.inspect(target).videoFrameCount, 3, "the movie lands at the link's target")
        XCTAssertEqual(partials(), [])
        // Images too.
        let pngTarget = dir.path("real.png"), pngLink = dir.path("link.png")
        try Data("old".utf8).write(to: URL(fileURLWithPath: pngTarget))
        try FileManager.default.createSymbolicLink(atPath: pngLink, withDestinationPath: pngTarget)
        let render = try Tools.run(Tools.prism, ["render", "--filter", "invert", Tools.fixture("chelsea.png"), "-o", pngLink])
        XCTAssertEqual(render.status, 0, render.stderr)
        XCTAssertEqual(fileType(pngLink), S_IFLNK)
        XCTAssertEqual(try ImageFile.read(path: pngTarget).size, try ImageFile.read(path: Tools.fixture("chelsea.png")).size)
    }

    func testAFIFOOutputIsWrittenThroughOrRefused() throws {
        // mp4 needs to seek back (its index): refused, and the FIFO stays a FIFO.
        let mp4 = dir.path("pipe.mp4")
        XCTAssertEqual(mkfifo(mp4, 0o644), 0)
        let refused = try Tools.run(Tools.prism, ["run", "--frames", "3", "--size", "64x48", "-o", mp4, "--quiet"])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertEqual(refused.stderrLines.count, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("FIFO"), refused.stderr)
        XCTAssertEqual(fileType(mp4), S_IFIFO)
        // Matroska streams: written straight into the FIFO, read on the other side.
        let mkv = dir.path("pipe.mkv"), copy = dir.path("copy.mkv")
        XCTAssertEqual(mkfifo(mkv, 0o644), 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        // Bounded: if prism replaced the FIFO, nothing would ever open its writing end.
        reader.arguments = ["-c", "timeout 60 cat \"$0\" > \"$1\"", mkv, copy]
        try reader.run()
        let result = try Tools.run(Tools.prism, ["run", "--frames", "5", "--size", "64x48", "-o", mkv, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(fileType(mkv), S_IFIFO, "the FIFO stays a FIFO")
        reader.waitUntilExit()
        XCTAssertEqual(try MediaInspector.inspect(copy).videoFrameCount, 5)
        XCTAssertEqual(partials(), [])
    }

    func testACharacterDeviceOutputIsNotReplaced() throws {
        // A node for /dev/null (1, 3) named like a movie.
        let node = dir.path("null.mkv")
        XCTAssertEqual(mknod(node, S_IFCHR | 0o666, dev_t((1 << 8) | 3)), 0, "mknod needs root, which the tests run as")
        let result = try Tools.run(Tools.prism, ["run", "--frames", "3", "--size", "64x48", "-o", node, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(fileType(node), S_IFCHR)
        XCTAssertEqual(partials(), [])
    }

    // MARK: temporaries after signals

    /// Starts a long run into `output` and waits until its temporary exists.
    func startLongRun(_ output: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["run", "--size", "64x48", "--frames", "1000000", "--preset", "ultrafast", "-o", output, "--quiet"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while partials().isEmpty && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(partials().isEmpty, "the run's temporary should exist")
        Thread.sleep(forTimeInterval: 0.5)
        return process
    }

    func waitForExit(_ process: Process) {
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(process.isRunning, "prism did not stop")
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    func testSIGHUPFinishesLikeCtrlC() throws {
        let output = dir.path("hup.mp4")
        let process = try startLongRun(output)
        kill(process.processIdentifier, SIGHUP)
        waitForExit(process)
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertGreaterThan(try MediaInspector.inspect(output).videoFrameCount, 0)
        XCTAssertEqual(partials(), [])
    }

    func testASecondCtrlCStillFinishesTheOutput() throws {
        let output = dir.path("twice.mp4")
        let process = try startLongRun(output)
        kill(process.processIdentifier, SIGINT)
        usleep(1000)
        kill(process.processIdentifier, SIGINT)
        waitForExit(process)
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertGreaterThan(try MediaInspector.inspect(output).videoFrameCount, 0)
        XCTAssertEqual(partials(), [])
    }

    func testTheNextRunRemovesTheTemporaryOfAKilledOne() throws {
        let output = dir.path("killed.mp4")
        let process = try startLongRun(output)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let orphans = partials()
        XCTAssertEqual(orphans.count, 1, "SIGKILL leaves the temporary behind")
        // A temporary of a live process (this one) is someone's work in progress: left alone.
        let live = ".killed.mp4.\(getpid())-1234.partial"
        try Data().write(to: URL(fileURLWithPath: dir.path(live)))
        let result = try Tools.run(Tools.prism, ["run", "--frames", "2", "--size", "64x48", "-o", output, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(partials(), [live], "the dead run's temporary is removed, the live one's kept")
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, 2)
    }
}

extension OutputSafetyTests {
    func testAThirdSignalAbandonsAStuckRunWithoutLeavingItsTemporary() throws {
        // Raw frames from a pipe that stays open and silent: the source is stuck in read(), so the run
        // cannot finish after the first Ctrl-C; the second changes nothing, the third abandons it.
        let output = dir.path("stuck.mp4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["run", "-", "--input-format", "64x48:rgba:25", "-o", output, "--quiet"]
        let silent = Pipe(), errors = Pipe()
        process.standardInput = silent
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while partials().isEmpty && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(partials().count, 1, "the run's temporary exists")
        Thread.sleep(forTimeInterval: 1) // the signal handlers are installed just after the output is opened
        for _ in 0..<3 {
            kill(process.processIdentifier, SIGINT)
            Thread.sleep(forTimeInterval: 0.3) // one at a time (signal sources coalesce)
        }
        waitForExit(process)
        try? silent.fileHandleForWriting.close()
        let messages = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 130, messages)
        XCTAssertTrue(messages.contains("abandoned: unfinished output removed"), messages)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertEqual(partials(), [])
    }
}
