import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

final class BuiltinFilterTests: XCTestCase {
    let image = TestImage.varied()

    func testInvertIsExact() throws {
        let out = try render(chain([("invert", [:])]), image)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(1 - p.x, 1 - p.y, 1 - p.z, p.w)
        }
        assertClose(out, expected, tolerance: 0, "invert")
    }

    func testColorControls() throws {
        let params: [String: ParameterValue] = ["brightness": .float(0.05), "contrast": .float(1.3), "saturation": .float(0.6)]
        let out = try render(chain([("color", params)]), image)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            let luma = 0.2126 * p.x + 0.7152 * p.y + 0.0722 * p.z
            func f(_ v: Double) -> Double { ((luma + (v - luma) * 0.6) - 0.5) * 1.3 + 0.5 + 0.05 }
            return SIMD4(f(p.x), f(p.y), f(p.z), p.w)
        }
        assertClose(out, expected, tolerance: 1, "color")
    }

    func testEveryLookMatchesItsFunctionThroughTheTable() throws {
        for look in ColorLook.all {
            for interp in ["tetrahedral", "trilinear"] {
                let out = try render(chain([(look.name, ["interp": .choice(interp), "intensity": .float(0.9)])]), image)
                let expected = TestImage.from(size: image.size) { x, y in
                    let p = self.image.pixel(x, y)
                    let rgb = SIMD3(p.x, p.y, p.z)
                    let looked = look.apply(rgb)
                    let mixed = rgb + (looked - rgb) * 0.9
                    return SIMD4(mixed.x, mixed.y, mixed.z, p.w)
                }
                // A 33³ table interpolated linearly departs from a smooth curve by well under 1/255;
                // 2 leaves room for rounding at both ends.
                assertClose(out, expected, tolerance: 2, "\(look.name) \(interp)")
            }
        }
    }

    func testPixellateAveragesBlocksAlignedOnTheCentre() throws {
        let scale = 7.0
        let center = SIMD2(0.3, 0.6)
        let out = try render(chain([("pixellate", ["scale": .float(scale), "center": .point(center)])]), image)
        let size = image.size
        let ox0 = center.x * Double(size.width) - scale / 2, oy0 = center.y * Double(size.height) - scale / 2
        let origin = SIMD2(ox0 - scale * (ox0 / scale).rounded(.up), oy0 - scale * (oy0 / scale).rounded(.up))
        func block(_ x: Int, _ y: Int) -> SIMD2<Int> {
            SIMD2(Int(((Double(x) + 0.5 - origin.x) / scale).rounded(.down)),
                  Int(((Double(y) + 0.5 - origin.y) / scale).rounded(.down)))
        }
        var sums: [SIMD2<Int>: (SIMD4<Double>, Int)] = [:]
        for y in 0..<size.height { for x in 0..<size.width {
            let b = block(x, y)
            let (s, n) = sums[b] ?? (.zero, 0)
            sums[b] = (s + image.pixel(x, y), n + 1)
        } }
        let expected = TestImage.from(size: size) { x, y in
            let (s, n) = sums[block(x, y)]!
            return s / Double(n)
        }
        assertClose(out, expected, tolerance: 1, "pixellate")
        // A block centred on `center` covers the pixel there and its neighbours within scale/2.
        let cx = Int(center.x * Double(size.width)), cy = Int(center.y * Double(size.height))
        XCTAssertEqual(block(cx - 3, cy - 3), block(cx + 2, cy + 2))
    }

    func testFusedChainEqualsOnePassPerFilter() throws {
        let graph = try chain([("invert", [:]), ("mono", [:]), ("color", ["contrast": .float(1.2)]),
                               ("pixellate", ["scale": .float(5)]), ("instant", ["intensity": .float(0.5)])])
        // With float intermediates the only rounding left is the final one: within 1/255.
        let fused = try render(graph, image, fuse: true, intermediate: .rgba16f)
        let unfused = try render(graph, image, fuse: false, intermediate: .rgba16f)
        assertClose(fused, unfused, tolerance: 1, "fused vs unfused")
        // With 8-bit intermediates each extra pass may round once more (contrast 1.2 amplifies it).
        let unfused8 = try render(graph, image, fuse: false)
        assertClose(try render(graph, image), unfused8, tolerance: 3, "fused vs unfused, 8-bit intermediates")
    }
}

final class KernelResourceTests: XCTestCase {
    let image = TestImage.varied()

    /// An ISF filter that imports a 2×2 image (red, green / blue, white) and mixes it half and half
    /// with its input, written to a fresh directory; the loader hands the image over from memory.
    private func importingShader() throws -> (path: String, binder: GraphBinder, cleanup: () -> Void) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lifetime-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("mixquad.fs").path
        try """
        /*{
            "ISFVSN": "2",
            "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
            "IMPORTED": { "quad": { "PATH": "quad.png" } }
        }*/
        void main() {
            vec2 cell = floor(isf_FragNormCoord * 2.0);
            gl_FragColor = mix(IMG_THIS_PIXEL(inputImage), IMG_NORM_PIXEL(quad, (cell + 0.5) / IMG_SIZE(quad)), 0.5);
        }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let quad: [UInt8] = [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255]
        let binder = GraphBinder(imageLoader: { _ in (Size(width: 2, height: 2), quad) })
        return (path, binder, { try? FileManager.default.removeItem(at: directory) })
    }

    /// Uploads, renders and reads back one frame through `renderer` (on the GPU thread).
    private func renderOnce(_ renderer: GraphRenderer, _ image: TestImage) throws -> [UInt8] {
        let uploader = FrameUploader(ringSize: 1)
        let frame = try image.rgba.withUnsafeBytes {
            try uploader.upload(CPUFramePlanes(format: .rgba, size: image.size,
                                               colorSpace: YUVColorSpace(matrix: .bt709, range: .full),
                                               planes: [($0.baseAddress!, image.size.width * 4)]))
        }
        try renderer.render(frame, context: FrameContext())
        let layout = renderer.sinkLayouts[0]
        var packed = [UInt8](repeating: 0, count: layout.byteCount)
        let readback = try FrameReadback<Int>(strategy: .sync, layout: layout)
        _ = try packed.withUnsafeMutableBytes { try readback.submit(renderer.sinkTarget(), into: $0.baseAddress!, tag: 0) }
        var rgba: [UInt8] = []
        for row in 0..<image.size.height {
            rgba += packed[(row * layout.rowBytes)..<(row * layout.rowBytes + image.size.width * 4)]
        }
        return rgba
    }

    func testRenderersReleaseKernelTexturesOnTheNormalPath() throws {
        // noir is a real 33³ table (not affine, unlike mono) and the ISF filter holds an imported image
        // and an empty texture: GL textures the kernels own. Every renderer balances its `prepare` on
        // the normal path, so once the last renderer is gone the context holds no more textures than
        // before — while the graph (and its kernels) live on. Two renderers share the kernels (the dev
        // preview does this while recording): dropping one must not free what the other still samples.
        let shader = try importingShader()
        defer { shader.cleanup() }
        let graph = try shader.binder.bind("\"\(shader.path)\", noir")
        let lut = try XCTUnwrap(graph.nodes.last?.kernel as? LUTKernel)
        XCTAssertNil(lut.affine, "noir must need its table for this test")
        let context = try SharedGPU.get()
        let counts = try context.perform { () throws -> (before: GPUObjectCounts, afterOne: GPUObjectCounts, during: GPUObjectCounts,
                                                         afterAll: GPUObjectCounts, alone: [UInt8], shared: [UInt8]) in
            // The context's cache (programs and free targets kept for the next compile) is emptied before each
            // count: what is left is what the renderers and kernels hold.
            context.releaseResources()
            let before = context.liveObjects
            let alone = try renderOnce(try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: image.size, sinks: [.rgba]),
                                       image)
            context.releaseResources()
            let afterOne = context.liveObjects
            var first: GraphRenderer? = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: image.size, sinks: [.rgba])
            var second: GraphRenderer? = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: image.size, sinks: [.rgba])
            let during = context.liveObjects
            XCTAssertNotNil(first)
            first = nil
            let shared = try renderOnce(second!, image)
            second = nil
            context.releaseResources()
            return (before, afterOne, during, context.liveObjects, alone, shared)
        }
        XCTAssertGreaterThan(counts.during.textures, counts.before.textures)
        XCTAssertEqual(counts.afterOne.textures, counts.before.textures,
                       "one renderer came and went: the LUT and the imported image must be gone with it")
        XCTAssertEqual(counts.afterAll, counts.before, "every GL object of both renderers must be gone")
        XCTAssertTrue(counts.shared == counts.alone, "the surviving renderer lost its table or its image")
        // Not the input, and not black: the table and the image were really sampled.
        XCTAssertNotEqual(counts.alone, image.rgba)
        XCTAssertTrue(counts.alone.enumerated().contains { $0.offset % 4 != 3 && $0.element > 40 })
    }

    func testSteadyStateRenderingMakesNoGLObjects() throws {
        // After the first frame, frames reuse what they made: the live counts stay where they are.
        let graph = try GraphBinder().bind("noir, pixellate(4), blur(2)")
        let context = try SharedGPU.get()
        let counts = try context.perform { () throws -> [GPUObjectCounts] in
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: image.size, sinks: [.rgba])
            let uploader = FrameUploader(ringSize: 2)
            let readback = try FrameReadback<Int>(strategy: .pbo, layout: renderer.sinkLayouts[0], ringSize: 2)
            var destination = [UInt8](repeating: 0, count: renderer.sinkLayouts[0].byteCount)
            var seen: [GPUObjectCounts] = []
            for index in 0..<6 {
                let frame = try image.rgba.withUnsafeBytes {
                    try uploader.upload(CPUFramePlanes(format: .rgba, size: image.size,
                                                       colorSpace: YUVColorSpace(matrix: .bt709, range: .full),
                                                       planes: [($0.baseAddress!, image.size.width * 4)]))
                }
                try renderer.render(frame, context: FrameContext(frameIndex: index))
                _ = try destination.withUnsafeMutableBytes {
                    try readback.submit(renderer.sinkTarget(), into: $0.baseAddress!, tag: index)
                }
                seen.append(context.liveObjects)
            }
            _ = try readback.drain()
            return seen
        }
        // Two uploads fill the ring; from then on nothing new.
        XCTAssertEqual(Set(counts.dropFirst(2)).count, 1, "\(counts)")
        XCTAssertGreaterThan(counts[0].textures, 0)
    }

    func testAKernelWithTexturesRefusesASecondContextWhileTheFirstHoldsThem() throws {
        // GL objects do not cross contexts: a graph whose table lives on one context cannot be prepared on
        // another at the same time — a clear error, not a texture name that means nothing there.
        let graph = try chain([("noir", [:])])
        let first = try SharedGPU.get(), second = try GPUContext()
        var renderer: GraphRenderer? = try first.perform {
            try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: image.size, sinks: [.rgba])
        }
        XCTAssertThrowsError(try second.perform {
            try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: image.size, sinks: [.rgba])
        }) { error in
            XCTAssertTrue("\(error)".contains("another GPU context"), "\(error)")
        }
        XCTAssertEqual(second.liveObjects.textures, 0, "the failed compile left nothing behind")
        try first.perform { renderer = nil }
        // Once the first context's renderer is gone, so is the table: the second may make its own.
        let textures = try second.perform { () throws -> Int in
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: image.size, sinks: [.rgba])
            XCTAssertEqual(renderer.passCount, 1)
            return second.liveObjects.textures
        }
        XCTAssertGreaterThan(textures, 0)
        XCTAssertNil(renderer)
    }
}

final class YUVSourceFusionTests: XCTestCase {
    /// Runs `graph` on a synthetic 4:2:0 frame (odd-aligned width, so quads straddle the edge) and
    /// returns RGBA.
    private func renderYUV(_ graph: FilterGraph, fuse: Bool) throws -> [UInt8] {
        let size = Size(width: 70, height: 38)
        var y = [UInt8](repeating: 0, count: 70 * 38), u = [UInt8](repeating: 0, count: 35 * 19), v = u
        for row in 0..<38 { for x in 0..<70 { y[row * 70 + x] = UInt8(16 + (x * 3 + row * 5 + (x / 7 % 2) * 60) % 220) } }
        for row in 0..<19 { for x in 0..<35 { u[row * 35 + x] = UInt8(60 + (x * 4) % 130); v[row * 35 + x] = UInt8(200 - (row * 6) % 130) } }
        return try SharedGPU.get().perform {
            let uploader = FrameUploader(ringSize: 1)
            let frame = try y.withUnsafeBytes { yb in try u.withUnsafeBytes { ub in try v.withUnsafeBytes { vb in
                try uploader.upload(CPUFramePlanes(format: .yuv420p, size: size, colorSpace: YUVColorSpace(matrix: .bt601, range: .limited),
                                                   planes: [(yb.baseAddress!, 70), (ub.baseAddress!, 35), (vb.baseAddress!, 35)]))
            } } }
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .yuv420p, sourceSize: size, sinks: [.rgba],
                                             options: CompileOptions(fuse: fuse, intermediateFormat: .rgba16f))
            try renderer.render(frame, context: FrameContext())
            let layout = renderer.sinkLayouts[0]
            var packed = [UInt8](repeating: 0, count: layout.byteCount)
            let readback = try FrameReadback<Int>(strategy: .sync, layout: layout)
            _ = try packed.withUnsafeMutableBytes { try readback.submit(renderer.sinkTarget(), into: $0.baseAddress!, tag: 0) }
            return packed
        }
    }

    func testBatchedPrepassFromYUVEqualsUnfused() throws {
        // Pixellate's block sums read four source pixels per fetch when the chain before it is
        // point-wise; the result must equal the one-pass-per-filter version.
        for text in ["pixellate(scale=6, center=0.37:0.5)", "invert, mono, pixellate(5)", "color(contrast=1.3), pixellate(9)"] {
            let graph = try GraphBinder().bind(text)
            let fused = try renderYUV(graph, fuse: true), unfused = try renderYUV(graph, fuse: false)
            let worst = zip(fused, unfused).map { abs(Int($0) - Int($1)) }.max()!
            XCTAssertLessThanOrEqual(worst, 1, text)
        }
    }
}

final class RendererStalenessTests: XCTestCase {
    func testOnlyStructuralParameterChangesMakeARendererStale() throws {
        let graph = try GraphBinder().bind("mono(0.5), pixellate(8), blur(2)")
        let context = try SharedGPU.get()
        var renderer: GraphRenderer?
        try context.perform {
            renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: Size(width: 64, height: 48), sinks: [.rgba])
        }
        defer { try? context.perform { renderer = nil } }
        XCTAssertFalse(renderer!.isStale)
        try graph.setParameter(graph.nodes[0].id, "intensity", .float(0.9))    // a uniform
        XCTAssertFalse(renderer!.isStale)
        try graph.setParameter(graph.nodes[1].id, "scale", .float(12))         // block texture size
        XCTAssertTrue(renderer!.isStale)
        try graph.setParameter(graph.nodes[1].id, "scale", .float(8))
        XCTAssertFalse(renderer!.isStale)
        try graph.setParameter(graph.nodes[2].id, "radius", .float(40))        // taps and reduction
        XCTAssertTrue(renderer!.isStale)
    }
}

final class AffineTableTests: XCTestCase {
    func testAffineTablesAreRecognisedAndOthersAreNot() throws {
        func fit(_ name: String) -> Bool {
            let look = ColorLook.all.first { $0.name == name }!
            return LUTKernel.affineFit(dimension: 17, table: ColorLook.table(dimension: 17, look.apply)) != nil
        }
        XCTAssertTrue(fit("mono"))
        XCTAssertTrue(fit("fade"))
        XCTAssertTrue(fit("instant"))   // its clamp never bites: 0.08 + 0.86 · 1.06 < 1
        for name in ["noir", "tonal", "transfer", "chrome", "process"] { XCTAssertFalse(fit(name), name) }
        // One entry off by 1/255 is enough to keep the table as a table.
        var table = ColorLook.table(dimension: 5) { $0 }
        XCTAssertNotNil(LUTKernel.affineFit(dimension: 5, table: table))
        table[62] += SIMD3(1.0 / 255, 0, 0)
        XCTAssertNil(LUTKernel.affineFit(dimension: 5, table: table))
    }
}

final class RadialGradientTests: XCTestCase {
    func testGradientFromShadersMatchesTheCPUAndFuses() throws {
        let image = TestImage.varied(width: 90, height: 60)
        let graph = try GraphBinder().bind("radial-gradient(center=0.3:0.25, radius0=6, radius1=30, color0=#ff8000, color1=#0020ff80)")
        let out = try render(graph, image)
        let expected = TestImage.from(size: image.size) { x, y in
            let d = ((Double(x) + 0.5 - 27).squared + (Double(y) + 0.5 - 15).squared).squareRoot()
            let t = min(max((d - 6) / 24, 0), 1)
            let c0 = SIMD4(1.0, 128.0 / 255, 0, 1), c1 = SIMD4(0, 32.0 / 255, 1, 128.0 / 255)
            return c0 + (c1 - c0) * t
        }
        assertClose(out, expected, tolerance: 1, "radial-gradient")
        // A generator from Shaders/ fuses: gradient and blend in the packing pass alone.
        let masked = try GraphBinder().bind("radial-gradient(radius0=5, radius1=20)[m]; [in]invert[i]; [i][in][m]blend-mask")
        let passes = try SharedGPU.get().perform {
            try GraphRenderer(graph: masked, sourceFormat: .rgba, sourceSize: image.size, sinks: [.rgba]).passCount
        }
        XCTAssertEqual(passes, 1)
    }
}

private extension Double {
    var squared: Double { self * self }
}
