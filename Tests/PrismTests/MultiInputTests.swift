import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Several inputs in one run, end to end through the built `prism`: `prism run A B`, `--input`,
/// `[0]`/`[1]`/`[NAME]` in the graph, timestamp matching of files at other rates (25 and 30 fps, variable
/// rate), an input that ends early under each `--end` policy, `--offset`, a still image, a live emulated
/// camera over a file, and bad inputs.
///
/// Every clip shows its frame number as its grey level (Y = 40 + 6·n, lossless FFV1), and a test shader
/// writes the first input's red into the output's red and the second input's red and blue into green and
/// blue, so each raw output frame says which frame of each input it shows. The reference is computed here
/// from the inputs' own timestamps (ffprobe): output frame i shows the second input's last frame whose time
/// from its first frame is at most the first input's frame i's time from its first, less the offset.
final class MultiInputTests: XCTestCase {
    let dir = ScratchDirectory()
    static let camera = "/dev/video63"
    static let size = (width: 64, height: 48)

    // MARK: helpers

    /// A lossless clip whose frame n is grey level Y = 40 + 6·n; `setpts` makes it variable-rate.
    private func clip(_ name: String, rate: Int, seconds: Double, setpts: String? = nil) throws -> String {
        let path = dir.path(name)
        var filter = "color=c=black:s=\(Self.size.width)x\(Self.size.height):r=\(rate):d=\(seconds),format=yuv420p,"
            + "geq=lum='40+6*N':cb=128:cr=128"
        if let setpts { filter += ",setpts='\(setpts)'" }
        try Tools.ffmpeg(["-f", "lavfi", "-i", filter, "-fps_mode", "passthrough", "-c:v", "ffv1", path])
        return path
    }

    /// The test shader: R from input 0, G and B from input 1 (red and blue), opaque.
    private func mixShader() throws -> String {
        let path = dir.path("mix.fs")
        try """
        /*{ "INPUTS": [ {"NAME": "inputImage", "TYPE": "image"}, {"NAME": "second", "TYPE": "image"} ] }*/
        void main() {
            vec4 a = IMG_NORM_PIXEL(inputImage, isf_FragNormCoord);
            vec4 b = IMG_NORM_PIXEL(second, isf_FragNormCoord);
            gl_FragColor = vec4(a.r, b.r, b.b, 1.0);
        }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Each frame's timestamp in microseconds, as FFmpeg reads the file.
    private func timestamps(_ path: String) throws -> [Int64] {
        guard let ffprobe = Tools.which("ffprobe") else { throw InvalidRequest("these tests need ffprobe") }
        let result = try Tools.run(ffprobe, ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                             "frame=best_effort_timestamp_time", "-of", "csv=p=0", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").compactMap {
            Double($0.trimmingCharacters(in: .whitespaces)).map { Int64(($0 * 1_000_000).rounded()) }
        }
    }

    /// The frame number a grey level shows (nil: nothing, transparent black).
    private func frameNumber(_ value: UInt8) -> Int? {
        guard value >= 20 else { return nil }
        return Int(((Double(value) - 27.95) / 6.986).rounded())
    }

    /// (input 0's frame, input 1's frame) shown by each raw RGBA output frame, read at its centre.
    private func shown(_ raw: Data) -> [(first: Int?, second: Int?)] {
        let frameBytes = Self.size.width * Self.size.height * 4
        let bytes = [UInt8](raw)
        return stride(from: 0, to: bytes.count - frameBytes + 1, by: frameBytes).map { start in
            let o = start + ((Self.size.height / 2) * Self.size.width + Self.size.width / 2) * 4
            return (frameNumber(bytes[o]), frameNumber(bytes[o + 1]))
        }
    }

    /// What input 1 must show on each of input 0's frames (nil: nothing), and whether the run goes on.
    private enum Expected: Equatable { case frame(Int?), runEnded }
    private func reference(first: [Int64], second: [Int64], secondRate: Int, offset: Int64 = 0,
                           end: String = "hold") -> [Expected] {
        let secondEnd = second.last! - second[0] + 1_000_000 / Int64(secondRate)
        return first.map { pts in
            let local = pts - first[0] - offset
            guard local >= 0 else { return .frame(nil) }
            if local >= secondEnd {
                switch end {
                case "stop": return .runEnded
                case "hide": return .frame(nil)
                default: return .frame(second.count - 1)
                }
            }
            return .frame(second.lastIndex { $0 - second[0] <= local })
        }
    }

    private func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try Tools.run(Tools.prism, ["run"] + arguments + ["--quiet"], environment: environment, timeout: 120)
    }

    /// Runs `prism run ARGS --filter '[0][1]mix.fs' -o -` and checks every output frame against `expected`.
    private func check(_ arguments: [String], expected: [Expected], filter: String? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try run(arguments + ["--filter", try filter ?? "[0][1]'\(mixShader())'", "-o", "-"])
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        let frames = shown(result.stdout)
        let kept = expected.prefix { $0 != .runEnded }
        XCTAssertEqual(frames.count, kept.count, "output frames", file: file, line: line)
        for (i, (got, want)) in zip(frames, kept).enumerated() {
            XCTAssertEqual(got.first, i, "output frame \(i) shows frame \(String(describing: got.first)) of input 0", file: file, line: line)
            XCTAssertEqual(Expected.frame(got.second), want, "output frame \(i): input 1", file: file, line: line)
        }
    }

    // MARK: timestamp matching

    func testInputsAt25And30FPSAreMatchedByTimestamp() throws {
        let a = try clip("a.mkv", rate: 25, seconds: 1), b = try clip("b.mkv", rate: 30, seconds: 1)
        let expected = reference(first: try timestamps(a), second: try timestamps(b), secondRate: 30)
        // 30 fps onto 25: some frames of b are skipped (every fifth step jumps two), none shown out of order.
        XCTAssertEqual(expected.count, 25)
        XCTAssertEqual(expected[4], .frame(4))
        XCTAssertEqual(expected[5], .frame(6))
        try check([a, b], expected: expected)
        // The slower input second: frames repeat.
        let slow = reference(first: try timestamps(b), second: try timestamps(a), secondRate: 25)
        XCTAssertEqual(slow[1], .frame(0))
        try check([b, "--input", a], expected: slow)
    }

    /// A ShaderToy shader's channels bind to the inputs (`iChannel1=input2`: the second stream into it).
    func testShaderToyChannelsReadTheInputs() throws {
        let a = try clip("a.mkv", rate: 25, seconds: 0.6), b = try clip("b.mkv", rate: 30, seconds: 0.6)
        let shader = dir.path("mix.frag")
        try """
        void mainImage(out vec4 fragColor, in vec2 fragCoord) {
            vec2 uv = fragCoord / iResolution.xy;
            vec4 b = texture(iChannel1, uv);
            fragColor = vec4(texture(iChannel0, uv).r, b.r, b.b, 1.0);
        }
        """.write(toFile: shader, atomically: true, encoding: .utf8)
        try check([a, b], expected: reference(first: try timestamps(a), second: try timestamps(b), secondRate: 30),
                  filter: "[0][1]'\(shader)'(iChannel1=input2)")
    }

    func testVariableRateInputIsMatchedByItsOwnTimestamps() throws {
        let a = try clip("a.mkv", rate: 25, seconds: 1)
        // Frames 1/60 and 3/60 s apart in turn.
        let vfr = try clip("vfr.mkv", rate: 30, seconds: 0.8, setpts: "(2*N+mod(N,2))/(60*TB)")
        let times = try timestamps(vfr)
        XCTAssertNotEqual(times[1] - times[0], times[2] - times[1], "the clip is not variable-rate")
        try check([a, vfr], expected: reference(first: try timestamps(a), second: times, secondRate: 30))
    }

    // MARK: an input that ends early, offsets

    func testInputEndingEarlyFollowsItsEndPolicy() throws {
        let a = try clip("a.mkv", rate: 25, seconds: 1), b = try clip("short.mkv", rate: 30, seconds: 0.5)
        let (ta, tb) = (try timestamps(a), try timestamps(b))
        for end in ["hold", "hide", "stop"] {
            let expected = reference(first: ta, second: tb, secondRate: 30, end: end)
            XCTAssert(expected.contains(end == "stop" ? .runEnded : end == "hide" ? .frame(nil) : .frame(tb.count - 1)), end)
            try check([a, "--end", end, b], expected: expected)
        }
        // hold is the default.
        try check([a, b], expected: reference(first: ta, second: tb, secondRate: 30))
    }

    func testOffsetStartsAnInputLater() throws {
        let a = try clip("a.mkv", rate: 25, seconds: 1), b = try clip("b.mkv", rate: 30, seconds: 1)
        let expected = reference(first: try timestamps(a), second: try timestamps(b), secondRate: 30, offset: 300_000)
        XCTAssertEqual(expected[7], .frame(nil))
        XCTAssertEqual(expected[8], .frame(0))
        try check([a, "--offset", "0.3", "--input", b], expected: expected)
    }

    // MARK: names, images, the pattern

    func testNamedInputsAndAStillImageThatLasts() throws {
        let a = try clip("a.mkv", rate: 25, seconds: 0.4)
        let still = dir.path("still.png")
        // Grey 133 in R'G'B' ≈ the clips' frame 15; its bottom quarter black (the picture stays upright).
        try Tools.ffmpeg(["-f", "lavfi", "-i", "color=c=0x858585:s=64x48,drawbox=x=0:y=36:w=64:h=12:color=black:t=fill",
                          "-frames:v", "1", still])
        let result = try run(["--input", "main=\(a)", "--input", "logo=\(still)",
                              "--filter", "[main][logo]'\(try mixShader())'", "-o", "-"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let frames = shown(result.stdout)
        XCTAssertEqual(frames.count, 10)
        for (i, frame) in frames.enumerated() {
            XCTAssertEqual(frame.first, i)
            XCTAssertEqual(frame.second, 15, "frame \(i): the still is shown on every frame")
            let bottom = i * Self.size.width * Self.size.height * 4 + (44 * Self.size.width + 32) * 4
            XCTAssertLessThan(result.stdout[bottom + 1], 20, "frame \(i): the still's bottom is black, not its top")
        }
        // The run's first lines describe every input, not only the first.
        let told = try Tools.run(Tools.prism, ["run", "--input", "main=\(a)", "--input", "logo=\(still)", "--frames", "2",
                                               "--filter", "[main][logo]'\(try mixShader())'", "-o", dir.path("told.mkv"), "--codec", "ffv1"])
        XCTAssertEqual(told.status, 0, told.stderr)
        XCTAssertTrue(told.stderrLines.contains { $0.hasPrefix("prism: input: ") && $0.contains("64x48") }, told.stderr)
        XCTAssertTrue(told.stderrLines.contains { $0.hasPrefix("prism: input 1 [logo]: ") && $0.contains("64x48") }, told.stderr)
    }

    // MARK: live

    /// A live (emulated) camera over a file played at its own pace (`--realtime`, 10 fps for 3 s): the file's
    /// frames come out in order to its last, and once the camera delivers, every frame shows its newest
    /// picture (blue with a red bar), the run never waiting for it.
    func testLiveCameraOverAFile() throws {
        let library = try CameraTests.fakeLibrary()
        let a = try clip("a.mkv", rate: 10, seconds: 3)
        let result = try Tools.run(Tools.prism, ["run", a, Self.camera, "--realtime", "--filter",
                                                 "[1]scale(size=64x48)[c]; [0][c]'\(try mixShader())'", "-o", "-"],
                                   environment: ["LD_PRELOAD": library, "PRISM_FAKE_V4L2": Self.camera], timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        // The camera runs at 30 fps under 10 output frames a second: the frames no output frame showed are counted.
        let dropLine = result.stderr.split(separator: "\n").first { $0.hasPrefix("prism: input 1: ") && $0.contains("dropped") }
        XCTAssertNotNil(dropLine, result.stderr)
        if let dropLine { XCTAssertGreaterThan(Int(dropLine.split(separator: " ")[3]) ?? 0, 0, String(dropLine)) }
        let frameBytes = Self.size.width * Self.size.height * 4
        let bytes = [UInt8](result.stdout)
        let frames = shown(result.stdout)
        // A paced file is live: a frame the GPU was late for may be dropped, but never one out of order.
        let order = frames.map(\.first)
        XCTAssertEqual(order.last, 29, "the file's last frame")
        XCTAssertEqual(order.compactMap { $0 }, order.compactMap { $0 }.sorted(), "the file's frames in order")
        XCTAssertEqual(Set(order.compactMap { $0 }).count, order.count, "no frame of the file twice")
        // The camera's blue background (blue high somewhere on the middle row; an input not there yet shows 0).
        func showsCamera(_ index: Int) -> Bool {
            let row = index * frameBytes + (Self.size.height / 2) * Self.size.width * 4
            return (0..<Self.size.width).contains { bytes[row + $0 * 4 + 2] > 150 }
        }
        let firstCamera = (0..<frames.count).first(where: showsCamera)
        XCTAssertNotNil(firstCamera, "no frame shows the camera")
        if let firstCamera {
            for i in firstCamera..<frames.count { XCTAssert(showsCamera(i), "frame \(i) lost the camera") }
        }
    }

    /// A camera slow to start (its first frame 1.5 s after streaming begins) beside a file read as fast as it
    /// decodes: the run's first frame waits for the camera's first, so every frame shows it, the first too.
    func testASlowLiveInputShowsFromTheFirstFrame() throws {
        let library = try CameraTests.fakeLibrary()
        let a = try clip("a.mkv", rate: 10, seconds: 1)
        let result = try Tools.run(Tools.prism, ["run", a, Self.camera, "--filter",
                                                 "[1]scale(size=64x48)[c]; [0][c]'\(try mixShader())'", "-o", "-"],
                                   environment: ["LD_PRELOAD": library, "PRISM_FAKE_V4L2": Self.camera,
                                                 "PRISM_FAKE_V4L2_START_DELAY_MS": "1500"], timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let frameBytes = Self.size.width * Self.size.height * 4
        let bytes = [UInt8](result.stdout)
        XCTAssertEqual(bytes.count, 10 * frameBytes)
        for index in 0..<bytes.count / frameBytes {
            let row = index * frameBytes + (Self.size.height / 2) * Self.size.width * 4
            XCTAssert((0..<Self.size.width).contains { bytes[row + $0 * 4 + 2] > 150 }, "frame \(index) lacks the camera")
        }
    }

    // MARK: prism dev

    /// `prism dev SHADER A B`: the shader reads both inputs (a looping clip and a still), and a hot reload
    /// keeps them: the still's green and blue change places when the shader is edited to swap them.
    func testDevRunsAShaderOnTwoInputsAndReloadsIt() throws {
        let directory = try TemporaryDirectory()
        let a = try clip("a.mkv", rate: 25, seconds: 1)
        let still = dir.path("still.png")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "color=c=0x2060C0:s=64x48", "-frames:v", "1", still])
        let shader = """
            /*{ "INPUTS": [ {"NAME": "inputImage", "TYPE": "image"}, {"NAME": "second", "TYPE": "image"} ] }*/
            void main() {
                vec4 b = IMG_NORM_PIXEL(second, isf_FragNormCoord);
                gl_FragColor = vec4(IMG_NORM_PIXEL(inputImage, isf_FragNormCoord).r, b.g, b.b, 1.0);
            }
            """
        try directory.save("mix.fs", shader)
        let dev = try DevProcess(arguments: [directory.file("mix.fs"), a, still])
        defer { dev.stop() }
        func snapshotMiddle() throws -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
            let image = try dev.snapshot()
            XCTAssertEqual(image.size, Size(width: 64, height: 48))
            return image.pixel(x: 32, y: 24)
        }
        try dev.waitForState("frames flowing") { ($0["frames"] as? Int ?? 0) > 5 }
        let before = try snapshotMiddle()
        XCTAssertEqual(Double(before.g), 0x60, accuracy: 4, "the still's green: \(before)")
        XCTAssertEqual(Double(before.b), 0xC0, accuracy: 4, "the still's blue: \(before)")
        try directory.save("mix.fs", shader.replacingOccurrences(of: "b.g, b.b", with: "b.b, b.g"))
        let reloaded = try dev.waitForState("the reload") { !($0["error"] is [String: Any]) && ($0["reloads"] as? Int ?? 0) >= 1 }
        let frames = reloaded["frames"] as? Int ?? 0
        try dev.waitForState("frames after the reload") { ($0["frames"] as? Int ?? 0) > frames + 5 }
        let after = try snapshotMiddle()
        XCTAssertEqual(Double(after.g), 0xC0, accuracy: 4, "after the reload: \(after)")
        XCTAssertEqual(Double(after.b), 0x60, accuracy: 4, "after the reload: \(after)")
    }

    // MARK: bad input

    func testBadInputsAreOneLineAndWriteNothing() throws {
        let a = try clip("a.mkv", rate: 25, seconds: 0.2), b = try clip("b.mkv", rate: 30, seconds: 0.2)
        let shader = try mixShader()
        let output = dir.path("out.mp4")
        let cases: [(arguments: [String], message: String)] = [
            ([a, b, "--filter", "[0][2]'\(shader)'"], "input [2] does not exist"),
            ([a, "--filter", "[0][1]'\(shader)'"], "input [1] does not exist"),
            ([a, dir.path("missing.mkv"), "--filter", "[0][1]'\(shader)'"], "missing.mkv"),
            (["--end", "stop", a, b, "--filter", "[0][1]'\(shader)'"], "first input"),
            ([a, b, "--offset", "1", "--filter", "[0][1]'\(shader)'"], "none follows"),
            ([a, "--end", "later", b, "--filter", "[0][1]'\(shader)'"], "--end takes hold, stop or hide"),
            ([a, "--offset", "-2", b], "--offset takes seconds"),
            ([a, "-", "--filter", "[0][1]'\(shader)'"], "can only be the first input"),
            (["--input", "x=\(a)", "--input", "x=\(b)"], "given twice"),
            ([a, b, "--filter", "[0][1]'\(shader)'[1]"], "names an input"),
        ]
        for (arguments, message) in cases {
            let result = try run(arguments + ["-o", output])
            let label = arguments.joined(separator: " ")
            XCTAssertNotEqual(result.status, 0, label)
            let lines = result.stderr.split(separator: "\n").filter { !$0.isEmpty && !$0.hasPrefix(" ") && $0 != "^" }
            XCTAssertEqual(lines.count, 1, "\(label): \(result.stderr)")
            XCTAssert(result.stderr.contains(message), "\(label): \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(label) wrote \(output)")
        }
    }
}
