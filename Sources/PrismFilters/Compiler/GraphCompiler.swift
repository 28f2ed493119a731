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

/// Plans a `FilterGraph` as passes for one source format and size: no GL object is made here (only
/// `GraphLimits.current()` asks the context, when the options carry no limits).
enum GraphCompiler {
    struct Result: Equatable {
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
        let sizes = shape.sizes, layouts = shape.layouts
        let passes: [CompiledPass]
        switch route {
        case .yuv(let plan):
            passes = try plan.compile(graph: graph, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                      layouts: layouts, budget: &budget)
        case .yuvBlend(let plan):
            passes = try plan.compile(graph: graph, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                      layouts: layouts, budget: &budget)
        case .yuvBlur(let plan):
            passes = try plan.compile(graph: graph, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                      layouts: layouts, budget: &budget)
        case .rgb(let plan):
            passes = try plan.compile(graph: graph, sourceFormat: sourceFormat, sourceSize: sourceSize, sizes: sizes,
                                      layouts: layouts, options: options, budget: &budget)
        }
        return Result(passes: passes, sinkLayouts: layouts, outputSize: shape.outputSize, nodeSizes: sizes)
    }

    /// Every node's output size and each sink's layout, from the kernels alone (no GPU).
    struct Shape {
        var sizes: [Size]
        var outputSize: Size
        var layouts: [PackedFrameLayout]
    }

    /// The routes a graph can take, each with its plan.
    enum PlannedRoute {
        /// Chains of colour maps (and one pixellate) between 4:2:0 frames never leave Y'CbCr.
        case yuv(YUVPlan)
        /// Masked blends of such chains, in Y'CbCr.
        case yuvBlend(YUVBlendPlan)
        /// A Gaussian blur amid such chains, each plane blurred on its own.
        case yuvBlur(YUVBlurPlan)
        /// Everything else: through R'G'B'.
        case rgb(RGBPlan)
    }

    /// Sizes, layouts and route for `graph` from `sourceFormat` at `sourceSize` into `sinks`: decided from
    /// the graph and its kernels alone, so it runs (and is tested) without a GPU context. `limits` bounds
    /// the sizes (nil: none checked).
    static func plan(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, sinks: [PixelFormat],
                     options: CompileOptions, limits: GraphLimits?) throws -> (shape: Shape, route: PlannedRoute) {
        try limits?.checkSide(sourceSize, "the input")
        var sizes: [Size] = []
        for node in graph.nodes {
            let inputSizes = node.inputs.map { $0.size(source: sourceSize, nodes: sizes) }
            let output = try node.kernel.outputSize(inputSizes: inputSizes, sourceSize: sourceSize)
            try limits?.checkSide(output, node.name)
            sizes.append(output)
        }
        let outputSize = graph.output.size(source: sourceSize, nodes: sizes)
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
        return (shape, .rgb(RGBPlan.make(graph, layouts: layouts, options: options)))
    }
}

extension FilterGraph.Stream {
    /// The stream's size, given the source's and each node's output size.
    func size(source: Size, nodes: [Size]) -> Size {
        switch self {
        case .source: source
        case .node(let id): nodes[id.index]
        }
    }
}
