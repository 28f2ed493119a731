import Foundation
import PrismCore
import PrismGPU

/// Generators and compositing: the pieces of the seed's masked pixellate. The gradient is an ISF file in
/// Shaders/ (it fuses like any point-wise filter); the blends stay here because ISF filters with several
/// image inputs run as passes of their own.
enum CompositingFilters {
    static let definitions: [FilterDefinition] = [
        BundledShaders.definition(
            file: "radial-gradient", name: "radial-gradient",
            summary: "A radial gradient between two colours (like CIRadialGradient).",
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
            name: "blend-mask", summary: "Input where the mask is bright, background where dark (like CIBlendWithMask).",
            maths: """
                m = mask.g (the mask's green, as Core Image); out = mix(background, input, m). The output has the
                background's size; the input and the mask are placed with their top left corners at (x, y) on it,
                at their own sizes, and count as transparent (m = 0) outside themselves.
                """,
            parameters: placementSpecs,
            inputs: ["input", "background", "mask"],
            example: "[in]pixellate(scale=16)[px]; radial-gradient(radius0=60, radius1=90)[m]; [px][in][m]blend-mask",
            make: { values in
                try PlacementLength.validate(values, ["x", "y"])
                return CombineKernel(inputCount: 3, body: "return mix(b, a, c.g);",
                                     blend: ColorBlend(from: 1, to: 0, weight: 2, channel: 1),
                                     frame: 1, placed: [0, 2], parameters: values)
            }),
        FilterDefinition(
            name: "over", summary: "Source-over compositing (like CISourceOverCompositing).",
            maths: """
                Straight alpha: a = as + ab(1 - as); rgb = (rgbs·as + rgbb·ab(1 - as)) / a (0 where a = 0).
                The output has the background's size; the input is placed with its top left corner at (x, y),
                at its own size, and is transparent outside itself.
                """,
            parameters: placementSpecs,
            inputs: ["input", "background"],
            example: "[in]invert[top]; [top][in]over",
            make: { values in
                try PlacementLength.validate(values, ["x", "y"])
                return CombineKernel(inputCount: 2, body: sourceOver("a", over: "b"), frame: 1, placed: [0], parameters: values)
            }),
        FilterDefinition(
            name: "overlay", summary: "Draws its second input over its first, placed and sized (picture-in-picture, logos).",
            maths: """
                FFmpeg's order: [main][top]overlay. The output has the main input's size. Lengths are pixels (16)
                or percentages of the main input's side (75%); x, y are the box's top left corner, a negative one
                counts from the right or bottom edge (x=-16: the box ends 16 pixels from the right). The box is
                width × height (0 for both: the top input's size; one of them 0: that side keeps the top's aspect),
                rounded to whole pixels. fit: contain, the largest aspect-kept rectangle inside the box, centred
                (offset floored); cover, the smallest covering it, centred and clipped to the box; stretch, the box;
                none, the top at its own size at the box's top left, clipped to the box. A main pixel whose centre p
                lies in the placed rectangle reads the top at q = (p - origin)·(top size / placed size), bilinearly
                between the four nearest texel centres (edges clamped) with alpha-weighted colours, so transparent
                texels bleed no colour; its alpha is multiplied by opacity and it is drawn source-over (straight
                alpha, as `over`). Exact (texel for pixel, one fetch) when the placed size is the top's and x, y are
                whole. Bilinear is right for enlarging and mild reductions; to shrink a top by more than half, scale
                it first (`scale` averages the area).
                """,
            parameters: [
                ParameterSpec("x", .text, default: .text("0"), "left edge: pixels (16), percent of the width (75%); negative: from the right"),
                ParameterSpec("y", .text, default: .text("0"), "top edge: pixels, percent of the height; negative: from the bottom"),
                ParameterSpec("width", .text, default: .text("0"), "box width: pixels or percent; 0: from height and the top's aspect, or the top's width"),
                ParameterSpec("height", .text, default: .text("0"), "box height: pixels or percent; 0: from width and the top's aspect, or the top's height"),
                ParameterSpec("opacity", .float(0...1), default: .float(1), "multiplies the top's alpha"),
                ParameterSpec("fit", .choice(["contain", "cover", "stretch", "none"]), default: .choice("contain"),
                              "how the top fills the box: contain (aspect kept, inside), cover (aspect kept, clipped), stretch, none (own size)"),
            ],
            inputs: ["input", "overlay"],
            example: "[in]scale(size=320x180)[s]; [in][s]overlay(x=-16, y=16, width=25%, opacity=0.8)",
            positional: ["x", "y", "width", "height"],
            make: { values in
                try PlacementLength.validate(values, ["x", "y", "width", "height"])
                for side in ["width", "height"] {
                    let length = try PlacementLength(values.word(side), parameter: side)
                    if length.value < 0 {
                        throw InvalidRequest("\(side) must not be negative, not \(ParameterKind.trim(length.value))\(length.percent ? "%" : "")")
                    }
                }
                return OverlayKernel(parameters: values)
            }),
        FilterDefinition(
            name: "image", summary: "A still image from a file (PNG with alpha, JPEG…), at its own size: a logo, a backdrop.",
            maths: """
                A generator: output W×H is the file's own size, pixel (x, y) is the file's pixel, straight alpha as
                stored (PNG keeps its alpha; formats without alpha are opaque). Read once, when the graph is bound.
                Place it with overlay: image(file=logo.png)[logo]; [in][logo]overlay(x=-16, y=16).
                """,
            parameters: [
                ParameterSpec("file", .text, default: .text(""), "the image file"),
            ],
            inputs: [],
            example: "image(file=logo.png)[logo]; [in][logo]overlay(x=-16, y=16, width=10%)",
            positional: ["file"],
            make: { _ in throw InvalidRequest("image reads its file when the graph is bound") },
            expand: { graph, _, values in
                let path = values.word("file")
                guard !path.isEmpty else { throw InvalidRequest("image needs file=PATH") }
                let loaded = try graph.loadImage(path, filter: "image", what: "the image")
                return try graph.add("image", kernel: StillImageKernel(image: loaded), inputs: [], parameters: values)
            }),
        FilterDefinition(
            name: "side-by-side", summary: "Its two inputs next to each other, the first on the left.",
            maths: """
                Output (W0 + W1) × max(H0, H1): input 0 at x = 0, input 1 at x = W0, each centred vertically (offset
                floored); opaque black where neither is (under the shorter one). Exact: pixels are copied.
                """,
            inputs: ["left", "right"],
            example: "[in]invert[b]; [in][b]side-by-side",
            make: { _ in SideBySideKernel() }),
        FilterDefinition(
            name: "grid", summary: "Up to 16 inputs in a grid of cells, left to right, then top to bottom.",
            maths: """
                n inputs, c = min(columns, n) cells per row, r = ceil(n / c) rows; every cell has input 0's size
                W0 × H0 and the output is (c·W0) × (r·H0). Input i fills
                cell (i mod c, floor(i / c)) at its own size, centred in it (offset floored) and clipped to it;
                opaque black where no input is. Exact: pixels are copied (scale inputs first to fill cells).
                """,
            parameters: [
                ParameterSpec("columns", .int(1...16), default: .int(2), "cells per row"),
            ],
            inputs: ["input", "input1", "…", "input15"],
            example: "[in]invert[b]; [in]mono[c]; [in][b][c]grid(columns=2)",
            make: { values in GridKernel(inputCount: GridKernel.most, parameters: values) }),
        FilterDefinition(
            name: "crossfade", summary: "Mixes from its first input to its second over time.",
            maths: """
                t = clamp((time - start) / duration, 0, 1), time in seconds as the graph sees it (since the run's
                first frame); out = mix(in0, in1, t) on each channel, alpha included (straight alpha). Both inputs
                must have the same size. Point-wise: fuses with its neighbours.
                """,
            parameters: transitionSpecs,
            inputs: ["from", "to"],
            example: "[in]invert[b]; [in][b]crossfade(duration=1, start=2)",
            make: { values in TransitionKernel(parameters: values, wipe: false) }),
        FilterDefinition(
            name: "wipe", summary: "Its second input pushes an edge across its first over time.",
            maths: """
                t as crossfade's. The edge moves in `direction`: right, a pixel whose centre x < W·t shows in1;
                left, W - x < W·t; down, y < H·t; up, H - y < H·t; the others show in0. t = 0: all in0, t = 1: all
                in1. A hard edge (no blending). Both inputs must have the same size. Point-wise: fuses.
                """,
            parameters: transitionSpecs + [
                ParameterSpec("direction", .choice(["left", "right", "up", "down"]), default: .choice("right"),
                              "the way the edge moves"),
            ],
            inputs: ["from", "to"],
            example: "[in]invert[b]; [in][b]wipe(direction=left, duration=0.5)",
            make: { values in TransitionKernel(parameters: values, wipe: true) }),
    ]

    /// x and y of `over` and `blend-mask`.
    static let placementSpecs = [
        ParameterSpec("x", .text, default: .text("0"),
                      "the input's left edge on the background: pixels (16), percent of its width (75%); negative: from the right"),
        ParameterSpec("y", .text, default: .text("0"),
                      "the input's top edge: pixels, percent of the background's height; negative: from the bottom"),
    ]

    /// The time ramp of transitions.
    static let transitionSpecs = [
        ParameterSpec("duration", .float(0.001...86400), default: .float(1), "seconds from the first input to the second"),
        ParameterSpec("start", .float(-86400...86400), default: .float(0), "seconds (graph time) at which the transition starts"),
    ]

    /// GLSL: `top` drawn source-over `bottom`, straight alpha (`over`'s maths).
    static func sourceOver(_ top: String, over bottom: String) -> String {
        """
            float alpha = \(top).a + \(bottom).a * (1.0 - \(top).a);
            vec3 rgb = alpha > 0.0 ? (\(top).rgb * \(top).a + \(bottom).rgb * \(bottom).a * (1.0 - \(top).a)) / alpha : vec3(0.0);
            return vec4(rgb, alpha);
        """
    }
}

/// A position or length in graph text: pixels (`16`, `-16`, `12.5`) or a percentage of a side (`75%`).
/// Percentages need the `%` so that `1` is always one pixel, never the whole side.
struct PlacementLength: Equatable {
    let value: Double
    let percent: Bool

    init(_ text: String, parameter: String) throws {
        let body = text.hasSuffix("%") ? String(text.dropLast()) : text
        guard let number = GraphParser.number(from: body), number.isFinite, abs(number) <= 1_000_000 else {
            throw InvalidRequest("\(parameter) takes pixels (16, -16) or a percentage (75%), not '\(text)'")
        }
        value = number
        percent = text.hasSuffix("%")
    }

    /// In pixels, for a side of `side` pixels.
    func pixels(of side: Int) -> Double { percent ? value / 100 * Double(side) : value }

    /// A box edge at this position on a side of `side` pixels for a box `extent` long: negatives count from
    /// the far edge. Whole pixels.
    func position(on side: Int, extent: Double) -> Double {
        let p = pixels(of: side)
        return (value.sign == .minus ? Double(side) - extent + p : p).rounded()
    }

    /// Checks that every parameter in `names` reads as a length (one-line errors naming it).
    static func validate(_ values: ParameterValues, _ names: [String]) throws {
        for name in names { _ = try PlacementLength(values.word(name), parameter: name) }
    }

    /// The value of parameter `name` (validated at make; 0 if a live change slipped through).
    static func of(_ values: ParameterValues?, _ name: String) -> PlacementLength {
        (try? PlacementLength(values?.word(name) ?? "0", parameter: name)) ?? PlacementLength(zero: ())
    }

    private init(zero: Void) { value = 0; percent = false }
}
