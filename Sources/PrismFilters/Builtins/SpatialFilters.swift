import Foundation
import PrismCore
import PrismGPU

/// Filters that read neighbourhoods: they need their input as a texture.
enum SpatialFilters {
    static let definitions: [FilterDefinition] = [
        FilterDefinition(
            name: "pixellate", summary: "Square blocks, each the average of its pixels (like CIPixellate).",
            maths: """
                Blocks of scale×scale pixels on a grid placed so that one block is centred on `center`;
                a pixel belongs to block floor((p - origin) / scale), origin = center·size - scale/2 (mod scale).
                Each block is the mean of the pixels whose centres fall in it (edge blocks: the pixels inside the frame).
                """,
            parameters: [
                ParameterSpec("scale", .float(1...512), default: .float(8), "block size in pixels"),
                ParameterSpec("center", .point, default: .point(SIMD2(0.5, 0.5)),
                              "a block is centred here (0...1 of width and height, origin top left)"),
            ],
            example: "pixellate(scale=16)",
            make: { PixellateKernel(parameters: $0) }),
        FilterDefinition(
            name: "blur", summary: "Gaussian blur (like CIGaussianBlur), edges clamped.",
            maths: """
                A separable Gaussian with σ = radius / 2, taps out to ±ceil(3σ) pixels, weights
                exp(-k²/2σ²) normalised to sum 1; pixels beyond the frame repeat the edge pixel. Every
                channel, alpha included, is blurred on its own. radius 0 is the identity.
                Evaluation: below radius 12, a horizontal pass at full resolution then the vertical half,
                fused into what follows. On GPUs neighbouring taps are merged into one bilinear fetch at
                their weighted offset (about 1.5σ + 1 fetches a direction); on software rasterisers
                (llvmpipe), where a filtered fetch costs more than two plain ones, every tap is one
                texelFetch. From radius 12 the blur runs on a copy reduced by f = 2, 4, 8 or 16 (the
                largest with f ≤ σ/3; box-averaged, with a margin of repeated edge pixels), with
                σ' = √(σ²/f² - 1/4) so that box + Gaussian + bilinear enlargement add up to σ, then is
                enlarged bilinearly: within 3 code values of the exact Gaussian, and the cost stays
                about constant however large the radius (llvmpipe, 1280x720: ≈ 8–19 ms).
                Between 4:2:0 frames, amid affine colour maps, each Y'CbCr plane is blurred on its own (chroma
                at half resolution with the kernel equal to hold → Gaussian → 2×2 mean): exact taps below
                σ = 5, from σ = 5 reduced by 4 (8 from σ = 24, 16 from σ = 48), within 3 codes (llvmpipe,
                1280x720: ≈ 2.3–5 ms for all its passes).
                """,
            parameters: [
                ParameterSpec("radius", .float(0...200), default: .float(10), "pixels; σ = radius / 2"),
            ],
            example: "blur(radius=12)",
            make: { BlurKernel(parameters: $0) }),
    ]
}

/// Pixellate in two steps: a prepass averages each block into one texel of a small texture; the
/// expression looks the block up, so the full-size result fuses into whatever comes next.
final class PixellateKernel: ParameterizedKernel, BlockAveraging {
    let inputCount = 1
    let cost = 1
    /// The block averages come from the prepass, which reads the input (fused) once per pixel.
    let expressionReadsInputs = false
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    /// Grid origin in pixels, in (-scale, 0].
    static func origin(center: SIMD2<Double>, scale: Double, size: Size) -> SIMD2<Double> {
        let c = SIMD2(center.x * Double(size.width), center.y * Double(size.height)) - scale / 2
        return SIMD2(c.x - scale * (c.x / scale).rounded(.up), c.y - scale * (c.y / scale).rounded(.up))
    }

    /// Blocks of 8 pixels or more let the Y'CbCr route fetch fewer blocks (`PixellateShaders`).
    var compileKey: String { isWide ? "wide" : "narrow" }
    var isWide: Bool { parameters.double("scale") >= 8 }
    var blockAveraging: (any BlockAveraging)? { self }

    /// The block grid on a frame of `size`: its origin, block size and how many blocks across and down.
    func blockGrid(for size: Size) -> (origin: SIMD2<Double>, scale: Double, size: Size) {
        let scale = parameters.double("scale")
        return (Self.origin(center: parameters.point("center"), scale: scale, size: size), scale,
                Self.blockCount(center: parameters.point("center"), scale: scale, size: size))
    }

    /// The blocks (columns and rows of the grid) holding any of the pixels `pixels` on a frame of `size`.
    func blocks(covering pixels: PixelRect, size: Size) -> PixelRect {
        let grid = blockGrid(for: size)
        func index(_ p: Int, _ origin: Double) -> Int { Int(((Double(p) + 0.5 - origin) / grid.scale).rounded(.down)) }
        func span(_ p: Range<Int>, _ origin: Double, _ count: Int) -> Range<Int> {
            guard !p.isEmpty else { return 0..<0 }
            let low = max(index(p.lowerBound, origin), 0), high = min(index(p.upperBound - 1, origin) + 1, count)
            return low < high ? low..<high : 0..<0
        }
        return PixelRect(x: span(pixels.x, grid.origin.x, grid.size.width), y: span(pixels.y, grid.origin.y, grid.size.height))
    }

    /// Whether every block edge on a frame of `size`, the frame's own right and bottom edges included, falls on
    /// a multiple of 8 columns and of 2 rows: then a packed texel never straddles two blocks and a block holds
    /// whole texels and chroma rows (see `PixellateShaders.blockValues` and `blockMeansMain`).
    func blockEdgesAlign(on size: Size) -> Bool {
        let grid = blockGrid(for: size)
        func multiple(_ value: Double, of n: Double) -> Bool { value == value.rounded() && value.truncatingRemainder(dividingBy: n) == 0 }
        return multiple(grid.scale, of: 8) && multiple(grid.origin.x, of: 8) && multiple(grid.origin.y, of: 2)
            && size.width % 8 == 0 && size.height % 2 == 0
    }

    static func blockCount(center: SIMD2<Double>, scale: Double, size: Size) -> Size {
        let origin = origin(center: center, scale: scale, size: size)
        return Size(width: Int(((Double(size.width) - origin.x) / scale).rounded(.up)),
                    height: Int(((Double(size.height) - origin.y) / scale).rounded(.up)))
    }

    /// Separable block means: first along rows (one texel per block column and pixel row, kept in
    /// half float so the second step adds no rounding), then down the columns. Two short loops keep
    /// many fragments busy, where one loop over the whole block would leave a few fragments each doing
    /// scale² reads.
    var prepasses: [KernelPrepass] {
        let scale = parameters.double("scale"), center = parameters.point("center")
        let blocks: @Sendable (Size) -> Size = { PixellateKernel.blockCount(center: center, scale: scale, size: $0) }
        return [
            KernelPrepass(main: """
                void main() {
                    ivec2 t = ivec2(gl_FragCoord.xy);
                    float lo = $origin.x + float(t.x) * $scale;
                    int first = int(max(ceil(lo - 0.5), 0.0));
                    int last = int(min(ceil(lo + $scale - 0.5), $inputSize.x));
                    vec4 sum = vec4(0.0);
                    float y = float(t.y) + 0.5;
                #ifdef PRISM_BATCHED
                    // Four source pixels per fetch; pixels of the quads outside the block are masked.
                    for (int q = first >> 2; q <= (last - 1) >> 2; q++) {
                        vec4 s0, s1, s2, s3;
                        prism_sourceQuad(ivec2(q, t.y), s0, s1, s2, s3);
                        int x = q * 4;
                        vec4 inside = vec4(greaterThanEqual(ivec4(x) + ivec4(0, 1, 2, 3), ivec4(first)))
                            * vec4(lessThan(ivec4(x) + ivec4(0, 1, 2, 3), ivec4(last)));
                        prism_current = s0; sum += $in0(vec2(float(x) + 0.5, y)) * inside.x;
                        prism_current = s1; sum += $in0(vec2(float(x) + 1.5, y)) * inside.y;
                        prism_current = s2; sum += $in0(vec2(float(x) + 2.5, y)) * inside.z;
                        prism_current = s3; sum += $in0(vec2(float(x) + 3.5, y)) * inside.w;
                    }
                #else
                    for (int x = first; x < last; x++) sum += $in0(vec2(float(x) + 0.5, y));
                #endif
                    prism_out = sum / float(max(last - first, 1));
                }

                """, format: .rgba16f, batchable: true,
                size: { sizes in Size(width: blocks(sizes[0]).width, height: sizes[0].height) }),
            KernelPrepass(main: """
                void main() {
                    ivec2 t = ivec2(gl_FragCoord.xy);
                    float lo = $origin.y + float(t.y) * $scale;
                    int first = int(max(ceil(lo - 0.5), 0.0));
                    int last = int(min(ceil(lo + $scale - 0.5), $inputSize.y));
                    vec4 sum = vec4(0.0);
                    for (int y = first; y < last; y++) sum += texelFetch($pass0, ivec2(t.x, y), 0);
                    prism_out = sum / float(max(last - first, 1));
                }

                """, size: { sizes in blocks(sizes[0]) }),
        ]
    }

    var uniforms: [KernelUniform] {
        [
            KernelUniform("$scale", .float, .parameter("scale")),
            KernelUniform("$origin", .vec2, .computed { inputs in
                let scale = inputs.parameters?.double("scale") ?? 1
                return .vec2(Self.origin(center: inputs.parameters?.point("center") ?? .zero, scale: scale,
                                         size: inputs.inputSizes[0]))
            }),
            KernelUniform("$inputSize", .vec2, .inputSize(0)),
        ]
    }

    let expression = """
        vec4 $main(vec2 p) {
            return texelFetch($pass1, ivec2(floor((p - $origin) / $scale)), 0);
        }

        """

}

/// Separable Gaussian blur. Small radii: the horizontal half is a prepass over the input, the vertical
/// half is the expression reading it. Large radii: reduce, blur both ways, and enlarge in the
/// expression. The tap tables are constants in the shader, made from the parameters at compile time.
final class BlurKernel: ParameterizedKernel {
    let inputCount = 1
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    var sigma: Double { parameters.double("radius") / 2 }

    /// The reduction factor for a given σ: 1 below σ = 6 (radius 12), else the largest power of two
    /// f ≤ σ/3 (at most 16), which keeps σ/f in 3..<6 and the reduced blur at 10 to 19 taps a side.
    /// Measured against the exact Gaussian: σ/f ≥ 3 stays within 3 code values, σ/f ≈ 2 reaches 5.
    static func reduction(sigma: Double) -> Int {
        var f = 1
        while f < 16 && Double(f * 2) <= sigma / 3 { f *= 2 }
        return f
    }

    /// The reduction factor where the blur runs on Y'CbCr planes (`YUVBlurPlan`). There exact taps on packed
    /// luma cost the same as a blur reduced by 2 (both touch W·H/4 texels per tap), so the first step is f = 4,
    /// from σ = 5; f = 8 from σ = 24 and 16 from σ = 48 keep σ/f ≥ 3 where a coarser grid aliases hard edges.
    /// Measured against the exact Gaussian on hard-edged noisy planes (256x128): σ 5 → 2 codes luma, 3 chroma;
    /// σ 8–16 → 1; σ 24 → 1 and 4; σ 48, 64 → 1 and 2.
    static func planeReduction(sigma: Double) -> Int {
        sigma < 5 ? 1 : sigma < 24 ? 4 : sigma < 48 ? 8 : 16
    }

    var planeReduction: Int { reductionOverride ?? Self.planeReduction(sigma: sigma) }

    /// Forces a reduction factor (1, 2, 4, 8, 16), for tests and measurements; nil: the rule above.
    var reductionOverride: Int?

    var reduction: Int { reductionOverride ?? Self.reduction(sigma: sigma) }

    /// Forces merged bilinear taps (true) or one texelFetch a tap (false); nil: by the driver.
    var mergeTapsOverride: Bool?
    /// Set in `prepare`: software rasterisers filter in code, where a bilinear fetch costs more than
    /// two plain ones (llvmpipe at 720p: radius 11, 46 ms with texelFetch, 62 ms merged); GPUs filter
    /// in hardware for free, so merging halves the fetches.
    private var driverPrefersMergedTaps = true

    var mergeTaps: Bool { mergeTapsOverride ?? driverPrefersMergedTaps }

    func prepare() throws {
        let renderer = GPUContext.currentRenderer()
        if !renderer.isEmpty { driverPrefersMergedTaps = !GPUInfo.isSoftwareRenderer(renderer) }
    }

    /// One-sided weights of the normalised Gaussian: w[0] at the centre, w[k] at ±k, k ≤ ceil(3σ).
    static func weights(sigma: Double) -> [Double] {
        let reach = Int((3 * sigma).rounded(.up))
        guard sigma > 0, reach > 0 else { return [1] }
        let weights = (0...reach).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
        let total = weights[0] + 2 * weights.dropFirst().reduce(0, +)
        return weights.map { $0 / total }
    }

    /// The taps with neighbours merged into one bilinear fetch each: (offset, weight) for the fetch at
    /// +offset (mirrored at -offset); taps k and k+1 become one fetch at k + w[k+1]/(w[k] + w[k+1]).
    static func mergedPairs(_ weights: [Double]) -> [(offset: Double, weight: Double)] {
        stride(from: 1, to: weights.count, by: 2).map { k in
            let a = weights[k], b = k + 1 < weights.count ? weights[k + 1] : 0
            return (Double(k) + b / (a + b), a + b)
        }
    }

    /// GLSL summing the taps along `axis` ("x" or "y") around pixel centre `p` of `sampler`, whose
    /// size is `size`, into `sum`: merged bilinear fetches, or (`merged` false) one texelFetch a tap.
    /// Both clamp at the edges (the sampler's clamp-to-edge, or the index clamped).
    static func sumCode(sigma: Double, sampler: String, size: String, axis: String, merged: Bool = true) -> String {
        let weights = weights(sigma: sigma)
        if !merged {
            let step = axis == "x" ? "ivec2(1, 0)" : "ivec2(0, 1)"
            var code = "    ivec2 i = ivec2(floor(p));\n    ivec2 last = ivec2(\(size)) - 1;\n"
            code += "    vec4 sum = \(glsl(weights[0])) * texelFetch(\(sampler), clamp(i, ivec2(0), last), 0);\n"
            for (k, weight) in weights.enumerated().dropFirst() {
                code += "    sum += \(glsl(weight)) * (texelFetch(\(sampler), clamp(i + \(k) * \(step), ivec2(0), last), 0)"
                    + " + texelFetch(\(sampler), clamp(i - \(k) * \(step), ivec2(0), last), 0));\n"
            }
            return code
        }
        let step = axis == "x" ? "vec2(1.0, 0.0)" : "vec2(0.0, 1.0)"
        var code = "    vec2 texel = \(step) / \(size);\n    vec2 uv = p / \(size);\n"
        code += "    vec4 sum = \(glsl(weights[0])) * texture(\(sampler), uv);\n"
        for (offset, weight) in mergedPairs(weights) {
            code += "    sum += \(glsl(weight)) * (texture(\(sampler), uv + \(glsl(offset)) * texel)"
                + " + texture(\(sampler), uv - \(glsl(offset)) * texel));\n"
        }
        return code
    }

    /// `value` as a GLSL float literal (always with a point or an exponent; "inf" and "nan" as printed).
    static func glsl(_ value: Double) -> String {
        let text = String(format: "%.9g", value)
        return text.contains(".") || text.contains("e") || text.contains("n") ? text : text + ".0"
    }

    var textureInputs: Set<Int> { sigma > 0 ? [0] : [] }

    var cost: Int {
        guard sigma > 0 else { return 0 }
        guard reduction == 1 else { return 1 }
        let weights = Self.weights(sigma: sigma)
        return mergeTaps ? Self.mergedPairs(weights).count * 2 + 1 : weights.count * 2 - 1
    }

    var prepasses: [KernelPrepass] {
        guard sigma > 0 else { return [] }
        let f = reduction
        if f == 1 {
            return [KernelPrepass(main: "void main() {\n    vec2 p = gl_FragCoord.xy;\n"
                + Self.sumCode(sigma: sigma, sampler: "$src0", size: "$src0Size", axis: "x", merged: mergeTaps)
                + "    prism_out = sum;\n}\n", size: { $0[0] })]
        }
        let reduced = Reduced(sigma: sigma, factor: f)
        let reducedSize: @Sendable ([Size]) -> Size = { reduced.size(input: $0[0]) }
        // Box average of f×f input pixels: (f/2)² bilinear fetches, each at the corner shared by
        // four pixels. The reduced image has a margin of clamped fetches all round, so beyond the
        // frame it holds the edge pixels repeated (as the blur's definition says), not a reduced copy
        // of them, and the reduced blur never needs to clamp inside the frame's reach.
        let half = f / 2
        let reduce = """
            void main() {
                vec2 corner = floor(gl_FragCoord.xy) * \(f).0 - \(reduced.margin).0;
                vec4 sum = vec4(0.0);
                for (int j = 0; j < \(half); j++) {
                    for (int i = 0; i < \(half); i++) {
                        sum += texture($src0, (corner + vec2(2 * i + 1, 2 * j + 1)) / $src0Size);
                    }
                }
                prism_out = sum / \(half * half).0;
            }

            """
        // The reduced image blurred along x (reading prepass 0), then along y (reading prepass 1).
        let halves = [("$pass0", "x"), ("$pass1", "y")].map { sampler, axis in
            "void main() {\n    vec2 p = gl_FragCoord.xy;\n    vec2 size = vec2(textureSize(\(sampler), 0));\n"
                + Self.sumCode(sigma: reduced.sigma, sampler: sampler, size: "size", axis: axis, merged: mergeTaps)
                + "    prism_out = sum;\n}\n"
        }
        return ([reduce] + halves).map { KernelPrepass(main: $0, size: reducedSize) }
    }

    /// The reduced blur's geometry: reduced texel j covers input pixels [f·j - margin, f·(j+1) - margin).
    struct Reduced: Sendable {
        let factor: Int
        /// σ in reduced pixels: box (f²/12) + Gaussian (f²σ'²) + bilinear enlargement (f²/6) = σ².
        let sigma: Double
        /// Input pixels reduced beyond each edge: the reduced taps' reach plus one texel.
        let margin: Int

        init(sigma: Double, factor: Int) {
            self.factor = factor
            self.sigma = (sigma * sigma / Double(factor * factor) - 0.25).squareRoot()
            margin = (Int((3 * self.sigma).rounded(.up)) + 1) * factor
        }

        func size(input: Size) -> Size {
            Size(width: (input.width + 2 * margin + factor - 1) / factor,
                 height: (input.height + 2 * margin + factor - 1) / factor)
        }
    }

    var expression: String {
        guard sigma > 0 else { return "vec4 $main(vec2 p) { return $in0(p); }\n" }
        let f = reduction
        if f == 1 {
            return "vec4 $main(vec2 p) {\n"
                + Self.sumCode(sigma: sigma, sampler: "$pass0", size: "$src0Size", axis: "y", merged: mergeTaps)
                + "    return sum;\n}\n"
        }
        // Enlarge: output pixel centre p is at (p + margin) / f in the reduced image.
        let margin = Reduced(sigma: sigma, factor: f).margin
        return """
            vec4 $main(vec2 p) {
                return texture($pass2, (p + \(margin).0) / (\(f).0 * vec2(textureSize($pass2, 0))));
            }

            """
    }

}
