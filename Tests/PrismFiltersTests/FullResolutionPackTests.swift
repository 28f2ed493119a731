import XCTest
import PrismCore
@testable import PrismGPU
@testable import PrismFilters

/// An expensive R'G'B' output into planar 4:2:0 is evaluated once per pixel into full-resolution Y'CbCr
/// planes and packed from them (`FrameShaders.fullResolutionMain`), instead of three times by the planar
/// packing. Checked against a 3D table's maths on the CPU: a 33³ .cube sampled from a smooth function, so its
/// tetrahedral interpolation is the function within a hundredth of a code.
extension YUVRouteTests {
    /// The table's function (any non-affine map of the unit cube).
    static func look(_ c: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(c.x * c.x, 1 - (1 - c.y) * (1 - c.y), 0.5 * (c.z + c.x * c.y))
    }

    func lookGraph() throws -> FilterGraph {
        let n = 33
        var text = "LUT_3D_SIZE \(n)\n"
        for b in 0..<n { for g in 0..<n { for r in 0..<n {
            let v = Self.look(SIMD3(Double(r), Double(g), Double(b)) / Double(n - 1))
            text += String(format: "%.9f %.9f %.9f\n", v.x, v.y, v.z)
        } } }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("prism-full-resolution-\(getpid()).cube").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try GraphBinder().bind("lut(file=\(path))")
    }

    func testAnExpensiveOutputIsPackedFromFullResolutionPlanes() throws {
        let graph = try lookGraph()
        let labels = try SharedGPU.get().perform {
            try GraphRenderer(graph: graph, sourceFormat: .yuv420p, sourceSize: Self.size, sinks: [.yuv420p]).passLabels
        }
        XCTAssertEqual(labels, ["yuv420p planes at full resolution", "pack yuv420p (from full-resolution Y'CbCr)"])
        // Other sinks evaluate each pixel once already: packed as before.
        for sinks in [[PixelFormat.nv12], [.gray], [.yuv420p, .nv12]] {
            let others = try SharedGPU.get().perform {
                try GraphRenderer(graph: graph, sourceFormat: .yuv420p, sourceSize: Self.size, sinks: sinks).passLabels
            }
            XCTAssertFalse(others.contains { $0.contains("full resolution") }, "\(sinks): \(others)")
        }
        // Texel padding on the right (70 and 66 are not multiples of 4, their chroma not of 8): edges replicated.
        for size in [Self.size, Size(width: 66, height: 34), Size(width: 8, height: 2)] {
            let planes = Self.testPlanes(size: size)
            let expected = Self.pack(Self.rgb(planes, size: size).map { Self.look($0.clamped(lowerBound: .zero, upperBound: .one)) }, size: size)
            for source in [PixelFormat.yuv420p, .nv12] {
                let output = try render(graph, planes: planes, source: source, sinks: [.yuv420p], size: size, route: .rgb)[0]
                assertPlanes(output, expected, tolerance: 1, "\(size), \(source) → yuv420p")
            }
        }
    }
}
