import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Recordings never overwrite each other, a killed recorder's takes are found
/// again, and a killed live run loses no more than the fragment being built.
final class RecordingRecoveryTests: XCTestCase {
    let dir = ScratchDirectory()

    private var camera: [String: String] {
        get throws { ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": CameraTests.camera] }
    }

    func testDevRecordingsStartedWithinOneSecondGetNamesOfTheirOwn() throws {
        let directory = try TemporaryDirectory()
        try DevTests.invertCube.write(toFile: directory.file("look.cube"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("look.cube"), "--size", "160x90", "--out", dir.url.path])
        defer { dev.stop() }
        _ = try dev.waitForState("frames") { ($0["frames"] as? Int ?? 0) > 2 }
        var paths: [String] = []
        for _ in 0..<3 {
            let started = try dev.post("/record", ["action": "start"])
            XCTAssertEqual(started.status, 202, started.text)
            let reply = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(started.body)) as? [String: Any])
            paths.append(try XCTUnwrap(reply["path"] as? String))
            usleep(150_000)
            XCTAssertEqual(try dev.post("/record", ["action": "stop"]).status, 202)
            _ = try dev.waitForState("the recording finished") { state in
                ((state["recording"] as? [String: Any])?["last"] as? String) == paths.last
            }
        }
        XCTAssertEqual(Set(paths).count, 3, "three recordings, three names: \(paths)")
        for path in paths { XCTAssertGreaterThan(try MediaInspector.inspect(path).videoFrameCount, 0, path) }
    }

    /// A start while recording (or before the first start has begun) is answered 409 with the file being
    /// written, not 202 with a `-2` path that no recording writes; stopping leaves that one file.
    func testASecondDevStartNamesTheRecordingInProgress() throws {
        let directory = try TemporaryDirectory()
        try DevTests.invertCube.write(toFile: directory.file("look.cube"), atomically: true, encoding: .utf8)
        let out = dir.path("takes")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let dev = try DevProcess(arguments: [directory.file("look.cube"), "--size", "160x90", "--out", out])
        defer { dev.stop() }
        _ = try dev.waitForState("frames") { ($0["frames"] as? Int ?? 0) > 2 }
        let first = try dev.post("/record", ["action": "start"])
        XCTAssertEqual(first.status, 202, first.text)
        let path = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(first.body)) as? [String: Any])?["path"] as? String)
        for _ in 0..<2 {
            let again = try dev.post("/record", ["action": "start"])
            XCTAssertEqual(again.status, 409, again.text)
            let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(again.body)) as? [String: Any])
            XCTAssertEqual(reply["path"] as? String, path, again.text)
            usleep(200_000)
        }
        XCTAssertEqual(try dev.post("/record", ["action": "stop"]).status, 202)
        _ = try dev.waitForState("the recording finished") { state in
            ((state["recording"] as? [String: Any])?["last"] as? String) == path
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: out).filter { !$0.hasPrefix(".") }
        XCTAssertEqual(written, [(path as NSString).lastPathComponent], "one recording, the one named")
        XCTAssertGreaterThan(try MediaInspector.inspect(path).videoFrameCount, 0)
    }

    /// Starts `prism record DIR CAMERA --start`, lets it record, and SIGKILLs it.
    private func killRecorder(after seconds: Double) throws -> pid_t {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["record", dir.url.path, CameraTests.camera, "--size", "320x240", "--start", "--quiet"]
        process.environment = ProcessInfo.processInfo.environment.merging(try camera) { $1 }
        process.standardInput = Pipe()  // open and silent: the recorder runs until killed
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: seconds)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return process.processIdentifier
    }

    func testRecordRecoversTheTakesOfAKilledRecorder() throws {
        let pid = try killRecorder(after: 4)
        let hidden = dir.contents().filter { $0.hasPrefix(".take-") && $0.hasSuffix(".partial") }
        XCTAssertEqual(hidden.count, 1, "the killed take is a hidden temporary: \(dir.contents())")
        // The next recorder in the same folder makes it visible and playable, and says so plainly.
        let again = try Tools.run(Tools.prism, ["record", dir.url.path, CameraTests.camera, "--size", "320x240"],
                                  stdin: Data("quit\n".utf8), environment: try camera, timeout: 60)
        XCTAssertEqual(again.status, 0, again.stderr)
        let recovered = dir.contents().filter { $0.hasSuffix(".recovered-\(pid).mp4") }
        XCTAssertEqual(recovered.count, 1, "\(dir.contents())")
        let name = try XCTUnwrap(recovered.first)
        let original = String(name.dropLast(".recovered-\(pid).mp4".count)) + ".mp4"
        XCTAssert(again.stderr.contains("a killed earlier run (pid \(pid)) left a recording of \(original); recovered as \(dir.path(name))"),
                  again.stderr)
        XCTAssertGreaterThan(try MediaInspector.inspect(dir.path(name)).videoFrameCount, 10)
        XCTAssertEqual(dir.contents().filter { $0.hasSuffix(".partial") }, [])
    }

    func testAKilledLiveRunLosesNoMoreThanTheFragmentBeingBuilt() throws {
        let output = dir.path("take.mp4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["run", CameraTests.camera, "-o", output, "--size", "320x240", "--frames", "3000", "--progress", "json"]
        process.environment = ProcessInfo.processInfo.environment.merging(try camera) { $1 }
        let progress = Pipe()
        process.standardOutput = progress
        process.standardError = FileHandle.nullDevice
        final class Lines: @unchecked Sendable { let lock = NSLock(); var text = "" }
        let lines = Lines()
        progress.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            lines.lock.withLock { lines.text += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        Thread.sleep(forTimeInterval: 5)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        Thread.sleep(forTimeInterval: 0.2)
        progress.fileHandleForReading.readabilityHandler = nil
        let reported = lines.lock.withLock { lines.text }.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["frames"] as? Int
        }.max() ?? 0
        XCTAssertGreaterThan(reported, 60, "the run got going before it was killed")
        let partial = try XCTUnwrap(dir.contents().first { $0.hasSuffix(".partial") }, "\(dir.contents())")
        XCTAssertEqual(FragmentedMP4.truncateToLastCompleteFragment(path: dir.path(partial)).map { $0 > 0 }, true)
        let kept = try MediaInspector.inspect(dir.path(partial)).videoFrameCount
        // Fragments are a second (30 frames) long; the encoder holds nothing beyond the frame it is given.
        XCTAssertGreaterThanOrEqual(kept, reported - 36, "frames reported written: \(reported), in the file: \(kept)")
    }
}
