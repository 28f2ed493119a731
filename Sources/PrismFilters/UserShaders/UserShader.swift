/// A user-written fragment shader, loaded and translated to GLSL ES 3.00, ready for the GPU runtime.
///
/// Three kinds of file are accepted:
/// - **ISF** (`/*{ JSON }*/` header, ISF v2): translated as described below.
/// - **ShaderToy**: a file defining `void mainImage(out vec4 fragColor, in vec2 fragCoord)`;
///   wrapped with ShaderToy's uniforms and a `main`.
/// - **GLSL**: a plain fragment shader with its own `main`; kept as written, with only a missing
///   `#version 300 es` and `precision highp float;` added.
///
/// `#include "file"` and `#import "file"` lines are expanded in all three (relative to the including
/// file, at most 16 deep, cycles rejected). Every file read is listed in `dependencies`.
///
/// ## Uniform contract (what the runtime binds)
///
/// ShaderToy and GLSL shaders are drawn as one full-screen primitive (see `vertexShaderSource`) and read
/// nothing from the vertex stage; ISF passes draw the ISF quad (see `Pass.vertex`). Uniforms that a program does not use are optimised away; bind by
/// name and skip the ones whose location is -1.
///
/// **ISF** (every pass uses the same program; one source per pass is provided for convenience):
///
/// | uniform | type | value |
/// |---|---|---|
/// | `TIME` | float | seconds since the filter started |
/// | `TIMEDELTA` | float | seconds since the previous frame |
/// | `FRAMEINDEX` | int | frames rendered so far, from 0 |
/// | `RENDERSIZE` | vec2 | size in pixels of the pass being rendered |
/// | `PASSINDEX` | int | index of the pass being rendered |
/// | `DATE` | vec4 | year, month (1–12), day (1–31), whole seconds since midnight |
/// | *input name* | bool / int / float / vec2 / vec4 | event and bool → bool, long → int, float, point2D → vec2, color → vec4 |
/// | *image name* | sampler2D | every image input (`inputImage` is the filtered frame), every pass TARGET (the buffer's latest contents; for a persistent buffer read before its own pass, the previous frame's), every IMPORTED image |
/// | *audio input name* | sampler2D | `audio`: the waveform, `audioFFT`: the spectrum, of the sound ending at the frame's time; one row per channel (see `AudioWindow`) |
/// | `_<image>_imgSize` | vec2 | that image's size in pixels (IMG_PIXEL, IMG_SIZE use it) |
/// | `_<image>_imgRect`, `_<image>_flip` | vec4, bool | macros: `(0, 0, width, height)` and false |
///
/// `isf_FragNormCoord` is a varying of the vertex stage, interpolated over the reference renderer's quad
/// (`vertexInit`), and the colour output is `out vec4 isf_FragColor` (location 0). Texture origins are
/// bottom-left, as in ISF. Every ISF pass has a vertex program (`Pass.vertex`): the default one calls
/// `isf_vertShaderInit()` only; `UserShaderKernel` fuses a shader without its own `.vs` only when it never
/// reads `isf_FragNormCoord` except to sample its input at the pixel.
///
/// An ISF file `NAME.fs` with a `NAME.vs` beside it gets that vertex shader (`Pass.vertex`): it calls
/// `isf_vertShaderInit()` (a quad of two triangles from `gl_VertexID`, `isf_FragNormCoord` set from the
/// corner), may move `gl_Position` and writes its own varyings; the fragment shader then reads
/// `isf_FragNormCoord` as a varying. `mediump`/`lowp` become `highp` and desktop GLSL habits are
/// translated (`GLSLDialect`), as desktop ISF hosts accept them.
///
/// **ShaderToy**: `iResolution` (vec3: width, height, 1), `iTime`, `iTimeDelta`, `iFrameRate` (float: the
/// run's rate), `iFrame` (int), `iMouse` (vec4, ShaderToy's encoding), `iDate` (vec4 as DATE above but the
/// month from 0, as ShaderToy's), `iChannel0`…`iChannel3` (sampler2D; what each reads is
/// `shaderToyChannels`, from the file's `// @iChannelN` lines, or the graph: see `ShaderToyChannel`),
/// `iChannelResolution[4]` (vec3), `iChannelTime[4]` (float). Output `out vec4 prism_FragColor`.
///
/// **GLSL**: the author declares what they use. The runtime binds, when declared, the ISF names
/// above (`TIME`, `RENDERSIZE`, …), `inputImage` (sampler2D, the filter input) and
/// `_inputImage_imgSize`, plus the `@param` uniforms (see `ParamComments`).
///
/// Parameters of every kind arrive as `parameters` (uniform name = parameter name).
package struct UserShader: Hashable, Sendable {
    package enum Kind: String, Hashable, Sendable {
        case isf, shadertoy, glsl
    }

    /// One pass: where it renders, and the program that renders it.
    package struct Pass: Hashable, Sendable {
        package var index: Int
        /// The buffer the pass writes (ISF TARGET); nil for the output.
        package var target: String?
        package var persistent: Bool
        package var float: Bool
        /// Size expressions (nil: the render size).
        package var width: ISFSizeExpression?
        package var height: ISFSizeExpression?
        /// The fragment shader, GLSL ES 3.00, and its line map.
        package var program: ShaderProgramSource
        /// The vertex shader (ISF: the author's `NAME.vs` beside `NAME.fs`, translated, or the default one;
        /// nil for ShaderToy and GLSL: the full-frame triangle). It draws a quad of two triangles (6 vertices
        /// from `gl_VertexID`, as ISF hosts draw one) and writes `isf_FragNormCoord`, which the fragment then
        /// reads as a varying.
        package var vertex: ShaderProgramSource? = nil
    }

    /// The main file, as given to the loader (normalised).
    package var path: String
    package var kind: Kind
    /// The ISF header, for ISF files.
    package var isf: ISFDocument?
    /// Settable values: ISF inputs other than images, or `@param` uniforms.
    package var parameters: [ShaderParameter]
    /// The sampler that receives the frame being filtered (`inputImage`, `iChannel0`), or nil for a
    /// generator (an ISF file without `inputImage`, a GLSL file that declares no `inputImage`).
    package var inputImage: String?
    /// ISF image inputs other than `inputImage` (extra streams for the graph).
    package var extraImageInputs: [String]
    package var passes: [Pass]
    package var importedImages: [ISFImportedImage]
    /// The ISF vertex shader's file, when there is one.
    package var vertexPath: String? = nil
    /// Every shader source file read: the main file first, then includes in first-read order.
    package var dependencies: [String]
    /// ShaderToy: what iChannel0…3 read unless the graph says otherwise (the file's `// @iChannelN` lines).
    package var shaderToyChannels: [ShaderToyChannel] = ShaderToyChannel.defaults

    /// ISF `audio` and `audioFFT` inputs, in INPUTS order: textures fed from the input's sound each frame.
    package var audioInputs: [ShaderParameter] { isf?.inputs.filter { $0.type.isAudio } ?? [] }

    /// Files to watch for hot reload: the sources, the imported images, the ShaderToy channels' files, and
    /// `NAME.vs` beside `NAME.fs` whether or not it exists yet (creating or deleting it changes the shader).
    package var watchedFiles: [String] {
        var visited: Set<String> = [path]
        var files = dependencies + importedImages.map(\.resolvedPath) + shaderToyChannelFiles(visited: &visited)
        if let vertex = Self.vertexShaderPath(for: path), !files.contains(vertex) { files.append(vertex) }
        return files
    }

    /// The vertex shader to pair with ShaderToy and GLSL shaders: one triangle covering the viewport,
    /// from `gl_VertexID` (draw 3 vertices, no attributes).
    package static let vertexShaderSource = """
        #version 300 es
        void main() {
            vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
            gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
        }
        """

    /// Loads and translates the shader at `path`.
    package static func load(path: String, fileSystem: any ShaderFileSystem = LocalShaderFileSystem()) throws(ShaderLoadError) -> UserShader {
        let file = ShaderPaths.normalise(path)
        let text: String
        do { text = try fileSystem.contents(ofFile: file) } catch {
            throw ShaderLoadError(file: file, message: "cannot read the shader: \(error)")
        }
        return try load(source: text, path: file, fileSystem: fileSystem)
    }

    /// Translates `source` as if read from `path` (includes and imports resolve against `path`).
    package static func load(source: String, path: String, fileSystem: any ShaderFileSystem = LocalShaderFileSystem()) throws(ShaderLoadError) -> UserShader {
        let file = ShaderPaths.normalise(path)
        var expander = IncludeExpander(fileSystem: fileSystem)
        if let (document, body) = try ISFDocument.parse(text: source, file: file) {
            let lines = try expander.expand(root: body, file: file)
            try GLSLLimits.check(lines)
            // ISF hosts load NAME.vs beside NAME.fs as the vertex shader.
            var vertex: (path: String, lines: [SourceLine])?
            let vertexPath = vertexShaderPath(for: file)
            if let vertexPath, let text = try? fileSystem.contents(ofFile: vertexPath) {
                let root = splitLines(text).enumerated().map { SourceLine(text: $0.element, file: vertexPath, line: $0.offset + 1) }
                let vertexLines = try expander.expand(root: root, file: vertexPath)
                try GLSLLimits.check(vertexLines)
                vertex = (vertexPath, vertexLines)
            }
            return try translateISF(document, lines: lines, file: file, vertex: vertex,
                                    dependencies: expander.dependencies + (vertex.map { [$0.path] } ?? []))
        }
        // A vertex shader only ISF files can use: refused rather than ignored, which would draw another picture.
        if let vertexPath = vertexShaderPath(for: file), (try? fileSystem.contents(ofFile: vertexPath)) != nil {
            throw ShaderLoadError(file: file, message: "\(vertexPath) is a vertex shader, which Prism runs only beside ISF files "
                                  + "(a /*{ … }*/ header); add one, or move the .vs away")
        }
        let root = splitLines(source).enumerated().map { SourceLine(text: $0.element, file: file, line: $0.offset + 1) }
        let lines = try expander.expand(root: root, file: file)
        try GLSLLimits.check(lines)
        if definesMainImage(lines) {
            return try wrapShaderToy(lines, file: file, dependencies: expander.dependencies)
        }
        return try completeGLSL(lines, file: file, dependencies: expander.dependencies)
    }

    // MARK: ISF

    /// `NAME.vs` for `NAME.fs`; nil for a file not named `.fs`.
    static func vertexShaderPath(for file: String) -> String? {
        guard file.hasSuffix(".fs") else { return nil }
        return String(file.dropLast(3)) + ".vs"
    }

    /// The names ISF hosts declare for every image besides `_NAME_imgSize`: `_NAME_imgRect` (the image's
    /// rectangle in its texture, in pixels: all of it here) and `_NAME_flip` (false: Prism's copies are
    /// already bottom row first).
    static func imageAliases(_ name: String, prefix: String = "") -> [String] {
        ["#define \(prefix)_\(name)_imgRect vec4(0.0, 0.0, \(prefix)_\(name)_imgSize)",
         "#define \(prefix)_\(name)_flip false"]
    }

    /// The vertex shader of an ISF file without a `.vs` (the reference renderer's default): only the init.
    static let defaultVertexMain = ["void main() {", "    isf_vertShaderInit();", "}"]

    /// Builds `isf_FragNormCoord` and `gl_Position` for the quad ISF hosts draw: two triangles, their
    /// corners from `gl_VertexID` (no vertex buffers), normalised coordinates taken before the author
    /// moves anything. The corners and their order are the reference renderer's (interactive-shader-format-js
    /// draws (-1,-1) (1,-1) (-1,1), (-1,1) (1,-1) (1,1) and sets `isf_FragNormCoord = (position + 1) / 2`), so
    /// the GPU interpolates the varying over the same triangles, to the same bits.
    static let vertexInit = [
        "out vec2 isf_FragNormCoord;",
        "void isf_vertShaderInit() {",
        "    int isf_vertex = gl_VertexID % 6;",
        "    vec2 isf_corner = vec2(isf_vertex == 1 || isf_vertex == 4 || isf_vertex == 5 ? 1.0 : 0.0,",
        "                           isf_vertex == 2 || isf_vertex == 3 || isf_vertex == 5 ? 1.0 : 0.0);",
        "    gl_Position = vec4(isf_corner * 2.0 - 1.0, 0.0, 1.0);",
        "    isf_FragNormCoord = isf_corner;",
        "}",
    ]

    static func isfPreamble(_ document: ISFDocument, usesFragColor: Bool, stage: ShaderStage) -> [String] {
        var p = ["#version 300 es", "precision highp float;", "precision highp int;", "precision highp sampler2D;",
                 "// Generated by Prism from an ISF file; the author's code follows the preamble.",
                 "uniform float TIME;", "uniform float TIMEDELTA;", "uniform int FRAMEINDEX;",
                 "uniform vec2 RENDERSIZE;", "uniform int PASSINDEX;", "uniform vec4 DATE;"]
        for input in document.inputs {
            p.append("uniform \(input.type.glslType) \(input.name);")
            if input.type.isSampler {
                p.append("uniform vec2 \(GLSLRewriter.sizeUniform(input.name));")
                p += imageAliases(input.name)
            }
        }
        for name in document.passes.compactMap(\.target) + document.importedImages.map(\.name) {
            p.append("uniform sampler2D \(name);")
            p.append("uniform vec2 \(GLSLRewriter.sizeUniform(name));")
            p += imageAliases(name)
        }
        switch stage {
        case .fragmentAfterVertex:
            if usesFragColor { p.append("out vec4 isf_FragColor;") }
            p.append("in vec2 isf_FragNormCoord;")
        case .vertex:
            p += vertexInit
        }
        return p
    }

    /// The non-sampler names the ISF preamble declares, with their GLSL types.
    static func isfDeclaredTypes(_ document: ISFDocument) -> [String: String] {
        var types = ["TIME": "float", "TIMEDELTA": "float", "FRAMEINDEX": "int", "RENDERSIZE": "vec2", "PASSINDEX": "int",
                     "DATE": "vec4", "isf_FragNormCoord": "vec2", "isf_FragColor": "vec4"]
        for input in document.inputs where input.type != .image { types[input.name] = input.type.glslType }
        for image in document.imageNames { types[GLSLRewriter.sizeUniform(image)] = "vec2" }
        return types
    }

    /// Which program an ISF preamble starts.
    enum ShaderStage {
        /// A fragment shader after the ISF vertex shader (the author's or the default): `isf_FragNormCoord`
        /// is its varying.
        case fragmentAfterVertex
        case vertex
    }

    static func translateISF(_ document: ISFDocument, lines: [SourceLine], file: String,
                             vertex: (path: String, lines: [SourceLine])? = nil,
                             dependencies: [String]) throws(ShaderLoadError) -> UserShader {
        var body = withoutPreambleDeclarations(lines)
        var rewriter = GLSLRewriter(identifiers: GLSLRewriter.isfIdentifiers, images: Set(document.imageNames))
        let floatInputs = Set(document.inputs.filter { $0.type == .float }.map(\.name))
        let declared = isfDeclaredTypes(document)
        body = GLSLDialect.translate(try rewriter.rewrite(body), floats: floatInputs, declared: declared)
        // isf_FragNormCoord is always the vertex stage's varying, as ISF hosts interpolate it: computing it from
        // gl_FragCoord differs in the last bits, which hash noise (`fract(sin(x) * 43758.5453)`) magnifies.
        let program = assemble(preamble: isfPreamble(document, usesFragColor: rewriter.used.contains("gl_FragColor"),
                                                     stage: .fragmentAfterVertex),
                               body: body, postamble: [])
        // Without the author's .vs, the reference's default one (see `defaultVertexMain`).
        let vertexPreamble = isfPreamble(document, usesFragColor: false, stage: .vertex)
        var vertexProgram: ShaderProgramSource? = assemble(preamble: vertexPreamble, body: [], postamble: defaultVertexMain)
        if let vertex {
            var vertexRewriter = GLSLRewriter(identifiers: GLSLRewriter.isfVertexIdentifiers, images: Set(document.imageNames))
            let vertexBody = GLSLDialect.translate(try vertexRewriter.rewrite(withoutPreambleDeclarations(vertex.lines)),
                                                   floats: floatInputs, declared: declared)
            vertexProgram = assemble(preamble: vertexPreamble, body: vertexBody, postamble: [])
        }
        let passes = document.passes.enumerated().map { index, pass in
            Pass(index: index, target: pass.target, persistent: pass.persistent, float: pass.float,
                 width: pass.width, height: pass.height, program: program, vertex: vertexProgram)
        }
        return UserShader(path: file, kind: .isf, isf: document,
                          parameters: document.inputs.filter { !$0.type.isSampler },
                          inputImage: document.isFilter ? ISFDocument.filterInputName : nil,
                          extraImageInputs: document.inputs.filter { $0.type == .image && $0.name != ISFDocument.filterInputName }.map(\.name),
                          passes: passes, importedImages: document.importedImages,
                          vertexPath: vertex?.path, dependencies: dependencies)
    }

    /// `lines` with the version directive (the preamble's is ours) and declarations of the normalised
    /// coordinate (the preamble's varying) blanked.
    private static func withoutPreambleDeclarations(_ lines: [SourceLine]) -> [SourceLine] {
        lines.map { line in
            var line = line
            if line.isVersionDirective || declaresFragNormCoord(line.trimmedText) {
                line.text = ""
                line.edited = true
            }
            return line
        }
    }

    private static func declaresFragNormCoord(_ text: String) -> Bool {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ";" })
        guard words.count >= 3, words.count <= 4, ["varying", "in", "out"].contains(words[0]) else { return false }
        return words.last == "isf_FragNormCoord" || words.last == "vv_FragNormCoord"
    }

    // MARK: ShaderToy

    static let shaderToyPreamble = [
        "#version 300 es", "precision highp float;", "precision highp int;", "precision highp sampler2D;",
        "// Generated by Prism around a ShaderToy-style mainImage; the author's code follows the preamble.",
        "uniform vec3 iResolution;", "uniform float iTime;", "uniform float iTimeDelta;", "uniform float iFrameRate;",
        "uniform int iFrame;", "uniform vec4 iMouse;", "uniform vec4 iDate;",
        "uniform sampler2D iChannel0;", "uniform sampler2D iChannel1;", "uniform sampler2D iChannel2;", "uniform sampler2D iChannel3;",
        "uniform vec3 iChannelResolution[4];", "uniform float iChannelTime[4];",
        "out vec4 prism_FragColor;",
    ]

    static let shaderToyPostamble = [
        "void main() {",
        "    prism_FragColor = vec4(0.0, 0.0, 0.0, 1.0);",
        "    mainImage(prism_FragColor, gl_FragCoord.xy);",
        "}",
    ]

    static func definesMainImage(_ lines: [SourceLine]) -> Bool {
        var previous = ""
        for line in lines {
            let words = (previous + " " + stripLineComment(line.text)).split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
            for (index, word) in words.enumerated() where word == "mainImage" && index > 0 && words[index - 1] == "void" {
                return true
            }
            previous = stripLineComment(line.text)
        }
        return false
    }

    private static func stripLineComment(_ text: String) -> String {
        guard let range = text.range(of: "//") else { return text }
        return String(text[..<range.lowerBound])
    }

    static func wrapShaderToy(_ lines: [SourceLine], file: String, dependencies: [String]) throws(ShaderLoadError) -> UserShader {
        let parameters = try ParamComments.parameters(in: lines)
        var body = lines.map { line -> SourceLine in
            var line = line
            if line.isVersionDirective { line.text = ""; line.edited = true }
            return line
        }
        var rewriter = GLSLRewriter(identifiers: GLSLRewriter.legacyTextureIdentifiers, images: nil)
        body = try rewriter.rewrite(body)
        let program = assemble(preamble: shaderToyPreamble, body: body, postamble: shaderToyPostamble)
        var shader = UserShader(path: file, kind: .shadertoy, isf: nil, parameters: parameters, inputImage: "iChannel0",
                                extraImageInputs: [], passes: [Pass(index: 0, target: nil, persistent: false, float: false, program: program)],
                                importedImages: [], dependencies: dependencies)
        shader.shaderToyChannels = try ShaderToyChannel.declared(in: lines)
        return shader
    }

    // MARK: Plain GLSL

    static func completeGLSL(_ lines: [SourceLine], file: String, dependencies: [String]) throws(ShaderLoadError) -> UserShader {
        let parameters = try ParamComments.parameters(in: lines)
        var preamble: [String] = []
        var body = lines
        var insertAt = 0
        if let versionIndex = lines.firstIndex(where: \.isVersionDirective) {
            insertAt = versionIndex + 1
        } else {
            preamble.append("#version 300 es")
        }
        let hasFloatPrecision = lines.contains { line in
            let words = stripLineComment(line.text).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ";" })
            return words.count >= 3 && words[0] == "precision" && words[2] == "float"
        }
        var program: ShaderProgramSource
        if hasFloatPrecision {
            program = assemble(preamble: preamble, body: body, postamble: [])
        } else if insertAt == 0 {
            preamble.append("precision highp float;")
            program = assemble(preamble: preamble, body: body, postamble: [])
        } else {
            // After the author's #version line: head, our line, the rest.
            let head = Array(body[..<insertAt])
            body = Array(body[insertAt...])
            let first = assemble(preamble: [], body: head, postamble: ["precision highp float;"])
            let rest = assemble(preamble: [], body: body, postamble: [])
            program = ShaderProgramSource(source: first.source + "\n" + rest.source,
                                          lineMap: ShaderLineMap(origins: first.lineMap.origins + rest.lineMap.origins))
        }
        let declaresInput = lines.contains { ParamComments.uniformDeclaration(stripLineComment($0.text))?.1 == ISFDocument.filterInputName }
        return UserShader(path: file, kind: .glsl, isf: nil, parameters: parameters,
                          inputImage: declaresInput ? ISFDocument.filterInputName : nil, extraImageInputs: [],
                          passes: [Pass(index: 0, target: nil, persistent: false, float: false, program: program)],
                          importedImages: [], dependencies: dependencies)
    }

    // MARK: Assembly

    static func assemble(preamble: [String], body: [SourceLine], postamble: [String]) -> ShaderProgramSource {
        let text = (preamble + body.map(\.text) + postamble).joined(separator: "\n")
        let origins: [ShaderLineMap.Origin?] = Array(repeating: nil, count: preamble.count) + body.map { $0.origin }
            + Array(repeating: nil, count: postamble.count)
        return ShaderProgramSource(source: text, lineMap: ShaderLineMap(origins: origins))
    }
}
