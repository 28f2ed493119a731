import Foundation
import PrismCore
import PrismGPU

/// Generates the GLSL of passes. Prefixes: `n<i>_` for node i's code, `m<i>` for node i's rendered
/// texture, `prism_` for the frame ends.
struct PassBuilder {
    let graph: FilterGraph
    let sizes: [Size]
    let sourceFormat: PixelFormat
    let sourceSize: Size
    var materialized: Set<Int>
    var sourceMaterialized: Bool
    /// Nodes evaluated as another stream instead (a masked blend as its background, `MaskedOutput`).
    var replaced: [Int: FilterGraph.Stream] = [:]
    /// `CompileOptions.clampsSteps`.
    var clampsSteps = true

    /// The stream is the source itself: the source, or a node evaluated as the source (`replaced`).
    func resolvesToSource(_ stream: FilterGraph.Stream) -> Bool {
        switch stream {
        case .source: true
        case .node(let id): replaced[id.index].map(resolvesToSource) ?? false
        }
    }

    func sizeOf(_ stream: FilterGraph.Stream) -> Size { stream.size(source: sourceSize, nodes: sizes) }

    /// A pass evaluating `root` at every pixel: into a texture, or packed for a sink.
    /// `fullResolution`: `pack`'s pixels in its Y'CbCr, unpacked (`FrameShaders.fullResolutionMain`).
    func expressionPass(root: FilterGraph.Stream, kind: CompiledPass.Kind, target: TargetSpec,
                        pack: PackedFrameLayout?, fullResolution: Bool = false) throws -> CompiledPass {
        var code = Code()
        // The root itself is always computed here (that is what this pass is for), even if marked
        // materialized; everything upstream is fused unless it is a texture.
        let rootCall: String
        switch (root, kind) {
        case (.source, _): rootCall = sourceCall(&code, forceFused: kind == .source)
        case (.node(let id), .materialize): rootCall = emitNode(id.index, into: &code)
        case (.node, _): rootCall = call(for: root, into: &code)
        }
        // A packing pass that reads the source only at the pixel it packs converts four pixels per fetch.
        let batched = pack != nil && code.usesSourcePlanes && !code.readsSourceElsewhere
            && FrameShaders.canBatch(pack!.format)
        // With no filter, Y'CbCr in and out: no clamp to the R'G'B' cube, so the samples come back as they went
        // in (super-whites, the edges of subsampled chroma), to the sink's rounding.
        let identity = resolvesToSource(root) && !fullResolution && pack?.format.isYUV == true && sourceFormat.isYUV
        let shared = FrameShaders.header + code.prelude(batched: batched, format: sourceFormat, clamped: !identity)
            + code.declarations
        let mains: [PackDraw]
        if let pack {
            let plan = fullResolution ? FrameShaders.fullResolutionMain(layout: pack, batched: batched)
                : FrameShaders.packMain(layout: pack, batched: batched, clamped: !identity)
            mains = plan.draws.map {
                PackDraw(main: "vec4 prism_pixel(vec2 p) { return \(rootCall)(p); }\n" + $0.main, rows: $0.rows, columns: $0.columns)
            }
        } else {
            mains = [PackDraw(main: "out vec4 prism_out;\nvoid main() { prism_out = \(rootCall)(gl_FragCoord.xy); }\n",
                              rows: 0..<target.size.height)]
        }
        // The filters fused into a pass name it (a shader's name, not only "pack rgba").
        let fused = code.members.map { graph.nodes[$0.node].name }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let fusedPrefix = fused.isEmpty ? "" : fused.joined(separator: ", ") + " → "
        let label = switch kind {
        case .source: "source \(sourceFormat) → RGBA"
        case .materialize(let index): graph.nodes[index].name
        case .sink: fusedPrefix + "pack \(pack?.format.rawValue ?? "")"
        case .fullResolution: "\(pack?.format.rawValue ?? "") planes at full resolution"
        case .prepass: "prepass"
        }
        return CompiledPass(kind: kind, label: label, draws: CompiledPass.Draw.packing(mains, label: label, prelude: shared),
                            target: target, members: code.members, textures: code.textures,
                            readsSourcePlanes: code.usesSourcePlanes, packLayout: pack)
    }

    /// A kernel's prepass: its library, its texture inputs, earlier prepass targets, its main.
    func prepass(node index: Int, index prepassIndex: Int, target: TargetSpec) throws -> CompiledPass {
        let node = graph.nodes[index]
        let prefix = "n\(index)_"
        var code = Code()
        var declarations = ""
        var firstInputReadsSource = false
        for (inputIndex, input) in node.inputs.enumerated() {
            if node.kernel.textureInputs.contains(inputIndex) {
                declarations += "uniform sampler2D \(prefix)src\(inputIndex);\nuniform vec2 \(prefix)src\(inputIndex)Size;\n"
                code.textures.append(.init(uniform: "\(prefix)src\(inputIndex)", source: textureSource(input)))
            } else {
                // Prepasses may read untextured inputs anywhere: the upstream chain is fused in.
                let upstream = call(for: input, into: &code)
                declarations += "vec4 \(prefix)in\(inputIndex)(vec2 p) { return \(upstream)(p); }\n"
                if inputIndex == 0 { firstInputReadsSource = upstream == "prism_source" || code.sourceReaders.contains(upstream) }
            }
        }
        // When input 0 is the source seen through point-wise kernels only, a prepass may convert four
        // source pixels per fetch: `prism_sourceQuad`, then `$in0` with `prism_current` set to each.
        let batched = node.kernel.prepasses[prepassIndex].batchable && firstInputReadsSource
            && !code.readsSourceElsewhere && node.inputs.count == 1
        // Earlier targets, and persistent ones anywhere (their own included: the previous frame's).
        let prepasses = node.kernel.prepasses
        for other in prepasses.indices where other < prepassIndex || prepasses[other].persistent {
            declarations += "uniform sampler2D \(prefix)pass\(other);\n"
            code.textures.append(.init(uniform: "\(prefix)pass\(other)", source: .prepass(node: index, index: other)))
        }
        let prepass = prepasses[prepassIndex]
        // A compute pass writes its image itself: it has no fragment output.
        let body = declarations + CompiledPass.Member.declarations(of: node.kernel) + node.kernel.library
            + (prepass.compute == nil ? "out vec4 prism_out;\n" : "") + prepass.main
        let source = FrameShaders.header + (batched ? "#define PRISM_BATCHED 1\n" : "")
            + code.prelude(batched: batched, format: sourceFormat) + code.declarations + substitute(body, prefix: prefix)
        code.members.append(.init(node: index, prefix: prefix, outputSize: target.size,
                                  inputSizes: node.inputs.map(sizeOf)))
        let label = prepass.label.map { "\(node.name): \($0)" } ?? "\(node.name) prepass \(prepassIndex)"
        // A kernel's own vertex shader sees the same pass targets as its fragment shader.
        let vertex = prepass.vertex.map { vertex in
            FrameShaders.header + prepasses.indices.filter { $0 < prepassIndex || prepasses[$0].persistent }
                .map { "uniform sampler2D \(prefix)pass\($0);\n" }.joined() + substitute(vertex, prefix: prefix)
        }
        let program = prepass.compute != nil ? ProgramSource(label: label, compute: source)
            : ProgramSource(label: label, vertex: vertex, fragment: source, drawsQuad: vertex != nil)
        var pass = CompiledPass(kind: .prepass(node: index, index: prepassIndex), label: label,
                                draws: [.init(program: program)],
                                target: target, members: code.members, textures: code.textures,
                                readsSourcePlanes: code.usesSourcePlanes, packLayout: nil)
        if let shape = prepass.compute { pass.computeGroups = shape.groups }
        return pass
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
            if let stream = replaced[id.index] { return call(for: stream, into: &code) }
            if materialized.contains(id.index) { return fetchCall(uniform: "m\(id.index)", source: .node(id.index), &code) }
            return emitNode(id.index, into: &code)
        }
    }

    private func sourceCall(_ code: inout Code, forceFused: Bool) -> String {
        if sourceMaterialized && !forceFused { return fetchCall(uniform: "msource", source: .sourceTarget, &code) }
        code.usesSourcePlanes = true
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
            code.textures.append(.init(uniform: uniform, source: source))
        }
        return function
    }

    /// Emits node `index` (and, first, what it reads) and returns the name of the function giving its
    /// output: its `main`, clamped to 0...1. Every kernel's output is clamped, fused or not, so a chain
    /// gives the same result whether a step's output went through an 8-bit texture or straight into
    /// the next step (`color` can push values past 1; the next step sees them clamped either way).
    private func emitNode(_ index: Int, into code: inout Code) -> String {
        let prefix = "n\(index)_"
        let mainName = prefix + "main"
        let valueName = prefix + "value"
        if code.emitted.contains(mainName) { return valueName }
        let node = graph.nodes[index]
        var declarations = ""
        for (inputIndex, input) in node.inputs.enumerated() where node.kernel.expressionReadsInputs
            || node.kernel.textureInputs.contains(inputIndex) {
            let upstream = call(for: input, into: &code)
            if upstream == "prism_source" || code.sourceReaders.contains(upstream) {
                code.sourceReaders.insert(valueName)
                if !node.kernel.isPointwise && node.kernel.expressionReadsInputs
                    && !node.kernel.textureInputs.contains(inputIndex) {
                    code.readsSourceElsewhere = true
                }
            }
            declarations += "vec4 \(prefix)in\(inputIndex)(vec2 p) { return \(upstream)(p); }\n"
            if node.kernel.textureInputs.contains(inputIndex) {
                declarations += "uniform sampler2D \(prefix)src\(inputIndex);\nuniform vec2 \(prefix)src\(inputIndex)Size;\n"
                code.textures.append(.init(uniform: "\(prefix)src\(inputIndex)", source: textureSource(input)))
            }
        }
        for prepassIndex in node.kernel.prepasses.indices {
            declarations += "uniform sampler2D \(prefix)pass\(prepassIndex);\n"
            code.textures.append(.init(uniform: "\(prefix)pass\(prepassIndex)",
                                       source: .prepass(node: index, index: prepassIndex)))
        }
        code.declarations += substitute(declarations + CompiledPass.Member.declarations(of: node.kernel)
                                        + node.kernel.library + node.kernel.expression + "\n", prefix: prefix)
        code.declarations += clampsSteps ? "vec4 \(valueName)(vec2 p) { return clamp(\(mainName)(p), 0.0, 1.0); }\n"
            : "vec4 \(valueName)(vec2 p) { return max(\(mainName)(p), 0.0); }\n"
        code.emitted.insert(mainName)
        code.members.append(.init(node: index, prefix: prefix, outputSize: sizes[index],
                                  inputSizes: node.inputs.map(sizeOf)))
        return valueName
    }

    private func substitute(_ text: String, prefix: String) -> String {
        text.replacingOccurrences(of: "$", with: prefix)
    }

    struct Code {
        var declarations = ""
        var emitted = Set<String>()
        var members: [CompiledPass.Member] = []
        var textures: [CompiledPass.TextureBinding] = []
        /// The pass reads the uploaded planes (through `prism_source`).
        var usesSourcePlanes = false
        /// Functions that read the source, directly or through others.
        var sourceReaders = Set<String>()
        /// Some kernel reads the source at positions other than the pixel being computed.
        var readsSourceElsewhere = false

        /// The source-reading functions, when the pass needs them.
        func prelude(batched: Bool, format: PixelFormat, clamped: Bool = true) -> String {
            guard usesSourcePlanes else { return "" }
            return FrameShaders.sourceFunctions(for: format, clamped: clamped) + FrameShaders.sourceAccessor(batched: batched)
        }
    }
}
