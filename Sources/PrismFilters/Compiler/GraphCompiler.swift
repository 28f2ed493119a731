import Foundation
import PrismCore
import PrismGPU

/// How the compiler may combine kernels into passes.
package struct CompileOptions: Sendable {
    /// Fuse kernels into as few passes as possible. Off: one pass per kernel, the source conversion
    /// and the packing each in their own pass (the baseline fusion is measured against).
    package var fuse: Bool
    /// The most texture reads per pixel an expression may cost and still be evaluated inside the
    /// packing pass, which evaluates it more than once per pixel (luma, then chroma).
    package var maxPackCost: Int
    /// Storage of textures between passes: RGBA8 is the fast path everywhere (and much the fastest on
    /// llvmpipe); RGBA16F keeps chains of many unfused passes from accumulating 8-bit rounding.
    package var intermediateFormat: TextureFormat
    /// Bounds on sizes, passes and memory; nil reads them from the context at compile time.
    package var limits: GraphLimits?
    /// Let chains of colour maps, pixellate and masked blends between 4:2:0 frames stay in Y'CbCr
    /// (`YUVPlan`); off: every graph goes through R'G'B' (to compare, or to keep the R'G'B' clamps).
    package var yuvRoute: Bool
    /// The Y'CbCr the sinks pack in when the graph converts the colour (tone mapping to BT.709); nil: the
    /// packing rule (`YUVColorSpace.packing`: the source's own).
    package var outputColorSpace: YUVColorSpace?
    /// Clamp every step's output to 0...1 (what an 8-bit texture between steps would do, so fused and unfused
    /// chains agree). Off for graphs in linear light (`tonemap(to=linear)`), whose intermediates are RGBA16F:
    /// steps keep values above 1 (clamped at 0 only).
    package var clampsSteps = true
    /// Let a kernel's transient prepasses draw into the textures of earlier ones no longer read
    /// (`TargetSharing`); off: a texture per prepass (to measure what sharing saves).
    package var sharesTargets = true

    package init(fuse: Bool = true, maxPackCost: Int = 8, intermediateFormat: TextureFormat = .rgba8,
                limits: GraphLimits? = nil, yuvRoute: Bool = true) {
        self.fuse = fuse
        self.yuvRoute = yuvRoute
        self.maxPackCost = maxPackCost
        self.intermediateFormat = intermediateFormat
        self.limits = limits
    }
}

/// One pass as planned: the programs it draws (their source), the target it renders (its shape), and
/// what to bind — data only; `GraphRenderer` realises it into GL objects (`Realiser`).
final class CompiledPass {
    /// `fullResolution`: sink `sink`'s pixels in its Y'CbCr, before the packing (`FrameShaders.fullResolutionMain`).
    enum Kind { case materialize(Int), prepass(node: Int, index: Int), sink(Int), source, fullResolution(sink: Int) }
    enum TextureSource {
        case sourceTarget, node(Int), prepass(node: Int, index: Int)
        /// One of the three planes of a `fullResolution` pass.
        case fullResolution(sink: Int, attachment: Int)
    }
    /// A kernel whose code is in the pass, with its uniforms and textures as declared when planned: the
    /// pass's text declares exactly these, and the renderer sets each of them every frame.
    struct Member {
        let node: Int
        let prefix: String
        let outputSize: Size
        let inputSizes: [Size]
        let uniforms: [KernelUniform]
        let textures: [KernelTexture]

        init(node: Int, prefix: String, outputSize: Size, inputSizes: [Size], kernel: FilterKernel) {
            self.node = node
            self.prefix = prefix
            self.outputSize = outputSize
            self.inputSizes = inputSizes
            uniforms = kernel.uniforms
            textures = kernel.textures
        }

        /// The GLSL declarations of a kernel's uniforms and textures, `$` unreplaced: written once per pass,
        /// ahead of its library.
        static func declarations(of kernel: FilterKernel) -> String {
            (kernel.textures.filter { !$0.inSource }.map(\.declaration)
                + kernel.uniforms.filter { !$0.inSource }.map(\.declaration)).joined()
        }
    }

    /// One program drawn over some rows of the target (all of it when nil), and some of its columns.
    struct Draw {
        let program: ProgramSource
        let rows: Range<Int>?
        var columns: Range<Int>? = nil
        let fragmentSource: String
        /// Cheaper programs drawing the same texels, each right while its condition holds for the frame; the
        /// first that holds is drawn (list the cheapest first).
        var variants: [Variant] = []
        /// Limits the draw, each frame, to the target texels a mask generator can make nonzero.
        var mask: MaskRegion? = nil
        /// The draw's own colour chain, instead of the pass's (a masked pass's background, a shorter chain).
        var colorChain: ChainUniforms? = nil
    }

    struct Variant {
        let program: ProgramSource
        let condition: Condition

        enum Condition {
            /// The colour chain lets luma and chroma be evaluated apart (`ChainUniforms.allows`).
            case lean(LeanCondition)
            /// Pixellate node `pixellate`'s block edges align with the packing (`BlockAveraging.blockEdgesAlign`).
            case alignedBlocks(pixellate: Int)
            /// The frame has at most `limit` regions (`FilterKernel.regionLimits`).
            case fewRegions(limit: Int)
            /// Every step of the chain keeps luma and chroma apart as said (`ChainUniforms.eachStepAllows`).
            case leanSteps(LeanCondition)
            /// All of these hold.
            indirect case all([Condition])
            /// Generator `generator`'s `channel` is zero everywhere this frame (`nonzeroRegions` says so).
            case maskIsZero(generator: Int, channel: Int)
        }
    }

    /// Where a mask generator's `nonzeroRegions` fall in a draw's target, each frame.
    struct MaskRegion {
        let generator: Int
        let channel: Int
        let layout: Layout
        /// The texels of the target the draw covers.
        let targetArea: PixelRect
        /// Draw the rest of `targetArea` instead: what the same mask's draw leaves out (a background drawn
        /// once around the blended rectangles, not under them too).
        var outside = false

        enum Layout {
            /// Target texel (origin.x + x, origin.y + y) holds pixels `x·texel.width ..< (x + 1)·texel.width` of
            /// pixel rows `y·texel.height ..< (y + 1)·texel.height` (origin nil: targetArea's first texel; x and y
            /// may be negative, for margins). `reach`: pixels around each region the draw covers too — what
            /// later passes read beyond the mask (a blur's taps), so that everything they read is this frame's.
            case pixels(texel: Size, origin: SIMD2<Int>? = nil, reach: SIMD2<Int> = .zero)
            /// The block means of pixellate node `pixellate` in rows of `PixellateShaders.blockRowTexels`
            /// (a grid `gridWidth` blocks wide): the draw covers the target rows holding the blocks needed,
            /// and `prism_blockBox` tells the blocks between them that are not needed to skip their sums.
            case blocks(pixellate: Int, gridWidth: Int)
        }

        /// This frame's draw: the target rectangles to draw (nil: all of `targetArea`; none: nothing), and
        /// for `.blocks` the box of blocks to compute (x, y in blocks).
        func areas(_ regions: [PixelRect]?, graph: FilterGraph, frameSize: Size) -> (areas: [PixelRect]?, blockBox: PixelRect?) {
            switch layout {
            case .pixels(let texel, let origin, let reach):
                guard let regions else { return (nil, nil) }
                let origin = origin ?? SIMD2(targetArea.x.lowerBound, targetArea.y.lowerBound)
                // Texels holding any of `pixels`, clamped to the draw's; floor division (margins are negative).
                func span(_ pixels: Range<Int>, _ per: Int, _ origin: Int, _ target: Range<Int>) -> Range<Int> {
                    func texel(_ pixel: Int) -> Int { origin + (pixel >= 0 ? pixel / per : -((per - 1 - pixel) / per)) }
                    let low = min(max(texel(pixels.lowerBound), target.lowerBound), target.upperBound)
                    return low..<max(low, min(texel(pixels.upperBound - 1) + 1, target.upperBound))
                }
                let grown = regions.filter { !$0.isEmpty }.map {
                    PixelRect(x: ($0.x.lowerBound - reach.x)..<($0.x.upperBound + reach.x),
                              y: ($0.y.lowerBound - reach.y)..<($0.y.upperBound + reach.y))
                }
                let areas = Self.merged(grown).map {
                    PixelRect(x: span($0.x, texel.width, origin.x, targetArea.x), y: span($0.y, texel.height, origin.y, targetArea.y))
                }
                return (Self.merged(areas.filter { !$0.isEmpty }), nil)
            case .blocks(let pixellate, let gridWidth):
                guard let kernel = graph.nodes[pixellate].kernel.blockAveraging else { return (nil, nil) }
                let grid = kernel.blockGrid(for: frameSize).size
                guard let regions else { return (nil, PixelRect(x: 0..<grid.width, y: 0..<grid.height)) }
                let union = regions.reduce(PixelRect(x: 0..<0, y: 0..<0)) { $0.union($1) }
                guard !union.isEmpty else { return ([], nil) }
                // The packing draws whole texels (4 pixels of luma, 8 of chroma) and chroma rows of two pixel
                // rows, and reads the blocks of every pixel it draws (with a zero weight outside the mask):
                // those blocks must hold this frame's means.
                let wider = PixelRect(x: union.x.lowerBound / 8 * 8..<min((union.x.upperBound + 7) / 8 * 8, frameSize.width),
                                      y: max(union.y.lowerBound - 2, 0)..<min(union.y.upperBound + 2, frameSize.height))
                let box = kernel.blocks(covering: wider, size: frameSize)
                guard !box.isEmpty else { return ([], nil) }
                let perRow = PixellateShaders.blockRowTexels
                let low = box.y.lowerBound * gridWidth / perRow
                let high = (box.y.upperBound * gridWidth + perRow - 1) / perRow
                let rows = targetArea.y
                return ([PixelRect(x: targetArea.x, y: min(rows.lowerBound + low, rows.upperBound)..<min(rows.lowerBound + high, rows.upperBound))], box)
            }
        }

        /// `whole` less `areas` (nil: all of it is taken), as rectangles: bands between the areas' top and bottom
        /// edges, split at their sides.
        static func complement(of areas: [PixelRect]?, in whole: PixelRect) -> [PixelRect] {
            guard let areas else { return [] }
            let cuts = Set([whole.y.lowerBound, whole.y.upperBound] + areas.flatMap { [$0.y.lowerBound, $0.y.upperBound] })
                .filter { whole.y.contains($0) || $0 == whole.y.upperBound }.sorted()
            var result: [PixelRect] = []
            for (top, bottom) in zip(cuts, cuts.dropFirst()) {
                let taken = areas.filter { $0.y.lowerBound <= top && $0.y.upperBound >= bottom }.map(\.x)
                    .sorted { $0.lowerBound < $1.lowerBound }
                var x = whole.x.lowerBound
                for span in taken {
                    if span.lowerBound > x { result.append(PixelRect(x: x..<min(span.lowerBound, whole.x.upperBound), y: top..<bottom)) }
                    x = max(x, span.upperBound)
                }
                if x < whole.x.upperBound { result.append(PixelRect(x: x..<whole.x.upperBound, y: top..<bottom)) }
            }
            return result.filter { !$0.isEmpty }
        }

        /// Regions with overlapping ones replaced by their union (each pixel is drawn once).
        static func merged(_ regions: [PixelRect]) -> [PixelRect] {
            var result: [PixelRect] = []
            for region in regions where !region.isEmpty {
                var grown = region
                while let index = result.firstIndex(where: { $0.intersects(grown) }) {
                    grown = grown.union(result.remove(at: index))
                }
                result.append(grown)
            }
            return result
        }
    }
    /// When a `YUVPlan` draw may evaluate luma from luma alone, chroma from chroma alone, or (NV12's one
    /// draw) both.
    enum LeanCondition { case lumaIgnoresChroma, chromaIgnoresLuma, both }

    let kind: Kind
    let label: String
    var draws: [Draw]
    /// The target's shape (a persistent prepass gets two of it).
    var target: TargetSpec
    /// Kernels whose code is in the program (or in one of its draws' variants): each sets its uniforms.
    private(set) var members: [Member]
    /// Sampler uniforms bound to other passes' targets (the variants' too).
    private(set) var textures: [(uniform: String, source: TextureSource)]
    var readsSourcePlanes: Bool
    let packLayout: PackedFrameLayout?
    /// A persistent prepass: two targets of this shape, swapped each frame (both start transparent black).
    var persistent = false
    /// The earlier pass whose target this one draws into (`TargetSharing`); nil: a target of its own.
    var sharedTarget: Int?
    /// Passes of a `YUVPlan`: the colour chain whose uniforms the renderer sets per frame.
    var colorChain: ChainUniforms?
    /// Not drawn on frames where this generator's channel is zero everywhere: the pass feeds only what a
    /// masked blend hides there (the R'G'B' route's `face-blur` with no face: the blur's passes).
    var skippedWhereMaskIsZero: (generator: Int, channel: Int)?
    /// A compute prepass: its one draw's program is dispatched as these work groups, with the target bound
    /// as image unit 0 (the shader's `layout(binding = 0)` image).
    var computeGroups: SIMD2<Int>?

    /// Adds what a variant's program reads that the main one does not (a zero mask's sink program evaluates
    /// the background's nodes itself where the main one reads them materialised): the renderer sets the
    /// pass's members and textures on whichever program it draws, and a program that lacks one ignores it.
    func addBindings(of variant: CompiledPass) {
        let prefixes = Set(members.map(\.prefix)), uniforms = Set(textures.map(\.uniform))
        members += variant.members.filter { !prefixes.contains($0.prefix) }
        textures += variant.textures.filter { !uniforms.contains($0.uniform) }
        readsSourcePlanes = readsSourcePlanes || variant.readsSourcePlanes
    }

    init(kind: Kind, label: String, draws: [Draw], target: TargetSpec, members: [Member],
         textures: [(uniform: String, source: TextureSource)], readsSourcePlanes: Bool, packLayout: PackedFrameLayout?) {
        self.kind = kind
        self.label = label
        self.draws = draws
        self.target = target
        self.members = members
        self.textures = textures
        self.readsSourcePlanes = readsSourcePlanes
        self.packLayout = packLayout
    }
}

/// Plans a `FilterGraph` as passes for one source format and size: no GL object is made here (only
/// `GraphLimits.current()` asks the context, when the options carry no limits).
enum GraphCompiler {
    struct Result {
        var passes: [CompiledPass]
        var sinkLayouts: [PackedFrameLayout]
        var outputSize: Size
        var nodeSizes: [Size]
    }

    static func compile(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, sinks: [PixelFormat],
                        options: CompileOptions) throws -> Result {
        let nodes = graph.nodes
        // 0. Limits, checked before anything is allocated.
        let limits = try options.limits ?? GraphLimits.current()
        try GraphLimits.checkNodeCount(nodes.count, limit: limits.maxNodes)
        var budget = GraphBudget(limits: limits)
        // 1. Sizes, producer first, and the route.
        let (shape, route) = try plan(graph, sourceFormat: sourceFormat, sourceSize: sourceSize, sinks: sinks,
                                      options: options, limits: limits)
        let sizes = shape.sizes, outputSize = shape.outputSize, layouts = shape.layouts
        func size(of stream: FilterGraph.Stream) -> Size {
            switch stream {
            case .source: return sourceSize
            case .node(let id): return sizes[id.index]
            }
        }
        switch route {
        case .yuv(let plan):
            let passes = try plan.compile(graph: graph, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                          layouts: layouts, budget: &budget)
            return Result(passes: passes, sinkLayouts: layouts, outputSize: outputSize, nodeSizes: sizes)
        case .yuvBlend(let plan):
            let passes = try plan.compile(graph: graph, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                          layouts: layouts, budget: &budget)
            return Result(passes: passes, sinkLayouts: layouts, outputSize: outputSize, nodeSizes: sizes)
        case .yuvBlur(let plan):
            let passes = try plan.compile(graph: graph, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                          layouts: layouts, budget: &budget)
            return Result(passes: passes, sinkLayouts: layouts, outputSize: outputSize, nodeSizes: sizes)
        case .rgb:
            break
        }

        // 2. Which streams become textures.
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

        // 3. Passes in dependency order.
        // Every target is counted before the first is allocated.
        if sourceMaterialized { try budget.add(sourceSize, format: options.intermediateFormat, what: "the input") }
        var sharing: [[Int?]] = []
        for (index, node) in nodes.enumerated() {
            let inputSizes = node.inputs.map(size(of:))
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
            try budget.addSinks(layouts) { layout in
                let shape = YUVNativeShaders.packPlan(layout: layout, values: .declared(""))
                return (shape.targetSize, shape.attachments)
            }
        } else {
            try budget.addSinks(layouts) { layout in
                let shape = FrameShaders.packMain(layout: layout)
                return (shape.targetSize, shape.attachments)
            }
        }

        var passes: [CompiledPass] = []
        var builder = PassBuilder(graph: graph, sizes: sizes, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                  materialized: materialized, sourceMaterialized: sourceMaterialized)
        builder.clampsSteps = options.clampsSteps
        if sourceMaterialized {
            let target = TargetSpec(size: sourceSize, format: options.intermediateFormat)
            passes.append(try builder.expressionPass(root: .source, kind: .source, target: target, pack: nil))
        }
        for (index, node) in nodes.enumerated() {
            var prepassPasses: [Int] = []
            for (prepassIndex, prepass) in node.kernel.prepasses.enumerated() {
                let inputSizes = node.inputs.map(size(of:))
                let size = prepass.size(inputSizes), format = prepass.format ?? options.intermediateFormat
                let pass = try builder.prepass(node: index, index: prepassIndex,
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
            passes += try fullResolutionPasses(builder: builder, graph: graph, layout: layouts[0])
        } else {
            for (index, layout) in layouts.enumerated() {
                let shape = FrameShaders.packMain(layout: layout)
                let target = TargetSpec(size: shape.targetSize, attachments: shape.attachments, readPlan: shape.readPlan)
                passes.append(try builder.expressionPass(root: graph.output, kind: .sink(index), target: target, pack: layout))
            }
        }
        if let masked = maskedOutput {
            try masked.apply(to: passes, builder: builder)
        }
        return Result(passes: passes, sinkLayouts: layouts, outputSize: outputSize, nodeSizes: sizes)
    }

    /// An output that is a blend by one generated mask, on the R'G'B' route: on frames where the mask is zero
    /// everywhere (no face), the passes that feed only the blend's effect are skipped and the passes that
    /// evaluate the output draw its background instead (a variant per draw), so such frames cost the
    /// background alone. (The Y'CbCr route's `YUVBlendPlan` also bounds the work by the mask's rectangles.)
    struct MaskedOutput {
        let output: Int
        /// The blend: the output, or under it through colour maps (single-input point-wise kernels).
        let blend: Int
        let generator: Int
        let channel: Int
        /// The blend's input where the mask is 0.
        let background: FilterGraph.Stream

        init?(_ graph: FilterGraph) {
            guard case .node(let output) = graph.output else { return nil }
            var index = output.index
            while graph.nodes[index].kernel.colorBlend == nil {
                let node = graph.nodes[index], kernel = node.kernel
                guard kernel.isPointwise, node.inputs.count == 1, kernel.prepasses.isEmpty, kernel.textureInputs.isEmpty,
                      case .node(let next) = node.inputs[0] else { return nil }
                index = next.index
            }
            guard let blend = graph.nodes[index].kernel.colorBlend, graph.nodes[index].inputs.count == 3,
                  case .node(let weight) = graph.nodes[index].inputs[blend.weight], graph.nodes[weight.index].inputs.isEmpty
            else { return nil }
            let inputs = graph.nodes[index].inputs
            self.output = output.index
            self.blend = index
            generator = weight.index
            channel = blend.channel
            background = inputs[blend.from]
        }

        /// Marks the passes a zero mask does not need and gives the sink passes their background programs.
        fileprivate func apply(to passes: [CompiledPass], builder: PassBuilder) throws {
            let graph = builder.graph
            /// The nodes `stream` is computed from, itself included (visited once each: graphs share streams).
            func ancestors(_ stream: FilterGraph.Stream) -> Set<Int> {
                var found = Set<Int>(), pending = [stream]
                while let next = pending.popLast() {
                    if case .node(let id) = next, found.insert(id.index).inserted { pending += graph.nodes[id.index].inputs }
                }
                return found
            }
            // The background's nodes: the blend's `from` input and the colour maps above the blend.
            var backgroundNodes = ancestors(background)
            var index = output
            while index != blend {
                backgroundNodes.insert(index)
                guard case .node(let next) = graph.nodes[index].inputs[0] else { break }
                index = next.index
            }
            // Evaluated from the frame's planes, fused, except what must be a texture (a kernel's texture input).
            var textureInputs = Set<Int>(), sourceIsTexture = false
            for node in backgroundNodes {
                for input in graph.nodes[node].kernel.textureInputs {
                    switch graph.nodes[node].inputs[input] {
                    case .source: sourceIsTexture = true
                    case .node(let id): textureInputs.formUnion(ancestors(.node(id)))
                    }
                }
            }
            var plain = builder
            plain.replaced = [blend: background]
            plain.materialized = builder.materialized.intersection(textureInputs)
            plain.sourceMaterialized = builder.sourceMaterialized && sourceIsTexture
            let root = output == blend ? background : graph.output
            for pass in passes where !pass.persistent {
                let needed: Bool
                switch pass.kind {
                case .sink:
                    let variant = try plain.expressionPass(root: root, kind: pass.kind, target: pass.target, pack: pass.packLayout)
                    precondition(variant.draws.count == pass.draws.count, "the same packing draws the same rectangles")
                    for draw in pass.draws.indices {
                        pass.draws[draw].variants.insert(.init(program: variant.draws[draw].program,
                                                               condition: .maskIsZero(generator: generator, channel: channel)), at: 0)
                    }
                    pass.addBindings(of: variant)
                    needed = true
                case .prepass(let node, _): needed = backgroundNodes.contains(node) || textureInputs.contains(node)
                case .materialize(let node): needed = plain.materialized.contains(node)
                case .source: needed = plain.sourceMaterialized
                case .fullResolution: needed = true
                }
                if !needed { pass.skippedWhereMaskIsZero = (generator, channel) }
            }
            // The source's texture stays while a pass still drawn (other than the sinks, whose backgrounds read
            // the planes) reads it.
            let readsSource = { (pass: CompiledPass) in pass.textures.contains { if case .sourceTarget = $0.source { true } else { false } } }
            if let source = passes.first(where: { if case .source = $0.kind { true } else { false } }),
               passes.contains(where: { pass in
                   if case .sink = pass.kind { return false }
                   return pass.skippedWhereMaskIsZero == nil && readsSource(pass)
               }) {
                source.skippedWhereMaskIsZero = nil
            }
        }
    }

    /// The output evaluated once per pixel into full-resolution Y'CbCr planes, then packed into `layout` (sink 0).
    private static func fullResolutionPasses(builder: PassBuilder, graph: FilterGraph, layout: PackedFrameLayout) throws -> [CompiledPass] {
        let shape = FrameShaders.fullResolutionMain(layout: layout, batched: false)
        let planes = try builder.expressionPass(root: graph.output, kind: .fullResolution(sink: 0),
                                                target: TargetSpec(size: shape.targetSize, format: .rgba16f, attachments: shape.attachments),
                                                pack: layout, fullResolution: true)
        let plan = YUVNativeShaders.packPlan(layout: layout, values: .declared(YUVNativeShaders.fullResolutionReads(size: layout.size)))
        let label = "pack \(layout.format.rawValue) (from full-resolution Y'CbCr)"
        let draws = plan.draws.map { draw -> CompiledPass.Draw in
            let source = FrameShaders.header + draw.main
            return CompiledPass.Draw(program: ProgramSource(label: label, fragment: source),
                                     rows: plan.draws.count == 1 ? nil : draw.rows, columns: draw.columns, fragmentSource: source)
        }
        let pack = CompiledPass(kind: .sink(0), label: label, draws: draws,
                                target: TargetSpec(size: plan.targetSize, attachments: plan.attachments, readPlan: plan.readPlan),
                                members: [], textures: ["prism_fullY", "prism_fullCb", "prism_fullCr"].enumerated().map {
                                    ($0.element, .fullResolution(sink: 0, attachment: $0.offset))
                                }, readsSourcePlanes: false, packLayout: nil)
        return [planes, pack]
    }

    /// Every node's output size and each sink's layout, from the kernels alone (no GPU).
    struct Shape {
        var sizes: [Size]
        var outputSize: Size
        var layouts: [PackedFrameLayout]
    }

    /// The routes a graph can take, with the plan of the Y'CbCr ones.
    enum PlannedRoute {
        /// Chains of colour maps (and one pixellate) between 4:2:0 frames never leave Y'CbCr.
        case yuv(YUVPlan)
        /// Masked blends of such chains, in Y'CbCr.
        case yuvBlend(YUVBlendPlan)
        /// A Gaussian blur amid such chains, each plane blurred on its own.
        case yuvBlur(YUVBlurPlan)
        /// Everything else: through R'G'B'.
        case rgb
    }

    /// Which route a graph takes, by name (what the route tests compare).
    enum Route: Equatable { case rgb, yuv, yuvBlend, yuvBlur }

    /// Sizes, layouts and route for `graph` from `sourceFormat` at `sourceSize` into `sinks`: decided from
    /// the graph and its kernels alone, so it runs (and is tested) without a GPU context. `limits` bounds
    /// the sizes (nil: none checked).
    static func plan(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, sinks: [PixelFormat],
                     options: CompileOptions, limits: GraphLimits?) throws -> (shape: Shape, route: PlannedRoute) {
        try limits?.checkSide(sourceSize, "the input")
        var sizes: [Size] = []
        func size(of stream: FilterGraph.Stream) -> Size {
            switch stream {
            case .source: return sourceSize
            case .node(let id): return sizes[id.index]
            }
        }
        for node in graph.nodes {
            let inputSizes = node.inputs.map(size(of:))
            let output = try node.kernel.outputSize(inputSizes: inputSizes, sourceSize: sourceSize)
            try limits?.checkSide(output, node.name)
            sizes.append(output)
        }
        let outputSize = size(of: graph.output)
        let layouts = try sinks.map { format -> PackedFrameLayout in
            guard let layout = PackedFrameLayout(format: format, size: outputSize) else {
                throw InvalidRequest("cannot write \(format) frames")
            }
            return layout
        }
        let shape = Shape(sizes: sizes, outputSize: outputSize, layouts: layouts)
        if let plan = YUVPlan.make(graph, sourceFormat: sourceFormat, sourceSize: sourceSize, layouts: layouts,
                                   options: options) {
            return (shape, .yuv(plan))
        }
        if let plan = YUVBlurPlan.make(graph, sourceFormat: sourceFormat, sourceSize: sourceSize, layouts: layouts,
                                       options: options) {
            return (shape, .yuvBlur(plan))
        }
        if let plan = YUVBlendPlan.make(graph, sourceFormat: sourceFormat, sourceSize: sourceSize, sizes: sizes,
                                        layouts: layouts, options: options) {
            return (shape, .yuvBlend(plan))
        }
        return (shape, .rgb)
    }

    /// The route alone (see `plan`).
    static func route(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, sinks: [PixelFormat],
                      options: CompileOptions = CompileOptions()) throws -> Route {
        switch try plan(graph, sourceFormat: sourceFormat, sourceSize: sourceSize, sinks: sinks, options: options,
                        limits: nil).route {
        case .yuv: .yuv
        case .yuvBlend: .yuvBlend
        case .yuvBlur: .yuvBlur
        case .rgb: .rgb
        }
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

/// Generates the GLSL of passes. Prefixes: `n<i>_` for node i's code, `m<i>` for node i's rendered
/// texture, `prism_` for the frame ends.
private struct PassBuilder {
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

    func sizeOf(_ stream: FilterGraph.Stream) -> Size {
        switch stream {
        case .source: sourceSize
        case .node(let id): sizes[id.index]
        }
    }

    /// A pass evaluating `root` at every pixel: into a texture, or packed for a sink.
    /// `fullResolution`: `pack`'s pixels in its Y'CbCr, unpacked (`FrameShaders.fullResolutionMain`).
    func expressionPass(root: FilterGraph.Stream, kind: CompiledPass.Kind, target: TargetSpec,
                        pack: PackedFrameLayout?, fullResolution: Bool = false) throws -> CompiledPass {
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
        let label: String
        // The filters fused into a pass name it (a shader's name, not only "pack rgba").
        let fused = code.members.map { graph.nodes[$0.node].name }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let fusedPrefix = fused.isEmpty ? "" : fused.joined(separator: ", ") + " → "
        switch kind {
        case .source: label = "source \(sourceFormat) → RGBA"
        case .materialize(let index): label = graph.nodes[index].name
        case .sink: label = fusedPrefix + "pack \(pack?.format.rawValue ?? "")"
        case .fullResolution: label = "\(pack?.format.rawValue ?? "") planes at full resolution"
        case .prepass: label = "prepass"
        }
        let draws = mains.map { draw -> CompiledPass.Draw in
            let source = shared + draw.main
            return CompiledPass.Draw(program: ProgramSource(label: label, fragment: source),
                                     rows: mains.count == 1 ? nil : draw.rows, columns: draw.columns, fragmentSource: source)
        }
        return CompiledPass(kind: kind, label: label, draws: draws, target: target, members: code.members,
                            textures: code.textures, readsSourcePlanes: code.usesSourcePlanes, packLayout: pack)
    }

    private func kindIsSource(_ kind: CompiledPass.Kind) -> Bool {
        if case .source = kind { return true }
        return false
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
                code.textures.append(("\(prefix)src\(inputIndex)", textureSource(input)))
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
            code.textures.append(("\(prefix)pass\(other)", .prepass(node: index, index: other)))
        }
        let prepass = prepasses[prepassIndex]
        // A compute pass writes its image itself: it has no fragment output.
        let body = declarations + CompiledPass.Member.declarations(of: node.kernel) + node.kernel.library
            + (prepass.compute == nil ? "out vec4 prism_out;\n" : "") + prepass.main
        let source = FrameShaders.header + (batched ? "#define PRISM_BATCHED 1\n" : "")
            + code.prelude(batched: batched, format: sourceFormat) + code.declarations + substitute(body, prefix: prefix)
        code.members.append(.init(node: index, prefix: prefix, outputSize: target.size,
                                  inputSizes: node.inputs.map(sizeOf), kernel: node.kernel))
        let label = prepass.label.map { "\(node.name): \($0)" } ?? "\(node.name) prepass \(prepassIndex)"
        // A kernel's own vertex shader sees the same pass targets as its fragment shader.
        let vertex = prepass.vertex.map { vertex in
            FrameShaders.header + prepasses.indices.filter { $0 < prepassIndex || prepasses[$0].persistent }
                .map { "uniform sampler2D \(prefix)pass\($0);\n" }.joined() + substitute(vertex, prefix: prefix)
        }
        let program = prepass.compute != nil ? ProgramSource(label: label, compute: source)
            : ProgramSource(label: label, vertex: vertex, fragment: source, drawsQuad: vertex != nil)
        let pass = CompiledPass(kind: .prepass(node: index, index: prepassIndex), label: label,
                                draws: [.init(program: program, rows: nil, fragmentSource: source)],
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
            code.textures.append((uniform, source))
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
                code.textures.append(("\(prefix)src\(inputIndex)", textureSource(input)))
            }
        }
        for prepassIndex in node.kernel.prepasses.indices {
            declarations += "uniform sampler2D \(prefix)pass\(prepassIndex);\n"
            code.textures.append(("\(prefix)pass\(prepassIndex)", .prepass(node: index, index: prepassIndex)))
        }
        code.declarations += substitute(declarations + CompiledPass.Member.declarations(of: node.kernel)
                                        + node.kernel.library + node.kernel.expression + "\n", prefix: prefix)
        code.declarations += clampsSteps ? "vec4 \(valueName)(vec2 p) { return clamp(\(mainName)(p), 0.0, 1.0); }\n"
            : "vec4 \(valueName)(vec2 p) { return max(\(mainName)(p), 0.0); }\n"
        code.emitted.insert(mainName)
        code.members.append(.init(node: index, prefix: prefix, outputSize: sizes[index],
                                  inputSizes: node.inputs.map(sizeOf), kernel: node.kernel))
        return valueName
    }

    private func substitute(_ text: String, prefix: String) -> String {
        text.replacingOccurrences(of: "$", with: prefix)
    }

    struct Code {
        var declarations = ""
        var emitted = Set<String>()
        var members: [CompiledPass.Member] = []
        var textures: [(uniform: String, source: CompiledPass.TextureSource)] = []
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
