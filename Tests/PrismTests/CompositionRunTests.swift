import Foundation
import XCTest
import PrismCore
import PrismMedia

/// The composition scenes end to end through the built `prism`, several inputs composed by the built-ins, every
/// checked frame against a reference computed here from what the inputs are:
/// - the emulated camera in the corner of a 1080p clip, with a PNG logo (alpha) at 80 % opacity;
/// - a cross-fade between two clips of different sizes and rates;
/// - a 2×2 grid of four inputs (three clips and a still).
/// `PRISM_COMPOSE_SECONDS=30` runs the first scene for 30 s.
final class CompositionRunTests: XCTestCase {
    let dir = ScratchDirectory()
    static let background: (r: Int, g: Int, b: Int) = (0x40, 0x60, 0x80)

    /// A lossless BT.709 clip of one colour whose frame n shows n in binary as 16-pixel white blocks along
    /// the top, from x = `bitsX` (bit i at bitsX + 16 i, y 8…23).
    private func clip(_ name: String, size: Size, rate: Int, seconds: Double, color: String, bitsX: Int = 0,
                      bits: Int = 0) throws -> String {
        var filter = "color=c=\(color):s=\(size.width)x\(size.height):r=\(rate):d=\(seconds)"
        for i in 0..<bits {
            filter += ",drawbox=x=\(bitsX + 16 * i):y=8:w=16:h=16:c=white:t=fill:enable='eq(mod(floor(n/pow(2\\,\(i)))\\,2)\\,1)'"
        }
        filter += ",scale=out_color_matrix=bt709:out_range=tv,format=yuv420p"
        let path = dir.path(name)
        try Tools.ffmpeg(["-f", "lavfi", "-i", filter, "-c:v", "ffv1", "-colorspace", "bt709", "-color_primaries", "bt709",
                          "-color_trc", "bt709", "-color_range", "tv", path])
        return path
    }

    /// Every `every`th frame of a lossless (FFV1 BGRA) movie as RGBA images.
    private func frames(_ path: String, size: Size, every: Int = 1) throws -> [RGBAImage] {
        let result = try Tools.run(try XCTUnwrap(Tools.which("ffmpeg")),
                                   ["-hide_banner", "-loglevel", "error", "-i", path, "-vf", "select='not(mod(n\\,\(every)))'",
                                    "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgba", "-"], timeout: 300)
        XCTAssertEqual(result.status, 0, result.stderr)
        let bytes = [UInt8](result.stdout), frameBytes = size.width * size.height * 4
        return stride(from: 0, to: bytes.count - frameBytes + 1, by: frameBytes).map {
            RGBAImage(size: size, pixels: Array(bytes[$0..<($0 + frameBytes)]))
        }
    }

    private func pixel(_ image: RGBAImage, _ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let i = (y * image.size.width + x) * 4
        return (Int(image.pixels[i]), Int(image.pixels[i + 1]), Int(image.pixels[i + 2]))
    }

    private func assertColor(_ got: (r: Int, g: Int, b: Int), _ want: (r: Int, g: Int, b: Int), tolerance: Int = 4,
                             _ label: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line) {
        let off = max(abs(got.r - want.r), abs(got.g - want.g), abs(got.b - want.b))
        XCTAssertLessThanOrEqual(off, tolerance, "\(label()): \(got), expected \(want)", file: file, line: line)
    }

    /// The number drawn as `count` 16x16 blocks from (x, y), bit i at x + 16 i (white: set).
    private func number(_ image: RGBAImage, x: Int, y: Int, count: Int) -> Int {
        (0..<count).reduce(0) { value, bit in
            let p = pixel(image, x + 16 * bit + 8, y + 8)
            return p.r + p.g + p.b > 3 * 128 ? value | 1 << bit : value
        }
    }

    // MARK: camera in the corner of a 1080p clip, with a logo

    func testCameraInTheCornerOfA1080pClipWithALogo() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["PRISM_COMPOSE_SECONDS"] ?? "") ?? 2
        let size = Size(width: 1920, height: 1080)
        let main = try clip("main.mkv", size: size, rate: 30, seconds: seconds, color: "0x406080", bitsX: 864, bits: 11)
        let logoPath = dir.path("logo.png")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "color=c=yellow:s=64x64,format=rgba,geq=r=255:g=200:b=0:a='255*X/63'",
                          "-frames:v", "1", logoPath])
        let logo = try ImageFile.read(path: logoPath)
        let out = dir.path("out.mkv")
        let result = try Tools.run(Tools.prism, ["run", main, CameraTests.camera, "--input", "logo=\(logoPath)",
                                                 "--filter", "[0][1]overlay(x=-16, y=-16)[pip]; [pip][logo]overlay(x=16, y=16, opacity=0.8)",
                                                 "--codec", "ffv1", "-o", out, "--quiet"],
                                   environment: ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": CameraTests.camera,
                                                 "PRISM_FAKE_V4L2_SIZES": "320x240"], timeout: 600)
        XCTAssertEqual(result.status, 0, result.stderr)
        let total = Int(seconds * 30)
        XCTAssertEqual(try MediaInspector.inspect(out).videoFrameCount, total)
        let every = 10
        let sampled = try frames(out, size: size, every: every)
        XCTAssertEqual(sampled.count, (total + every - 1) / every)
        let camera = (x: 1920 - 16 - 320, y: 1080 - 16 - 240)
        var lastCameraFrame = -1
        for (index, frame) in sampled.enumerated() {
            let label = "output frame \(index * every)"
            // The clip's own frame, by its number.
            XCTAssertEqual(number(frame, x: 864, y: 8, count: 11), index * every, label)
            // The background away from everything drawn on it.
            for y in stride(from: 120, to: 800, by: 97) {
                for x in stride(from: 100, to: 1900, by: 151) { assertColor(pixel(frame, x, y), Self.background, "\(label) (\(x),\(y))") }
            }
            // The logo over the clip: straight alpha times the opacity, pixel by pixel.
            for y in stride(from: 0, to: 64, by: 7) {
                for x in 0..<64 {
                    let i = (y * 64 + x) * 4
                    let a = Double(logo.pixels[i + 3]) / 255 * 0.8
                    func mix(_ top: UInt8, _ under: Int) -> Int { Int((Double(top) * a + Double(under) * (1 - a)).rounded()) }
                    let want = (mix(logo.pixels[i], Self.background.r), mix(logo.pixels[i + 1], Self.background.g),
                                mix(logo.pixels[i + 2], Self.background.b))
                    assertColor(pixel(frame, 16 + x, 16 + y), want, tolerance: 5, "\(label) logo (\(x),\(y))")
                }
            }
            // The camera's picture in its box: its frame number, its red bar where the fake draws it for that
            // number, blue elsewhere; the clip around the box untouched; the camera never goes back in time.
            let k = number(frame, x: camera.x + 8, y: camera.y + 8, count: 16)
            XCTAssertGreaterThanOrEqual(k, lastCameraFrame, "\(label): camera frame \(k) after \(lastCameraFrame)")
            lastCameraFrame = k
            let bar = 16, barX = (4 * k) % (320 - bar) & ~1
            let middle = camera.y + 120
            let inBar = pixel(frame, camera.x + barX + bar / 2, middle)
            XCTAssert(inBar.r > 190 && inBar.g < 70 && inBar.b < 70, "\(label): camera bar \(inBar)")
            let away = pixel(frame, camera.x + (barX + bar / 2 + 160) % 320, middle)
            XCTAssert(away.b > 190 && away.r < 70, "\(label): camera background \(away)")
            assertColor(pixel(frame, camera.x - 1, middle), Self.background, "\(label) left of the camera")
            assertColor(pixel(frame, camera.x + 100, camera.y - 1), Self.background, "\(label) above the camera")
            assertColor(pixel(frame, 1919, 1079), Self.background, "\(label) corner below the camera")
        }
    }

    // MARK: cross-fade

    /// Two clips of other sizes and rates (320x180 at 30 fps, 160x90 at 25 fps, scaled to the first):
    /// every output frame is the CPU mix of the two colours at its time, from 0.5 s over 1 s.
    func testCrossfadeBetweenClipsOfDifferentSizesAndRates() throws {
        let a = try clip("a.mkv", size: Size(width: 320, height: 180), rate: 30, seconds: 2, color: "0xC02040")
        let b = try clip("b.mkv", size: Size(width: 160, height: 90), rate: 25, seconds: 2.4, color: "0x20A0E0")
        let out = dir.path("fade.mkv")
        let result = try Tools.run(Tools.prism, ["run", a, b, "--filter", "[1]scale(size=320x180)[b]; [0][b]crossfade(start=0.5, duration=1)",
                                                 "--codec", "ffv1", "-o", out, "--quiet"], timeout: 300)
        XCTAssertEqual(result.status, 0, result.stderr)
        let all = try frames(out, size: Size(width: 320, height: 180))
        XCTAssertEqual(all.count, 60, "the first input drives the output: 2 s at 30 fps")
        for (i, frame) in all.enumerated() {
            let t = min(1, max(0, (Double(i) / 30 - 0.5) / 1))
            func mix(_ x: Int, _ y: Int) -> Int { Int((Double(x) * (1 - t) + Double(y) * t).rounded()) }
            let want = (mix(0xC0, 0x20), mix(0x20, 0xA0), mix(0x40, 0xE0))
            for (x, y) in [(5, 5), (160, 90), (314, 174)] { assertColor(pixel(frame, x, y), want, "frame \(i) at t=\(t) (\(x),\(y))") }
        }
    }

    // MARK: grid

    /// Four inputs — three clips of other sizes and a PNG still — in a 2×2 grid of the first input's cells:
    /// each cell its input's colour, centred and clipped, black where an input is smaller than its cell.
    func testGridOfFourInputs() throws {
        let a = try clip("a.mkv", size: Size(width: 160, height: 120), rate: 30, seconds: 1, color: "0xE04020")
        let b = try clip("b.mkv", size: Size(width: 160, height: 120), rate: 25, seconds: 1, color: "0x30C050")
        let c = try clip("c.mkv", size: Size(width: 80, height: 60), rate: 30, seconds: 1, color: "0x2040E0")
        let still = dir.path("d.png")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "color=c=0xF0D020:s=200x150", "-frames:v", "1", still])
        let out = dir.path("grid.mkv")
        let result = try Tools.run(Tools.prism, ["run", a, b, c, still, "--filter", "[0][1][2][3]grid(columns=2)",
                                                 "--codec", "ffv1", "-o", out, "--quiet"], timeout: 300)
        XCTAssertEqual(result.status, 0, result.stderr)
        let all = try frames(out, size: Size(width: 320, height: 240))
        XCTAssertEqual(all.count, 30)
        let black = (0, 0, 0)
        for (i, frame) in all.enumerated() {
            assertColor(pixel(frame, 80, 60), (0xE0, 0x40, 0x20), "frame \(i) cell 0")
            assertColor(pixel(frame, 240, 60), (0x30, 0xC0, 0x50), "frame \(i) cell 1")
            // The small clip centred in its cell (40…119, 150…209), black around it.
            assertColor(pixel(frame, 80, 180), (0x20, 0x40, 0xE0), "frame \(i) cell 2")
            assertColor(pixel(frame, 41, 151), (0x20, 0x40, 0xE0), "frame \(i) cell 2 corner")
            assertColor(pixel(frame, 38, 180), black, "frame \(i) cell 2 margin")
            assertColor(pixel(frame, 80, 125), black, "frame \(i) cell 2 margin above")
            // The larger still clipped to its cell, filling it.
            assertColor(pixel(frame, 161, 121), (0xF0, 0xD0, 0x20), tolerance: 5, "frame \(i) cell 3 corner")
            assertColor(pixel(frame, 318, 238), (0xF0, 0xD0, 0x20), tolerance: 5, "frame \(i) cell 3 far corner")
        }
    }

    // MARK: prism dev

    /// The same composition live in `prism dev`: the shader reads the clip, `--filter` places the camera
    /// and the logo over it, and a hot reload of the shader (inverting the clip) changes the clip under
    /// them while they stay as they were.
    func testDevComposesACameraAndALogoOverTheShaderAndReloads() throws {
        let directory = try TemporaryDirectory()
        let size = Size(width: 640, height: 360)
        let main = try clip("main.mkv", size: size, rate: 30, seconds: 1, color: "0x406080")
        let logoPath = dir.path("logo.png")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "color=c=0xFFC800:s=64x64", "-frames:v", "1", logoPath])
        let shader = """
            /*{ "INPUTS": [ {"NAME": "inputImage", "TYPE": "image"}, {"NAME": "amount", "TYPE": "float", "DEFAULT": 0.0} ] }*/
            void main() {
                vec4 c = IMG_NORM_PIXEL(inputImage, isf_FragNormCoord);
                gl_FragColor = vec4(mix(c.rgb, 1.0 - c.rgb, amount), c.a);
            }
            """
        try directory.save("look.fs", shader)
        let dev = try DevProcess(arguments: [directory.file("look.fs"), main, CameraTests.camera, logoPath,
                                             "--filter", "[1]overlay(x=-16, y=-16), [2]overlay(x=16, y=16, opacity=0.5)"],
                                 environment: ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": CameraTests.camera,
                                               "PRISM_FAKE_V4L2_SIZES": "320x240"])
        defer { dev.stop() }
        func snapshot() throws -> RGBAImage {
            let image = try dev.snapshot()
            XCTAssertEqual(image.size, size)
            return image
        }
        func check(_ image: RGBAImage, background: (r: Int, g: Int, b: Int), _ label: String) {
            assertColor(pixel(image, 320, 100), background, "\(label): the clip")
            // Half the logo's yellow over the clip.
            let logo = (Int((255 + Double(background.r)) / 2), Int((200 + Double(background.g)) / 2), Int(Double(background.b) / 2))
            assertColor(pixel(image, 48, 48), logo, tolerance: 5, "\(label): the logo")
            // The camera's picture in its corner: blue away from its red bar (placed by its frame number).
            let box = (x: 640 - 16 - 320, y: 360 - 16 - 240)
            let k = number(image, x: box.x + 8, y: box.y + 8, count: 16)
            let away = pixel(image, box.x + (((4 * k) % (320 - 16) & ~1) + 8 + 160) % 320, box.y + 120)
            XCTAssert(away.b > 190 && away.r < 70, "\(label): the camera's background in its corner: \(away)")
        }
        try dev.waitForState(timeout: 60, "frames flowing") { ($0["frames"] as? Int ?? 0) > 5 }
        check(try snapshot(), background: Self.background, "before the reload")
        try directory.save("look.fs", shader.replacingOccurrences(of: "\"DEFAULT\": 0.0", with: "\"DEFAULT\": 1.0"))
        let reloaded = try dev.waitForState(timeout: 60, "the reload") { !($0["error"] is [String: Any]) && ($0["reloads"] as? Int ?? 0) >= 1 }
        let frames = reloaded["frames"] as? Int ?? 0
        try dev.waitForState(timeout: 60, "frames after the reload") { ($0["frames"] as? Int ?? 0) > frames + 5 }
        check(try snapshot(), background: (255 - Self.background.r, 255 - Self.background.g, 255 - Self.background.b), "after the reload")
    }
}
