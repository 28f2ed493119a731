import PrismCore

/// Point-wise colour filters, written as ISF files in Shaders/: they fuse into any pass.
enum ColorFilters {
    static let definitions: [FilterDefinition] = [
        BundledShaders.definition(
            file: "invert", name: "invert", summary: "Inverts colours (CIColorInvert).",
            maths: "rgb' = 1 - rgb; alpha kept.",
            example: "invert"),
        BundledShaders.definition(
            file: "color", name: "color", summary: "Brightness, contrast and saturation (CIColorControls).",
            maths: """
                luma = 0.2126 r + 0.7152 g + 0.0722 b (BT.709 weights on R'G'B');
                rgb1 = mix(vec3(luma), rgb, saturation); rgb2 = (rgb1 - 0.5) * contrast + 0.5; rgb' = rgb2 + brightness; alpha kept.
                """,
            example: "color(brightness=0.05, contrast=1.2, saturation=0.8)"),
    ]
}

/// A kernel computing its output from the input colour `c` at the same pixel `p`.
final class PointwiseKernel: ParameterizedKernel {
    let inputCount = 1
    let isPointwise = true
    let cost = 0
    let library: String
    let body: String
    var parameters: ParameterValues
    private let apply: (KernelUniforms, ParameterValues) -> Void

    init(uniforms: String = "", body: String, parameters: ParameterValues? = nil,
         apply: @escaping (KernelUniforms, ParameterValues) -> Void = { _, _ in }) {
        self.library = uniforms
        self.body = body
        self.parameters = parameters ?? (try! ParameterValues(specs: []))
        self.apply = apply
    }

    var expression: String {
        "vec4 $main(vec2 p) {\n    vec4 c = $in0(p);\n" + body.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n") + "\n}\n"
    }

    func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext) { apply(uniforms, parameters) }
}
