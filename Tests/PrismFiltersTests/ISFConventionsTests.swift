import Foundation
import Synchronization
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

    /// A fragment body drawn the reference renderer's way, written here independently of Prism's translation:
    /// a plain program whose vertex stage emits the reference's six corners, (-1,-1) (1,-1) (-1,1), (-1,1)
    /// (1,-1) (1,1), and `isf_FragNormCoord = (position + 1) / 2` as a varying; `inputImage` (with
    /// `_inputImage_imgSize`) is `input` uploaded bottom row first, as ISF has it. Rows come back bottom
    /// first (GL's order), so the result is flipped to Prism's top-first order.
    func referenceRender(_ body: String, size: Size, input: TestImage? = nil) throws -> TestImage {
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
        let fragment = """
            #version 300 es
            precision highp float;
            in vec2 isf_FragNormCoord;
            uniform vec2 RENDERSIZE;
            uniform sampler2D inputImage;
            uniform vec2 _inputImage_imgSize;
            out vec4 fragColor;

            """ + body.replacingOccurrences(of: "gl_FragColor", with: "fragColor")
        func flipped(_ rows: [UInt8], _ size: Size) -> [UInt8] {
            let row = size.width * 4
            var out = [UInt8](repeating: 0, count: rows.count)
            for y in 0..<size.height {
                out[(y * row)..<((y + 1) * row)] = rows[((size.height - 1 - y) * row)..<((size.height - y) * row)]
            }
            return out
        }
        let rows = try SharedGPU.get().perform { () -> [UInt8] in
            let state = DrawState()
            defer { withExtendedLifetime(state) {} }
            let program = try ShaderProgram(label: "reference", vertex: vertex, fragment: fragment, drawsQuad: true)
            var texture: Texture?
            if let input {
                let made = try Texture(size: input.size, format: .rgba8)
                flipped(input.rgba, input.size).withUnsafeBytes { made.upload($0.baseAddress!, rowBytes: input.size.width * 4) }
                texture = made
            }
            let target = try RenderTarget(size: size)
            target.bindForDrawing()
            program.use()
            program.set("RENDERSIZE", Float(size.width), Float(size.height))
            if let texture {
                texture.bind(unit: 0)
                program.set("inputImage", Int32(0))
                program.set("_inputImage_imgSize", Float(texture.size.width), Float(texture.size.height))
            }
            program.drawFullscreen()
            let layout = try XCTUnwrap(PackedFrameLayout(format: .rgba, size: size))
            let reader = try FrameReadback<Int>(strategy: .sync, layout: layout)
            var bytes = [UInt8](repeating: 0, count: layout.byteCount)
            try bytes.withUnsafeMutableBytes { raw in
                _ = try reader.submit(target, into: raw.baseAddress!, tag: 0)
                _ = try reader.drain()
            }
            return withExtendedLifetime(texture) { bytes }
        }
        return TestImage(size: size, rgba: flipped(rows, size))
    }

    func renderFilter(_ source: String, _ image: TestImage) throws -> (TestImage, UserShaderKernel) {
        let kernel = try UserShaderKernel(shader: UserShader.load(source: source, path: "/virtual/filter.fs"))
        let graph = FilterGraph()
        try graph.append("filter", kernel: kernel, parameters: kernel.parameters)
        return (try render(graph, image), kernel)
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
        let reference = try referenceRender(Self.noiseBody, size: size)
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

    func testNormalisedPixelReadsSampleWhereTheReferenceDoes() throws {
        // IMG_NORM_PIXEL samples at (c · size) / size in the reference (its VVSAMPLER_2DBYNORM), which is
        // not always c to the last bit; between texels the last bit can move a bilinear weight.
        let image = TestImage.noise(width: 1280, height: 720, seed: 3)
        let header = "/*{ \"ISFVSN\": \"2\", \"INPUTS\": [ { \"NAME\": \"inputImage\", \"TYPE\": \"image\" } ] }*/\n"
        let coordinate = "isf_FragNormCoord * vec2(0.7310, 0.5270) + vec2(0.0917, 0.2113)"
        let (out, kernel) = try renderFilter(header + "void main() { gl_FragColor = IMG_NORM_PIXEL(inputImage, \(coordinate)); }", image)
        XCTAssertFalse(kernel.isFused)
        let reference = try referenceRender("""
            void main() {
                vec2 normLoc = \(coordinate);
                vec2 loc = vec2(normLoc.x * _inputImage_imgSize.x, normLoc.y * _inputImage_imgSize.y);
                gl_FragColor = texture(inputImage, vec2(loc.x / _inputImage_imgSize.x, loc.y / _inputImage_imgSize.y));
            }
            """, size: image.size, input: image)
        XCTAssertEqual(differingPixels(out, reference), 0, "IMG_NORM_PIXEL as the reference samples")
        let direct = try referenceRender("void main() { gl_FragColor = texture(inputImage, \(coordinate)); }",
                                         size: image.size, input: image)
        print("IMG_NORM_PIXEL: sampling at c instead of (c · size) / size changes \(differingPixels(direct, reference)) of \(image.size.pixelCount) pixels")
    }

    // MARK: Pass targets, host values and defaults, on the corpus

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ISFCorpus")

    func corpusKernel(_ name: String) throws -> UserShaderKernel {
        try UserShaderKernel(shader: UserShader.load(path: Self.corpus.appendingPathComponent(name).path))
    }

    /// Renders `count` frames of `image` through `kernel` (frame index and time advancing) and returns the last.
    func renderFrames(_ kernel: UserShaderKernel, _ image: TestImage, count: Int) throws -> TestImage {
        let graph = FilterGraph()
        try graph.append("user", kernel: kernel, parameters: kernel.parameters)
        return try renderFrames(graph, Array(repeating: image, count: count))
    }

    func testFloatTargetsHoldThirtyTwoBitFloats() throws {
        // 1000 + x / 100: 8 bits clamp it to 1, 16-bit floats keep steps of 0.5 at 1000; 32 bits keep x / 100.
        let image = TestImage.varied(width: 96, height: 60)
        let out = try render(graph(try corpusKernel("float-target.fs")), image)
        let expected = TestImage.from(size: image.size) { x, y in
            SIMD4((Double(x) + 0.5) / 100, 0.5, self.image(image, x, y).z, 1)
        }
        assertClose(out, expected, tolerance: 1, "FLOAT target: beyond 0...1 and 32-bit precise")
    }

    func testPersistentBufferHoldsThePreviousFrame() throws {
        // h₀ = in, hₙ = hₙ₋₁ / 2 + in · (n + 1): after 5 frames 8.0625 · in, shown as h / 16 (unclamped storage).
        let image = TestImage.varied(width: 96, height: 60)
        let out = try renderFrames(try corpusKernel("persistent-decay.fs"), image, count: 5)
        var factor = 0.0
        for n in 0..<5 { factor = factor / 2 + Double(n + 1) }
        let expected = TestImage.from(size: image.size) { x, y in
            let p = image.pixel(x, y)
            return SIMD4(p.x * factor / 16, p.y * factor / 16, p.z * factor / 16, 1)
        }
        assertClose(out, expected, tolerance: 1, "five frames of a persistent float buffer")
    }

    func testPersistentIsReadWithTheSpecsSpelling() throws {
        // "persistent" is not the spec's PERSISTENT key: the target is temporary, as both reference renderers
        // read it, so each frame starts from transparent black: after 5 frames h = 5 · in, shown as h / 16.
        let image = TestImage.varied(width: 96, height: 60)
        let kernel = try corpusKernel("persistent-lowercase.fs")
        XCTAssertFalse(kernel.shader.passes[0].persistent)
        let out = try renderFrames(kernel, image, count: 5)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = image.pixel(x, y)
            return SIMD4(p.x * 5 / 16, p.y * 5 / 16, p.z * 5 / 16, 1)
        }
        assertClose(out, expected, tolerance: 1, "five frames of a temporary target")
    }

    func testInputsWithoutDefaultsHoldTheReferencesZeros() throws {
        let kernel = try corpusKernel("missing-defaults.fs")
        let image = TestImage.varied(width: 16, height: 8)
        let out = try render(graph(kernel), image)
        // centred 0 → 0.5; lowest: 0 is below MIN, so MIN 0.25; tint (0, 0, 0, 0), flag false, spot (0, 0) → 0;
        // mode: 0 is not among VALUES [2, 3] → the first, 2 → 0.5.
        let expected = TestImage.from(size: image.size) { _, _ in SIMD4(0.5, 0.25, 0, 0.5) }
        assertClose(out, expected, tolerance: 1, "defaults of inputs that declare none")
    }

    func testDateIsWholeSecondsAndTheCalendarDay() throws {
        let image = TestImage.varied(width: 16, height: 8)
        let out = try render(graph(try corpusKernel("date.fs")), image)
        let now = Calendar(identifier: .gregorian).dateComponents([.month, .day], from: Date())
        let expected = TestImage.from(size: image.size) { _, _ in
            SIMD4(0, Double(now.month ?? 0) / 12, Double(now.day ?? 0) / 31, 1)
        }
        assertClose(out, expected, tolerance: 1, "DATE (a run across midnight may see another day)")
    }

    func graph(_ kernel: UserShaderKernel) throws -> FilterGraph {
        let graph = FilterGraph()
        try graph.append("user", kernel: kernel, parameters: kernel.parameters)
        return graph
    }

    func image(_ image: TestImage, _ x: Int, _ y: Int) -> SIMD4<Double> { image.pixel(x, y) }

    // MARK: Desktop GLSL's implicit conversions

    func testImplicitConversionsAreMadeExplicitByType() {
        func translated(_ text: String, _ declared: [String: String] = [:]) -> String {
            GLSLDialect.translate(text, declared: declared)
        }
        // An int argument for a user function's float parameter (Tiny Date Time Overlay); out parameters are not wrapped.
        XCTAssertEqual(translated("ivec4 digits(float v, bool d) { return ivec4(v); }\nvoid main() { float y = 2.0; ivec4 c = digits(int(y), false); }"),
                       "ivec4 digits(float v, bool d) { return ivec4(v); }\nvoid main() { float y = 2.0; ivec4 c = digits(float(int(y)), false); }")
        XCTAssertEqual(translated("void get(float a, out float b) { b = a; }\nvoid main() { int i = 1; float f; get(i, f); }"),
                       "void get(float a, out float b) { b = a; }\nvoid main() { int i = 1; float f; get(float(i), f); }")
        // uvec2 beside vec2: in an operator and in a float built-in (Random Characters).
        XCTAssertEqual(translated("uvec2 g = uvec2(8, 16);\nvoid main() { vec2 a = RENDERSIZE / g; vec2 b = mod(a, g); float c = g.y - a.y + 1.0; }",
                                  ["RENDERSIZE": "vec2"]),
                       "uvec2 g = uvec2(8, 16);\nvoid main() { vec2 a = RENDERSIZE / vec2(g); vec2 b = mod(a, vec2(g)); float c = float(g.y) - a.y + 1.0; }")
        // int == float input (Mosaic); float input minus an int literal inside float() (Doom Screen Transition).
        XCTAssertEqual(translated("void main() { bool on = int(floor(x)) == endx; float d = float(bars - 1); }", ["endx": "float", "bars": "float", "x": "float"]),
                       "void main() { bool on = float(int(floor(x))) == endx; float d = float(bars - 1.0); }")
        // return of an int expression from a float function (Line Group); int → uint assignment.
        XCTAssertEqual(translated("float last() { return count - 1; }\nuint code(int i) { uint c = 0u; c = i; return c; }", ["count": "float"]),
                       "float last() { return count - 1.0; }\nuint code(int i) { uint c = 0u; c = uint(i); return c; }")
        // Left alone: ints with ints, unknown types (struct fields, macros), constructors, matching overloads.
        let untouched = """
            struct S { float f; };
            #define N 3
            float pick(float a) { return a; }
            int pick(int a) { return a; }
            void main() { S s; int i = 2 * N; float f = s.f * 2.0; vec2 v = vec2(i, 1); int j = pick(i); ivec2 k = ivec2(1) + 2; }
            """
        XCTAssertEqual(translated(untouched), untouched)
        // Lines are kept.
        let multiline = "float f(float x) {\n  return x;\n}\nvoid main() {\n  int i = 1;\n  float y = f(\n    i);\n}"
        XCTAssertEqual(splitLines(translated(multiline)).count, splitLines(multiline).count)
        XCTAssertTrue(translated(multiline).contains("    float(i));"), translated(multiline))
    }

    func testImplicitConversionsRenderAsDesktopGLSLWould() throws {
        let image = TestImage.varied(width: 96, height: 60)
        let out = try render(graph(try corpusKernel("implicit-conversions.fs")), image)
        let h = image.size.height
        let expected = TestImage.from(size: image.size) { x, y in
            let yUp = h - 1 - y  // ISF rows count up from the bottom
            let column = Double(x / 8) / 2, row = yUp / 4
            let lastColumn = x / 8 == 3  // int(cells - 1) with cells 4
            return SIMD4((column - column.rounded(.down)) * 2, (Double(yUp % 4) + 0.5) / 4,
                         lastColumn ? 1 : Double(row % 2) / 3, 1)
        }
        assertClose(out, expected, tolerance: 1, "implicit conversions")
    }

    func testOriginIsBottomLeftAndEdgesClamp() throws {
        // Far outside the image, up and to the left: every bilinear tap clamps to the corner texel, which in
        // ISF's bottom-left origin is the image's top-left pixel (row 0 of Prism's top-first frames).
        let image = TestImage.noise(width: 40, height: 24, seed: 5)
        let header = "/*{ \"ISFVSN\": \"2\", \"INPUTS\": [ { \"NAME\": \"inputImage\", \"TYPE\": \"image\" } ] }*/\n"
        let (out, _) = try renderFilter(header + "void main() { gl_FragColor = IMG_PIXEL(inputImage, vec2(-20.5, RENDERSIZE.y + 20.5)); }", image)
        let corner = image.pixel(0, 0)
        assertClose(out, TestImage.from(size: image.size) { _, _ in corner }, tolerance: 0, "clamped to the top-left texel")
    }

    func testTheTypePassSurvivesDeepNestingOnASmallStack() throws {
        // Loading may run off the main thread (512 KiB stacks): nesting the pass follows fits there, and
        // hostile nesting is left as written (no recursion without bound, no crash).
        @Sendable func nested(_ depth: Int) -> String {
            "float f(float x) { return x; }\nvoid main() { float y = " + String(repeating: "(", count: depth) + "f(1)"
                + String(repeating: ")", count: depth) + "; }"
        }
        let results = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let shallow = GLSLImplicitConversions.apply(nested(20))
            let deep = GLSLImplicitConversions.apply(nested(GLSLImplicitConversions.maximumNesting * 3))
            let hostile = GLSLImplicitConversions.apply(nested(100_000))
            results.withLock { $0 = [shallow, deep, hostile] }
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        let out = results.withLock { $0 }
        XCTAssertEqual(out.count, 3)
        guard out.count == 3 else { return }
        XCTAssertTrue(out[0].contains("f(1.0)"), "converted at a normal depth: \(out[0].prefix(200))")
        XCTAssertEqual(out[1], nested(GLSLImplicitConversions.maximumNesting * 3), "too deep: left as written")
        XCTAssertEqual(out[2], nested(100_000))
    }
}
