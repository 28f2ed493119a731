import Foundation
import XCTest
import PrismCore
import PrismMedia
#if canImport(Glibc)
import Glibc
#endif

/// A path that names a FIFO where a shader expects a file (an ISF `IMPORTED` image, a
/// ShaderToy channel image, the shader itself) is a one-line error, never a hang; in `prism dev` the
/// preview goes on with the last good shader and Ctrl-C still stops it.
final class FIFOInputTests: XCTestCase {
    let dir = ScratchDirectory()

    private func fifo(_ name: String) -> String {
        let path = dir.path(name)
        XCTAssertEqual(mkfifo(path, 0o644), 0)
        return path
    }

    private func importing(_ image: String) -> String {
        """
        /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
            "IMPORTED": { "pic": { "PATH": "\(image)" } } }*/
        void main() { gl_FragColor = IMG_NORM_PIXEL(pic, isf_FragNormCoord) + 0.0 * IMG_THIS_PIXEL(inputImage); }
        """
    }

    private func assertRefused(_ filter: String, mentioning words: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        // Bounded: a run that hangs on the FIFO fails here instead of hanging the suite.
        let result = try Tools.run(Tools.prism, ["run", "--frames", "2", "--size", "64x48", "--filter", filter,
                                                 "-o", dir.path("out.mp4")], timeout: 30)
        XCTAssertNotEqual(result.status, 0, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr, file: file, line: line)
        for word in words { XCTAssertTrue(result.stderr.contains(word), result.stderr, file: file, line: line) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.mp4")), file: file, line: line)
    }

    func testAnImportedImageThatIsAFIFOIsRefused() throws {
        _ = fifo("pic.png")
        let shader = dir.path("show.fs")
        try importing("pic.png").write(toFile: shader, atomically: true, encoding: .utf8)
        try assertRefused("'\(shader)'", mentioning: ["pic.png", "is a FIFO"])
    }

    func testAShaderToyChannelImageThatIsAFIFOIsRefused() throws {
        _ = fifo("channel.png")
        let shader = dir.path("look.frag")
        try "void mainImage(out vec4 c, in vec2 p) { c = texture(iChannel1, p / iResolution.xy); }\n"
            .write(toFile: shader, atomically: true, encoding: .utf8)
        try assertRefused("'\(shader)'(iChannel1='\(dir.path("channel.png"))')", mentioning: ["channel.png", "is a FIFO"])
    }

    func testAShaderFileThatIsAFIFOIsRefused() throws {
        let shader = fifo("look.fs")
        try assertRefused("'\(shader)'", mentioning: ["look.fs", "is a FIFO"])
    }

    // MARK: a FIFO as the movie input

    /// Starts `prism ARGUMENTS` with its stderr collected.
    private func start(_ arguments: [String]) throws -> (Process, LineCollector) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return (process, LineCollector(errors.fileHandleForReading))
    }

    private func waitForLine(_ lines: LineCollector, containing text: String, timeout: Double = 30) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if lines.all.contains(where: { $0.contains(text) }) { return true }
            usleep(20_000)
        }
        return false
    }

    private func waitForExit(_ process: Process, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        return !process.isRunning
    }

    /// A FIFO no program writes to, as the first input or another: the wait is said (before: silence, the
    /// run looking hung) and Ctrl-C ends it, nothing written.
    func testAMovieFIFOWithoutAWriterIsWaitedOnAndCtrlCStopsIt() throws {
        let input = fifo("in.mkv")
        for arguments in [[input], ["pattern", input, "--frames", "10"]] {
            let out = dir.path("out.mp4")
            let (process, lines) = try start(["run"] + arguments + ["--size", "64x48", "-o", out])
            defer { if process.isRunning { process.terminate() } }
            XCTAssertTrue(waitForLine(lines, containing: "in.mkv is a FIFO no program writes to yet: waiting for one"),
                          "\(arguments): \(lines.all)")
            process.interrupt()
            guard waitForExit(process, timeout: 15) else { return XCTFail("\(arguments): Ctrl-C did not stop the wait") }
            XCTAssertNotEqual(process.terminationStatus, 0)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
            XCTAssertEqual(dir.contents().filter { $0.hasSuffix(".partial") }, [])
        }
    }

    /// A writer that comes later, even one that writes a whole small movie and leaves while Prism waits,
    /// is read whole.
    func testAWriterThatComesLaterIsReadWhole() throws {
        let movie = dir.path("small.mkv")
        let made = try Tools.run(Tools.prism, ["run", "--frames", "10", "--size", "64x48", "-o", movie, "--quiet"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let input = fifo("in.mkv")
        let out = dir.path("out.mp4")
        let (process, lines) = try start(["run", input, "-o", out])
        defer { if process.isRunning { process.terminate() } }
        XCTAssertTrue(waitForLine(lines, containing: "waiting for one"), "\(lines.all)")
        let writer = open(input, O_WRONLY)
        XCTAssertGreaterThanOrEqual(writer, 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: movie))
        _ = bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        close(writer)
        guard waitForExit(process, timeout: 60) else { return XCTFail("the run did not end: \(lines.all)") }
        XCTAssertEqual(process.terminationStatus, 0, "\(lines.all)")
        XCTAssertEqual(try MediaInspector.inspect(out).videoFrameCount, 10)
    }

    /// `prism batch` stops on the first Ctrl-C even while a job's input waits for its writer (before: that
    /// job held the batch until a second signal).
    func testABatchStopsOnOneSignalWhileAnInputWaitsForItsWriter() throws {
        let input = fifo("in.mkv")
        let manifest = dir.path("jobs.jsonl")
        try "{\"input\": \"\(input)\", \"output\": \"\(dir.path("out.mp4"))\"}\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let (process, lines) = try start(["batch", manifest, "--workers", "1"])
        defer { if process.isRunning { process.terminate() } }
        XCTAssertTrue(waitForLine(lines, containing: "waiting for one"), "\(lines.all)")
        process.interrupt()
        guard waitForExit(process, timeout: 15) else { return XCTFail("one signal did not stop the batch: \(lines.all)") }
        XCTAssertNotEqual(process.terminationStatus, 0)
        XCTAssertTrue(lines.all.contains { $0.contains("1 job(s) not done") }, "\(lines.all)")
    }

    func testDevKeepsRunningWhenAReloadNamesAFIFO() throws {
        let shader = dir.path("look.fs")
        try importing("good.png").write(toFile: shader, atomically: true, encoding: .utf8)
        try ImageFile.write(RGBAImage(size: Size(width: 4, height: 4), pixels: [UInt8](repeating: 200, count: 64)), to: dir.path("good.png"))
        _ = fifo("bad.png")
        let dev = try DevProcess(arguments: [shader, "--size", "160x90"])
        defer { dev.stop() }
        func frames(_ state: [String: Any]) -> Int { state["frames"] as? Int ?? 0 }
        let before = frames(try dev.waitForState("frames") { frames($0) > 2 })
        try importing("bad.png").write(toFile: shader, atomically: true, encoding: .utf8)
        let failed = try dev.waitForState("the reload fails") { !($0["error"] is NSNull) && $0["error"] != nil }
        XCTAssertTrue("\(failed["error"] ?? "")".contains("FIFO"), "\(failed)")
        _ = try dev.waitForState("frames go on with the last good shader") { frames($0) > before + 10 }
        // A good shader recovers it, and Ctrl-C stops it.
        try importing("good.png").write(toFile: shader, atomically: true, encoding: .utf8)
        _ = try dev.waitForState("the good shader is back") { $0["error"] is NSNull }
        dev.process.interrupt()
        let deadline = Date(timeIntervalSinceNow: 10)
        while dev.process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(dev.process.isRunning, "prism dev stops on Ctrl-C")
    }
}
