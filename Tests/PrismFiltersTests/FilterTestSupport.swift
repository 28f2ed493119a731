import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters
import PrismMedia
import PrismPipeline

/// A varied RGBA test image: smooth gradients, hard edges, saturated primaries, a soft alpha ramp.
struct TestImage {
    let size: Size
    var rgba: [UInt8]

    static func varied(width: Int = 97, height: Int = 61) -> TestImage {
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let band = x * 6 / width
                switch (y * 3 / height, band) {
                case (0, _):  // gradients
                    rgba[i] = UInt8(x * 255 / (width - 1))
                    rgba[i + 1] = UInt8(y * 255 / (height - 1))
                    rgba[i + 2] = UInt8(255 - x * 255 / (width - 1))
                case (1, _):  // saturated bars with hard edges
                    let bars: [(UInt8, UInt8, UInt8)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255)]
                    (rgba[i], rgba[i + 1], rgba[i + 2]) = bars[band]
                default:  // checkerboard and fine detail
                    let on = (x / 3 + y / 3) % 2 == 0
                    rgba[i] = on ? 230 : 20
                    rgba[i + 1] = UInt8((x * 37 + y * 11) % 256)
                    rgba[i + 2] = on ? 40 : 200
                }
            }
        }
        return TestImage(size: Size(width: width, height: height), rgba: rgba)
    }

    func pixel(_ x: Int, _ y: Int) -> SIMD4<Double> {
        let cx = min(max(x, 0), size.width - 1), cy = min(max(y, 0), size.height - 1)
        let i = (cy * size.width + cx) * 4
        return SIMD4(Double(rgba[i]), Double(rgba[i + 1]), Double(rgba[i + 2]), Double(rgba[i + 3])) / 255
    }

    /// Builds an image from a per-pixel function returning 0...1 RGBA.
    static func from(size: Size, _ f: (Int, Int) -> SIMD4<Double>) -> TestImage {
        var rgba = [UInt8](repeating: 0, count: size.pixelCount * 4)
        for y in 0..<size.height { for x in 0..<size.width {
            let v = f(x, y)
            let i = (y * size.width + x) * 4
            for c in 0..<4 { rgba[i + c] = UInt8((min(max(v[c], 0), 1) * 255).rounded()) }
        } }
        return TestImage(size: size, rgba: rgba)
    }
}

/// One context for the whole test process: contexts are cheap but not free on llvmpipe.
enum SharedGPU {
    nonisolated(unsafe) static var context: GPUContext?
    static func get() throws -> GPUContext {
        if let context { return context }
        let made = try GPUContext()
        context = made
        return made
    }
}

/// One still through the engine (`FrameEngine.renderStill`, what `prism render` runs): `frame`, when
/// given, is the frame's whole context (time, regions, sound).
func renderStill(_ graph: FilterGraph, rgba: [UInt8], size: Size, options: CompileOptions = CompileOptions(),
                 frame: FrameContext? = nil) throws -> (rgba: [UInt8], size: Size) {
    var configuration = EngineConfiguration()
    configuration.compileOptions = options
    let image = try FrameEngine.renderStill(graph, image: RGBAImage(size: size, pixels: rgba), gpu: SharedGPU.get(),
                                            configuration: configuration, frame: frame)
    return (image.pixels, image.size)
}

extension XCTestCase {
    /// Parses nothing: builds a chain of built-ins by name with parameters.
    func chain(_ steps: [(String, [String: ParameterValue])]) throws -> FilterGraph {
        let graph = FilterGraph()
        for (name, params) in steps {
            let definition = try XCTUnwrap(BuiltinFilters.named(name), "no filter \(name)")
            let (kernel, values) = try definition.instantiate(params)
            try graph.append(name, kernel: kernel, parameters: values)
        }
        return graph
    }

    func render(_ graph: FilterGraph, _ image: TestImage, fuse: Bool = true,
                intermediate: TextureFormat = .rgba8) throws -> TestImage {
        let (rgba, size) = try renderStill(graph, rgba: image.rgba, size: image.size,
                                           options: CompileOptions(fuse: fuse, intermediateFormat: intermediate))
        return TestImage(size: size, rgba: rgba)
    }

    /// Renders `images` in turn through one renderer (persistent buffers live as long as it does) and reads
    /// the last output back. `before` runs before each frame (parameter changes); `context` gives each
    /// frame's time and index (and anything else a test sets).
    func renderFrames(_ graph: FilterGraph, _ images: [TestImage], before: (Int) throws -> Void = { _ in },
                      context: (Int) -> FrameContext = { FrameContext(time: Double($0) / 30, timeDelta: 1.0 / 30, frameIndex: $0) })
        throws -> TestImage {
        let size = images[0].size
        return try SharedGPU.get().perform {
            let uploader = FrameUploader(ringSize: 1)
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
            for (index, image) in images.enumerated() {
                try before(index)
                let uploaded = try image.rgba.withUnsafeBytes { bytes in
                    try uploader.upload(CPUFramePlanes(format: .rgba, size: size,
                                                       colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full),
                                                       planes: [(bytes.baseAddress!, size.width * 4)]))
                }
                try renderer.render(uploaded, context: context(index))
            }
            let layout = renderer.sinkLayouts[0]
            var packed = [UInt8](repeating: 0, count: layout.byteCount)
            let readback = try FrameReadback<Int>(strategy: .sync, layout: layout)
            _ = try packed.withUnsafeMutableBytes { try readback.submit(renderer.sinkTarget(), into: $0.baseAddress!, tag: 0) }
            var result = [UInt8](repeating: 0, count: size.pixelCount * 4)
            for row in 0..<size.height {
                result[(row * size.width * 4)..<((row + 1) * size.width * 4)] = packed[(row * layout.rowBytes)..<(row * layout.rowBytes + size.width * 4)]
            }
            return TestImage(size: size, rgba: result)
        }
    }

    /// Largest per-channel difference in code values; fails with where it happened.
    @discardableResult
    func assertClose(_ actual: TestImage, _ expected: TestImage, tolerance: Int, _ label: String,
                     file: StaticString = #filePath, line: UInt = #line) -> Int {
        XCTAssertEqual(actual.size, expected.size, label, file: file, line: line)
        guard actual.size == expected.size else { return 255 }
        var worst = 0, at = 0
        for i in actual.rgba.indices {
            let d = abs(Int(actual.rgba[i]) - Int(expected.rgba[i]))
            if d > worst { worst = d; at = i }
        }
        let pixel = at / 4
        XCTAssertLessThanOrEqual(worst, tolerance,
                                 "\(label): max error \(worst) at (\(pixel % actual.size.width), \(pixel / actual.size.width)) channel \(at % 4)",
                                 file: file, line: line)
        return worst
    }
}
