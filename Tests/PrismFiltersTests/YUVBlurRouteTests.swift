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

/// `face-blur` and any blur blended in by one generated mask (`YUVBlendPlan` with a blur): the planes are
/// blurred only where the mask reaches (and as far around it as the packing's reads need), the rest is the
/// chain alone. Against the definition: the exact Gaussian of the R'G'B' picture mixed in by face-mask's
/// documented weights, chroma the mean of each 2×2 block.
extension YUVRouteTests {
    /// face-mask's documented maths with its defaults: r1 = radius·width·size (1.5), r0 = r1·(1 − feather (0.15));
    /// the weight of the effect at each pixel.
    static func faceWeights(_ regions: [FrameContext.Region], size: Size) -> [Double] {
        let w = size.width, h = size.height
        return (0..<(w * h)).map { i in
            let p = SIMD2(Double(i % w) + 0.5, Double(i / w) + 0.5)
            var uncovered = 1.0
            for region in regions {
                let r1 = region.radius * Double(w) * 1.5, r0 = r1 * 0.85
                let c = SIMD2(region.center.x * Double(w), region.center.y * Double(h))
                let d = ((p - c) * (p - c)).sum().squareRoot()
                uncovered *= min(max((d - r0) / (r1 - r0), 0), 1)
            }
            return 1 - uncovered
        }
    }

    func testFaceBlurBlursOnlyWhereTheFacesAre() throws {
        let size = Size(width: 150, height: 86)
        let planes = Self.testPlanes(size: size)
        let rgb = Self.rgb(planes, size: size)
        let faceSets: [[FrameContext.Region]] = [
            [FrameContext.Region(center: SIMD2(0.3, 0.3), radius: 0.08)],
            // Two far apart, one at the frame's corner (its reach leaves the frame).
            [FrameContext.Region(center: SIMD2(0.8, 0.85), radius: 0.1), FrameContext.Region(center: SIMD2(0.03, 0.05), radius: 0.06)],
            (0..<5).map { FrameContext.Region(center: SIMD2(0.1 + 0.2 * Double($0), 0.5), radius: 0.04) },
        ]
        // σ 0 (the planes themselves), 2 and 4 exact taps, 6 (face-blur's default) and 30 reduced.
        for sigma in [0.0, 2, 4, 6, 30] {
            // A radius in pixels (0 with strength 0: none), not one sized to the faces.
            let graph = try GraphBinder().bind("face-blur(radius=\(2 * sigma), strength=0)")
            let front = sigma == 0 ? rgb : Self.blurred(rgb, sigma: sigma, size: size)
            // The chroma of a 2×2 block the mask crosses is mixed from the block's blurred chroma: up to 4 codes on
            // this noise, where the smallest faces (set 2: r1 = 9 px) ramp from 0 to 1 over 1.35 px, inside one block.
            let tolerance = 4
            for (index, regions) in faceSets.enumerated() {
                let weights = Self.faceWeights(regions, size: size)
                let expected = Self.pack(rgb.indices.map { rgb[$0] + (front[$0] - rgb[$0]) * weights[$0] }, size: size)
                // The faces of the set before (or none) drawn first by the same renderer: what the masked passes
                // leave outside this frame's reach must never be read.
                let earlier = [FrameContext(regions: faceSets[(index + faceSets.count - 1) % faceSets.count]), FrameContext()]
                for (source, sink) in [(PixelFormat.yuv420p, PixelFormat.yuv420p), (.nv12, .nv12)] {
                    let output = try render(graph, planes: planes, source: source, sinks: [sink],
                                            context: FrameContext(regions: regions), earlier: earlier, size: size)[0]
                    assertPlanes(output, expected, tolerance: tolerance, "σ \(sigma), face set \(index), \(source) → \(sink)")
                }
            }
            let none = try render(graph, planes: planes, source: .yuv420p, sinks: [.yuv420p],
                                  earlier: [FrameContext(regions: faceSets[0])], size: size)[0]
            XCTAssertEqual(none, planes, "σ \(sigma), no face: the input, unchanged")
        }
    }

    /// Affine maps before the masked blur are applied to the blurred planes (the blur commutes with them) and
    /// to the background; maps after the blend to both.
    func testMaskedBlurAmidColourMaps() throws {
        let size = Size(width: 96, height: 64)
        let planes = Self.testPlanes(size: size)
        let rgb = Self.rgb(planes, size: size)
        let regions = [FrameContext.Region(center: SIMD2(0.5, 0.4), radius: 0.15)]
        let weights = Self.faceWeights(regions, size: size)
        for sigma in [3.0, 8] {
            let graph = try GraphBinder().bind("invert, face-blur(radius=\(2 * sigma)), noir")
            let back = Self.apply([.invert], to: rgb, size: size)
            let front = Self.blurred(back, sigma: sigma, size: size)
            let blended = back.indices.map { back[$0] + (front[$0] - back[$0]) * weights[$0] }
            let expected = Self.pack(Self.apply([.noir], to: blended, size: size), size: size)
            let output = try render(graph, planes: planes, source: .yuv420p, sinks: [.yuv420p],
                                    context: FrameContext(regions: regions), size: size)[0]
            assertPlanes(output, expected, tolerance: BlurKernel.planeReduction(sigma: sigma) == 1 ? 2 : 3, "invert, face-blur σ \(sigma), noir")
        }
    }
}

/// The R'G'B' route's masked output (`RGBPlan.MaskedOutput`): on a frame with no face, face-blur skips the
/// blur's passes and packs the input itself — the same bytes as no filter on that route; on a frame with a face
/// after such frames, the same bytes as a renderer that never skipped.
extension YUVRouteTests {
    func testFaceBlurWithNoFaceCostsNoFilterOnTheRGBRoute() throws {
        let size = Size(width: 96, height: 64)
        let planes = Self.testPlanes(size: size)
        let rgbRoute = CompileOptions(yuvRoute: false)
        let face = FrameContext(regions: [FrameContext.Region(center: SIMD2(0.4, 0.5), radius: 0.15)])
        for text in ["face-blur", "face-blur(radius=4)", "invert, face-blur(radius=40), mono", "face-pixellate"] {
            let graph = try GraphBinder().bind(text)
            for sinks in [[PixelFormat.yuv420p], [.nv12], [.yuv420p, .nv12]] {
                let sink = sinks.map(\.rawValue).joined(separator: "+")
                // The background packed straight from the planes, one sink at a time (two sinks without a filter
                // would pack an 8-bit R'G'B' copy of the input).
                let plain = try sinks.map { sink in
                    try render(try GraphBinder().bind(text.hasPrefix("invert") ? "invert, mono" : ""), planes: planes,
                               source: .yuv420p, sinks: [sink], size: size, route: .rgb, options: rgbRoute)[0]
                }
                var drawn = (0, 0)
                // Timed per pass (the dev preview's timing): a skipped pass is timed as empty.
                let none = try render(graph, planes: planes, source: .yuv420p, sinks: sinks, earlier: [face], size: size,
                                      route: .rgb, options: rgbRoute, passesDrawn: { drawn = ($0, $1) }, timed: true)
                XCTAssertEqual(none, plain, "\(text) → \(sink), no face: the background alone")
                XCTAssertLessThan(drawn.0, drawn.1, "\(text) → \(sink): the effect's passes are skipped with no face")
                let fresh = try render(graph, planes: planes, source: .yuv420p, sinks: sinks, context: face, size: size,
                                       route: .rgb, options: rgbRoute)
                let afterNone = try render(graph, planes: planes, source: .yuv420p, sinks: sinks, context: face,
                                           earlier: [face, FrameContext()], size: size, route: .rgb, options: rgbRoute,
                                           passesDrawn: { drawn = ($0, $1) })
                XCTAssertEqual(afterNone, fresh, "\(text) → \(sink): a face after a frame without one")
                XCTAssertEqual(drawn.0, drawn.1, "\(text) → \(sink): every pass with a face")
                XCTAssertNotEqual(fresh, plain, "\(text) → \(sink): the face is blurred")
            }
        }
    }
}
