import Foundation
import PrismCore
import PrismGPU

/// Filters that read neighbourhoods: they need their input as a texture.
enum SpatialFilters {
    static let definitions: [FilterDefinition] = [
        FilterDefinition(
            name: "pixellate", summary: "Square blocks, each the average of its pixels (CIPixellate).",
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
            name: "blur", summary: "Gaussian blur (CIGaussianBlur), edges clamped.",
            maths: """
                A separable Gaussian with σ = radius / 2, taps out to ±ceil(3σ) pixels, weights
                exp(-k²/2σ²) normalised to sum 1; pixels beyond the frame repeat the edge pixel. Every
                channel, alpha included, is blurred on its own. radius 0 is the identity.
                Evaluation: pairs of taps are merged into one bilinear fetch at their weighted offset
                (about ceil(3σ)+1 fetches per pixel per direction). From radius 16 the blur runs on a
                copy reduced by f = 2, 4, 8 or 16 (f ≤ σ/4, box-averaged), with σ' = √(σ²/f² - 1/4) so
                that box + Gaussian + bilinear enlargement add up to σ, and is enlarged bilinearly:
                the cost stays about constant however large the radius.
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
final class PixellateKernel: ParameterizedKernel {
    let inputCount = 1
    let textureInputs: Set<Int> = [0]
    let cost = 1
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    /// Grid origin in pixels, in (-scale, 0].
    static func origin(center: SIMD2<Double>, scale: Double, size: Size) -> SIMD2<Double> {
        let c = SIMD2(center.x * Double(size.width), center.y * Double(size.height)) - scale / 2
        return SIMD2(c.x - scale * (c.x / scale).rounded(.up), c.y - scale * (c.y / scale).rounded(.up))
    }

    var prepasses: [KernelPrepass] {
        let scale = parameters.double("scale"), center = parameters.point("center")
        return [KernelPrepass(main: """
            void main() {
                vec2 lo = $origin + floor(gl_FragCoord.xy) * $scale;
                vec2 hi = lo + $scale;
                ivec2 first = ivec2(max(ceil(lo - 0.5), vec2(0.0)));
                ivec2 last = ivec2(min(ceil(hi - 0.5), $src0Size));
                vec4 sum = vec4(0.0);
                for (int y = first.y; y < last.y; y++) {
                    for (int x = first.x; x < last.x; x++) sum += texelFetch($src0, ivec2(x, y), 0);
                }
                int count = max((last.x - first.x) * (last.y - first.y), 1);
                prism_out = sum / float(count);
            }

            """, size: { sizes in
                let origin = PixellateKernel.origin(center: center, scale: scale, size: sizes[0])
                return Size(width: Int(((Double(sizes[0].width) - origin.x) / scale).rounded(.up)),
                            height: Int(((Double(sizes[0].height) - origin.y) / scale).rounded(.up)))
            })]
    }

    let library = "uniform float $scale;\nuniform vec2 $origin;\n"

    let expression = """
        vec4 $main(vec2 p) {
            return texelFetch($pass0, ivec2(floor((p - $origin) / $scale)), 0);
        }

        """

    func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext) {
        let scale = parameters.double("scale")
        let origin = Self.origin(center: parameters.point("center"), scale: scale, size: uniforms.inputSizes[0])
        uniforms.set("$scale", Float(scale))
        uniforms.set("$origin", origin)
    }
}

/// Separable Gaussian blur. Small radii: the horizontal half is a prepass over the input, the vertical
/// half is the expression reading it. Large radii: reduce, blur both ways, and enlarge in the
/// expression. The tap tables are constants in the shader, made from the parameters at compile time.
final class BlurKernel: ParameterizedKernel {
    let inputCount = 1
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    var sigma: Double { parameters.double("radius") / 2 }

    /// The reduction factor for a given σ: 1 below σ = 8 (radius 16), else the largest power of two
    /// f ≤ σ/4 (at most 16), which keeps σ/f in 4..<8 and the reduced blur at 13 to 25 taps a side.
    static func reduction(sigma: Double) -> Int {
        var f = 1
        while f < 16 && Double(f * 2) <= sigma / 4 { f *= 2 }
        return f
    }

    var reduction: Int { Self.reduction(sigma: sigma) }

    /// One-sided taps of a normalised Gaussian, pairs merged for bilinear fetches: the centre weight
    /// and (offset, weight) for each fetch at +offset (the same fetch mirrored at -offset).
    static func taps(sigma: Double) -> (center: Double, pairs: [(offset: Double, weight: Double)]) {
        let reach = Int((3 * sigma).rounded(.up))
        guard sigma > 0, reach > 0 else { return (1, []) }
        var weights = (0...reach).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
        let total = weights[0] + 2 * weights.dropFirst().reduce(0, +)
        weights = weights.map { $0 / total }
        var pairs: [(Double, Double)] = []
        var k = 1
        while k <= reach {
            let a = weights[k], b = k + 1 <= reach ? weights[k + 1] : 0
            pairs.append((Double(k) + b / (a + b), a + b))
            k += 2
        }
        return (weights[0], pairs)
    }

    /// GLSL summing the taps along `axis` ("x" or "y") around pixel centre `p` of `sampler`, whose
    /// size is `size`; the result is in `sum`.
    static func sumCode(sigma: Double, sampler: String, size: String, axis: String) -> String {
        let (center, pairs) = taps(sigma: sigma)
        let step = axis == "x" ? "vec2(1.0, 0.0)" : "vec2(0.0, 1.0)"
        var code = "    vec2 texel = \(step) / \(size);\n    vec2 uv = p / \(size);\n"
        code += "    vec4 sum = \(glsl(center)) * texture(\(sampler), uv);\n"
        for (offset, weight) in pairs {
            code += "    sum += \(glsl(weight)) * (texture(\(sampler), uv + \(glsl(offset)) * texel)"
                + " + texture(\(sampler), uv - \(glsl(offset)) * texel));\n"
        }
        return code
    }

    static func glsl(_ value: Double) -> String {
        let text = String(format: "%.9g", value)
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }

    var textureInputs: Set<Int> { sigma > 0 ? [0] : [] }

    var cost: Int {
        guard sigma > 0 else { return 0 }
        return reduction > 1 ? 1 : Self.taps(sigma: sigma).pairs.count * 2 + 1
    }

    var prepasses: [KernelPrepass] {
        guard sigma > 0 else { return [] }
        let f = reduction
        if f == 1 {
            return [KernelPrepass(main: "void main() {\n    vec2 p = gl_FragCoord.xy;\n"
                + Self.sumCode(sigma: sigma, sampler: "$src0", size: "$src0Size", axis: "x")
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
        let horizontal = "void main() {\n    vec2 p = gl_FragCoord.xy;\n    vec2 size = vec2(textureSize($pass0, 0));\n"
            + Self.sumCode(sigma: reduced.sigma, sampler: "$pass0", size: "size", axis: "x")
            + "    prism_out = sum;\n}\n"
        let vertical = "void main() {\n    vec2 p = gl_FragCoord.xy;\n    vec2 size = vec2(textureSize($pass1, 0));\n"
            + Self.sumCode(sigma: reduced.sigma, sampler: "$pass1", size: "size", axis: "y")
            + "    prism_out = sum;\n}\n"
        return [KernelPrepass(main: reduce, size: reducedSize),
                KernelPrepass(main: horizontal, size: reducedSize),
                KernelPrepass(main: vertical, size: reducedSize)]
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
                + Self.sumCode(sigma: sigma, sampler: "$pass0", size: "$src0Size", axis: "y")
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

    func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext) {}
}
