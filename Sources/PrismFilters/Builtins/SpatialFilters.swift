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
