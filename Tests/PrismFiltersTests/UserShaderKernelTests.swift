import Synchronization
import Foundation
import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// User shaders as filters, rendered on the GPU and checked against CPU references.
final class UserShaderKernelTests: XCTestCase {
    /// Even sizes, so 2×2 blocks tile the frame.
    let image = TestImage.varied(width: 96, height: 60)

    func kernel(_ text: String, path: String = "/shaders/test.fs", parameters: [String: ParameterValue] = [:]) throws -> UserShaderKernel {
        let shader = try UserShader.load(source: text, path: path)
        let values = try ParameterValues(specs: UserShaderKernel.parameterSpecs(for: shader), given: parameters)
        return try UserShaderKernel(shader: shader, parameters: values)
    }

    func graph(_ kernels: [UserShaderKernel]) throws -> FilterGraph {
        let graph = FilterGraph()
        for kernel in kernels { try graph.append("user", kernel: kernel, parameters: kernel.parameters) }
        return graph
    }

    // MARK: Single pass

    static let gain = """
    /*{
        "ISFVSN": "2",
        "INPUTS": [
            { "NAME": "inputImage", "TYPE": "image" },
            { "NAME": "amount", "LABEL": "gain", "TYPE": "float", "MIN": 0.0, "MAX": 2.0, "DEFAULT": 1.0 }
        ]
    }*/
    // A helper and a global: both must survive being fused next to another instance of this shader.
    const vec3 weights = vec3(0.5, 1.0, 0.25);
    vec3 scaled(vec3 c) { return c * weights * amount; }
    void main() {
        vec4 c = IMG_THIS_PIXEL(inputImage);
        gl_FragColor = vec4(scaled(c.rgb), gl_FragCoord.y / RENDERSIZE.y);
    }
    """

    func testFloatParameterFilterFusesAndMatchesTheCPU() throws {
        let a = try kernel(Self.gain, parameters: ["amount": .float(0.8)])
        let b = try kernel(Self.gain, parameters: ["amount": .float(1.5)])
        let chained = try graph([a, b])
        let out = try render(chained, image)
        XCTAssertTrue(a.isFused && b.isFused, "a point-wise ISF filter becomes an expression")
        let h = Double(image.size.height)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            // Two gains with 8-bit rounding only at the end (fused); alpha is ISF's y, bottom = 0.
            return SIMD4(p.x * 0.25 * 1.2, p.y * 1.2, p.z * 0.0625 * 1.2, (h - (Double(y) + 0.5)) / h)
        }
        assertClose(out, expected, tolerance: 1, "two fused gains")
        // One pass from the uploaded frame straight to the sink, like the built-ins.
        let passes = try SharedGPU.get().perform {
            try GraphRenderer(graph: chained, sourceFormat: .rgba, sourceSize: self.image.size, sinks: [.rgba]).passCount
        }
        XCTAssertEqual(passes, 1)
    }

    func testNeighbourReadsRunAsPassesInISFOrientation() throws {
        // ISF's y runs up: the pixel one row "above" is the previous row in memory.
        let shift = try kernel("""
        /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ] }*/
        void main() {
            gl_FragColor = IMG_PIXEL(inputImage, gl_FragCoord.xy + vec2(2.0, 1.0));
        }
        """)
        XCTAssertFalse(shift.isFused)
        let out = try render(graph([shift]), image)
        let expected = TestImage.from(size: image.size) { x, y in self.image.pixel(x + 2, y - 1) }
        assertClose(out, expected, tolerance: 0, "shifted")
    }

    // MARK: Passes

    func testMultiPassBlockAverageWithAHalfSizeFloatTarget() throws {
        let blocks = try kernel("""
        /*{
            "ISFVSN": "2",
            "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
            "PASSES": [
                { "TARGET": "small", "WIDTH": "$WIDTH / 2.0", "HEIGHT": "$HEIGHT / 2.0", "FLOAT": true },
                { }
            ]
        }*/
        void main() {
            if (PASSINDEX == 0) {
                // At a half-size pixel centre the input is sampled between four pixels: their mean.
                gl_FragColor = IMG_NORM_PIXEL(inputImage, isf_FragNormCoord);
            } else {
                gl_FragColor = texelFetch(small, ivec2(gl_FragCoord.xy) / 2, 0);
            }
        }
        """)
        let out = try render(graph([blocks]), image)
        let expected = TestImage.from(size: image.size) { x, y in
            let bx = x / 2 * 2, by = y / 2 * 2
            return (self.image.pixel(bx, by) + self.image.pixel(bx + 1, by) + self.image.pixel(bx, by + 1)
                    + self.image.pixel(bx + 1, by + 1)) / 4
        }
        assertClose(out, expected, tolerance: 1, "2×2 means")
    }

    static let accumulator = """
    /*{
        "ISFVSN": "2",
        "INPUTS": [
            { "NAME": "inputImage", "TYPE": "image" },
            { "NAME": "rate", "TYPE": "float", "MIN": 0.0, "MAX": 1.0, "DEFAULT": 0.1 },
            { "NAME": "reset", "TYPE": "event" }
        ],
        "PASSES": [ { "TARGET": "sum", "PERSISTENT": true, "FLOAT": true }, { } ]
    }*/
    void main() {
        if (PASSINDEX == 0) {
            vec4 previous = reset ? vec4(0.0) : IMG_THIS_PIXEL(sum);
            gl_FragColor = previous + rate * vec4(IMG_THIS_PIXEL(inputImage).rgb, 1.0);
        } else {
            gl_FragColor = IMG_THIS_PIXEL(sum);
        }
    }
    """

    func testPersistentBufferAccumulatesAcrossFrames() throws {
        let accumulate = try kernel(Self.accumulator)
        let g = try graph([accumulate])
        // Frames 0…4 add 0.1 × input each: 0.5 × input, alpha 0.5.
        let out = try renderFrames(g, Array(repeating: image, count: 5))
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(p.x * 0.5, p.y * 0.5, p.z * 0.5, 0.5)
        }
        assertClose(out, expected, tolerance: 1, "five frames")

        // An event is true for one frame only: reset at frame 2, then frames 2, 3 add up to 0.2.
        let out2 = try renderFrames(g, Array(repeating: image, count: 4)) { frame in
            if frame == 2 { try g.setParameter(g.nodes[0].id, "reset", .bool(true)) }
        }
        let expected2 = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(p.x * 0.2, p.y * 0.2, p.z * 0.2, 0.2)
        }
        assertClose(out2, expected2, tolerance: 1, "reset by an event")
    }

    func testImportedImage() throws {
        // A 2×2 image: red, green / blue, white, handed over by the installed reader (the tool's reads
        // files with libavcodec; see ImportedImageTests in PrismTests). Each quadrant of the output shows
        // one of its pixels.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("isf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = """
        /*{
            "ISFVSN": "2",
            "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
            "IMPORTED": { "quad": { "PATH": "quad.png" } }
        }*/
        void main() {
            vec2 cell = floor(isf_FragNormCoord * 2.0);
            gl_FragColor = IMG_NORM_PIXEL(quad, (cell + 0.5) / IMG_SIZE(quad)) + 0.0 * IMG_THIS_PIXEL(inputImage);
        }
        """
        try text.write(to: directory.appendingPathComponent("quad.fs"), atomically: true, encoding: .utf8)
        let asked = Mutex<[String]>([])
        let binder = GraphBinder(imageLoader: { path in
            asked.withLock { $0.append(path) }
            return (Size(width: 2, height: 2), [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255])
        })
        let out = try render(binder.bind("\"\(directory.path)/quad.fs\""), image)
        XCTAssertEqual(asked.withLock { $0 }, [directory.appendingPathComponent("quad.png").path])
        let w = image.size.width, h = image.size.height
        let colors: [SIMD4<Double>] = [SIMD4(1, 0, 0, 1), SIMD4(0, 1, 0, 1), SIMD4(0, 0, 1, 1), SIMD4(1, 1, 1, 1)]
        let expected = TestImage.from(size: image.size) { x, y in colors[(y < h / 2 ? 0 : 2) + (x < w / 2 ? 0 : 1)] }
        assertClose(out, expected, tolerance: 0, "quadrants")

        // Without a reader, preparing the shader fails with one line naming the image.
        XCTAssertThrowsError(try render(GraphBinder().bind("\"\(directory.path)/quad.fs\""), image)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("quad.png") && text.contains("no image reader"), text)
        }
    }

    // MARK: Every input type, through the graph

    static let everyType = """
    /*{
        "ISFVSN": "2",
        "INPUTS": [
            { "NAME": "inputImage", "TYPE": "image" },
            { "NAME": "other", "TYPE": "image" },
            { "NAME": "amount", "TYPE": "float", "MIN": 0.0, "MAX": 1.0, "DEFAULT": 0.5 },
            { "NAME": "mode", "TYPE": "long", "VALUES": [2, 4, 8], "LABELS": ["Soft", "Hard", "Max"], "DEFAULT": 4 },
            { "NAME": "count", "TYPE": "long", "MIN": 0, "MAX": 10, "DEFAULT": 1 },
            { "NAME": "flag", "TYPE": "bool", "DEFAULT": false },
            { "NAME": "pulse", "TYPE": "event" },
            { "NAME": "tint", "TYPE": "color", "DEFAULT": [0.0, 0.0, 0.0, 1.0] },
            { "NAME": "where", "TYPE": "point2D", "DEFAULT": [0.0, 0.0] }
        ]
    }*/
    void main() {
        float column = floor(isf_FragNormCoord.x * 4.0);
        vec4 scalars = vec4(amount, float(mode) / 10.0, float(count) / 10.0, 1.0);
        vec4 flags = vec4(where / 100.0, flag ? 1.0 : 0.0, pulse ? 1.0 : 0.5);
        vec4 picture = IMG_THIS_PIXEL(other) * IMG_THIS_PIXEL(inputImage).a;
        gl_FragColor = column < 1.0 ? scalars : column < 2.0 ? tint : column < 3.0 ? flags : picture;
    }
    """

    func testEveryInputTypeThroughTheGraph() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("isf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("types.fs").path
        try Self.everyType.write(toFile: path, atomically: true, encoding: .utf8)

        let text = "[in]invert[neg]; [in][neg]\"\(path)\"(amount=0.25, mode=Max, count=3, flag=true, pulse=true, tint=#ff8000, where=30:40)"
        let g = try GraphBinder().bind(text)
        let node = try XCTUnwrap(g.nodes.last)
        XCTAssertEqual(node.name, "types.fs")
        XCTAssertEqual(node.kernel.inputCount, 2, "inputImage and the extra image input are graph streams")
        let specs = try XCTUnwrap(node.parameters?.specs)
        XCTAssertEqual(specs.map(\.kind), [.float(0...1), .choice(["Soft", "Hard", "Max"]), .int(0...10), .bool, .bool, .color, .point])
        XCTAssertEqual(node.parameters?["mode"], .choice("Max"))

        let out = try render(g, image)
        let w = image.size.width
        let expected = TestImage.from(size: image.size) { x, y in
            switch x * 4 / w {
            case 0: return SIMD4(0.25, 0.8, 0.3, 1)
            case 1: return SIMD4(1, 128.0 / 255, 0, 1)
            case 2: return SIMD4(0.3, 0.4, 1, 1)
            default:
                let p = self.image.pixel(x, y)
                return SIMD4(1 - p.x, 1 - p.y, 1 - p.z, p.w) * p.w
            }
        }
        // Column edges fall between pixels only when the width divides by 4.
        XCTAssertEqual(w % 4, 0)
        assertClose(out, expected, tolerance: 1, "every type")

        // Defaults: the event is false, mode is Hard (4).
        let defaults = try render(GraphBinder().bind("[in]invert[neg]; [in][neg]\"\(path)\""), image)
        XCTAssertEqual(defaults.rgba[1], UInt8((0.4 * 255).rounded()))
        let flagsPixel = (w / 2 + 1) * 4
        XCTAssertLessThanOrEqual(abs(Int(defaults.rgba[flagsPixel + 3]) - 128), 1, "an event not set is false")
    }

    func testShaderArgumentsAreTypedAndCheckedAtTheirColumn() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("isf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("my.fs").path
        try Self.gain.write(toFile: path, atomically: true, encoding: .utf8)
        let quoted = "\"\(path)\""

        let g = try GraphBinder().bind("\(quoted)(amount=0.3)")
        XCTAssertEqual(g.nodes[0].parameters?["amount"], .float(0.3))
        XCTAssertEqual(try GraphBinder().bind("\(quoted)(1.5)").nodes[0].parameters?["amount"], .float(1.5), "positional")

        func failure(_ text: String) -> (String, Int)? {
            do { _ = try GraphBinder().bind(text); return nil } catch let error as GraphTextError {
                return (error.description, error.column)
            } catch { XCTFail("\(error)"); return nil }
        }
        let range = try XCTUnwrap(failure("\(quoted)(amount=3)"))
        XCTAssertTrue(range.0.contains("amount must be in 0...2"), range.0)
        XCTAssertEqual(range.1, quoted.count + 9, "at the value")
        let unknown = try XCTUnwrap(failure("\(quoted)(level=1)"))
        XCTAssertTrue(unknown.0.contains("has no parameter 'level'") && unknown.0.contains("amount"), unknown.0)
        let type = try XCTUnwrap(failure("\(quoted)(amount=#ff0000)"))
        XCTAssertTrue(type.0.contains("amount takes a float"), type.0)
        // A shader that does not load reports the shader's own position.
        XCTAssertThrowsError(try GraphBinder().bind("\"\(directory.path)/missing.fs\"")) { error in
            XCTAssertTrue(error is ShaderLoadError, "\(error)")
        }
    }

    // MARK: ShaderToy, plain GLSL

    func testShaderToyMainImage() throws {
        let shader = try UserShader.load(source: """
        // Swaps red and blue; alpha from iTime.
        void mainImage(out vec4 fragColor, in vec2 fragCoord) {
            vec2 uv = fragCoord / iResolution.xy;
            fragColor = vec4(texture(iChannel0, uv).bgr, iTime / 10.0);
        }
        """, path: "/toy/swap.glsl")
        XCTAssertEqual(shader.kind, .shadertoy)
        let g = FilterGraph()
        try g.append("swap", kernel: UserShaderKernel(shader: shader))
        let (rgba, size) = try renderStill(g, rgba: image.rgba, size: image.size, frame: FrameContext(time: 5))
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(p.z, p.y, p.x, 0.5)
        }
        assertClose(TestImage(size: size, rgba: rgba), expected, tolerance: 1, "shadertoy")
    }

    func testPlainGLSLWithParam() throws {
        let shader = try UserShader.load(source: """
        #version 300 es
        precision highp float;
        uniform sampler2D inputImage;
        uniform vec2 _inputImage_imgSize;
        uniform float level; // @param min=0 max=1 default=0.25
        out vec4 color;
        void main() {
            color = vec4(texture(inputImage, gl_FragCoord.xy / _inputImage_imgSize).rgb, level);
        }
        """, path: "/glsl/level.frag")
        let k = try UserShaderKernel(shader: shader)
        let g = FilterGraph()
        try g.append("level", kernel: k, parameters: k.parameters)
        let out = try render(g, image)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(p.x, p.y, p.z, 0.25)
        }
        assertClose(out, expected, tolerance: 1, "glsl")
    }

    // MARK: Errors

    func testCompileErrorPointsAtTheAuthorsLine() throws {
        let text = """
        /*{
            "ISFVSN": "2",
            "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ]
        }*/

        void main() {
            vec4 c = IMG_THIS_PIXEL(inputImage);
            float x = undefinedThing * 2.0;
            gl_FragColor = c * x;
        }
        """
        let g = try graph([kernel(text, path: "/work/fx/broken.fs")])
        XCTAssertThrowsError(try render(g, image)) { error in
            guard let error = error as? UserShaderCompileError else { return XCTFail("\(error)") }
            let first = error.errors.first
            XCTAssertEqual(first?.file, "/work/fx/broken.fs")
            XCTAssertEqual(first?.line, 8)
            // The line was not edited by translation, so the compiler's column is the author's.
            let column = try? XCTUnwrap(first?.column)
            XCTAssertTrue((5...30).contains(column ?? 0), "\(String(describing: column))")
            XCTAssertTrue(error.description.hasPrefix("/work/fx/broken.fs:8:\(column ?? 0): "), error.description)
            XCTAssertTrue(error.description.contains("undefinedThing"), error.description)
            XCTAssertFalse(error.description.contains("\n"))
        }
    }

    // MARK: Built-ins from Shaders/

    func testBuiltinsComeFromTheShadersFolderAndStillFuse() throws {
        for name in ["invert", "color"] {
            let (kernel, _) = try XCTUnwrap(BuiltinFilters.named(name)).instantiate()
            let user = try XCTUnwrap(kernel as? UserShaderKernel, name)
            XCTAssertTrue(user.isFused, name)
            XCTAssertTrue(user.shader.path.hasSuffix("Shaders/\(name).fs"), user.shader.path)
        }
        XCTAssertEqual(BuiltinFilters.named("color")?.parameters.map(\.name), ["brightness", "contrast", "saturation"])
        XCTAssertEqual(BuiltinFilters.named("color")?.parameters.map(\.kind), [.float(-1...1), .float(0...4), .float(0...4)])

        // Same output and the same passes as the hand-written GLSL kernels they replace.
        let fromFiles = try chain([("invert", [:]), ("color", ["contrast": .float(1.3), "saturation": .float(0.6)]), ("mono", [:])])
        let handWritten = FilterGraph()
        try handWritten.append("invert", kernel: PointwiseKernel(body: "return vec4(1.0 - c.rgb, c.a);"))
        let colorValues = try ParameterValues(specs: BuiltinFilters.named("color")!.parameters,
                                              given: ["contrast": .float(1.3), "saturation": .float(0.6)])
        try handWritten.append("color", kernel: PointwiseKernel(
            uniforms: "uniform float $brightness;\nuniform float $contrast;\nuniform float $saturation;\n",
            body: """
                float luma = dot(c.rgb, vec3(0.2126, 0.7152, 0.0722));
                vec3 rgb = mix(vec3(luma), c.rgb, $saturation);
                rgb = (rgb - 0.5) * $contrast + 0.5 + $brightness;
                return vec4(rgb, c.a);
                """, parameters: colorValues) { u, v in
                    u.set("$brightness", Float(v.double("brightness")))
                    u.set("$contrast", Float(v.double("contrast")))
                    u.set("$saturation", Float(v.double("saturation")))
                })
        try handWritten.append("mono", kernel: fromFiles.nodes[2].kernel)
        assertClose(try render(fromFiles, image), try render(handWritten, image), tolerance: 0, "ISF built-ins vs GLSL kernels")
        let counts = try SharedGPU.get().perform {
            (try GraphRenderer(graph: fromFiles, sourceFormat: .nv12, sourceSize: Size(width: 64, height: 48), sinks: [.nv12]).passCount,
             try GraphRenderer(graph: handWritten, sourceFormat: .nv12, sourceSize: Size(width: 64, height: 48), sinks: [.nv12]).passCount)
        }
        XCTAssertEqual(counts.0, counts.1)
    }
}
