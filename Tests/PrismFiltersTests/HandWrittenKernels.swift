import PrismCore
@testable import PrismFilters

/// A kernel computing its output from the input colour `c` at the same pixel `p`, written in GLSL by
/// hand: the built-ins `invert` and `color` in this form are what their ISF files in Shaders/ are
/// compared with.
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
