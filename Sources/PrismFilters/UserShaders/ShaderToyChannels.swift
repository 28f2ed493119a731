import Foundation
import PrismCore
import PrismGPU

/// What one of a ShaderToy shader's channels (`iChannel0`…`iChannel3`) reads.
///
/// Written the same way in the graph (`'tunnel.frag'(iChannel1=previous, iChannel2=../look/noise.png)`,
/// paths relative to the working directory) and in the shader file itself, one comment line per
/// channel (`// @iChannel1 buffer:bufA.frag`, paths relative to the file); the graph wins.
///
/// - `input`: the filtered frame (iChannel0's default);
/// - `input2`…`input4`: the graph's second… fourth stream into the shader, in the order of its labels
///   (`[in][b]'x.frag'(iChannel1=input2)`); one the graph does not connect reads as transparent black;
/// - `previous`: this pass's own output of the frame before (transparent black on the first frame);
///   the pass then renders into a ping-ponged RGBA16F target, so feedback does not band;
/// - `none`: transparent black (iChannel1…3's default);
/// - `image:PATH`, or a path ending in `.png`, `.jpg`, `.jpeg`, `.ppm`, `.pgm`, `.pam`: an image read
///   once by the same loader as ISF imported images, with ShaderToy's texture defaults — upright
///   (its bottom row at v = 0), mipmapped (trilinear) and repeating;
/// - `buffer:PATH`: a buffer pass ("Buffer A"): another `mainImage` file rendered before the passes that
///   read it, at the output size, into an RGBA16F target (linear, clamped). A buffer's own channels come
///   from its file's `// @iChannelN` lines; `previous` there is the buffer's own last frame, as is naming
///   itself. Buffers render in the order they are first named (the image's channels 0…3, then each
///   buffer's); a buffer read by one that renders before it — or by itself — is read as it was at the end
///   of the previous frame, as on ShaderToy. At most four buffers.
package enum ShaderToyChannel: Hashable, Sendable, CustomStringConvertible {
    case input
    /// The graph's stream 2…4 into the shader.
    case stream(Int)
    case previous
    case none
    case image(String)
    case buffer(String)

    /// Image files a bare path may name (the tool's reader takes these).
    static let imageExtensions: Set<String> = ["png", "jpg", "jpeg", "ppm", "pgm", "pam"]

    /// The channel `text` names; relative paths resolve against `base`'s directory (a shader file) or,
    /// with no base, stay relative to the working directory.
    package static func parse(_ text: String, relativeTo base: String? = nil) throws(InvalidRequest) -> ShaderToyChannel {
        let word = text.trimmingCharacters(in: .whitespaces)
        func path(_ p: String) -> String {
            base.map { ShaderPaths.resolve(p, relativeTo: $0) } ?? ShaderPaths.normalise(p)
        }
        switch word {
        case "input": return .input
        case "previous": return .previous
        case "none": return .none
        case "input2", "input3", "input4": return .stream(Int(String(word.last!))!)
        default: break
        }
        for (prefix, what, channel) in [("buffer:", "a shader file, e.g. buffer:bufA.frag", ShaderToyChannel.buffer),
                                        ("image:", "an image file, e.g. image:noise.png", ShaderToyChannel.image)] where word.hasPrefix(prefix) {
            let file = String(word.dropFirst(prefix.count))
            guard !file.isEmpty else { throw InvalidRequest("\(prefix) needs \(what)") }
            return channel(path(file))
        }
        if imageExtensions.contains((word as NSString).pathExtension.lowercased()) { return .image(path(word)) }
        throw InvalidRequest("unknown channel '\(word)' (input, input2…input4, previous, none, buffer:FILE.frag, or an image file)")
    }

    package var description: String {
        switch self {
        case .input: "input"
        case .stream(let number): "input\(number)"
        case .previous: "previous"
        case .none: "none"
        case .image(let path): (path as NSString).pathExtension.isEmpty ? "image:" + path : path
        case .buffer(let path): "buffer:" + path
        }
    }

    /// `iChannel0`…`iChannel3`.
    package static let names = (0..<4).map { "iChannel\($0)" }

    /// The defaults when neither the file nor the graph says: the input on channel 0, nothing elsewhere.
    static let defaults: [ShaderToyChannel] = [.input, .none, .none, .none]

    /// The `// @iChannelN WHAT` lines of a ShaderToy file (relative paths against the file), over the defaults.
    static func declared(in lines: [SourceLine]) throws(ShaderLoadError) -> [ShaderToyChannel] {
        var channels = defaults
        var seen = Set<Int>()
        for line in lines {
            let trimmed = line.text.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("//") else { continue }
            let comment = String(trimmed.dropFirst(2)).trimmingCharacters(in: .whitespaces)
            guard comment.hasPrefix("@iChannel") else { continue }
            let column = (line.text.range(of: "@iChannel").map { line.text.distance(from: line.text.startIndex, to: $0.lowerBound) } ?? 0) + 1
            func fail(_ message: String) -> ShaderLoadError {
                ShaderLoadError(file: line.file, line: line.line, column: column, message: message)
            }
            let words = comment.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true).map(String.init)
            let name = words[0].dropFirst()  // "iChannelN"
            guard let number = Int(name.dropFirst("iChannel".count)), (0..<4).contains(number) else {
                throw fail("'\(name)' is not a channel: ShaderToy has iChannel0…iChannel3")
            }
            guard words.count == 2 else {
                throw fail("@\(name) needs what it reads: input, input2…input4, previous, none, buffer:FILE.frag or an image file")
            }
            guard seen.insert(number).inserted else { throw fail("iChannel\(number) is bound twice") }
            do { channels[number] = try parse(words[1], relativeTo: line.file) } catch {
                throw fail("iChannel\(number): \(error.description)")
            }
        }
        return channels
    }
}

/// What a ShaderToy kernel renders, resolved from its channel parameters when it is made: the buffer
/// passes in order, what every pass's channels read, and which passes keep their last frame.
struct ShaderToyPlan {
    struct Buffer {
        var path: String
        var shader: UserShader
        var channels: [ShaderToyChannel]
        /// Read before it renders in a frame (by itself or by an earlier buffer): ping-ponged.
        var persistent: Bool
    }

    var channels: [ShaderToyChannel]
    var buffers: [Buffer]
    /// The image pass reads `previous`.
    var imagePersistent: Bool
    /// Every image file a pass reads, once each.
    var images: [String]

    static let maximumBuffers = 4

    /// The plan for `shader` (a ShaderToy file) with its channel parameters' values.
    init(shader: UserShader, parameters: ParameterValues, fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) throws {
        var channels: [ShaderToyChannel] = []
        for (number, name) in ShaderToyChannel.names.enumerated() {
            if let text = parameters.text(name) {
                // A graph value (relative to the working directory), or the default: the file's line, already resolved.
                do { channels.append(try ShaderToyChannel.parse(text)) } catch {
                    throw InvalidRequest("\(name): \(error.description)")
                }
            } else {
                channels.append(shader.shaderToyChannels[number])
            }
        }
        self.channels = channels
        imagePersistent = channels.contains(.previous)
        var buffers: [Buffer] = []
        var images: [String] = []
        func note(_ channel: ShaderToyChannel, in name: String) throws {
            switch channel {
            case .image(let path):
                guard fileExists(path) else { throw InvalidRequest("\(name): no image file \(path)") }
                if !images.contains(path) { images.append(path) }
            case .buffer(let path):
                guard !buffers.contains(where: { $0.path == path }) else { return }
                guard fileExists(path) else { throw InvalidRequest("\(name): no buffer shader \(path)") }
                guard buffers.count < Self.maximumBuffers else {
                    throw InvalidRequest("\(name): at most \(Self.maximumBuffers) buffer passes (as ShaderToy's A…D)")
                }
                let buffer = try UserShader.load(path: path)
                guard buffer.kind == .shadertoy else {
                    throw InvalidRequest("\(name): the buffer \(path) must be a ShaderToy shader (define mainImage)")
                }
                buffers.append(Buffer(path: path, shader: buffer, channels: buffer.shaderToyChannels, persistent: false))
            default: break
            }
        }
        for (number, channel) in channels.enumerated() { try note(channel, in: "iChannel\(number)") }
        var index = 0
        while index < buffers.count {  // buffers named by buffers join the list as they are found
            for (number, channel) in buffers[index].channels.enumerated() {
                try note(channel, in: "\(buffers[index].path): iChannel\(number)")
            }
            index += 1
        }
        for (reader, buffer) in buffers.enumerated() {
            for channel in buffer.channels {
                switch channel {
                case .previous: buffers[reader].persistent = true
                case .buffer(let path):
                    if let read = buffers.firstIndex(where: { $0.path == path }), read >= reader { buffers[read].persistent = true }
                default: break
                }
            }
        }
        self.buffers = buffers
        self.images = images
    }

    /// How many graph streams the channels read (1: the filtered one only).
    var streams: Int {
        (buffers.flatMap(\.channels) + channels).reduce(1) { most, channel in
            if case .stream(let number) = channel { return max(most, number) }
            return most
        }
    }

    /// The kernel's names for the streams after the first (they name no sampler: the channels map to them).
    var extraStreamNames: [String] { streams > 1 ? (2...streams).map { "input\($0)" } : [] }

    /// Pass `index` among the ShaderToy passes: the buffers, then the image pass (`buffers.count`).
    func channels(ofPass pass: Int) -> [ShaderToyChannel] {
        pass < buffers.count ? buffers[pass].channels : channels
    }

    func persistent(_ pass: Int) -> Bool {
        pass < buffers.count ? buffers[pass].persistent : imagePersistent
    }

    /// Every file the plan reads, for hot reload.
    var files: [String] { buffers.flatMap { [$0.path] + $0.shader.dependencies.dropFirst() } + images }
}

extension ShaderToyChannel {
    /// Parameter specs a ShaderToy shader adds: its channels (text, defaults from the file) and `iMouse`.
    static func specs(for shader: UserShader) -> [ParameterSpec] {
        guard shader.kind == .shadertoy else { return [] }
        var specs = shader.shaderToyChannels.enumerated().map { number, channel in
            ParameterSpec("iChannel\(number)", .text, default: .text(channel.description),
                          "what iChannel\(number) reads: input, input2…input4, previous, none, buffer:FILE.frag or an image file")
        }
        specs.append(ParameterSpec("iMouse", .point, default: .point(SIMD2(0, 0)),
                                   "x:y in pixels from the bottom left, held down there (run, record); prism dev takes the page's pointer"))
        return specs
    }
}

extension ParameterValues {
    /// The text of a `.text` parameter, when it is set.
    func text(_ name: String) -> String? {
        if case .text(let text)? = self[name] { return text }
        return nil
    }
}

// MARK: The kernel's ShaderToy passes

extension UserShaderKernel {
    /// The GLSL name of image channel texture `index`.
    static func shaderToyImageSampler(_ index: Int) -> String { "$st_image\(index)" }

    /// The kernel's pass number (its `$passN`) of ShaderToy pass `pass` (buffers first, then the image).
    func shaderToyPassNumber(_ pass: Int) -> Int { inputCount + pass }

    /// The prepasses after the input copies: each buffer, then the image pass.
    func shaderToyPrepasses(_ plan: ShaderToyPlan) -> [KernelPrepass] {
        var list: [KernelPrepass] = []
        let programs = plan.buffers.map { $0.shader.passes[0].program } + [shader.passes[0].program]
        let hasInput = shader.inputImage != nil, source = sourceSize
        for (pass, program) in programs.enumerated() {
            let persistent = plan.persistent(pass)
            // Buffers are float, as ShaderToy's; an image pass that feeds back on itself too, so its decay does not band.
            let float = pass < plan.buffers.count || persistent
            list.append(KernelPrepass(main: passSource(pass, program: program,
                                                       samplers: shaderToySamplers(plan, pass: pass),
                                                       declarations: shaderToyDeclarations(plan, pass: pass)),
                                      format: float ? .rgba16f : nil, persistent: persistent,
                                      size: { hasInput ? $0[0] : source }))
        }
        return list
    }

    /// Sampler replacements of ShaderToy pass `pass`.
    private func shaderToySamplers(_ plan: ShaderToyPlan, pass: Int) -> [String: String] {
        var samplers: [String: String] = [:]
        for (number, channel) in plan.channels(ofPass: pass).enumerated() {
            let name = ShaderToyChannel.names[number]
            switch channel {
            case .input: samplers[name] = inputCount > 0 ? "$pass0" : "$isf_empty"
            case .stream(let stream): samplers[name] = stream <= inputCount ? "$pass\(stream - 1)" : "$isf_empty"
            case .previous: samplers[name] = "$pass\(shaderToyPassNumber(pass))"
            case .none: samplers[name] = "$isf_empty"
            case .image(let path): samplers[name] = Self.shaderToyImageSampler(plan.images.firstIndex(of: path)!)
            case .buffer(let path): samplers[name] = "$pass\(shaderToyPassNumber(plan.buffers.firstIndex { $0.path == path }!))"
            }
        }
        return samplers
    }

    /// Declarations ShaderToy pass `pass` needs besides the preamble's: the image samplers it reads, and
    /// its own `iChannelResolution` and `iChannelTime` (each pass's channels differ; the preamble's
    /// declarations, after these macros, declare the pass's own arrays).
    private func shaderToyDeclarations(_ plan: ShaderToyPlan, pass: Int) -> [String] {
        var lines: [String] = []
        for (index, path) in plan.images.enumerated() where plan.channels(ofPass: pass).contains(.image(path)) {
            lines.append("uniform sampler2D \(Self.shaderToyImageSampler(index));")
        }
        lines.append("#define iChannelResolution $st_channelResolution\(pass)")
        lines.append("#define iChannelTime $st_channelTime\(pass)")
        return lines
    }

    /// What ShaderToy pass `pass`'s channel holds, as `iChannelResolution` gives it: input → the input's
    /// size, previous and buffers → the output size, images → the image's, none → 0.
    func shaderToyChannelSize(_ channel: ShaderToyChannel, inputSizes: [Size], outputSize: Size) -> SIMD3<Float> {
        func input(_ index: Int) -> SIMD3<Float> {
            index < inputSizes.count ? SIMD3(Float(inputSizes[index].width), Float(inputSizes[index].height), 1) : .zero
        }
        switch channel {
        case .input: return input(0)
        case .stream(let number): return number <= inputCount ? input(number - 1) : .zero
        case .previous, .buffer: return SIMD3(Float(outputSize.width), Float(outputSize.height), 1)
        case .image(let path): return channelTextures[path].map { SIMD3(Float($0.size.width), Float($0.size.height), 1) } ?? .zero
        case .none: return .zero
        }
    }

    /// ShaderToy's uniforms, shared by every pass of the kernel (`iChannelResolution` is per pass), as
    /// data: the author's text (the ShaderToy preamble) declares them; `date` gives ISF's DATE now.
    func shaderToyUniforms(date: @escaping () -> SIMD4<Double>) -> [KernelUniform] {
        func uniform(_ name: String, _ type: UniformType, _ source: KernelUniform.Source) -> KernelUniform {
            KernelUniform(name, type, inSource: true, source)
        }
        var list = [
            uniform("iResolution", .vec3, .computed { .vec3(Float($0.outputSize.width), Float($0.outputSize.height), 1) }),
            uniform("iTime", .float, .time),
            uniform("iTimeDelta", .float, .computed { .float(Float($0.frame.timeDelta)) }),
            // The run's nominal rate; without one (a variable-rate file), the rate of the last frame.
            uniform("iFrameRate", .float, .computed { inputs in
                let frame = inputs.frame
                return .float(Float(frame.frameRate > 0 ? frame.frameRate : (frame.timeDelta > 0 ? 1 / frame.timeDelta : 0)))
            }),
            uniform("iFrame", .int, .computed { .int(Int32(truncatingIfNeeded: $0.frame.frameIndex)) }),
            uniform("iMouse", .vec4, .computed { [self] inputs in
                .vec4(inputs.frame.mouse ?? Self.heldMouse(parameters.point("iMouse")))
            }),
            // ShaderToy's month counts from 0 (JavaScript's Date.getMonth()); ISF's DATE from 1.
            uniform("iDate", .vec4, .computed { _ in
                let d = date()
                return .vec4(SIMD4(d.x, d.y - 1, d.z, d.w))
            }),
        ]
        guard let plan = shaderToyPlan else { return list }
        for pass in 0...plan.buffers.count {
            for (number, channel) in plan.channels(ofPass: pass).enumerated() {
                list.append(uniform("$st_channelResolution\(pass)[\(number)]", .vec3, .computed { [self] inputs in
                    let size = shaderToyChannelSize(channel, inputSizes: inputs.inputSizes, outputSize: inputs.outputSize)
                    return .vec3(size.x, size.y, size.z)
                }))
                // ShaderToy gives a playback time to video (and sound) channels only: here the streams, at iTime.
                let playing: Bool = switch channel {
                case .input, .stream: true
                default: false
                }
                list.append(uniform("$st_channelTime\(pass)[\(number)]", .float,
                                    playing ? .time : .constant(.float(0))))
            }
        }
        // A buffer's own `@param` uniforms: the image shader's value where the names match (declared with
        // its parameters), their defaults otherwise.
        for buffer in plan.buffers {
            for parameter in buffer.shader.parameters where !shader.parameters.contains(where: { $0.name == parameter.name }) {
                guard let spec = Self.spec(for: parameter) else { continue }
                let value: UniformValue? = switch (spec.defaultValue, parameter.type) {
                case (.float(let v), _): .float(Float(v))
                case (.int(let v), _): .int(Int32(truncatingIfNeeded: v))
                case (.bool(let v), _): .int(Int32(v ? 1 : 0))
                case (.choice(let label), _):
                    .int(Int32(truncatingIfNeeded: parameter.labels.firstIndex(of: label).map { parameter.values[$0] } ?? 0))
                case (.color(let c), .vector3): .vec3(Float(c.x), Float(c.y), Float(c.z))
                case (.color(let c), _): .vec4(c)
                case (.point(let p), _): .vec2(p)
                default: nil
                }
                if let value { list.append(uniform(parameter.name, value.type, .constant(value))) }
            }
        }
        return list
    }

    /// The image channels' textures, declared by the passes that read them.
    var shaderToyTextures: [KernelTexture] {
        guard let plan = shaderToyPlan else { return [] }
        return plan.images.enumerated().map { index, path in
            KernelTexture(Self.shaderToyImageSampler(index), .sampler2D, inSource: true) { [self] in channelTextures[path] }
        }
    }

    /// `iMouse` for a pointer held down at `point` since before the first frame (ShaderToy: xy the position,
    /// z > 0 while the button is down, w < 0 once the click is no longer new); zero for 0:0 (no pointer).
    static func heldMouse(_ point: SIMD2<Double>) -> SIMD4<Double> {
        point == .zero ? .zero : SIMD4(point.x, point.y, point.x, -point.y)
    }

    /// Loads the channel images (once per kernel, on the GPU thread): upright, mipmapped, repeating.
    func prepareShaderToyChannels() throws {
        guard let plan = shaderToyPlan else { return }
        for path in plan.images where channelTextures[path] == nil {
            // ShaderToy's texture defaults: mipmapped (trilinear), repeating, flipped upright (vflip).
            channelTextures[path] = try loadImage(path, what: "the channel image \(path)", mipmapped: true)
        }
    }

    /// Compiles the buffers' programs; errors come back in the buffer file's lines.
    func validateShaderToyBuffers() throws {
        for buffer in shaderToyPlan?.buffers ?? [] {
            let program = buffer.shader.passes[0].program
            do {
                _ = try ProgramCache.current.program(label: buffer.path, vertex: UserShader.vertexShaderSource, fragment: program.source)
            } catch let error as ShaderCompileError {
                throw UserShaderCompileError(file: buffer.path, diagnostics: program.diagnostics(fromLog: error.log, file: buffer.path),
                                             log: error.log)
            }
        }
    }
}

// MARK: `prism filters FILE.frag`, hot reload

extension UserShader {
    /// The files the ShaderToy channels read, with each buffer's own sources and channels (a buffer that
    /// names itself or an earlier file is listed once).
    func shaderToyChannelFiles(visited: inout Set<String>) -> [String] {
        var files: [String] = []
        for channel in shaderToyChannels {
            switch channel {
            case .image(let path) where visited.insert(path).inserted:
                files.append(path)
            case .buffer(let path) where visited.insert(path).inserted:
                files.append(path)
                if let buffer = try? UserShader.load(path: path) {
                    files += buffer.dependencies.dropFirst() + buffer.shaderToyChannelFiles(visited: &visited)
                }
            default: break
            }
        }
        return files
    }
}

extension UserShader {
    /// ShaderToy's uniforms, in the order its documentation lists them.
    static let shaderToyUniforms = ["iResolution", "iTime", "iTimeDelta", "iFrameRate", "iFrame", "iChannelTime",
                                    "iChannelResolution", "iMouse", "iDate"] + ShaderToyChannel.names

    /// The ShaderToy names the author's code uses (comments aside).
    var shaderToyNamesUsed: Set<String> {
        let program = passes[0].program
        var used = Set<String>()
        for (number, text) in splitLines(program.source).enumerated()
        where number < program.lineMap.origins.count && program.lineMap.origins[number] != nil {
            let code = text.range(of: "//").map { String(text[..<$0.lowerBound]) } ?? text
            for word in code.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }) {
                if Self.shaderToyUniforms.contains(String(word)) { used.insert(String(word)) }
            }
        }
        return used
    }

    /// The lines `summary` adds for a ShaderToy shader: what it uses, what each channel reads and how to bind it.
    var shaderToySummary: [String] {
        let used = shaderToyNamesUsed
        let read = ShaderToyChannel.names.filter(used.contains)
        let uniforms = Self.shaderToyUniforms.filter { used.contains($0) && !ShaderToyChannel.names.contains($0) }
        var lines = ["  uses: " + uniforms.joined(separator: ", ").ifEmpty("none of ShaderToy's uniforms"),
                     "  reads " + (read.isEmpty ? "no channel" : read.joined(separator: ", ")) + "; channels (the file's `// @iChannelN WHAT` lines, "
                         + "or the graph: '\(path)'(iChannel1=previous)):"]
        for (number, channel) in shaderToyChannels.enumerated() {
            let note = read.contains("iChannel\(number)") ? "" : " (not read)"
            lines.append("    iChannel\(number): \(channel)\(note)")
            if case .buffer(let path) = channel, let buffer = try? UserShader.load(path: path), buffer.kind == .shadertoy {
                let read = ShaderToyChannel.names.filter(buffer.shaderToyNamesUsed.contains)
                lines.append("      that buffer reads " + (read.isEmpty ? "no channel" : read.map { name in
                    "\(name) = \(buffer.shaderToyChannels[ShaderToyChannel.names.firstIndex(of: name)!])"
                }.joined(separator: ", ")))
            }
        }
        lines.append("    WHAT: input (the filtered frame), input2…input4 (the graph's next streams: [in][b]'x.frag'), previous (this shader's last output), none, an image file "
                     + "(.png/.jpg/.ppm/.pam, or image:FILE), buffer:FILE.frag (a mainImage pass rendered first)")
        return lines
    }
}

private extension String {
    func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
