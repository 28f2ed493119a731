import Foundation
import PrismCore
import PrismGPU

/// Compiles every graph the Y'CbCr routes do not take through R'G'B': the source converted to R'G'B' pixels
/// (fused into the passes that read it, or rendered into a texture first), each node fused into the passes
/// that read it unless it is rendered into a texture of its own, and the output packed for each sink.
struct RGBPlan {
    /// Nodes rendered into textures of their own.
    let materialized: Set<Int>
    /// Whether the source is converted into a texture first.
    let sourceMaterialized: Bool
    /// Whether the output is evaluated once per pixel into full-resolution Y'CbCr planes and packed from them.
    let fullResolution: Bool
    /// The output's mask, when it is a blend by one generated mask (frames without a face draw less).
    let maskedOutput: MaskedOutput?

    /// Which streams become textures, and how the output is packed.
    static func make(_ graph: FilterGraph, layouts: [PackedFrameLayout], options: CompileOptions) -> RGBPlan {
        let nodes = graph.nodes
        var consumers = [Int](repeating: 0, count: nodes.count)
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
                if case .node(let id) = input { consumers[id.index] += 1 }
                if node.kernel.textureInputs.contains(index) { markTexture(input) }
            }
        }
        if case .node(let id) = graph.output { consumers[id.index] += 1 }
        if !options.fuse { materialized = Set(nodes.indices) }
        // Streams read by several consumers are rendered once when recomputing them costs more than a
        // texel fetch or two. The source never is for that reason alone: its planes are cheap to re-read.
        for index in nodes.indices where consumers[index] > 1 {
            if fusedCost(of: index, graph: graph, materialized: materialized, sourceMaterialized: sourceMaterialized) >= 4 {
                materialized.insert(index)
            }
        }
        // An expensive output into 8-bit planar 4:2:0 (whose packing evaluates each pixel three times: luma,
        // then Cb and Cr texels apart) is evaluated once per pixel into full-resolution Y'CbCr planes, four
        // pixels a fragment, and packed from them.
        // Not for a masked output (`MaskedOutput`): its frames without a face pack the background alone,
        // which is cheaper straight from the planes.
        let maskedOutput = MaskedOutput(graph)
        var fullResolution = false
        if case .node(let id) = graph.output, !materialized.contains(id.index) {
            let cost = fusedCost(of: id.index, graph: graph, materialized: materialized, sourceMaterialized: sourceMaterialized)
            let repeated = layouts.contains { FrameShaders.evaluationsPerPixel($0.format) > 1 }
            if options.fuse, layouts.count == 1, layouts[0].format == .yuv420p, maskedOutput == nil, cost >= 4 {
                fullResolution = true
            } else if layouts.count > 1 || (repeated && cost > options.maxPackCost) {
                // An output packed several ways is rendered once; so is an expensive one going into a layout
                // whose packing evaluates each pixel more than once (planar chroma, 10-bit).
                materialized.insert(id.index)
            }
        } else if case .source = graph.output, layouts.count > 1 {
            sourceMaterialized = true
        }
        return RGBPlan(materialized: materialized, sourceMaterialized: sourceMaterialized, fullResolution: fullResolution,
                       maskedOutput: maskedOutput)
    }

    /// The passes in dependency order, every target counted in `budget` before the first is allocated.
    func compile(graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, sizes: [Size], layouts: [PackedFrameLayout],
                 options: CompileOptions, budget: inout GraphBudget) throws -> [CompiledPass] {
        let sharing = try countTargets(graph: graph, sourceSize: sourceSize, sizes: sizes, layouts: layouts,
                                       options: options, budget: &budget)
        var passes: [CompiledPass] = []
        var builder = PassBuilder(graph: graph, sizes: sizes, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                  materialized: materialized, sourceMaterialized: sourceMaterialized)
        builder.clampsSteps = options.clampsSteps
        if sourceMaterialized {
            let target = TargetSpec(size: sourceSize, format: options.intermediateFormat)
            passes.append(try builder.expressionPass(root: .source, kind: .source, target: target, pack: nil))
        }
        for (index, node) in graph.nodes.enumerated() {
            var prepassPasses: [Int] = []
            for (prepassIndex, prepass) in node.kernel.prepasses.enumerated() {
                let inputSizes = node.inputs.map(builder.sizeOf)
                let size = prepass.size(inputSizes), format = prepass.format ?? options.intermediateFormat
                var pass = try builder.prepass(node: index, index: prepassIndex,
                                               target: TargetSpec(size: size, format: format, cleared: prepass.persistent))
                pass.persistent = prepass.persistent
                pass.sharedTarget = sharing[index][prepassIndex].map { prepassPasses[$0] }
                prepassPasses.append(passes.count)
                passes.append(pass)
            }
            if materialized.contains(index) {
                let target = TargetSpec(size: sizes[index], format: options.intermediateFormat)
                passes.append(try builder.expressionPass(root: .node(node.id), kind: .materialize(index), target: target,
                                                         pack: nil))
            }
        }
        if fullResolution {
            passes += try Self.fullResolutionPasses(builder: builder, graph: graph, layout: layouts[0])
        } else {
            for (index, layout) in layouts.enumerated() {
                passes.append(try builder.expressionPass(root: graph.output, kind: .sink(index),
                                                         target: FrameShaders.packMain(layout: layout).target, pack: layout))
            }
        }
        if let maskedOutput {
            try maskedOutput.apply(to: &passes, builder: builder)
        }
        return passes
    }

    /// Counts every target in `budget`; returns, for each node's prepasses, the earlier prepass whose target
    /// each draws into instead of a target of its own (`TargetSharing`).
    private func countTargets(graph: FilterGraph, sourceSize: Size, sizes: [Size], layouts: [PackedFrameLayout],
                              options: CompileOptions, budget: inout GraphBudget) throws -> [[Int?]] {
        if sourceMaterialized { try budget.add(sourceSize, format: options.intermediateFormat, what: "the input") }
        var sharing: [[Int?]] = []
        for (index, node) in graph.nodes.enumerated() {
            let inputSizes = node.inputs.map { $0.size(source: sourceSize, nodes: sizes) }
            let prepasses = node.kernel.prepasses
            sharing.append(options.sharesTargets
                ? TargetSharing.plan(prepasses, library: node.kernel.library, expression: node.kernel.expression,
                                     sizes: prepasses.map { $0.size(inputSizes) },
                                     formats: prepasses.map { $0.format ?? options.intermediateFormat })
                : [Int?](repeating: nil, count: prepasses.count))
            for (prepassIndex, prepass) in prepasses.enumerated() {
                let what = "\(node.name) (pass \(prepassIndex + 1))"
                let format = prepass.format ?? options.intermediateFormat
                // A pass drawing into a shared target adds a pass, not memory.
                if sharing[index][prepassIndex] != nil { try budget.addPass(prepass.size(inputSizes), what: what); continue }
                try budget.add(prepass.size(inputSizes), format: format, attachments: prepass.persistent ? 2 : 1, what: what)
            }
            if materialized.contains(index) { try budget.add(sizes[index], format: options.intermediateFormat, what: node.name) }
        }
        if fullResolution {
            let shape = FrameShaders.fullResolutionMain(layout: layouts[0], batched: false)
            try budget.add(shape.targetSize, format: .rgba16f, attachments: shape.attachments, what: "the output's Y'CbCr")
            try budget.addSinks(layouts) { YUVNativeShaders.packPlan(layout: $0, values: .declared("")) }
        } else {
            try budget.addSinks(layouts) { FrameShaders.packMain(layout: $0) }
        }
        return sharing
    }

    /// The output evaluated once per pixel into full-resolution Y'CbCr planes, then packed into `layout` (sink 0).
    private static func fullResolutionPasses(builder: PassBuilder, graph: FilterGraph, layout: PackedFrameLayout) throws -> [CompiledPass] {
        let shape = FrameShaders.fullResolutionMain(layout: layout, batched: false)
        let planes = try builder.expressionPass(root: graph.output, kind: .fullResolution(sink: 0),
                                                target: TargetSpec(size: shape.targetSize, format: .rgba16f, attachments: shape.attachments),
                                                pack: layout, fullResolution: true)
        let plan = YUVNativeShaders.packPlan(layout: layout, values: .declared(YUVNativeShaders.fullResolutionReads(size: layout.size)))
        let label = "pack \(layout.format.rawValue) (from full-resolution Y'CbCr)"
        let draws = CompiledPass.Draw.packing(plan.draws, label: label, prelude: FrameShaders.header)
        let pack = CompiledPass(kind: .sink(0), label: label, draws: draws, target: plan.target,
                                members: [], textures: ["prism_fullY", "prism_fullCb", "prism_fullCr"].enumerated().map {
                                    .init(uniform: $0.element, source: .fullResolution(sink: 0, attachment: $0.offset))
                                }, readsSourcePlanes: false, packLayout: nil)
        return [planes, pack]
    }

    /// Texture reads per pixel of evaluating `index` with everything unmaterialized fused in.
    static func fusedCost(of index: Int, graph: FilterGraph, materialized: Set<Int>, sourceMaterialized: Bool) -> Int {
        let node = graph.nodes[index]
        var total = node.kernel.cost
        for (inputIndex, input) in node.inputs.enumerated() where !node.kernel.textureInputs.contains(inputIndex) {
            switch input {
            case .source: total += 1
            case .node(let id):
                total += materialized.contains(id.index)
                    ? 1 : fusedCost(of: id.index, graph: graph, materialized: materialized, sourceMaterialized: sourceMaterialized)
            }
        }
        return total
    }
}
