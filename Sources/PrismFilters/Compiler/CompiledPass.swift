import Foundation
import PrismCore
import PrismGPU

/// One pass as planned: the programs it draws (their source), the target it renders (its shape), and
/// what to bind — a value, with no closure or per-frame state, so plans compare whole; `GraphRenderer`
/// realises it into GL objects (`Realiser`) and keeps what changes per frame.
struct CompiledPass: Equatable {
    /// `fullResolution`: sink `sink`'s pixels in its Y'CbCr, before the packing (`FrameShaders.fullResolutionMain`).
    enum Kind: Equatable { case materialize(Int), prepass(node: Int, index: Int), sink(Int), source, fullResolution(sink: Int) }
    enum TextureSource: Equatable {
        case sourceTarget, node(Int), prepass(node: Int, index: Int)
        /// One of the three planes of a `fullResolution` pass.
        case fullResolution(sink: Int, attachment: Int)
    }
    /// A sampler uniform and the target bound to it.
    struct TextureBinding: Equatable {
        let uniform: String
        let source: TextureSource
    }
    /// A kernel whose code is in the pass, under `prefix`: the pass's text declares the kernel's uniforms and
    /// textures (`declarations`), and the renderer sets each of them every frame.
    struct Member: Equatable {
        let node: Int
        let prefix: String
        let outputSize: Size
        let inputSizes: [Size]

        /// The GLSL declarations of a kernel's uniforms and textures, `$` unreplaced: written once per pass,
        /// ahead of its library.
        static func declarations(of kernel: FilterKernel) -> String {
            (kernel.textures.filter { !$0.inSource }.map(\.declaration)
                + kernel.uniforms.filter { !$0.inSource }.map(\.declaration)).joined()
        }
    }

    /// One program drawn over some rows of the target (all of it when nil), and some of its columns.
    struct Draw: Equatable {
        let program: ProgramSource
        let rows: Range<Int>?
        var columns: Range<Int>? = nil
        /// Cheaper programs drawing the same texels, each right while its condition holds for the frame; the
        /// first that holds is drawn (list the cheapest first).
        var variants: [Variant] = []
        /// Limits the draw, each frame, to the target texels a mask generator can make nonzero.
        var mask: MaskRegion? = nil
        /// The draw's own colour chain, instead of the pass's (a masked pass's background, a shorter chain).
        var colorChain: ChainUniforms? = nil

        /// The draw's shader text (a compute program's, for a compute pass).
        var fragmentSource: String { program.compute ?? program.fragment }

        init(program: ProgramSource, rows: Range<Int>? = nil, columns: Range<Int>? = nil) {
            self.program = program
            self.rows = rows
            self.columns = columns
        }

        init(label: String, fragment: String, rows: Range<Int>? = nil, columns: Range<Int>? = nil) {
            self.init(program: ProgramSource(label: label, fragment: fragment), rows: rows, columns: columns)
        }

        /// A packing's draws, each `prelude` then its main; one draw covers the whole target.
        static func packing(_ draws: [PackDraw], label: String, prelude: String) -> [Draw] {
            draws.map { Draw(label: label, fragment: prelude + $0.main, rows: draws.count == 1 ? nil : $0.rows, columns: $0.columns) }
        }
    }

    struct Variant: Equatable {
        let program: ProgramSource
        let condition: Condition

        enum Condition: Equatable {
            /// The colour chain lets luma and chroma be evaluated apart (`ChainValues.allows`).
            case lean(LeanCondition)
            /// Pixellate node `pixellate`'s block edges align with the packing (`BlockAveraging.blockEdgesAlign`).
            case alignedBlocks(pixellate: Int)
            /// The frame has at most `limit` regions (`FilterKernel.regionLimits`).
            case fewRegions(limit: Int)
            /// Every step of the chain keeps luma and chroma apart as said (`ChainValues.eachStepAllows`).
            case leanSteps(LeanCondition)
            /// All of these hold.
            indirect case all([Condition])
            /// Generator `generator`'s `channel` is zero everywhere this frame (`nonzeroRegions` says so).
            case maskIsZero(generator: Int, channel: Int)
        }
    }

    /// Where a mask generator's `nonzeroRegions` fall in a draw's target, each frame.
    struct MaskRegion: Equatable {
        let generator: Int
        let channel: Int
        let layout: Layout
        /// The texels of the target the draw covers.
        let targetArea: PixelRect
        /// Draw the rest of `targetArea` instead: what the same mask's draw leaves out (a background drawn
        /// once around the blended rectangles, not under them too).
        var outside = false

        enum Layout: Equatable {
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
    private(set) var textures: [TextureBinding]
    var readsSourcePlanes: Bool
    let packLayout: PackedFrameLayout?
    /// A persistent prepass: two targets of this shape, swapped each frame (both start transparent black).
    var persistent = false
    /// The earlier pass whose target this one draws into (`TargetSharing`); nil: a target of its own.
    var sharedTarget: Int?
    /// Passes of a `YUVPlan`: the colour chain whose uniforms the renderer sets per frame.
    var colorChain: ChainUniforms?
    /// Not drawn on frames where this holds (`maskIsZero`): the pass feeds only what a masked blend hides
    /// there (the R'G'B' route's `face-blur` with no face: the blur's passes).
    var skippedWhen: Variant.Condition?
    /// A compute prepass: its one draw's program is dispatched as these work groups, with the target bound
    /// as image unit 0 (the shader's `layout(binding = 0)` image).
    var computeGroups: SIMD2<Int>?

    /// Adds what a variant's program reads that the main one does not (a zero mask's sink program evaluates
    /// the background's nodes itself where the main one reads them materialised): the renderer sets the
    /// pass's members and textures on whichever program it draws, and a program that lacks one ignores it.
    mutating func addBindings(of variant: CompiledPass) {
        let prefixes = Set(members.map(\.prefix)), uniforms = Set(textures.map(\.uniform))
        members += variant.members.filter { !prefixes.contains($0.prefix) }
        textures += variant.textures.filter { !uniforms.contains($0.uniform) }
        readsSourcePlanes = readsSourcePlanes || variant.readsSourcePlanes
    }

    init(kind: Kind, label: String, draws: [Draw], target: TargetSpec, members: [Member],
         textures: [TextureBinding], readsSourcePlanes: Bool, packLayout: PackedFrameLayout?) {
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

extension PackPlan {
    /// The render target the plan's draws write.
    var target: TargetSpec { TargetSpec(size: targetSize, attachments: attachments, readPlan: readPlan) }
}
