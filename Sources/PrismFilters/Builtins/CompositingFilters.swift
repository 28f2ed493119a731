import Foundation
import PrismCore

/// Generators and compositing: the pieces of the seed's masked pixellate.
enum CompositingFilters {
    static let definitions: [FilterDefinition] = [
        FilterDefinition(
            name: "radial-gradient", summary: "A radial gradient between two colours (CIRadialGradient).",
            maths: """
                d = distance(p, center·size) in pixels; t = clamp((d - radius0) / (radius1 - radius0), 0, 1);
                out = mix(color0, color1, t). The frame size is the graph input's.
                """,
            parameters: [
                ParameterSpec("center", .point, default: .point(SIMD2(0.5, 0.5)), "0...1 of width and height"),
                ParameterSpec("radius0", .float(0...16384), default: .float(5), "pixels; color0 inside"),
                ParameterSpec("radius1", .float(0...16384), default: .float(100), "pixels; color1 outside"),
                ParameterSpec("color0", .color, default: .color(SIMD4(1, 1, 1, 1)), "colour at radius0"),
                ParameterSpec("color1", .color, default: .color(SIMD4(0, 0, 0, 1)), "colour at radius1"),
            ],
            inputs: [],
            example: "radial-gradient(center=0.5:0.4, radius0=60, radius1=90, color0=#ffffff, color1=#000000)",
            make: { values in
                GeneratorKernel(
                    uniforms: "uniform vec2 $center;\nuniform float $radius0;\nuniform float $radius1;\nuniform vec4 $color0;\nuniform vec4 $color1;\n",
                    body: """
                        float d = distance(p, $center);
                        float t = clamp((d - $radius0) / max($radius1 - $radius0, 1e-6), 0.0, 1.0);
                        return mix($color0, $color1, t);
                        """,
                    parameters: values) { u, v in
                        let c = v.point("center")
                        u.set("$center", Float(c.x * Double(u.outputSize.width)), Float(c.y * Double(u.outputSize.height)))
                        u.set("$radius0", Float(v.double("radius0")))
                        u.set("$radius1", Float(v.double("radius1")))
                        u.set("$color0", v.color("color0"))
                        u.set("$color1", v.color("color1"))
                    }
            }),
        FilterDefinition(
            name: "blend-mask", summary: "Input where the mask is bright, background where dark (CIBlendWithMask).",
            maths: "m = mask.g (the mask's green, as Core Image); out = mix(background, input, m).",
            inputs: ["input", "background", "mask"],
            example: "[in]pixellate(scale=16)[px]; radial-gradient(radius0=60, radius1=90)[m]; [px][in][m]blend-mask",
            make: { _ in CombineKernel(inputCount: 3, body: "return mix(b, a, c.g);") }),
        FilterDefinition(
            name: "over", summary: "Source-over compositing (CISourceOverCompositing).",
            maths: "Straight alpha: a = as + ab(1 - as); rgb = (rgbs·as + rgbb·ab(1 - as)) / a (0 where a = 0).",
            inputs: ["input", "background"],
            example: "[in]invert[top]; [top][in]over",
            make: { _ in
                CombineKernel(inputCount: 2, body: """
                    float alpha = a.a + b.a * (1.0 - a.a);
                    vec3 rgb = alpha > 0.0 ? (a.rgb * a.a + b.rgb * b.a * (1.0 - a.a)) / alpha : vec3(0.0);
                    return vec4(rgb, alpha);
                    """)
            }),
    ]
}

/// A kernel with no inputs computing a colour from the pixel position `p`.
final class GeneratorKernel: ParameterizedKernel {
    let inputCount = 0
    let isPointwise = true
    let cost = 0
    let library: String
    let body: String
    var parameters: ParameterValues
    private let apply: (KernelUniforms, ParameterValues) -> Void

    init(uniforms: String, body: String, parameters: ParameterValues,
         apply: @escaping (KernelUniforms, ParameterValues) -> Void) {
        self.library = uniforms
        self.body = body
        self.parameters = parameters
        self.apply = apply
    }

    var expression: String {
        "vec4 $main(vec2 p) {\n" + body + "\n}\n"
    }

    func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext) { apply(uniforms, parameters) }
}

/// A point-wise kernel over several inputs read at the same pixel: `a`, `b`, `c`… are inputs 0, 1, 2….
final class CombineKernel: FilterKernel {
    let inputCount: Int
    let isPointwise = true
    let cost = 0
    let body: String

    init(inputCount: Int, body: String) {
        self.inputCount = inputCount
        self.body = body
    }

    var expression: String {
        let names = ["a", "b", "c", "d"]
        let reads = (0..<inputCount).map { "    vec4 \(names[$0]) = $in\($0)(p);" }.joined(separator: "\n")
        return "vec4 $main(vec2 p) {\n" + reads + "\n" + body + "\n}\n"
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        guard let first = inputSizes.first else { return sourceSize }
        if let other = inputSizes.first(where: { $0 != first }) {
            throw UsageError("inputs differ in size (\(first) and \(other)); scale or crop them to match first")
        }
        return first
    }

    func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext) {}
}
