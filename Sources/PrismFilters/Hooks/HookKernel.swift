import Foundation
import PrismCore
import PrismGPU

/// Hook files that run as a single graph node: consecutive `'a.glsl', 'b.glsl'` in a graph form one group,
/// as mpv runs its `--glsl-shaders` list (Anime4K's "modes" are several files), ordered by stage, then file,
/// then pass (`HookPlan`). Each planned step is a prepass into an RGBA16F target (what the CNNs assume);
/// the expression reads the last one, placed by its rect.
///
/// OUTPUT is the run's output size when the run sets one (`--size`: `requestedOutputSize`), else the
/// group's input size; the group ends with a bilinear resize to it.
package final class HookKernel: ParameterizedKernel, OutputSizing {
    package let files: [HookFile]
    package var parameters: ParameterValues
    package var requestedOutputSize: Size?
    package let inputCount = 1
    private var plan: HookPlan?
    private var lookupTextures: [Int: Texture] = [:]
    private var gpuUsers = 0

    package init(files: [HookFile], parameters: ParameterValues? = nil) throws {
        self.files = files
        self.parameters = try parameters ?? ParameterValues(specs: Self.parameterSpecs(for: files))
        try Self.checkGroup(files)
    }

    /// The group `self` followed by `other` (consecutive hook nodes of a graph), keeping both's values.
    package func appending(_ other: HookKernel) throws -> HookKernel {
        let specs = Self.parameterSpecs(for: files + other.files)
        var given: [String: ParameterValue] = [:]
        for spec in specs {
            if let value = parameters[spec.name] ?? other.parameters[spec.name] { given[spec.name] = value }
        }
        let kernel = try HookKernel(files: files + other.files, parameters: try ParameterValues(specs: specs, given: given))
        kernel.requestedOutputSize = other.requestedOutputSize ?? requestedOutputSize
        return kernel
    }

    /// Static checks over the group: every BIND names something some pass, stage or texture can make, and
    /// parameter names do not clash between files.
    static func checkGroup(_ files: [HookFile]) throws {
        var made = Set(HookStage.allNames + ["HOOKED", "MAINPRESUB"])
        for file in files { for pass in file.passes { if let save = pass.save { made.insert(save) } } }
        var parameterFile: [String: String] = [:]
        for file in files {
            let lookups = Set(file.textures.map(\.name))
            for pass in file.passes {
                for (name, line) in pass.binds where !made.contains(name) && !lookups.contains(name) {
                    throw ShaderLoadError(file: file.path, line: line,
                                          message: "//!BIND \(name): no pass saves a texture of that name and no //!TEXTURE has it")
                }
            }
            for parameter in file.parameters {
                if let other = parameterFile[parameter.name], other != file.path {
                    throw ShaderLoadError(file: file.path, line: parameter.line,
                                          message: "//!PARAM \(parameter.name) is also a parameter of \(other), in the same group")
                }
                parameterFile[parameter.name] = file.path
            }
        }
    }

    // MARK: Parameters

    /// `//!PARAM`s as filter parameters: float → `.float(MIN...MAX)`, int/uint → `.int`, ENUM → `.choice`.
    package static func parameterSpecs(for files: [HookFile]) -> [ParameterSpec] {
        files.flatMap(\.parameters).map { p in
            let summary = p.description ?? ""
            if !p.names.isEmpty {
                return ParameterSpec(p.name, .choice(p.names), default: .choice(p.names[0]), summary)
            }
            switch p.type {
            case .float: return ParameterSpec(p.name, .float(p.minimum...p.maximum), default: .float(p.initial), summary)
            case .int, .uint:
                return ParameterSpec(p.name, .int(Int(p.minimum)...Int(p.maximum)), default: .int(Int(p.initial)), summary)
            }
        }
    }

    /// Each parameter's number now (an ENUM's index).
    private var values: [String: Double] {
        var values: [String: Double] = [:]
        for p in files.flatMap(\.parameters) {
            if !p.names.isEmpty {
                if case .choice(let name)? = parameters[p.name] { values[p.name] = Double(p.names.firstIndex(of: name) ?? 0) }
            } else if p.type == .float {
                values[p.name] = parameters.double(p.name)
            } else {
                values[p.name] = Double(parameters.int(p.name))
            }
        }
        return values
    }

    // MARK: FilterKernel

    package var textureInputs: Set<Int> { [0] }
    package var expressionReadsInputs: Bool { false }
    package var cost: Int { 4 }

    package func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        let input = inputSizes.first ?? sourceSize
        let plan = try HookPlan.make(files: files, inputSize: input, outputSize: requestedOutputSize ?? input, values: values)
        self.plan = plan
        return plan.outputSize
    }

    package var prepasses: [KernelPrepass] {
        guard let plan else { return [] }
        return plan.steps.map { step in
            let size = step.size
            var prepass = KernelPrepass(main: step.main, format: .rgba16f,
                                        compute: step.compute.map { KernelPrepass.ComputeShape(groups: $0.groups) },
                                        size: { _ in size })
            prepass.label = step.label
            return prepass
        }
    }

    package var expression: String {
        guard let plan else { return "vec4 $main(vec2 p) { return vec4(0.0); }\n" }
        let sampler: String
        switch plan.output.texture {
        case .input: sampler = "$src0"
        case .step(let index): sampler = "$pass\(index)"
        case .lookup(let index): sampler = "$lut\(index)"
        }
        let r = plan.output.rect, w = Double(plan.output.size.width), h = Double(plan.output.size.height)
        let o = plan.outputSize
        return """
            vec4 $main(vec2 p) {
                vec2 u = p / vec2(\(Double(o.width)), \(Double(o.height)));
                vec4 c = texture(\(sampler), vec2(\(r.x0 / w), \(r.y0 / h)) + u * vec2(\(r.width / w), \(r.height / h)));
                return \(plan.alphaFromInput ? "vec4(c.rgb, texture($src0, u).a)" : "c");
            }

            """
    }

    package var compileKey: String { "hooks" }

    package var uniforms: [KernelUniform] {
        var list: [KernelUniform] = [
            KernelUniform("$frame", .int, .computed { .int(Int32(truncatingIfNeeded: $0.frame.frameIndex + 1)) }),
            KernelUniform("$random", .float, .computed { .float(Self.random(frame: $0.frame.frameIndex)) }),
        ]
        for p in files.flatMap(\.parameters) where p.mode == .variable || p.mode == .dynamic {
            let name = p.name, type = p.type
            if type == .float {
                list.append(KernelUniform("$p_\(name)", .float, .computed { .float(Float($0.parameters?.double(name) ?? 0)) }))
            } else if !p.names.isEmpty {
                let names = p.names
                list.append(KernelUniform("$p_\(name)", .int, .computed { inputs in
                    guard case .choice(let chosen)? = inputs.parameters?[name] else { return .int(0) }
                    return .int(Int32(names.firstIndex(of: chosen) ?? 0))
                }))
            } else {
                list.append(KernelUniform("$p_\(name)", .int, .computed { .int(Int32(clamping: $0.parameters?.int(name) ?? 0)) }))
            }
        }
        return list
    }

    /// A number in 0..<1 per frame, the same for every pass of it (libplacebo steps a PRNG per pass; any
    /// uniform noise serves the shaders that use `random`, film grain).
    static func random(frame: Int) -> Float {
        var x = UInt64(bitPattern: Int64(frame)) &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        x ^= x >> 31
        return Float(x >> 40) / Float(1 << 24)
    }

    /// The group's `//!TEXTURE`s, numbered over the group in file order.
    private var allLookups: [HookTexture] { files.flatMap(\.textures) }

    package var textures: [KernelTexture] {
        allLookups.enumerated().map { index, texture in
            KernelTexture("$lut\(index)", texture.depth == nil ? .sampler2D : .sampler3D) { [self] in lookupTextures[index] }
        }
    }

    // MARK: GPU

    package func prepare() throws {
        gpuUsers += 1
        do {
            try KernelContextError.check(lookupTextures.values.first?.thread, filter: files.first?.path ?? "hooks")
            for (index, texture) in allLookups.enumerated() where lookupTextures[index] == nil {
                // 32-bit float tables stay 32-bit unless they are filtered (GLES cannot filter rgba32f everywhere).
                let format: TextureFormat = texture.format.kind == .float32 && !texture.linear ? .rgba32f : .rgba16f
                lookupTextures[index] = try Texture(lookup: Size(width: texture.width, height: texture.height), depth: texture.depth ?? 1,
                                                    format: format, linear: texture.linear,
                                                    wrap: texture.border == .clamp ? .clamp : texture.border == .repeat ? .repeating : .mirrored,
                                                    rgba: texture.format.rgbaFloats(texture.data))
            }
            try validate()
        } catch {
            releaseGPUResources()
            throw error
        }
    }

    package func releaseGPUResources() {
        gpuUsers -= 1
        if gpuUsers <= 0 { lookupTextures.removeAll() }
    }

    /// Compiles every pass of every file on its own (each BIND a stand-in texture, whatever its WHEN), so
    /// an error names the hook file's line; a `//!COMPUTE` pass on a GL without compute shaders is refused.
    package func validate() throws {
        let limits = GPULimits.query()
        for step in HookPlan.validationSteps(files: files) {
            let (fileIndex, passIndex) = step.pass!
            let file = files[fileIndex], pass = file.passes[passIndex]
            if step.compute != nil, !limits.supportsCompute {
                throw ShaderLoadError(file: file.path, line: pass.expressionLines["COMPUTE"] ?? pass.line, message: "//!COMPUTE needs OpenGL ES 3.1 compute shaders; "
                                      + "this GL is OpenGL ES \(limits.glesMajorVersion).\(limits.glesMinorVersion)")
            }
            // Threads are at most `HookPlan.maxSide` each (the parser's bound): the product cannot overflow.
            if let local = step.compute?.local, local.x * local.y > limits.maxComputeWorkGroupInvocations
                || local.x > limits.maxComputeWorkGroupSize.x || local.y > limits.maxComputeWorkGroupSize.y {
                let line = pass.expressionLines["COMPUTE"] ?? pass.line
                throw ShaderLoadError(file: file.path, line: line, message: "//!COMPUTE: \(local.x)x\(local.y) threads per group "
                                      + "is more than this GL's \(limits.maxComputeWorkGroupInvocations) "
                                      + "(at most \(limits.maxComputeWorkGroupSize.x)x\(limits.maxComputeWorkGroupSize.y))")
            }
            let declarations = CompiledPass.Member.declarations(of: self) + "uniform sampler2D $src0;\n"
            let preamble = FrameShaders.header + (declarations + (step.compute == nil ? "out vec4 prism_out;\n" : ""))
                .replacingOccurrences(of: "$", with: "v_")
            let source = preamble + step.main.replacingOccurrences(of: "$", with: "v_")
            let offset = preamble.utf8.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
            do {
                if step.compute != nil {
                    _ = try Realiser().program(ProgramSource(label: step.label, compute: source))
                } else {
                    _ = try ProgramCache.current.program(label: step.label, fragment: source)
                }
            } catch let error as ShaderCompileError {
                let map = ShaderLineMap(origins: [ShaderLineMap.Origin?](repeating: nil, count: offset) + step.lineMap.origins)
                throw UserShaderCompileError(file: file.path,
                                             diagnostics: ShaderCompilerLog.parse(error.log, lineMap: map, generatedFile: file.path),
                                             log: error.log)
            }
        }
    }
}

/// A kernel whose output size the run sets when it has one (`--size`): mpv hooks' OUTPUT.
package protocol OutputSizing: AnyObject {
    var requestedOutputSize: Size? { get set }
}
