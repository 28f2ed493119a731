import Foundation
import XCTest
import PrismCore
import PrismMedia

/// ONNX models through the built tool: `render` and `run` (raw frames, an image sequence, the
/// emulated camera) agree with the numpy reference of `scripts/make-test-models` to the 8-bit output's
/// rounding; `filters NET.onnx` describes the passes; bad models are refused in one line with nothing written.
final class ModelRunTests: XCTestCase {
    let dir = ScratchDirectory()
    static let script = Tools.repositoryRoot.appendingPathComponent("scripts/make-test-models").path

    /// The test models, written into this test's scratch directory.
    func models() throws -> String {
        let path = dir.path("models")
        let made = try Tools.run("/usr/bin/python3", [Self.script, path])
        XCTAssertEqual(made.status, 0, made.stderr)
        return path
    }

    /// A `size` crop from the middle of a photograph.
    static func photo(_ size: Size) throws -> RGBAImage {
        let image = try ImageFile.read(path: try Tools.fixture("chelsea.png"))
        let x0 = (image.size.width - size.width) / 2, y0 = (image.size.height - size.height) / 2
        var rgba: [UInt8] = []
        for y in 0..<size.height {
            let from = ((y0 + y) * image.size.width + x0) * 4
            rgba += image.pixels[from..<(from + size.width * 4)]
        }
        return RGBAImage(size: size, pixels: rgba)
    }

    /// The numpy reference of model `name` for `image` (RGB in 0–1, or its Rec. 601 luma for a 1-channel
    /// model): [C, H, W] floats.
    func reference(_ name: String, _ image: RGBAImage, channels: Int = 3) throws -> [Float] {
        let n = image.size.pixelCount
        var x = [Float](repeating: 0, count: channels * n)
        for i in 0..<n {
            let r = Float(image.pixels[i * 4]) / 255, g = Float(image.pixels[i * 4 + 1]) / 255, b = Float(image.pixels[i * 4 + 2]) / 255
            if channels == 1 { x[i] = 0.299 * r + 0.587 * g + 0.114 * b } else { x[i] = r; x[n + i] = g; x[2 * n + i] = b }
        }
        let input = dir.path("\(name).in.f32"), output = dir.path("\(name).out.f32")
        try x.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: input)) }
        let result = try Tools.run("/usr/bin/python3", [Self.script, "--reference", name, input, "\(channels)",
                                                       "\(image.size.height)", "\(image.size.width)", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try Data(contentsOf: URL(fileURLWithPath: output)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// The largest difference in code values between `image`'s RGB and `colour(c, i)` for channel c of
    /// pixel i (0–1, clamped and rounded as the 8-bit output is).
    func worst(_ image: RGBAImage, _ colour: (Int, Int) -> Float) -> Int {
        var worst = 0
        for i in 0..<image.size.pixelCount {
            for c in 0..<3 {
                let want = Int((min(max(colour(c, i), 0), 1) * 255).rounded())
                worst = max(worst, abs(Int(image.pixels[i * 4 + c]) - want))
            }
        }
        return worst
    }

    func testRenderAgreesWithTheReference() throws {
        let models = try models()
        let size = Size(width: 64, height: 48)
        let input = dir.path("in.png")
        let photo = try Self.photo(size)
        try ImageFile.write(photo, to: input)
        // The style-transfer net ends in Tanh: colour = (o · 1 + 1) / 2 puts it in 0–1 (the output parameters).
        let styled = dir.path("styled.png")
        let run = try Tools.run(Tools.prism, ["render", input, "--filter",
                                              "model(file=\(models)/net-style-transfer.onnx, precision=float, output-mean=1, output-scale=2)",
                                              "-o", styled])
        XCTAssertEqual(run.status, 0, run.stderr)
        let out = try ImageFile.read(path: styled)
        XCTAssertEqual(out.size, size)
        let y = try reference("net-style-transfer", photo)
        let n = size.pixelCount
        XCTAssertLessThanOrEqual(worst(out) { c, i in (y[c * n + i] + 1) / 2 }, 1, "style transfer against numpy")
        // Sanity of the comparison itself: the output is not the input, and the reference's range is used.
        XCTAssertGreaterThan(worst(out) { c, i in Float(photo.pixels[i * 4 + c]) / 255 }, 40)

        // A one-channel mask (U-Net, sigmoid) comes out grey.
        let masked = dir.path("mask.png")
        let seg = try Tools.run(Tools.prism, ["render", input, "--filter", "model(file=\(models)/net-unet-seg.onnx, precision=float)", "-o", masked])
        XCTAssertEqual(seg.status, 0, seg.stderr)
        let mask = try reference("net-unet-seg", photo)
        XCTAssertLessThanOrEqual(worst(try ImageFile.read(path: masked)) { _, i in mask[i] }, 1, "U-Net mask against numpy")
    }

    func testFixedSizeModelsResizeTheFrameInAndBack() throws {
        let models = try models()
        let output = dir.path("sr.png")
        // net-sr-resnet-x2-128 takes 128x128 and doubles it: the 451x300 photograph goes in resized, and comes
        // back at twice its own size.
        let run = try Tools.run(Tools.prism, ["render", try Tools.fixture("chelsea.png"), "--filter",
                                              "model(file=\(models)/net-sr-resnet-x2-128.onnx)", "-o", output])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try ImageFile.read(path: output).size, Size(width: 902, height: 600))
        // At its own size the resize is the identity: the reference holds.
        let size = Size(width: 128, height: 128)
        let photo = try Self.photo(size)
        let input = dir.path("in128.png"), exact = dir.path("sr128.png")
        try ImageFile.write(photo, to: input)
        let second = try Tools.run(Tools.prism, ["render", input, "--filter",
                                                 "model(file=\(models)/net-sr-resnet-x2-128.onnx, precision=float, output-mean=8, output-scale=16)",
                                                 "-o", exact])
        XCTAssertEqual(second.status, 0, second.stderr)
        let out = try ImageFile.read(path: exact)
        let y = try reference("net-sr-resnet-x2-128", photo)
        let n = out.size.pixelCount
        XCTAssertLessThanOrEqual(worst(out) { c, i in (y[c * n + i] + 8) / 16 }, 1, "super-resolution against numpy")
    }

    /// `run` with raw frames in and out (exact bytes both ways), then an image sequence into a file.
    func testRunFiltersFramesAndFiles() throws {
        let models = try models()
        let size = Size(width: 64, height: 48)
        let photo = try Self.photo(size)
        var flipped = photo
        for i in 0..<size.pixelCount { for c in 0..<3 { flipped.pixels[i * 4 + c] = 255 - photo.pixels[i * 4 + c] } }
        let filter = "model(file=\(models)/net-style-transfer.onnx, precision=float, output-mean=1, output-scale=2)"
        let run = try Tools.run(Tools.prism, ["run", "-", "--input-format", "64x48:rgba:10", "-o", "-", "--output-format", "rgba",
                                              "--filter", filter, "--quiet"],
                                stdin: Data(photo.pixels + flipped.pixels + photo.pixels))
        XCTAssertEqual(run.status, 0, run.stderr)
        let frameBytes = size.pixelCount * 4
        XCTAssertEqual(run.stdout.count, 3 * frameBytes)
        let n = size.pixelCount
        for (index, source) in [photo, flipped, photo].enumerated() where run.stdout.count == 3 * frameBytes {
            let frame = RGBAImage(size: size, pixels: Array(run.stdout[(index * frameBytes)..<((index + 1) * frameBytes)]))
            let y = try reference("net-style-transfer", source)
            XCTAssertLessThanOrEqual(worst(frame) { c, i in (y[c * n + i] + 1) / 2 }, 1, "frame \(index)")
        }

        for k in 1...3 { try ImageFile.write(k == 2 ? flipped : photo, to: dir.path(String(format: "seq%03d.png", k))) }
        let movie = dir.path("out.mkv")
        let file = try Tools.run(Tools.prism, ["run", dir.path("seq%03d.png"), "--fps", "10", "-o", movie, "--codec", "ffv1",
                                               "--filter", "model(file=\(models)/net-unet-seg.onnx)", "--quiet"])
        XCTAssertEqual(file.status, 0, file.stderr)
        let decoded = try Tools.run(try XCTUnwrap(Tools.which("ffmpeg")), ["-v", "error", "-i", movie, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        XCTAssertEqual(decoded.status, 0, decoded.stderr)
        XCTAssertEqual(decoded.stdout.count, 3 * 3 * n, "three 64x48 frames")
        // Frame 2 (the inverted photograph) has a mask of its own: the model ran on every frame.
        let mask1 = try reference("net-unet-seg", photo), mask2 = try reference("net-unet-seg", flipped)
        if decoded.stdout.count == 3 * 3 * n {
            for (index, mask) in [(0, mask1), (1, mask2), (2, mask1)] {
                let frame = Array(decoded.stdout[(index * 3 * n)..<((index + 1) * 3 * n)])
                // ffv1 is lossless, but the trip through Y′CbCr rounds twice: within 3 codes of the mask.
                let error = (0..<n).map { abs(Float(frame[$0 * 3]) - 255 * min(max(mask[$0], 0), 1)) }.max()!
                XCTAssertLessThanOrEqual(error, 3, "frame \(index)")
            }
        }
    }

    /// The emulated camera (libFakeV4L2, see CameraTests) through a model, live: every frame comes out
    /// as the network's one-channel output (grey).
    func testRunsLiveOnTheEmulatedCamera() throws {
        let models = try models()
        let fake = try CameraTests.fakeLibrary()
        let result = try Tools.run(Tools.prism, ["run", "/dev/video60", "--size", "160x120", "--fps", "15", "--frames", "6",
                                                 "-o", "-", "--output-format", "rgba",
                                                 "--filter", "model(file=\(models)/net-unet-seg.onnx)", "--quiet"],
                                   environment: ["LD_PRELOAD": fake, "PRISM_FAKE_V4L2": "/dev/video60"], timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let frameBytes = 160 * 120 * 4
        XCTAssertEqual(result.stdout.count, 6 * frameBytes)
        let bytes = Array(result.stdout)
        var spread = Set<UInt8>()
        for i in stride(from: 0, to: bytes.count - 3, by: 4) {
            XCTAssertTrue(bytes[i] == bytes[i + 1] && bytes[i + 1] == bytes[i + 2], "pixel \(i / 4) is not grey")
            if bytes[i] != bytes[i + 1] { break }
            spread.insert(bytes[i])
        }
        XCTAssertGreaterThan(spread.count, 20, "the mask varies with the picture")
    }

    func testFiltersDescribesTheModel() throws {
        let models = try models()
        let result = try Tools.run(Tools.prism, ["filters", "\(models)/net-unet-seg.onnx"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = String(decoding: result.stdout, as: UTF8.self)
        for part in ["input:  'input' [1,3,height,width]", "1 channel at 256x256 for a 256x256 input — shown", "Conv ×15", "ConvTranspose ×1",
                     "passes: 24", "GMAC", "n_Conv_3 (Conv+BatchNormalization+Relu): 16 channels"] {
            XCTAssertTrue(text.contains(part), "missing '\(part)' in:\n\(text)")
        }
    }

    /// Not ONNX, truncated, an unsupported operator, two inputs, an unresolvable shape, too large for the GPU,
    /// missing: one line naming the file (and the node, where one is to blame), a non-zero exit, no output.
    func testBadModelsAreRefusedInOneLine() throws {
        let models = try models()
        let bad = dir.path("bad")
        let made = try Tools.run("/usr/bin/python3", [Self.script, "--bad", bad])
        XCTAssertEqual(made.status, 0, made.stderr)
        try Data("not a model\n".utf8).write(to: URL(fileURLWithPath: bad + "/text.onnx"))
        let whole = try Data(contentsOf: URL(fileURLWithPath: models + "/net-unet-seg.onnx"))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: bad + "/truncated.onnx"))
        let cases: [(String, [String])] = [
            ("text.onnx", ["not an ONNX model"]),
            ("truncated.onnx", ["not an ONNX model"]),
            ("bad-unsupported.onnx", ["node 'n_Softmax_", "Softmax over axes [1, 2, 3]", "is not supported"]),
            ("bad-two-inputs.onnx", ["2 image inputs"]),
            ("bad-channels.onnx", ["unknown number of channels"]),
            ("bad-huge.onnx", ["node 'n_Resize_", "do not fit this GPU's"]),
            ("missing.onnx", ["no such file"]),
        ]
        let input = dir.path("in.png")
        try ImageFile.write(try Self.photo(Size(width: 64, height: 64)), to: input)
        for (name, parts) in cases {
            let output = dir.path("out-\(name).png")
            let result = try Tools.run(Tools.prism, ["render", input, "--filter", "model(file=\(bad)/\(name))", "-o", output])
            XCTAssertNotEqual(result.status, 0, name)
            XCTAssertEqual(result.stderrLines.count, 1, "\(name): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("\(bad)/\(name)"), "\(name): \(result.stderr)")
            for part in parts { XCTAssertTrue(result.stderr.contains(part), "\(name): '\(part)' not in \(result.stderr)") }
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(name): an output was written")
            // The same file named as a graph node ('net.onnx'(…)) and through `filters`.
            let node = try Tools.run(Tools.prism, ["render", input, "--filter", "'\(bad)/\(name)'", "-o", output])
            XCTAssertNotEqual(node.status, 0, name)
            XCTAssertEqual(node.stderrLines.count, 1, "\(name): \(node.stderr)")
        }
    }

    /// A FIFO or a device named as a model is refused in one line, at once, by every command that reads
    /// models (it used to hang for ever, or read /dev/zero until memory ran out).
    func testModelsThatAreNotRegularFilesAreRefusedAtOnce() throws {
        let fifo = dir.path("fifo.onnx")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let input = dir.path("in.png")
        try ImageFile.write(try Self.photo(Size(width: 32, height: 32)), to: input)
        let output = dir.path("out.png")
        let cases: [([String], String)] = [
            (["filters", fifo], "a FIFO"),
            (["render", input, "--filter", "model(file=\(fifo))", "-o", output], "a FIFO"),
            (["render", input, "--filter", "'\(fifo)'", "-o", output], "a FIFO"),
            (["render", input, "--filter", "model(file=/dev/zero)", "-o", output], "a device"),
            (["render", input, "--filter", "background-blur", "--segment-model", fifo, "-o", output], "a FIFO"),
            (["bench", "--model", fifo, "--sizes", "64x48"], "a FIFO"),
            (["render", input, "--filter", "face-pixellate", "--face-model", fifo, "-o", output], "a FIFO"),
        ]
        for (arguments, part) in cases {
            let result = try Tools.run(Tools.prism, arguments, timeout: 60)
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.stderr.contains(part), "\(arguments): '\(part)' not in \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(arguments): wrote an output")
        }
    }
}
