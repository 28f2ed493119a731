import XCTest
@testable import PrismFilters

/// Writes generated sources to $PRISM_DUMP_SHADERS (when set) so they can be checked with
/// glslangValidator by hand; the tests never need it.
private func dump(_ name: String, _ program: ShaderProgramSource) {
    guard let directory = ProcessInfo.processInfo.environment["PRISM_DUMP_SHADERS"] else { return }
    try? program.source.write(toFile: directory + "/" + name + ".frag", atomically: true, encoding: .utf8)
}

final class ISFTests: XCTestCase {
    static let simpleFilter = """
    /*{
    \t"DESCRIPTION": "demonstrates the use of float-type inputs",
    \t"CREDIT": "by Prism tests",
    \t"ISFVSN": "2.0",
    \t"CATEGORIES": [ "TEST-GLSL FX" ],
    \t"INPUTS": [
    \t\t{ "NAME": "inputImage", "TYPE": "image" },
    \t\t{ "NAME": "level", "TYPE": "float", "DEFAULT": 0.5, "MIN": 0.0, "MAX": 1.0, "IDENTITY": 0.0 },
    \t]
    }*/

    void main()
    {
    \tvec4 srcPixel = IMG_THIS_PIXEL(inputImage);
    \tfloat luma = (srcPixel.r + srcPixel.g + srcPixel.b) / 3.0;
    \tvec4 dstPixel = (luma > level) ? srcPixel : texture2D(inputImage, isf_FragNormCoord * 0.5);
    \tgl_FragColor = dstPixel;
    }
    """

    func testSimpleFilter() throws {
        let shader = try UserShader.load(source: Self.simpleFilter, path: "/shaders/level.fs")
        XCTAssertEqual(shader.kind, .isf)
        let isf = try XCTUnwrap(shader.isf)
        XCTAssertEqual(isf.description, "demonstrates the use of float-type inputs")
        XCTAssertEqual(isf.credit, "by Prism tests")
        XCTAssertEqual(isf.isfVersion, "2.0")
        XCTAssertEqual(isf.categories, ["TEST-GLSL FX"])
        XCTAssertTrue(isf.isFilter)
        XCTAssertEqual(shader.inputImage, "inputImage")
        XCTAssertEqual(shader.parameters, [ShaderParameter(name: "level", type: .float, defaultValue: .float(0.5),
                                                           minimum: .float(0), maximum: .float(1), identity: .float(0))])
        XCTAssertEqual(shader.passes.count, 1)
        XCTAssertNil(shader.passes[0].target)
        XCTAssertEqual(shader.dependencies, ["/shaders/level.fs"])

        let program = shader.passes[0].program
        dump("simple", program)
        let source = program.source
        XCTAssertTrue(source.hasPrefix("#version 300 es\nprecision highp float;\n"))
        for banned in ["texture2D", "gl_FragColor", "varying", "IMG_"] {
            XCTAssertFalse(source.contains(banned), "\(banned) left in:\n\(source)")
        }
        for declaration in ["uniform float TIME;", "uniform float TIMEDELTA;", "uniform int FRAMEINDEX;", "uniform vec2 RENDERSIZE;",
                            "uniform int PASSINDEX;", "uniform vec4 DATE;", "uniform float level;",
                            "uniform sampler2D inputImage;", "uniform vec2 _inputImage_imgSize;", "out vec4 isf_FragColor;"] {
            XCTAssertTrue(source.contains(declaration), "missing \(declaration)")
        }
        XCTAssertTrue(source.contains("vec4 srcPixel = texture(inputImage, isf_FragNormCoord);"))
        XCTAssertTrue(source.contains("isf_FragColor = dstPixel;"))

        // Line mapping: the gl_FragColor line is line 17 of the author's file.
        let generatedLines = source.components(separatedBy: "\n")
        let generated = try XCTUnwrap(generatedLines.firstIndex { $0.contains("isf_FragColor = dstPixel") }) + 1
        let location = try XCTUnwrap(program.lineMap.location(ofGeneratedLine: generated, column: 3))
        XCTAssertEqual(location.file, "/shaders/level.fs")
        XCTAssertEqual(location.line, 17)
        XCTAssertNil(location.column, "the line was edited, so the column is not the author's")
        // An untouched line keeps its column.
        let luma = try XCTUnwrap(generatedLines.firstIndex { $0.contains("float luma") }) + 1
        XCTAssertEqual(program.lineMap.location(ofGeneratedLine: luma, column: 8), ShaderSourceLocation(file: "/shaders/level.fs", line: 15, column: 8))
        XCTAssertNil(program.lineMap.location(ofGeneratedLine: 1))
    }

    func testEveryInputType() throws {
        let text = """
        /*{
            "ISFVSN": "2",
            "INPUTS": [
                { "NAME": "inputImage", "TYPE": "image" },
                { "NAME": "flash", "TYPE": "event" },
                { "NAME": "invert", "TYPE": "bool", "DEFAULT": 1.0 },
                { "NAME": "mode", "TYPE": "long", "VALUES": [0, 1, 2], "LABELS": ["Soft", "Hard", "Linear"], "DEFAULT": 1 },
                { "NAME": "amount", "TYPE": "float", "DEFAULT": 0.25, "MIN": 0, "MAX": 2 },
                { "NAME": "center", "TYPE": "point2D", "DEFAULT": [0.5, 0.5], "MIN": [0, 0], "MAX": [1, 1], "LABEL": "Centre" },
                { "NAME": "tint", "TYPE": "color", "DEFAULT": [1.0, 0.5, 0.0] },
                { "NAME": "overlay", "TYPE": "image" }
            ]
        }*/
        void main() {
            vec4 a = IMG_NORM_PIXEL(overlay, center);
            vec4 b = IMG_PIXEL(inputImage, gl_FragCoord.xy + vec2(1.0, 0.0));
            vec2 s = IMG_SIZE(overlay);
            gl_FragColor = (flash || invert) ? tint : mix(a, b, amount) + float(mode) * s.x;
        }
        """
        let shader = try UserShader.load(source: text, path: "types.fs")
        let p = Dictionary(uniqueKeysWithValues: shader.parameters.map { ($0.name, $0) })
        XCTAssertEqual(shader.parameters.map(\.name), ["flash", "invert", "mode", "amount", "center", "tint"])
        XCTAssertEqual(p["flash"]?.type, .event)
        XCTAssertEqual(p["invert"]?.defaultValue, .bool(true))
        XCTAssertEqual(p["mode"]?.values, [0, 1, 2])
        XCTAssertEqual(p["mode"]?.labels, ["Soft", "Hard", "Linear"])
        XCTAssertEqual(p["mode"]?.defaultValue, .int(1))
        XCTAssertEqual(p["amount"]?.maximum, .float(2))
        XCTAssertEqual(p["center"]?.defaultValue, .vector([0.5, 0.5]))
        XCTAssertEqual(p["center"]?.label, "Centre")
        XCTAssertEqual(p["tint"]?.defaultValue, .vector([1, 0.5, 0, 1]))
        XCTAssertEqual(shader.extraImageInputs, ["overlay"])
        let source = shader.passes[0].program.source
        dump("types", shader.passes[0].program)
        for declaration in ["uniform bool flash;", "uniform bool invert;", "uniform int mode;", "uniform float amount;",
                            "uniform vec2 center;", "uniform vec4 tint;", "uniform sampler2D overlay;", "uniform vec2 _overlay_imgSize;"] {
            XCTAssertTrue(source.contains(declaration), "missing \(declaration)")
        }
        XCTAssertTrue(source.contains("vec4 a = texture(overlay, ( center) * _overlay_imgSize / _overlay_imgSize);"), source)
        XCTAssertTrue(source.contains("vec4 b = texture(inputImage, ( gl_FragCoord.xy + vec2(1.0, 0.0)) / _inputImage_imgSize);"), source)
        XCTAssertTrue(source.contains("vec2 s = _overlay_imgSize;"))
    }

    func testMultiPassWithPersistentBufferAndSizes() throws {
        let text = """
        /*{
            "DESCRIPTION": "blur into a small persistent buffer, then mix",
            "ISFVSN": "2",
            "INPUTS": [
                { "NAME": "inputImage", "TYPE": "image" },
                { "NAME": "scale", "TYPE": "float", "DEFAULT": 4, "MIN": 1, "MAX": 16 },
                { "NAME": "taps", "TYPE": "long", "VALUES": [1, 2], "DEFAULT": 1 }
            ],
            "PASSES": [
                { "TARGET": "small", "WIDTH": "floor($WIDTH / $scale)", "HEIGHT": "max($HEIGHT/4.0, 1.0)", "FLOAT": true },
                { "TARGET": "trail", "PERSISTENT": true, "WIDTH": 320, "HEIGHT": "$HEIGHT * (taps + 1) - 2" },
                { }
            ]
        }*/
        void main() {
            if (PASSINDEX == 0) {
                gl_FragColor = IMG_THIS_PIXEL(inputImage);
            } else if (PASSINDEX == 1) {
                gl_FragColor = mix(IMG_THIS_NORM_PIXEL(trail), IMG_NORM_PIXEL(small, isf_FragNormCoord), 0.1);
            } else {
                gl_FragColor = IMG_THIS_PIXEL(trail);
            }
        }
        """
        let shader = try UserShader.load(source: text, path: "/s/trail.fs")
        XCTAssertEqual(shader.passes.map(\.target), ["small", "trail", nil])
        XCTAssertEqual(shader.passes.map(\.persistent), [false, true, false])
        XCTAssertEqual(shader.passes.map(\.float), [true, false, false])
        let p0 = shader.passes[0], p1 = shader.passes[1]
        XCTAssertEqual(p0.width?.evaluate(width: 1280, height: 720, inputs: ["scale": 3]), 426)
        XCTAssertEqual(p0.height?.evaluate(width: 1280, height: 720), 180)
        XCTAssertEqual(p0.height?.evaluate(width: 2, height: 2), 1)
        XCTAssertEqual(p1.width, .number(320))
        XCTAssertEqual(p1.height?.evaluate(width: 1280, height: 720, inputs: ["taps": 2]), 2158)
        XCTAssertEqual(p0.width?.pixels(width: 1280, height: 720, inputs: ["scale": 0], fallback: 7), 7)
        XCTAssertEqual(p0.width?.variables, ["WIDTH", "scale"])
        XCTAssertNil(shader.passes[2].width)
        let source = p0.program.source
        dump("multipass", p0.program)
        XCTAssertTrue(source.contains("uniform sampler2D small;") && source.contains("uniform vec2 _trail_imgSize;"))
        XCTAssertEqual(shader.passes[2].program, p0.program)
    }

    func testImportedImage() throws {
        let text = """
        /*{
            "ISFVSN": "2",
            "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
            "IMPORTED": { "grain": { "PATH": "textures/grain.png" } }
        }*/
        void main() { gl_FragColor = IMG_THIS_PIXEL(inputImage) * IMG_NORM_PIXEL(grain, fract(isf_FragNormCoord * 4.0)); }
        """
        let shader = try UserShader.load(source: text, path: "/fx/film/grain.fs")
        XCTAssertEqual(shader.importedImages, [ISFImportedImage(name: "grain", path: "textures/grain.png",
                                                                resolvedPath: "/fx/film/textures/grain.png")])
        XCTAssertEqual(shader.watchedFiles, ["/fx/film/grain.fs", "/fx/film/textures/grain.png", "/fx/film/grain.vs"],
                       "the .vs that may appear beside the .fs is watched too")
        XCTAssertTrue(shader.passes[0].program.source.contains("uniform sampler2D grain;\nuniform vec2 _grain_imgSize;"))
        dump("imported", shader.passes[0].program)

        // ISF v1 array form.
        let v1 = text.replacingOccurrences(of: #""IMPORTED": { "grain": { "PATH": "textures/grain.png" } }"#,
                                           with: #""IMPORTED": [ { "NAME": "grain", "PATH": "../grain.png" } ]"#)
        XCTAssertEqual(try UserShader.load(source: v1, path: "/fx/film/grain.fs").importedImages.first?.resolvedPath, "/fx/grain.png")
    }

    func testCommentWithoutJSONIsNotISF() throws {
        XCTAssertEqual(try UserShader.load(source: "/*[ 1 ]*/\nout vec4 o;\nvoid main() { o = vec4(1.0); }", path: "x.frag").kind, .glsl)
    }

    func testGeneratorHasNoInputImage() throws {
        let text = "/*{ \"ISFVSN\": \"2\" }*/\nvoid main() { gl_FragColor = vec4(isf_FragNormCoord, sin(TIME), 1.0); }\n"
        let shader = try UserShader.load(source: text, path: "gen.fs")
        XCTAssertNil(shader.inputImage)
        XCTAssertFalse(shader.isf!.isFilter)
        // The body starts on the header's closing line: columns there stay true.
        let program = shader.passes[0].program
        let line = try XCTUnwrap(program.lineMap.generatedLine(for: "gen.fs", line: 2))
        XCTAssertEqual(program.lineMap.location(ofGeneratedLine: line - 1, column: 1)?.line, 1)
    }

    // MARK: Malformed headers

    private func assertLoadError(_ text: String, line: Int?, column: Int?, contains fragment: String,
                                 file: StaticString = #filePath, testLine: UInt = #line) {
        XCTAssertThrowsError(try UserShader.load(source: text, path: "bad.fs", fileSystem: InMemoryShaderFileSystem([:])),
                             file: file, line: testLine) { error in
            guard let e = error as? ShaderLoadError else { return XCTFail("\(error)", file: file, line: testLine) }
            XCTAssertEqual(e.line, line, "\(e)", file: file, line: testLine)
            XCTAssertEqual(e.column, column, "\(e)", file: file, line: testLine)
            XCTAssertTrue(e.message.contains(fragment), "\(e)", file: file, line: testLine)
        }
    }

    func testMalformedHeaders() {
        assertLoadError("/*{\n  \"INPUTS\": [\n    { \"NAME\": \"a\" \"TYPE\": \"float\" }\n  ]\n}*/\nvoid main(){}",
                        line: 3, column: 19, contains: "expected ',' or '}' after the value of \"NAME\"")
        assertLoadError("/*{\n  \"INPUTS\": [,]\n}*/", line: 2, column: 14, contains: "expected a value, found ','")
        assertLoadError("/*{\n  \"DESCRIPTION\": \"x\n}*/", line: 2, column: 18, contains: "unterminated string")
        assertLoadError("/*{ \"A\": 1 \n", line: 1, column: 1, contains: "never closed")
        assertLoadError("/*{ \"A\": tru }*/", line: 1, column: 10, contains: "expected a value, found 'tru'")
        assertLoadError("/*{\n\t\"INPUTS\": [\n\t\t{ \"NAME\": \"x\", \"TYPE\": \"wobble\" }\n\t]\n}*/",
                        line: 3, column: 26, contains: "unknown TYPE 'wobble'")
        assertLoadError("/*{\n\t\"INPUTS\": [\n\t\t{ \"NAME\": \"snd\", \"TYPE\": \"audioFFT\", \"MAX\": -4 }\n\t]\n}*/",
                        line: 3, column: 47, contains: "MAX of audioFFT input 'snd' must be a whole number of bins")
        assertLoadError("/*{ \"INPUTS\": [ { \"TYPE\": \"float\" } ] }*/", line: 1, column: 17, contains: "input without a NAME")
        assertLoadError("/*{ \"INPUTS\": [ { \"NAME\": \"a\", \"TYPE\": \"float\", \"DEFAULT\": \"big\" } ] }*/",
                        line: 1, column: 60, contains: "DEFAULT must be a number")
        assertLoadError("/*{ \"INPUTS\": [ { \"NAME\": \"p\", \"TYPE\": \"point2D\", \"DEFAULT\": [1] } ] }*/",
                        line: 1, column: 62, contains: "must have 2 numbers, found 1")
        assertLoadError("/*{ \"INPUTS\": [ {\"NAME\": \"a\", \"TYPE\": \"float\"},\n {\"NAME\": \"a\", \"TYPE\": \"bool\"} ] }*/",
                        line: 2, column: 11, contains: "input 'a' is already used on line 1")
        assertLoadError("/*{ \"INPUTS\": [ {\"NAME\": \"TIME\", \"TYPE\": \"float\"} ] }*/",
                        line: 1, column: 26, contains: "clashes with a built-in")
        assertLoadError("/*{ \"INPUTS\": [ {\"NAME\": \"m\", \"TYPE\": \"long\", \"VALUES\": [0, 1], \"LABELS\": [\"a\"]} ] }*/",
                        line: 1, column: 75, contains: "LABELS has 1 entries but VALUES has 2")
        assertLoadError("/*{\n \"PASSES\": [ { \"TARGET\": \"a\", \"WIDTH\": \"$WIDTH / $speed\" } ]\n}*/",
                        line: 2, column: 50, contains: "unknown variable '$speed'")
        assertLoadError("/*{\n \"PASSES\": [ { \"WIDTH\": \"$WIDTH * (2\" } ]\n}*/",
                        line: 2, column: 37, contains: "expected ')'")
        assertLoadError("/*{\n \"PASSES\": [ { \"WIDTH\": \"sin($WIDTH)\" } ]\n}*/",
                        line: 2, column: 26, contains: "unknown function 'sin'")
        assertLoadError("/*{ \"IMPORTED\": { \"noise\": { } } }*/", line: 1, column: 28, contains: "needs a PATH")
        assertLoadError("/*{ \"INPUTS\": {} }*/", line: 1, column: 15, contains: "INPUTS must be an array")
        assertLoadError("/*{ } x */", line: 1, column: 7, contains: "unexpected 'x' after the header")
        assertLoadError("/*{}*/\nvoid main() { gl_FragColor = IMG_PIXEL(missing, vec2(0.0)); }",
                        line: 2, column: 30, contains: "IMG_PIXEL: 'missing' is not an image")
        assertLoadError("/*{ \"INPUTS\": [ {\"NAME\": \"inputImage\", \"TYPE\": \"image\"} ] }*/\nvoid main() {\n  gl_FragColor = IMG_NORM_PIXEL(inputImage);\n}",
                        line: 3, column: 18, contains: "IMG_NORM_PIXEL takes 2 arguments, found 1")
    }

    func testSizeExpressionParser() throws {
        let e = try ISFSizeExpression.parse("max(floor($WIDTH*0.5) - -2, ceil(HEIGHT / 3)) + abs(-1) * 2")
        XCTAssertEqual(e.evaluate(width: 101, height: 10), 54)
        XCTAssertEqual(try ISFSizeExpression.parse("(($HEIGHT))").evaluate(width: 1, height: 9), 9)
        XCTAssertThrowsError(try ISFSizeExpression.parse("max(1)")) { error in
            XCTAssertEqual((error as? ISFSizeExpression.ParseError)?.message, "max takes 2 arguments, found 1")
        }
        XCTAssertThrowsError(try ISFSizeExpression.parse("2 3")) { error in
            XCTAssertEqual((error as? ISFSizeExpression.ParseError)?.offset, 2)
        }
    }
}

final class PlainShaderTests: XCTestCase {
    func testShaderToyWrapping() throws {
        let text = """
        // A ShaderToy shader
        uniform float amount; // @param min=0 max=1 default=0.5 label="Amount"
        void mainImage( out vec4 fragColor, in vec2 fragCoord )
        {
            vec2 uv = fragCoord / iResolution.xy;
            fragColor = mix(texture(iChannel0, uv), vec4(uv, 0.5 + 0.5 * sin(iTime), 1.0), amount);
        }
        """
        let shader = try UserShader.load(source: text, path: "toy.fs")
        XCTAssertEqual(shader.kind, .shadertoy)
        XCTAssertEqual(shader.inputImage, "iChannel0")
        XCTAssertEqual(shader.parameters, [ShaderParameter(name: "amount", label: "Amount", type: .float, defaultValue: .float(0.5),
                                                           minimum: .float(0), maximum: .float(1))])
        let program = shader.passes[0].program
        dump("toy", program)
        for declaration in ["uniform vec3 iResolution;", "uniform float iTime;", "uniform float iTimeDelta;", "uniform int iFrame;",
                            "uniform float iFrameRate;", "uniform vec4 iMouse;", "uniform vec4 iDate;", "uniform sampler2D iChannel0;",
                            "uniform sampler2D iChannel3;", "uniform vec3 iChannelResolution[4];", "out vec4 prism_FragColor;",
                            "mainImage(prism_FragColor, gl_FragCoord.xy);"] {
            XCTAssertTrue(program.source.contains(declaration), "missing \(declaration)")
        }
        XCTAssertTrue(program.source.hasPrefix("#version 300 es\n"))
        let lines = program.source.components(separatedBy: "\n")
        let uvLine = try XCTUnwrap(lines.firstIndex { $0.contains("vec2 uv =") }) + 1
        XCTAssertEqual(program.lineMap.location(ofGeneratedLine: uvLine, column: 5), ShaderSourceLocation(file: "toy.fs", line: 5, column: 5))
        XCTAssertNil(program.lineMap.location(ofGeneratedLine: lines.count))
    }

    func testPlainGLSLGetsOnlyWhatIsMissing() throws {
        let text = """
        uniform sampler2D inputImage;
        uniform vec2 RENDERSIZE;
        uniform int mode;      // @param values=0,1,2 labels="Soft,Hard,Linear light" default=1
        uniform bool flash;    // @param event
        uniform vec4 tint;     // @param color default=1,0.5,0
        uniform highp vec2 c;  // @param default=0.5,0.5 min=0,0 max=1,1
        out vec4 color;
        void main() { color = texture(inputImage, gl_FragCoord.xy / RENDERSIZE) * tint; }
        """
        let shader = try UserShader.load(source: text, path: "plain.frag")
        XCTAssertEqual(shader.kind, .glsl)
        XCTAssertEqual(shader.inputImage, "inputImage")
        let program = shader.passes[0].program
        dump("plain", program)
        XCTAssertEqual(program.source, "#version 300 es\nprecision highp float;\n" + text)
        XCTAssertEqual(program.lineMap.location(ofGeneratedLine: 3)?.line, 1)
        let p = Dictionary(uniqueKeysWithValues: shader.parameters.map { ($0.name, $0) })
        XCTAssertEqual(p["mode"]?.type, .long)
        XCTAssertEqual(p["mode"]?.labels, ["Soft", "Hard", "Linear light"])
        XCTAssertEqual(p["mode"]?.values, [0, 1, 2])
        XCTAssertEqual(p["mode"]?.defaultValue, .int(1))
        XCTAssertEqual(p["flash"]?.type, .event)
        XCTAssertEqual(p["tint"]?.defaultValue, .vector([1, 0.5, 0, 1]))
        XCTAssertEqual(p["c"]?.type, .point2D)
        XCTAssertEqual(p["c"]?.maximum, .vector([1, 1]))

        let versioned = "#version 300 es\n// comment\nout vec4 o;\nvoid main() { o = vec4(1.0); }"
        let kept = try UserShader.load(source: versioned, path: "v.frag").passes[0].program
        XCTAssertEqual(kept.source, "#version 300 es\nprecision highp float;\n// comment\nout vec4 o;\nvoid main() { o = vec4(1.0); }")
        XCTAssertNil(kept.lineMap.location(ofGeneratedLine: 2))
        XCTAssertEqual(kept.lineMap.location(ofGeneratedLine: 3)?.line, 2)

        let complete = "#version 300 es\nprecision mediump float;\nout vec4 o;\nvoid main() { o = vec4(1.0); }"
        XCTAssertEqual(try UserShader.load(source: complete, path: "c.frag").passes[0].program.source, complete)
        XCTAssertNil(try UserShader.load(source: complete, path: "c.frag").inputImage)
    }

    func testParamErrors() {
        func check(_ line: String, _ fragment: String, file: StaticString = #filePath, testLine: UInt = #line) {
            XCTAssertThrowsError(try UserShader.load(source: "out vec4 o;\n" + line + "\nvoid main(){}", path: "p.fs"), file: file, line: testLine) { error in
                let e = error as? ShaderLoadError
                XCTAssertEqual(e?.line, 2, file: file, line: testLine)
                XCTAssertEqual(e?.column, line.distance(from: line.startIndex, to: line.range(of: "@param")!.lowerBound) + 1, file: file, line: testLine)
                XCTAssertTrue(e?.message.contains(fragment) ?? false, "\(error)", file: file, line: testLine)
            }
        }
        check("uniform float a; // @param min=zero", "min: 'zero' is not a number")
        check("uniform float a; // @param speed=2", "unknown @param setting 'speed'")
        check("float a; // @param", "must follow a declaration")
        check("uniform mat3 m; // @param", "only float, int, bool")
        check("uniform vec2 p; // @param default=1", "needs 2 comma-separated numbers")
        check("uniform int m; // @param values=0,1 labels=a", "labels has 1 entries but values has 2")
        check("uniform float a; // @param label=\"open", "unterminated quoted value")
    }
}

final class IncludeTests: XCTestCase {
    func testIncludesMapLinesAndListDependencies() throws {
        let fs = InMemoryShaderFileSystem([
            "/p/main.fs": "/*{ \"INPUTS\": [ { \"NAME\": \"inputImage\", \"TYPE\": \"image\" } ] }*/\n#include \"lib/colour.glsl\"\nvoid main() {\n    gl_FragColor = grade(IMG_THIS_PIXEL(inputImage));\n}\n",
            "/p/lib/colour.glsl": "#import \"../common.glsl\"\nvec4 grade(vec4 c) {\n    return vec4(luma(c.rgb));\n}",
            "/p/common.glsl": "float luma(vec3 c) { return dot(c, vec3(0.2126, 0.7152, 0.0722)); }",
        ])
        let shader = try UserShader.load(path: "/p/main.fs", fileSystem: fs)
        XCTAssertEqual(shader.dependencies, ["/p/main.fs", "/p/lib/colour.glsl", "/p/common.glsl"])
        let program = shader.passes[0].program
        dump("includes", program)
        let lines = program.source.components(separatedBy: "\n")
        func origin(_ fragment: String) -> ShaderSourceLocation? {
            lines.firstIndex { $0.contains(fragment) }.flatMap { program.lineMap.location(ofGeneratedLine: $0 + 1) }
        }
        XCTAssertEqual(origin("float luma"), ShaderSourceLocation(file: "/p/common.glsl", line: 1))
        XCTAssertEqual(origin("return vec4(luma"), ShaderSourceLocation(file: "/p/lib/colour.glsl", line: 3))
        XCTAssertEqual(origin("isf_FragColor = grade"), ShaderSourceLocation(file: "/p/main.fs", line: 4))
        XCTAssertFalse(program.source.contains("#include") || program.source.contains("#import"))
    }

    func testIncludeCycleAndMissingFile() {
        let fs = InMemoryShaderFileSystem([
            "/c/a.fs": "void mainImage(out vec4 c, in vec2 p) { c = vec4(0.0); }\n#include \"b.glsl\"\n",
            "/c/b.glsl": "// b\n#include \"sub/c.glsl\"",
            "/c/sub/c.glsl": "  #  include \"../b.glsl\"",
            "/c/missing.fs": "#include \"nope.glsl\"",
            "/c/self.glsl": "#include \"self.glsl\"",
        ])
        XCTAssertThrowsError(try UserShader.load(path: "/c/a.fs", fileSystem: fs)) { error in
            let e = error as? ShaderLoadError
            XCTAssertEqual(e?.file, "/c/sub/c.glsl")
            XCTAssertEqual(e?.line, 1)
            XCTAssertEqual(e?.column, 15)
            XCTAssertEqual(e?.message, "include cycle: b.glsl → c.glsl → b.glsl")
        }
        XCTAssertThrowsError(try UserShader.load(path: "/c/missing.fs", fileSystem: fs)) { error in
            XCTAssertTrue("\(error)".hasPrefix("/c/missing.fs:1:11: cannot read included file 'nope.glsl' (/c/nope.glsl)"), "\(error)")
        }
        XCTAssertThrowsError(try UserShader.load(path: "/c/self.glsl", fileSystem: fs)) { error in
            XCTAssertEqual((error as? ShaderLoadError)?.message, "include cycle: self.glsl → self.glsl")
        }
        XCTAssertThrowsError(try UserShader.load(path: "/c/none.fs", fileSystem: fs)) { error in
            XCTAssertTrue("\(error)".hasPrefix("/c/none.fs: cannot read the shader"), "\(error)")
        }
    }

    func testDepthLimit() {
        var files: [String: String] = [:]
        for i in 0..<30 { files["/d/f\(i).glsl"] = "#include \"f\(i + 1).glsl\"" }
        files["/d/f30.glsl"] = "void main() {}"
        XCTAssertThrowsError(try UserShader.load(path: "/d/f0.glsl", fileSystem: InMemoryShaderFileSystem(files))) { error in
            XCTAssertTrue((error as? ShaderLoadError)?.message.contains("nested deeper than 16") ?? false, "\(error)")
        }
    }

    func testPaths() {
        XCTAssertEqual(ShaderPaths.resolve("../x.glsl", relativeTo: "/a/b/c.fs"), "/a/x.glsl")
        XCTAssertEqual(ShaderPaths.resolve("/abs/x.glsl", relativeTo: "/a/b/c.fs"), "/abs/x.glsl")
        XCTAssertEqual(ShaderPaths.resolve("x.glsl", relativeTo: "c.fs"), "x.glsl")
        XCTAssertEqual(ShaderPaths.normalise("a/./b//../c"), "a/c")
        XCTAssertEqual(ShaderPaths.normalise("../a"), "../a")
    }
}

final class CompilerLogTests: XCTestCase {
    private func program() throws -> ShaderProgramSource {
        let fs = InMemoryShaderFileSystem([
            "/m/main.fs": "/*{ \"INPUTS\": [ { \"NAME\": \"inputImage\", \"TYPE\": \"image\" } ] }*/\n#include \"util.glsl\"\nvoid main() {\n    vec3 c = undefinedThing;\n    gl_FragColor = vec4(c, 1.0);\n}\n",
            "/m/util.glsl": "float helper(float x) {\n  return x * 2.0;\n}",
        ])
        return try UserShader.load(path: "/m/main.fs", fileSystem: fs).passes[0].program
    }

    func testMesaLog() throws {
        let program = try program()
        let main4 = try XCTUnwrap(program.lineMap.generatedLine(for: "/m/main.fs", line: 4))
        let util2 = try XCTUnwrap(program.lineMap.generatedLine(for: "/m/util.glsl", line: 2))
        let main5 = try XCTUnwrap(program.lineMap.generatedLine(for: "/m/main.fs", line: 5))
        let log = """
        0:\(util2)(12): error: `return' : type mismatch
        0:\(main4)(14): error: `undefinedThing' undeclared
        0:\(main5)(5): warning: something about gl_FragColor
        0:3(1): error: preamble trouble
        """
        let diagnostics = program.diagnostics(fromLog: log, file: "/m/main.fs")
        XCTAssertEqual(diagnostics.map(\.description), [
            "/m/util.glsl:2:12: error: `return' : type mismatch",
            "/m/main.fs:4:14: error: `undefinedThing' undeclared",
            "/m/main.fs:5: warning: something about gl_FragColor", // edited line: no column
            "/m/main.fs: error: preamble trouble (in generated code, line 3)",
        ])
    }

    func testNVIDIALog() throws {
        let program = try program()
        let main4 = try XCTUnwrap(program.lineMap.generatedLine(for: "/m/main.fs", line: 4))
        let log = "0(\(main4)) : error C1008: undefined variable \"undefinedThing\"\r\n0(\(main4)) : warning C7050: \"c\" might be used before being initialized\r\n"
        let diagnostics = program.diagnostics(fromLog: log, file: "/m/main.fs")
        XCTAssertEqual(diagnostics, [
            ShaderDiagnostic(file: "/m/main.fs", line: 4, column: nil, severity: .error, message: "C1008: undefined variable \"undefinedThing\""),
            ShaderDiagnostic(file: "/m/main.fs", line: 4, column: nil, severity: .warning, message: "C7050: \"c\" might be used before being initialized"),
        ])
        XCTAssertEqual(diagnostics[0].description, "/m/main.fs:4: error: C1008: undefined variable \"undefinedThing\"")
    }

    func testGlslangAndUnknownLines() throws {
        let program = try program()
        let util2 = try XCTUnwrap(program.lineMap.generatedLine(for: "/m/util.glsl", line: 2))
        let log = "ERROR: 0:\(util2): '' : syntax error\nERROR: 1 compilation errors.  No code generated.\nsomething odd happened\n"
        XCTAssertEqual(program.diagnostics(fromLog: log, file: "/m/main.fs").map(\.description), [
            "/m/util.glsl:2: error: '' : syntax error",
            "/m/main.fs: error: something odd happened",
        ])
    }
}

/// Files held in memory, keyed by normalised path.
struct InMemoryShaderFileSystem: ShaderFileSystem {
    var files: [String: String]

    init(_ files: [String: String]) {
        var normalised: [String: String] = [:]
        for (path, text) in files { normalised[ShaderPaths.normalise(path)] = text }
        self.files = normalised
    }

    struct NotFound: Error, CustomStringConvertible {
        let path: String
        var description: String { "no such file" }
    }

    func contents(ofFile path: String) throws -> String {
        guard let text = files[ShaderPaths.normalise(path)] else { throw NotFound(path: path) }
        return text
    }
}

extension ShaderLineMap {
    /// The first generated line that came from `file`:`line`, if any.
    func generatedLine(for file: String, line: Int) -> Int? {
        origins.firstIndex { $0?.file == file && $0?.line == line }.map { $0 + 1 }
    }
}
