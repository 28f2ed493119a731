import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Inputs as they come from real cameras and phones, end to end through the built `prism`: Motion-JPEG
/// cameras (the emulated camera of CameraTests sending real JPEGs), a camera's rate and frame limit,
/// phone movies with a display matrix, `--mirror`, pipes, image sequences and odd sizes. Outputs are
/// decoded again and compared with pictures made independently (FFmpeg's own autorotation, the fake
/// camera's known drawing, a CPU mirror of an unmirrored run).
final class InputsTests: XCTestCase {
    let dir = ScratchDirectory()
    static let camera = "/dev/video62"

    // MARK: helpers

    private func prismWithCamera(_ arguments: [String], _ variables: [String: String]) throws -> ProcessResult {
        var environment = ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": Self.camera]
        environment.merge(variables) { $1 }
        return try Tools.run(Tools.prism, arguments, environment: environment, timeout: 90)
    }

    private func prism(_ arguments: [String], stdin: Data? = nil) throws -> ProcessResult {
        try Tools.run(Tools.prism, arguments, stdin: stdin, timeout: 120)
    }

    private func rgb(_ image: RGBAImage, _ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let i = (y * image.size.width + x) * 4
        return (Int(image.pixels[i]), Int(image.pixels[i + 1]), Int(image.pixels[i + 2]))
    }

    /// Mean absolute difference of two same-sized images over R, G, B (0…255).
    private func meanDifference(_ a: RGBAImage, _ b: RGBAImage, mapping: (Int, Int) -> (Int, Int) = { ($0, $1) }) -> Double {
        precondition(a.size == b.size)
        var total = 0
        for y in 0..<a.size.height {
            for x in 0..<a.size.width {
                let (bx, by) = mapping(x, y)
                let p = rgb(a, x, y), q = rgb(b, bx, by)
                total += abs(p.r - q.r) + abs(p.g - q.g) + abs(p.b - q.b)
            }
        }
        return Double(total) / Double(3 * a.size.width * a.size.height)
    }

    /// The fake camera's frame number, read from its 16 counter blocks.
    private func counter(_ image: RGBAImage) -> Int {
        (0..<16).reduce(0) { value, bit in
            let p = rgb(image, 8 + 16 * bit + 8, 16)
            return p.r + p.g + p.b > 3 * 128 ? value | 1 << bit : value
        }
    }

    /// Checks the fake's picture for frame `k`: the red bar where it is drawn on the blue background.
    private func assertCameraPicture(_ image: RGBAImage, _ label: String, file: StaticString = #filePath, line: UInt = #line) -> Int {
        let k = counter(image)
        let width = image.size.width, middle = image.size.height / 2
        let bar = max(8, (width / 20) & ~3)
        let x = (4 * k) % (width - bar) & ~1
        let inBar = rgb(image, x + bar / 2, middle)
        XCTAssert(inBar.r > 190 && inBar.g < 70 && inBar.b < 70, "\(label): frame \(k) bar at x=\(x) is \(inBar), not red", file: file, line: line)
        let away = rgb(image, (x + bar / 2 + width / 2) % width, middle)
        XCTAssert(away.r < 70 && away.g < 70 && away.b > 190, "\(label): frame \(k) background is \(away), not blue", file: file, line: line)
        return k
    }

    /// "prism: N frames in …" → N.
    private func framesWritten(_ stderr: String) -> Int? {
        guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("prism: ") && $0.contains(" frames in ") }) else { return nil }
        return Int(line.split(separator: " ")[1])
    }

    // MARK: MJPEG cameras

    /// A camera that offers only Motion-JPEG: real JPEGs (libavcodec's encoder in the fake) are decoded and
    /// go through the GPU; the picture (bar position per frame number, colours) and the timing survive.
    func testMJPEGCameraIsDecodedAndRecorded() throws {
        let output = dir.path("mjpeg.mkv")
        let result = try prismWithCamera(["run", Self.camera, "-o", output, "--codec", "ffv1", "--size", "640x480",
                                          "--fps", "30", "--frames", "24"],
                                         ["PRISM_FAKE_V4L2_FORMATS": "MJPG"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssert(result.stderr.contains("MJPG 640x480 @ 30 fps (decoded on the CPU)"), result.stderr)
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, 24)
        XCTAssertEqual(report.size, Size(width: 640, height: 480))
        var previous = -1, first = 0
        let seconds = report.videoPTS.map(\.seconds)
        for index in [0, 1, 12, 23] {
            let k = assertCameraPicture(try MediaInspector.frameRGBA(output, index: index), "frame \(index)")
            if index == 0 { first = k }
            XCTAssertGreaterThan(k, previous, "the frame counter goes forward")
            previous = k
            XCTAssertEqual(Double(k - first) / 30, seconds[index], accuracy: 0.002, "frame \(index) is camera frame \(k)")
        }
    }

    /// Some webcams send 4:2:0 JPEGs: the source announces what its first JPEG decodes to, so the graph is
    /// compiled once for it (no recompile at the first frame), and the picture is right.
    func testMJPEGCameraWith420ChromaIsTakenAsItIs() throws {
        let output = dir.path("mjpeg420.mkv")
        let result = try prismWithCamera(["run", Self.camera, "-o", output, "--codec", "ffv1", "--size", "320x240", "--frames", "6"],
                                         ["PRISM_FAKE_V4L2_FORMATS": "MJPG", "PRISM_FAKE_V4L2_MJPG_CHROMA": "420"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(result.stderr.contains("recompiled"), result.stderr)
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, 6)
        _ = assertCameraPicture(try MediaInspector.frameRGBA(output, index: 5), "frame 5")
    }

    /// Offered both, at a size both give, the uncompressed format wins (no CPU decode).
    func testUncompressedFormatIsPreferredWhenItGivesTheSize() throws {
        let output = dir.path("yuyv.mp4")
        let result = try prismWithCamera(["run", Self.camera, "-o", output, "--size", "320x240", "--frames", "3"],
                                         ["PRISM_FAKE_V4L2_FORMATS": "MJPG,YUYV"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssert(result.stderr.contains("YUYV 320x240"), result.stderr)
    }

    // MARK: camera rate and frame limit

    func testCameraRateItCannotGiveIsReported() throws {
        let output = dir.path("rate.mp4")
        let result = try prismWithCamera(["run", Self.camera, "-o", output, "--size", "320x240", "--fps", "10", "--frames", "3"],
                                         ["PRISM_FAKE_V4L2_FPS": "30,15"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stderrLines.filter { $0.contains("cannot give 10 fps") }
        XCTAssertEqual(lines.count, 1, result.stderr)
        XCTAssert(lines.first?.contains("runs at 15 fps") == true, result.stderr)
        // A rate it has is not reported.
        let fine = try prismWithCamera(["run", Self.camera, "-o", dir.path("rate15.mp4"), "--size", "320x240", "--fps", "15", "--frames", "3"],
                                       ["PRISM_FAKE_V4L2_FPS": "30,15"])
        XCTAssertEqual(fine.status, 0, fine.stderr)
        XCTAssertFalse(fine.stderr.contains("cannot give"), fine.stderr)
    }

    /// `--frames N` on a camera writes N frames even when the live queue drops some on the way (60 fps
    /// through two wide blurs outruns llvmpipe here, so frames are dropped; whether they are or not, the
    /// file holds N).
    func testCameraFrameLimitCountsWrittenFrames() throws {
        let output = dir.path("limit.mp4")
        let result = try prismWithCamera(["run", Self.camera, "-o", output, "--size", "640x480", "--fps", "60", "--frames", "30",
                                          "--filter", "blur(12), blur(12)"],
                                         ["PRISM_FAKE_V4L2_FORMATS": "YUYV", "PRISM_FAKE_V4L2_FPS": "60"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, 30)
        XCTAssertEqual(framesWritten(result.stderr), 30, result.stderr)
        XCTAssertFalse(result.stderr.contains("stopped early"), "reaching --frames is not an interruption: \(result.stderr)")
    }

    // MARK: rotation and mirroring

    /// Phone-style clips (a display matrix written by Debian 12's FFmpeg 5.1 from `-metadata:s:v rotate=`,
    /// stream-copied) come out upright, with width and height swapped, exactly as FFmpeg's own
    /// autorotation shows them; `--no-autorotate` keeps the stored picture.
    func testDisplayMatrixIsHonouredAndCanBeTurnedOff() throws {
        let plain = dir.path("plain.mp4")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=10", "-frames:v", "4", "-c:v", "libx264",
                          "-pix_fmt", "yuv420p", "-crf", "10", plain])
        for angle in ["90", "270", "180"] {
            let rotated = dir.path("r\(angle).mp4")
            try Tools.ffmpeg(["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=\(angle)", rotated])
            // FFmpeg's autorotated picture: the independent reference.
            let reference = dir.path("r\(angle)-ffmpeg.png")
            try Tools.ffmpeg(["-i", rotated, "-frames:v", "1", reference])
            let expected = try ImageFile.read(path: reference)

            let output = dir.path("r\(angle)-prism.mkv")
            let result = try prism(["run", rotated, "-o", output, "--codec", "ffv1"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(result.stderrLines.filter { $0.contains("turned upright") }.count, 1, result.stderr)
            let frame = try MediaInspector.frameRGBA(output, index: 0)
            XCTAssertEqual(frame.size, expected.size, "rotate=\(angle)")
            XCTAssertEqual(frame.size, angle == "180" ? Size(width: 320, height: 240) : Size(width: 240, height: 320))
            guard frame.size == expected.size else { continue }
            XCTAssertLessThan(meanDifference(frame, expected), 4, "rotate=\(angle): not FFmpeg's upright picture")
            // The picture is not symmetric: the turned-over one is far from it (the check can fail).
            let w = frame.size.width, h = frame.size.height
            XCTAssertGreaterThan(meanDifference(frame, expected, mapping: { (w - 1 - $0, h - 1 - $1) }), 20)

            let stored = dir.path("r\(angle)-stored.mkv")
            let kept = try prism(["run", rotated, "-o", stored, "--codec", "ffv1", "--no-autorotate"])
            XCTAssertEqual(kept.status, 0, kept.stderr)
            XCTAssertFalse(kept.stderr.contains("turned upright"), kept.stderr)
            XCTAssertEqual(try MediaInspector.inspect(stored).size, Size(width: 320, height: 240))
        }
    }

    /// `--mirror` swaps left and right: its output is the unmirrored output read right to left.
    func testMirrorSwapsLeftAndRight() throws {
        let straight = dir.path("straight.mkv"), mirrored = dir.path("mirrored.mkv")
        for (path, extra) in [(straight, [String]()), (mirrored, ["--mirror"])] {
            let result = try prism(["run", "--size", "320x180", "--frames", "2", "--codec", "ffv1", "-o", path] + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let a = try MediaInspector.frameRGBA(straight, index: 1), b = try MediaInspector.frameRGBA(mirrored, index: 1)
        XCTAssertEqual(a.size, b.size)
        XCTAssertLessThan(meanDifference(b, a, mapping: { (a.size.width - 1 - $0, $1) }), 1)
        XCTAssertGreaterThan(meanDifference(b, a), 5, "the pattern is not symmetric, so an unmirrored output would fail")
    }

    // MARK: pipes and image sequences

    /// `pipe:0`, `pipe://0`, `/dev/stdin` and a FIFO are read like files: every frame arrives (back-pressure),
    /// none is dropped, although demuxing is far faster than the GPU.
    func testPipesAndFIFOsNeverDropFrames() throws {
        let movie = dir.path("in.nut")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "60", "-c:v", "mpeg4", "-q:v", "3", movie])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: movie))
        for input in ["pipe:0", "pipe://0", "/dev/stdin"] {
            let output = dir.path("pipe-\(input.filter(\.isLetter)).mp4")
            let result = try prism(["run", input, "-o", output, "--filter", "blur(2)"], stdin: bytes)
            XCTAssertEqual(result.status, 0, "\(input): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("dropped"), "\(input): \(result.stderr)")
            XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, 60, input)
        }
        let fifo = dir.path("fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let writer = Thread {
            if let handle = FileHandle(forWritingAtPath: fifo) {
                try? handle.write(contentsOf: bytes)
                try? handle.close()
            }
        }
        writer.start()
        let output = dir.path("fifo.mp4")
        let result = try prism(["run", fifo, "-o", output, "--filter", "blur(2)"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, 60)
    }

    /// `img%03d.png` as a plain INPUT: every image, in order, at even timestamps 1/fps apart.
    func testImageSequencePatternWithEvenTimestamps() throws {
        let source = dir.path("clip.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "7", "-c:v", "ffv1", source])
        try Tools.ffmpeg(["-i", source, "-start_number", "1", dir.path("img%03d.png")])
        let output = dir.path("sequence.mkv")
        let result = try prism(["run", dir.path("img%03d.png"), "--fps", "12", "--codec", "ffv1", "-o", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, 7)
        for (index, pts) in report.videoPTS.enumerated() {
            XCTAssertEqual(pts.seconds, Double(index) / 12, accuracy: 0.001, "frame \(index)")
        }
        // In order: output frame 4 is img005.png.
        let still = try ImageFile.read(path: dir.path("img005.png"))
        XCTAssertLessThan(meanDifference(try MediaInspector.frameRGBA(output, index: 4), still), 3)
        XCTAssertGreaterThan(meanDifference(try MediaInspector.frameRGBA(output, index: 3), still), 3)

        let missing = try prism(["run", dir.path("none%03d.png"), "-o", dir.path("missing.mp4")])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertEqual(missing.stderrLines.count, 1, missing.stderr)
        XCTAssert(missing.stderr.contains("no image of the sequence exists"), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("missing.mp4")))
    }

    // MARK: odd sizes

    /// 641x361 encodes with H.264 and HEVC (cropped to 640x360, said once); FFV1 keeps the odd size.
    func testOddSizesAreCroppedForSubsampledCodecsOnly() throws {
        for codec in ["h264", "hevc"] {
            let output = dir.path("odd-\(codec).mp4")
            let result = try prism(["run", "--size", "641x361", "--frames", "3", "--codec", codec, "-o", output])
            XCTAssertEqual(result.status, 0, "\(codec): \(result.stderr)")
            XCTAssertEqual(result.stderrLines.filter { $0.contains("needs an even frame size: 641x361 cropped to 640x360") }.count, 1,
                           result.stderr)
            let report = try MediaInspector.inspect(output)
            XCTAssertEqual(report.size, Size(width: 640, height: 360), codec)
            XCTAssertEqual(report.videoFrameCount, 3, codec)
        }
        let lossless = dir.path("odd.mkv")
        let result = try prism(["run", "--size", "641x361", "--frames", "3", "--codec", "ffv1", "-o", lossless])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(result.stderr.contains("even frame size"), result.stderr)
        XCTAssertEqual(try MediaInspector.inspect(lossless).size, Size(width: 641, height: 361))
    }
}
