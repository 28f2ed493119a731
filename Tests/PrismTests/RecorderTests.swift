import Foundation
import XCTest
import PrismCore
import PrismMedia

/// The seeds' recorder from the command line: limits that end a take cleanly, progress for programs,
/// stills through the graph. Outputs are decoded again.
final class RecorderTests: XCTestCase {
    let dir = ScratchDirectory()

    /// `--progress json` lines on stdout.
    private func progressLines(_ result: ProcessResult) throws -> [[String: Any]] {
        try String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], String($0))
        }
    }

    func testMaxSizeEndsTheRecordingCleanlyAtTheLimit() throws {
        let output = dir.path("limited.mp4")
        let limit = 150_000
        let result = try Tools.run(Tools.prism, ["run", "-o", output, "--size", "320x240", "--frames", "5000",
                                                 "--preset", "ultrafast", "--max-size", "150k", "--progress", "json"],
                                   timeout: 300)
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try progressLines(result)
        let last = try XCTUnwrap(lines.last)
        XCTAssertEqual(last["status"] as? String, "finished")
        XCTAssertEqual(last["reason"] as? String, "size limit")
        let frames = try XCTUnwrap(last["frames"] as? Int)
        XCTAssertLessThan(frames, 5000, "the limit stopped it, not the end of the pattern")
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
        XCTAssertLessThanOrEqual(size, limit)
        XCTAssertGreaterThan(size, limit / 2, "stopped near the limit, not long before it")
        XCTAssertEqual(last["bytes"] as? Int, size)
        // Finished and playable: every frame the run counted is in the file, at 30 fps.
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, frames)
        XCTAssertEqual(report.duration?.seconds ?? 0, Double(frames) / 30, accuracy: 0.05)
        // Programs get running reports before the last one, frames counting up.
        let counts = lines.compactMap { $0["frames"] as? Int }
        XCTAssertEqual(counts, counts.sorted())
        XCTAssert(lines.dropLast().allSatisfy { $0["status"] as? String == "running" })
    }

    func testMinFreeStopsBeforeTheDiskFills() throws {
        // A 3 MB tmpfs (the tests run as root, as CI does); lossless frames fill it fast.
        let mountPoint = dir.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Tools.run("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint])
        XCTAssertEqual(mount.status, 0, "cannot mount a tmpfs: \(mount.stderr)")
        guard mount.status == 0 else { return }
        defer { _ = try? Tools.run("/bin/umount", [mountPoint]) }
        let output = mountPoint + "/take.mkv"
        let result = try Tools.run(Tools.prism, ["run", "-o", output, "--size", "320x240", "--frames", "5000", "--crf", "0",
                                                 "--preset", "ultrafast", "--min-free", "1M"], timeout: 300)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssert(result.stderr.contains("stopped at the free-space limit: output finished and playable"), result.stderr)
        let free = try XCTUnwrap(try FileManager.default.attributesOfFileSystem(forPath: mountPoint)[.systemFreeSize] as? Int)
        XCTAssertGreaterThanOrEqual(free, 900_000, "about 1 MB was left free")
        let report = try MediaInspector.inspect(output)
        XCTAssertGreaterThan(report.videoFrameCount, 5)
        XCTAssertLessThan(report.videoFrameCount, 5000)
        // A disk that is already below the limit is refused before anything is written.
        let again = try Tools.run(Tools.prism, ["run", "-o", mountPoint + "/more.mkv", "--min-free", "10M"])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertEqual(again.stderrLines.count, 1, again.stderr)
        XCTAssert(again.stderr.contains("--min-free"), again.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: mountPoint + "/more.mkv"))
    }

    func testStillsGoThroughTheGraphAndKeepTheirOddSize() throws {
        let plain = dir.path("plain.png"), inverted = dir.path("inverted.png")
        for (path, filter) in [(plain, ""), (inverted, "invert")] {
            let result = try Tools.run(Tools.prism, ["run", "-o", path, "--size", "97x61", "--filter", filter, "--quiet"])
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let a = try ImageFile.read(path: plain), b = try ImageFile.read(path: inverted)
        XCTAssertEqual(a.size, Size(width: 97, height: 61))
        XCTAssertEqual(b.size, a.size)
        var worst = 0
        for i in stride(from: 0, to: a.pixels.count, by: 4) {
            for c in 0..<3 { worst = max(worst, abs(255 - Int(a.pixels[i + c]) - Int(b.pixels[i + c]))) }
        }
        XCTAssertLessThanOrEqual(worst, 1, "the still is the graph's output of the first frame")
    }

    func testAPhotoFromTheCamera() throws {
        let output = dir.path("shot.jpg")
        let result = try Tools.run(Tools.prism, ["run", CameraTests.camera, "-o", output, "--frames", "1", "--size", "320x240",
                                                 "--filter", "invert"],
                                   environment: ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": CameraTests.camera],
                                   timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let image = try ImageFile.read(path: output)
        XCTAssertEqual(image.size, Size(width: 320, height: 240))
        // The fake camera's blue background, inverted: yellow, up to JPEG's rounding.
        let i = ((image.size.height - 3) * image.size.width + image.size.width / 2) * 4
        XCTAssertGreaterThan(Int(image.pixels[i]), 190)
        XCTAssertGreaterThan(Int(image.pixels[i + 1]), 190)
        XCTAssertLessThan(Int(image.pixels[i + 2]), 70)
    }

    func testContainersMustMatchTheirExtension() throws {
        for (arguments, words) in [(["-o", dir.path("shot.mjpeg"), "--frames", "1"], ["shot.mjpeg", "cannot hold h264"]),
                                   (["-o", dir.path("two.png"), "--frames", "2"], ["two.png", "one frame"]),
                                   (["-o", dir.path("x.png"), "--max-size", "1M"], ["--max-size"]),
                                   (["-o", dir.path("x.mp4"), "--max-size", "lots"], ["--max-size", "lots"])] {
            let result = try Tools.run(Tools.prism, ["run"] + arguments)
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            for word in words { XCTAssert(result.stderr.contains(word), "\(arguments): \(result.stderr)") }
        }
        XCTAssertEqual(dir.contents(), [], "refused runs write nothing")
    }
}

/// A live recording keeps what it recorded: a full disk or SIGKILL mid-take still leaves a playable movie.
final class LiveRecordingTests: XCTestCase {
    let dir = ScratchDirectory()

    private var camera: [String: String] {
        get throws { ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": CameraTests.camera] }
    }

    func testAFullDiskFinishesTheTakeRecordedSoFar() throws {
        let mountPoint = dir.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        // 256 KiB: the fake camera's flat picture takes about 1.7 kB a frame losslessly, so the disk fills
        // after about five seconds.
        let mount = try Tools.run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", mountPoint])
        XCTAssertEqual(mount.status, 0, "cannot mount a tmpfs: \(mount.stderr)")
        guard mount.status == 0 else { return }
        defer { _ = try? Tools.run("/bin/umount", [mountPoint]) }
        let output = mountPoint + "/take.mp4"
        let result = try Tools.run(Tools.prism, ["run", CameraTests.camera, "-o", output, "--size", "640x480", "--crf", "0",
                                                 "--preset", "ultrafast", "--frames", "900", "--quiet"],
                                   environment: try camera, timeout: 120)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssert(result.stderr.contains("No space left on device"), result.stderr)
        XCTAssert(result.stderr.contains("what was recorded until then is in \(output)"), result.stderr)
        let report = try MediaInspector.inspect(output)
        XCTAssertGreaterThan(report.videoFrameCount, 3, "the fragments written before the disk filled play")
        XCTAssertEqual(try MediaInspector.frameRGBA(output, index: report.videoFrameCount - 1).size, Size(width: 640, height: 480))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountPoint), ["take.mp4"], "no partial file left")
    }

    func testAKilledRecordingLeavesAPlayableMovie() throws {
        let output = dir.path("take.mp4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["run", CameraTests.camera, "-o", output, "--size", "320x240", "--frames", "3000", "--quiet"]
        process.environment = ProcessInfo.processInfo.environment.merging(try camera) { $1 }
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Fragments of about a second reach the disk as the take goes on (behind the encoder's lookahead).
        Thread.sleep(forTimeInterval: 4)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal)
        let leftovers = dir.contents().filter { $0.hasSuffix(".partial") }
        XCTAssertEqual(leftovers.count, 1, "\(dir.contents())")
        let partial = dir.path(try XCTUnwrap(leftovers.first))
        let report = try MediaInspector.inspect(partial)
        XCTAssertGreaterThanOrEqual(report.videoFrameCount, 10, "the fragments written before SIGKILL play")
        // A prefix of the take: from 0, on the camera's 30 fps clock, increasing (a live source may drop a
        // late frame, so gaps of whole frames are allowed).
        XCTAssertEqual(report.videoPTS.first?.seconds, 0)
        for (a, b) in zip(report.videoPTS, report.videoPTS.dropFirst()) {
            let frames = (b - a).seconds * 30
            XCTAssertGreaterThanOrEqual(frames, 0.95)
            XCTAssertEqual(frames, frames.rounded(), accuracy: 0.06, "frames land on the camera's clock")
        }
        _ = try MediaInspector.frameRGBA(partial, index: report.videoFrameCount - 1)
        // The next run of the same output recovers it beside the output, rather than deleting it.
        let again = try Tools.run(Tools.prism, ["run", CameraTests.camera, "-o", output, "--size", "320x240", "--frames", "10"],
                                  environment: try camera, timeout: 60)
        XCTAssertEqual(again.status, 0, again.stderr)
        let recovered = dir.path("take.recovered-\(process.processIdentifier).mp4")
        XCTAssert(again.stderr.contains("recovered as \(recovered)"), again.stderr)
        XCTAssertEqual(try MediaInspector.inspect(recovered).videoFrameCount, report.videoFrameCount)
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, 10)
        XCTAssertEqual(dir.contents().filter { $0.hasSuffix(".partial") }, [])
    }
}
