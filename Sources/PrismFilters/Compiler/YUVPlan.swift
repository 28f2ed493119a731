import PrismCore
import PrismGPU

/// Compiles graphs that are a chain of colour maps with at most one pixellate, from 4:2:0 input to 4:2:0 or
/// grey output, without ever forming R'G'B' pixels: the maps (affine ones and grey curves, see `ColorForm`)
/// are carried over to Y'CbCr by the input's conversion matrices, each output plane is drawn at its own
/// resolution straight from the input planes (`YUVNativeShaders`), and pixellate's block means are taken
/// at block resolution from the raw planes (means commute with affine maps).
///
/// The result equals the R'G'B' route's for every pixel whose Y'CbCr lies inside the R'G'B' gamut: the
/// R'G'B' route clamps a converted pixel to 0...1 before the first filter, this one keeps the excursion
/// (so a chain with no filters returns the input planes unchanged). Graphs that blend by a mask are
/// `YUVBlendPlan`'s; everything else (geometry, neighbourhoods, tables that are neither affine nor grey
/// curves, user shaders, other formats) takes the R'G'B' route.
struct YUVPlan {
    /// One step of the chain as compiled: consecutive affine kernels are one matrix; the packing step
    /// (Y'CbCr of the input → R'G'B' → the sink's Y'CbCr) is folded into a trailing matrix.
    enum Step: Equatable {
        case affine(nodes: [Int])
        case curve(node: Int, glsl: String)
    }

    /// Colour kernels in chain order (pixellate left out).
    let chain: [Int]
    /// The pixellate node, and how many chain kernels come before it.
    let pixellate: (node: Int, position: Int)?

    /// The plan for `graph`, or nil when it needs the R'G'B' route.
    static func make(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, layouts: [PackedFrameLayout],
                     options: CompileOptions) -> YUVPlan? {
        guard let line = line(graph, sourceFormat: sourceFormat, sourceSize: sourceSize, layouts: layouts, options: options),
              let split = split(line, graph: graph, at: { $0.blockAveraging != nil })
        else { return nil }
        return YUVPlan(chain: split.chain, pixellate: split.effect)
    }

    /// `line` as colour kernels around at most one `effect` kernel (pixellate, the blur): the colour kernels in
    /// order, and the effect's node and how many of them come before it. Nil when a kernel is neither, there are
    /// two effects, or a curve comes before the effect: only affine maps commute with block means and blurs.
    static func split(_ line: [Int], graph: FilterGraph, at effect: (FilterKernel) -> Bool)
        -> (chain: [Int], effect: (node: Int, position: Int)?)? {
        let hasEffect = line.contains { effect(graph.nodes[$0].kernel) }
        var chain: [Int] = []
        var found: (node: Int, position: Int)?
        for index in line {
            let kernel = graph.nodes[index].kernel
            if effect(kernel) {
                guard found == nil else { return nil }
                found = (index, chain.count)
                continue
            }
            guard let form = kernel.colorForm else { return nil }
            if hasEffect, found == nil, case .lumaCurve = form { return nil }
            chain.append(index)
        }
        return (chain, found)
    }

    /// The graph's nodes from the source to the output when they form one line and the frames allow the Y'CbCr
    /// routes (4:2:0 in and out, fusing on); nil otherwise.
    static func line(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, layouts: [PackedFrameLayout],
                     options: CompileOptions) -> [Int]? {
        guard options.fuse, options.yuvRoute,
              YUVNativeShaders.handles(source: sourceFormat, size: sourceSize, sinks: layouts) else { return nil }
        // Walk back from the output: every node must be on one line from the source.
        var reversed: [Int] = []
        var stream = graph.output
        while case .node(let id) = stream {
            let node = graph.nodes[id.index]
            guard node.inputs.count == 1, !reversed.contains(id.index) else { return nil }
            reversed.append(id.index)
            stream = node.inputs[0]
        }
        return reversed.count == graph.nodes.count ? reversed.reversed() : nil
    }

    /// Steps for `nodes`, consecutive affine kernels grouped.
    static func steps(_ nodes: [Int], graph: FilterGraph) -> [Step] {
        var steps: [Step] = []
        for node in nodes {
            switch graph.nodes[node].kernel.colorForm {
            case .lumaCurve(let curve)?:
                steps.append(.curve(node: node, glsl: curve.glsl))
            default:
                if case .affine(let group)? = steps.last {
                    steps[steps.count - 1] = .affine(nodes: group + [node])
                } else {
                    steps.append(.affine(nodes: [node]))
                }
            }
        }
        return steps
    }

    /// The pass taking pixellate's block means from the input planes, through `steps` (and the packing for
    /// `sink`, when given).
    /// `mask`: only the blocks a mask can reach are needed (each frame: see `CompiledPass.MaskRegion`).
    static func blockPass(graph: FilterGraph, pixellate: Int, steps: [Step], sink: PackedFrameLayout?,
                          sourceFormat: PixelFormat, sourceSize: Size, blockSize: Size,
                          mask: (generator: Int, channel: Int)? = nil) throws -> CompiledPass {
        let uniforms = ChainUniforms(steps: steps, sink: sink, pixellate: pixellate, sourceSize: sourceSize)
        let prelude = FrameShaders.header + YUVNativeShaders.planeReads(for: sourceFormat) + uniforms.glsl
        let source = prelude + PixellateShaders.blockMeansMain(source: sourceFormat, size: sourceSize, grid: blockSize, boxed: mask != nil)
        let label = "\(graph.nodes[pixellate].name) blocks (Y'CbCr)"
        let targetSize = PixellateShaders.blockTargetSize(grid: blockSize)
        var draw = CompiledPass.Draw(label: label, fragment: source)
        // Grids of whole texels (checked per frame) sum without weights.
        let aligned = prelude + PixellateShaders.blockMeansMain(source: sourceFormat, size: sourceSize, grid: blockSize,
                                                                boxed: mask != nil, aligned: true)
        draw.variants = [.init(program: ProgramSource(label: label + " aligned", fragment: aligned),
                               condition: .alignedBlocks(pixellate: pixellate))]
        if let mask {
            draw.mask = .init(generator: mask.generator, channel: mask.channel,
                              layout: .blocks(pixellate: pixellate, gridWidth: blockSize.width),
                              targetArea: PixelRect(x: 0..<targetSize.width, y: 0..<targetSize.height))
        }
        // Blocks left undrawn (outside a mask) are read with a zero weight: they must hold numbers.
        let target = TargetSpec(size: targetSize, format: .rgba16f, cleared: mask != nil)
        var pass = CompiledPass(kind: .prepass(node: pixellate, index: 0), label: label, draws: [draw],
                                target: target, members: [], textures: [], readsSourcePlanes: true, packLayout: nil)
        pass.colorChain = uniforms
        return pass
    }

    func compile(graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, layouts: [PackedFrameLayout],
                 budget: inout GraphBudget) throws -> [CompiledPass] {
        let allSteps = Self.steps(chain, graph: graph)
        let blockSize = pixellate.map { graph.nodes[$0.node].kernel.blockAveraging!.blockGrid(for: sourceSize).size }
        if let pixellate, let blockSize {
            try budget.add(PixellateShaders.blockTargetSize(grid: blockSize), format: .rgba16f, what: "\(graph.nodes[pixellate.node].name) (blocks)")
        }
        try budget.addSinks(layouts) { YUVNativeShaders.packPlan(layout: $0, values: .planes(affine: true)) }
        var passes: [CompiledPass] = []
        // With pixellate, the packing matrix goes into the block pass when every sink packs the same way
        // (Y'CbCr sinks; grey ones pack full-range luma): then the packing pass only copies and averages.
        let packInBlocks = pixellate != nil && layouts.allSatisfy { $0.format != .gray }
        if let pixellate, let blockSize {
            // Block means of the input, through the whole chain: the output is constant over a block.
            passes.append(try Self.blockPass(graph: graph, pixellate: pixellate.node, steps: allSteps,
                                             sink: packInBlocks ? layouts[0] : nil, sourceFormat: sourceFormat,
                                             sourceSize: sourceSize, blockSize: blockSize))
        }
        passes += try Self.sinkPasses(graph: graph, steps: allSteps, layouts: layouts, sourceFormat: sourceFormat,
                                      sourceSize: sourceSize, pixellate: pixellate.map { ($0.node, blockSize!, packInBlocks) })
        return passes
    }

    /// The packing passes, one per sink: the chain's `steps` evaluated on the input's planes, or on the blurred
    /// planes `planes` when they have reads of their own, or on pixellate's block means when `pixellate` is
    /// given (its node, block grid, and whether the block pass already applied the packing matrix).
    static func sinkPasses(graph: FilterGraph, steps allSteps: [Step], layouts: [PackedFrameLayout], sourceFormat: PixelFormat,
                           sourceSize: Size, pixellate: (node: Int, blockSize: Size, packInBlocks: Bool)?,
                           planes: YUVBlurPlan.BlurredPlanes = .init()) throws -> [CompiledPass] {
        let reads = planes.reads ?? FrameShaders.header + YUVNativeShaders.planeReads(for: sourceFormat)
        var passes: [CompiledPass] = []
        let packInBlocks = pixellate?.packInBlocks ?? false
        let blockSize = pixellate?.blockSize
        for (index, layout) in layouts.enumerated() {
            let packSteps = pixellate == nil ? allSteps : []
            let uniforms = ChainUniforms(steps: packSteps, sink: packInBlocks ? nil : layout,
                                         pixellate: pixellate?.node, sourceSize: sourceSize)
            let affine = packSteps.allSatisfy { if case .affine = $0 { true } else { false } }
            let wide = pixellate.map { graph.nodes[$0.node].kernel.blockAveraging!.isWide } ?? false
            let plan = YUVNativeShaders.packPlan(layout: layout, values: pixellate == nil ? .planes(affine: affine) : .declared(PixellateShaders.blockValues(grid: blockSize!, wide: wide)))
            let prelude = (pixellate == nil ? reads : FrameShaders.header) + uniforms.glsl
            let label = "pack \(layout.format.rawValue) (Y'CbCr)"
            // Luma and chroma apart: planar and grey sinks' draws each skip the other's planes, NV12's evaluates
            // chroma once per sample; right for a matrix or one grey curve when their terms allow (per frame).
            let curveAlone = packSteps.count == 1 && { if case .curve = packSteps[0] { true } else { false } }()
            let lean = pixellate == nil && (affine || curveAlone)
                ? YUVNativeShaders.packPlan(layout: layout, values: .planes(affine: true, lean: true)) : nil
            // Grids whose block edges fall between packed texels (checked per frame) fetch one block per fragment.
            let aligned = wide ? YUVNativeShaders.packPlan(layout: layout, values: .declared(PixellateShaders.blockValues(grid: blockSize!, wide: true, aligned: true))) : nil
            let draws = CompiledPass.Draw.packing(plan.draws, label: label, prelude: prelude).enumerated().map { index, draw in
                var compiled = draw
                if let lean {
                    let condition: CompiledPass.LeanCondition = layout.format == .nv12 ? .both
                        : index == 0 ? .lumaIgnoresChroma : .chromaIgnoresLuma
                    compiled.variants.append(.init(program: ProgramSource(label: label + " lean", fragment: prelude + uniforms.leanGLSL + lean.draws[index].main),
                                                   condition: .lean(condition)))
                }
                if let aligned, let pixellate {
                    compiled.variants.append(.init(program: ProgramSource(label: label + " aligned",
                                                                              fragment: prelude + aligned.draws[index].main),
                                                   condition: .alignedBlocks(pixellate: pixellate.node)))
                }
                return compiled
            }
            let textures = pixellate.map {
                [CompiledPass.TextureBinding(uniform: "prism_blocks", source: .prepass(node: $0.node, index: 0))]
            } ?? planes.textures
            var pass = CompiledPass(kind: .sink(index), label: label, draws: draws, target: plan.target, members: [],
                                    textures: textures, readsSourcePlanes: pixellate == nil && planes.reads == nil,
                                    packLayout: layout)
            pass.colorChain = uniforms
            passes.append(pass)
        }
        return passes
    }
}

/// The GLSL of one pass's `prism_chain` and the uniforms it declares: each step's map carried into the
/// input's Y'CbCr, the last one followed by the sink's packing when the pass writes a sink. Their values
/// each frame are `ChainValues`'s.
struct ChainUniforms: Equatable {
    fileprivate let steps: [YUVPlan.Step]
    fileprivate let sink: PackedFrameLayout?
    fileprivate let pixellate: Int?
    fileprivate let sourceSize: Size
    init(steps: [YUVPlan.Step], sink: PackedFrameLayout?, pixellate: Int?, sourceSize: Size) {
        self.sink = sink
        self.pixellate = pixellate
        self.sourceSize = sourceSize
        // The packing needs a matrix step of its own when the chain does not end in one.
        var steps = steps
        if sink != nil, steps.isEmpty || { if case .curve = steps.last! { true } else { false } }() {
            steps.append(.affine(nodes: []))
        }
        self.steps = steps
        declared = steps.enumerated().flatMap { index, step -> [PassUniform] in
            switch step {
            case .affine: [PassUniform("prism_m\(index)", .mat3), PassUniform("prism_o\(index)", .vec3)]
            case .curve: [PassUniform("prism_w\(index)", .vec3), PassUniform("prism_wo\(index)", .float),
                          PassUniform("prism_gd\(index)", .vec3), PassUniform("prism_go\(index)", .vec3),
                          PassUniform("prism_i\(index)", .float)]
            }
        }
    }

    /// The steps' uniforms as data (m, o for a matrix; w, wo, gd, go, i for a curve), in the order
    /// `ChainValues.uniformValues` gives their values: `glsl` declares them, `ChainValues.set` sets them.
    let declared: [PassUniform]
    /// The lean draws' uniforms (declared by `leanGLSL`), likewise.
    static let leanDeclared = [PassUniform("prism_leanCurveInput", .vec2), PassUniform("prism_leanLuma", .vec3),
                               PassUniform("prism_leanChromaMatrix", .vec4), PassUniform("prism_leanChromaOffset", .vec2)]

    /// `vec3 prism_step<i>(vec3)` for each step, and `vec3 prism_chain(vec3)` applying them all in order.
    var glsl: String {
        let declarations = declared.map(\.declaration).joined()
        var functions = ""
        for (index, step) in steps.enumerated() {
            switch step {
            case .affine:
                functions += "vec3 prism_step\(index)(vec3 v) { return prism_m\(index) * v + prism_o\(index); }\n"
            case .curve(_, let glsl):
                functions += """
                    vec3 prism_step\(index)(vec3 v) {
                        float l = clamp(dot(prism_w\(index), v) + prism_wo\(index), 0.0, 1.0);
                        float g = \(glsl);
                        return mix(v, g * prism_gd\(index) + prism_go\(index), prism_i\(index));
                    }

                    """
            }
        }
        let chain = steps.indices.map { "    v = prism_step\($0)(v);\n" }.joined()
        return declarations + functions + "vec3 prism_chain(vec3 v) {\n" + chain + "    return v;\n}\n"
    }

    /// For lean draws (see `ChainValues.allows`; a matrix, or a grey curve then a matrix): the chain reduced to
    /// what each draw computes, `float prism_leanLumaOf(float y)` and `vec2 prism_leanChromaOf(vec2 cbcr)`, so
    /// a pixel costs a few scalar operations instead of the whole vec3 chain with constant mid-grey terms.
    /// Luma' = p·y + q·g + r, g the curve of clamp(s·y + t, 0, 1) (no curve: q = 0); chroma' = K·c + k.
    /// Values per frame in `ChainValues.set` (`leanValues`).
    var leanGLSL: String {
        let curve = steps.first.flatMap { step -> String? in if case .curve(_, let glsl) = step { glsl } else { nil } }
        let luma = curve.map { glsl in
            """
            float prism_leanLumaOf(float y) {
                float l = clamp(prism_leanCurveInput.x * y + prism_leanCurveInput.y, 0.0, 1.0);
                float g = \(glsl);
                return prism_leanLuma.x * y + prism_leanLuma.y * g + prism_leanLuma.z;
            }

            """
        } ?? """
            float prism_leanLumaOf(float y) { return prism_leanLuma.x * y + prism_leanLuma.z; }

            """
        return Self.leanDeclared.map(\.declaration).joined() + """
            vec2 prism_leanChromaOf(vec2 c) {
                return vec2(dot(prism_leanChromaMatrix.xy, c), dot(prism_leanChromaMatrix.zw, c)) + prism_leanChromaOffset;
            }

            """ + luma
    }
}

/// The values of a colour chain's uniforms (`ChainUniforms`) for the renderer drawing it: the steps' maps from
/// the kernels' current `colorForm` in the frame's colour spaces, kept until a parameter or a space changes.
final class ChainValues {
    private let chain: ChainUniforms
    private let graph: FilterGraph
    init(_ chain: ChainUniforms, graph: FilterGraph) {
        self.chain = chain
        self.graph = graph
    }

    /// The lean draws' values (`ChainUniforms.leanGLSL`) from the chain's: the vec3 chain evaluated with mid-grey
    /// for what a draw does not read, folded into a few coefficients. Luma is exact; chroma drops the curve's
    /// term, which `allows` has bounded below 1e-6 of a code value's scale. Nil when the chain has no lean form.
    private struct LeanValues {
        var curveInput: SIMD2<Float>, luma: SIMD3<Float>, chromaMatrix: SIMD4<Float>, chromaOffset: SIMD2<Float>
    }

    private static func leanValues(_ values: [StepValues]) -> LeanValues? {
        guard case .affine(let rows, let offset)? = values.last else { return nil }
        let m = rows.map { SIMD3<Float>(Float($0[0]), Float($0[1]), Float($0[2])) }
        // A curve blends its input x with its grey by i: v = (1 - i)·x + i·(g·gd + go).
        var curveInput = SIMD2<Float>(0, 0), keep: Float = 1, gd = SIMD3<Float>.zero, go = SIMD3<Float>.zero
        switch values.count {
        case 1: break
        case 2:
            guard case .curve(let w, let wo, let direction, let grey, let intensity) = values[0] else { return nil }
            curveInput = SIMD2(w.x, 0.5 * (w.y + w.z) + wo)
            keep = 1 - intensity
            gd = intensity * direction
            go = intensity * grey
        default: return nil
        }
        // Luma of (y, ½, ½): p·y + q·g + r.
        let luma = SIMD3<Float>(m[0].x * keep, (m[0] * gd).sum(),
                                (m[0] * go).sum() + keep * 0.5 * (m[0].y + m[0].z) + offset.x)
        // Chroma of (½, cb, cr), without the g term.
        let chromaMatrix = SIMD4<Float>(m[1].y, m[1].z, m[2].y, m[2].z) * keep
        let chromaOffset = SIMD2<Float>((m[1] * go).sum() + keep * 0.5 * m[1].x + offset.y,
                                        (m[2] * go).sum() + keep * 0.5 * m[2].x + offset.z)
        return LeanValues(curveInput: curveInput, luma: luma, chromaMatrix: chromaMatrix, chromaOffset: chromaOffset)
    }

    /// One step's uniform values on Y'CbCr.
    private enum StepValues {
        case affine(rows: [[Double]], offset: SIMD3<Float>)
        case curve(weights: SIMD3<Float>, offset: Float, direction: SIMD3<Float>, grey: SIMD3<Float>, intensity: Float)
    }

    /// What the values are computed from: the colour spaces and the kernels' current forms.
    private struct Inputs: Equatable {
        var sourceSpace: YUVColorSpace
        var outputSpace: YUVColorSpace
        var forms: [ColorForm?]
    }

    /// The last inputs, their step values and the lean draws' values: every draw of a frame (and every frame
    /// until a parameter or the colour space changes) reuses them.
    private var cache: (inputs: Inputs, values: [StepValues], lean: LeanValues?)?

    private func values(sourceSpace: YUVColorSpace, outputSpace: YUVColorSpace) -> (steps: [StepValues], lean: LeanValues?) {
        let steps = chain.steps, sink = chain.sink
        let nodes = steps.flatMap { step -> [Int] in
            switch step {
            case .affine(let nodes): nodes
            case .curve(let node, _): [node]
            }
        }
        let inputs = Inputs(sourceSpace: sourceSpace, outputSpace: outputSpace,
                            forms: nodes.map { graph.nodes[$0].kernel.colorForm })
        if let cache, cache.inputs == inputs { return (cache.values, cache.lean) }
        let toRGB = Self.toRGB(sourceSpace), toYUV = Self.toYUV(sourceSpace)
        let values = steps.enumerated().map { index, step -> StepValues in
            switch step {
            case .affine(let nodes):
                var map = AffineColor.identity
                for node in nodes {
                    if case .affine(let form)? = graph.nodes[node].kernel.colorForm { map = form.after(map) }
                }
                let back = index == steps.count - 1 && sink != nil ? Self.sinkYUV(outputSpace, sink!) : toYUV
                let conjugated = back.after(map.after(toRGB))
                return .affine(rows: conjugated.rowArrays, offset: SIMD3<Float>(conjugated.offset))
            case .curve(let node, _):
                guard case .lumaCurve(let curve)? = graph.nodes[node].kernel.colorForm else {
                    return .curve(weights: .zero, offset: 0, direction: .zero, grey: .zero, intensity: 0)
                }
                // dot(w, rgb) with rgb = R·v + r: weights w·R, offset w·r.
                let weights = toRGB.rows[0] * curve.weights.x + toRGB.rows[1] * curve.weights.y + toRGB.rows[2] * curve.weights.z
                // Grey g in R'G'B' is g·(A·1) + a in Y'CbCr.
                let direction = toYUV.apply(SIMD3(1, 1, 1)) - toYUV.offset
                return .curve(weights: SIMD3<Float>(weights), offset: Float((curve.weights * toRGB.offset).sum()),
                              direction: SIMD3<Float>(direction), grey: SIMD3<Float>(toYUV.offset),
                              intensity: Float(curve.intensity))
            }
        }
        let lean = Self.leanValues(values)
        cache = (inputs, values, lean)
        return (values, lean)
    }

    /// Whether a lean draw is right for this frame: the chain is one matrix, or a grey curve then one matrix,
    /// without the terms the draw skips (below 1e-6, far under a code value). A curve reads luma alone when
    /// its weights match the frame's matrix (noir's BT.709 weights on BT.709 frames) and always moves colours
    /// along grey, which has no chroma: then output luma follows input luma, output chroma input chroma.
    func allows(_ condition: CompiledPass.LeanCondition, sourceSpace: YUVColorSpace, outputSpace: YUVColorSpace) -> Bool {
        // A chain of the shapes the lean programs fold has lean values (`ChainUniforms.leanGLSL`); then each
        // step must keep the two apart.
        values(sourceSpace: sourceSpace, outputSpace: outputSpace).lean != nil
            && eachStepAllows(condition, sourceSpace: sourceSpace, outputSpace: outputSpace)
    }

    /// Whether every step on its own keeps luma from chroma (`.lumaIgnoresChroma`) or chroma from luma
    /// (`.chromaIgnoresLuma`): then so does any mix of their results by weights (a masked blend), whatever
    /// the number of steps — what a masked packing's lean programs need (`YUVBlendPlan`).
    func eachStepAllows(_ condition: CompiledPass.LeanCondition, sourceSpace: YUVColorSpace, outputSpace: YUVColorSpace) -> Bool {
        func holds(luma: Bool, chroma: Bool) -> Bool {
            switch condition {
            case .lumaIgnoresChroma: luma
            case .chromaIgnoresLuma: chroma
            case .both: luma && chroma
            }
        }
        return values(sourceSpace: sourceSpace, outputSpace: outputSpace).steps.allSatisfy { step in
            switch step {
            case .affine(let m, _):
                holds(luma: abs(m[0][1]) + abs(m[0][2]) < 1e-6, chroma: abs(m[1][0]) + abs(m[2][0]) < 1e-6)
            case .curve(let w, _, let direction, _, _):
                // A curve moves colours along `direction` by an amount read through `w`.
                holds(luma: abs(w.y) + abs(w.z) < 1e-6, chroma: abs(direction.y) + abs(direction.z) < 1e-6)
            }
        }
    }

    /// The values of the chain's `declared` then, when it has a lean form, of `ChainUniforms.leanDeclared`, for
    /// a frame in `source` space written in `output` space.
    func uniformValues(sourceSpace: YUVColorSpace, outputSpace: YUVColorSpace) -> [UniformValue] {
        let (steps, lean) = values(sourceSpace: sourceSpace, outputSpace: outputSpace)
        var list: [UniformValue] = []
        for value in steps {
            switch value {
            case .affine(let rows, let offset):
                list += [.mat3(rows: rows), .vec3(offset.x, offset.y, offset.z)]
            case .curve(let weights, let offset, let direction, let grey, let intensity):
                list += [.vec3(weights.x, weights.y, weights.z), .float(offset), .vec3(direction.x, direction.y, direction.z),
                         .vec3(grey.x, grey.y, grey.z), .float(intensity)]
            }
        }
        if let lean {
            list += [.vec2(lean.curveInput.x, lean.curveInput.y), .vec3(lean.luma.x, lean.luma.y, lean.luma.z),
                     .vec4(lean.chromaMatrix.x, lean.chromaMatrix.y, lean.chromaMatrix.z, lean.chromaMatrix.w),
                     .vec2(lean.chromaOffset.x, lean.chromaOffset.y)]
        }
        return list
    }

    /// Sets every declared uniform of the chain for a frame (a lean program's too; others lack them).
    func set(_ program: ShaderProgram, sourceSpace: YUVColorSpace, outputSpace: YUVColorSpace) {
        let uniforms = chain.declared + ChainUniforms.leanDeclared
        for (uniform, value) in zip(uniforms, uniformValues(sourceSpace: sourceSpace, outputSpace: outputSpace)) {
            program.set(at: program.location(uniform.name), value)
        }
        if let pixellate = chain.pixellate, let kernel = graph.nodes[pixellate].kernel.blockAveraging {
            // Declared by the block passes and reads from `PixellateShaders.grid`, which precede the chain.
            let grid = kernel.blockGrid(for: chain.sourceSize)
            for (uniform, value) in zip(PixellateShaders.grid, [UniformValue.vec2(grid.origin), .float(Float(grid.scale))]) {
                program.set(at: program.location(uniform.name), value)
            }
        }
    }

    /// 8-bit Y'CbCr of `space` → R'G'B': rgb = M (yuv - offset).
    static func toRGB(_ space: YUVColorSpace) -> AffineColor {
        let (rows, offset) = space.yuvToRGBMatrix(bitDepth: 8)
        let matrix = AffineColor(rows: rows.map { SIMD3($0) }, offset: .zero)
        return AffineColor(rows: matrix.rows, offset: -matrix.apply(SIMD3(offset)))
    }

    /// R'G'B' → 8-bit Y'CbCr of `space`.
    static func toYUV(_ space: YUVColorSpace) -> AffineColor {
        let (rows, offset) = space.rgbToYUVMatrix(bitDepth: 8)
        return AffineColor(rows: rows.map { SIMD3($0) }, offset: SIMD3(offset))
    }

    /// R'G'B' → what `layout` stores (grey sinks: full-range luma, as `PackCoefficients`).
    static func sinkYUV(_ space: YUVColorSpace, _ layout: PackedFrameLayout) -> AffineColor {
        var space = space
        if layout.format == .gray { space.range = .full }
        return toYUV(space)
    }
}
