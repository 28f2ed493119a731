import Foundation
import XCTest
import PrismCore
import PrismMedia

/// mpv hook files through the built tool: `render --size` as OUTPUT, `run` with a two-file group on a
/// movie (decoded again), `filters FILE.glsl`, and bad files refused in one line with nothing written.
final class HookRunTests: XCTestCase {
    /// A 2x upscaler by pixel replication (texel centres), then a restore-like pass: what an Anime4K mode's
    /// shape is (a same-size pass, then a doubling one whose WHEN needs OUTPUT larger than MAIN).
    static let restore = """
        //!DESC restore-like: a same-size pass (halves the values)
        //!HOOK MAIN
        //!BIND HOOKED
        vec4 hook() {
            vec4 c = HOOKED_texOff(vec2(0.0));
            return vec4(c.rgb * 0.5, c.a);
        }
        """
    static let upscale = """
        //!DESC doubling by replication
        //!HOOK MAIN
        //!BIND HOOKED
        //!WIDTH HOOKED.w 2 *
        //!HEIGHT HOOKED.h 2 *
        //!WHEN OUTPUT.w MAIN.w / 1.200 > OUTPUT.h MAIN.h / 1.200 > *
        vec4 hook() {
            vec2 texel = (floor(HOOKED_pos * HOOKED_size) + 0.5) * HOOKED_pt;
            return HOOKED_tex(texel);
        }
        """

    func testRenderWithSizeRunsTheUpscalerAtOutput() throws {
        let scratch = ScratchDirectory()
        let input = scratch.path("in.png")
        var pixels: [UInt8] = []
        for y in 0..<20 { for x in 0..<30 { pixels += [UInt8(x * 8), UInt8(y * 12), UInt8((x * y) % 256), 255] } }
        let image = RGBAImage(size: Size(width: 30, height: 20), pixels: pixels)
        try ImageFile.write(image, to: input)
        let restore = scratch.path("restore.glsl"), upscale = scratch.path("upscale.glsl")
        try Self.restore.write(toFile: restore, atomically: true, encoding: .utf8)
        try Self.upscale.write(toFile: upscale, atomically: true, encoding: .utf8)
        let output = scratch.path("out.png")
        let result = try Tools.run(Tools.prism, ["render", "--filter", "'\(restore)', '\(upscale)'", "--size", "60x40", input, "-o", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        let out = try ImageFile.read(path: output)
        XCTAssertEqual(out.size, Size(width: 60, height: 40))
        for (x, y) in [(0, 0), (7, 3), (59, 39), (31, 22)] {
            let got = out.pixel(x: x, y: y), want = image.pixel(x: x / 2, y: y / 2)
            XCTAssertEqual(Int(got.r), Int((Double(want.r) * 0.5).rounded()), accuracy: 1, "(\(x), \(y))")
            XCTAssertEqual(Int(got.g), Int((Double(want.g) * 0.5).rounded()), accuracy: 1, "(\(x), \(y))")
        }
        // Without --size OUTPUT is the input's: the upscaler's WHEN is false, only the restore runs.
        let same = scratch.path("same.png")
        let plain = try Tools.run(Tools.prism, ["render", "--filter", "'\(restore)', '\(upscale)'", input, "-o", same])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(try ImageFile.read(path: same).size, image.size)
    }

    func testRunFiltersAMovieThroughAHookGroup() throws {
        let scratch = ScratchDirectory()
        let restore = scratch.path("restore.glsl"), upscale = scratch.path("upscale.glsl")
        try Self.restore.write(toFile: restore, atomically: true, encoding: .utf8)
        try Self.upscale.write(toFile: upscale, atomically: true, encoding: .utf8)
        let clip = scratch.path("clip.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=64x36:r=10:d=0.5", "-c:v", "ffv1", clip])
        let output = scratch.path("out.mkv")
        let result = try Tools.run(Tools.prism, ["run", clip, "-o", output, "--codec", "ffv1", "--size", "128x72",
                                                 "--filter", "'\(restore)', '\(upscale)', mono"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, 5)
        XCTAssertEqual(report.size, Size(width: 128, height: 72))
    }

    func testFiltersDescribesAHookFile() throws {
        let scratch = ScratchDirectory()
        let path = scratch.path("p.glsl")
        try """
        //!PARAM strength
        //!DESC how much
        //!TYPE float
        //!MINIMUM 0.0
        //!MAXIMUM 1.0
        0.5
        \(Self.upscale)
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try Tools.run(Tools.prism, ["filters", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = String(decoding: result.stdout, as: UTF8.self)
        XCTAssertTrue(text.contains("mpv hook shader: 1 pass hooking MAIN"), text)
        XCTAssertTrue(text.contains("doubling by replication"), text)
        XCTAssertTrue(text.contains("when OUTPUT.w MAIN.w / 1.200 >"), text)
        XCTAssertTrue(text.contains("strength: number in 0…1, default 0.5") || text.contains("strength:"), text)
    }

    /// The issue's bad files, through the built tool: each is one line naming file:line, a non-zero exit, and
    /// no output file.
    func testBadHookFilesAreOneLineAndWriteNothing() throws {
        let scratch = ScratchDirectory()
        let input = scratch.path("in.png")
        try ImageFile.write(RGBAImage(size: Size(width: 8, height: 8), pixels: [UInt8](repeating: 128, count: 256)), to: input)
        let copy = "vec4 hook() { return HOOKED_tex(HOOKED_pos); }\n"
        let cases: [(name: String, text: String, environment: [String: String], message: String)] = [
            ("directive", "//!HOOK MAIN\n//!BIND HOOKED\n//!SCALE 2\n" + copy, [:], ":3: unknown directive '//!SCALE 2'"),
            ("underflow", "//!HOOK MAIN\n//!BIND HOOKED\n//!WIDTH HOOKED.w *\n" + copy, [:],
             ":3: //!WIDTH: stack underflow in the expression 'HOOKED.w *'"),
            ("bind", "//!HOOK MAIN\n//!BIND HOOKED\n//!BIND NOPE\n" + copy, [:],
             ":3: //!BIND NOPE: no pass saves a texture of that name and no //!TEXTURE has it"),
            ("hex", "//!TEXTURE lut\n//!SIZE 2 1\n//!FORMAT rgba8\nff00ff00ff00\n\n//!HOOK MAIN\n//!BIND lut\n"
                + "vec4 hook() { return lut_tex(vec2(0.5)); }\n", [:],
             ":1: //!TEXTURE lut: the data is 6 bytes; 2x1 texels of rgba8 need 8"),
            // A context capped at GLES 3.0 has no compute shaders.
            ("compute", "//!HOOK MAIN\n//!BIND HOOKED\n//!COMPUTE 8 8\n"
                + "void hook() { imageStore(out_image, ivec2(gl_GlobalInvocationID.xy), HOOKED_tex(HOOKED_pos)); }\n",
             ["PRISM_GLES_MINOR": "0"], ":3: //!COMPUTE needs OpenGL ES 3.1 compute shaders; this GL is OpenGL ES 3.0"),
        ]
        for item in cases {
            let file = scratch.path("\(item.name).hook")
            try item.text.write(toFile: file, atomically: true, encoding: .utf8)
            let output = scratch.path("\(item.name).png")
            let result = try Tools.run(Tools.prism, ["render", "--filter", "'\(file)'", input, "-o", output],
                                       environment: item.environment)
            XCTAssertNotEqual(result.status, 0, item.name)
            XCTAssertEqual(result.stderrLines.count, 1, "\(item.name): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(file + item.message), "\(item.name): \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), item.name)
        }
        // The compute pass itself is fine where the GL has compute.
        let output = scratch.path("compute-ok.png")
        let fine = try Tools.run(Tools.prism, ["render", "--filter", "'\(scratch.path("compute.hook"))'", input, "-o", output])
        XCTAssertEqual(fine.status, 0, fine.stderr)
    }

    /// An Anime4K-like mode of three hook files on the emulated camera in `prism dev`, at twice the camera's
    /// size (`--output-size`, the hooks' OUTPUT): the group runs in file order, its `//!PARAM` is a slider the page can set, and a broken file shows its file:line while frames
    /// keep flowing; the fix brings the group back with the parameter kept.
    func testDevRunsAHookModeOnTheCameraWithParameterSliders() throws {
        let directory = try TemporaryDirectory()
        try Self.tint.write(toFile: directory.file("tint.glsl"), atomically: true, encoding: .utf8)
        try Self.invert.write(toFile: directory.file("invert.hook"), atomically: true, encoding: .utf8)
        try Self.upscale.write(toFile: directory.file("upscale.glsl"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("tint.glsl"), CameraTests.camera,
                                             "--filter", "'\(directory.file("invert.hook"))', '\(directory.file("upscale.glsl"))'",
                                             "--size", "320x240", "--output-size", "640x480"],
                                 environment: ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": CameraTests.camera])
        defer { dev.stop() }
        func frames(_ state: [String: Any]) -> Int { state["frames"] as? Int ?? 0 }
        func error(_ state: [String: Any]) -> [String: Any]? { state["error"] as? [String: Any] }
        func amount(_ state: [String: Any]) -> Double? {
            let values = state["parameters"] as? [[String: Any]] ?? []
            return (values.first { $0["name"] as? String == "amount" }?["value"] as? NSNumber)?.doubleValue
        }
        func corner() throws -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
            let image = try dev.snapshot()
            XCTAssertEqual(image.size, Size(width: 640, height: 480), "--output-size is the hooks' OUTPUT")
            return image.pixel(x: image.size.width - 4, y: image.size.height - 4)
        }
        let first = try dev.waitForState("camera frames through the group") { frames($0) > 5 || error($0) != nil }
        XCTAssertNil(error(first), "\(first)")
        XCTAssertEqual(amount(first), 0, "the slider starts at the file's default: \(first)")
        // The doubling hook runs (its WHEN sees OUTPUT at twice the camera's size), not only the final resize.
        func labels(_ state: [String: Any]) -> [String] {
            (state["passes"] as? [[String: Any]] ?? []).compactMap { $0["label"] as? String }
        }
        let timed = try dev.waitForState("pass times") { !labels($0).isEmpty }
        XCTAssertTrue(labels(timed).contains { $0.contains("doubling by replication") }, "\(labels(timed))")
        // amount 0: the camera's blue background inverted is yellow.
        var pixel = try corner()
        XCTAssert(pixel.r > 190 && pixel.g > 190 && pixel.b < 70, "inverted blue is yellow, got \(pixel)")
        // amount 1: tinted red first, then inverted: cyan (inverting first and tinting after would be red).
        XCTAssertEqual(try dev.post("/param", ["name": "amount", "value": 1]).status, 200)
        let set = try dev.waitForState("the slider's value") { amount($0) == 1 }
        try dev.waitForState("frames with the new value") { frames($0) > frames(set) + 5 }
        pixel = try corner()
        XCTAssert(pixel.r < 40 && pixel.g > 215 && pixel.b > 215, "red inverted is cyan, got \(pixel)")

        // A broken hook file: its line, frames still flowing; the fix: the group back, the value kept.
        try directory.save("invert.hook", Self.invert.replacingOccurrences(of: "//!BIND HOOKED", with: "//!BIND HOOKED\n//!SCALE 2"))
        let failed = try dev.waitForState("the hook file's error") { error($0) != nil }
        let diagnostic = try XCTUnwrap(error(failed))
        XCTAssertEqual(diagnostic["line"] as? Int, 3, "\(diagnostic)")
        XCTAssertTrue((diagnostic["text"] as? String ?? "").contains("invert.hook:3: unknown directive"), "\(diagnostic)")
        try dev.waitForState("frames while broken") { frames($0) > frames(failed) + 10 && error($0) != nil }
        try directory.save("invert.hook", Self.invert)
        let recovered = try dev.waitForState("the fix") { error($0) == nil && ($0["reloads"] as? Int ?? 0) >= 1 }
        XCTAssertEqual(amount(recovered), 1, "the parameter survives the reload")
        try dev.waitForState("frames after the fix") { frames($0) > frames(recovered) + 5 }
        pixel = try corner()
        XCTAssert(pixel.r < 40 && pixel.g > 215 && pixel.b > 215, "cyan again after the fix, got \(pixel)")
    }

    /// A tint towards red by a dynamic `//!PARAM` (0 by default).
    static let tint = """
        //!PARAM amount
        //!DESC how far towards red
        //!TYPE DYNAMIC float
        //!MINIMUM 0.0
        //!MAXIMUM 1.0
        0.0

        //!HOOK MAIN
        //!BIND HOOKED
        //!DESC tint
        vec4 hook() {
            vec4 c = HOOKED_tex(HOOKED_pos);
            return vec4(mix(c.rgb, vec3(1.0, 0.0, 0.0), amount), c.a);
        }
        """
    static let invert = """
        //!HOOK MAIN
        //!BIND HOOKED
        //!DESC invert
        vec4 hook() { vec4 c = HOOKED_tex(HOOKED_pos); return vec4(1.0 - c.rgb, c.a); }
        """
}
