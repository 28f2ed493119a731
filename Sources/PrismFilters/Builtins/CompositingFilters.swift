import Foundation
import PrismCore

/// Generators and compositing: the pieces of the seed's masked pixellate. The gradient is an ISF file in
/// Shaders/ (it fuses like any point-wise filter); the blends stay here because ISF filters with several
/// image inputs run as passes of their own.
enum CompositingFilters {
    static let definitions: [FilterDefinition] = [
        BundledShaders.definition(
            file: "radial-gradient", name: "radial-gradient",
            summary: "A radial gradient between two colours (CIRadialGradient).",
            maths: """
                d = distance(p, center·size) in pixels; t = clamp((d - radius0) / (radius1 - radius0), 0, 1);
                out = mix(color0, color1, t). The frame size is the graph input's.
                """,
            example: "radial-gradient(center=0.5:0.4, radius0=60, radius1=90, color0=#ffffff, color1=#000000)",
            nonzeroRegions: { values, channel, size in
                // Beyond the larger radius t is 1 and the output is exactly color1.
                guard values.color("color1")[channel] == 0 else { return nil }
                let reach = max(values.double("radius0"), values.double("radius1"))
                let center = values.point("center") * SIMD2(Double(size.width), Double(size.height))
                return [pixelsAround(center, reach: reach, size: size)].filter { !$0.isEmpty }
            }),
        FilterDefinition(
            name: "blend-mask", summary: "Input where the mask is bright, background where dark (CIBlendWithMask).",
            maths: "m = mask.g (the mask's green, as Core Image); out = mix(background, input, m).",
            inputs: ["input", "background", "mask"],
            example: "[in]pixellate(scale=16)[px]; radial-gradient(radius0=60, radius1=90)[m]; [px][in][m]blend-mask",
            make: { _ in
                CombineKernel(inputCount: 3, body: "return mix(b, a, c.g);",
                              blend: ColorBlend(from: 1, to: 0, weight: 2, channel: 1))
            }),
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

/// A point-wise kernel over several inputs read at the same pixel: `a`, `b`, `c`… are inputs 0, 1, 2….
final class CombineKernel: FilterKernel {
    let inputCount: Int
    let isPointwise = true
    let cost = 0
    let body: String
    /// What `body` is, as data, when it is a mix by a mask (see `ColorBlend`).
    let colorBlend: ColorBlend?

    init(inputCount: Int, body: String, blend: ColorBlend? = nil) {
        self.inputCount = inputCount
        self.body = body
        self.colorBlend = blend
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

}
