import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// face-mask and the face shorthands against references computed here on the CPU.
final class FaceFilterTests: XCTestCase {
    private func render(_ text: String, _ image: TestImage, regions: [FrameContext.Region]) throws -> TestImage {
        let graph = try GraphBinder().bind(text)
        let (rgba, size) = try renderStill(graph, rgba: image.rgba, size: image.size, frame: FrameContext(regions: regions))
        return TestImage(size: size, rgba: rgba)
    }

    /// The seed's mask: one gradient per face from opaque white (inside r0) to transparent (outside r1),
    /// composited source-over onto black, written out as straight alpha compositing step by step.
    private func maskReference(_ size: Size, _ regions: [FrameContext.Region], scale: Double, feather: Double) -> [[Double]] {
        var mask = [[Double]](repeating: [Double](repeating: 0, count: size.width), count: size.height)
        for y in 0..<size.height { for x in 0..<size.width {
            var value = 0.0  // the black background, as coverage
            for region in regions {
                let cx = region.center.x * Double(size.width), cy = region.center.y * Double(size.height)
                let r1 = region.radius * Double(size.width) * scale, r0 = r1 * (1 - feather)
                let d = ((Double(x) + 0.5 - cx) * (Double(x) + 0.5 - cx) + (Double(y) + 0.5 - cy) * (Double(y) + 0.5 - cy)).squareRoot()
                let alpha = 1 - min(max((d - r0) / max(r1 - r0, 1e-6), 0), 1)
                value = alpha * 1 + value * (1 - alpha)  // white over what is there
            }
            mask[y][x] = value
        } }
        return mask
    }

    private let regions = [
        FrameContext.Region(center: SIMD2(0.3, 0.4), radius: 0.12),
        FrameContext.Region(center: SIMD2(0.42, 0.5), radius: 0.08),  // overlaps the first
        FrameContext.Region(center: SIMD2(0.8, 0.7), radius: 0.1),
    ]

    func testMaskIsOneSoftDiscPerFaceJoinedWithSourceOver() throws {
        let image = TestImage.varied(width: 120, height: 80)
        let out = try render("face-mask(size=1.5, feather=0.4)", image, regions: regions)
        let mask = maskReference(image.size, regions, scale: 1.5, feather: 0.4)
        let expected = TestImage.from(size: image.size) { x, y in SIMD4(mask[y][x], mask[y][x], mask[y][x], 1) }
        assertClose(out, expected, tolerance: 1, "face-mask")
        // Every face is in the mask, not only the first.
        for region in regions {
            let x = Int(region.center.x * 120), y = Int(region.center.y * 80)
            XCTAssertEqual(out.codes(x, y)[1], 255, "centre of face at \(region.center)")
        }
        // No faces: an all-black mask.
        let empty = try render("face-mask", image, regions: [])
        XCTAssertEqual(Set(stride(from: 0, to: empty.rgba.count, by: 4).map { empty.rgba[$0 + 1] }), [0])
    }

    func testFacePixellateIsPixellateThroughTheMask() throws {
        let image = TestImage.varied(width: 120, height: 80)
        let out = try render("face-pixellate(scale=6, size=1.3, feather=0.3)", image, regions: regions)
        // Pixellate (blocks centred on the frame centre), then blend through the mask, on the CPU.
        let scale = 6.0, size = image.size
        let ox0 = 0.5 * Double(size.width) - scale / 2, oy0 = 0.5 * Double(size.height) - scale / 2
        let origin = SIMD2(ox0 - scale * (ox0 / scale).rounded(.up), oy0 - scale * (oy0 / scale).rounded(.up))
        func block(_ x: Int, _ y: Int) -> SIMD2<Int> {
            SIMD2(Int(((Double(x) + 0.5 - origin.x) / scale).rounded(.down)), Int(((Double(y) + 0.5 - origin.y) / scale).rounded(.down)))
        }
        var sums: [SIMD2<Int>: (SIMD4<Double>, Int)] = [:]
        for y in 0..<size.height { for x in 0..<size.width {
            let (s, n) = sums[block(x, y)] ?? (.zero, 0)
            sums[block(x, y)] = (s + image.pixel(x, y), n + 1)
        } }
        let mask = maskReference(size, regions, scale: 1.3, feather: 0.3)
        let expected = TestImage.from(size: size) { x, y in
            let (s, n) = sums[block(x, y)]!
            let m = mask[y][x]
            return image.pixel(x, y) * (1 - m) + (s / Double(n)) * m
        }
        assertClose(out, expected, tolerance: 1, "face-pixellate")
        // Outside every disc the input comes through exactly.
        var outside = 0
        for y in 0..<size.height { for x in 0..<size.width where mask[y][x] == 0 {
            XCTAssertEqual(out.codes(x, y), image.codes(x, y), "(\(x), \(y)) outside the faces")
            outside += 1
        } }
        XCTAssertGreaterThan(outside, size.pixelCount / 2)
    }

    func testShorthandsExpandToTheSeedsGraphAnywhereInAChain() throws {
        let graph = try GraphBinder().bind("invert, face-blur(radius=4, size=2), mono")
        XCTAssertEqual(graph.nodes.map(\.name), ["invert", "blur", "face-mask", "blend-mask", "mono"])
        // blend-mask reads the blur, the chain's input to the shorthand (invert) and the mask.
        XCTAssertEqual(graph.nodes[3].inputs, [.node(graph.nodes[1].id), .node(graph.nodes[0].id), .node(graph.nodes[2].id)])
        XCTAssertEqual(graph.nodes[1].parameters?.double("radius"), 4)
        XCTAssertEqual(graph.nodes[2].parameters?.double("size"), 2)
        XCTAssertEqual(graph.requiredSideData, .faceRegions)
        XCTAssertTrue(try GraphBinder().bind("[in]pixellate[p]; radial-gradient[m]; [p][in][m]blend-mask").requiredSideData.isEmpty)
        // face-blur is blur through the mask: with a mask covering the whole frame it is the blur alone.
        let image = TestImage.varied(width: 64, height: 40)
        let whole = [FrameContext.Region(center: SIMD2(0.5, 0.5), radius: 2)]
        let blurred = try render("face-blur(radius=4, feather=0)", image, regions: whole)
        let plain = try render("blur(radius=4)", image, regions: [])
        assertClose(blurred, plain, tolerance: 0, "face-blur over a full-frame face")
        // Parameters are checked like any filter's, at their column.
        XCTAssertThrowsError(try GraphBinder().bind("face-pixellate(blocks=1)")) { error in
            XCTAssertEqual((error as? GraphBindError)?.column, 23, "\(error)")
        }
        XCTAssertThrowsError(try GraphBinder().bind("face-pixellate(bogus=1)"))
    }

    func testOutlineDrawsARingAtEachMasksEdgeOverTheInput() throws {
        let image = TestImage.varied(width: 120, height: 80)
        let out = try render("face-outline(size=1.5, width=3, color=#ff00ff)", image, regions: regions)
        var ring = 0
        for y in 0..<80 { for x in 0..<120 {
            let onRing = regions.contains { region in
                let dx = Double(x) + 0.5 - region.center.x * 120, dy = Double(y) + 0.5 - region.center.y * 80
                return abs((dx * dx + dy * dy).squareRoot() - region.radius * 120 * 1.5) <= 1.5
            }
            let nearEdge = regions.contains { region in
                let dx = Double(x) + 0.5 - region.center.x * 120, dy = Double(y) + 0.5 - region.center.y * 80
                return abs(abs((dx * dx + dy * dy).squareRoot() - region.radius * 120 * 1.5) - 1.5) < 1e-3
            }
            if nearEdge { continue }  // float rounding at exactly half the width
            if onRing { ring += 1 }
            XCTAssertEqual(out.codes(x, y), onRing ? [255, 0, 255, 255] : image.codes(x, y), "(\(x), \(y))")
        } }
        XCTAssertGreaterThan(ring, 100)
        XCTAssertEqual(try GraphBinder().bind("face-outline").requiredSideData, .faceRegions)
    }

    /// More faces than the shader has ellipses for: the nearest are merged into ellipses around both, so every
    /// face is still covered (a crowd is never partly left out).
    func testMoreFacesThanTheShaderHoldsAreAllCovered() throws {
        let many = (0..<(FaceMaskKernel.maxFaces + 4)).map { i in
            FrameContext.Region(center: SIMD2((Double(i % 5) + 0.5) / 5, (Double(i / 5) + 0.5) / 5), radius: 0.02)
        }
        let image = TestImage.varied(width: 100, height: 100)
        let out = try render("face-mask(feather=0)", image, regions: many)
        for (i, region) in many.enumerated() {
            // The whole disc of each face, not only its centre.
            for (dx, dy) in [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)] {
                let x = Int(region.center.x * 100) + dx, y = Int(region.center.y * 100) + dy
                XCTAssertEqual(out.codes(x, y)[1], 255, "face \(i) at (\(x), \(y))")
            }
        }
        XCTAssertEqual(FaceMaskKernel.discs(regions: many, size: Size(width: 100, height: 100), scale: 1).count, FaceMaskKernel.maxFaces)
    }

    /// A face box taller than wide gets an ellipse: the documented maths with half-axes size·w/2 and size·h/2.
    func testTheMaskIsAnEllipseOfTheBoxsShape() throws {
        let image = TestImage.varied(width: 120, height: 80)
        let regions = [FrameContext.Region(center: SIMD2(0.4, 0.5), radius: 0.1, aspect: 1.4)]
        let out = try render("face-mask(size=1.3, feather=0.3)", image, regions: regions)
        let expected = TestImage.from(size: image.size) { x, y in
            let a = 0.1 * 120 * 1.3, b = a * 1.4
            let dx = (Double(x) + 0.5 - 48) / a, dy = (Double(y) + 0.5 - 40) / b
            let t = min(max(((dx * dx + dy * dy).squareRoot() - 0.7) / 0.3, 0), 1)
            return SIMD4(1 - t, 1 - t, 1 - t, 1)
        }
        assertClose(out, expected, tolerance: 1, "an elliptical face-mask")
        // Taller than wide: opaque 14 px above the centre, not 14 px beside it.
        XCTAssertEqual(out.codes(48, 40 - 14)[1], 255)
        XCTAssertLessThan(out.codes(48 + 14, 40)[1], 128)
    }

    /// face-pixellate's blocks follow the widest face: a face about `blocks` blocks wide, in steps of 8 px;
    /// face-blur's radius a share of it in steps of √2. Given in pixels, they stay.
    func testBlocksAndBlursAreSizedToTheFaces() throws {
        let image = TestImage.varied(width: 320, height: 200)
        // A 100-px face (radius 50 of 320): 6 blocks → 16.7 px → 24 px blocks.
        let face = [FrameContext.Region(center: SIMD2(0.5, 0.5), radius: 50.0 / 320)]
        let sized = try render("face-pixellate(blocks=6)", image, regions: face)
        let fixed = try render("face-pixellate(scale=24)", image, regions: face)
        assertClose(sized, fixed, tolerance: 0, "blocks for a 100-px face")
        let other = try render("face-pixellate(scale=16)", image, regions: face)
        XCTAssertNotEqual(sized.rgba, other.rgba)
        let graph = try GraphBinder().bind("face-pixellate, face-blur(strength=0.3), face-blur(radius=5)")
        XCTAssertEqual(graph.faceSized.count, 2, "the one with a radius in pixels is not sized to the faces")
        // 100 px: blocks 100/6 → 24; blur 0.3·100 = 30 → √2 steps: 2^(5) = 32.
        XCTAssertTrue(try graph.fitFaceSizedEffects(to: face, frameSize: Size(width: 320, height: 200)))
        XCTAssertEqual(graph.nodes[0].parameters?.double("scale"), 24)
        XCTAssertEqual(graph.nodes[3].parameters?.double("radius"), 32)
        XCTAssertFalse(try graph.fitFaceSizedEffects(to: face, frameSize: Size(width: 320, height: 200)), "the same faces: nothing to change")
        XCTAssertFalse(try graph.fitFaceSizedEffects(to: [], frameSize: Size(width: 320, height: 200)), "no face: kept")
        // A 340-px face on a 1280 frame: 57 → 64-px blocks; the widest of two faces decides.
        let two = [FrameContext.Region(center: SIMD2(0.3, 0.5), radius: 170.0 / 1280), FrameContext.Region(center: SIMD2(0.7, 0.5), radius: 0.02)]
        XCTAssertTrue(try graph.fitFaceSizedEffects(to: two, frameSize: Size(width: 1280, height: 720)))
        XCTAssertEqual(graph.nodes[0].parameters?.double("scale"), 64)
        XCTAssertEqual(graph.nodes[6].parameters?.double("radius"), 5)
    }
}
