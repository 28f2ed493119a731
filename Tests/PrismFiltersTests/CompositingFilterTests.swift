import XCTest
import PrismCore
@testable import PrismFilters

/// The compositing built-ins (`overlay`, placed `over` and `blend-mask`, `side-by-side`, `crossfade`, `wipe`,
/// ISF transitions driven by time) against references computed here, pixel by pixel, from the documented
/// maths. Two branches of the one input stand for two inputs; the second is cut with `crop` (exact), so
/// every reference reads the source image alone.
final class CompositingFilterTests: XCTestCase {
    /// Straight alpha that varies everywhere (so alpha handling shows), and an odd size.
    let image = TestImage.noise(width: 97, height: 61)

    private func run(_ text: String, time: Double = 0, fuse: Bool = true) throws -> TestImage {
        let graph = try GraphBinder().bind(text)
        let (rgba, size) = try renderStill(graph, rgba: image.rgba, size: image.size,
                                           options: CompileOptions(fuse: fuse), frame: FrameContext(time: time))
        return TestImage(size: size, rgba: rgba)
    }

    /// `top` source-over `bottom`, straight alpha.
    private func over(_ top: SIMD4<Double>, _ bottom: SIMD4<Double>) -> SIMD4<Double> {
        let alpha = top.w + bottom.w * (1 - top.w)
        guard alpha > 0 else { return .zero }
        let rgb = (SIMD3(top.x, top.y, top.z) * top.w + SIMD3(bottom.x, bottom.y, bottom.z) * bottom.w * (1 - top.w)) / alpha
        return SIMD4(rgb.x, rgb.y, rgb.z, alpha)
    }

    /// The crop (cx, cy, w, h) of the image read at its pixel (x, y), nil outside it.
    private func cropPixel(_ cx: Int, _ cy: Int, _ w: Int, _ h: Int, _ x: Int, _ y: Int) -> SIMD4<Double>? {
        guard x >= 0, y >= 0, x < w, y < h else { return nil }
        return image.pixel(cx + x, cy + y)
    }

    // MARK: overlay

    func testOverlayAtPixelPositionsWithOpacityIsSourceOverToThePixel() throws {
        // x, y in pixels, from the far edges when negative, and in percent (rounded to whole pixels).
        let cases: [(text: String, x: Int, y: Int)] = [
            ("x=30, y=7", 30, 7),
            ("x=-4, y=-0", 97 - 20 - 4, 61 - 12),
            ("x=50%, y=25%", 49, 15),  // 48.5 and 15.25, rounded
        ]
        for (placement, x0, y0) in cases {
            for fuse in [true, false] {
                let out = try run("[in]crop(10, 5, 20, 12)[t]; [in][t]overlay(\(placement), opacity=0.6)", fuse: fuse)
                let expected = TestImage.from(size: image.size) { x, y in
                    let base = image.pixel(x, y)
                    guard var top = cropPixel(10, 5, 20, 12, x - x0, y - y0) else { return base }
                    top.w *= 0.6
                    return over(top, base)
                }
                assertClose(out, expected, tolerance: 1, "overlay \(placement) fuse=\(fuse)")
            }
        }
    }

    /// Bilinear at q (pixels of `source`), edges clamped, colours weighted by alpha.
    private func bilinear(_ source: (Int, Int) -> SIMD4<Double>, size: Size, _ q: SIMD2<Double>) -> SIMD4<Double> {
        let f = q - 0.5, x0 = Int(f.x.rounded(.down)), y0 = Int(f.y.rounded(.down))
        let wx = f.x - Double(x0), wy = f.y - Double(y0)
        var sum = SIMD4<Double>.zero
        for (dx, dy, w) in [(0, 0, (1 - wx) * (1 - wy)), (1, 0, wx * (1 - wy)), (0, 1, (1 - wx) * wy), (1, 1, wx * wy)] {
            let t = source(min(max(x0 + dx, 0), size.width - 1), min(max(y0 + dy, 0), size.height - 1))
            sum += SIMD4(t.x * t.w, t.y * t.w, t.z * t.w, t.w) * w
        }
        return sum.w > 0 ? SIMD4(sum.x / sum.w, sum.y / sum.w, sum.z / sum.w, sum.w) : .zero
    }

    /// The 20×12 top placed at `origin` with `content` size, drawn only inside [low, high).
    private func overlayReference(origin: SIMD2<Int>, content: Size, low: SIMD2<Int>, high: SIMD2<Int>) -> TestImage {
        let topSize = Size(width: 20, height: 12)
        return TestImage.from(size: image.size) { x, y in
            let base = image.pixel(x, y)
            guard x >= low.x, y >= low.y, x < high.x, y < high.y else { return base }
            let q = SIMD2(Double(x - origin.x) + 0.5, Double(y - origin.y) + 0.5)
                * SIMD2(Double(topSize.width) / Double(content.width), Double(topSize.height) / Double(content.height))
            return over(bilinear({ image.pixel(10 + $0, 5 + $1) }, size: topSize, q), base)
        }
    }

    func testOverlayFitModesPlaceAndResampleTheTop() throws {
        // Top 20×12. stretch into 40×24 at (8, 6): twice the size, bilinear.
        assertClose(try run("[in]crop(10, 5, 20, 12)[t]; [in][t]overlay(x=8, y=6, width=40, height=24, fit=stretch)"),
                    overlayReference(origin: SIMD2(8, 6), content: Size(width: 40, height: 24),
                                     low: SIMD2(8, 6), high: SIMD2(48, 30)), tolerance: 2, "stretch")
        // contain in a 40×40 box at (50, 10): 40×24, centred vertically (offset 8); the rest of the box is the main input.
        assertClose(try run("[in]crop(10, 5, 20, 12)[t]; [in][t]overlay(x=50, y=10, width=40, height=40)"),
                    overlayReference(origin: SIMD2(50, 18), content: Size(width: 40, height: 24),
                                     low: SIMD2(50, 18), high: SIMD2(90, 42)), tolerance: 2, "contain")
        // cover a 20×20 box at (30, 30): scale 20/12, 33×20, offset floor(-6.5) = -7, clipped to the box.
        assertClose(try run("[in]crop(10, 5, 20, 12)[t]; [in][t]overlay(x=30, y=30, width=20, height=20, fit=cover)"),
                    overlayReference(origin: SIMD2(23, 30), content: Size(width: 33, height: 20),
                                     low: SIMD2(30, 30), high: SIMD2(50, 50)), tolerance: 2, "cover")
        // none: own size at the box's top left, clipped to a 15×8 box.
        assertClose(try run("[in]crop(10, 5, 20, 12)[t]; [in][t]overlay(x=3, y=40, width=15, height=8, fit=none)"),
                    overlayReference(origin: SIMD2(3, 40), content: Size(width: 20, height: 12),
                                     low: SIMD2(3, 40), high: SIMD2(18, 48)), tolerance: 0, "none")
        // Width alone keeps the top's aspect: 30 wide → 18 high (ratio 2/3 of a pixel per pixel: shrinking).
        assertClose(try run("[in]crop(10, 5, 20, 12)[t]; [in][t]overlay(x=60, y=0, width=30)"),
                    overlayReference(origin: SIMD2(60, 0), content: Size(width: 30, height: 18),
                                     low: SIMD2(60, 0), high: SIMD2(90, 18)), tolerance: 2, "width alone")
    }

    // MARK: over and blend-mask with placement

    func testOverTakesASmallerInputAtAPlacement() throws {
        for fuse in [true, false] {
            let out = try run("[in]crop(0, 0, 20, 12)[t]; [t][in]over(x=5, y=-3)", fuse: fuse)
            let expected = TestImage.from(size: image.size) { x, y in
                // Outside itself the input is transparent black, drawn over the background all the same.
                over(cropPixel(0, 0, 20, 12, x - 5, y - (61 - 12 - 3)) ?? .zero, image.pixel(x, y))
            }
            assertClose(out, expected, tolerance: 1, "over placed fuse=\(fuse)")
        }
    }

    func testBlendMaskTakesASmallerInputAndMaskAtAPlacement() throws {
        let out = try run("[in]crop(40, 10, 30, 20), invert[a]; [in]crop(0, 0, 30, 20)[m]; [a][in][m]blend-mask(x=10, y=25%)")
        let expected = TestImage.from(size: image.size) { x, y in
            let base = image.pixel(x, y)
            guard let input = cropPixel(40, 10, 30, 20, x - 10, y - 15), let mask = cropPixel(0, 0, 30, 20, x - 10, y - 15)
            else { return base }
            let inverted = SIMD4(1 - input.x, 1 - input.y, 1 - input.z, input.w)
            return base + (inverted - base) * mask.y
        }
        assertClose(out, expected, tolerance: 1, "blend-mask placed")
    }

    func testSameSizedOverIsUnchanged() throws {
        let out = try run("[in]invert[top]; [top][in]over")
        let expected = TestImage.from(size: image.size) { x, y in
            let p = image.pixel(x, y)
            return over(SIMD4(1 - p.x, 1 - p.y, 1 - p.z, p.w), p)
        }
        assertClose(out, expected, tolerance: 1, "over")
    }

    // MARK: side-by-side

    func testSideBySideLaysInputsOutAndCentresTheShorter() throws {
        let out = try run("[in]crop(3, 4, 20, 12)[s]; [in][s]side-by-side")
        XCTAssertEqual(out.size, Size(width: 117, height: 61))
        assertClose(out, TestImage.from(size: Size(width: 117, height: 61)) { x, y in
            if x < 97 { return image.pixel(x, y) }
            return cropPixel(3, 4, 20, 12, x - 97, y - 24) ?? SIMD4(0, 0, 0, 1)
        }, tolerance: 0, "big, small")
        let swapped = try run("[in]crop(3, 4, 20, 12)[s]; [s][in]side-by-side")
        assertClose(swapped, TestImage.from(size: Size(width: 117, height: 61)) { x, y in
            if x >= 20 { return image.pixel(x - 20, y) }
            return cropPixel(3, 4, 20, 12, x, y - 24) ?? SIMD4(0, 0, 0, 1)
        }, tolerance: 0, "small, big")
    }

    // MARK: transitions

    private func inverted(_ x: Int, _ y: Int) -> SIMD4<Double> {
        let p = image.pixel(x, y)
        return SIMD4(1 - p.x, 1 - p.y, 1 - p.z, p.w)
    }

    func testCrossfadeAtStartMiddleAndEnd() throws {
        // start 1, duration 2: t = 0 until 1 s, 0.5 at 2 s, 1 from 3 s.
        for (time, t) in [(0.5, 0.0), (2.0, 0.5), (2.5, 0.75), (3.5, 1.0)] {
            let out = try run("[in]invert[b]; [in][b]crossfade(duration=2, start=1)", time: time)
            let expected = TestImage.from(size: image.size) { x, y in
                image.pixel(x, y) * (1 - t) + inverted(x, y) * t
            }
            assertClose(out, expected, tolerance: 1, "crossfade at \(time) s")
        }
    }

    func testWipeInEachDirection() throws {
        let w = Double(image.size.width), h = Double(image.size.height)
        for direction in ["left", "right", "up", "down"] {
            for (time, t) in [(0.0, 0.0), (0.25, 0.5), (0.5, 1.0), (0.1, 0.2)] {
                let out = try run("[in]invert[b]; [in][b]wipe(direction=\(direction), duration=0.5)", time: time)
                let expected = TestImage.from(size: image.size) { x, y in
                    let cx = Double(x) + 0.5, cy = Double(y) + 0.5
                    let showsSecond = switch direction {
                    case "right": cx < w * t
                    case "left": w - cx < w * t
                    case "down": cy < h * t
                    default: h - cy < h * t
                    }
                    return showsSecond ? inverted(x, y) : image.pixel(x, y)
                }
                assertClose(out, expected, tolerance: 0, "wipe \(direction) at \(time) s")
            }
        }
    }

    func testISFTransitionTakesProgressFromTime() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("transition-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("fade.fs").path
        try """
        /*{
            "ISFVSN": "2",
            "CATEGORIES": ["Dissolve"],
            "INPUTS": [
                { "NAME": "startImage", "TYPE": "image" },
                { "NAME": "endImage", "TYPE": "image" },
                { "NAME": "progress", "TYPE": "float", "MIN": 0.0, "MAX": 1.0, "DEFAULT": 0.0 }
            ]
        }*/
        void main() {
            gl_FragColor = mix(IMG_THIS_PIXEL(startImage), IMG_THIS_PIXEL(endImage), progress);
        }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        for (time, t) in [(1.5, 0.0), (3.0, 0.5), (5.0, 1.0)] {
            let out = try run("[in]invert[b]; [in][b]\"\(path)\"(start=2, duration=2)", time: time)
            let expected = TestImage.from(size: image.size) { x, y in image.pixel(x, y) * (1 - t) + inverted(x, y) * t }
            assertClose(out, expected, tolerance: 1, "ISF transition at \(time) s")
        }
        // Without a duration, progress is the parameter as given, whatever the time.
        let given = try run("[in]invert[b]; [in][b]\"\(path)\"(progress=0.25)", time: 3)
        assertClose(given, TestImage.from(size: image.size) { x, y in image.pixel(x, y) * 0.75 + inverted(x, y) * 0.25 },
                    tolerance: 1, "ISF transition, progress given")
    }

    // MARK: errors

    /// The error `text` gives, as one line, or a failure.
    private func errorLine(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try run(text)
            XCTFail("\(text): no error", file: file, line: line)
            return ""
        } catch {
            let message = "\(error)"
            XCTAssertFalse(message.contains("\n"), "\(text): '\(message)' is not one line", file: file, line: line)
            return message
        }
    }

    func testBadParametersAreOneLineErrors() throws {
        XCTAssertTrue(errorLine("[in]crop(0, 0, 8, 8)[t]; [in][t]overlay(x=left)").contains("x takes pixels"))
        XCTAssertTrue(errorLine("[in]crop(0, 0, 8, 8)[t]; [in][t]overlay(y=1e9)").contains("y takes pixels"))
        XCTAssertTrue(errorLine("[in]crop(0, 0, 8, 8)[t]; [in][t]overlay(width=-5)").contains("width must not be negative"))
        XCTAssertTrue(errorLine("[in]crop(0, 0, 8, 8)[t]; [in][t]overlay(fit=squash)").contains("fit"))
        XCTAssertTrue(errorLine("[in]crop(0, 0, 8, 8)[t]; [in][t]overlay(opacity=2)").contains("opacity"))
        XCTAssertTrue(errorLine("[in]crop(0, 0, 8, 8)[t]; [t][in]over(x=ten)").contains("x takes pixels"))
        XCTAssertTrue(errorLine("[in]crop(0, 0, 8, 8)[t]; [in][t]crossfade").contains("inputs differ in size"))
        XCTAssertTrue(errorLine("[in]invert[b]; [in][b]crossfade(duration=0)").contains("duration"))
        XCTAssertTrue(errorLine("[in]invert[b]; [in][b]wipe(direction=diagonal)").contains("direction"))
        // A same-size requirement is still there for unplaced inputs: the mask of blend-mask is placed, the
        // background sets the size.
        XCTAssertEqual(try run("[in]crop(0, 0, 8, 8)[t]; [t][in]over").size, image.size)
    }

    func testPercentagesParseAsWords() throws {
        let graph = try GraphParser.parse("overlay(x=75%, y=-10%)")
        XCTAssertEqual(graph.chains.first?.elements.first?.arguments.map(\.value), [.word("75%"), .word("-10%")])
    }
}

extension CompositingFilterTests {
    func testGridPlacesInputsInCellsOfTheFirstInputsSize() throws {
        // Three inputs, two columns: cells 97×61, output 194×122; input 1 (a 20×12 crop) centred in its cell,
        // input 2 (inverted) in the second row's first cell, black in the empty fourth cell and around the crop.
        let out = try run("[in]crop(3, 4, 20, 12)[s]; [in]invert[b]; [in][s][b]grid(columns=2)")
        XCTAssertEqual(out.size, Size(width: 194, height: 122))
        assertClose(out, TestImage.from(size: Size(width: 194, height: 122)) { x, y in
            switch (x / 97, y / 61) {
            case (0, 0): return image.pixel(x, y)
            case (1, 0):
                let cx = x - 97 - (97 - 20) / 2, cy = y - (61 - 12) / 2
                return cropPixel(3, 4, 20, 12, cx, cy) ?? SIMD4(0, 0, 0, 1)
            case (0, 1):
                let p = image.pixel(x, y - 61)
                return SIMD4(1 - p.x, 1 - p.y, 1 - p.z, p.w)
            default: return SIMD4(0, 0, 0, 1)
            }
        }, tolerance: 0, "grid 3 in 2 columns")
        // One column: a stack; more columns than inputs: one row.
        XCTAssertEqual(try run("[in]invert[b]; [in][b]grid(columns=1)").size, Size(width: 97, height: 122))
        XCTAssertEqual(try run("[in]invert[b]; [in][b]grid(columns=5)").size, Size(width: 194, height: 61))
        XCTAssertTrue(errorLine("[in]invert[b]; [in][b]grid(columns=0)").contains("columns"))
    }
}

extension CompositingFilterTests {
    private func passCount(_ text: String) throws -> Int {
        let graph = try GraphBinder().bind(text)
        return try SharedGPU.get().perform {
            try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: image.size, sinks: [.rgba]).passCount
        }
    }

    /// The point-wise transitions and the exact layouts fuse with their neighbours into the packing pass; overlay
    /// needs its top as a texture (one pass more), its main input stays fused.
    func testCompositionsFuseWithTheirNeighbours() throws {
        XCTAssertEqual(try passCount("[in]invert[b]; [in][b]crossfade(duration=2), mono"), 1)
        XCTAssertEqual(try passCount("[in]invert[b]; [in][b]wipe, invert"), 1)
        XCTAssertEqual(try passCount("[in]crop(0, 0, 20, 12)[s]; [in][s]side-by-side, invert"), 1)
        XCTAssertEqual(try passCount("[in]crop(0, 0, 20, 12)[t]; [t][in]over(x=4, y=4), invert"), 1)
        XCTAssertEqual(try passCount("[in]crop(0, 0, 20, 12)[t]; [in]invert[m]; [m][t]overlay(x=4, y=4), mono"), 2)
    }
}

extension CompositingFilterTests {
    /// A 7×5 logo whose alpha runs from transparent to opaque (colours kept under low alpha), handed over
    /// by the binder's image reader; the file only has to exist.
    func testImageGeneratorIsALogoWithAlphaForOverlay() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("logo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("logo.png").path
        try Data([0]).write(to: URL(fileURLWithPath: path))
        let logo = TestImage.from(size: Size(width: 7, height: 5)) { x, y in
            SIMD4(Double(x) / 6, 1 - Double(y) / 4, 0.5, Double(x + y * 7) / 34)
        }
        let binder = GraphBinder(imageLoader: { _ in (logo.size, logo.rgba) })
        for fuse in [true, false] {
            let graph = try binder.bind("image(file=\(path))[logo]; [in][logo]overlay(x=-3, y=2, opacity=0.8)")
            let (rgba, size) = try renderStill(graph, rgba: image.rgba, size: image.size, options: CompileOptions(fuse: fuse))
            let expected = TestImage.from(size: image.size) { x, y in
                let base = image.pixel(x, y), lx = x - (97 - 7 - 3), ly = y - 2
                guard lx >= 0, ly >= 0, lx < 7, ly < 5 else { return base }
                var top = logo.pixel(lx, ly)
                top.w *= 0.8
                return over(top, base)
            }
            assertClose(TestImage(size: size, rgba: rgba), expected, tolerance: 1, "logo fuse=\(fuse)")
        }
        // The image alone is its own size, pixel for pixel.
        let alone = try binder.bind("image(file=\(path))")
        let (rgba, size) = try renderStill(alone, rgba: image.rgba, size: image.size)
        assertClose(TestImage(size: size, rgba: rgba), logo, tolerance: 0, "image alone")
        XCTAssertTrue(errorLine("image(file=\(directory.path)/missing.png)[l]; [in][l]overlay").contains("no such image file"))
        XCTAssertTrue(errorLine("image[l]; [in][l]overlay").contains("file="))
    }
}
