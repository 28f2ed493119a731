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

    func testABadHookFileIsOneLineAndWritesNothing() throws {
        let scratch = ScratchDirectory()
        let input = scratch.path("in.png")
        try ImageFile.write(RGBAImage(size: Size(width: 8, height: 8), pixels: [UInt8](repeating: 128, count: 256)), to: input)
        let bad = scratch.path("bad.hook")
        try "//!HOOK MAIN\n//!BIND HOOKED\n//!SCALE 2\nvec4 hook() { return HOOKED_tex(HOOKED_pos); }\n"
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let output = scratch.path("out.png")
        let result = try Tools.run(Tools.prism, ["render", "--filter", "'\(bad)'", input, "-o", output])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("\(bad):3: unknown directive '//!SCALE 2'"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }
}
