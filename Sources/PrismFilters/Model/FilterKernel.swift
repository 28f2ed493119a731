import PrismCore
import PrismGPU

/// What a filter instance asks of the GPU. The graph compiler fuses kernels into as few passes as it
/// can: a kernel's `expression` is GLSL text that becomes part of whichever pass needs its output.
///
/// GLSL conventions, with `$` standing for a prefix unique to the instance (the compiler rewrites it):
/// - `vec4 $main(vec2 p)` returns the kernel's output at pixel centre `p` (y down, in output pixels);
/// - `vec4 $in0(vec2 p)`, `$in1`… read the inputs at any position: either a call into the upstream
///   kernel's own `$main` (fused) or a texel fetch from its rendered texture;
/// - `$src0`, `$src1`… are `sampler2D`s of inputs listed in `textureInputs`, for filtered or
///   neighbourhood reads; `$src0Size` is their size as `vec2`;
/// - uniforms and the kernel's own textures are declared as data (`uniforms`, `textures`): the compiler
///   writes their `uniform` declarations ahead of `library` and the renderer sets them every frame; the
///   GLSL only uses them.
package protocol FilterKernel: AnyObject {
    /// Number of image inputs (0 for generators).
    var inputCount: Int { get }
    /// GLSL declarations and `$main` (see above).
    var expression: String { get }
    /// GLSL shared by the kernel's prepasses and its expression (helpers); emitted once per pass, after
    /// the declarations of `uniforms` and `textures`.
    var library: String { get }
    /// Inputs that must exist as textures (`$srcN`) because the kernel samples them with filtering,
    /// over neighbourhoods, or in its prepasses. Others are fused in.
    var textureInputs: Set<Int> { get }
    /// Passes the kernel renders before its expression can be evaluated (block averages, the
    /// horizontal half of a blur, ISF passes). Their targets are `$pass0`, `$pass1`… in later passes
    /// and in the expression.
    var prepasses: [KernelPrepass] { get }
    /// True when the output at p depends only on the inputs at p: free to fuse anywhere.
    var isPointwise: Bool { get }
    /// False when the expression never calls `$inN` (it reads only its prepass targets), so where its
    /// inputs are read is the prepasses' business.
    var expressionReadsInputs: Bool { get }
    /// Texture reads per output pixel of the expression, roughly: the compiler avoids evaluating
    /// expensive expressions more than once per pixel.
    var cost: Int { get }
    /// The kernel's colour map as data, for a point-wise kernel whose map is affine or a grey curve and
    /// keeps the unit cube inside itself for its current parameters; nil otherwise (see `ColorForm`).
    var colorForm: ColorForm? { get }
    /// For a kernel that mixes two inputs by a third (`blend-mask`): which is which (see `ColorBlend`).
    var colorBlend: ColorBlend? { get }
    /// For a mask generator: rectangles of a `size` frame outside which its output's `channel` is exactly 0
    /// (a blend it weights is its background there, so only they need the blend); none: 0 everywhere;
    /// nil: not known.
    func nonzeroRegions(channel: Int, frame: FrameContext, size: Size) -> [PixelRect]?
    /// For kernels whose code pays for the most regions they can take (face-mask: one disc per face, and a
    /// software rasteriser evaluates every guarded slot): region counts they have cheaper code for, smallest
    /// first (`expression(regionLimit:)`, right for frames with at most that many `FrameContext.regions`).
    var regionLimits: [Int] { get }
    /// `expression` for frames with at most `regionLimit` regions (same library and uniforms).
    func expression(regionLimit: Int) -> String
    /// For a kernel that replaces each pixel by the mean of its block of a grid (pixellate): the grid,
    /// which the Y'CbCr routes compute block means on and ask, per frame, where the blocks fall. nil for
    /// every other kernel.
    var blockAveraging: (any BlockAveraging)? { get }
    /// Anything besides the kernel's code and sizes that changes how the compiler lays out its passes
    /// (a renderer whose kernels' keys changed is stale). Default: the kind of `colorForm`.
    var compileKey: String { get }
    /// The output size for the given input sizes (called once per compile); generators, which have no
    /// inputs, usually take the graph source's size.
    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size
    /// Creates GL resources (LUT textures, images); runs on the GPU thread before the first frame.
    /// Each `GraphRenderer` that uses the kernel calls it once when it is made and balances it with
    /// `releaseGPUResources` when it goes (or at once if it fails to compile), so a kernel shared by two
    /// renderers frees its textures when the last one goes — on the GPU thread, whichever thread
    /// dropped the renderer. Keep a count, not a flag.
    func prepare() throws
    /// Balances one `prepare`; on the GPU thread.
    func releaseGPUResources()
    /// The kernel's uniforms: declared in every pass holding its code, set by the renderer each frame.
    var uniforms: [KernelUniform] { get }
    /// The kernel's own textures (LUT tables): declared and bound likewise.
    var textures: [KernelTexture] { get }
    /// For uniforms a kernel cannot declare as data because its user's GLSL declares them (user shaders:
    /// ISF and ShaderToy conventions): sets them by name after the declared ones. Default: nothing.
    func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext)
}

extension FilterKernel {
    package var library: String { "" }
    package var textureInputs: Set<Int> { [] }
    package var prepasses: [KernelPrepass] { [] }
    package var isPointwise: Bool { false }
    package var expressionReadsInputs: Bool { true }
    package var cost: Int { 1 }
    package var colorForm: ColorForm? { nil }
    package var colorBlend: ColorBlend? { nil }
    package func nonzeroRegions(channel: Int, frame: FrameContext, size: Size) -> [PixelRect]? { nil }
    package var regionLimits: [Int] { [] }
    package func expression(regionLimit: Int) -> String { expression }
    package var blockAveraging: (any BlockAveraging)? { nil }
    package var compileKey: String { colorForm?.kind ?? "" }
    package func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size { inputSizes.first ?? sourceSize }
    package func prepare() throws {}
    package func releaseGPUResources() {}
    package var uniforms: [KernelUniform] { [] }
    package var textures: [KernelTexture] { [] }
    package func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext) {}
}

/// A grid of blocks a kernel averages its input over (`FilterKernel.blockAveraging`): what the Y'CbCr
/// routes plan their block-means pass from and what their per-frame choices depend on.
package protocol BlockAveraging: AnyObject {
    /// Blocks of 8 pixels or more (a packing fragment's four pixels touch at most two block columns).
    var isWide: Bool { get }
    /// The grid on a `size` frame: block k starts at `origin + k · scale` pixels; `size` blocks.
    func blockGrid(for size: Size) -> (origin: SIMD2<Double>, scale: Double, size: Size)
    /// The blocks (x, y in blocks) holding any of `pixels` on a `size` frame.
    func blocks(covering pixels: PixelRect, size: Size) -> PixelRect
    /// Whether every block edge, the frame's included, falls on a multiple of 8 columns and 2 rows of a
    /// `size` frame (the packing may then read one block per fragment).
    func blockEdgesAlign(on size: Size) -> Bool
}

/// The error a kernel's `prepare` throws when its textures were made on another GPU context than the
/// one preparing it now (one filter graph rendered on two contexts at once): GL objects do not cross
/// contexts. Bind the graph text once per context instead.
struct KernelContextError: PrismError {
    let filter: String
    var description: String {
        "\(filter) is already in use on another GPU context; build one filter graph per context"
    }

    /// Throws unless `owner` (the thread of a texture the kernel holds) is nil or the caller's.
    static func check(_ owner: GPUThread?, filter: String) throws {
        if let owner, owner !== GPUThread.current { throw KernelContextError(filter: filter) }
    }
}

/// A pass a kernel renders into its own texture before its expression runs.
package struct KernelPrepass {
    /// `void main()` writing `out vec4 prism_out` (declared by the compiler); may use the kernel's
    /// `library`, `$srcN` inputs and earlier `$passN` targets. If it is `batchable` and the compiler defines
    /// `PRISM_BATCHED`, input 0 is the graph source through point-wise kernels only: the prepass may
    /// then call `prism_sourceQuad(ivec2(x / 4, y), q0, q1, q2, q3)` and evaluate `$in0` at each of those
    /// four pixels after setting `prism_current` to its source colour.
    package var main: String
    /// The target's storage; nil takes the compile options' intermediate format.
    package var format: TextureFormat?
    /// The target's size for the kernel's input sizes.
    package var size: @Sendable ([Size]) -> Size
    /// The target keeps its contents from one frame to the next and the pass may read its own target
    /// (`$passN` for its own N is the previous frame's result; both targets start transparent black).
    /// The renderer ping-pongs two targets. Any prepass or expression may read a persistent target: before
    /// its pass has run in a frame it holds the previous frame's contents, after it this frame's.
    package var persistent: Bool

    /// The prepass handles `PRISM_BATCHED` (see `main`). Prepasses that do not leave it false: in a
    /// batched program `prism_source` answers `prism_current`, not a fetch.
    package var batchable: Bool

    /// A vertex shader of the kernel's own (user shaders with an ISF `.vs`): `void main()` writing
    /// `gl_Position` for the 6 vertices of a quad (two triangles from `gl_VertexID`); it may read the same
    /// `$passN` targets as `main`. nil: the full-frame triangle. Such a prepass clears its target first.
    package var vertex: String?

    /// A compute pass (mpv hooks' `//!COMPUTE`): `main` is a GLES 3.1 compute shader declaring its own
    /// `layout(local_size_x = …) in;` and `uniform image2D $out_image` (bound to the target, whose format
    /// must be image-capable), dispatched as `groups` work groups instead of drawn. nil: a fragment pass.
    package var compute: ComputeShape?

    /// What stats and per-pass timings call the pass (nil: "NODE prepass N").
    package var label: String?

    /// Nothing reads the target after the frame but the kernel's later prepasses whose `main` names it
    /// (`$passN`): once the last of them has run, a later prepass of the same kernel may draw into the same
    /// texture (`TargetSharing`). A network's intermediate features are; its outputs are not.
    package var transient = false

    package struct ComputeShape: Hashable, Sendable {
        package var groups: SIMD2<Int>
        package init(groups: SIMD2<Int>) { self.groups = groups }
    }

    package init(main: String, format: TextureFormat? = nil, persistent: Bool = false, batchable: Bool = false,
                vertex: String? = nil, compute: ComputeShape? = nil, size: @escaping @Sendable ([Size]) -> Size) {
        self.main = main
        self.compute = compute
        self.vertex = vertex
        self.format = format
        self.persistent = persistent
        self.batchable = batchable
        self.size = size
    }
}

/// What changes per frame and reaches every kernel.
/// The pixels within `reach` of `center` on a frame of `size`, widened by two pixels each way and clipped
/// (empty when the square misses the frame): for generators whose output is exterior beyond a distance
/// from a point.
package func pixelsAround(_ center: SIMD2<Double>, reach: Double, size: Size) -> PixelRect {
    func span(_ c: Double, _ limit: Int) -> Range<Int> {
        // Clipped as doubles first: a centre or reach from a hand-written sidecar may be anything finite.
        func pixel(_ v: Double) -> Int { Int(min(max(v, -4), Double(limit) + 4)) }
        guard c.isFinite, reach.isFinite else { return 0..<limit }
        let low = max(pixel((c - reach).rounded(.down)) - 2, 0), high = min(pixel((c + reach).rounded(.up)) + 2, limit)
        return low < high ? low..<high : 0..<0
    }
    return PixelRect(x: span(center.x, size.width), y: span(center.y, size.height))
}

/// What changes per frame and reaches every kernel: the time, the frame's index, regions, pointer and sound.
public struct FrameContext: Sendable {
    /// Seconds since the first frame of the run.
    public var time: Double
    /// Seconds since the previous frame (0 for the first).
    public var timeDelta: Double
    /// 0-based index of the frame in the run.
    public var frameIndex: Int
    /// Regions of interest for this frame (faces: centres as 0...1 of width and height, radii as a
    /// fraction of the frame's width), for kernels that take them (`face-mask`).
    public var regions: [Region]
    /// The run's nominal frame rate (0 when the source has none): ShaderToy's `iFrameRate`.
    public var frameRate: Double = 0
    /// A pointer over the output (`prism dev`'s page), as ShaderToy's `iMouse`: x, y in output pixels
    /// from the bottom left while the button is down; z, w the click position, z negated once the
    /// button is up, w negated after the click's first frame. nil: no pointer.
    public var mouse: SIMD4<Double>?
    /// The sound ending at this frame's time, for audio-reactive kernels (ISF `audio`/`audioFFT` inputs);
    /// nil when the run has no sound to give (no graph that needs it, or no audio at all).
    package var audio: AudioWindow?
    /// The foreground mask of the segmentation side input (`--segment-model`), at the model's resolution;
    /// nil when the run has none or the model has not answered yet (`segment-mask` is then 0: background).
    public var segmentation: SegmentationMask?

    /// An elliptical region of interest (a face), in the units of `regions`.
    public struct Region: Hashable, Sendable {
        /// Centre as fractions 0...1 of the frame's width and height.
        public var center: SIMD2<Double>
        /// Half the width, as a fraction of the frame's width.
        public var radius: Double
        /// Height over width (1: a circle; a face box is about 1.2).
        public var aspect: Double
        /// A region centred at `center` with `radius` (fractions of the frame, see above), `aspect` times as tall as wide.
        public init(center: SIMD2<Double>, radius: Double, aspect: Double = 1) {
            self.center = center
            self.radius = radius
            self.aspect = aspect
        }
    }

    /// A context for one frame; `frameRate` and `mouse` start unset (0 and nil).
    package init(time: Double = 0, timeDelta: Double = 0, frameIndex: Int = 0, regions: [Region] = [], audio: AudioWindow? = nil) {
        self.time = time
        self.timeDelta = timeDelta
        self.frameIndex = frameIndex
        self.regions = regions
        self.audio = audio
    }
}

/// One kernel's uniforms and textures in one program, set by name with `$name` translated to the
/// kernel's prefix, for `FilterKernel.setUniforms` (what a kernel cannot declare as data: audio textures
/// refilled each frame). The kernel hands over values and `Texture` objects; PrismGPU's `UniformScope`
/// makes the GL calls.
package struct KernelUniforms {
    let scope: UniformScope
    /// The size of the kernel's output in this pass.
    package let outputSize: Size
    /// The sizes of the kernel's inputs.
    package let inputSizes: [Size]

    init(program: ShaderProgram, prefix: String, units: TextureUnits, outputSize: Size, inputSizes: [Size]) {
        scope = UniformScope(program: program, prefix: prefix, units: units)
        self.outputSize = outputSize
        self.inputSizes = inputSizes
    }

    package func set(_ uniform: String, _ value: Float) { scope.set(uniform, value) }
    package func set(_ uniform: String, _ value: Int32) { scope.set(uniform, value) }
    package func set(_ uniform: String, _ x: Float, _ y: Float) { scope.set(uniform, x, y) }
    package func set(_ uniform: String, _ x: Float, _ y: Float, _ z: Float) { scope.set(uniform, x, y, z) }
    package func set(_ uniform: String, _ x: Float, _ y: Float, _ z: Float, _ w: Float) { scope.set(uniform, x, y, z, w) }
    package func set(_ uniform: String, _ v: SIMD4<Double>) { scope.set(uniform, v) }
    package func set(_ uniform: String, _ v: SIMD2<Double>) { scope.set(uniform, v) }
    /// A mat3 from row-major rows.
    package func setMatrix3(_ uniform: String, rows: [[Double]]) { scope.setMatrix3(uniform, rows: rows) }
    /// Binds a texture (2D or 3D) to the next free unit and points the sampler `uniform` at it.
    package func bind(_ uniform: String, _ texture: Texture) { scope.bind(uniform, texture) }
}
