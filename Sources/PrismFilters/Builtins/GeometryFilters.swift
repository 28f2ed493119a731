import Foundation
import PrismCore

/// Rotations, flips, crops and scaling.
///
/// `rotate`, `flip`, `mirror` and `crop` are exact coordinate remaps: their expression calls `$in0` at the
/// mapped pixel centre, so they fuse with whatever comes before and after and never filter. `scale`
/// resamples, so it reads its input as a texture.
enum GeometryFilters {
    static let definitions: [FilterDefinition] = [
        FilterDefinition(
            name: "rotate", summary: "Rotates clockwise by a quarter, half or three-quarter turn.",
            maths: """
                Input W×H, output pixel centre p. 90: output H×W, reads the input at (p.y, H - p.x);
                180: output W×H, reads (W - p.x, H - p.y); 270: output H×W, reads (W - p.y, p.x).
                Exact: every output pixel is one input pixel, nothing is filtered.
                """,
            parameters: [
                ParameterSpec("angle", .int(90...270), default: .int(90),
                              "clockwise degrees: 90, 180 or 270 (90 and 270 swap width and height)"),
            ],
            example: "rotate(90)",
            make: { values in
                let angle = values.int("angle")
                guard [90, 180, 270].contains(angle) else {
                    throw InvalidRequest("angle must be 90, 180 or 270, not \(angle)")
                }
                return RemapKernel(parameters: values, mapping: { values in
                    switch values.int("angle") {
                    case 180: "vec2($inSize.x - p.x, $inSize.y - p.y)"
                    case 270: "vec2($inSize.x - p.y, p.x)"
                    default: "vec2(p.y, $inSize.y - p.x)"
                    }
                }, size: { input, values in
                    values.int("angle") == 180 ? input : Size(width: input.height, height: input.width)
                })
            }),
        reflection("flip", summary: "Flips top and bottom (a mirror about the horizontal axis).",
                   reads: "(p.x, H - p.y)", mapping: "vec2(p.x, $inSize.y - p.y)"),
        reflection("mirror", summary: "Mirrors left and right (a mirror about the vertical axis).",
                   reads: "(W - p.x, p.y)", mapping: "vec2($inSize.x - p.x, p.y)"),
        FilterDefinition(
            name: "crop", summary: "Keeps a rectangle of the input, given in pixels from the top left.",
            maths: """
                Output w'×h' with w' = min(width, W - x) (width 0: W - x) and h' likewise; output pixel
                centre p reads the input at p + (x, y). The rectangle is clamped to the input; one that
                starts outside it (x ≥ W or y ≥ H) is an error. Exact.
                """,
            parameters: [
                ParameterSpec("x", .int(0...16383), default: .int(0), "left edge in input pixels"),
                ParameterSpec("y", .int(0...16383), default: .int(0), "top edge in input pixels (y down)"),
                ParameterSpec("width", .int(0...16384), default: .int(0),
                              "width in pixels; 0 or more than is left: up to the right edge"),
                ParameterSpec("height", .int(0...16384), default: .int(0),
                              "height in pixels; 0 or more than is left: down to the bottom edge"),
            ],
            example: "crop(100, 50, 640, 360)",
            make: { values in
                RemapKernel(parameters: values, mapping: { _ in "p + $offset" }, offset: { values in
                    SIMD2(Double(values.int("x")), Double(values.int("y")))
                }, size: { input, values in
                    try cropRect(values, input: input).size
                })
            }),
        FilterDefinition(
            name: "scale", summary: "Resizes to WxH: fit inside it, fill it, or stretch to it.",
            maths: """
                Input W×H, target w×h. fit: the largest W:H rectangle inside w×h (the other side rounded to
                whole pixels), centred (offset floored), black opaque bars around it. fill: scale
                s = max(w/W, h/H), the centre w/s × h/s of the input fills the output. stretch: each axis
                scaled on its own. Output pixel centre p maps to input q = origin + (p - offset)·r,
                r = input pixels per output pixel on each axis. Along an axis that grows or keeps its
                size (r ≤ 1): linear interpolation between the two nearest pixel centres (edges
                clamped), i.e. bilinear when both grow. Along an axis that shrinks (r > 1): the area
                average of the input over the pixel's footprint [q - r/2, q + r/2] (each input pixel
                weighted by its overlap), so no detail aliases however large the reduction.
                """,
            parameters: [
                ParameterSpec("size", .size, default: .size(Size(width: 1280, height: 720)), "target size WxH"),
                ParameterSpec("mode", .choice(["fit", "fill", "stretch"]), default: .choice("fit"),
                              "fit: whole input, aspect kept, black bars; fill: covers, aspect kept, centre cropped; stretch: aspect changes"),
            ],
            example: "scale(1280x720, mode=fill)",
            positional: ["size", "mode"],
            make: { values in
                guard let size = values.size("size"), size.width >= 1, size.height >= 1,
                      size.width <= 16384, size.height <= 16384 else {
                    throw InvalidRequest("size must be between 1x1 and 16384x16384, not \(values["size"]?.description ?? "nothing")")
                }
                return ScaleKernel(parameters: values)
            }),
    ]

    /// `flip` or `mirror`: output pixel centre p reads the input at `mapping` (`reads` in the maths).
    private static func reflection(_ name: String, summary: String, reads: String, mapping: String) -> FilterDefinition {
        FilterDefinition(name: name, summary: summary,
                         maths: "Input W×H, output pixel centre p reads the input at \(reads). Exact.", example: name,
                         make: { RemapKernel(parameters: $0, mapping: { _ in mapping }) })
    }

    /// The crop rectangle in input pixels, clamped to the input.
    static func cropRect(_ values: ParameterValues, input: Size) throws -> (origin: SIMD2<Int>, size: Size) {
        let x = values.int("x"), y = values.int("y")
        guard x < input.width else {
            throw InvalidRequest("crop x=\(x) starts outside the \(input) input (x must be below \(input.width))")
        }
        guard y < input.height else {
            throw InvalidRequest("crop y=\(y) starts outside the \(input) input (y must be below \(input.height))")
        }
        let width = values.int("width"), height = values.int("height")
        let w = width == 0 ? input.width - x : min(width, input.width - x)
        let h = height == 0 ? input.height - y : min(height, input.height - y)
        return (SIMD2(x, y), Size(width: w, height: h))
    }
}

/// An exact coordinate remap: the output at p is the input at `mapping(p)`, a GLSL expression of `p`,
/// `$inSize` (the input size) and `$offset`. No filtering, no texture: it fuses into its neighbours.
final class RemapKernel: ParameterizedKernel {
    let inputCount = 1
    let cost = 0
    var parameters: ParameterValues
    private let mapping: (ParameterValues) -> String
    private let offset: (ParameterValues) -> SIMD2<Double>
    private let size: (Size, ParameterValues) throws -> Size

    init(parameters: ParameterValues, mapping: @escaping (ParameterValues) -> String,
         offset: @escaping (ParameterValues) -> SIMD2<Double> = { _ in .zero },
         size: @escaping (Size, ParameterValues) throws -> Size = { input, _ in input }) {
        self.parameters = parameters
        self.mapping = mapping
        self.offset = offset
        self.size = size
    }

    var uniforms: [KernelUniform] {
        [
            KernelUniform("$inSize", .vec2, .inputSize(0)),
            KernelUniform("$offset", .vec2, .computed { [offset] in .vec2($0.parameters.map(offset) ?? .zero) }),
        ]
    }

    var expression: String {
        "vec4 $main(vec2 p) {\n    return $in0(\(mapping(parameters)));\n}\n"
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        try size(inputSizes[0], parameters)
    }

}

/// `scale`: bilinear where an axis grows, area average where it shrinks (see the definition's maths).
final class ScaleKernel: ParameterizedKernel {
    let inputCount = 1
    let textureInputs: Set<Int> = [0]
    var parameters: ParameterValues
    /// The input size of the last compile (`cost` depends on the reduction).
    private var inputSize: Size?

    init(parameters: ParameterValues) { self.parameters = parameters }

    /// The mapping from output pixels to input pixels for one input size.
    struct Placement: Equatable {
        /// The content rectangle in output pixels; black outside it (fit's bars).
        var offset: SIMD2<Double>
        var content: SIMD2<Double>
        /// Input position of the content rectangle's top left corner, and input pixels per output pixel.
        var origin: SIMD2<Double>
        var ratio: SIMD2<Double>
    }

    static func placement(input: Size, output: Size, mode: String) -> Placement {
        let inW = Double(input.width), inH = Double(input.height)
        let outW = Double(output.width), outH = Double(output.height)
        switch mode {
        case "fill":
            let s = max(outW / inW, outH / inH)
            let visible = SIMD2(outW / s, outH / s)
            return Placement(offset: .zero, content: SIMD2(outW, outH),
                             origin: (SIMD2(inW, inH) - visible) / 2, ratio: SIMD2(repeating: 1 / s))
        case "stretch":
            return Placement(offset: .zero, content: SIMD2(outW, outH), origin: .zero, ratio: SIMD2(inW / outW, inH / outH))
        default:  // fit
            var w = outW, h = outH
            if inW * outH >= outW * inH {
                h = max(1, (outW * inH / inW).rounded())
            } else {
                w = max(1, (outH * inW / inH).rounded())
            }
            let offset = SIMD2(((outW - w) / 2).rounded(.down), ((outH - h) / 2).rounded(.down))
            return Placement(offset: offset, content: SIMD2(w, h), origin: .zero, ratio: SIMD2(inW / w, inH / h))
        }
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        inputSize = inputSizes[0]
        return parameters.size("size") ?? inputSizes[0]
    }

    /// Texel reads per pixel: 1 when growing, the footprint when shrinking.
    var cost: Int {
        guard let input = inputSize, let output = parameters.size("size") else { return 4 }
        let p = Self.placement(input: input, output: output, mode: parameters.word("mode"))
        if p.ratio.x <= 1 && p.ratio.y <= 1 { return 1 }
        return Int((max(p.ratio.x, 1).rounded(.up) + 1) * (max(p.ratio.y, 1).rounded(.up) + 1))
    }

    var uniforms: [KernelUniform] {
        func placement(_ inputs: UniformInputs) -> Placement {
            Self.placement(input: inputs.inputSizes[0], output: inputs.outputSize, mode: inputs.parameters?.word("mode") ?? "")
        }
        return [
            KernelUniform("$offset", .vec2, .computed { .vec2(placement($0).offset) }),
            KernelUniform("$content", .vec2, .computed { .vec2(placement($0).content) }),
            KernelUniform("$origin", .vec2, .computed { .vec2(placement($0).origin) }),
            KernelUniform("$ratio", .vec2, .computed { .vec2(placement($0).ratio) }),
        ]
    }

    let library = """
        // Weight of input texel i (covering [i, i+1]) for output footprint centre q on one axis: the
        // overlap with [q - r/2, q + r/2] when shrinking, the linear-interpolation tent otherwise.
        float $weight(float i, float q, float r) {
            if (r > 1.0) return max(0.0, min(i + 1.0, q + 0.5 * r) - max(i, q - 0.5 * r));
            return max(0.0, 1.0 - abs(i + 0.5 - q));
        }

        """

    let expression = """
        vec4 $main(vec2 p) {
            vec2 local = p - $offset;
            if (any(lessThan(local, vec2(0.0))) || any(greaterThanEqual(local, $content))) return vec4(0.0, 0.0, 0.0, 1.0);
            vec2 q = $origin + local * $ratio;
            if ($ratio.x <= 1.0 && $ratio.y <= 1.0) return texture($src0, q / $src0Size);
            vec2 lo = mix(floor(q - 0.5), floor(q - 0.5 * $ratio), greaterThan($ratio, vec2(1.0)));
            vec2 hi = mix(floor(q - 0.5) + 1.0, ceil(q + 0.5 * $ratio) - 1.0, greaterThan($ratio, vec2(1.0)));
            ivec2 last = ivec2($src0Size) - 1;
            vec4 sum = vec4(0.0);
            float total = 0.0;
            for (float y = lo.y; y <= hi.y; y += 1.0) {
                float wy = $weight(y, q.y, $ratio.y);
                for (float x = lo.x; x <= hi.x; x += 1.0) {
                    float w = wy * $weight(x, q.x, $ratio.x);
                    sum += w * texelFetch($src0, clamp(ivec2(x, y), ivec2(0), last), 0);
                    total += w;
                }
            }
            return sum / max(total, 1e-6);
        }

        """

}
