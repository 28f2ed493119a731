import Foundation
import PrismCore

/// Filters driven by the faces found in each frame (`FrameContext.regions`, filled by the face
/// detector or a sidecar): the seed's face pixellate, for every face. `face-mask` is a generator;
/// `face-pixellate` and `face-blur` are shorthands that expand to the seed's graph.
enum FaceFilters {
    static let maskParameters = [
        ParameterSpec("size", .float(0.1...4), default: .float(1.2),
                      "mask radius as a multiple of half the face box's width (1: the seed's circle)"),
        ParameterSpec("feather", .float(0...1), default: .float(0.25), "soft edge, as a fraction of the radius"),
    ]

    static let definitions: [FilterDefinition] = [
        FilterDefinition(
            name: "face-mask", summary: "White over each face, soft-edged, black elsewhere (one CIRadialGradient per face, joined with CISourceOverCompositing).",
            maths: """
                For each face i (centre c_i, box width w_i, in pixels): r1 = size·w_i/2, r0 = r1·(1 - feather),
                t_i = clamp((|p - c_i| - r0) / (r1 - r0), 0, 1), a gradient from opaque white (inside r0) to
                transparent (outside r1). Source-over of all of them on black: m = 1 - Π t_i; out = (m, m, m, 1).
                Up to \(FaceMaskKernel.maxFaces) faces (the largest); no faces: black. The frame size is the graph input's.
                """,
            parameters: maskParameters, inputs: [],
            example: "[in]pixellate(scale=16)[px]; face-mask(size=1.2, feather=0.25)[m]; [px][in][m]blend-mask",
            make: { FaceMaskKernel(parameters: $0) }),
        FilterDefinition(
            name: "face-outline", summary: "Draws a circle where each face's mask ends (the dev preview's face outlines).",
            maths: """
                For each face i: r1 = size·w_i/2 as in face-mask; pixels with ||p - c_i| - r1| ≤ width/2 take `color`,
                all others are the input unchanged.
                """,
            parameters: [
                maskParameters[0],
                ParameterSpec("width", .float(0.5...64), default: .float(3), "line width in pixels"),
                ParameterSpec("color", .color, default: .color(SIMD4(0, 1, 0, 1)), "line colour"),
            ],
            example: "face-pixellate, face-outline(color=#00ff00)",
            make: { FaceOutlineKernel(parameters: $0) }),
        shorthand(
            name: "face-pixellate", summary: "Pixellates every face inside a soft circle (the seed's effect).",
            effect: ParameterSpec("scale", .float(1...512), default: .float(16), "block size in pixels"),
            expandsTo: "[in]pixellate(scale=S)[fx]; face-mask(size=…, feather=…)[m]; [fx][in][m]blend-mask",
            example: "face-pixellate(scale=16)",
            effectFilter: "pixellate"),
        shorthand(
            name: "face-blur", summary: "Blurs every face inside a soft circle.",
            effect: ParameterSpec("radius", .float(0...200), default: .float(12), "blur radius in pixels (σ = radius / 2)"),
            expandsTo: "[in]blur(radius=R)[fx]; face-mask(size=…, feather=…)[m]; [fx][in][m]blend-mask",
            example: "face-blur(radius=12)",
            effectFilter: "blur"),
    ]

    /// A filter standing for effect → blend-mask through `face-mask`, with the effect's parameter and the mask's.
    private static func shorthand(name: String, summary: String, effect: ParameterSpec, expandsTo: String,
                                  example: String, effectFilter: String) -> FilterDefinition {
        let effectName = effect.name
        return FilterDefinition(
            name: name, summary: summary,
            maths: "Expands to \(expandsTo): the input where the mask is black, the \(effectFilter)ed input where it is white.",
            parameters: [effect] + maskParameters, example: example,
            make: { _ in throw UsageError("\(name) stands for several filters and is expanded when the graph is bound") },
            expand: { graph, input, values in
                guard let effectDefinition = BuiltinFilters.named(effectFilter), let mask = BuiltinFilters.named("face-mask"),
                      let blend = BuiltinFilters.named("blend-mask") else {
                    preconditionFailure("face shorthands need the pixellate, blur, face-mask and blend-mask built-ins")
                }
                var effectGiven: [String: ParameterValue] = [:], maskGiven: [String: ParameterValue] = [:]
                effectGiven[effectName] = values[effectName]
                maskGiven["size"] = values["size"]
                maskGiven["feather"] = values["feather"]
                let (effectKernel, effectValues) = try effectDefinition.instantiate(effectGiven)
                let effected = try graph.add(effectFilter, kernel: effectKernel, inputs: [input], parameters: effectValues)
                let (maskKernel, maskValues) = try mask.instantiate(maskGiven)
                let masked = try graph.add("face-mask", kernel: maskKernel, inputs: [], parameters: maskValues)
                let (blendKernel, blendValues) = try blend.instantiate()
                return try graph.add("blend-mask", kernel: blendKernel, inputs: [.node(effected), input, .node(masked)],
                                     parameters: blendValues)
            })
    }
}

/// `face-mask`: one soft disc per region of the frame, joined with source-over. Point-wise, so it fuses
/// into the blend that uses it.
final class FaceMaskKernel: ParameterizedKernel {
    /// Faces beyond this many (the detector reports the largest first) are left out of the mask.
    static let maxFaces = 16
    let inputCount = 0
    let isPointwise = true
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    var uniforms: [KernelUniform] {
        Self.discUniforms { inputs in
            (inputs.parameters?.double("size") ?? 0, inputs.parameters?.double("feather") ?? 0)
        }
    }

    /// `$faces`, this frame's discs (`discs`), and `$faceCount`: `shape` gives the scale and feather.
    static func discUniforms(shape: @escaping (UniformInputs) -> (scale: Double, feather: Double)) -> [KernelUniform] {
        func frameDiscs(_ inputs: UniformInputs) -> [SIMD4<Double>] {
            let (scale, feather) = shape(inputs)
            return FaceMaskKernel.discs(regions: inputs.frame.regions, size: inputs.outputSize, scale: scale, feather: feather)
        }
        return [
            KernelUniform("$faces", .vec4, count: maxFaces, .computed { .vec4Array(frameDiscs($0)) }),
            KernelUniform("$faceCount", .int, .computed { .int(Int32(min($0.frame.regions.count, maxFaces))) }),
        ]
    }

    // $faces[i] = (centre x, centre y, r0, r1) in output pixels, y down. One guarded statement per slot,
    // not a loop: on llvmpipe a loop bounded by the face count measured about 3x slower (BENCHMARKS.md),
    // and every slot costs even when its guard is false, hence the versions for fewer faces.
    let expression = FaceMaskKernel.code(slots: FaceMaskKernel.maxFaces)
    let regionLimits = [1, 4]
    func expression(regionLimit: Int) -> String { Self.code(slots: min(regionLimit, Self.maxFaces)) }

    private static func code(slots: Int) -> String {
        "vec4 $main(vec2 p) {\n    float uncovered = 1.0;\n"
            + (0..<slots).map { i in
                "    if ($faceCount > \(i)) uncovered *= clamp((distance(p, $faces[\(i)].xy) - $faces[\(i)].z)"
                    + " / max($faces[\(i)].w - $faces[\(i)].z, 1e-6), 0.0, 1.0);\n"
            }.joined()
            + "    float m = 1.0 - uncovered;\n    return vec4(m, m, m, 1.0);\n}\n"
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size { sourceSize }

    /// The discs for this frame's regions, in output pixels.
    static func discs(regions: [FrameContext.Region], size: Size, scale: Double, feather: Double) -> [SIMD4<Double>] {
        regions.prefix(maxFaces).map { region in
            let r1 = region.radius * Double(size.width) * scale
            return SIMD4(region.center.x * Double(size.width), region.center.y * Double(size.height), r1 * (1 - feather), r1)
        }
    }

    /// Outside every disc each factor is 1, so the mask is exactly 0 there (in r, g and b).
    func nonzeroRegions(channel: Int, frame: FrameContext, size: Size) -> [PixelRect]? {
        guard channel < 3 else { return nil }
        let discs = Self.discs(regions: frame.regions, size: size, scale: parameters.double("size"),
                               feather: parameters.double("feather"))
        return discs.map { pixelsAround(SIMD2($0.x, $0.y), reach: max($0.z, $0.w), size: size) }.filter { !$0.isEmpty }
    }

}

/// `face-outline`: a ring at each face mask's outer radius over the input. Point-wise.
final class FaceOutlineKernel: ParameterizedKernel {
    let inputCount = 1
    let isPointwise = true
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    var uniforms: [KernelUniform] {
        FaceMaskKernel.discUniforms { inputs in (inputs.parameters?.double("size") ?? 0, 0) } + [
            KernelUniform("$halfWidth", .float, .computed { .float(Float(($0.parameters?.double("width") ?? 0) / 2)) }),
            KernelUniform("$color", .vec4, .parameter("color")),
        ]
    }

    // Guarded statements per slot rather than a loop, as in face-mask.
    let expression = "vec4 $main(vec2 p) {\n    bool ring = false;\n"
        + (0..<FaceMaskKernel.maxFaces).map { i in
            "    if ($faceCount > \(i)) ring = ring || abs(distance(p, $faces[\(i)].xy) - $faces[\(i)].w) <= $halfWidth;\n"
        }.joined()
        + "    return ring ? $color : $in0(p);\n}\n"

}

extension FilterGraph {
    /// True when some node draws face masks, so the engine must supply `FrameContext.regions` (run a
    /// detector or read a sidecar).
    public var readsFaceRegions: Bool { nodes.contains { $0.kernel is FaceMaskKernel || $0.kernel is FaceOutlineKernel } }
}
