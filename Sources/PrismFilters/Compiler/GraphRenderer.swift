import PrismCore
import PrismGPU

/// Runs a compiled `FilterGraph` on uploaded frames: every pass, in order, ending in one packed render
/// target per sink. Create and use it on the GPU thread. The compiler plans the passes as data; `init`
/// realises the plan (`Realiser`): programs from the context's cache, targets from `pool` (the context's),
/// which get them back when the renderer goes.
///
/// The resource contract: `init` calls `prepare()` once on each kernel of the graph and `deinit` balances
/// each with `releaseGPUResources()` (on failure `init` balances what it prepared), so a kernel's own
/// textures (LUT tables, ISF imported images) live exactly as long as the last renderer using them. A
/// renderer dropped on another thread does that release on its GPU thread.
package final class GraphRenderer {
    package let graph: FilterGraph
    package let sourceFormat: PixelFormat
    package let sourceSize: Size
    package let outputSize: Size
    package let sinkLayouts: [PackedFrameLayout]
    private let passes: [CompiledPass]
    /// Each pass's target, and for a draw its program and its variants' (realised from the plan).
    private let targets: [RenderTarget]
    /// Each pass's draws: the program realised when compiling (any error in a graph's code shows there), its
    /// cheaper variants, realised the first time one is drawn (most frames of most runs need few of them), and
    /// the values of its colour chain (one per chain: a pass's draws share the pass's).
    private var programs: [[(main: ShaderProgram, variants: [ShaderProgram?], chain: ChainValues?)]]
    /// Each node's kernel's uniforms and textures, as declared when compiled: what the renderer sets for each
    /// `CompiledPass.Member` every frame.
    private let declaredByNode: [(uniforms: [KernelUniform], textures: [KernelTexture])]
    private let realiser: Realiser
    /// The second targets of persistent prepasses.
    private let alternates: [RenderTarget]
    private let pool: TexturePool
    /// Held for what making it does: the vertex array GLES 3 needs bound while this renderer draws.
    private let drawState = DrawState()
    private var sourceTarget: RenderTarget?
    private var nodeTargets: [Int: RenderTarget] = [:]
    private var prepassTargets: [Int: [Int: RenderTarget]] = [:]
    /// Persistent prepasses by pass index: the target drawn this frame and the one holding the previous
    /// frame's result, swapped at the start of each frame.
    private var persistent: [Int: (current: RenderTarget, previous: RenderTarget)] = [:]
    /// Persistent prepasses (node, index) not yet drawn in the frame being rendered: readers get `previous`.
    private var pendingPersistent: Set<[Int]> = []
    private var sinkTargets: [Int: RenderTarget] = [:]
    /// The full-resolution Y'CbCr planes an expensive output is packed from, by sink (`CompiledPass.Kind.fullResolution`).
    private var fullResolutionTargets: [Int: RenderTarget] = [:]
    /// What each kernel's code and sizes were at compile time (see `isStale`).
    private let signatures: [String]
    private let compiledNodeSizes: [Size]
    /// Texture units handed out during one draw (reset per draw, kept to avoid allocating per frame).
    private let units = TextureUnits()
    /// Packing coefficients for the last colour space seen.
    private var packCoefficients: (space: YUVColorSpace, layout: PackedFrameLayout, values: PackCoefficients)?
    /// Optional per-pass GPU timing.
    package var timer: PassTimer?
    /// Called after each prepass is drawn, with its target (a network's calibration reads every feature so,
    /// before a later layer draws into the same texture).
    package var prepassObserver: ((_ node: Int, _ index: Int, _ target: RenderTarget) -> Void)?
    /// The kernels `init` prepared, released in `deinit` (the graph may gain nodes later).
    private let preparedKernels: [FilterKernel]
    private let thread: GPUThread
    /// `CompileOptions.outputColorSpace`.
    private let convertedOutputSpace: YUVColorSpace?

    package init(graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, sinks: [PixelFormat],
                options: CompileOptions = CompileOptions(), pool: TexturePool = .current) throws {
        guard let thread = GPUThread.current else {
            preconditionFailure("GraphRenderer made off a GPU thread; make it inside GPUContext.perform")
        }
        var prepared: [FilterKernel] = []
        let result: GraphCompiler.Result
        var targets: [RenderTarget] = [], alternates: [Int: RenderTarget] = [:]
        var programs: [[(main: ShaderProgram, variants: [ShaderProgram?], chain: ChainValues?)]] = []
        let realiser = Realiser(targets: pool)
        do {
            for node in graph.nodes {
                try node.kernel.prepare()
                prepared.append(node.kernel)
            }
            result = try GraphCompiler.compile(graph, sourceFormat: sourceFormat, sourceSize: sourceSize, sinks: sinks,
                                               options: options)
            for (index, pass) in result.passes.enumerated() {
                // A transient prepass's texture, once its readers have run, is drawn again by a later one.
                targets.append(try pass.sharedTarget.map { targets[$0] } ?? realiser.target(pass.target))
                let passChain = pass.colorChain.map { ChainValues($0, graph: graph) }
                programs.append(try pass.draws.map { draw in
                    (try realiser.program(draw.program), [ShaderProgram?](repeating: nil, count: draw.variants.count),
                     draw.colorChain.map { ChainValues($0, graph: graph) } ?? passChain)
                })
                if pass.persistent { alternates[index] = try realiser.target(pass.target) }
            }
        } catch {
            for target in Self.distinct(targets + alternates.values) { pool.release(target) }
            for kernel in prepared { kernel.releaseGPUResources() }
            throw error
        }
        self.graph = graph
        self.sourceFormat = sourceFormat
        self.sourceSize = sourceSize
        self.outputSize = result.outputSize
        self.sinkLayouts = result.sinkLayouts
        self.compiledNodeSizes = result.nodeSizes
        self.passes = result.passes
        self.targets = targets
        self.targetBytes = Self.distinct(targets + alternates.values).reduce(0) { $0 + $1.byteCount }
        self.programs = programs
        self.declaredByNode = graph.nodes.map { ($0.kernel.uniforms, $0.kernel.textures) }
        self.realiser = realiser
        self.alternates = Array(alternates.values)
        self.signatures = graph.nodes.map { GraphRenderer.signature(of: $0, graph: graph, nodeSizes: result.nodeSizes,
                                                                  sourceSize: sourceSize) }
        self.pool = pool
        self.preparedKernels = prepared
        self.thread = thread
        self.convertedOutputSpace = options.outputColorSpace
        for (passIndex, pass) in passes.enumerated() {
            let target = targets[passIndex]
            // Both start transparent black (`TargetSpec.cleared`).
            if let alternate = alternates[passIndex] { persistent[passIndex] = (target, alternate) }
            switch pass.kind {
            case .source: sourceTarget = target
            case .materialize(let node): nodeTargets[node] = target
            case .prepass(let node, let index): prepassTargets[node, default: [:]][index] = target
            case .sink(let index): sinkTargets[index] = target
            case .fullResolution(let sink): fullResolutionTargets[sink] = target
            }
        }
    }

    deinit {
        let pool = self.pool, kernels = preparedKernels, all = Self.distinct(targets + alternates)
        thread.runOrDefer {
            for target in all { pool.release(target) }
            for kernel in kernels { kernel.releaseGPUResources() }
        }
    }

    /// Each target once (passes that share one list it more than once).
    private static func distinct(_ targets: [RenderTarget]) -> [RenderTarget] {
        var seen: Set<ObjectIdentifier> = []
        return targets.filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    /// Bytes of the render targets this renderer holds (shared ones counted once): its GPU memory besides
    /// the kernels' own textures (weights, tables).
    package let targetBytes: Int

    /// True when a parameter change since compiling altered a kernel's code or a target's size (a blur
    /// radius, a pixellate scale, a crop): the graph must be compiled again for it to take effect.
    /// Changes that only reach uniforms (an intensity, a colour) never make a renderer stale.
    package var isStale: Bool {
        graph.nodes.enumerated().contains { index, node in
            index >= signatures.count
                || Self.signature(of: node, graph: graph, nodeSizes: compiledNodeSizes, sourceSize: sourceSize) != signatures[index]
        }
    }

    private static func signature(of node: FilterGraph.Node, graph: FilterGraph, nodeSizes: [Size], sourceSize: Size) -> String {
        let inputSizes = node.inputs.map { $0.size(source: sourceSize, nodes: nodeSizes) }
        let kernel = node.kernel
        let output = (try? kernel.outputSize(inputSizes: inputSizes, sourceSize: sourceSize)).map { "\($0)" } ?? "invalid"
        let prepasses = kernel.prepasses.map { "\($0.main)|\($0.size(inputSizes))|\(String(describing: $0.format))|\($0.persistent)" }
        return ([CompiledPass.Member.declarations(of: kernel), kernel.library, kernel.expression, output, kernel.compileKey]
                + prepasses).joined(separator: "\u{1}")
    }

    /// The target prepass `index` of node `node` drew last (nil if the graph has none): what a check of a
    /// kernel's intermediate results (a network's outputs) reads. A transient prepass's target may hold a
    /// later prepass's result by the end of the frame (`TargetSharing`); `prepassObserver` sees each as drawn.
    package func prepassTarget(node: Int, index: Int) -> RenderTarget? {
        return prepassTargets[node]?[index]
    }

    /// True when the graph runs on the frame's Y'CbCr values without an R'G'B' image (`YUVPlan`).
    package var staysInYUV: Bool { passes.contains { $0.colorChain != nil } }

    /// Number of draws per frame.
    package var passCount: Int { passes.count }
    /// The passes the last `render` drew (fewer than `passCount` where a zero mask skips some).
    package private(set) var lastFramePasses = 0
    /// `maskIsZero`'s answers for the frame being rendered.
    private var zeroMasks: [SIMD2<Int>: Bool] = [:]
    /// The label of each pass, in order (for stats and benchmarks).
    package var passLabels: [String] { passes.map(\.label) }

    /// The render target holding sink `index`'s packed frame after `render`.
    package func sinkTarget(_ index: Int = 0) -> RenderTarget { sinkTargets[index]! }

    /// Draws every pass for `frame`.
    package func render(_ frame: UploadedFrame, context: FrameContext) throws {
        precondition(frame.format == sourceFormat && frame.size == sourceSize, "frame does not match the compiled graph")
        timer?.beginFrame()
        defer { timer?.endFrame() }
        // Persistent targets: last frame's result becomes `previous` (what readers get until the pass
        // has run again), the older one is drawn over.
        for (index, pair) in persistent {
            persistent[index] = (current: pair.previous, previous: pair.current)
            if case .prepass(let node, let prepass) = passes[index].kind {
                prepassTargets[node, default: [:]][prepass] = pair.current
                pendingPersistent.insert([node, prepass])
            }
        }
        lastFramePasses = 0
        zeroMasks.removeAll(keepingCapacity: true)
        for (index, pass) in passes.enumerated() {
            timer?.begin(pass: index)
            // What only a zero mask's blend reads is not made on such frames (timed as empty: the timer's
            // queries are per pass).
            if let skip = pass.skippedWhen, holds(skip, chain: nil, frame: frame, context: context) {
                timer?.end(pass: index)
                continue
            }
            lastFramePasses += 1
            let target = persistent[index]?.current ?? targets[index]
            if let groups = pass.computeGroups {
                // A compute pass: the target is an image the program stores into, not a framebuffer.
                let program = programs[index][0].main
                bind(pass, program, frame: frame, context: context, chain: programs[index][0].chain)
                // GLES binds image uniforms by `layout(binding = 0)` in the shader, not by glUniform.
                target.texture.bindImage(unit: 0, access: .writeOnly)
                program.dispatchCompute(groupsX: groups.x, groupsY: groups.y)
            } else {
                draw(pass, index: index, into: target, frame: frame, context: context)
            }
            if case .prepass(let node, let prepass) = pass.kind {
                if pendingPersistent.remove([node, prepass]) != nil { prepassTargets[node, default: [:]][prepass] = target }
                prepassObserver?(node, prepass, target)
            }
            timer?.end(pass: index)
        }
    }

    /// Draws one fragment pass's draws into `target` (a masked draw only where its mask reaches).
    private func draw(_ pass: CompiledPass, index: Int, into target: RenderTarget, frame: UploadedFrame, context: FrameContext) {
        target.bindForDrawing()
        // The mask's rectangles this frame, asked once for all the draws it limits.
        var maskRegions: (generator: Int, channel: Int, regions: [PixelRect]?)?
        for (drawIndex, draw) in pass.draws.enumerated() {
            // A masked draw covers only what its mask can reach this frame (nothing when it reaches nothing).
            var areas: [PixelRect]?, blockBox: PixelRect?
            let whole = PixelRect(x: draw.columns ?? 0..<target.size.width, y: draw.rows ?? 0..<target.size.height)
            if let mask = draw.mask {
                if maskRegions?.generator != mask.generator || maskRegions?.channel != mask.channel {
                    maskRegions = (mask.generator, mask.channel,
                                   graph.nodes[mask.generator].kernel.nonzeroRegions(channel: mask.channel, frame: context,
                                                                                     size: outputSize))
                }
                (areas, blockBox) = mask.areas(maskRegions!.regions, graph: graph, frameSize: sourceSize)
                if mask.outside { areas = CompiledPass.MaskRegion.complement(of: areas, in: whole) }
                if areas?.isEmpty == true { continue }
            }
            let chain = programs[index][drawIndex].chain
            let program = draw.variants.indices.first { holds(draw.variants[$0].condition, chain: chain, frame: frame, context: context) }
                .map { variant(pass: index, draw: drawIndex, $0) } ?? programs[index][drawIndex].main
            bind(pass, program, frame: frame, context: context, chain: chain)
            if let box = blockBox {
                program.set(at: program.location(PixellateShaders.blockBox.name),
                            .ivec4(Int32(box.x.lowerBound), Int32(box.y.lowerBound), Int32(box.x.upperBound), Int32(box.y.upperBound)))
            }
            for area in areas ?? [whole] {
                target.setViewport(area)
                program.drawFullscreen()
            }
        }
    }

    /// How many cheaper programs the draws have in all.
    package var variantCount: Int { passes.reduce(0) { $0 + $1.draws.reduce(0) { $0 + $1.variants.count } } }

    /// Realises every variant not yet drawn, so that a test sees any that does not compile.
    package func realiseEveryVariant() throws {
        for (pass, realised) in programs.enumerated() {
            for (draw, programsOfDraw) in realised.enumerated() {
                for variant in programsOfDraw.variants.indices where programsOfDraw.variants[variant] == nil {
                    programs[pass][draw].variants[variant] = try realiser.program(passes[pass].draws[draw].variants[variant].program)
                }
            }
        }
    }

    /// Variant `variant` of a draw's program, realised now if it has not been. A variant is the same code
    /// specialised, so one that does not compile is Prism's bug: tests stop on it; a run draws the main
    /// program, which is right for every frame.
    private func variant(pass: Int, draw: Int, _ variant: Int) -> ShaderProgram {
        if let program = programs[pass][draw].variants[variant] { return program }
        let program: ShaderProgram
        do {
            program = try realiser.program(passes[pass].draws[draw].variants[variant].program)
        } catch {
            assertionFailure("variant \(variant) of \(passes[pass].label) does not compile: \(error)")
            program = programs[pass][draw].main
        }
        programs[pass][draw].variants[variant] = program
        return program
    }

    /// Whether generator `generator`'s `channel` is zero everywhere in this frame, by its own account (asked
    /// once a frame: several passes and draws depend on it).
    private func maskIsZero(generator: Int, channel: Int, context: FrameContext) -> Bool {
        let key = SIMD2(generator, channel)
        if let known = zeroMasks[key] { return known }
        let zero = graph.nodes[generator].kernel.nonzeroRegions(channel: channel, frame: context, size: outputSize)?
            .allSatisfy(\.isEmpty) ?? false
        zeroMasks[key] = zero
        return zero
    }

    /// Whether a draw's cheaper program is right for this frame.
    private func holds(_ condition: CompiledPass.Variant.Condition, chain: ChainValues?, frame: UploadedFrame,
                       context: FrameContext) -> Bool {
        switch condition {
        case .lean(let lean):
            return chain?.allows(lean, sourceSpace: frame.colorSpace, outputSpace: outputColorSpace(for: frame)) == true
        case .alignedBlocks(let pixellate):
            return graph.nodes[pixellate].kernel.blockAveraging?.blockEdgesAlign(on: sourceSize) == true
        case .fewRegions(let limit):
            return context.regions.count <= limit
        case .leanSteps(let lean):
            return chain?.eachStepAllows(lean, sourceSpace: frame.colorSpace, outputSpace: outputColorSpace(for: frame)) == true
        case .all(let conditions):
            return conditions.allSatisfy { holds($0, chain: chain, frame: frame, context: context) }
        case .maskIsZero(let generator, let channel):
            return maskIsZero(generator: generator, channel: channel, context: context)
        }
    }

    /// Binds the frame planes, the other passes' targets, the kernels' uniforms and the packing
    /// coefficients (`chain`'s, for a Y'CbCr draw) for one draw.
    private func bind(_ pass: CompiledPass, _ program: ShaderProgram, frame: UploadedFrame, context: FrameContext,
                      chain: ChainValues?) {
        program.use()
        var firstFreeUnit = 0
        if pass.readsSourcePlanes {
            frame.bind(to: program)
            firstFreeUnit = frame.textures.count
        }
        units.reset(to: firstFreeUnit)
        for binding in pass.textures {
            let target: RenderTarget?
            var attachment = 0
            switch binding.source {
            case .sourceTarget: target = sourceTarget
            case .node(let node): target = nodeTargets[node]
            case .prepass(let node, let prepass): target = prepassTargets[node]?[prepass]
            case .fullResolution(let sink, let index): target = fullResolutionTargets[sink]; attachment = index
            }
            guard let target else { continue }
            // `<sampler>Size`, looked up once per program (the cache takes the sampler's name as prefix). Set even
            // when the sampler itself is not read: a pass may size its fetches by another input's size (blur's
            // second half reads its prepass by the source's size).
            program.set(at: program.location(prefix: binding.uniform, placeholder: "$Size"),
                        Float(target.size.width), Float(target.size.height))
            // Only samplers the shader reads take a unit: a network's pass declares every earlier layer's target,
            // and hundreds of bound units pass the GPU's limit (GL_INVALID_ENUM, seen at the next readback).
            let location = program.location(binding.uniform)
            guard location >= 0 else { continue }
            let unit = units.next()
            target.textures[attachment].bind(unit: unit)
            program.set(at: location, Int32(unit))
        }
        for member in pass.members {
            let kernel = graph.nodes[member.node].kernel
            // Every declared uniform and texture from its declared source; the parameters as they are now.
            let inputs = UniformInputs(frame: context, outputSize: member.outputSize, inputSizes: member.inputSizes,
                                       parameters: (kernel as? ParameterizedKernel)?.parameters)
            for uniform in declaredByNode[member.node].uniforms {
                let value = uniform.value(inputs)
                // A value of another type than declared is a GL error at the next check, far from its cause.
                assert(value.fits(uniform.type), "\(uniform.name) is declared \(uniform.type) but given \(value.type)")
                program.set(at: program.location(prefix: member.prefix, placeholder: uniform.name), value)
            }
            for declared in declaredByNode[member.node].textures {
                let location = program.location(prefix: member.prefix, placeholder: declared.name)
                guard location >= 0, let texture = declared.texture() else { continue }
                let unit = units.next()
                texture.bind(unit: unit)
                program.set(at: location, Int32(unit))
            }
            let uniforms = KernelUniforms(program: program, prefix: member.prefix, units: units,
                                          outputSize: member.outputSize, inputSizes: member.inputSizes)
            kernel.setUniforms(uniforms, frame: context)
        }
        if let chain {
            chain.set(program, sourceSpace: frame.colorSpace, outputSpace: outputColorSpace(for: frame))
        } else if let layout = pass.packLayout {
            let space = outputColorSpace(for: frame)
            if packCoefficients?.space != space || packCoefficients?.layout != layout {
                packCoefficients = (space, layout, PackCoefficients(layout: layout, colorSpace: space))
            }
            FrameShaders.setPackUniforms(program, packCoefficients!.values)
        }
    }

    /// The Y'CbCr description packed frames are written in: the source's own, or BT.709 / BT.601
    /// limited (by size) when the source is RGB.
    package func outputColorSpace(for frame: UploadedFrame) -> YUVColorSpace {
        convertedOutputSpace
            ?? YUVColorSpace.packing(sourceFormat: frame.format, sourceColorSpace: frame.colorSpace, outputSize: outputSize)
    }
}
