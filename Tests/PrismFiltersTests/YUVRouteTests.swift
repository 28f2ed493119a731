import XCTest
import PrismCore
@testable import PrismGPU
@testable import PrismFilters

/// Chains of colour maps and pixellate between 4:2:0 frames run on Y'CbCr without an R'G'B' image
/// (`YUVPlan`). Checked against the maths written out here on the CPU in doubles: convert each pixel
/// (chroma held over its 2×2 block) without clamping, apply the documented filter maths, convert back,
/// chroma the mean of each 2×2 block, quantise.
final class YUVRouteTests: XCTestCase {
    static let size = Size(width: 70, height: 38)   // padded luma and chroma texels, odd chroma texel counts
    static let space = YUVColorSpace(matrix: .bt709, range: .limited)

    enum Op {
        case invert, mono, noir, fade
        case color(saturation: Double, contrast: Double, brightness: Double)
        case pixellate(scale: Double, center: SIMD2<Double>)
    }

    // MARK: The route is taken exactly where it is exact

    func testEligibleChainsStayInYUVAndOthersDoNot() throws {
        let context = try SharedGPU.get()
        func staysInYUV(_ steps: [(String, [String: ParameterValue])], source: PixelFormat = .yuv420p,
                        sinks: [PixelFormat] = [.nv12]) throws -> Bool {
            let graph = try chain(steps)
            return try context.perform {
                try GraphRenderer(graph: graph, sourceFormat: source, sourceSize: Self.size, sinks: sinks).staysInYUV
            }
        }
        XCTAssertTrue(try staysInYUV([]))
        XCTAssertTrue(try staysInYUV([("invert", [:]), ("mono", [:]), ("pixellate", ["scale": .float(16)])]))
        XCTAssertTrue(try staysInYUV([("pixellate", [:]), ("noir", [:])], source: .nv12, sinks: [.yuv420p, .gray]))
        XCTAssertTrue(try staysInYUV([("color", ["saturation": .float(0.5)])]))
        // A brightness that pushes colours past 1 needs the clamp between steps: R'G'B'.
        XCTAssertFalse(try staysInYUV([("color", ["brightness": .float(0.3)]), ("invert", [:])]))
        // A curve does not commute with block means.
        XCTAssertFalse(try staysInYUV([("noir", [:]), ("pixellate", [:])]))
        // Neighbourhoods, tables that are neither affine nor grey curves, RGB ends, 4:4:4.
        // A blur commutes with affine maps, not with curves before it.
        XCTAssertTrue(try staysInYUV([("blur", ["radius": .float(2)])]))
        XCTAssertTrue(try staysInYUV([("invert", [:]), ("blur", ["radius": .float(30)]), ("noir", [:])]))
        XCTAssertFalse(try staysInYUV([("noir", [:]), ("blur", ["radius": .float(2)])]))
        XCTAssertFalse(try staysInYUV([("blur", ["radius": .float(2)]), ("blur", ["radius": .float(2)])]))
        XCTAssertFalse(try staysInYUV([("chrome", [:])]))
        XCTAssertFalse(try staysInYUV([("invert", [:])], source: .rgba))
        XCTAssertFalse(try staysInYUV([("invert", [:])], sinks: [.rgba]))
        XCTAssertFalse(try staysInYUV([("invert", [:])], source: .yuv444p))
        XCTAssertFalse(try staysInYUV([("invert", [:])], sinks: [.nv12, .yuv444p]))
        // Masks are weights only: a generator mixed in as a colour, or a curve before pixellate, is R'G'B'.
        let binder = GraphBinder()
        func bound(_ text: String) throws -> Bool {
            let graph = try binder.bind(text)
            return try context.perform {
                try GraphRenderer(graph: graph, sourceFormat: .yuv420p, sourceSize: Self.size, sinks: [.nv12]).staysInYUV
            }
        }
        XCTAssertTrue(try bound("[in]pixellate(scale=16)[px]; radial-gradient[m]; [px][in][m]blend-mask"))
        XCTAssertFalse(try bound("[in]pixellate(scale=16)[px]; radial-gradient[m]; [px][m][m]blend-mask"))
        XCTAssertFalse(try bound("[in]noir, pixellate[px]; radial-gradient[m]; [px][in][m]blend-mask"))
        XCTAssertTrue(try bound("[in]blur(radius=3)[px]; radial-gradient[m]; [px][in][m]blend-mask"))
        XCTAssertFalse(try bound("[in]noir, blur(radius=3)[px]; radial-gradient[m]; [px][in][m]blend-mask"))
    }

    func testAParameterThatLeavesTheRouteMakesTheRendererStale() throws {
        let context = try SharedGPU.get()
        let graph = try chain([("color", ["saturation": .float(0.8)])])
        try context.perform {
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .yuv420p, sourceSize: Self.size, sinks: [.nv12])
            XCTAssertTrue(renderer.staysInYUV)
            try graph.setParameter(graph.nodes[0].id, "brightness", .float(0.1))   // white would go to 1.1
            XCTAssertTrue(renderer.isStale, "leaving the unit cube must recompile onto the R'G'B' route")
            let again = try GraphRenderer(graph: graph, sourceFormat: .yuv420p, sourceSize: Self.size, sinks: [.nv12])
            XCTAssertFalse(again.staysInYUV)
        }
    }

    // MARK: Pixels against the CPU maths

    func testEmptyChainGivesThePlanesBackExactly() throws {
        let planes = Self.testPlanes()
        for (source, sink) in [(PixelFormat.yuv420p, PixelFormat.yuv420p), (.nv12, .nv12), (.yuv420p, .nv12), (.nv12, .yuv420p)] {
            let output = try render(FilterGraph(), planes: planes, source: source, sinks: [sink])[0]
            XCTAssertEqual(output.y, planes.y, "\(source) → \(sink): luma")
            XCTAssertEqual(output.cb, planes.cb, "\(source) → \(sink): Cb")
            XCTAssertEqual(output.cr, planes.cr, "\(source) → \(sink): Cr")
        }
    }

    /// A grey curve reads luma alone only where its weights are the frame's matrix (noir's BT.709 weights):
    /// on BT.601 frames its luma takes chroma too, so the programs that skip chroma must not run.
    func testCurvesSkipChromaOnlyWhereTheirWeightsMatchTheMatrix() throws {
        let graph = try chain([("noir", [:])])
        let layout = try XCTUnwrap(PackedFrameLayout(format: .nv12, size: Self.size))
        let uniforms = ChainValues(ChainUniforms(steps: YUVPlan.steps([0], graph: graph), sink: layout, pixellate: nil,
                                                 sourceSize: Self.size), graph: graph)
        let bt709 = YUVColorSpace(matrix: .bt709, range: .limited), bt601 = YUVColorSpace(matrix: .bt601, range: .limited)
        XCTAssertTrue(uniforms.allows(.both, sourceSpace: bt709, outputSpace: bt709))
        XCTAssertFalse(uniforms.allows(.lumaIgnoresChroma, sourceSpace: bt601, outputSpace: bt601))
        XCTAssertTrue(uniforms.allows(.chromaIgnoresLuma, sourceSpace: bt601, outputSpace: bt601), "grey has no chroma")
        XCTAssertFalse(uniforms.allows(.both, sourceSpace: bt601, outputSpace: bt601))
    }

    func testColourChainsMatchTheMaths() throws {
        let planes = Self.testPlanes()
        let cases: [(String, [(String, [String: ParameterValue])], [Op])] = [
            ("invert", [("invert", [:])], [.invert]),
            ("invert, mono", [("invert", [:]), ("mono", [:])], [.invert, .mono]),
            ("mono at 0.4", [("mono", ["intensity": .float(0.4)])], [.mono]),
            ("color", [("color", ["saturation": .float(0.6), "contrast": .float(0.9), "brightness": .float(0.02)])],
             [.color(saturation: 0.6, contrast: 0.9, brightness: 0.02)]),
            ("fade, invert", [("fade", [:]), ("invert", [:])], [.fade, .invert]),
            ("noir", [("noir", [:])], [.noir]),
            ("invert, noir, invert", [("invert", [:]), ("noir", [:]), ("invert", [:])], [.invert, .noir, .invert]),
            // A curve then a matrix takes the lean programs on these BT.709 frames (luma and chroma reduced to a few
            // coefficients each), whatever the curve's intensity.
            ("noir at 0.5", [("noir", ["intensity": .float(0.5)])], [.noir]),
            ("noir at 0.7, invert", [("noir", ["intensity": .float(0.7)]), ("invert", [:])], [.noir, .invert]),
        ]
        for (label, steps, ops) in cases {
            let graph = try chain(steps)
            let monoIntensity = steps.first { $0.0 == "mono" }?.1["intensity"]?.doubleValue ?? 1
            let noirIntensity = steps.first { $0.0 == "noir" }?.1["intensity"]?.doubleValue ?? 1
            for source in [PixelFormat.yuv420p, .nv12] {
                let outputs = try render(graph, planes: planes, source: source, sinks: [.yuv420p, .nv12, .gray])
                let expected = Self.reference(planes, ops, monoIntensity: monoIntensity, noirIntensity: noirIntensity)
                for (sink, output) in zip(["yuv420p", "nv12"], outputs.prefix(2)) {
                    assertPlanes(output, expected, tolerance: 1, "\(label), \(source) → \(sink)")
                }
                let grey = Self.reference(planes, ops, monoIntensity: monoIntensity, noirIntensity: noirIntensity, grey: true)
                XCTAssertLessThanOrEqual(maxError(outputs[2].y, grey.y), 1, "\(label), \(source) → gray")
            }
        }
    }

    /// Grids whose edges (the frame's too) fall on multiples of 8 columns and 2 rows take the programs that
    /// sum whole texels and fetch one block per packed texel; the others the general ones (above).
    func testAlignedPixellateGrids() throws {
        let size = Size(width: 80, height: 40)
        let planes = Self.testPlanes(size: size)
        // Edges: 16 at the centre x = 16k, y = 12 + 16k; 24 at 0.25:0.5 x = 8 + 24k, y = 8 + 24k; 8 at the centre
        // x = 4 + 8k (not aligned).
        for (scale, center, aligned) in [(16.0, SIMD2(0.5, 0.5), true), (24.0, SIMD2(0.25, 0.5), true),
                                         (8.0, SIMD2(0.5, 0.5), false)] {
            let kernel = try XCTUnwrap(try chain([("pixellate", ["scale": .float(scale), "center": .point(center)])])
                .nodes[0].kernel as? PixellateKernel)
            XCTAssertEqual(kernel.blockEdgesAlign(on: size), aligned, "\(scale) at \(center)")
            let graph = try chain([("invert", [:]), ("pixellate", ["scale": .float(scale), "center": .point(center)])])
            let ops: [Op] = [.invert, .pixellate(scale: scale, center: center)]
            for source in [PixelFormat.yuv420p, .nv12] {
                let outputs = try render(graph, planes: planes, source: source, sinks: [.yuv420p, .nv12, .gray], size: size)
                let expected = Self.reference(planes, ops, size: size)
                let label = "pixellate \(scale) at \(center), \(source)"
                assertPlanes(outputs[0], expected, tolerance: 1, label + " → yuv420p")
                assertPlanes(outputs[1], expected, tolerance: 1, label + " → nv12")
                XCTAssertLessThanOrEqual(maxError(outputs[2].y, Self.reference(planes, ops, grey: true, size: size).y), 1,
                                         label + " → gray")
            }
        }
    }

    func testPixellateTakesBlockMeansOfThePlanes() throws {
        let planes = Self.testPlanes()
        for (scale, center) in [(16.0, SIMD2(0.5, 0.5)), (16.0, SIMD2(0, 0)), (5.0, SIMD2(0.5, 0.5)), (9.0, SIMD2(0.31, 0.77)),
                                (3.0, SIMD2(0.1, 0.2))] {
            for before in [[], [("invert", [String: ParameterValue]())], [("mono", [:]), ("invert", [:])]] {
                let steps = before + [("pixellate", ["scale": .float(scale), "center": .point(center)]), ("noir", ["intensity": .float(0.5)])]
                let graph = try chain(steps)
                let ops: [Op] = before.map { $0.0 == "invert" ? Op.invert : Op.mono } + [.pixellate(scale: scale, center: center), .noir]
                for source in [PixelFormat.yuv420p, .nv12] {
                    let outputs = try render(graph, planes: planes, source: source, sinks: [.yuv420p, .nv12, .gray])
                    let expected = Self.reference(planes, ops, noirIntensity: 0.5)
                    let label = "\(before.map(\.0)) pixellate \(scale) at \(center), noir 0.5, \(source)"
                    assertPlanes(outputs[0], expected, tolerance: 1, label + " → yuv420p")
                    assertPlanes(outputs[1], expected, tolerance: 1, label + " → nv12")
                    let grey = Self.reference(planes, ops, noirIntensity: 0.5, grey: true)
                    XCTAssertLessThanOrEqual(maxError(outputs[2].y, grey.y), 1, label + " → gray")
                }
            }
        }
    }

    func testMasksBlendOnYUV() throws {
        let planes = Self.testPlanes()
        let binder = GraphBinder()
        let mask = "radial-gradient(center=0.4:0.6, radius0=8, radius1=20)[m]"
        let cases: [(String, [Op], [Op])] = [
            ("[in]pixellate(scale=16)[px]; \(mask); [px][in][m]blend-mask", [], [.pixellate(scale: 16, center: SIMD2(0.5, 0.5))]),
            ("[in]invert[a]; [in]mono, pixellate(scale=5, center=0.3:0.3), noir[px]; \(mask); [px][a][m]blend-mask",
             [.invert], [.mono, .pixellate(scale: 5, center: SIMD2(0.3, 0.3)), .noir]),
        ]
        for (text, background, effect) in cases {
            let graph = try binder.bind(text)
            let source = Self.rgb(planes)
            let back = Self.apply(background, to: source), front = Self.apply(effect, to: source)
            // radial-gradient's documented maths at pixel centres (y down), white inside: the weight is its green.
            let w = Self.size.width, h = Self.size.height
            let centre = SIMD2(0.4 * Double(w), 0.6 * Double(h))
            let blended = (0..<(w * h)).map { i -> SIMD3<Double> in
                let p = SIMD2(Double(i % w) + 0.5, Double(i / w) + 0.5)
                let d = ((p - centre) * (p - centre)).sum().squareRoot()
                let t = min(max((d - 8) / 12, 0), 1)
                return back[i] + (front[i] - back[i]) * (1 - t)
            }
            for source in [PixelFormat.yuv420p, .nv12] {
                let outputs = try render(graph, planes: planes, source: source, sinks: [.yuv420p, .nv12, .gray])
                assertPlanes(outputs[0], Self.pack(blended), tolerance: 1, "\(text), \(source) → yuv420p")
                assertPlanes(outputs[1], Self.pack(blended), tolerance: 1, "\(text), \(source) → nv12")
                XCTAssertLessThanOrEqual(maxError(outputs[2].y, Self.pack(blended, grey: true).y), 1, "\(text) → gray")
            }
        }
    }

    /// The rectangle a disc can reach, widened by two pixels and clipped to the frame; anything finite is taken
    /// (a face sidecar may say anything), off-frame is empty, a non-finite one is the whole frame.
    func testPixelsAroundADisc() {
        let size = Size(width: 100, height: 50)
        XCTAssertEqual(pixelsAround(SIMD2(50, 25), reach: 10, size: size), PixelRect(x: 38..<62, y: 13..<37))
        XCTAssertEqual(pixelsAround(SIMD2(2, 48), reach: 5, size: size), PixelRect(x: 0..<9, y: 41..<50))
        XCTAssertEqual(pixelsAround(SIMD2(50, 25), reach: 1e300, size: size), PixelRect(x: 0..<100, y: 0..<50))
        XCTAssertTrue(pixelsAround(SIMD2(-1e300, 25), reach: 10, size: size).isEmpty)
        XCTAssertTrue(pixelsAround(SIMD2(500, 25), reach: 10, size: size).isEmpty)
        XCTAssertEqual(pixelsAround(SIMD2(.nan, 25), reach: 10, size: size).x, 0..<100)
    }

    /// A mask that reaches only part of the frame: the rectangles it reaches are blended, the rest is the
    /// background alone (drawn apart, see `nonzeroRegions`; two faces far apart are two rectangles, one at
    /// the frame's edge is clipped; one, two to four and five faces take face-mask's three programs); with no
    /// face at all the output is the input, bit for bit.
    func testMasksThatReachPartOfTheFrameOnly() throws {
        let planes = Self.testPlanes()
        let graph = try GraphBinder().bind("[in]pixellate(scale=5)[px]; face-mask[m]; [px][in][m]blend-mask")
        for regions in [[FrameContext.Region(center: SIMD2(0.3, 0.25), radius: 0.08)],
                        [FrameContext.Region(center: SIMD2(0.8, 0.95), radius: 0.1),
                         FrameContext.Region(center: SIMD2(0.1, 0.05), radius: 0.05)],
                        [FrameContext.Region(center: SIMD2(0.97, 0.5), radius: 0.1)],
                        // More faces than the cheaper programs take (`regionLimits`): the full one.
                        (0..<5).map { FrameContext.Region(center: SIMD2(0.1 + 0.2 * Double($0), 0.5), radius: 0.04) }] {
            let source = Self.rgb(planes)
            let front = Self.apply([.pixellate(scale: 5, center: SIMD2(0.5, 0.5))], to: source)
            // face-mask's documented maths (`faceWeights`).
            let weights = Self.faceWeights(regions, size: Self.size)
            let blended = source.indices.map { source[$0] + (front[$0] - source[$0]) * weights[$0] }
            for format in [PixelFormat.yuv420p, .nv12] {
                let outputs = try render(graph, planes: planes, source: format, sinks: [.yuv420p, .nv12, .gray],
                                         context: FrameContext(regions: regions))
                assertPlanes(outputs[0], Self.pack(blended), tolerance: 1, "\(regions.count) face(s), \(format) → yuv420p")
                assertPlanes(outputs[1], Self.pack(blended), tolerance: 1, "\(regions.count) face(s), \(format) → nv12")
                XCTAssertLessThanOrEqual(maxError(outputs[2].y, Self.pack(blended, grey: true).y), 1, "\(format) → gray")
            }
        }
        let none = try render(graph, planes: planes, source: .yuv420p, sinks: [.yuv420p])[0]
        XCTAssertEqual(none, planes, "no face: the input, unchanged")
    }

    // MARK: Helpers

    struct Planes: Equatable {
        var y: [UInt8], cb: [UInt8], cr: [UInt8]
    }

    /// Gradients, hard saturated edges and noise: plenty of pixels outside the R'G'B' gamut.
    static func testPlanes(size: Size = YUVRouteTests.size) -> Planes {
        let w = size.width, h = size.height, cw = w / 2, ch = h / 2
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func noise() -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % 31) - 15
        }
        func code(_ v: Int) -> UInt8 { UInt8(max(0, min(255, v))) }
        let y = (0..<(w * h)).map { i in code(16 + (i % w) * 219 / w / 2 + ((i / w) / 5 % 2) * 100 + noise()) }
        let cb = (0..<(cw * ch)).map { i in code((i % cw) * 255 / cw + noise()) }
        let cr = (0..<(cw * ch)).map { i in code(((i / cw) % 4 < 2 ? 40 : 220) + noise()) }
        return Planes(y: y, cb: cb, cr: cr)
    }

    /// The documented maths in doubles. `grey`: the grey sink's full-range luma.
    static func reference(_ planes: Planes, _ ops: [Op], monoIntensity: Double = 1, noirIntensity: Double = 1,
                          grey: Bool = false, size: Size = YUVRouteTests.size) -> Planes {
        pack(apply(ops, to: rgb(planes, size: size), monoIntensity: monoIntensity, noirIntensity: noirIntensity, size: size),
             grey: grey, size: size)
    }

    /// Each pixel's R'G'B', chroma held over its 2×2 block, not clamped.
    static func rgb(_ planes: Planes, size: Size = YUVRouteTests.size) -> [SIMD3<Double>] {
        let w = size.width, h = size.height, cw = w / 2
        return (0..<(w * h)).map { i in
            let x = i % w, y = i / w, c = (y / 2) * cw + x / 2
            let v = space.rgb(fromY: Double(planes.y[i]) / 255, cb: Double(planes.cb[c]) / 255, cr: Double(planes.cr[c]) / 255)
            return SIMD3(v.r, v.g, v.b)
        }
    }

    static func apply(_ ops: [Op], to input: [SIMD3<Double>], monoIntensity: Double = 1,
                      noirIntensity: Double = 1, size: Size = YUVRouteTests.size) -> [SIMD3<Double>] {
        let w = size.width, h = size.height
        let luma = SIMD3<Double>(0.2126, 0.7152, 0.0722)
        var rgb = input
        for op in ops {
            switch op {
            case .invert:
                rgb = rgb.map { 1 - $0 }
            case .mono:
                rgb = rgb.map { c in c + (SIMD3(repeating: (luma * c).sum()) - c) * monoIntensity }
            case .fade:
                rgb = rgb.map { c in
                    let l = (luma * c).sum()
                    return 0.12 + 0.8 * (SIMD3(repeating: l) + (c - SIMD3(repeating: l)) * 0.6)
                }
            case .noir:
                rgb = rgb.map { c in
                    let l = min(max((luma * c).sum(), 0), 1)
                    let s = l * l * (3 - 2 * l)
                    let g = min(max(l + (s - l) * 1.2, 0), 1)
                    return c + (SIMD3(repeating: g) - c) * noirIntensity
                }
            case .color(let saturation, let contrast, let brightness):
                rgb = rgb.map { c in
                    let l = (luma * c).sum()
                    return (SIMD3(repeating: l) + (c - SIMD3(repeating: l)) * saturation - 0.5) * contrast + 0.5 + brightness
                }
            case .pixellate(let scale, let center):
                // Block of a pixel: floor((p + 0.5 - origin) / scale), origin = centre·size − scale/2 mod scale.
                func origin(_ c: Double, _ n: Int) -> Double {
                    let o = c * Double(n) - scale / 2
                    return o - scale * (o / scale).rounded(.up)
                }
                let ox = origin(center.x, w), oy = origin(center.y, h)
                func block(_ p: Int, _ o: Double) -> Int { Int(((Double(p) + 0.5 - o) / scale).rounded(.down)) }
                var sums: [SIMD2<Int>: (SIMD3<Double>, Int)] = [:]
                for i in rgb.indices {
                    let key = SIMD2(block(i % w, ox), block(i / w, oy))
                    let old = sums[key] ?? (.zero, 0)
                    sums[key] = (old.0 + rgb[i], old.1 + 1)
                }
                rgb = rgb.indices.map { i in
                    let sum = sums[SIMD2(block(i % w, ox), block(i / w, oy))]!
                    return sum.0 / Double(sum.1)
                }
            }
        }
        return rgb
    }

    /// Packs R'G'B' pixels: luma per pixel, chroma from the mean of each 2×2 block; or full-range grey.
    static func pack(_ rgb: [SIMD3<Double>], grey: Bool = false, size: Size = YUVRouteTests.size) -> Planes {
        let w = size.width, h = size.height, cw = w / 2
        func quantise(_ v: Double) -> UInt8 { UInt8(max(0, min(255, (v * 255).rounded()))) }
        if grey {
            let full = YUVColorSpace(matrix: space.matrix, range: .full)
            return Planes(y: rgb.map { quantise(full.yuv(fromRGB: $0.x, $0.y, $0.z).y) }, cb: [], cr: [])
        }
        let y = rgb.map { quantise(space.yuv(fromRGB: $0.x, $0.y, $0.z).y) }
        var cb: [UInt8] = [], cr: [UInt8] = []
        for cy in 0..<(h / 2) {
            for cx in 0..<cw {
                let i = cy * 2 * w + cx * 2
                let mean = (rgb[i] + rgb[i + 1] + rgb[i + w] + rgb[i + w + 1]) / 4
                let v = space.yuv(fromRGB: mean.x, mean.y, mean.z)
                cb.append(quantise(v.cb))
                cr.append(quantise(v.cr))
            }
        }
        return Planes(y: y, cb: cb, cr: cr)
    }

    /// Uploads `planes` as `source`, renders, and reads each sink back as tight planes. `earlier`: frames
    /// rendered first by the same renderer (what they leave in its targets must not show in this one).
    func render(_ graph: FilterGraph, planes: Planes, source: PixelFormat, sinks: [PixelFormat],
                context: FrameContext = FrameContext(), earlier: [FrameContext] = [],
                size: Size = YUVRouteTests.size, route: GraphCompiler.Route? = nil,
                options: CompileOptions = CompileOptions(), passesDrawn: ((Int, Int) -> Void)? = nil,
                timed: Bool = false) throws -> [Planes] {
        let w = size.width, h = size.height
        var uploadPlanes: [[UInt8]]
        if source == .nv12 {
            uploadPlanes = [planes.y, zip(planes.cb, planes.cr).flatMap { [$0, $1] }]
        } else {
            uploadPlanes = [planes.y, planes.cb, planes.cr]
        }
        let rowBytes = source == .nv12 ? [w, w] : [w, w / 2, w / 2]
        return try SharedGPU.get().perform {
            let renderer = try GraphRenderer(graph: graph, sourceFormat: source, sourceSize: size, sinks: sinks, options: options)
            if route == .rgb {
                XCTAssertFalse(renderer.staysInYUV, "expected the R'G'B' route")
            } else {
                XCTAssertTrue(renderer.staysInYUV, "expected the Y'CbCr route")
            }
            let uploader = FrameUploader(ringSize: 1)
            let frame = try Self.withPointers(&uploadPlanes, rowBytes: rowBytes) {
                try uploader.upload(CPUFramePlanes(format: source, size: size, colorSpace: Self.space, planes: $0))
            }
            // Timed as the dev preview times (GPU queries per pass where the driver has them).
            let timer = timed ? PassTimer(passCount: renderer.passCount, extensions: try SharedGPU.get().info.extensions) : nil
            renderer.timer = timer
            for frameContext in earlier + [context] { try renderer.render(frame, context: frameContext) }
            timer?.finish()
            try GLError.check("rendering \(earlier.count + 1) frame(s)")
            passesDrawn?(renderer.lastFramePasses, renderer.passCount)
            return try sinks.indices.map { index in
                let layout = renderer.sinkLayouts[index]
                var packed = [UInt8](repeating: 0, count: layout.byteCount)
                let readback = try FrameReadback<Int>(strategy: .sync, layout: layout)
                _ = try packed.withUnsafeMutableBytes { try readback.submit(renderer.sinkTarget(index), into: $0.baseAddress!, tag: 0) }
                func plane(_ p: Int, width: Int, rows: Int, stride: Int = 1, offset: Int = 0) -> [UInt8] {
                    let info = layout.planes[p]
                    return (0..<rows).flatMap { row in
                        (0..<width).map { packed[info.offset + row * info.rowBytes + $0 * stride + offset] }
                    }
                }
                switch layout.format {
                case .gray: return Planes(y: plane(0, width: w, rows: h), cb: [], cr: [])
                case .nv12: return Planes(y: plane(0, width: w, rows: h), cb: plane(1, width: w / 2, rows: h / 2, stride: 2),
                                          cr: plane(1, width: w / 2, rows: h / 2, stride: 2, offset: 1))
                default: return Planes(y: plane(0, width: w, rows: h), cb: plane(1, width: w / 2, rows: h / 2),
                                       cr: plane(2, width: w / 2, rows: h / 2))
                }
            }
        }
    }

    static func withPointers<R>(_ planes: inout [[UInt8]], rowBytes: [Int],
                                _ body: ([(base: UnsafeRawPointer, rowBytes: Int)]) throws -> R) rethrows -> R {
        func recurse(_ index: Int, _ acc: [(base: UnsafeRawPointer, rowBytes: Int)]) throws -> R {
            if index == planes.count { return try body(acc) }
            return try planes[index].withUnsafeBytes { try recurse(index + 1, acc + [($0.baseAddress!, rowBytes[index])]) }
        }
        return try recurse(0, [])
    }

    func maxError(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count == b.count else { return 255 }
        return zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    func assertPlanes(_ actual: Planes, _ expected: Planes, tolerance: Int, _ label: String,
                      file: StaticString = #filePath, line: UInt = #line) {
        for (name, a, e) in [("Y", actual.y, expected.y), ("Cb", actual.cb, expected.cb), ("Cr", actual.cr, expected.cr)] {
            let error = maxError(a, e)
            XCTAssertLessThanOrEqual(error, tolerance, "\(label): \(name) max error \(error)", file: file, line: line)
        }
    }
}
