import PrismCore

/// Point-wise colour filters written directly in GLSL: they fuse into any pass.
enum ColorFilters {
    static let definitions: [FilterDefinition] = [
        FilterDefinition(
            name: "invert", summary: "Inverts colours (CIColorInvert).",
            maths: "rgb' = 1 - rgb; alpha kept.",
            example: "invert",
            make: { _ in PointwiseKernel(body: "return vec4(1.0 - c.rgb, c.a);") }),
        FilterDefinition(
            name: "color", summary: "Brightness, contrast and saturation (CIColorControls).",
            maths: """
                luma = 0.2126 r + 0.7152 g + 0.0722 b (BT.709 weights on R'G'B');
                rgb1 = mix(vec3(luma), rgb, saturation); rgb2 = (rgb1 - 0.5) * contrast + 0.5; rgb' = rgb2 + brightness; alpha kept.
                """,
            parameters: [
                ParameterSpec("brightness", .float(-1...1), default: .float(0), "added to every channel"),
                ParameterSpec("contrast", .float(0...4), default: .float(1), "scales the distance from mid-grey"),
                ParameterSpec("saturation", .float(0...4), default: .float(1), "0 grey, 1 unchanged, >1 stronger"),
            ],
            example: "color(brightness=0.05, contrast=1.2, saturation=0.8)",
            make: { values in
                PointwiseKernel(
                    uniforms: "uniform float $brightness;\nuniform float $contrast;\nuniform float $saturation;\n",
                    body: """
                        float luma = dot(c.rgb, vec3(0.2126, 0.7152, 0.0722));
                        vec3 rgb = mix(vec3(luma), c.rgb, $saturation);
                        rgb = (rgb - 0.5) * $contrast + 0.5 + $brightness;
                        return vec4(rgb, c.a);
                        """,
                    parameters: values) { u, v in
                        u.set("$brightness", Float(v.double("brightness")))
                        u.set("$contrast", Float(v.double("contrast")))
                        u.set("$saturation", Float(v.double("saturation")))
                    }
            }),
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
