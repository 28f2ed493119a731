import XCTest
import PrismCore
@testable import PrismFilters

final class GeometryFilterTests: XCTestCase {
    /// The shared varied image (97x61) and a tall odd-sized noise image whose alpha varies too.
    let images = [TestImage.varied(), TestImage.noise(width: 45, height: 71)]

    // MARK: exact remaps: tolerance 0, they copy pixels

    func remapCases(_ image: TestImage) -> [(label: String, steps: [(String, [String: ParameterValue])], expected: TestImage)] {
        let w = image.size.width, h = image.size.height
        var cases: [(String, [(String, [String: ParameterValue])], TestImage)] = []
        for angle in [90, 180, 270] {
            cases.append(("rotate \(angle)", [("rotate", ["angle": .int(angle)])], image.rotated(angle)))
        }
        cases.append(("flip", [("flip", [:])], image.remapped(to: image.size) { x, y in (x, h - 1 - y) }))
        cases.append(("mirror", [("mirror", [:])], image.remapped(to: image.size) { x, y in (w - 1 - x, y) }))
        let crop = Size(width: 17, height: 23)
        cases.append(("crop", [("crop", ["x": .int(5), "y": .int(9), "width": .int(17), "height": .int(23)])],
                      image.remapped(to: crop) { x, y in (x + 5, y + 9) }))
        // Width 0 and a height past the bottom edge both run to the edge.
        let clamped = Size(width: w - 30, height: h - 4)
        cases.append(("crop clamped", [("crop", ["x": .int(30), "y": .int(4), "width": .int(0), "height": .int(1000)])],
                      image.remapped(to: clamped) { x, y in (x + 30, y + 4) }))
        cases.append(("crop one pixel", [("crop", ["x": .int(w - 1), "y": .int(h - 1), "width": .int(1), "height": .int(1)])],
                      image.remapped(to: Size(width: 1, height: 1)) { _, _ in (w - 1, h - 1) }))
        return cases
    }

    func testRemapsAreExactFusedAndUnfused() throws {
        for image in images {
            for (label, steps, expected) in remapCases(image) {
                for fuse in [true, false] {
                    let out = try render(chain(steps), image, fuse: fuse)
                    assertClose(out, expected, tolerance: 0, "\(label) \(image.size) fuse=\(fuse)")
                }
            }
        }
    }

    func testRemapsBetweenInvertsFuseIntoOnePassAndStayExact() throws {
        for image in images {
            for (label, steps, expected) in remapCases(image) {
                let graph = try chain([("invert", [:])] + steps + [("invert", [:])])
                for fuse in [true, false] {
                    assertClose(try render(graph, image, fuse: fuse), expected, tolerance: 0,
                                "invert, \(label), invert \(image.size) fuse=\(fuse)")
                }
                let before = try chain([("invert", [:])] + steps)
                assertClose(try render(before, image), expected.inverted, tolerance: 0, "invert, \(label) \(image.size)")
                let after = try chain(steps + [("invert", [:])])
                assertClose(try render(after, image), expected.inverted, tolerance: 0, "\(label), invert \(image.size)")
            }
        }
        // Fused, the whole chain is a single pass (the packing pass): no texture between the filters.
        let graph = try chain([("invert", [:]), ("rotate", ["angle": .int(90)]), ("crop", ["x": .int(3)]),
                               ("mirror", [:]), ("flip", [:]), ("invert", [:])])
        let passes = try SharedGPU.get().perform {
            try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: images[0].size, sinks: [.rgba]).passCount
        }
        XCTAssertEqual(passes, 1)
    }

    func testRotationsCompose() throws {
        let image = images[1]
        let four = try chain(Array(repeating: ("rotate", ["angle": ParameterValue.int(90)]), count: 4))
        assertClose(try render(four, image), image, tolerance: 0, "four quarter turns")
        let back = try chain([("rotate", ["angle": .int(90)]), ("rotate", ["angle": .int(270)])])
        assertClose(try render(back, image), image, tolerance: 0, "90 then 270")
        let half = try chain([("flip", [:]), ("mirror", [:])])
        assertClose(try render(half, image), image.rotated(180), tolerance: 0, "flip + mirror = rotate 180")
    }

    func testWrongGeometryParametersNameTheParameter() throws {
        let rotate = try XCTUnwrap(BuiltinFilters.named("rotate"))
        assertUsageError(naming: "angle", "rotate 45") { _ = try rotate.instantiate(["angle": .int(45)]) }
        assertUsageError(naming: "angle", "rotate 360") { _ = try rotate.instantiate(["angle": .int(360)]) }
        let crop = try XCTUnwrap(BuiltinFilters.named("crop"))
        assertUsageError(naming: "x", "negative x") { _ = try crop.instantiate(["x": .int(-5)]) }
        assertUsageError(naming: "width", "negative width") { _ = try crop.instantiate(["width": .int(-1)]) }
        // A crop starting outside the input fails when the graph meets its input size.
        assertUsageError(naming: "x", "crop outside") {
            _ = try self.render(self.chain([("crop", ["x": .int(97)])]), self.images[0])
        }
        assertUsageError(naming: "y", "crop outside") {
            _ = try self.render(self.chain([("crop", ["y": .int(500), "height": .int(2)])]), self.images[0])
        }
        let scale = try XCTUnwrap(BuiltinFilters.named("scale"))
        assertUsageError(naming: "size", "size 0x0") { _ = try scale.instantiate(["size": .size(Size(width: 0, height: 0))]) }
        assertUsageError(naming: "size", "size 10x0") { _ = try scale.instantiate(["size": .size(Size(width: 10, height: 0))]) }
        assertUsageError(naming: "mode", "mode") { _ = try scale.instantiate(["mode": .choice("squash")]) }
    }

    // MARK: scale

    /// The documented placement, computed here on its own: (offset, content size) in output pixels,
    /// (origin, ratio) in input pixels.
    func scaleReference(_ image: TestImage, _ size: Size, _ mode: String) -> TestImage {
        let inW = Double(image.size.width), inH = Double(image.size.height)
        let outW = Double(size.width), outH = Double(size.height)
        var offset = (x: 0, y: 0), content = size, origin = (x: 0.0, y: 0.0)
        var ratio = (x: inW / outW, y: inH / outH)
        switch mode {
        case "fit":
            if inW / inH >= outW / outH {
                content = Size(width: size.width, height: Int((outW * inH / inW).rounded()))
            } else {
                content = Size(width: Int((outH * inW / inH).rounded()), height: size.height)
            }
            offset = ((size.width - content.width) / 2, (size.height - content.height) / 2)
            ratio = (inW / Double(content.width), inH / Double(content.height))
        case "fill":
            let s = max(outW / inW, outH / inH)
            ratio = (1 / s, 1 / s)
            origin = ((inW - outW / s) / 2, (inH - outH / s) / 2)
        default: break
        }
        let xs = Resample1D.weights(count: content.width, inputCount: image.size.width, origin: origin.x, ratio: ratio.x)
        let ys = Resample1D.weights(count: content.height, inputCount: image.size.height, origin: origin.y, ratio: ratio.y)
        let resampled = Resample1D.apply(image, x: xs, y: ys)
        return TestImage.from(size: size) { x, y in
            let cx = x - offset.x, cy = y - offset.y
            guard (0..<content.width).contains(cx), (0..<content.height).contains(cy) else { return SIMD4(0, 0, 0, 1) }
            return resampled[cy][cx]
        }
    }

    /// Enlarging samples with texture(): llvmpipe filters RGBA8 in 8-bit fixed point (weights and
    /// result), so ±1 against the double reference; shrinking reads texels exactly and sums in float,
    /// so only the final rounding can differ: ±1 too.
    func testScaleModesMatchTheReference() throws {
        let cases: [(Size, String, String)] = [
            (Size(width: 200, height: 200), "fit", "enlarge, bars top and bottom"),
            (Size(width: 40, height: 40), "fit", "shrink, bars top and bottom"),
            (Size(width: 300, height: 50), "fit", "bars left and right"),
            (Size(width: 50, height: 80), "fill", "shrink, centre crop"),
            (Size(width: 251, height: 120), "fill", "enlarge, centre crop"),
            (Size(width: 300, height: 100), "stretch", "enlarge both"),
            (Size(width: 30, height: 150), "stretch", "shrink x, enlarge y"),
            (Size(width: 9, height: 7), "stretch", "shrink ~10x"),
            (Size(width: 97, height: 61), "stretch", "same size"),
        ]
        for image in images {
            for (size, mode, label) in cases {
                let out = try render(chain([("scale", ["size": .size(size), "mode": .choice(mode)])]), image)
                XCTAssertEqual(out.size, size, "\(label) size")
                assertClose(out, scaleReference(image, size, mode), tolerance: 1, "scale \(size) \(mode) \(image.size): \(label)")
                let unfused = try render(chain([("scale", ["size": .size(size), "mode": .choice(mode)])]), image, fuse: false)
                assertClose(unfused, out, tolerance: 0, "scale \(size) \(mode) unfused")
            }
        }
    }

    func testFitLeavesBlackBarsAndFillCoversEverything() throws {
        // 97x61 into 200x200: content 200x126 at y = 37, bars above and below.
        let image = TestImage.varied()
        let fit = try render(chain([("scale", ["size": .size(Size(width: 200, height: 200))])]), image)
        XCTAssertEqual(fit.size, Size(width: 200, height: 200))
        for y in [0, 36, 163, 199] { for x in [0, 100, 199] {
            XCTAssertEqual(fit.codes(x, y), [0, 0, 0, 255], "bar at \(x),\(y)")
        } }
        for y in [37, 100, 162] {
            XCTAssertNotEqual(fit.codes(0, y), [0, 0, 0, 255], "content at 0,\(y)")
            XCTAssertNotEqual(fit.codes(199, y), [0, 0, 0, 255], "content at 199,\(y)")
        }
        // A white image, so that any black is a bar: 300x50 fit has bars left and right only.
        let white = TestImage.painted(width: 97, height: 61, background: 255, rects: [])
        let pillar = try render(chain([("scale", ["size": .size(Size(width: 300, height: 50))])]), white)
        let contentWidth = Int((50.0 * 97 / 61).rounded()), left = (300 - contentWidth) / 2
        for x in 0..<300 {
            let expected: [UInt8] = (left..<(left + contentWidth)).contains(x) ? [255, 255, 255, 255] : [0, 0, 0, 255]
            XCTAssertEqual(pillar.codes(x, 25), expected, "column \(x)")
            XCTAssertEqual(pillar.codes(x, 0), expected, "column \(x), top row")
        }
        let fill = try render(chain([("scale", ["size": .size(Size(width: 50, height: 80)), "mode": .choice("fill")])]), white)
        XCTAssertTrue(fill.rgba.allSatisfy { $0 == 255 }, "fill leaves no bars")
    }

    /// A one-pixel checkerboard shrunk 5x must come out flat grey: bilinear sampling alone would
    /// return whole black or white pixels (aliasing), the area average returns their mean.
    func testShrinkingDoesNotAlias() throws {
        let board = TestImage.from(size: Size(width: 200, height: 150)) { x, y in
            (x + y) % 2 == 0 ? SIMD4(1, 1, 1, 1) : SIMD4(0, 0, 0, 1)
        }
        let out = try render(chain([("scale", ["size": .size(Size(width: 40, height: 30)), "mode": .choice("stretch")])]), board)
        for y in 0..<30 { for x in 0..<40 {
            // 25 pixels a footprint: 13 of one colour, 12 of the other: 127.5 ± 5.1.
            XCTAssertLessThanOrEqual(abs(Int(out.codes(x, y)[0]) - 128), 6, "\(x),\(y)")
        } }
    }
}
