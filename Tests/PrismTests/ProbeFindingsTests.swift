import Foundation
import XCTest
import PrismCore
import PrismMedia
import PrismPipeline

/// The smaller findings of the probe — what a run reports is what it wrote, a
/// variable-rate file is not "truncated", and careless arguments get a message that fits.
final class ProbeFindingsTests: XCTestCase {
    let dir = ScratchDirectory()

    private var camera: [String: String] {
        get throws { ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": CameraTests.camera] }
    }

    /// The "finished PATH (N frames, SIZE)" lines of record's log, by path.
    private func finishedLines(_ log: String) -> [String: (frames: Int, size: String)] {
        var lines: [String: (Int, String)] = [:]
        for line in log.split(separator: "\n") {
            guard let range = line.range(of: #"finished (\S+) \((\d+) frames, ([^)]+)\)"#, options: .regularExpression) else { continue }
            let parts = line[range].dropFirst("finished ".count).split(separator: " ", maxSplits: 1)
            let inside = parts[1].dropFirst().dropLast().components(separatedBy: " frames, ")
            lines[String(parts[0])] = (Int(inside[0]) ?? -1, inside[1])
        }
        return lines
    }

    func testAVariableRateMatroskaIsNotCalledTruncated() throws {
        // The first second at 60 fps, then every 4th frame: 75 frames over 2 s, "60 fps" in the header.
        let vfr = dir.path("vfr.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=60:duration=2", "-vf", "select='lt(t,1)+not(mod(n,4))'",
                          "-fps_mode", "vfr", "-c:v", "libx264", "-preset", "ultrafast", vfr])
        let result = try Tools.run(Tools.prism, ["run", vfr, "-o", dir.path("out.mkv"), "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "", "a whole variable-rate file is not truncated")
        XCTAssertEqual(try MediaInspector.inspect(dir.path("out.mkv")).videoFrameCount, 75)
        // A Matroska file really cut short still is (by time: Matroska gives no frame count).
        let whole = dir.path("whole.mkv"), cut = dir.path("cut.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25:duration=4", "-c:v", "libx264", "-preset", "ultrafast", whole])
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        let short = try Tools.run(Tools.prism, ["run", cut, "-o", dir.path("short.mkv"), "--quiet"])
        XCTAssertEqual(short.status, 0, short.stderr)
        XCTAssertTrue(short.stderr.contains("warning: \(cut) ended") && short.stderr.contains("truncated or damaged"), short.stderr)
    }

    func testRecordSaysWhatIsWrongWithItsArguments() throws {
        let file = dir.path("afile")
        try Data().write(to: URL(fileURLWithPath: file))
        let result = try Tools.run(Tools.prism, ["record", file])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stderrLines, ["prism: \(file): is a file; record writes its takes into a directory"])
        // `camera DEVICE` with the pattern as input: said, not silently ignored.
        let pattern = try Tools.run(Tools.prism, ["record", dir.url.path, "--size", "64x48"], stdin: Data("camera /dev/video9\nquit\n".utf8),
                                    timeout: 60)
        XCTAssertEqual(pattern.status, 0, pattern.stderr)
        XCTAssertTrue(pattern.stderr.contains("camera /dev/video9: the input is the pattern, not a camera"), pattern.stderr)
    }

    func testAFullDiskTakeReportsWhatTheFileHolds() throws {
        let disk = try SmallDisk(in: dir, size: "256k")
        let result = try Tools.run(Tools.prism, ["record", disk.path, CameraTests.camera, "--size", "640x480", "--crf", "0",
                                                 "--preset", "ultrafast", "--start"], environment: try camera, timeout: 120)
        let finished = finishedLines(result.stderr)
        XCTAssertEqual(finished.count, 1, result.stderr)
        for (path, reported) in finished {
            XCTAssertEqual(reported.frames, try MediaInspector.inspect(path).videoFrameCount, "\(path)\n\(result.stderr)")
            let bytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64)
            XCTAssertEqual(reported.size, ByteCount.text(bytes), result.stderr)
        }
    }

    func testAStalledCameraTakeReportsItsSize() throws {
        var environment = try camera
        environment["PRISM_FAKE_V4L2_STALL_AFTER"] = "20"
        let result = try Tools.run(Tools.prism, ["record", dir.url.path, CameraTests.camera, "--size", "320x240", "--start"],
                                   environment: environment, timeout: 60)
        let finished = finishedLines(result.stderr)
        XCTAssertEqual(finished.count, 1, result.stderr)
        for (path, reported) in finished {
            let bytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64)
            XCTAssertGreaterThan(bytes, 0)
            XCTAssertEqual(reported.size, ByteCount.text(bytes), result.stderr)
            XCTAssertEqual(reported.frames, try MediaInspector.inspect(path).videoFrameCount, result.stderr)
        }
    }
}
