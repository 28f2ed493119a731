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

    /// Separable block means: first along rows (one texel per block column and pixel row, kept in
    /// half float so the second step adds no rounding), then down the columns. Two short loops keep
    /// many fragments busy, where one loop over the whole block would leave a few fragments each doing
    /// scale² reads.
    var prepasses: [KernelPrepass] {
        let scale = parameters.double("scale"), center = parameters.point("center")
        let blocks: @Sendable (Size) -> Size = { size in
            let origin = PixellateKernel.origin(center: center, scale: scale, size: size)
            return Size(width: Int(((Double(size.width) - origin.x) / scale).rounded(.up)),
                        height: Int(((Double(size.height) - origin.y) / scale).rounded(.up)))
        }
        return [
            KernelPrepass(main: """
                void main() {
                    ivec2 t = ivec2(gl_FragCoord.xy);
                    float lo = $origin.x + float(t.x) * $scale;
                    int first = int(max(ceil(lo - 0.5), 0.0));
                    int last = int(min(ceil(lo + $scale - 0.5), $inputSize.x));
                    vec4 sum = vec4(0.0);
                    for (int x = first; x < last; x++) sum += $in0(vec2(float(x) + 0.5, float(t.y) + 0.5));
                    prism_out = sum / float(max(last - first, 1));
                }

                """, format: .rgba16f, size: { sizes in Size(width: blocks(sizes[0]).width, height: sizes[0].height) }),
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

    let library = "uniform float $scale;\nuniform vec2 $origin;\nuniform vec2 $inputSize;\n"

    let expression = """
        vec4 $main(vec2 p) {
            return texelFetch($pass1, ivec2(floor((p - $origin) / $scale)), 0);
        }

        """

    func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext) {
        let scale = parameters.double("scale")
        let origin = Self.origin(center: parameters.point("center"), scale: scale, size: uniforms.inputSizes[0])
        uniforms.set("$scale", Float(scale))
        uniforms.set("$origin", origin)
        uniforms.set("$inputSize", Float(uniforms.inputSizes[0].width), Float(uniforms.inputSizes[0].height))
    }
}
