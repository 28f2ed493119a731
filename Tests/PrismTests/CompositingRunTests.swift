import XCTest
import PrismCore
import PrismFilters
import PrismMedia
@testable import Prism

/// Transitions end to end: `prism run` on the pattern, the time ramp taken from the frames' own times (the
/// output's timestamps, which start at 0 as the graph's time does), checked against the run without them.
final class CompositingRunTests: XCTestCase {
    let dir = ScratchDirectory()

    private func run(_ filter: String, to name: String) throws -> String {
        var options = RunOptions()
        options.input = .pattern
        options.session.size = Size(width: 128, height: 72)
        options.session.frameLimit = 11
        options.output = .movie(dir.path(name))
        options.session.encoder = VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 0)
        _ = try RunJob(options: options, graph: GraphBinder().bind(filter)).run(progress: nil)
        return dir.path(name)
    }

    func testWipeAndCrossfadeFollowTheFramesTimes() throws {
        let plain = try run("", to: "plain.mkv")
        let pts = try MediaInspector.inspect(plain).videoPTS.map(\.seconds)
        XCTAssertEqual(pts.count, 11)
        let duration = pts[10]  // t = time / duration: 0 at the first frame, 1 at the last
        let wiped = try run("[in]invert[b]; [in][b]wipe(direction=right, duration=\(duration))", to: "wipe.mkv")
        let faded = try run("[in]invert[b]; [in][b]crossfade(duration=\(duration))", to: "fade.mkv")
        for index in [0, 5, 10] {
            let t = pts[index] / duration
            let base = try MediaInspector.frameRGBA(plain, index: index)
            let wipe = try MediaInspector.frameRGBA(wiped, index: index)
            let fade = try MediaInspector.frameRGBA(faded, index: index)
            let width = base.size.width, edge = Double(width) * t
            var wipeError = 0, fadeError = 0, count = 0
            for i in stride(from: 0, to: base.pixels.count, by: 4) {
                let x = Double((i / 4) % width) + 0.5
                for c in 0..<3 {
                    let p = Double(base.pixels[i + c])
                    fadeError += abs(Int((p * (1 - t) + (255 - p) * t).rounded()) - Int(fade.pixels[i + c]))
                    // A band of four columns each side of the edge takes the 4:2:0 chroma of both sides.
                    guard abs(x - edge) > 4 else { continue }
                    wipeError += abs(Int(x < edge ? 255 - p : p) - Int(wipe.pixels[i + c]))
                    count += 1
                }
            }
            XCTAssertLessThanOrEqual(wipeError / max(count, 1), 3, "wipe frame \(index) (t = \(t))")
            XCTAssertLessThanOrEqual(fadeError / (base.pixels.count * 3 / 4), 3, "crossfade frame \(index) (t = \(t))")
        }
    }
}

extension CompositingRunTests {
    /// `prism render` with a PNG logo with alpha: the tool's reader hands `image` its straight-alpha pixels
    /// and overlay draws them source-over, to the pixel.
    func testPNGLogoWithAlphaThroughRender() throws {
        var pixels: [UInt8] = []
        for y in 0..<30 { for x in 0..<40 { pixels += [UInt8(x * 6), UInt8(y * 8), 200, 255] } }
        let background = RGBAImage(size: Size(width: 40, height: 30), pixels: pixels)
        let logo = ImportedImageTests.quadrants(alpha: 128)  // 16×16, the white quadrant half transparent
        try ImageFile.write(background, to: dir.path("bg.png"))
        try ImageFile.write(logo, to: dir.path("logo.png"))
        let output = dir.path("out.png")
        let result = try Tools.run(Tools.prism, ["render", "--filter", "image(file=\(dir.path("logo.png")))[l]; [in][l]overlay(x=-2, y=50%)",
                                                 dir.path("bg.png"), "-o", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        guard result.status == 0 else { return }
        let out = try ImageFile.read(path: output)
        XCTAssertEqual(out.size, background.size)
        // The logo's corner at (40 - 16 - 2, 15).
        for y in 0..<30 {
            for x in 0..<40 {
                let got = out.pixel(x: x, y: y), base = background.pixel(x: x, y: y)
                var want = [Double(base.r), Double(base.g), Double(base.b)]
                let lx = x - 22, ly = y - 15
                if lx >= 0, ly >= 0, lx < 16 {
                    let top = logo.pixel(x: lx, y: ly)
                    let a: Double = Double(top.a) / 255
                    let rgb: [Double] = [Double(top.r), Double(top.g), Double(top.b)]
                    want = (0..<3).map { (c: Int) -> Double in rgb[c] * a + want[c] * (1 - a) }
                }
                for (g, w) in zip([got.r, got.g, got.b], want) {
                    XCTAssertEqual(Double(g), w, accuracy: 1.01, "(\(x), \(y))")
                }
                XCTAssertEqual(got.a, 255, "(\(x), \(y))")
            }
        }
    }
}

extension CompositingRunTests {
    func testFiltersDescribesTheCompositingFilters() throws {
        let all = try Tools.run(Tools.prism, ["filters"])
        XCTAssertEqual(all.status, 0)
        let listing = String(decoding: all.stdout, as: UTF8.self)
        for name in ["overlay", "side-by-side", "grid", "crossfade", "wipe", "image"] {
            XCTAssertTrue(listing.contains("\n\(name) — "), "\(name) missing")
        }
        let one = try Tools.run(Tools.prism, ["filters", "overlay"])
        let detail = String(decoding: one.stdout, as: UTF8.self)
        for part in ["[inputs: input, overlay]", "opacity: float in 0...1, default 1", "fit: contain|cover|stretch|none",
                     "percent of the width (75%)", "straight", "example: prism run"] {
            XCTAssertTrue(detail.contains(part), "\(part) missing: \(detail)")
        }
    }
}
