import Foundation
import XCTest
import PrismCore

/// The virtual camera output end to end: the built `prism` writes to an emulated V4L2 output device
/// (libFakeV4L2.so preloaded, `PRISM_FAKE_V4L2_CAPS=loopback`: video output with read/write I/O, as
/// v4l2loopback), which appends every frame it is given to a file and says the format the writer set.
/// The input is raw frames on stdin with exactly known pixels, through `invert`; every recorded frame is
/// checked against the inverted input computed here on the CPU, in the device's own layout (its
/// `bytesperline`, padded to 128 bytes by the fake, not the GPU buffer's).
final class VirtualCameraTests: XCTestCase {
    let dir = ScratchDirectory()
    static let device = "/dev/video62"
    static let size = (width: 320, height: 240)
    static let frameCount = 8

    /// A `prism` that refuses the output exits before reading stdin; writing the rest of the input must then
    /// fail as EPIPE in the feeding thread, not kill the test process with SIGPIPE.
    override func setUp() {
        super.setUp()
        signal(SIGPIPE, SIG_IGN)
    }

    // MARK: the input and what invert makes of it

    /// Frame k of the input, BT.601 limited range (untagged SD): a luma ramp right and down, brighter by
    /// 4 per frame, and one chroma per frame; inside the R'G'B' cube, so inverting never clips.
    static func inputSample(_ k: Int, _ x: Int, _ y: Int) -> (y: Int, cb: Int, cr: Int) {
        (40 + x * 100 / size.width + y * 40 / size.height + 4 * k, 140 - 3 * k, 118 + 3 * k)
    }

    /// The input as yuv420p frames (chroma constant per frame, so any chroma siting gives the same samples).
    static func rawInput() -> Data {
        var data = Data()
        let (w, h) = size
        for k in 0..<frameCount {
            var frame = [UInt8](repeating: 0, count: w * h * 3 / 2)
            for y in 0..<h { for x in 0..<w { frame[y * w + x] = UInt8(inputSample(k, x, y).y) } }
            let chroma = inputSample(k, 0, 0)
            for i in 0..<(w * h / 4) {
                frame[w * h + i] = UInt8(chroma.cb)
                frame[w * h + w * h / 4 + i] = UInt8(chroma.cr)
            }
            data.append(contentsOf: frame)
        }
        return data
    }

    /// Inverted R'G'B' is 1 - R'G'B', so in limited-range Y'CbCr: Y' → 251 - Y' (16 + 235 - Y'), Cb/Cr → 256 - C.
    static func invertedYUV(_ k: Int, _ x: Int, _ y: Int) -> (y: Int, cb: Int, cr: Int) {
        let s = inputSample(k, x, y)
        return (251 - s.y, 256 - s.cb, 256 - s.cr)
    }

    /// The inverted input as full-range 8-bit R'G'B' (BT.601 limited → R'G'B' with the standard's own numbers).
    static func invertedRGB(_ k: Int, _ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let s = inputSample(k, x, y)
        let luma = Double(s.y - 16) / 219, pb = Double(s.cb - 128) / 224, pr = Double(s.cr - 128) / 224
        let r = luma + 1.402 * pr, g = luma - 0.344136 * pb - 0.714136 * pr, b = luma + 1.772 * pb
        func code(_ v: Double) -> Int { Int((255 * (1 - v)).rounded()) }
        return (code(r), code(g), code(b))
    }

    // MARK: running against the fake

    private func prism(_ arguments: [String], _ variables: [String: String], stdin: Data? = nil) throws -> ProcessResult {
        var environment = ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": Self.device,
                           "PRISM_FAKE_V4L2_RECORD": dir.path("frames.raw")]
        environment.merge(variables) { $1 }
        return try Tools.run(Tools.prism, arguments, stdin: stdin, environment: environment, timeout: 120)
    }

    /// What the fake says the writer set and sent (`<RECORD>.txt`).
    private func recordInfo() throws -> [String: String] {
        let text = try String(contentsOfFile: dir.path("frames.raw.txt"), encoding: .utf8)
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    /// "prism: virtual camera DEVICE: FOURCC WxH (N bytes a line), W frames written, D dropped" → (W, D).
    private func sinkCounts(_ stderr: String) -> (written: Int, dropped: Int)? {
        guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("prism: virtual camera \(Self.device): ") })
        else { return nil }
        let words = line.split(separator: " ").map(String.init)
        guard let w = words.firstIndex(of: "written,"), let d = words.firstIndex(of: "dropped"),
              let written = Int(words[w - 2]), let dropped = Int(words[d - 1]) else { return nil }
        return (written, dropped)
    }

    /// Runs the input through `invert` into the fake offering `formats`; checks the negotiated format,
    /// the count, and every recorded frame against `expected(k, frame, bytesPerLine)` (its largest error),
    /// frames in input order. Returns the frames written and dropped.
    @discardableResult
    private func checkFormat(_ formats: String, fourcc: String, bytesPerLine: Int, rgb: Bool,
                             variables: [String: String] = [:], tolerance: Int,
                             largestError: (_ k: Int, _ frame: [UInt8], _ bytesPerLine: Int) -> Int,
                             file: StaticString = #filePath, line: UInt = #line) throws -> (written: Int, dropped: Int) {
        let result = try prism(["run", "-", "--input-format", "\(Self.size.width)x\(Self.size.height):yuv420p:30",
                                "--filter", "invert", "-o", "v4l2:\(Self.device)"],
                               ["PRISM_FAKE_V4L2_CAPS": "loopback", "PRISM_FAKE_V4L2_FORMATS": formats,
                                "PRISM_FAKE_V4L2_SIZES": "640x480,320x240", "PRISM_FAKE_V4L2_STRIDE_ALIGN": "128"]
                                .merging(variables) { $1 },
                               stdin: Self.rawInput())
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        let info = try recordInfo()
        XCTAssertEqual(info["fourcc"], fourcc, file: file, line: line)
        XCTAssertEqual(info["width"], "\(Self.size.width)", file: file, line: line)
        XCTAssertEqual(info["height"], "\(Self.size.height)", file: file, line: line)
        XCTAssertEqual(info["bytesperline"], "\(bytesPerLine)", file: file, line: line)
        XCTAssertEqual(info["fps"], "30/1", file: file, line: line)
        // The colour tags readers decode by: BT.601 limited range Y'CbCr (untagged SD input), or full-range R'G'B'.
        XCTAssertNotEqual(info["colorspace"], "0", "colorspace left at DEFAULT", file: file, line: line)
        if rgb {
            XCTAssertEqual(info["quantization"], "\(V4L2Quantization.full)", file: file, line: line)
        } else {
            XCTAssertEqual(info["ycbcr_enc"], "\(V4L2Quantization.encoding601)", file: file, line: line)
            XCTAssertEqual(info["quantization"], "\(V4L2Quantization.limited)", file: file, line: line)
        }
        let imageBytes = try XCTUnwrap(Int(info["sizeimage"] ?? ""), file: file, line: line)
        let frames = try XCTUnwrap(Int(info["frames"] ?? ""), file: file, line: line)
        let recorded = try Data(contentsOf: URL(fileURLWithPath: dir.path("frames.raw")))
        XCTAssertEqual(info["bytes"], "\(frames * imageBytes)", "a write that was not one whole frame", file: file, line: line)
        XCTAssertEqual(recorded.count, frames * imageBytes, file: file, line: line)
        // Frames the engine skipped (the device is a live output: it never holds the engine back) or the
        // device refused are counted; none is lost without a count, none invented.
        let counts = try XCTUnwrap(sinkCounts(result.stderr), result.stderr, file: file, line: line)
        XCTAssertEqual(counts.written, frames, result.stderr, file: file, line: line)
        XCTAssertEqual(counts.written + counts.dropped, Self.frameCount, result.stderr, file: file, line: line)
        XCTAssertGreaterThanOrEqual(frames, 1, file: file, line: line)
        var previous = -1
        for index in 0..<frames {
            let frame = [UInt8](recorded[(index * imageBytes)..<((index + 1) * imageBytes)])
            // Which input frame it is: the one it is closest to (each is 4 code values brighter than the last).
            let errors = (0..<Self.frameCount).map { largestError($0, frame, bytesPerLine) }
            let k = errors.indices.min { errors[$0] < errors[$1] }!
            XCTAssertLessThanOrEqual(errors[k], tolerance, "recorded frame \(index) (input frame \(k))", file: file, line: line)
            XCTAssertGreaterThan(k, previous, "recorded frame \(index) is input frame \(k), after \(previous)", file: file, line: line)
            previous = k
        }
        return counts
    }

    /// Largest difference of a Y'CbCr frame from inverted input frame k, by the samples' positions in the
    /// device's layout: `luma(x, y)` and `chroma(cx, cy)` are byte offsets (chroma at 2x2 or 2x1 blocks).
    private static func largestYUVError(_ k: Int, _ frame: [UInt8], chromaRows: Int,
                                        luma: (Int, Int) -> Int, chroma: (Int, Int) -> (cb: Int, cr: Int)) -> Int {
        var worst = 0
        let (w, h) = size
        for y in 0..<h {
            for x in 0..<w { worst = max(worst, abs(Int(frame[luma(x, y)]) - invertedYUV(k, x, y).y)) }
        }
        let expected = invertedYUV(k, 0, 0)
        for cy in 0..<chromaRows {
            for cx in 0..<(w / 2) {
                let at = chroma(cx, cy)
                worst = max(worst, abs(Int(frame[at.cb]) - expected.cb), abs(Int(frame[at.cr]) - expected.cr))
            }
        }
        return worst
    }

    // MARK: tests

    func testYUYVFramesMatchTheInvertedInput() throws {
        // Y0 Cb Y1 Cr per pixel pair; 640 bytes a line (a multiple of 128 already).
        try checkFormat("NV12,YUYV", fourcc: "YUYV", bytesPerLine: 640, rgb: false, tolerance: 2) { k, frame, line in
            Self.largestYUVError(k, frame, chromaRows: Self.size.height, luma: { x, y in y * line + 2 * x },
                                 chroma: { cx, cy in (cy * line + 4 * cx + 1, cy * line + 4 * cx + 3) })
        }
    }

    func testNV12FramesMatchTheInvertedInputInPaddedRows() throws {
        // 320 bytes of luma in 384-byte lines, then interleaved CbCr lines of the same pitch.
        try checkFormat("MJPG,NV12", fourcc: "NV12", bytesPerLine: 384, rgb: false, tolerance: 2) { k, frame, line in
            let chroma = line * Self.size.height
            return Self.largestYUVError(k, frame, chromaRows: Self.size.height / 2, luma: { x, y in y * line + x },
                                        chroma: { cx, cy in (chroma + cy * line + 2 * cx, chroma + cy * line + 2 * cx + 1) })
        }
    }

    func testYU12FramesMatchTheInvertedInputInPaddedRows() throws {
        // Y lines of 384 bytes, then Cb and Cr planes with lines of 192.
        try checkFormat("YU12", fourcc: "YU12", bytesPerLine: 384, rgb: false, tolerance: 2) { k, frame, line in
            let cb = line * Self.size.height, half = line / 2, cr = cb + half * Self.size.height / 2
            return Self.largestYUVError(k, frame, chromaRows: Self.size.height / 2, luma: { x, y in y * line + x },
                                        chroma: { cx, cy in (cb + cy * half + cx, cr + cy * half + cx) })
        }
    }

    func testRGB24FramesMatchTheInvertedInput() throws {
        // R G B per pixel, 960 bytes in 1024-byte lines.
        try checkFormat("RGB3", fourcc: "RGB3", bytesPerLine: 1024, rgb: true, tolerance: 3) { k, frame, line in
            var worst = 0
            for y in 0..<Self.size.height {
                for x in 0..<Self.size.width {
                    let e = Self.invertedRGB(k, x, y), p = y * line + 3 * x
                    worst = max(worst, abs(Int(frame[p]) - e.r), abs(Int(frame[p + 1]) - e.g), abs(Int(frame[p + 2]) - e.b))
                }
            }
            return worst
        }
    }

    func testBGR24FramesMatchTheInvertedInput() throws {
        try checkFormat("BGR3", fourcc: "BGR3", bytesPerLine: 1024, rgb: true, tolerance: 3) { k, frame, line in
            var worst = 0
            for y in 0..<Self.size.height {
                for x in 0..<Self.size.width {
                    let e = Self.invertedRGB(k, x, y), p = y * line + 3 * x
                    worst = max(worst, abs(Int(frame[p]) - e.b), abs(Int(frame[p + 1]) - e.g), abs(Int(frame[p + 2]) - e.r))
                }
            }
            return worst
        }
    }

    func testAFullDeviceDropsFramesWithoutStallingOrFailingTheRun() throws {
        // Every third write() answers EAGAIN (a loopback nobody reads): those frames are dropped and counted.
        let counts = try checkFormat("YUYV", fourcc: "YUYV", bytesPerLine: 640, rgb: false,
                                     variables: ["PRISM_FAKE_V4L2_REFUSE_EVERY": "3"], tolerance: 2) { k, frame, line in
            Self.largestYUVError(k, frame, chromaRows: Self.size.height, luma: { x, y in y * line + 2 * x },
                                 chroma: { cx, cy in (cy * line + 4 * cx + 1, cy * line + 4 * cx + 3) })
        }
        let refused = try XCTUnwrap(Int(try recordInfo()["refused"] ?? ""))
        XCTAssertGreaterThanOrEqual(refused, 1)
        XCTAssertGreaterThanOrEqual(counts.dropped, refused)
    }

    func testHDFramesAreTaggedBT709() throws {
        // The pattern (R'G'B') at 1280x720 is packed as BT.709 limited range, and the device is told so.
        let result = try prism(["run", "--size", "1280x720", "--frames", "3", "-o", "v4l2:\(Self.device)"],
                               ["PRISM_FAKE_V4L2_CAPS": "loopback", "PRISM_FAKE_V4L2_FORMATS": "YUYV"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let info = try recordInfo()
        XCTAssertEqual(info["width"], "1280")
        XCTAssertEqual(info["colorspace"], "\(V4L2Quantization.colorspaceRec709)")
        XCTAssertEqual(info["ycbcr_enc"], "\(V4L2Quantization.encoding709)")
        XCTAssertEqual(info["quantization"], "\(V4L2Quantization.limited)")
        let counts = try XCTUnwrap(sinkCounts(result.stderr), result.stderr)
        XCTAssertEqual(counts.written + counts.dropped, 3)
        XCTAssertEqual(info["frames"], "\(counts.written)")
    }

    func testACameraFeedsTheVirtualCamera() throws {
        // The seed's use: a (fake) webcam in, the virtual camera out, both emulated in the one process. The
        // camera's picture, BT.601 limited range: blue (Y' 41, Cb 240, Cr 110) with a red bar (81, 90, 240).
        let camera = CameraTests.camera
        let result = try Tools.run(Tools.prism, ["run", camera, "--frames", "10", "-o", "v4l2:\(Self.device)"],
                                   environment: ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": camera,
                                                 "PRISM_FAKE_V4L2_1": Self.device, "PRISM_FAKE_V4L2_1_CAPS": "loopback",
                                                 "PRISM_FAKE_V4L2_1_FORMATS": "YUYV", "PRISM_FAKE_V4L2_1_RECORD": dir.path("frames.raw")],
                                   timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let info = try recordInfo()
        XCTAssertEqual(info["fourcc"], "YUYV")
        XCTAssertEqual(info["width"], "640")
        let counts = try XCTUnwrap(sinkCounts(result.stderr), result.stderr)
        XCTAssertEqual(counts.written + counts.dropped, 10, result.stderr)
        XCTAssertEqual(info["frames"], "\(counts.written)")
        XCTAssertGreaterThanOrEqual(counts.written, 1)
        let recorded = try Data(contentsOf: URL(fileURLWithPath: dir.path("frames.raw")))
        let imageBytes = 640 * 2 * 480
        XCTAssertEqual(recorded.count, counts.written * imageBytes)
        func near(_ a: UInt8, _ b: Int) -> Bool { abs(Int(a) - b) <= 3 }
        for index in 0..<counts.written {
            // Row 240's pixel pairs: blue but for the bar's (32 pixels: 16 pairs, 2 of which may be mixed).
            let row = index * imageBytes + 240 * 1280
            var blue = 0, red = 0
            for pair in 0..<320 {
                let p = recorded[(row + 4 * pair)..<(row + 4 * pair + 4)].map { $0 }
                if near(p[0], 41), near(p[2], 41), near(p[1], 240), near(p[3], 110) { blue += 1 }
                if near(p[0], 81), near(p[2], 81), near(p[1], 90), near(p[3], 240) { red += 1 }
            }
            XCTAssert(blue >= 300 && red >= 14 && blue + red >= 318, "frame \(index): \(blue) blue, \(red) red pairs")
        }
    }

    func testADeviceThatIsNotAnOutputDeviceFailsWithOneLineAndWritesNothing() throws {
        let device = Self.device
        let cases: [(output: String, variables: [String: String], message: String)] = [
            ("v4l2:\(device)", [:], "prism: \(device) is not a V4L2 output device (it is a capture device: video capture, streaming I/O)"),
            (device, [:], "prism: \(device) is not a V4L2 output device (it is a capture device: video capture, streaming I/O)"),
            ("v4l2:\(device)", ["PRISM_FAKE_V4L2_CAPS": "output"],
             "prism: virtual camera \(device): VIDIOC_QUERYCAP: no read/write I/O, which Prism writes frames with "
             + "(mmap streaming is not implemented; it offers: video output, streaming I/O)"),
            ("v4l2:\(device)", ["PRISM_FAKE_V4L2_CAPS": "loopback", "PRISM_FAKE_V4L2_FORMATS": "MJPG,H264"],
             "prism: virtual camera \(device): VIDIOC_ENUM_FMT: offers no format Prism writes (it offers MJPG, H264; "
             + "Prism writes YUYV, NV12, YU12, RGB3, BGR3)"),
            ("v4l2:\(device)", ["PRISM_FAKE_V4L2_CAPS": "loopback", "PRISM_FAKE_V4L2_SIZES": "640x480"],
             "prism: virtual camera \(device): VIDIOC_S_FMT: asked for YUYV 320x240, the device gives YUYV 640x480 "
             + "(--size 640x480 matches it)"),
            ("v4l2:/dev/null", [:], "prism: virtual camera /dev/null: VIDIOC_QUERYCAP: Inappropriate ioctl for device (not a V4L2 device)"),
            ("v4l2:/dev/video59", [:], "prism: virtual camera /dev/video59: open: No such file or directory"),
        ]
        for item in cases {
            let result = try prism(["run", "--size", "320x240", "--frames", "5", "--filter", "invert", "-o", item.output],
                                   item.variables)
            XCTAssertEqual(result.status, 1, item.message)
            XCTAssertEqual(result.stderrLines, [item.message])
            XCTAssertEqual(dir.contents(), [], "\(item.output): nothing may be written")
        }
    }
}

/// V4L2's enum values the fake reports (linux/videodev2.h), spelled here so the test does not import C.
private enum V4L2Quantization {
    static let full = 1, limited = 2
    static let encoding601 = 1, encoding709 = 2
    static let colorspaceRec709 = 3
}
