import Foundation
import XCTest
import PrismCore
import PrismMedia
import PrismPipeline

/// `--max-size`, `--segment-size` and `--min-free` hold for any content. Noise does not
/// compress, so each frame is large and the bytes the encoder holds (x264's lookahead, a fragment being
/// built) would carry the file far past a limit checked only against what reached the disk.
final class SizeLimitTests: XCTestCase {
    let dir = ScratchDirectory()

    /// Random grey noise, lossless (so it stays noise), 60 frames at 30 fps.
    private func noiseClip(_ size: String = "320x240") throws -> String {
        let path = dir.path("noise-\(size).mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "nullsrc=s=\(size):r=30,geq=random(1)*255:128:128", "-frames:v", "60",
                          "-c:v", "ffv1", path])
        return path
    }

    private func size(_ path: String) throws -> Int {
        try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    private func lastProgress(_ result: ProcessResult) throws -> [String: Any] {
        let line = try XCTUnwrap(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").last)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    func testMaxSizeHoldsForIncompressibleFramesInEveryContainer() throws {
        let clip = try noiseClip()
        let limit = 300_000
        for name in ["out.mp4", "out.mkv", "out.ts"] {
            let output = dir.path(name)
            // The default preset: x264 holds about 40 frames (≈ 2 MB of noise) before its first packet.
            let result = try Tools.run(Tools.prism, ["run", clip, "-o", output, "--max-size", "300k", "--progress", "json"],
                                       timeout: 300)
            XCTAssertEqual(result.status, 0, result.stderr)
            let last = try lastProgress(result)
            XCTAssertEqual(last["reason"] as? String, "size limit", name)
            let bytes = try size(output)
            XCTAssertLessThanOrEqual(bytes, limit, "\(name) ends at or under the limit")
            XCTAssertGreaterThan(bytes, limit / 2, "\(name) stopped near the limit, not long before it")
            // The report counts the frames the file holds, and it plays to its end.
            let report = try MediaInspector.inspect(output)
            XCTAssertEqual(last["frames"] as? Int, report.videoFrameCount, name)
            XCTAssertGreaterThan(report.videoFrameCount, 0)
            _ = try MediaInspector.frameRGBA(output, index: report.videoFrameCount - 1)
        }
    }

    func testALimitSmallerThanOneFrameWritesNothing() throws {
        let clip = try noiseClip()
        let output = dir.path("tiny.mp4")
        let result = try Tools.run(Tools.prism, ["run", clip, "-o", output, "--max-size", "20k", "--quiet"], timeout: 300)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("first encoded frame"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertEqual(dir.contents().filter { $0.hasSuffix(".partial") }, [])
    }

    func testSizesBelowOneByteAreRefused() throws {
        let result = try Tools.run(Tools.prism, ["run", "-o", dir.path("x.mp4"), "--max-size", "0.5"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("--max-size") && result.stderr.contains("0.5"), result.stderr)
        XCTAssertEqual(ByteCount.parse("1.5k"), 1500)
        XCTAssertNil(ByteCount.parse("0.4"))
    }

    func testMinFreeKeepsTheFloorForIncompressibleFrames() throws {
        let clip = try noiseClip("640x360")  // about 100 kB a frame: the 2 MB above the floor is some 20 frames
        let disk = try SmallDisk(in: dir, size: "8m")
        let output = disk.path + "/take.mkv"
        let floor = 6_000_000
        let result = try Tools.run(Tools.prism, ["run", clip, "-o", output, "--min-free", "6M", "--progress", "json"], timeout: 300)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try lastProgress(result)["reason"] as? String, "free-space limit")
        XCTAssertGreaterThanOrEqual(disk.freeBytes, floor, "the disk keeps the free space asked for")
        let report = try MediaInspector.inspect(output)
        XCTAssertGreaterThan(report.videoFrameCount, 3, "stopped near the floor, not long before it")
        XCTAssertLessThan(report.videoFrameCount, 60)
    }

    /// A live camera showing noise, recorded in segments: every take at or under the segment size, and the
    /// frames the camera delivered are all in some take (the refused frame opens the next one).
    func testSegmentSizeHoldsForALiveCameraShowingNoise() throws {
        // Noise with the clip's frame number in its top-left corner: five 16x16 blocks, bit i white when set.
        let raw = dir.path("noise.yuv")
        let luma = "if(lt(Y\\,16)*lt(X\\,80)\\,255*mod(floor(N/pow(2\\,floor(X/16)))\\,2)\\,random(1)*255)"
        try Tools.ffmpeg(["-f", "lavfi", "-i", "nullsrc=s=320x240:r=30,geq=lum='\(luma)':cb=128:cr=128", "-frames:v", "30",
                          "-pix_fmt", "yuv420p", "-f", "rawvideo", raw])
        var environment = ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": CameraTests.camera,
                           "PRISM_FAKE_V4L2_CLIP": "320x240:\(raw)"]
        environment["PRISM_FAKE_V4L2_SIZES"] = "320x240"
        let takes = dir.path("takes")
        try FileManager.default.createDirectory(atPath: takes, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["record", takes, CameraTests.camera, "--size", "320x240", "--segment-size", "400k", "--start",
                             "--preset", "ultrafast"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        try process.run()
        Thread.sleep(forTimeInterval: 4)
        input.fileHandleForWriting.write(Data("quit\n".utf8))
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, log)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: takes)) ?? []).filter { $0.hasSuffix(".mp4") }
        XCTAssertGreaterThanOrEqual(names.count, 2, "\(names)\n\(log)")
        // In the order they were recorded (names within one second sort out of order: -2 after none).
        let order = log.split(separator: "\n").compactMap { line in names.firstIndex { line.contains("recording \(takes)/\($0)") } }
        XCTAssertEqual(Set(order).count, names.count, log)
        func number(_ path: String, _ index: Int) throws -> Int {
            let image = try MediaInspector.frameRGBA(path, index: index)
            return (0..<5).reduce(0) { sum, bit in
                sum | (image.pixels[(8 * image.size.width + 16 * bit + 8) * 4] > 128 ? 1 << bit : 0)
            }
        }
        var frames = 0, previous: (path: String, count: Int)?
        for name in order.map({ names[$0] }) {
            let path = takes + "/" + name
            XCTAssertLessThanOrEqual(try size(path), 400_000, "\(name) is within the segment size")
            let count = try MediaInspector.inspect(path).videoFrameCount
            XCTAssertGreaterThan(count, 0, name)
            frames += count
            XCTAssert(log.contains("finished \(path) (\(count) frames"), "the log counts what the take holds\n\(log)")
            // The next take begins with the very next frame of the camera (the clip loops every 30).
            if let previous {
                let last = try number(previous.path, previous.count - 1), first = try number(path, 0)
                XCTAssertEqual((first - last + 30) % 30, 1, "\(name) goes on from the frame the last take ended with")
            }
            previous = (path, count)
        }
        XCTAssertGreaterThan(frames, 30, "about four seconds of a 30 fps camera")
    }
}
