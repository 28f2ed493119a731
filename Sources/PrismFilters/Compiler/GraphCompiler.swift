import CGLES
import Foundation
import PrismCore
import PrismGPU

/// How the compiler may combine kernels into passes.
public struct CompileOptions: Sendable {
    /// Fuse kernels into as few passes as possible. Off: one pass per kernel, the source conversion
    /// and the packing each in their own pass (the baseline fusion is measured against).
    public var fuse: Bool
    /// The most texture reads per pixel an expression may cost and still be evaluated inside the
    /// packing pass, which evaluates it more than once per pixel (luma, then chroma).
    public var maxPackCost: Int
    /// Storage of textures between passes: RGBA8 is the fast path everywhere (and much the fastest on
    /// llvmpipe); RGBA16F keeps chains of many unfused passes from accumulating 8-bit rounding.
    public var intermediateFormat: TextureFormat

    public init(fuse: Bool = true, maxPackCost: Int = 8, intermediateFormat: TextureFormat = .rgba8) {
        self.fuse = fuse
        self.maxPackCost = maxPackCost
        self.intermediateFormat = intermediateFormat
    }
}

/// One draw: a program, the target it renders, and what to bind.
final class CompiledPass {
    enum Kind { case materialize(Int), prepass(node: Int, index: Int), sink(Int), source }
    enum TextureSource { case sourceTarget, node(Int), prepass(node: Int, index: Int) }
    struct Member { let node: Int; let prefix: String; let outputSize: Size; let inputSizes: [Size] }

    let kind: Kind
    let label: String
    let program: ShaderProgram
    let target: RenderTarget
    /// Kernels whose code is in the program: each sets its uniforms.
    let members: [Member]
    /// Sampler uniforms bound to other passes' targets.
    let textures: [(uniform: String, source: TextureSource)]
    let readsSourcePlanes: Bool
    let packLayout: PackedFrameLayout?
    /// The generated fragment shader, for debugging (`prism run --dump-shaders` later).
    let fragmentSource: String

    init(kind: Kind, label: String, program: ShaderProgram, target: RenderTarget, members: [Member],
         textures: [(uniform: String, source: TextureSource)], readsSourcePlanes: Bool, packLayout: PackedFrameLayout?,
         fragmentSource: String) {
        self.kind = kind
        self.label = label
        self.program = program
        self.target = target
        self.members = members
        self.textures = textures
        self.readsSourcePlanes = readsSourcePlanes
        self.packLayout = packLayout
        self.fragmentSource = fragmentSource
    }
}

/// Turns a `FilterGraph` into passes for one source format and size. Lives on the GPU thread.
enum GraphCompiler {
    struct Result {
        var passes: [CompiledPass]
        var sinkLayouts: [PackedFrameLayout]
        var outputSize: Size
        var nodeSizes: [Size]
    }

    static func compile(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, sinks: [PixelFormat],
                        options: CompileOptions, pool: TexturePool) throws -> Result {
        let nodes = graph.nodes
        // 1. Sizes, producer first.
        var sizes: [Size] = []
        func size(of stream: FilterGraph.Stream) -> Size {
            switch stream {
            case .source: return sourceSize
            case .node(let id): return sizes[id.index]
            }
        }
        for node in nodes {
            let inputSizes = node.inputs.map(size(of:))
            let output = try node.kernel.outputSize(inputSizes: inputSizes, sourceSize: sourceSize)
            guard output.width > 0, output.height > 0, output.width <= 16384, output.height <= 16384 else {
                throw UsageError("\(node.name) would make a \(output) frame")
            }
            sizes.append(output)
        }
        let outputSize = size(of: graph.output)
        let layouts = try sinks.map { format -> PackedFrameLayout in
            guard let layout = PackedFrameLayout(format: format, size: outputSize) else {
                throw UsageError("cannot write \(format) frames")
            }
            return layout
        }

        // 2. Which streams become textures.
        var consumers = [Int](repeating: 0, count: nodes.count)
        var sourceConsumers = 0
        var materialized = Set<Int>()
        var sourceMaterialized = !options.fuse
        func markTexture(_ stream: FilterGraph.Stream) {
            switch stream {
            case .source: sourceMaterialized = true
            case .node(let id): materialized.insert(id.index)
            }
        }
        for node in nodes {
            for (index, input) in node.inputs.enumerated() {
                switch input {
                case .source: sourceConsumers += 1
                case .node(let id): consumers[id.index] += 1
                }
                if node.kernel.textureInputs.contains(index) { markTexture(input) }
            }
        }
        switch graph.output {
        case .source: sourceConsumers += 1
        case .node(let id): consumers[id.index] += 1
        }
        if !options.fuse { materialized = Set(nodes.indices) }
        // Shared streams are rendered once rather than recomputed by each consumer.
        if sourceConsumers > 1 { sourceMaterialized = true }
        for index in nodes.indices where consumers[index] > 1 { materialized.insert(index) }
        // An expensive output is rendered once, then packed; so is any output packed several ways.
        if case .node(let id) = graph.output, !materialized.contains(id.index) {
            let cost = fusedCost(of: id.index, graph: graph, materialized: materialized, sourceMaterialized: sourceMaterialized)
            if layouts.count > 1 || cost > options.maxPackCost { materialized.insert(id.index) }
        } else if case .source = graph.output, layouts.count > 1 {
            sourceMaterialized = true
        }

        // 3. Passes in dependency order.
        var passes: [CompiledPass] = []
        let builder = PassBuilder(graph: graph, sizes: sizes, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                  materialized: materialized, sourceMaterialized: sourceMaterialized)
        if sourceMaterialized {
            let target = try pool.acquire(size: sourceSize, format: options.intermediateFormat)
            passes.append(try builder.expressionPass(root: .source, kind: .source, target: target, pack: nil))
        }
        for (index, node) in nodes.enumerated() {
            for (prepassIndex, prepass) in node.kernel.prepasses.enumerated() {
                let inputSizes = node.inputs.map(size(of:))
                let target = try pool.acquire(size: prepass.size(inputSizes), format: prepass.format ?? options.intermediateFormat)
                passes.append(try builder.prepass(node: index, index: prepassIndex, target: target))
            }
            if materialized.contains(index) {
                let target = try pool.acquire(size: sizes[index], format: options.intermediateFormat)
                passes.append(try builder.expressionPass(root: .node(node.id), kind: .materialize(index), target: target,
                                                         pack: nil))
            }
        }
        for (index, layout) in layouts.enumerated() {
            let target = try pool.acquire(size: layout.textureSize)
            passes.append(try builder.expressionPass(root: graph.output, kind: .sink(index), target: target, pack: layout))
        }
        return Result(passes: passes, sinkLayouts: layouts, outputSize: outputSize, nodeSizes: sizes)
    }

    /// Texture reads per pixel of evaluating `index` with everything unmaterialized fused in.
    static func fusedCost(of index: Int, graph: FilterGraph, materialized: Set<Int>, sourceMaterialized: Bool) -> Int {
        let node = graph.nodes[index]
        var total = node.kernel.cost
        for (inputIndex, input) in node.inputs.enumerated() where !node.kernel.textureInputs.contains(inputIndex) {
            switch input {
            case .source: total += sourceMaterialized ? 1 : 3
            case .node(let id):
                total += materialized.contains(id.index)
                    ? 1 : fusedCost(of: id.index, graph: graph, materialized: materialized, sourceMaterialized: sourceMaterialized)
            }
        }
        return total
    }
}

/// Generates the GLSL of passes. Prefixes: `n<i>_` for node i's code, `m<i>` for node i's rendered
/// texture, `prism_` for the frame ends.
private struct PassBuilder {
    let graph: FilterGraph
    let sizes: [Size]
    let sourceFormat: PixelFormat
    let sourceSize: Size
    let materialized: Set<Int>
    let sourceMaterialized: Bool

    func sizeOf(_ stream: FilterGraph.Stream) -> Size {
        switch stream {
        case .source: sourceSize
        case .node(let id): sizes[id.index]
        }
    }

    /// A pass evaluating `root` at every pixel: into a texture, or packed for a sink.
    func expressionPass(root: FilterGraph.Stream, kind: CompiledPass.Kind, target: RenderTarget,
                        pack: PackedFrameLayout?) throws -> CompiledPass {
        var code = Code()
        // The root itself is always computed here (that is what this pass is for), even if marked
        // materialized; everything upstream is fused unless it is a texture.
        let rootCall: String
        switch root {
        case .source:
            rootCall = kindIsSource(kind) ? sourceCall(&code, forceFused: true) : sourceCall(&code, forceFused: false)
        case .node(let id):
            if case .materialize = kind {
                rootCall = emitNode(id.index, into: &code)
            } else {
                rootCall = call(for: root, into: &code)
            }
        }
        var source = FrameShaders.header + code.declarations
        if let pack {
            source += "vec4 prism_pixel(vec2 p) { return \(rootCall)(p); }\n" + FrameShaders.packMain(layout: pack)
        } else {
            source += "out vec4 prism_out;\nvoid main() { prism_out = \(rootCall)(gl_FragCoord.xy); }\n"
        }
        let label: String
        switch kind {
        case .source: label = "source \(sourceFormat) → RGBA"
        case .materialize(let index): label = graph.nodes[index].name
        case .sink: label = "pack \(pack?.format.rawValue ?? "")"
        case .prepass: label = "prepass"
        }
        let program = try ShaderProgram(label: label, fragment: source)
        return CompiledPass(kind: kind, label: label, program: program, target: target, members: code.members,
                            textures: code.textures, readsSourcePlanes: code.usesSourcePlanes, packLayout: pack,
                            fragmentSource: source)
    }

    private func kindIsSource(_ kind: CompiledPass.Kind) -> Bool {
        if case .source = kind { return true }
        return false
    }

    /// A kernel's prepass: its library, its texture inputs, earlier prepass targets, its main.
    func prepass(node index: Int, index prepassIndex: Int, target: RenderTarget) throws -> CompiledPass {
        let node = graph.nodes[index]
        let prefix = "n\(index)_"
        var code = Code()
        var declarations = ""
        for inputIndex in node.kernel.textureInputs.sorted() {
            declarations += "uniform sampler2D \(prefix)src\(inputIndex);\nuniform vec2 \(prefix)src\(inputIndex)Size;\n"
            code.textures.append(("\(prefix)src\(inputIndex)", textureSource(node.inputs[inputIndex])))
        }
        for earlier in 0..<prepassIndex {
            declarations += "uniform sampler2D \(prefix)pass\(earlier);\n"
            code.textures.append(("\(prefix)pass\(earlier)", .prepass(node: index, index: earlier)))
        }
        let prepass = node.kernel.prepasses[prepassIndex]
        let body = declarations + node.kernel.library + "out vec4 prism_out;\n" + prepass.main
        let source = FrameShaders.header + substitute(body, prefix: prefix)
        code.members.append(.init(node: index, prefix: prefix, outputSize: target.size,
                                  inputSizes: node.inputs.map(sizeOf)))
        let label = "\(node.name) prepass \(prepassIndex)"
        let program = try ShaderProgram(label: label, fragment: source)
        return CompiledPass(kind: .prepass(node: index, index: prepassIndex), label: label, program: program,
                            target: target, members: code.members, textures: code.textures, readsSourcePlanes: false,
                            packLayout: nil, fragmentSource: source)
    }

    private func textureSource(_ stream: FilterGraph.Stream) -> CompiledPass.TextureSource {
        switch stream {
        case .source: .sourceTarget
        case .node(let id): .node(id.index)
        }
    }

    /// The GLSL function name that evaluates `stream`, emitting whatever it needs.
    private func call(for stream: FilterGraph.Stream, into code: inout Code) -> String {
        switch stream {
        case .source:
            return sourceCall(&code, forceFused: false)
        case .node(let id):
            if materialized.contains(id.index) { return fetchCall(uniform: "m\(id.index)", source: .node(id.index), &code) }
            return emitNode(id.index, into: &code)
        }
    }

    private func sourceCall(_ code: inout Code, forceFused: Bool) -> String {
        if sourceMaterialized && !forceFused { return fetchCall(uniform: "msource", source: .sourceTarget, &code) }
        if !code.usesSourcePlanes {
            code.usesSourcePlanes = true
            code.declarations += FrameShaders.sourceFunction(for: sourceFormat)
        }
        return "prism_source"
    }

    private func fetchCall(uniform: String, source: CompiledPass.TextureSource, _ code: inout Code) -> String {
        let function = "\(uniform)_fetch"
        if !code.emitted.contains(function) {
            code.emitted.insert(function)
            code.declarations += """
                uniform sampler2D \(uniform);
                vec4 \(function)(vec2 p) {
                    return texelFetch(\(uniform), clamp(ivec2(floor(p)), ivec2(0), textureSize(\(uniform), 0) - 1), 0);
                }

                """
            code.textures.append((uniform, source))
        }
        return function
    }

    /// Emits node `index` (and, first, what it reads) and returns its `main` function's name.
    private func emitNode(_ index: Int, into code: inout Code) -> String {
        let prefix = "n\(index)_"
        let mainName = prefix + "main"
        if code.emitted.contains(mainName) { return mainName }
        let node = graph.nodes[index]
        var declarations = ""
        for (inputIndex, input) in node.inputs.enumerated() {
            let upstream = call(for: input, into: &code)
            declarations += "vec4 \(prefix)in\(inputIndex)(vec2 p) { return \(upstream)(p); }\n"
            if node.kernel.textureInputs.contains(inputIndex) {
                declarations += "uniform sampler2D \(prefix)src\(inputIndex);\nuniform vec2 \(prefix)src\(inputIndex)Size;\n"
                code.textures.append(("\(prefix)src\(inputIndex)", textureSource(input)))
            }
        }
        for prepassIndex in node.kernel.prepasses.indices {
            declarations += "uniform sampler2D \(prefix)pass\(prepassIndex);\n"
            code.textures.append(("\(prefix)pass\(prepassIndex)", .prepass(node: index, index: prepassIndex)))
        }
        code.declarations += substitute(declarations + node.kernel.library + node.kernel.expression + "\n", prefix: prefix)
        code.emitted.insert(mainName)
        code.members.append(.init(node: index, prefix: prefix, outputSize: sizes[index],
                                  inputSizes: node.inputs.map(sizeOf)))
        return mainName
    }

    private func substitute(_ text: String, prefix: String) -> String {
        text.replacingOccurrences(of: "$", with: prefix)
    }

    struct Code {
        var declarations = ""
        var emitted = Set<String>()
        var members: [CompiledPass.Member] = []
        var textures: [(uniform: String, source: CompiledPass.TextureSource)] = []
        var usesSourcePlanes = false
    }
}
