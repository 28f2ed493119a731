import PrismCore
import PrismGPU

/// Compiles chains with one Gaussian blur between 4:2:0 frames without forming R'G'B' pixels: colour maps
/// before the blur must be affine (the blur commutes with them, so they join the chain after it); after it,
/// any map `YUVPlan` takes. The planes are blurred on their own (`BlurShaders`: luma at full resolution,
/// chroma at a quarter of the pixels) and the packing evaluates the chain on the blurred planes.
///
/// Below σ 5 (radius 10) the blur is exact (taps to ±⌈3σ⌉, as the definition says): a row pass per plane into
/// RGBA8, the column half read by the packing. From σ 5 it is the reduced blur `BlurKernel` documents — box
/// means by f (`BlurKernel.planeReduction`), the Gaussian at 1/f, bilinear enlargement — with the box means taken
/// from the planes (luma, Cb, Cr of each f×f block in one texel), so its cost does not grow with the radius.
struct YUVBlurPlan {
    let blur: Int
    /// Colour kernels in the order the packing applies them (those before the blur first).
    let chain: [Int]

    static func make(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, layouts: [PackedFrameLayout],
                     options: CompileOptions) -> YUVBlurPlan? {
        guard let line = YUVPlan.line(graph, sourceFormat: sourceFormat, sourceSize: sourceSize, layouts: layouts,
                                      options: options),
              let split = YUVPlan.split(line, graph: graph, at: { $0 is BlurKernel }), let blur = split.effect
        else { return nil }
        return YUVBlurPlan(blur: blur.node, chain: split.chain)
    }

    func compile(graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, layouts: [PackedFrameLayout],
                 budget: inout GraphBudget) throws -> [CompiledPass] {
        let steps = YUVPlan.steps(chain, graph: graph)
        let blurred = try Self.blurredPlanes(graph: graph, blur: blur, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                             mask: nil, budget: &budget)
        try budget.addSinks(layouts) { YUVNativeShaders.packPlan(layout: $0, values: .planes(affine: true)) }
        return try blurred.passes + YUVPlan.sinkPasses(graph: graph, steps: steps, layouts: layouts, sourceFormat: sourceFormat,
                                                       sourceSize: sourceSize, pixellate: nil, planes: blurred)
    }

    /// The blur's passes over the planes, and the packing's reads of what they make: `prism_yTexel`,
    /// `prism_chromaQuad` and `prism_chromaPair` on the blurred planes (nil at σ 0: the source planes' own).
    struct BlurredPlanes {
        var passes: [CompiledPass] = []
        var reads: String?
        var textures: [CompiledPass.TextureBinding] = []
    }

    /// Where the packing's masked draws can read a pixel beyond the mask's regions: they draw whole texels of
    /// up to 8 pixels across and 2 rows down.
    static let packReach = SIMD2(8, 2)

    /// The passes blurring the planes for node `blur`. `mask` (a generator and the channel the packing's blends
    /// read): each pass draws only what the packing's draws limited to that mask read this frame (nothing when
    /// the mask is empty) — the rest of its target is left as it was and must not be read.
    static func blurredPlanes(graph: FilterGraph, blur: Int, sourceFormat: PixelFormat, sourceSize: Size,
                              mask: (generator: Int, channel: Int)?, budget: inout GraphBudget) throws -> BlurredPlanes {
        let kernel = graph.nodes[blur].kernel as! BlurKernel
        var passes = PlanePasses(blur: blur, name: graph.nodes[blur].name, mask: mask,
                                 luma: BlurShaders.Plane(width: sourceSize.width, rows: sourceSize.height),
                                 chroma: BlurShaders.Plane(width: (sourceSize.width + 1) / 2, rows: (sourceSize.height + 1) / 2),
                                 sourceReads: FrameShaders.header + YUVNativeShaders.planeReads(for: sourceFormat))
        if kernel.sigma <= 0 {
            return passes.result
        } else if kernel.planeReduction == 1 {
            try passes.addExact(kernel, sourceFormat: sourceFormat, budget: &budget)
        } else {
            try passes.addReduced(kernel, sourceSize: sourceSize, budget: &budget)
        }
        return passes.result
    }

    /// The blur's passes over the planes as they are made, each counted in the budget first.
    private struct PlanePasses {
        typealias Draw = (program: String, rows: Range<Int>?, columns: Range<Int>?)
        let blur: Int
        let name: String
        let mask: (generator: Int, channel: Int)?
        let luma: BlurShaders.Plane
        let chroma: BlurShaders.Plane
        let sourceReads: String
        var result = BlurredPlanes()

        /// A pass of `draws`; `texel`, `reach`: the pixels a texel of its target holds and how far beyond the
        /// mask the packing's reads reach through it (in pixels), for masked draws; `origin` per draw.
        mutating func prepass(_ index: Int, _ label: String, size: Size, format: TextureFormat, draws: [Draw], readsPlanes: Bool,
                              textures: [CompiledPass.TextureBinding] = [],
                              texel: Size, origin: (Range<Int>?) -> SIMD2<Int>, reach: SIMD2<Int>,
                              budget: inout GraphBudget) throws {
            try budget.add(size, format: format, what: "\(name) (\(label))")
            let label = "\(name) \(label) (Y'CbCr)"
            let compiled = draws.filter { !($0.columns?.isEmpty ?? false) && !($0.rows?.isEmpty ?? false) }.map { draw in
                var compiled = CompiledPass.Draw(label: label, fragment: draw.program, rows: draw.rows, columns: draw.columns)
                if let mask {
                    compiled.mask = .init(generator: mask.generator, channel: mask.channel,
                                          layout: .pixels(texel: texel, origin: origin(draw.rows), reach: reach),
                                          targetArea: PixelRect(x: draw.columns ?? 0..<size.width, y: draw.rows ?? 0..<size.height))
                }
                return compiled
            }
            result.passes.append(CompiledPass(kind: .prepass(node: blur, index: index), label: label, draws: compiled,
                                       target: TargetSpec(size: size, format: format), members: [], textures: textures,
                                       readsSourcePlanes: readsPlanes, packLayout: nil))
        }

        /// The columns `inner` is right for, `edge` drawing the rest.
        static func split(_ inner: String, _ edge: String, innerColumns: Range<Int>, width: Int, rows: Range<Int>?) -> [Draw] {
            guard !innerColumns.isEmpty else { return [(edge, rows, 0..<width)] }
            return [(edge, rows, 0..<innerColumns.lowerBound), (inner, rows, innerColumns),
                    (edge, rows, innerColumns.upperBound..<width)]
        }

        /// Below σ 5: a row pass per plane, the column half read by the packing.
        mutating func addExact(_ kernel: BlurKernel, sourceFormat: PixelFormat, budget: inout GraphBudget) throws {
            let pack = YUVBlurPlan.packReach
            let weights = BlurKernel.weights(sigma: kernel.sigma)
            let chromaWeights = BlurShaders.chromaWeights(weights)
            let lumaRows = BlurShaders.rowPass(plane: luma, weights: weights, firstRow: 0)
            let lumaText = sourceReads + BlurShaders.planeTexel(0, source: sourceFormat)
            try prepass(0, "rows Y", size: Size(width: luma.texels, height: luma.rows), format: .rgba8,
                        draws: Self.split(lumaText + lumaRows.inner, lumaText + lumaRows.edge, innerColumns: lumaRows.innerColumns,
                                          width: luma.texels, rows: nil),
                        readsPlanes: true, texel: Size(width: 4, height: 1), origin: { _ in .zero },
                        reach: pack &+ SIMD2(4, weights.count), budget: &budget)
            // Cb rows above Cr rows, in one target.
            var chromaDraws: [Draw] = []
            for plane in 1...2 {
                let first = (plane - 1) * chroma.rows
                let rows = BlurShaders.rowPass(plane: chroma, weights: chromaWeights, firstRow: first)
                let text = sourceReads + BlurShaders.planeTexel(plane, source: sourceFormat)
                chromaDraws += Self.split(text + rows.inner, text + rows.edge, innerColumns: rows.innerColumns,
                                          width: chroma.texels, rows: first..<(first + chroma.rows))
            }
            try prepass(1, "rows CbCr", size: Size(width: chroma.texels, height: 2 * chroma.rows), format: .rgba8,
                        draws: chromaDraws, readsPlanes: true, texel: Size(width: 8, height: 2),
                        origin: { SIMD2(0, $0?.lowerBound ?? 0) }, reach: pack &+ SIMD2(8, 2 * chromaWeights.count + 2), budget: &budget)
            result.reads = FrameShaders.header
                + BlurShaders.columnReads(luma: luma, chroma: chroma, weights: weights, chromaWeights: chromaWeights)
            result.textures = [.init(uniform: "prism_blurLuma", source: .prepass(node: blur, index: 0)),
                               .init(uniform: "prism_blurChroma", source: .prepass(node: blur, index: 1))]
        }

        /// From σ 5: box means by the plane reduction, the Gaussian at 1/f, bilinear enlargement.
        mutating func addReduced(_ kernel: BlurKernel, sourceSize: Size, budget: inout GraphBudget) throws {
            let pack = YUVBlurPlan.packReach
            let f = kernel.planeReduction
            let reduced = BlurKernel.Reduced(sigma: kernel.sigma, factor: f)
            let reducedSize = reduced.size(input: sourceSize)
            // Reaches, from the packing back: the enlargement reads reduced texels up to two from a pixel's,
            // each direction of the reduced Gaussian its taps (within the margin), the means their blocks.
            let block = Size(width: f, height: f), margin = SIMD2(repeating: reduced.margin / f)
            let enlarged = pack &+ SIMD2(repeating: 3 * f)
            let columns = enlarged &+ SIMD2(0, reduced.margin + f)
            let rows = columns &+ SIMD2(reduced.margin + f, 0)
            var next = 0
            if f == 4 {
                // Box means straight from the planes, one pass (16 luma and 8 chroma samples a block).
                let means = BlurShaders.blockMeans(luma: luma, chroma: chroma, reduced: reduced)
                let inner = sourceReads + means.inner, edge = sourceReads + means.edge
                var draws: [Draw] = []
                if means.innerColumns.isEmpty || means.innerRows.isEmpty {
                    draws = [(edge, nil, nil)]
                } else {
                    let width = reducedSize.width, height = reducedSize.height
                    draws = [(edge, 0..<means.innerRows.lowerBound, 0..<width),
                             (edge, means.innerRows.upperBound..<height, 0..<width),
                             (edge, means.innerRows, 0..<means.innerColumns.lowerBound),
                             (edge, means.innerRows, means.innerColumns.upperBound..<width),
                             (inner, means.innerRows, means.innerColumns)]
                }
                try prepass(0, "blocks", size: reducedSize, format: .rgba16f, draws: draws, readsPlanes: true,
                            texel: block, origin: { _ in margin }, reach: rows, budget: &budget)
                next = 1
            } else {
                let means = BlurShaders.rowMeans(luma: luma, chroma: chroma, factor: f)
                let meansSize = BlurShaders.rowMeansSize(luma: luma, factor: f)
                try prepass(0, "block rows", size: meansSize, format: .rgba16f,
                            draws: Self.split(sourceReads + means.inner, sourceReads + means.edge, innerColumns: means.innerColumns,
                                              width: meansSize.width, rows: nil),
                            readsPlanes: true, texel: Size(width: f, height: 2), origin: { _ in SIMD2(1, 1) },
                            reach: rows &+ SIMD2(f, 2), budget: &budget)
                try prepass(1, "blocks", size: reducedSize, format: .rgba16f,
                            draws: [(FrameShaders.header + BlurShaders.columnMeans(reduced: reduced, rowMeans: meansSize), nil, nil)],
                            readsPlanes: false,
                            textures: [.init(uniform: "prism_rowMeans", source: .prepass(node: blur, index: 0))],
                            texel: block, origin: { _ in margin }, reach: rows, budget: &budget)
                next = 2
            }
            // The reduced Gaussian along rows, then along columns, each reading the pass before it.
            for (step, (label, sampler, axis, reach)) in [("reduced rows", "prism_reduced", "x", columns),
                                                          ("reduced columns", "prism_reducedRows", "y", enlarged)].enumerated() {
                let blurred = BlurShaders.reducedBlur(sampler: sampler, size: reducedSize, sigma: reduced.sigma, axis: axis,
                                                      merged: kernel.mergeTaps)
                try prepass(next + step, label, size: reducedSize, format: .rgba16f, draws: [(FrameShaders.header + blurred, nil, nil)],
                            readsPlanes: false, textures: [.init(uniform: sampler, source: .prepass(node: blur, index: next + step - 1))],
                            texel: block, origin: { _ in margin }, reach: reach, budget: &budget)
            }
            result.reads = FrameShaders.header + BlurShaders.enlargedReads(reduced: reduced, reducedSize: reducedSize)
            result.textures = [.init(uniform: "prism_blurReduced", source: .prepass(node: blur, index: next + 1))]
        }
    }
}
