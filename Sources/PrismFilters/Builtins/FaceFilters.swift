import Foundation
import PrismCore

/// Filters driven by the faces found in each frame (`FrameContext.regions`, filled by the face
/// detector or a sidecar): the seed's face pixellate, for every face. `face-mask` is a generator;
/// `face-pixellate` and `face-blur` are shorthands that expand to the seed's graph, their blocks and blur
/// sized from the faces in each frame unless a size in pixels is given.
enum FaceFilters {
    static let maskParameters = [
        ParameterSpec("size", .float(0.1...4), default: .float(1.5),
                      "the mask's outer ellipse, as a multiple of half the face box's width and height"),
        ParameterSpec("feather", .float(0...1), default: .float(0.15), "soft edge, as a fraction of the outer ellipse"),
    ]

    /// `face-pixellate`'s blocks: a face about this many blocks wide, at any size.
    static let defaultBlocks = 6.0
    /// `face-blur`'s radius: this share of the face's width.
    static let defaultStrength = 0.25

    static let definitions: [FilterDefinition] = [
        FilterDefinition(
            name: "face-mask", summary: "White over each face, soft-edged, black elsewhere (one CIRadialGradient per face, joined with CISourceOverCompositing).",
            maths: """
                For each face i (centre c_i, box width w_i and height h_i, in pixels): an ellipse with half-axes
                a_i = size·w_i/2 and b_i = size·h_i/2; d_i = |((p - c_i).x / a_i, (p - c_i).y / b_i)|,
                t_i = clamp((d_i - (1 - feather)) / feather, 0, 1): opaque white inside (1 - feather) of the ellipse,
                transparent outside it. Source-over of all of them on black: m = 1 - Π t_i; out = (m, m, m, 1).
                The boxes the detector gives are grown by a tenth of their width on every side (more while a face is
                predicted); with the defaults (size 1.5, feather 0.15) the opaque ellipse then holds the detected box,
                corners included, hairline to chin. Up to \(FaceMaskKernel.maxFaces)
                ellipses: more faces are covered by merging the nearest ones into ellipses around both. No faces:
                black. The frame size is the graph input's.
                """,
            parameters: maskParameters, inputs: [],
            example: "[in]pixellate(scale=16)[px]; face-mask(size=1.5, feather=0.15)[m]; [px][in][m]blend-mask",
            make: { FaceMaskKernel(parameters: $0) }),
        FilterDefinition(
            name: "face-outline", summary: "Draws an ellipse where each face's mask ends (the dev preview's face outlines).",
            maths: """
                For each face i: the outer ellipse of face-mask (half-axes size·w_i/2, size·h_i/2); pixels within
                width/2 pixels of it (measured along the ellipse's x axis) take `color`, all others are the input.
                """,
            parameters: [
                maskParameters[0],
                ParameterSpec("width", .float(0.5...64), default: .float(3), "line width in pixels"),
                ParameterSpec("color", .color, default: .color(SIMD4(0, 1, 0, 1)), "line colour"),
            ],
            example: "face-pixellate, face-outline(color=#00ff00)",
            make: { FaceOutlineKernel(parameters: $0) }),
        shorthand(
            name: "face-pixellate", summary: "Pixellates every face inside a soft ellipse (the seed's effect), blocks sized to the face.",
            effect: [
                ParameterSpec("blocks", .float(2...64), default: .float(defaultBlocks),
                              "a face is about this many blocks wide (blocks from the widest face in each frame, in steps of 8 px)"),
                ParameterSpec("scale", .float(0...512), default: .float(0), "block size in pixels, the same for every face (0: from blocks)"),
            ],
            expandsTo: "[in]pixellate(scale=S)[fx]; face-mask(size=…, feather=…)[m]; [fx][in][m]blend-mask",
            example: "face-pixellate(blocks=6)",
            effectFilter: "pixellate"),
        shorthand(
            name: "face-blur", summary: "Blurs every face inside a soft ellipse, the blur sized to the face.",
            effect: [
                ParameterSpec("strength", .float(0...2), default: .float(defaultStrength),
                              "blur radius as a share of the face's width (from the widest face in each frame, in steps of √2; 0: radius alone)"),
                ParameterSpec("radius", .float(0...200), default: .float(0), "blur radius in pixels, the same for every face (when given, or strength is 0; σ = radius / 2)"),
            ],
            expandsTo: "[in]blur(radius=R)[fx]; face-mask(size=…, feather=…)[m]; [fx][in][m]blend-mask",
            example: "face-blur(strength=0.25)",
            effectFilter: "blur"),
    ]

    /// A filter standing for effect → blend-mask through `face-mask`, with the effect's parameters and the mask's.
    /// The effect's size comes from its first parameter (relative to the face) unless the second (pixels) is set.
    private static func shorthand(name: String, summary: String, effect: [ParameterSpec], expandsTo: String,
                                  example: String, effectFilter: String) -> FilterDefinition {
        let relative = effect[0].name, fixed = effect[1].name
        return FilterDefinition(
            name: name, summary: summary,
            maths: """
                Expands to \(expandsTo): the input where the mask is black, the \(effectFilter == "blur" ? "blurred" : "pixellated") input where it is white. \
                With \(fixed) = 0 the \(effectFilter)'s size follows the widest face in each frame (\(relative)), rounded up to \
                a few steps so that the graph is compiled again only when a face's size changes markedly.
                """,
            parameters: effect + maskParameters, example: example,
            make: { _ in throw InvalidRequest("\(name) stands for several filters and is expanded when the graph is bound") },
            expand: { graph, input, values in
                // The size in pixels when given (or when the share is 0), else from the faces.
                let pixels = values.double(fixed), share = values.double(relative)
                let sized = pixels == 0 && share > 0
                let effectParameter = effectFilter == "pixellate" ? "scale" : "radius"
                // Until the first face, a size that suits a face of a tenth of a 720p frame's width.
                let size = sized ? FaceSized(filter: effectFilter, share: share).size(forFaceWidth: 128) : pixels
                let effected = try graph.addBuiltin(effectFilter, [effectParameter: .float(size)], inputs: [input])
                if sized { graph.faceSized[effected.index] = FaceSized(filter: effectFilter, share: share) }
                let masked = try graph.addBuiltin("face-mask", ["size": values["size"], "feather": values["feather"]], inputs: [])
                return try graph.addBuiltin("blend-mask", [:], inputs: [.node(effected), input, .node(masked)])
            })
    }
}

/// An effect of `face-pixellate` or `face-blur` sized from the faces in each frame: pixellate blocks of the
/// widest face's width / `share` (share = blocks across a face), or a blur radius of `share` × that width.
package struct FaceSized: Sendable, Equatable {
    package var filter: String
    package var share: Double

    /// The effect's size for a face `width` pixels wide, rounded up to a step (blocks: multiples of 8 px, which
    /// also keeps the Y'CbCr route's aligned-block programs; radii: powers of √2).
    package func size(forFaceWidth width: Double) -> Double {
        Self.step(filter == "pixellate" ? width / share : width * share, for: filter)
    }

    static func step(_ value: Double, for filter: String) -> Double {
        if filter == "pixellate" { return min(512, max(8, (value / 8).rounded(.up) * 8)) }
        let exponent = (2 * log2(max(value, 1))).rounded(.up) / 2
        return min(200, max(2, pow(2, exponent).rounded()))
    }
}

extension FilterGraph {
    /// Sets each face-sized effect (`face-pixellate`, `face-blur` without a size in pixels) for the widest of
    /// `regions` in a frame of `size`; nothing changes in a frame without faces. Returns true when a size
    /// changed: the graph must be compiled again before the frame is drawn.
    package func fitFaceSizedEffects(to regions: [FrameContext.Region], frameSize size: Size) throws -> Bool {
        guard !faceSized.isEmpty, let widest = regions.map(\.radius).max(), widest.isFinite, widest > 0 else { return false }
        let width = min(2 * widest * Double(size.width), Double(max(size.width, size.height)))
        var changed = false
        for (index, sized) in faceSized.sorted(by: { $0.key < $1.key }) {
            let name = sized.filter == "pixellate" ? "scale" : "radius"
            let wanted = sized.size(forFaceWidth: width)
            guard nodes[index].parameters?.double(name) != wanted else { continue }
            try setParameter(nodes[index].id, name, .float(wanted))
            changed = true
        }
        return changed
    }
}

/// `face-mask`: one soft ellipse per region of the frame, joined with source-over. Point-wise, so it fuses
/// into the blend that uses it.
final class FaceMaskKernel: ParameterizedKernel {
    /// Ellipses in the shader; more faces are merged into ellipses around several (`discs`).
    static let maxFaces = 16
    let inputCount = 0
    let isPointwise = true
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    var uniforms: [KernelUniform] {
        Self.discUniforms { $0.parameters?.double("size") ?? 0 } + [KernelUniform("$inner", .float, .computed { .float(Float(1 - ($0.parameters?.double("feather") ?? 0))) })]
    }

    /// `$faces`, this frame's ellipses (`discs`) of the size `scale` gives, and `$faceCount`.
    static func discUniforms(scale: @escaping (UniformInputs) -> Double) -> [KernelUniform] {
        func frameDiscs(_ inputs: UniformInputs) -> [SIMD4<Double>] {
            FaceMaskKernel.discs(regions: inputs.frame.regions, size: inputs.outputSize, scale: scale(inputs))
        }
        return [
            KernelUniform("$faces", .vec4, count: maxFaces, .computed { .vec4Array(frameDiscs($0)) }),
            KernelUniform("$faceCount", .int, .computed { .int(Int32(min($0.frame.regions.count, maxFaces))) }),
        ]
    }

    // $faces[i] = (centre x, centre y, half-axis x, half-axis y) of the outer ellipse in output pixels, y down.
    // One guarded statement per slot, not a loop: on llvmpipe a loop bounded by the face count measured about
    // 3x slower (BENCHMARKS.md), and every slot costs even when its guard is false, hence the versions for
    // fewer faces.
    let expression = FaceMaskKernel.code(slots: FaceMaskKernel.maxFaces)
    let regionLimits = [1, 4]
    func expression(regionLimit: Int) -> String { Self.code(slots: min(regionLimit, Self.maxFaces)) }

    private static func code(slots: Int) -> String {
        "vec4 $main(vec2 p) {\n    float uncovered = 1.0;\n"
            + (0..<slots).map { i in
                "    if ($faceCount > \(i)) uncovered *= clamp((length((p - $faces[\(i)].xy) / $faces[\(i)].zw) - $inner)"
                    + " / max(1.0 - $inner, 1e-6), 0.0, 1.0);\n"
            }.joined()
            + "    float m = 1.0 - uncovered;\n    return vec4(m, m, m, 1.0);\n}\n"
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size { sourceSize }

    /// The outer ellipses for this frame's regions, in output pixels: (cx, cy, a, b). More regions than the
    /// shader holds are merged, nearest first, into ellipses that cover both (the privacy promise: every face).
    static func discs(regions: [FrameContext.Region], size: Size, scale: Double) -> [SIMD4<Double>] {
        var discs = regions.map { region -> SIMD4<Double> in
            let a = max(region.radius * Double(size.width) * scale, 1e-3)
            return SIMD4(region.center.x * Double(size.width), region.center.y * Double(size.height), a, max(a * region.aspect, 1e-3))
        }
        while discs.count > maxFaces {
            // The pair whose bounding rectangle is smallest becomes the ellipse through that rectangle's corners.
            var best = (i: 0, j: 1, area: Double.infinity, merged: SIMD4<Double>.zero)
            for i in discs.indices { for j in discs.indices where j > i {
                // The corners of the two ellipses' bounding rectangles, lowest and highest.
                let a = discs[i], b = discs[j]
                let low = SIMD2(min(a.x - a.z, b.x - b.z), min(a.y - a.w, b.y - b.w))
                let high = SIMD2(max(a.x + a.z, b.x + b.z), max(a.y + a.w, b.y + b.w))
                let half = (high - low) / 2
                if half.x * half.y < best.area {
                    best = (i, j, half.x * half.y, SIMD4(low.x + half.x, low.y + half.y, half.x * 2.0.squareRoot(), half.y * 2.0.squareRoot()))
                }
            } }
            discs.remove(at: best.j)
            discs[best.i] = best.merged
        }
        return discs
    }

    /// Outside every ellipse each factor is 1, so the mask is exactly 0 there (in r, g and b).
    func nonzeroRegions(channel: Int, frame: FrameContext, size: Size) -> [PixelRect]? {
        guard channel < 3 else { return nil }
        let discs = Self.discs(regions: frame.regions, size: size, scale: parameters.double("size"))
        return discs.map { disc -> PixelRect in
            let x = pixelsAround(SIMD2(disc.x, disc.y), reach: disc.z, size: size).x
            let y = pixelsAround(SIMD2(disc.x, disc.y), reach: disc.w, size: size).y
            return PixelRect(x: x, y: y)
        }.filter { !$0.isEmpty }
    }

}

/// `face-outline`: a ring at each face mask's outer ellipse over the input. Point-wise.
final class FaceOutlineKernel: ParameterizedKernel {
    let inputCount = 1
    let isPointwise = true
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    var uniforms: [KernelUniform] {
        FaceMaskKernel.discUniforms { $0.parameters?.double("size") ?? 0 } + [
            KernelUniform("$halfWidth", .float, .computed { .float(Float(($0.parameters?.double("width") ?? 0) / 2)) }),
            KernelUniform("$color", .vec4, .parameter("color")),
        ]
    }

    // Guarded statements per slot rather than a loop, as in face-mask. The distance to the ellipse is measured
    // along its x axis (exact for circles).
    let expression = "vec4 $main(vec2 p) {\n    bool ring = false;\n"
        + (0..<FaceMaskKernel.maxFaces).map { i in
            "    if ($faceCount > \(i)) ring = ring || abs(length((p - $faces[\(i)].xy) / $faces[\(i)].zw) - 1.0) * $faces[\(i)].z <= $halfWidth;\n"
        }.joined()
        + "    return ring ? $color : $in0(p);\n}\n"

}
