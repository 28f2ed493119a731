import XCTest
import PrismCore
@testable import PrismFilters

final class BlurFilterTests: XCTestCase {
    let images = [TestImage.varied(), TestImage.noise(width: 45, height: 71)]

    /// A blur graph; `merged` forces the tap style (nil: the driver's, texelFetch on llvmpipe).
    func blur(_ radius: Double, merged: Bool? = nil) throws -> FilterGraph {
        let graph = try chain([("blur", ["radius": .float(radius)])])
        (graph.nodes[0].kernel as? BlurKernel)?.mergeTapsOverride = merged
        return graph
    }

    func testRadiusZeroIsTheIdentity() throws {
        for image in images {
            assertClose(try render(blur(0), image), image, tolerance: 0, "blur 0 \(image.size)")
        }
    }

    /// Full-resolution path (radius < 12), both tap styles. Merged taps are bilinear fetches that
    /// llvmpipe returns in 8 bits (±1/255 each, the weights summing to 1: ±1 per half); plain taps
    /// are exact texels summed in float; either way the horizontal half is stored as RGBA8 (±0.5):
    /// 2 code values at most against the exact double-precision Gaussian (measured 1).
    func testSmallRadiiMatchTheGaussian() throws {
        for image in images {
            for radius in [0.5, 1, 2, 3, 5, 8, 11.5] {
                for merged in [true, false] {
                    let out = try render(blur(radius, merged: merged), image)
                    assertClose(out, gaussianReference(image, radius: radius), tolerance: 2,
                                "blur \(radius) \(image.size) merged=\(merged)")
                    assertClose(try render(blur(radius, merged: merged), image, fuse: false), out, tolerance: 0,
                                "blur \(radius) unfused")
                }
            }
        }
    }

    /// Reduced path (radius ≥ 12): box reduction, blur at 1/f, bilinear enlargement. Against the exact
    /// Gaussian: the box and the enlargement's tent are not Gaussian (σ' compensates their variance,
    /// not their shape), the reduction grid's phase moves isolated details by up to f/2 - 1/2 pixels,
    /// and three more 8-bit roundings: measured ≤ 3 on these images (hard edges, noise, odd sizes,
    /// f = 2, 4, 8, σ/f from 3 to 5.5), stated 3.
    func testLargeRadiiStayCloseToTheGaussian() throws {
        let image = TestImage.varied(width: 161, height: 121)
        let noise = TestImage.noise(width: 75, height: 53)
        for (image, radius) in [(image, 12.0), (noise, 12), (image, 16), (noise, 23), (image, 24), (noise, 24), (image, 40),
                               (noise, 33), (image, 70)] {
            let reference = gaussianReference(image, radius: radius)
            for merged in [true, false] {
                assertClose(try render(blur(radius, merged: merged), image), reference, tolerance: 3,
                            "blur \(radius) \(image.size) merged=\(merged)")
            }
        }
    }

    /// Symmetric about the centre: left/right, up/down and across the diagonal (largest difference).
    func asymmetry(_ image: TestImage) -> Int {
        let side = image.size.width
        var worst = 0
        for y in 0..<side { for x in 0..<side {
            let v = Int(image.codes(x, y)[0])
            for (mx, my) in [(side - 1 - x, y), (x, side - 1 - y), (y, x)] {
                worst = max(worst, abs(v - Int(image.codes(mx, my)[0])))
            }
        } }
        return worst
    }

    /// One white pixel in black, full-resolution path: a symmetric, visible Gaussian spot, matching
    /// the CPU one within the small-radius tolerance.
    func testSinglePixelSpreadsSymmetrically() throws {
        for radius in [1.0, 2, 4] {
            let image = TestImage.painted(width: 41, height: 41, rects: [(20, 20, 1, 1, 255)])
            let out = try render(blur(radius), image)
            assertClose(out, gaussianReference(image, radius: radius), tolerance: 2, "spot \(radius)")
            XCTAssertLessThanOrEqual(asymmetry(out), 1, "symmetry, radius \(radius)")
            XCTAssertGreaterThan(out.codes(20, 20)[0], out.codes(21, 20)[0])
            XCTAssertGreaterThan(out.codes(21, 20)[0], out.codes(22, 20)[0])
        }
    }

    /// A bright square (about radius wide, so that the output is not mostly sub-code tails that
    /// round away) on dark grey, away from the edges the kernel reaches: the energy above the
    /// background is kept within 1% (the taps are normalised, the reduction averages, the enlargement
    /// interpolates; what is lost is the rounding of the faint tails, measured ≤ 0.5%) and the
    /// spread is symmetric, on both paths: the reduction grid's phase moves the result by
    /// well under a code here.
    func testEnergyIsKeptAndSpreadIsSymmetric() throws {
        for (radius, side, square) in [(4.0, 31, 5), (10, 61, 11), (20, 129, 21), (40, 193, 41), (100, 391, 61)] {
            let c = side / 2 - square / 2
            let image = TestImage.painted(width: side, height: side, background: 64, rects: [(c, c, square, square, 255)])
            let out = try render(blur(radius), image)
            let background = 64 * side * side
            let before = image.channelSum(0) - background, after = out.channelSum(0) - background
            XCTAssertEqual(Double(after), Double(before), accuracy: Double(before) * 0.01, "energy, radius \(radius)")
            // Reduced (radius 12 and up), the grid's phase is not the image's mirror, and whether that rounds to one
            // code or two is the driver's filtering precision (llvmpipe 1, softpipe 2 at radius 40).
            XCTAssertLessThanOrEqual(asymmetry(out), radius >= 12 ? 2 : 1, "symmetry, radius \(radius)")
            XCTAssertGreaterThan(out.codes(side / 2, side / 2)[0], 64, "the centre is brighter, radius \(radius)")
            XCTAssertEqual(out.codes(0, 0), [64, 64, 64, 255], "the corner is untouched, radius \(radius)")
        }
    }

    func testBlurFusesWithNeighboursAndEdgesClamp() throws {
        let image = images[0]
        // A constant image stays constant: nothing leaks in from beyond the edges.
        let grey = TestImage.painted(width: 45, height: 71, background: 100, rects: [])
        for radius in [3.0, 30, 150] {
            assertClose(try render(blur(radius), grey), grey, tolerance: 0, "constant \(radius)")
        }
        // invert and rotate around the blur: the same as on the CPU (invert commutes with a normalised blur).
        let graph = try chain([("invert", [:]), ("blur", ["radius": .float(6)]), ("rotate", ["angle": .int(270)])])
        let reference = gaussianReference(image.inverted, radius: 6)
        let rotated = reference.rotated(270)
        assertClose(try render(graph, image), rotated, tolerance: 2, "invert, blur, rotate")
    }

    func testWrongRadiusNamesTheParameter() throws {
        let blur = try XCTUnwrap(BuiltinFilters.named("blur"))
        assertUsageError(naming: "radius", "negative") { _ = try blur.instantiate(["radius": .float(-1)]) }
        assertUsageError(naming: "radius", "too large") { _ = try blur.instantiate(["radius": .float(201)]) }
    }
}
