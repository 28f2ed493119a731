import Foundation
import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// The ISF spec's conventions as the reference renderer (interactive-shader-format-js) renders them, where the
/// result depends on them to the last bit: the normalised coordinate, the image macros, host-declared values.
final class ISFConventionsTests: XCTestCase {

    // MARK: isf_FragNormCoord is the reference's varying

    /// The hash noise of many published shaders: last-bit differences in the coordinate become other values.
    static let noiseBody = """
        void main() {
            float n = fract(sin(dot(isf_FragNormCoord, vec2(12.9898, 78.233))) * 43758.5453);
            gl_FragColor = vec4(n, fract(n * 7.0), isf_FragNormCoord.x, 1.0);
        }
        """

    static let noiseGenerator = "/*{ \"ISFVSN\": \"2\", \"INPUTS\": [] }*/\n" + noiseBody

    /// The same noise drawn the reference renderer's way, written here independently of Prism's translation: a
    /// plain program whose vertex stage emits the reference's six corners, (-1,-1) (1,-1) (-1,1), (-1,1) (1,-1)
    /// (1,1), and `isf_FragNormCoord = (position + 1) / 2` as a varying. Rows come back bottom first (GL's
    /// order), so the image is flipped to Prism's top-first order.
    func referenceNoise(size: Size) throws -> TestImage {
        let vertex = """
            #version 300 es
            const vec2 positions[6] = vec2[6](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(-1.0, 1.0),
                                              vec2(-1.0, 1.0), vec2(1.0, -1.0), vec2(1.0, 1.0));
            out vec2 isf_FragNormCoord;
            void main() {
                gl_Position = vec4(positions[gl_VertexID], 0.0, 1.0);
                isf_FragNormCoord = vec2((gl_Position.x + 1.0) / 2.0, (gl_Position.y + 1.0) / 2.0);
            }
            """
        let fragment = "#version 300 es\nprecision highp float;\nin vec2 isf_FragNormCoord;\nout vec4 fragColor;\n"
            + Self.noiseBody.replacingOccurrences(of: "gl_FragColor", with: "fragColor")
        let rows = try SharedGPU.get().perform { () -> [UInt8] in
            let state = DrawState()
            defer { withExtendedLifetime(state) {} }
            let program = try ShaderProgram(label: "reference noise", vertex: vertex, fragment: fragment, drawsQuad: true)
            let target = try RenderTarget(size: size)
            target.bindForDrawing()
            program.use()
            program.drawFullscreen()
            let layout = try XCTUnwrap(PackedFrameLayout(format: .rgba, size: size))
            let reader = try FrameReadback<Int>(strategy: .sync, layout: layout)
            var bytes = [UInt8](repeating: 0, count: layout.byteCount)
            try bytes.withUnsafeMutableBytes { raw in
                _ = try reader.submit(target, into: raw.baseAddress!, tag: 0)
                _ = try reader.drain()
            }
            return bytes
        }
        let row = size.width * 4
        var flipped = [UInt8](repeating: 0, count: rows.count)
        for y in 0..<size.height {
            flipped[(y * row)..<((y + 1) * row)] = rows[((size.height - 1 - y) * row)..<((size.height - y) * row)]
        }
        return TestImage(size: size, rgba: flipped)
    }

    func renderGenerator(_ source: String, size: Size) throws -> (TestImage, UserShaderKernel) {
        let kernel = try UserShaderKernel(shader: UserShader.load(source: source, path: "/virtual/noise.fs"))
        let graph = FilterGraph()
        try graph.append("noise", kernel: kernel, parameters: kernel.parameters)
        let blank = TestImage(size: size, rgba: [UInt8](repeating: 0, count: size.pixelCount * 4))
        return (try render(graph, blank), kernel)
    }

    func differingPixels(_ a: TestImage, _ b: TestImage) -> Int {
        var count = 0
        for i in stride(from: 0, to: a.rgba.count, by: 4) where a.rgba[i..<(i + 4)] != b.rgba[i..<(i + 4)] { count += 1 }
        return count
    }

    func testNormalisedCoordinateIsTheReferenceVaryingToTheLastBit() throws {
        // Compared with a second GL render path (the reference's vertex stage, written above), not a CPU
        // model: llvmpipe's interpolation cannot be emulated float-exactly on the CPU.
        let size = Size(width: 1280, height: 720)
        let reference = try referenceNoise(size: size)
        let (out, kernel) = try renderGenerator(Self.noiseGenerator, size: size)
        XCTAssertFalse(kernel.isFused, "a shader computing with isf_FragNormCoord runs as its own pass")
        XCTAssertNotNil(kernel.shader.passes[0].vertex, "the default ISF vertex shader")
        XCTAssertEqual(differingPixels(out, reference), 0, "every pixel as the reference renders it")

        // Why it matters: the coordinate computed as gl_FragCoord / RENDERSIZE (what Prism did before) is a
        // different picture for this noise, not just a rounding away.
        let (computed, _) = try renderGenerator(
            Self.noiseGenerator.replacingOccurrences(of: "dot(isf_FragNormCoord", with: "dot(gl_FragCoord.xy / RENDERSIZE"), size: size)
        XCTAssertGreaterThan(differingPixels(computed, reference), size.pixelCount / 100,
                             "gl_FragCoord / RENDERSIZE is not the reference's coordinate")
    }

    func testReadingTheInputAtThePixelStillFusesAndMatchesTheReferenceSample() throws {
        // IMG_THIS_PIXEL is texture2D(image, isf_FragNormCoord) in the reference; the fused form reads the pixel
        // itself. Both are the same texel: checked against the sampled varying on a noise image.
        let image = TestImage.noise(width: 1280, height: 720, seed: 7)
        let through = """
            /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ] }*/
            void main() { gl_FragColor = IMG_THIS_PIXEL(inputImage); }
            """
        let sampled = """
            /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ] }*/
            void main() { gl_FragColor = texture2D(inputImage, isf_FragNormCoord + 0.0); }
            """
        func run(_ source: String) throws -> (TestImage, Bool) {
            let kernel = try UserShaderKernel(shader: UserShader.load(source: source, path: "/virtual/read.fs"))
            let graph = FilterGraph()
            try graph.append("read", kernel: kernel, parameters: kernel.parameters)
            return (try render(graph, image), kernel.isFused)
        }
        let (fused, isFused) = try run(through)
        let (pass, passFused) = try run(sampled)
        XCTAssertTrue(isFused, "IMG_THIS_PIXEL alone keeps the shader fusable")
        XCTAssertFalse(passFused, "arithmetic on isf_FragNormCoord runs as a pass")
        XCTAssertEqual(differingPixels(fused, image), 0, "the fused read is the pixel")
        XCTAssertEqual(differingPixels(pass, image), 0, "the varying samples the same texel")
    }
}
