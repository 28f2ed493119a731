import Foundation
import PrismCore
import PrismGPU

/// Reads an image file for ISF `IMPORTED` images: its size and RGBA8 pixels, top row first.
/// PrismFilters decodes no image formats (that is PrismMedia's job, with libavcodec), so the layer that
/// knows both installs one: the tool passes `ImageFile.read` (PNG, JPEG, PPM, PAM, …) through
/// `GraphBinder(imageLoader:)`. Without one, `UserShaderKernel.noImageLoader` refuses with a clear error.
public typealias ShaderImageLoader = @Sendable (_ path: String) throws -> (size: Size, rgba: [UInt8])

/// A `UserShader` (ISF, ShaderToy or plain GLSL) as a filter kernel, so a user shader is a filter like
/// any other.
///
/// ## Inputs
/// The kernel's image inputs (graph streams), in order: the main input (`inputImage`, ShaderToy's
/// `iChannel0`) when the shader has one, then the ISF image inputs other than `inputImage` in the
/// order of INPUTS. A shader without a main input is a generator and renders at the graph source's size.
///
/// ## Parameters (`parameterSpecs(for:)`)
/// float → `.float(MIN...MAX)` (unbounded sides when MIN or MAX is missing); long with LABELS →
/// `.choice(labels)` (the uniform gets the matching VALUE), long without → `.int(MIN...MAX)`; bool and
/// event → `.bool` (an event is true for one frame after it is set true); color → `.color`; point2D →
/// `.point` (not range-checked); a plain shader's vec3 `@param` → `.color` (alpha ignored).
///
/// ## How it runs
/// - **Fused** (point-wise): a single-pass ISF filter without targets, imports or extra images, whose code
///   reads `inputImage` only at the pixel being computed (`IMG_THIS_PIXEL`, `IMG_THIS_NORM_PIXEL`, or
///   `texture2D(inputImage, isf_FragNormCoord)`) and `isf_FragNormCoord` nowhere else (a fused pass has no
///   varying to give it the reference's bits), and that has no `.vs`, becomes an expression: the author's identifiers are
///   prefixed, those reads become `$in0(p)`, `main` becomes a function returning the colour. It fuses
///   with its neighbours like any built-in point-wise filter.
/// - **Passes** (everything else): each image input is first copied, upside down, into a prepass
///   target (the upstream chain fuses into that copy), because ISF and ShaderToy have their origin at
///   the bottom left while Prism's frames are stored top row first. Each ISF pass is then a prepass
///   rendering the author's program into its own target (WIDTH/HEIGHT evaluated at compile time with
///   the input size and parameter values; FLOAT → RGBA16F; PERSISTENT → a ping-ponged target that keeps
///   its contents from frame to frame). The kernel's expression reads the last pass's target, flipped back.
///   A ShaderToy shader's passes are its buffers, then the image pass (`ShaderToyPlan`, ShaderToyChannels.swift).
///
/// Compile errors: before the graph is compiled, `prepare` compiles the translated program as is and
/// throws `UserShaderCompileError` with the log mapped to the author's lines.
///
/// Changing a parameter that a WIDTH/HEIGHT expression uses takes effect at the next graph compile.
package final class UserShaderKernel: ParameterizedKernel {
    package let shader: UserShader
    package let inputCount: Int
    package var parameters: ParameterValues {
        didSet { noteEvents(from: oldValue) }
    }
    /// The sampler names of the kernel's inputs, in input order.
    package let imageInputs: [String]
    /// Extra ISF image inputs the graph leaves unconnected: they read as `unconnectedImageContents`.
    package let unconnectedImages: [String]
    /// What an unconnected image input holds (for `prism filters FILE.fs`).
    package static let unconnectedImageContents = "transparent black, at the size of the output (the filtered image's)"
    /// Built-in shaders (known to compile) skip the validation compile.
    private let trusted: Bool
    let imageLoader: ShaderImageLoader
    /// The fused form, when the shader allows it (and, for untrusted shaders, it compiled on its own).
    private var fused: (library: String, expression: String, output: String)?
    private var emptyTexture: Texture?
    private var importedTextures: [String: Texture] = [:]
    var sourceSize = Size(width: 1, height: 1)
    // ShaderToy: what the channels read (ShaderToyChannels.swift) and the channel images, once loaded.
    let shaderToyPlan: ShaderToyPlan?
    var channelTextures: [String: Texture] = [:]
    /// One texture per audio input, refilled each frame and reallocated only when its size changes.
    private var audioTextures: [String: Texture] = [:]
    /// The frame whose sound the audio textures hold (setUniforms runs once per program of a frame).
    private var audioFrame: (index: Int, time: Double)?
    private var pendingEvents: Set<String> = []
    private var eventsSentAt: Int?

    /// True when the kernel is evaluated as a fused point-wise expression.
    package var isFused: Bool { fused != nil }

    /// The colour map as data, for built-ins that know theirs (invert, color); see `ColorForm`.
    var colorFormula: (@Sendable (ParameterValues) -> ColorForm?)?
    package var colorForm: ColorForm? { colorFormula?(parameters) }
    /// Where the output is nonzero, for built-in generators that know (radial-gradient); see `FilterKernel`.
    var nonzeroRegionsFormula: (@Sendable (ParameterValues, Int, Size) -> [PixelRect]?)?
    package func nonzeroRegions(channel: Int, frame: FrameContext, size: Size) -> [PixelRect]? {
        nonzeroRegionsFormula?(parameters, channel, size)
    }

    /// `connectedImages`: how many of the shader's image inputs the graph connects (the main input first,
    /// then extra images in order); nil: all. The others read as `unconnectedImageContents`, as ISF hosts
    /// leave an image input without a source empty.
    package init(shader: UserShader, parameters: ParameterValues? = nil, trusted: Bool = false,
                connectedImages: Int? = nil,
                imageLoader: @escaping ShaderImageLoader = UserShaderKernel.noImageLoader) throws {
        self.shader = shader
        let values = try parameters ?? ParameterValues(specs: Self.parameterSpecs(for: shader))
        // ShaderToy: what the channels read decides the passes and how many streams the shader takes.
        let plan = shader.kind == .shadertoy ? try ShaderToyPlan(shader: shader, parameters: values) : nil
        let all = (shader.inputImage.map { [$0] } ?? []) + shader.extraImageInputs + (plan?.extraStreamNames ?? [])
        let connected = min(max(connectedImages ?? all.count, shader.inputImage == nil ? 0 : 1), all.count)
        self.imageInputs = Array(all.prefix(connected))
        self.unconnectedImages = Array(all.dropFirst(connected))
        self.inputCount = imageInputs.count
        self.parameters = values
        self.trusted = trusted
        self.imageLoader = imageLoader
        self.fused = Self.fusedForm(of: shader)
        self.shaderToyPlan = plan
        noteEvents(from: nil)
    }

    /// This shader with only `count` of its image inputs connected (see `init`), or nil when `count` is
    /// not fewer than it takes or leaves out the main input.
    package func connecting(_ count: Int) throws -> UserShaderKernel? {
        let least = shader.inputImage == nil ? 0 : 1
        guard count < inputCount, count >= least else { return nil }
        return try UserShaderKernel(shader: shader, parameters: parameters, trusted: trusted, connectedImages: count,
                                    imageLoader: imageLoader)
    }

    // MARK: Parameters

    /// Numbers for WIDTH/HEIGHT expressions: float, long (its value), bool and event inputs.
    private var numericValues: [String: Double] {
        var values: [String: Double] = [:]
        for parameter in shader.parameters {
            if let value = uniformInt(parameter) { values[parameter.name] = Double(value) }
            else if parameter.type == .float { values[parameter.name] = parameters.double(parameter.name) }
        }
        return values
    }

    /// The int uniform of a long, bool or event parameter.
    private func uniformInt(_ parameter: ShaderParameter) -> Int? {
        switch parameter.type {
        case .long:
            if case .choice(let label)? = parameters[parameter.name], let index = parameter.labels.firstIndex(of: label),
               index < parameter.values.count {
                return parameter.values[index]
            }
            return parameters.int(parameter.name)
        case .bool: return parameters.bool(parameter.name) ? 1 : 0
        case .event: return pendingEvents.contains(parameter.name) ? 1 : 0
        default: return nil
        }
    }

    private func noteEvents(from old: ParameterValues?) {
        for parameter in shader.parameters where parameter.type == .event {
            if parameters.bool(parameter.name), old.map({ !$0.bool(parameter.name) }) ?? true {
                pendingEvents.insert(parameter.name)
            }
        }
    }

    // MARK: FilterKernel

    package var isPointwise: Bool { fused != nil }
    package var expressionReadsInputs: Bool { fused != nil }
    package var cost: Int { fused != nil ? 0 : 1 }
    package var library: String { fused?.library ?? "" }

    package var expression: String {
        if let fused { return fused.expression }
        let last = inputCount + (shaderToyPlan.map { $0.buffers.count + 1 } ?? shader.passes.count) - 1
        return """
            vec4 $main(vec2 p) {
                return texture($pass\(last), vec2(p.x / $isf_outSize.x, 1.0 - p.y / $isf_outSize.y));
            }

            """
    }

    package func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        self.sourceSize = sourceSize
        return renderSize(inputSizes)
    }

    private func renderSize(_ inputSizes: [Size]) -> Size {
        shader.inputImage != nil ? inputSizes[0] : sourceSize
    }

    package var prepasses: [KernelPrepass] {
        guard fused == nil else { return [] }
        var list: [KernelPrepass] = []
        for index in 0..<inputCount {
            list.append(KernelPrepass(main: """
                void main() {
                    prism_out = $in\(index)(vec2(gl_FragCoord.x, $isf_inSize\(index).y - gl_FragCoord.y));
                }

                """, size: { $0[index] }))
        }
        if let shaderToyPlan { return list + shaderToyPrepasses(shaderToyPlan) }
        let sizes = targetSizes()
        for (index, pass) in shader.passes.enumerated() {
            list.append(KernelPrepass(main: passSource(index, program: pass.program), format: pass.float ? .rgba32f : nil,
                                      persistent: pass.persistent && pass.target != nil,
                                      vertex: pass.vertex.map { passSource(index, program: $0, isVertex: true) },
                                      size: { sizes($0)[index] }))
        }
        return list
    }

    /// The size of every pass's target for the input sizes, with the current parameter values.
    private func targetSizes() -> @Sendable ([Size]) -> [Size] {
        let values = numericValues, passes = shader.passes, hasInput = shader.inputImage != nil, source = sourceSize
        return { inputSizes in
            let render = hasInput ? inputSizes[0] : source
            return passes.map { pass in
                Size(width: pass.width?.pixels(width: render.width, height: render.height, inputs: values, fallback: render.width) ?? render.width,
                     height: pass.height?.pixels(width: render.width, height: render.height, inputs: values, fallback: render.height) ?? render.height)
            }
        }
    }

    /// Every pass's WIDTH and HEIGHT before they are truncated to a texture size: its `RENDERSIZE` and its
    /// target's `IMG_SIZE`, as both reference renderers give them (the spec: RENDERSIZE "is set to the
    /// rendering size (in pixels) of the current rendering pass", the size being the expression's value).
    private func targetExtents() -> @Sendable ([Size]) -> [SIMD2<Float>] {
        let values = numericValues, passes = shader.passes, hasInput = shader.inputImage != nil, source = sourceSize
        return { inputSizes in
            let render = hasInput ? inputSizes[0] : source
            return passes.map { pass in
                SIMD2(Float(pass.width?.extent(width: render.width, height: render.height, inputs: values, fallback: render.width)
                            ?? Double(render.width)),
                      Float(pass.height?.extent(width: render.width, height: render.height, inputs: values, fallback: render.height)
                            ?? Double(render.height)))
            }
        }
    }

    /// The uniform that stands for `RENDERSIZE` in pass `index` when the pass's size is an expression (its
    /// value may have a fraction); nil where RENDERSIZE is the pass's texture size.
    func renderSizeUniform(_ index: Int) -> String? {
        guard shader.kind == .isf, index < shader.passes.count else { return nil }
        let pass = shader.passes[index]
        return pass.target != nil && (pass.width != nil || pass.height != nil) ? "$isf_renderSize\(index)" : nil
    }


    /// The author's program (fragment or vertex) for ISF pass `index` as a prepass: our output, our
    /// samplers, a constant PASSINDEX.
    func passSource(_ index: Int, program: ShaderProgramSource, isVertex: Bool = false,
                    samplers overrides: [String: String] = [:], declarations: [String] = []) -> String {
        var samplers: [String: String] = [:]
        for (input, name) in imageInputs.enumerated() { samplers[name] = "$pass\(input)" }
        for name in unconnectedImages { samplers[name] = "$isf_empty" }
        for (other, pass) in shader.passes.enumerated() {
            guard let target = pass.target else { continue }
            let readable = other < index || (pass.persistent && pass.target != nil)
            samplers[target] = readable ? "$pass\(inputCount + other)" : "$isf_empty"
        }
        if shader.kind == .shadertoy {
            for channel in 1...3 { samplers["iChannel\(channel)"] = "$isf_empty" }
        }
        samplers.merge(overrides) { $1 }
        var lines = ["uniform sampler2D $isf_empty;"] + declarations
        for (number, text) in splitLines(program.source).enumerated() {
            let generated = number >= program.lineMap.origins.count || program.lineMap.origins[number] == nil
            let declaration = Self.declaration(text)
            if text.trimmingLeadingWhitespace().hasPrefix("#version") {
                lines.append("")
            } else if generated, text == "uniform int PASSINDEX;" {
                lines.append("const int PASSINDEX = \(index);")
            } else if generated, text == "uniform vec2 RENDERSIZE;", let renderSize = renderSizeUniform(index) {
                lines.append("uniform vec2 \(renderSize);")
                lines.append("#define RENDERSIZE \(renderSize)")
            } else if let (kind, name) = declaration, kind == "sampler2D", let replacement = samplers[name] {
                lines.append("#define \(name) \(replacement)")
            } else if !isVertex, let (kind, name) = declaration, kind == "out" {
                lines.append("#define \(name) prism_out")
            } else {
                lines.append(text)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `("sampler2D", name)` for `uniform [precision] sampler2D name;`, `("out", name)` for
    /// `[layout(…)] out [precision] vec4 name;`; nil for other lines.
    static func declaration(_ line: String) -> (String, String)? {
        var text = line
        if let comment = text.range(of: "//") { text = String(text[..<comment.lowerBound]) }
        text = text.trimmingLeadingWhitespace().trimmingTrailingWhitespace()
        if text.hasPrefix("layout"), let close = text.firstIndex(of: ")") {
            text = String(text[text.index(after: close)...]).trimmingLeadingWhitespace()
        }
        guard text.hasSuffix(";") else { return nil }
        var words = text.dropLast().split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        words.removeAll { ["lowp", "mediump", "highp"].contains($0) }
        guard words.count == 3 else { return nil }
        if words[0] == "uniform", words[1] == "sampler2D" { return ("sampler2D", words[2]) }
        if words[0] == "out", words[1] == "vec4" { return ("out", words[2]) }
        return nil
    }

    // MARK: GPU

    /// Renderers that prepared this kernel and have not released it.
    private var gpuUsers = 0

    package func releaseGPUResources() {
        gpuUsers -= 1
        if gpuUsers <= 0 {
            emptyTexture = nil
            importedTextures.removeAll()
            channelTextures.removeAll()
            audioTextures.removeAll()
            audioFrame = nil
        }
    }

    package func prepare() throws {
        gpuUsers += 1
        do { try prepareResources() } catch {
            releaseGPUResources()
            throw error
        }
    }

    private func prepareResources() throws {
        try KernelContextError.check(emptyTexture?.thread, filter: shader.path)
        if emptyTexture == nil {
            let empty = try Texture(size: Size(width: 1, height: 1), format: .rgba8)
            let zero = [UInt8](repeating: 0, count: 4)
            zero.withUnsafeBytes { empty.upload($0.baseAddress!, rowBytes: 4) }
            emptyTexture = empty
        }
        for image in shader.importedImages where importedTextures[image.name] == nil {
            importedTextures[image.name] = try loadImage(image.resolvedPath,
                                                         what: "imported image '\(image.name)' from \(image.resolvedPath)")
        }
        try prepareShaderToyChannels()
        guard !trusted else { return }
        try validate()
        // The fused form is a rewrite of the author's code: if it does not compile on its own (a
        // construct the rewrite does not handle), run the shader as passes instead.
        if let fused {
            let source = FrameShaders.header + "vec4 t_in0(vec2 p) { return vec4(p, 0.0, 1.0); }\n"
                + (CompiledPass.Member.declarations(of: self) + fused.library + fused.expression)
                    .replacingOccurrences(of: "$", with: "t_")
                + "out vec4 prism_out;\nvoid main() { prism_out = t_main(gl_FragCoord.xy); }\n"
            if (try? ProgramCache.current.program(label: shader.path + " (fused)", fragment: source)) == nil { self.fused = nil }
        }
    }

    /// Compiles each distinct translated program as it is; errors come back in the author's lines.
    package func validate() throws {
        var seen = Set<String>()
        for pass in shader.passes where seen.insert(pass.program.source).inserted {
            do {
                _ = try ProgramCache.current.program(label: shader.path, vertex: pass.vertex?.source ?? UserShader.vertexShaderSource,
                                      fragment: pass.program.source, drawsQuad: pass.vertex != nil)
            } catch let error as ShaderCompileError {
                // Errors of the author's vertex shader are reported in the .vs file's lines.
                if error.stage == .vertex, let vertex = pass.vertex, let path = shader.vertexPath {
                    throw UserShaderCompileError(file: path, diagnostics: vertex.diagnostics(fromLog: error.log, file: path),
                                                 log: error.log)
                }
                throw UserShaderCompileError(file: shader.path,
                                             diagnostics: pass.program.diagnostics(fromLog: error.log, file: shader.path),
                                             log: error.log)
            }
        }
        try validateShaderToyBuffers()
    }

    /// DATE, recomputed from the calendar once a second (Calendar is too heavy for every frame). Whole
    /// seconds since midnight, as both the reference renderer and the Vidvox editor send it.
    private var dateCache: (second: Double, value: SIMD4<Double>)?

    private func currentDate() -> SIMD4<Double> {
        let second = Date().timeIntervalSince1970.rounded(.down)
        if dateCache?.second != second { dateCache = (second, Self.date(Date(timeIntervalSince1970: second))) }
        return dateCache!.value
    }

    /// The uniforms, as data. In the fused form the planner declares them under the node's prefix (`$U`
    /// + the ISF name); run as passes, the author's text (with the ISF prelude) declares them under their
    /// own names and only their values come from here (ShaderToy's likewise). Audio inputs are set in
    /// `setUniforms` (textures refilled per frame).
    public var uniforms: [KernelUniform] {
        let isFused = fused != nil, prefix = isFused ? "$U" : ""
        func declared(_ name: String, _ type: UniformType, _ source: KernelUniform.Source) -> KernelUniform {
            KernelUniform(prefix + name, type, inSource: !isFused, source)
        }
        var list: [KernelUniform] = []
        if !isFused {
            list += (0..<inputCount).map { KernelUniform("$isf_inSize\($0)", .vec2, .inputSize($0)) }
            list.append(KernelUniform("$isf_outSize", .vec2, .outputSize))
        }
        switch shader.kind {
        case .isf, .glsl:
            list += [
                declared("TIME", .float, .time),
                declared("TIMEDELTA", .float, .computed { .float(Float($0.frame.timeDelta)) }),
                declared("FRAMEINDEX", .int, .computed { .int(Int32(truncatingIfNeeded: $0.frame.frameIndex)) }),
                declared("RENDERSIZE", .vec2, .outputSize),
                declared("DATE", .vec4, .computed { [self] _ in .vec4(currentDate()) }),
            ]
        case .shadertoy:
            list += shaderToyUniforms { [self] in currentDate() }
        }
        for parameter in shader.parameters {
            guard let type = UniformType(rawValue: parameter.type.glslType) else { continue }
            list.append(declared(parameter.name, type, .computed { [self] inputs in parameterValue(parameter, frame: inputs.frame) }))
        }
        for (index, image) in imageInputs.enumerated() {
            list.append(declared(GLSLRewriter.sizeUniform(image), .vec2, .inputSize(index)))
        }
        guard !isFused else { return list }
        for image in unconnectedImages {
            list.append(declared(GLSLRewriter.sizeUniform(image), .vec2, .outputSize))
        }
        let extents = targetExtents()
        for (index, pass) in shader.passes.enumerated() {
            guard let target = pass.target else { continue }
            let extent = KernelUniform.Source.computed { inputs in
                let extent = extents(inputs.inputSizes)[index]
                return .vec2(extent.x, extent.y)
            }
            list.append(declared(GLSLRewriter.sizeUniform(target), .vec2, extent))
            if let renderSize = renderSizeUniform(index) { list.append(KernelUniform(renderSize, .vec2, inSource: true, extent)) }
        }
        for image in shader.importedImages {
            list.append(declared(GLSLRewriter.sizeUniform(image.name), .vec2, .computed { [self] _ in
                let size = importedTextures[image.name]?.size ?? Size(width: 0, height: 0)
                return .vec2(Float(size.width), Float(size.height))
            }))
        }
        return list
    }

    /// Imported images and the empty image unconnected inputs read, run as passes (declared by the
    /// passes' text).
    public var textures: [KernelTexture] {
        guard fused == nil else { return [] }
        return shader.importedImages.map { image in
            KernelTexture(image.name, .sampler2D, inSource: true) { [self] in importedTextures[image.name] }
        } + shaderToyTextures + [KernelTexture("$isf_empty", .sampler2D, inSource: true) { [self] in emptyTexture }]
    }

    /// A parameter's value this frame (an event is true for one frame after it fires).
    private func parameterValue(_ parameter: ShaderParameter, frame: FrameContext) -> UniformValue {
        if parameter.type == .event { advanceEvents(frame: frame) }
        if let value = uniformInt(parameter) { return .int(Int32(truncatingIfNeeded: value)) }
        if parameter.name == "progress", parameter.type == .float, Self.isTransition(shader),
           !shader.parameters.contains(where: { $0.name == "duration" }), parameters.double("duration") > 0 {
            return .float(Float(TransitionKernel.progress(parameters, time: frame.time)))
        }
        switch parameter.type {
        case .float: return .float(Float(parameters.double(parameter.name)))
        case .vector3:
            let c = parameters.color(parameter.name)
            return .vec3(Float(c.x), Float(c.y), Float(c.z))
        case .point2D: return .vec2(parameters.point(parameter.name))
        default: return .vec4(parameters.color(parameter.name))
        }
    }

    /// Events fired since the last frame are sent for one frame (the same answer for every pass of it).
    private func advanceEvents(frame: FrameContext) {
        if let sent = eventsSentAt, sent != frame.frameIndex {
            pendingEvents.removeAll()
            eventsSentAt = nil
        }
        if !pendingEvents.isEmpty, eventsSentAt == nil { eventsSentAt = frame.frameIndex }
    }

    /// What `uniforms` and `textures` cannot declare: the audio inputs, whose textures are refilled (and
    /// may be made or dropped) each frame.
    public func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext) {
        advanceEvents(frame: frame)
        guard fused == nil else { return }
        bindAudio(uniforms, frame: frame)
    }

    /// Fills and binds each audio input's texture from `frame.audio` (see `AudioWindow.waveformImage` and
    /// `spectrumImage`): RGBA16F, r = g = b = the value, a = 1, one row per channel from the first
    /// (ISF's y = 0). Without sound (a graph rendered outside an engine that feeds it) the input reads as
    /// the empty image; the engine refuses to start such a graph on an input without audio.
    private func bindAudio(_ uniforms: KernelUniforms, frame: FrameContext) {
        let inputs = shader.audioInputs
        guard !inputs.isEmpty else { return }
        let fresh = audioFrame.map { $0.index != frame.frameIndex || $0.time != frame.time } ?? true
        if fresh { audioFrame = (frame.frameIndex, frame.time) }
        for input in inputs {
            if fresh || audioTextures[input.name] == nil { refillAudio(input, window: frame.audio) }
            guard let texture = audioTextures[input.name] else {
                uniforms.set(GLSLRewriter.sizeUniform(input.name), 1, 1)
                if let emptyTexture { uniforms.bind(input.name, emptyTexture) }
                continue
            }
            uniforms.set(GLSLRewriter.sizeUniform(input.name), Float(texture.size.width), Float(texture.size.height))
            uniforms.bind(input.name, texture)
        }
    }

    private func refillAudio(_ input: ShaderParameter, window: AudioWindow?) {
        guard let window else {
            audioTextures[input.name] = nil
            return
        }
        let maxWidth = input.maximum?.scalar.map { Int($0) }
        let (width, rows) = input.type == .audio ? window.waveformImage(maxWidth: maxWidth) : window.spectrumImage(maxWidth: maxWidth)
        let size = Size(width: width, height: rows.count)
        if audioTextures[input.name]?.size != size {
            // Only when the channel count changes: every later frame refills the same texture.
            audioTextures[input.name] = try? Texture(size: size, format: .rgba16f)
        }
        guard let texture = audioTextures[input.name] else { return }
        var texels = [Float16](repeating: 1, count: size.pixelCount * 4)
        for (row, values) in rows.enumerated() {
            for (column, value) in values.enumerated() {
                let v = Float16(value), at = (row * width + column) * 4
                texels[at] = v; texels[at + 1] = v; texels[at + 2] = v
            }
        }
        texels.withUnsafeBytes { texture.upload($0.baseAddress!, rowBytes: width * 8) }
    }

    /// An image file as a texture with its bottom row first (ISF's origin; ShaderToy's textures are
    /// flipped upright the same way); `mipmapped` also makes it repeat (ShaderToy's channel defaults).
    func loadImage(_ path: String, what: String, mipmapped: Bool = false) throws -> Texture {
        let size: Size, rgba: [UInt8]
        do { (size, rgba) = try imageLoader(path) } catch {
            throw InvalidRequest("\(shader.path): cannot load \(what): \(error)")
        }
        guard size.width > 0, size.height > 0, rgba.count == size.pixelCount * 4 else {
            throw InvalidRequest("\(path): the image loader returned \(rgba.count) bytes for \(size)")
        }
        var flipped = [UInt8](repeating: 0, count: rgba.count)
        let row = size.width * 4
        for y in 0..<size.height {
            flipped[(y * row)..<((y + 1) * row)] = rgba[((size.height - 1 - y) * row)..<((size.height - y) * row)]
        }
        let texture = try Texture(size: size, format: .rgba8, mipmapped: mipmapped, repeating: mipmapped)
        flipped.withUnsafeBytes { texture.upload($0.baseAddress!, rowBytes: row) }
        if mipmapped { texture.generateMipmaps() }
        return texture
    }

    /// ISF's DATE: year, month (1–12), day, whole seconds since midnight (local time; the reference renderer
    /// and the Vidvox editor both drop the fraction).
    static func date(_ now: Date = Date()) -> SIMD4<Double> {
        let calendar = Calendar(identifier: .gregorian)
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        let seconds = Double((c.hour ?? 0) * 3600 + (c.minute ?? 0) * 60 + (c.second ?? 0))
        return SIMD4(Double(c.year ?? 0), Double(c.month ?? 0), Double(c.day ?? 0), seconds)
    }

    // MARK: Images

    /// The loader when none was installed: imported images cannot be read (the error names the file).
    package static let noImageLoader: ShaderImageLoader = { path in
        throw InvalidRequest("no image reader is installed to read \(path) (prism installs one that reads PNG, JPEG, PPM and PAM)")
    }
}
