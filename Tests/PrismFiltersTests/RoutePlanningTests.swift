import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// Route choice is the graph's and its kernels' business: planned here without any GPU context (none is
/// made in this class), the same cases `YUVRouteTests` checks through real renderers.
final class RoutePlanningTests: XCTestCase {
    static let size = Size(width: 70, height: 38)

    private func route(_ steps: [(String, [String: ParameterValue])], source: PixelFormat = .yuv420p,
                       sinks: [PixelFormat] = [.nv12], options: CompileOptions = CompileOptions()) throws -> GraphCompiler.Route {
        try GraphCompiler.route(try chain(steps), sourceFormat: source, sourceSize: Self.size, sinks: sinks, options: options)
    }

    private func route(_ text: String) throws -> GraphCompiler.Route {
        try GraphCompiler.route(try GraphBinder().bind(text), sourceFormat: .yuv420p, sourceSize: Self.size, sinks: [.nv12])
    }

    func testChainsOfColourMapsAndPixellateBetween420FramesStayInYUV() throws {
        XCTAssertEqual(try route([]), .yuv)
        XCTAssertEqual(try route([("invert", [:]), ("mono", [:]), ("pixellate", ["scale": .float(16)])]), .yuv)
        XCTAssertEqual(try route([("pixellate", [:]), ("noir", [:])], source: .nv12, sinks: [.yuv420p, .gray]), .yuv)
        XCTAssertEqual(try route([("color", ["saturation": .float(0.5)])]), .yuv)
    }

    func testEverythingElseGoesThroughRGB() throws {
        XCTAssertEqual(try route([("color", ["brightness": .float(0.3)]), ("invert", [:])]), .rgb)
        XCTAssertEqual(try route([("noir", [:]), ("pixellate", [:])]), .rgb)
        XCTAssertEqual(try route([("noir", [:]), ("blur", ["radius": .float(2)])]), .rgb)
        XCTAssertEqual(try route([("blur", ["radius": .float(2)]), ("blur", ["radius": .float(9)])]), .rgb)
        XCTAssertEqual(try route([("blur", ["radius": .float(2)])], source: .rgba), .rgb)
        XCTAssertEqual(try route([("chrome", [:])]), .rgb)
        XCTAssertEqual(try route([("invert", [:])], source: .rgba), .rgb)
        XCTAssertEqual(try route([("invert", [:])], sinks: [.rgba]), .rgb)
        XCTAssertEqual(try route([("invert", [:])], source: .yuv444p), .rgb)
        XCTAssertEqual(try route([("invert", [:])], sinks: [.nv12, .yuv444p]), .rgb)
        // The options that turn the Y'CbCr routes off.
        XCTAssertEqual(try route([("invert", [:])], options: CompileOptions(yuvRoute: false)), .rgb)
        XCTAssertEqual(try route([("invert", [:])], options: CompileOptions(fuse: false)), .rgb)
    }

    func testABlurAmidAffineMapsBlursThePlanes() throws {
        XCTAssertEqual(try route([("blur", ["radius": .float(2)])]), .yuvBlur)
        XCTAssertEqual(try route([("mono", [:]), ("blur", ["radius": .float(40)]), ("noir", [:])], source: .nv12), .yuvBlur)
        XCTAssertEqual(try route([("blur", ["radius": .float(2)])], options: CompileOptions(yuvRoute: false)), .rgb)
    }

    func testMaskedBlendsOfSuchChainsTakeTheBlendRoute() throws {
        XCTAssertEqual(try route("[in]pixellate(scale=16)[px]; radial-gradient[m]; [px][in][m]blend-mask"), .yuvBlend)
        XCTAssertEqual(try route("[in]pixellate(scale=16)[px]; radial-gradient[m]; [px][m][m]blend-mask"), .rgb)
        XCTAssertEqual(try route("[in]noir, pixellate[px]; radial-gradient[m]; [px][in][m]blend-mask"), .rgb)
        // A blur blended in by a mask: its planes blurred where the mask reaches (affine maps before it only).
        XCTAssertEqual(try route("[in]blur(radius=3)[px]; radial-gradient[m]; [px][in][m]blend-mask"), .yuvBlend)
        XCTAssertEqual(try route("invert, face-blur, mono"), .yuvBlend)
        XCTAssertEqual(try route("[in]noir, blur(radius=3)[px]; radial-gradient[m]; [px][in][m]blend-mask"), .rgb)
        XCTAssertEqual(try route("[in]blur, pixellate[px]; radial-gradient[m]; [px][in][m]blend-mask"), .rgb)
    }

    func testSizesAndLayoutsArePlannedWithTheRoute() throws {
        let graph = try GraphBinder().bind("crop(width=40, height=30), invert")
        let planned = try GraphCompiler.plan(graph, sourceFormat: .yuv420p, sourceSize: Self.size, sinks: [.nv12, .rgba],
                                             options: CompileOptions(), limits: nil)
        XCTAssertEqual(planned.shape.sizes, [Size(width: 40, height: 30), Size(width: 40, height: 30)])
        XCTAssertEqual(planned.shape.layouts.map(\.format), [.nv12, .rgba])
        XCTAssertEqual(planned.shape.layouts.map(\.size), [Size(width: 40, height: 30), Size(width: 40, height: 30)])
        guard case .rgb = planned.route else { return XCTFail("a crop goes through R'G'B'") }
    }

    /// The whole plan, passes and targets, with no GPU context: explicit limits spare the one question the
    /// compiler asks a context.
    private func plan(_ text: String, source: PixelFormat, sinks: [PixelFormat]) throws -> [CompiledPass] {
        try GraphCompiler.compile(try GraphBinder().bind(text), sourceFormat: source, sourceSize: Self.size, sinks: sinks,
                                  options: CompileOptions(limits: GraphLimits(maxSide: 16384))).passes
    }

    func testPassesAndTargetsArePlannedAsData() throws {
        // R'G'B', all fused: one packing pass into the sink's target.
        let fused = try plan("invert, mono", source: .rgba, sinks: [.rgba])
        XCTAssertEqual(fused.map(\.label), ["invert, mono → pack rgba"], "the fused filters name the pass")
        XCTAssertEqual(fused[0].target, TargetSpec(size: Self.size, readPlan: fused[0].target.readPlan))

        // Y'CbCr with pixellate: block means at block resolution (a 5 × 3 grid in rows of 128, float), then NV12
        // packed into three attachments.
        let yuv = try plan("invert, mono, pixellate(16)", source: .yuv420p, sinks: [.nv12])
        XCTAssertEqual(yuv.map(\.label), ["pixellate blocks (Y'CbCr)", "pack nv12 (Y'CbCr)"])
        XCTAssertEqual(yuv[0].target.size, Size(width: 128, height: 1))
        XCTAssertEqual(yuv[0].target.format, .rgba16f)
        XCTAssertEqual(yuv[1].target.attachments, 3)
        XCTAssertEqual(yuv[0].draws[0].variants.count, 1, "the aligned-blocks variant, chosen per frame")

        // The blend route: the mask limits the packing draw, a second draw lays the background.
        let blend = try plan("[in]pixellate(scale=16)[px]; radial-gradient[m]; [px][in][m]blend-mask", source: .yuv420p,
                             sinks: [.nv12])
        XCTAssertEqual(blend.map(\.label), ["pixellate blocks (Y'CbCr)", "pack nv12 (Y'CbCr, blended)"])
        XCTAssertEqual(blend[1].draws.count, 2)

        // Two sinks of a blur: the source and the blur's halves rendered once, then one packing pass per sink.
        let blur = try plan("blur(2)", source: .rgba, sinks: [.rgba, .nv12])
        XCTAssertEqual(blur.count, 5)
        XCTAssertEqual(blur.map(\.label), ["source rgba → RGBA", "blur prepass 0", "blur", "pack rgba", "pack nv12"])
        XCTAssertTrue(blur.allSatisfy { !$0.persistent })
        XCTAssertEqual(blur.prefix(3).map(\.target), Array(repeating: TargetSpec(size: Self.size), count: 3))
    }

    /// A plan is a value, compared whole: the same graph plans alike every time; a parameter that reaches only
    /// uniforms (an intensity, set per frame, the colour chains' values included) leaves the plan as it was, and
    /// one that shapes the code or the targets (a block size, a blur radius) changes it — what `isStale` tells.
    func testPlansCompareWhole() throws {
        let cases: [(text: String, source: PixelFormat, sinks: [PixelFormat], route: GraphCompiler.Route,
                     structural: (name: String, value: Double))] = [
            ("mono(0.5), pixellate(8), blur(2)", .rgba, [.rgba], .rgb, ("scale", 12)),
            ("mono(0.5), pixellate(8)", .yuv420p, [.nv12, .gray], .yuv, ("scale", 12)),
            ("[in]mono(0.5), pixellate(8)[px]; radial-gradient[m]; [px][in][m]blend-mask", .yuv420p, [.nv12], .yuvBlend,
             ("scale", 12)),
            ("mono(0.5), blur(2)", .yuv420p, [.yuv420p], .yuvBlur, ("radius", 30)),
        ]
        for test in cases {
            let graph = try GraphBinder().bind(test.text)
            func plan() throws -> GraphCompiler.Result {
                try GraphCompiler.compile(graph, sourceFormat: test.source, sourceSize: Self.size, sinks: test.sinks,
                                          options: CompileOptions(limits: GraphLimits(maxSide: 16384)))
            }
            XCTAssertEqual(try GraphCompiler.route(graph, sourceFormat: test.source, sourceSize: Self.size, sinks: test.sinks),
                           test.route, test.text)
            let first = try plan()
            XCTAssertEqual(try plan(), first, test.text)
            try graph.setParameter(graph.nodes[0].id, "intensity", .float(0.9))
            XCTAssertEqual(try plan(), first, "\(test.text): an intensity is a uniform")
            try graph.setParameter(graph.nodes[1].id, test.structural.name, .float(test.structural.value))
            XCTAssertNotEqual(try plan(), first, "\(test.text): \(test.structural.name)")
        }
    }
}

/// The rectangles a masked draw covers each frame (`CompiledPass.MaskRegion`), worked out by hand.
final class MaskRegionTests: XCTestCase {
    private func region(_ layout: CompiledPass.MaskRegion.Layout, target: PixelRect) -> CompiledPass.MaskRegion {
        CompiledPass.MaskRegion(generator: 0, channel: 1, layout: layout, targetArea: target)
    }

    func testPixelsMapToTexelsWithOriginAndReach() throws {
        let graph = FilterGraph()
        let size = Size(width: 100, height: 60)
        // 4×2-pixel texels from column 10 of the target: pixels 9..<21 → texels 2..<6 → 12..<16.
        let plain = region(.pixels(texel: Size(width: 4, height: 2)), target: PixelRect(x: 10..<35, y: 0..<30))
        XCTAssertEqual(plain.areas([PixelRect(x: 9..<21, y: 3..<8)], graph: graph, frameSize: size).areas,
                       [PixelRect(x: 12..<16, y: 1..<4)])
        // A reach past the frame's left edge lands in the margin texels left of the origin, clamped to the target.
        let margin = region(.pixels(texel: Size(width: 4, height: 4), origin: SIMD2(3, 3), reach: SIMD2(10, 2)),
                            target: PixelRect(x: 0..<40, y: 0..<30))
        XCTAssertEqual(margin.areas([PixelRect(x: 0..<8, y: 20..<24)], graph: graph, frameSize: size).areas,
                       [PixelRect(x: 0..<8, y: 7..<10)])
        // Regions that grow into each other are drawn once; none: nothing; nil (the mask cannot say): all.
        let two = margin.areas([PixelRect(x: 0..<8, y: 0..<4), PixelRect(x: 20..<24, y: 0..<4)], graph: graph, frameSize: size).areas
        XCTAssertEqual(two, [PixelRect(x: 0..<12, y: 2..<5)])
        XCTAssertEqual(margin.areas([], graph: graph, frameSize: size).areas, [])
        XCTAssertNil(margin.areas(nil, graph: graph, frameSize: size).areas)
    }

    func testTheOutsideOfAreasCoversEveryOtherTexelOnce() {
        let whole = PixelRect(x: 0..<10, y: 0..<10)
        for areas in [[PixelRect(x: 2..<5, y: 3..<6), PixelRect(x: 4..<8, y: 5..<9)], [PixelRect(x: 0..<10, y: 4..<6)],
                      [whole], [PixelRect(x: 8..<12, y: -2..<3)], []] {
            let outside = CompiledPass.MaskRegion.complement(of: areas, in: whole)
            for y in whole.y { for x in whole.x {
                let inAreas = areas.contains { $0.x.contains(x) && $0.y.contains(y) }
                let covering = outside.filter { $0.x.contains(x) && $0.y.contains(y) }.count
                XCTAssertEqual(covering, inAreas ? 0 : 1, "(\(x), \(y)) of \(areas)")
            } }
            XCTAssertTrue(outside.allSatisfy { whole.x.contains($0.x.lowerBound) && $0.x.upperBound <= 10 && $0.y.upperBound <= 10 })
        }
        XCTAssertEqual(CompiledPass.MaskRegion.complement(of: nil, in: whole), [], "a mask that cannot say covers all")
    }
}

/// Cheaper programs are realised when first drawn: every one of them must compile, for every route's plans.
final class ProgramVariantTests: XCTestCase {
    func testEveryVariantCompiles() throws {
        let graphs = ["invert, mono, pixellate(scale=16)", "noir", "face-blur", "face-pixellate", "invert, face-blur(radius=4), noir",
                      "blur(radius=30)", "transfer", "[in]pixellate(scale=5)[px]; radial-gradient[m]; [px][in][m]blend-mask"]
        var variants = 0
        for text in graphs {
            let graph = try GraphBinder().bind(text)
            for sinks in [[PixelFormat.yuv420p], [.nv12], [.gray], [.yuv420p, .nv12]] {
                try SharedGPU.get().perform {
                    let renderer = try GraphRenderer(graph: graph, sourceFormat: .yuv420p, sourceSize: Size(width: 70, height: 38), sinks: sinks)
                    variants += renderer.variantCount
                    try renderer.realiseEveryVariant()
                }
            }
        }
        XCTAssertGreaterThan(variants, 50, "the graphs have lean, few-region and aligned-block programs")
    }
}

extension GraphCompiler {
    /// Which route a graph takes, by name (what the route tests compare).
    enum Route: Equatable { case rgb, yuv, yuvBlend, yuvBlur }

    /// The route alone (see `plan`).
    static func route(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, sinks: [PixelFormat],
                      options: CompileOptions = CompileOptions()) throws -> Route {
        switch try plan(graph, sourceFormat: sourceFormat, sourceSize: sourceSize, sinks: sinks, options: options,
                        limits: nil).route {
        case .yuv: .yuv
        case .yuvBlend: .yuvBlend
        case .yuvBlur: .yuvBlur
        case .rgb: .rgb
        }
    }
}
