import Foundation
import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// What ISF hosts give shaders beyond the fragment stage (vertex shaders, host-declared names, precision,
/// desktop GLSL habits, optional images), each on a small ISF file of `ISFCorpus/` rendered on the GPU and
/// compared with a CPU reference.
final class ISFParityTests: XCTestCase {
    let image = TestImage.varied(width: 96, height: 60)

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ISFCorpus")

    func corpusKernel(_ name: String) throws -> UserShaderKernel {
        let shader = try UserShader.load(path: Self.corpus.appendingPathComponent(name).path)
        return try UserShaderKernel(shader: shader)
    }

    func graph(_ kernel: UserShaderKernel) throws -> FilterGraph {
        let graph = FilterGraph()
        try graph.append("user", kernel: kernel, parameters: kernel.parameters)
        return graph
    }

    // MARK: Vertex shaders

    func testVertexShaderVaryingsReachTheFragmentShader() throws {
        let kernel = try corpusKernel("varying-shift.fs")
        XCTAssertNotNil(kernel.shader.passes[0].vertex, "varying-shift.vs is loaded beside varying-shift.fs")
        XCTAssertTrue(kernel.shader.dependencies.contains { $0.hasSuffix("varying-shift.vs") }, "the .vs is watched")
        XCTAssertFalse(kernel.isFused, "a shader with its own vertex stage runs as a pass")
        let out = try render(graph(kernel), image)
        // ISF's y runs up: one pixel up is the previous row in memory.
        let expected = TestImage.from(size: image.size) { x, y in self.image.pixel(x + 2, y - 1) }
        assertClose(out, expected, tolerance: 1, "shifted by the vertex shader's varying")
    }

    func testMovedCornersAndTheInterpolatedNormalisedCoordinate() throws {
        // The quad shrinks to the middle half: outside it nothing is drawn (transparent black), inside
        // isf_FragNormCoord runs 0...1 across the quad — a varying, not gl_FragCoord / RENDERSIZE.
        let out = try render(graph(try corpusKernel("shrunk-quad.fs")), image)
        let w = Double(image.size.width), h = Double(image.size.height)
        let expected = TestImage.from(size: image.size) { x, y in
            let u = (Double(x) + 0.5 - w / 4) / (w / 2), v = (h - Double(y) - 0.5 - h / 4) / (h / 2)
            guard (0...1).contains(u), (0...1).contains(v) else { return SIMD4(0, 0, 0, 0) }
            return SIMD4(u, v, 0, 1)
        }
        assertClose(out, expected, tolerance: 1, "shrunk quad")
    }

    func testVertexShaderErrorsPointAtTheVSFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("isf-vs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try String(contentsOf: Self.corpus.appendingPathComponent("shrunk-quad.fs"), encoding: .utf8)
            .write(to: directory.appendingPathComponent("bad.fs"), atomically: true, encoding: .utf8)
        try "void main() {\n    isf_vertShaderInit();\n    gl_Position.xy = undefinedThing;\n}\n"
            .write(to: directory.appendingPathComponent("bad.vs"), atomically: true, encoding: .utf8)
        let kernel = try UserShaderKernel(shader: UserShader.load(path: directory.appendingPathComponent("bad.fs").path))
        XCTAssertThrowsError(try SharedGPU.get().perform { try kernel.validate() }) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("bad.vs:3"), text)
        }
    }

    // MARK: Names hosts declare

    func testImageRectAndFlip() throws {
        let kernel = try corpusKernel("image-rect.fs")
        XCTAssertTrue(kernel.isFused)
        let out = try render(graph(kernel), image)
        let expected = TestImage.from(size: image.size) { _, _ in SIMD4(96.0 / 255, 60.0 / 255, 0, 1) }
        assertClose(out, expected, tolerance: 1, "_inputImage_imgRect = (0, 0, width, height), flip false")
        // The same names when the shader runs as a pass (a neighbour read keeps it from fusing).
        let text = try String(contentsOf: Self.corpus.appendingPathComponent("image-rect.fs"), encoding: .utf8)
            .replacingOccurrences(of: "IMG_THIS_PIXEL(inputImage)", with: "IMG_PIXEL(inputImage, gl_FragCoord.xy + 1.0)")
        let pass = try UserShaderKernel(shader: UserShader.load(source: text, path: "/shaders/image-rect-pass.fs"))
        XCTAssertFalse(pass.isFused)
        assertClose(try render(graph(pass), image), expected, tolerance: 1, "as a pass")
    }
}

extension ISFParityTests {
    // MARK: Precision

    func testMediumPrecisionRunsAtHighPrecisionLikeDesktopHosts() throws {
        let kernel = try corpusKernel("mediump-noise.fs")
        let out = try render(graph(kernel), image)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(0.3, p.y, p.z, 1)
        }
        // 0.3 needs about 11 bits above 2049: at 16 bits the red channel is 0 or 0.5.
        assertClose(out, expected, tolerance: 2, "fract(2049.3) at high precision")
    }
}

extension ISFParityTests {
    // MARK: Optional image inputs

    func testUnconnectedSecondImageReadsAsTransparentBlack() throws {
        let path = Self.corpus.appendingPathComponent("two-images.fs").path
        let bare = try GraphBinder().bind("\"\(path)\"")
        let node = try XCTUnwrap(bare.nodes.last)
        XCTAssertEqual(node.kernel.inputCount, 1, "the second image is left unconnected")
        XCTAssertEqual((node.kernel as? UserShaderKernel)?.unconnectedImages, ["overlay"])
        let out = try render(bare, image)
        let w = Double(image.size.width)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(p.x, p.y, p.z, w / 255)
        }
        assertClose(out, expected, tolerance: 1, "input + nothing; the empty image has the input's size")

        // Connected, the second stream is read (the input's negative: every channel sums to 1).
        let connected = try render(GraphBinder().bind("[in]invert[neg]; [in][neg]\"\(path)\""), image)
        let sum = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(min(p.x + (1 - p.x) * p.w, 1), min(p.y + (1 - p.y) * p.w, 1), min(p.z + (1 - p.z) * p.w, 1), w / 255)
        }
        assertClose(connected, sum, tolerance: 2, "input + its negative")
        XCTAssertTrue(try UserShader.load(path: path).summary.contains("unconnected it reads as transparent black"))
    }
}

extension ISFParityTests {
    // MARK: Desktop GLSL

    func testDesktopDialectIsTranslated() throws {
        let shader = try UserShader.load(path: Self.corpus.appendingPathComponent("desktop-dialect.fs").path)
        for level in [0.5, 0.8] {
            let values = try ParameterValues(specs: UserShaderKernel.parameterSpecs(for: shader), given: ["level": .float(level)])
            let out = try render(graph(UserShaderKernel(shader: shader, parameters: values)), image)
            let w = Double(image.size.width), h = Double(image.size.height)
            let expected = TestImage.from(size: image.size) { x, y in
                // sign(p, (0,0), (1,1)) = p.y - p.x in ISF's coordinates (y up).
                let u = (Double(x) + 0.5) / w, v = (h - Double(y) - 0.5) / h
                return SIMD4(v > u ? 1 : 0, level / 2, self.image.pixel(x, y).z, 1)
            }
            assertClose(out, expected, tolerance: 1, "dialect at level \(level)")
        }
    }

    func testDialectTranslationKeepsLinesAndLeavesBuiltinCopiesAlone() {
        let text = """
        float g = TIME * 2.0;
        const float k = 2.0;
        float h = k * 3.0;
        #ifndef GL_ES
        float distance(vec2 a, vec2 b) { return length(a - b); }
        #endif
        void main() {
            float x = distance(vec2(0.0), vec2(1.0));
        }
        """
        let out = GLSLDialect.translate(text)
        XCTAssertEqual(splitLines(out).count, splitLines(text).count)
        XCTAssertTrue(out.contains("float g;"), out)
        XCTAssertTrue(out.contains("float h = k * 3.0;"), "a constant initialiser stays: \(out)")
        XCTAssertTrue(out.contains("void main() { g = TIME * 2.0;"), out)
        XCTAssertFalse(out.contains("isf_distance"), "a guarded copy of a built-in is not renamed: \(out)")
        // Int literals given to float variables; ints, shifts and members left alone.
        let literals = GLSLDialect.translate("float f; int i; void main() { f = 1; f += 2; i = 3; if (f >= 4 && i < 5) {} i <<= 1; s.f = 6; }")
        XCTAssertEqual(literals, "float f; int i; void main() { f = 1.0; f += 2.0; i = 3; if (f >= 4.0 && i < 5) {} i <<= 1; s.f = 6; }")
        XCTAssertEqual(GLSLDialect.translate("float f(float x) { if (x < 0.0) return 0; return x; }\nint g() { return 0; }"),
                       "float f(float x) { if (x < 0.0) return 0.0; return x; }\nint g() { return 0; }")
        // Unguarded, a definition with the built-in's own arity is the author's: renamed with its calls.
        let round = GLSLDialect.translate("float round(float x) { return floor(x + 0.5); }\nvoid main() { float y = round(1.4); }")
        XCTAssertEqual(round, "float isf_round(float x) { return floor(x + 0.5); }\nvoid main() { float y = isf_round(1.4); }")
    }
}

extension ISFParityTests {
    // MARK: Paths in the graph

    func testAPathWithASpaceAsksForQuotes() throws {
        for text in ["/shaders/my look.fs, mono", "invert, my shaders/look.fs", "my look.fs"] {
            XCTAssertThrowsError(try GraphParser.parse(text), text) { error in
                XCTAssertTrue("\(error)".contains("quote file paths with spaces"), "\(text): \(error)")
            }
        }
        XCTAssertThrowsError(try GraphParser.parse("invert mono")) { error in
            XCTAssertFalse("\(error)".contains("quote"), "two filter names: no advice about paths: \(error)")
        }
        XCTAssertNoThrow(try GraphParser.parse("\"/shaders/my look.fs\", mono"))
    }
}

extension ISFParityTests {
    func testAVertexShaderBesideANonISFShaderIsRefusedNotIgnored() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("isf-vs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fs = directory.appendingPathComponent("toy.fs").path
        try "void mainImage(out vec4 c, in vec2 p) { c = vec4(1.0); }\n".write(toFile: fs, atomically: true, encoding: .utf8)
        XCTAssertNoThrow(try UserShader.load(path: fs), "no .vs: a ShaderToy shader loads")
        try "void main() { gl_Position = vec4(0.0); }\n"
            .write(to: directory.appendingPathComponent("toy.vs"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try UserShader.load(path: fs)) { error in
            XCTAssertTrue("\(error)".contains("toy.vs is a vertex shader"), "\(error)")
        }
    }
}

extension ISFParityTests {
    func testIntAndUintMixing() throws {
        let out = try render(graph(try corpusKernel("unsigned-mix.fs")), image)
        let h = image.size.height
        let expected = TestImage.from(size: image.size) { x, y in
            let column = x / 8, row = (h - 1 - y) / 8  // ISF rows count up from the bottom
            return SIMD4(Double(column % 2), Double(row % 2), column * 2 > 4 ? 1 : 0, 1)
        }
        assertClose(out, expected, tolerance: 0, "uint stripes")
    }
}
