import XCTest
import PrismCore
@testable import PrismGPU
@testable import PrismFilters

/// The Gaussian blur on Y'CbCr planes (`YUVBlurPlan`) against the blur's definition on the CPU, in doubles:
/// each pixel converted to R'G'B' (chroma held over its 2×2 block, not clamped), blurred exactly (taps to
/// ±⌈3σ⌉, edges repeated), packed back (chroma the mean of each 2×2 block). Bounds: below radius 12 the blur
/// is exact and only the 8-bit row pass rounds (≤ 1 code); from radius 12 the reduced blur is within 3 codes,
/// as `blur` documents.
extension YUVRouteTests {
    /// The exact Gaussian of each channel at σ, edges repeated, separable.
    static func blurred(_ rgb: [SIMD3<Double>], sigma: Double, size: Size = YUVRouteTests.size) -> [SIMD3<Double>] {
        let weights = BlurKernel.weights(sigma: sigma), reach = weights.count - 1
        let w = size.width, h = size.height
        var rows = rgb
        for y in 0..<h { for x in 0..<w {
            var sum = SIMD3<Double>.zero
            for k in -reach...reach { sum += rgb[y * w + min(max(x + k, 0), w - 1)] * weights[abs(k)] }
            rows[y * w + x] = sum
        } }
        var out = rows
        for y in 0..<h { for x in 0..<w {
            var sum = SIMD3<Double>.zero
            for k in -reach...reach { sum += rows[min(max(y + k, 0), h - 1) * w + x] * weights[abs(k)] }
            out[y * w + x] = sum
        } }
        return out
    }

    func testBlurRunsOnThePlanesAtEverySigma() throws {
        let planes = Self.testPlanes()
        let rgb = Self.rgb(planes)
        // σ = 1, 2, 5 exact taps; 10, 50, 100 reduced (f = 2, 16, 16).
        for sigma in [1.0, 2, 5, 10, 50, 100] {
            let expected = Self.pack(Self.blurred(rgb, sigma: sigma))
            let tolerance = BlurKernel.planeReduction(sigma: sigma) == 1 ? 1 : 3
            for (source, sink) in [(PixelFormat.yuv420p, PixelFormat.yuv420p), (.nv12, .nv12), (.nv12, .yuv420p)] {
                let graph = try chain([("blur", ["radius": .float(2 * sigma)])])
                let output = try render(graph, planes: planes, source: source, sinks: [sink])[0]
                assertPlanes(output, expected, tolerance: tolerance, "σ \(sigma) \(source) → \(sink)")
            }
        }
    }

    func testBlurJoinsTheColourChain() throws {
        let planes = Self.testPlanes()
        let rgb = Self.rgb(planes)
        // Affine maps before the blur commute with it; after it any map (noir is a curve).
        let cases: [([(String, [String: ParameterValue])], [Op], [Op])] = [
            ([("invert", [:]), ("blur", ["radius": .float(4)]), ("noir", [:])], [.invert], [.noir]),
            ([("mono", [:]), ("blur", ["radius": .float(30)])], [.mono], []),
            ([("blur", ["radius": .float(3)]), ("color", ["saturation": .float(0.5), "contrast": .float(0.9)])], [],
             [.color(saturation: 0.5, contrast: 0.9, brightness: 0)]),
        ]
        for (steps, before, after) in cases {
            let radius = steps.compactMap { $0.0 == "blur" ? $0.1["radius"] : nil }.first
            guard case .float(let r)? = radius else { return XCTFail("no radius") }
            let expected = Self.pack(Self.apply(after, to: Self.blurred(Self.apply(before, to: rgb), sigma: r / 2)))
            for sink in [PixelFormat.yuv420p, .nv12, .gray] {
                let output = try render(try chain(steps), planes: planes, source: .yuv420p, sinks: [sink])[0]
                let reference = sink == .gray
                    ? Self.pack(Self.apply(after, to: Self.blurred(Self.apply(before, to: rgb), sigma: r / 2)), grey: true)
                    : expected
                assertPlanes(output, reference, tolerance: BlurKernel.planeReduction(sigma: r / 2) == 1 ? 1 : 3, "\(steps.map(\.0)) → \(sink)")
            }
        }
    }

    /// Frames narrower than the taps, odd widths of chroma texels: every tap clamped on its own.
    func testBlurOnSmallFrames() throws {
        for size in [Size(width: 6, height: 4), Size(width: 18, height: 10), Size(width: 34, height: 8)] {
            let planes = Self.testPlanes(size: size)
            let rgb = Self.rgb(planes, size: size)
            for sigma in [2.0, 5, 20] {
                let expected = Self.pack(Self.blurred(rgb, sigma: sigma, size: size), size: size)
                let output = try render(try chain([("blur", ["radius": .float(2 * sigma)])]), planes: planes,
                                        source: .yuv420p, sinks: [.yuv420p], size: size)[0]
                assertPlanes(output, expected, tolerance: BlurKernel.planeReduction(sigma: sigma) == 1 ? 1 : 3, "σ \(sigma) at \(size)")
            }
        }
    }
}
