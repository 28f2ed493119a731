import Foundation
import XCTest
import PrismCore
import PrismMedia

/// HDR and 10-bit through `prism run`, end to end: clips made by ffmpeg/libx265 with HDR tags and
/// metadata, outputs decoded again, tone mapping compared with libplacebo's rendering of the same clip
/// (FFmpeg's `libplacebo` filter on lavapipe, the reference `scripts/install-deps --tests` installs).
final class HDRRunTests: XCTestCase {
    let dir = ScratchDirectory()
    static let masterDisplay = "G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,50)"

    // MARK: Inputs

    /// 10-bit HEVC tagged BT.2020 with `transfer` (ffmpeg's name), from `source`'s picture (a photograph,
    /// or a lavfi graph), HDR10 metadata for PQ.
    func hdrClip(_ name: String, transfer: String, photo: String? = nil, lavfi: String? = nil, full: Bool = false,
                 lossless: Bool = false, frames: Int = 3) throws -> String {
        let path = dir.path(name)
        var x265 = "log-level=error"
        if lossless { x265 += ":lossless=1" }
        if transfer == "smpte2084" { x265 += ":hdr10=1:master-display=\(Self.masterDisplay):max-cll=1000,400" }
        var input: [String]
        if let photo { input = ["-loop", "1", "-i", try Tools.fixture(photo), "-vf", "scale=640:360,format=yuv420p10le"] }
        else { input = ["-f", "lavfi", "-i", lavfi!, "-vf", "format=yuv420p10le"] }
        try Tools.ffmpeg(input + ["-frames:v", String(frames), "-r", "30", "-c:v", "libx265", "-x265-params", x265,
                                  "-color_primaries", "bt2020", "-color_trc", transfer, "-colorspace", "bt2020nc",
                                  "-color_range", full ? "pc" : "tv", "-pix_fmt", "yuv420p10le", path])
        return path
    }

    /// A grey ramp across 1024 columns (full-range tagged; swscale scales the codes), lossless.
    func rampClip(_ name: String, transfer: String) throws -> String {
        try hdrClip(name, transfer: transfer, lavfi: "nullsrc=size=1024x64:rate=30,format=gray16le,geq=lum='X*64'",
                    full: true, lossless: true, frames: 1)
    }

    // MARK: Tools

    static var ffmpegPath: String { Tools.which("ffmpeg") ?? "ffmpeg" }

    /// The decoded frames of `path` as raw `pixelFormat` bytes.
    func decode(_ path: String, _ pixelFormat: String) throws -> Data {
        let result = try Tools.run(Self.ffmpegPath, ["-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", pixelFormat, "-"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    /// libplacebo's SDR BT.709 rendering of `path` (yuv420p, limited range), tone mapped with BT.2390.
    func libplacebo(_ path: String, extra: String = "") throws -> Data {
        let filter = "hwupload,libplacebo=tonemapping=bt.2390:\(extra)peak_detect=0:gamut_mode=clip:dithering=none:"
            + "colorspace=bt709:color_primaries=bt709:color_trc=bt709:range=tv:format=yuv420p,hwdownload,format=yuv420p"
        return try placebo(path, filter: filter)
    }

    func placebo(_ path: String, filter: String) throws -> Data {
        let result = try Tools.run(Self.ffmpegPath, ["-v", "error", "-init_hw_device", "vulkan=vk", "-filter_hw_device", "vk",
                                                     "-i", path, "-vf", filter, "-f", "rawvideo", "-"])
        guard result.status == 0, !result.stdout.isEmpty else {
            throw InvalidRequest("the libplacebo reference failed (FFmpeg's libplacebo filter needs Vulkan: mesa-vulkan-drivers, "
                             + "from scripts/install-deps --tests): \(result.stderr)")
        }
        return result.stdout
    }

    func prism(_ arguments: [String]) throws -> ProcessResult {
        try Tools.run(Tools.prism, ["run"] + arguments)
    }

    /// The samples of raw frames: bytes, or 16-bit little-endian words (10-bit formats).
    static func samples(_ data: Data, sixteenBit: Bool) -> [Int] {
        sixteenBit ? data.withUnsafeBytes { $0.bindMemory(to: UInt16.self).map(Int.init) } : data.map(Int.init)
    }

    /// PSNR over every sample of two frames' worth of planes.
    static func psnr(_ a: Data, _ b: Data, maxValue: Double = 255, sixteenBit: Bool = false) -> Double {
        guard a.count == b.count, !a.isEmpty else {
            XCTFail("frames of \(a.count) and \(b.count) bytes")
            return -.infinity
        }
        let sum = zip(samples(a, sixteenBit: sixteenBit), samples(b, sixteenBit: sixteenBit))
            .reduce(0.0) { total, pair in total + Double((pair.0 - pair.1) * (pair.0 - pair.1)) }
        let count = sixteenBit ? a.count / 2 : a.count
        return sum == 0 ? .infinity : 10 * log10(maxValue * maxValue / (sum / Double(count)))
    }

    /// The largest difference between 16-bit samples of two frames (in `range` of them, when given).
    static func largestDifference(_ a: Data, _ b: Data, in range: Range<Int>? = nil) -> Int {
        guard a.count == b.count, !a.isEmpty else {
            XCTFail("frames of \(a.count) and \(b.count) bytes")
            return .max
        }
        let x = samples(a, sixteenBit: true), y = samples(b, sixteenBit: true)
        return (range ?? x.indices).map { abs(x[$0] - y[$0]) }.max() ?? 0
    }

    func probe(_ path: String, _ entries: String) throws -> String {
        let result = try Tools.run(Tools.which("ffprobe") ?? "ffprobe",
                                   ["-v", "error", "-select_streams", "v:0", "-show_entries", entries, "-of", "default=nw=1", path])
        return result.stdout.isEmpty ? "" : String(decoding: result.stdout, as: UTF8.self)
    }

    func frameSideData(_ path: String) throws -> String {
        let result = try Tools.run(Tools.which("ffprobe") ?? "ffprobe",
                                   ["-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#1", "-show_frames", path])
        return String(decoding: result.stdout, as: UTF8.self)
    }

    // MARK: Tone mapping

    /// Grey ramps (every 10-bit code) through the tone curve, PQ and HLG (through its OOTF), at BT.2390's
    /// own knee (libplacebo's `tonemapping_param=0.5`; its default, 1.0, starts the knee lower): each Y'
    /// within 1 code value of libplacebo's. Before this change the ramp came out clipped, not tone mapped.
    func testGreyRampsMatchLibplaceboToOneCodeValue() throws {
        for (name, transfer) in [("pq-ramp.mkv", "smpte2084"), ("hlg-ramp.mkv", "arib-std-b67")] {
            let clip = try rampClip(name, transfer: transfer)
            let run = try prism([clip, "-o", "-", "--output-format", "yuv420p", "-q"])
            XCTAssertEqual(run.status, 0, run.stderr)
            let reference = try libplacebo(clip, extra: "tonemapping_param=0.5:")
            XCTAssertEqual(run.stdout.count, reference.count)
            guard run.stdout.count == reference.count else { continue }
            var worst = 0, at = 0
            for x in 0..<1024 {  // the middle row's luma
                let d = abs(Int(run.stdout[32 * 1024 + x]) - Int(reference[32 * 1024 + x]))
                if d > worst { (worst, at) = (d, x) }
            }
            XCTAssertLessThanOrEqual(worst, 1, "\(transfer): Y' off by \(worst) at code \(at)")
            // And the curve did something: the bright end is SDR white, not the clipped signal's slope.
            XCTAssertGreaterThanOrEqual(Int(run.stdout[32 * 1024 + 1023]), 233, transfer)
            XCTAssertLessThan(Int(run.stdout[32 * 1024 + 600]), 225, transfer)
        }
    }

    /// HDR10 and HLG photographs → SDR H.264 against libplacebo with the settings (its default knee
    /// and luma-based mode): PQ ≥ 33 dB, HLG ≥ 29 dB over Y'CbCr (34.6 and 30.8 when measured; the rest is
    /// libplacebo's desaturation in its luma mode and its knee). Before: 10 dB and 23 dB (no tone mapping).
    func testPhotographsToneMapToWithinTheStatedPSNROfLibplacebo() throws {
        for (name, transfer, floor) in [("pq.mkv", "smpte2084", 33.0), ("hlg.mkv", "arib-std-b67", 29.0)] {
            let clip = try hdrClip(name, transfer: transfer, photo: "coffee.png", frames: 1)
            let out = dir.path("sdr-\(name).mp4")
            let run = try prism([clip, "-o", out, "--crf", "0"])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stderr.contains("HDR → SDR: tone mapped (bt2390"), run.stderr)
            let tags = try probe(out, "stream=pix_fmt,color_space,color_primaries,color_transfer")
            for tag in ["pix_fmt=yuv420p", "color_space=bt709", "color_primaries=bt709", "color_transfer=bt709"] {
                XCTAssertTrue(tags.contains(tag), "\(name): \(tags)")
            }
            let psnr = Self.psnr(try decode(out, "yuv420p"), try libplacebo(clip))
            XCTAssertGreaterThanOrEqual(psnr, floor, "\(transfer): \(psnr) dB from libplacebo")
        }
    }

    // MARK: Keeping HDR and 10 bits

    /// HDR10 → HEVC Main10 and AV1 10-bit: tags, mastering display and light level intact, 10-bit precision
    /// (≥ 50 dB at 10 bits against the input with no filter). Before: 8-bit Main, tagged BT.709, no metadata,
    /// and no AV1.
    func testHDR10KeepsTagsMetadataAndTenBitsInHEVCAndAV1() throws {
        let clip = try hdrClip("hdr10.mkv", transfer: "smpte2084", photo: "coffee.png")
        for (codec, file, profile) in [("hevc", "kept.mp4", "profile=Main 10"), ("av1", "kept-av1.mp4", "codec_name=av1")] {
            let out = dir.path(file)
            let run = try prism([clip, "--codec", codec, "--crf", "8", "-o", out])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stderr.contains("colour: BT.2020 limited range, BT.2020 primaries, PQ (SMPTE ST 2084), chroma left; "
                                              + "mastering 0.005–1000 cd/m², MaxCLL 1000, MaxFALL 400"), run.stderr)
            XCTAssertFalse(run.stderr.contains("Svt["), "the encoder's own chatter: \(run.stderr)")
            let tags = try probe(out, "stream=codec_name,profile,pix_fmt,color_space,color_primaries,color_transfer")
            for tag in [profile, "pix_fmt=yuv420p10le", "color_space=bt2020nc", "color_primaries=bt2020", "color_transfer=smpte2084"] {
                XCTAssertTrue(tags.contains(tag), "\(codec): \(tags)")
            }
            let frames = try frameSideData(out)
            func value(_ key: String) -> Double? {
                guard let line = frames.split(separator: "\n").first(where: { $0.hasPrefix(key + "=") }) else { return nil }
                let parts = line.dropFirst(key.count + 1).split(separator: "/").compactMap { Double($0) }
                return parts.count == 2 ? parts[0] / parts[1] : parts.first
            }
            XCTAssertTrue(frames.contains("Mastering display metadata") && frames.contains("Content light level metadata"),
                          "\(codec): \(frames)")
            XCTAssertEqual(value("max_luminance") ?? 0, 1000, accuracy: 0.5, codec)
            XCTAssertEqual(value("min_luminance") ?? 0, 0.005, accuracy: 0.0002, codec)
            XCTAssertEqual(value("max_content"), 1000, codec)
            XCTAssertEqual(value("max_average"), 400, codec)
            let psnr = Self.psnr(try decode(out, "yuv420p10le"), try decode(clip, "yuv420p10le"), maxValue: 1023, sixteenBit: true)
            XCTAssertGreaterThanOrEqual(psnr, 50, "\(codec): \(psnr) dB at 10 bits")
        }
    }

    /// A 10-bit clip (in the nominal range) through no filter into 10-bit FFV1 comes back within 1 code value.
    func testTenBitIdentityRoundTripIsWithinOneCodeValue() throws {
        let clip = dir.path("ten.mkv")
        // Encoded with the matrix it is tagged with (swscale's default is BT.601): a mis-tagged clip decodes
        // to colours outside the R'G'B' cube, which the R'G'B' route clips.
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-frames:v", "3",
                          "-vf", "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p10le", "-c:v", "ffv1", "-colorspace", "bt709", "-color_primaries", "bt709",
                          "-color_trc", "bt709", clip])
        let out = dir.path("ten-out.mkv")
        let run = try prism([clip, "--codec", "ffv1", "-o", out])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(try probe(out, "stream=pix_fmt").contains("yuv420p10le"))
        let worst = Self.largestDifference(try decode(out, "yuv420p10le"), try decode(clip, "yuv420p10le"))
        XCTAssertLessThanOrEqual(worst, 1, "10-bit identity off by \(worst) code values")
    }

    /// 12-bit 4:2:0 and 16-bit 4:4:4 keep their bits into FFV1 (yuv420p16le and yuv444p16le inside, 16-bit 4:4:4
    /// FFV1 out): back within 1 code value at their own depth. Before: 10 bits at most, 4:4:4 chroma halved.
    func testTwelveAndSixteenBitInputsKeepTheirBits() throws {
        for (name, format, decoded, maxValue) in [("twelve.mkv", "yuv420p12le", "yuv420p12le", 4095),
                                                    ("sixteen.mkv", "yuv444p16le", "yuv444p16le", 65535)] {
            let clip = dir.path(name)
            try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-frames:v", "2",
                              "-vf", "scale=out_color_matrix=bt709:out_range=tv,format=\(format)", "-c:v", "ffv1",
                              "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", clip])
            let out = dir.path("out-" + name)
            let run = try prism([clip, "--codec", "ffv1", "-o", out])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(try probe(out, "stream=pix_fmt").contains("yuv444p16le"), name)
            // Luma (4:2:0 chroma comes back through 4:4:4, which swscale filters on the way down); 4:4:4 whole.
            let luma = format.hasPrefix("yuv420") ? 0..<(320 * 180) : nil
            let worst = Self.largestDifference(try decode(out, decoded), try decode(clip, decoded), in: luma)
            XCTAssertLessThanOrEqual(worst, 1, "\(format): off by \(worst) of \(maxValue)")
        }
    }

    /// HLG kept HLG, and HLG → PQ (`--output-transfer pq`) within 1 code value (10 bits) of libplacebo's.
    func testHLGStaysHLGAndConvertsToPQ() throws {
        let clip = try rampClip("hlg.mkv", transfer: "arib-std-b67")
        let kept = dir.path("hlg-kept.mkv")
        var run = try prism([clip, "--codec", "ffv1", "-o", kept])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(try probe(kept, "stream=color_transfer").contains("arib-std-b67"))
        let pq = dir.path("hlg-pq.mkv")
        run = try prism([clip, "--codec", "ffv1", "--output-transfer", "pq", "-o", pq])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(try probe(pq, "stream=color_transfer").contains("smpte2084"))
        let reference = try placebo(clip, filter: "hwupload,libplacebo=peak_detect=0:gamut_mode=clip:dithering=none:"
                                    + "colorspace=bt2020nc:color_primaries=bt2020:color_trc=smpte2084:range=pc:"
                                    + "format=yuv420p10le,hwdownload,format=yuv420p10le")
        // The middle row's luma.
        XCTAssertLessThanOrEqual(Self.largestDifference(try decode(pq, "yuv420p10le"), reference, in: 32 * 1024..<33 * 1024), 1)
    }

    /// A shader that asks for linear light gets it between two tonemaps: an ISF shader halving the light (one
    /// stop) between `tonemap(to=linear)` and `tonemap(from=linear)` matches the CPU maths (PQ → light, × 0.5,
    /// BT.2390 to SDR) to 2 code values, and the pair alone matches the automatic tone mapping; the graph's own
    /// tonemap replaces the automatic one.
    func testAShaderInLinearLightBetweenTwoTonemaps() throws {
        let clip = try rampClip("pq.mkv", transfer: "smpte2084")
        let shader = dir.path("half.fs")
        try """
            /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ] }*/
            void main() { vec4 c = IMG_THIS_PIXEL(inputImage); gl_FragColor = vec4(c.rgb * 0.5, c.a); }
            """.write(toFile: shader, atomically: true, encoding: .utf8)
        func row(_ filter: String?) throws -> [Int] {
            let run = try prism([clip, "-o", "-", "--output-format", "yuv420p"] + (filter.map { ["--filter", $0] } ?? []))
            XCTAssertEqual(run.status, 0, run.stderr)
            if filter != nil { XCTAssertTrue(run.stderr.contains("no automatic tone mapping"), run.stderr) }
            guard run.stdout.count >= 33 * 1024 else { return [] }
            return (0..<1024).map { Int(run.stdout[32 * 1024 + $0]) }
        }
        let automatic = try row(nil)
        let pair = try row("tonemap(to=linear, out-primaries=bt2020), tonemap(from=linear, primaries=bt2020)")
        let halved = try row("tonemap(to=linear, out-primaries=bt2020), '\(shader)', tonemap(from=linear, primaries=bt2020)")
        guard automatic.count == 1024, pair.count == 1024, halved.count == 1024 else { return XCTFail("no frame") }
        XCTAssertLessThanOrEqual(zip(automatic, pair).map { abs($0 - $1) }.max()!, 1, "the pair is the automatic conversion")
        // The clip's own codes (its maker's conversion decides them), full range.
        let codes = Array(Self.samples(try decode(clip, "yuv420p10le"), sixteenBit: true)[32 * 1024..<33 * 1024])
        let toLight = ColorConversion(from: .pq, to: .linear, sourcePrimaries: .bt2020, targetPrimaries: .bt2020, sourcePeak: 1000)
        let toSDR = ColorConversion(from: .linear, to: .sdr, sourcePrimaries: .bt2020, targetPrimaries: .bt709, sourcePeak: 1000)
        let space = YUVColorSpace(matrix: .bt709, range: .limited)
        var worst = 0, at = 0
        for code in stride(from: 0, to: 1024, by: 4) {
            let light = toLight.apply(SIMD3(repeating: Double(codes[code]) / 1023)) * 0.5
            let y = Int((space.yuv(fromRGB: toSDR.apply(light).x, toSDR.apply(light).y, toSDR.apply(light).z).y * 255).rounded())
            if abs(y - halved[code]) > worst { (worst, at) = (abs(y - halved[code]), code) }
        }
        XCTAssertLessThanOrEqual(worst, 2, "one stop down in linear light: off by \(worst) at code \(at)")
        XCTAssertLessThan(halved[700], automatic[700] - 10, "the shader darkened the light")
        // A graph left in linear light is refused.
        let run = try prism([clip, "--filter", "tonemap(to=linear)", "-o", dir.path("lin.mp4")])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("the graph ends in linear light"), run.stderr)
    }

    /// `prism dev`'s preview is SDR: an HDR10 input is tone mapped in front of the shader, as `run` does. Code
    /// 0.75 of PQ (1000 cd/m², the clip's peak) shows as SDR white, not as the raw signal's 75 % grey.
    func testDevToneMapsAnHDRInputForThePreview() throws {
        let clip = try rampClip("pq.mkv", transfer: "smpte2084")
        let directory = try TemporaryDirectory()
        let identity = "LUT_3D_SIZE 2\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n"
        try identity.write(toFile: directory.file("same.cube"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("same.cube"), clip])
        defer { dev.stop() }
        try dev.waitForState("frames flowing") { ($0["frames"] as? Int ?? 0) > 2 }
        XCTAssertTrue(dev.stderr.contains("PQ (SMPTE ST 2084)"), dev.stderr)
        let image = try dev.snapshot()
        XCTAssertEqual(image.size.width, 1024)
        let peak = image.pixel(x: 770, y: 32), dark = image.pixel(x: 200, y: 32)
        XCTAssertGreaterThanOrEqual(Int(peak.g), 245, "PQ's 1000 cd/m² as SDR white: \(peak)")
        XCTAssertLessThan(Int(dark.g), 60, "\(dark)")
    }

    // MARK: Saying what it is, and refusing what it cannot do

    /// The input line names the colour and what was guessed; a BT.2020 SDR input is written tagged BT.2020
    /// (before: BT.601 at 640x360).
    func testTheColourLineAndBT2020Tags() throws {
        let untagged = dir.path("untagged.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-frames:v", "2", "-c:v", "ffv1", untagged])
        var run = try prism([untagged, "-o", dir.path("u.mp4")])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("colour: BT.709 limited range, BT.709 primaries, BT.709 (untagged matrix, "
                                          + "primaries, transfer: guessed; --input-color sets them)"), run.stderr)
        let wide = dir.path("wide.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-frames:v", "2", "-c:v", "ffv1",
                          "-colorspace", "bt2020nc", "-color_primaries", "bt2020", "-color_trc", "bt2020-10", wide])
        let out = dir.path("wide.mp4")
        run = try prism([wide, "-o", out])
        XCTAssertEqual(run.status, 0, run.stderr)
        let tags = try probe(out, "stream=color_space,color_primaries,color_transfer")
        for tag in ["color_space=bt2020nc", "color_primaries=bt2020", "color_transfer=bt2020-10"] {
            XCTAssertTrue(tags.contains(tag), tags)
        }
        // --input-color overrides the tags (and is said so).
        run = try prism([untagged, "--input-color", "matrix=bt601,primaries=smpte170m", "-o", dir.path("o.mp4")])
        XCTAssertTrue(run.stderr.contains("colour: BT.601 limited range, SMPTE 170M primaries, BT.709 (untagged transfer:"),
                      run.stderr)
        XCTAssertTrue(try probe(dir.path("o.mp4"), "stream=color_space").contains("smpte170m"))
    }

    /// Where the tone curve's peak came from is said as it is: an HLG clip carries no mastering metadata, so
    /// the peak is assumed, or given by `--input-color peak=` (before: "from its metadata" for the option).
    func testThePeaksSourceIsNamedAsItIs() throws {
        let hlg = try rampClip("hlg.mkv", transfer: "arib-std-b67")
        var run = try prism([hlg, "-o", dir.path("a.mp4")])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("cd/m² assumed: no mastering metadata"), run.stderr)
        run = try prism([hlg, "--input-color", "peak=1000", "-o", dir.path("b.mp4")])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("peak 1000 cd/m² as --input-color peak= sets it"), run.stderr)
        XCTAssertFalse(run.stderr.contains("from its metadata"), run.stderr)
    }

    /// `--tonemap none` writes the PQ signal as it is, tagged PQ.
    func testToneMapNoneKeepsTheSignalAndItsTags() throws {
        let clip = try rampClip("pq.mkv", transfer: "smpte2084")
        let out = dir.path("raw.mp4")
        let run = try prism([clip, "--tonemap", "none", "-o", out])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(try probe(out, "stream=color_transfer").contains("smpte2084"))
    }

    func testBadColourCombinationsAreOneLineAndWriteNothing() throws {
        let pq = try rampClip("pq.mkv", transfer: "smpte2084")
        let log = dir.path("log.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-frames:v", "2", "-c:v", "ffv1",
                          "-color_trc", "log100", log])
        let sdr = dir.path("sdr.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-frames:v", "2", "-c:v", "ffv1", sdr])
        let cases: [([String], String)] = [
            ([pq, "--dynamic-range", "keep"], "is 8-bit SDR here"),
            ([pq, "--codec", "hevc", "--filter", "noir"], "noir is a look for SDR pictures"),
            ([log], "the transfer 'log100' is not one Prism converts"),
            ([pq, "--input-color", "transfer=bogus"], "--input-color: transfer=bogus is not one of"),
            ([pq, "--input-color", "="], "--input-color: '=' names no field"),
            ([pq, "--input-color", "hdr10,="], "--input-color: '=' names no field"),
            ([pq, "--tonemap", "hable"], "--tonemap takes bt2390, reinhard, clip or none"),
            ([pq, "--dynamic-range", "hdr"], "--dynamic-range takes auto, sdr or keep"),
            ([sdr, "--codec", "hevc", "--output-transfer", "hlg"], "--output-transfer converts an HDR input kept HDR"),
        ]
        for (index, (arguments, message)) in cases.enumerated() {
            let out = dir.path("bad\(index).mp4")
            let run = try prism(arguments + ["-o", out])
            XCTAssertNotEqual(run.status, 0, arguments.joined(separator: " "))
            let lines = run.stderrLines.filter { !$0.hasPrefix("prism: GPU") }
            XCTAssertEqual(lines.count, 1, run.stderr)
            XCTAssertTrue(run.stderr.contains(message), "\(arguments): \(run.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), arguments.joined(separator: " "))
        }
    }
}
