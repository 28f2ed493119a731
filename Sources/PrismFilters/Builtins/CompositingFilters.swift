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
                guard let loader = graph.imageLoader else {
                    throw InvalidRequest("image: this graph was bound without an image reader for \(path)")
                }
                try RegularFileCheck.check(path)
                let loaded: (size: Size, rgba: [UInt8])
                do { loaded = try loader(path) } catch { throw InvalidRequest("cannot load the image \(path): \(error)") }
                guard loaded.size.pixelCount > 0, loaded.rgba.count == loaded.size.pixelCount * 4 else {
                    throw InvalidRequest("\(path): not an image with pixels")
                }
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

/// A kernel over several inputs read at the same pixel: `a`, `b`, `c`… are inputs 0, 1, 2…. The output has
/// input `frame`'s size; the inputs in `placed` sit with their top left corner at the `x`, `y` parameters
/// (`PlacementLength`, negatives from the far edge) and read as transparent black outside themselves.
/// With x = y = 0 it is point-wise (it fuses anywhere, and `blend-mask` keeps its `ColorBlend` for the
/// Y'CbCr route and masked outputs); placed elsewhere, it reads its inputs shifted (a remap, still fused).
final class CombineKernel: ParameterizedKernel {
    let inputCount: Int
    let cost = 0
    let body: String
    private let blend: ColorBlend?
    /// The input whose size the output takes.
    let frame: Int
    /// The inputs placed at (x, y) on the frame input.
    let placed: Set<Int>
    var parameters: ParameterValues

    /// `parameters` defaults to none (no placement); `ParameterValues(specs: [])` gives nothing to validate,
    /// so it cannot throw.
    init(inputCount: Int, body: String, blend: ColorBlend? = nil, frame: Int = 0, placed: Set<Int> = [],
         parameters: ParameterValues = try! ParameterValues(specs: [])) {
        self.inputCount = inputCount
        self.body = body
        self.blend = blend
        self.frame = frame
        self.placed = placed
        self.parameters = parameters
    }

    /// Whether the placed inputs sit anywhere but the top left corner.
    private var isShifted: Bool {
        guard !placed.isEmpty else { return false }
        return ["x", "y"].contains { name in
            let length = PlacementLength.of(parameters, name)
            return length.value != 0 || length.value.sign == .minus
        }
    }

    var isPointwise: Bool { !isShifted }
    /// What `body` is, as data, when it is a mix by a mask (see `ColorBlend`); nil once shifted (the mask no
    /// longer weighs the background's own pixel).
    var colorBlend: ColorBlend? { isShifted ? nil : blend }
    var compileKey: String { isShifted ? "shifted" : "" }

    /// The offset of placed input `index` on a frame of `frame` pixels.
    static func offset(_ values: ParameterValues?, frame: Size, input: Size) -> SIMD2<Double> {
        SIMD2(PlacementLength.of(values, "x").position(on: frame.width, extent: Double(input.width)),
              PlacementLength.of(values, "y").position(on: frame.height, extent: Double(input.height)))
    }

    var uniforms: [KernelUniform] {
        placed.sorted().flatMap { [frame] index in
            [KernelUniform("$offset\(index)", .vec2, .computed {
                .vec2(Self.offset($0.parameters, frame: $0.inputSizes[frame], input: $0.inputSizes[index]))
            }), KernelUniform("$size\(index)", .vec2, .inputSize(index))]
        }
    }

    var expression: String {
        let names = ["a", "b", "c", "d"]
        let reads = (0..<inputCount).map { index in
            guard placed.contains(index) else { return "    vec4 \(names[index]) = $in\(index)(p);" }
            // Outside its rectangle a placed input is transparent black; inside, it is read at its own pixel.
            return """
                    vec2 q\(index) = p - $offset\(index);
                    vec4 \(names[index]) = all(greaterThanEqual(q\(index), vec2(0.0))) && all(lessThan(q\(index), $size\(index)))
                        ? $in\(index)(q\(index)) : vec4(0.0);
                """
        }.joined(separator: "\n")
        return "vec4 $main(vec2 p) {\n" + reads + "\n" + body + "\n}\n"
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        guard !inputSizes.isEmpty else { return sourceSize }
        let size = inputSizes[frame]
        for (index, other) in inputSizes.enumerated() where other != size && !placed.contains(index) {
            throw InvalidRequest("inputs differ in size (\(size) and \(other)); scale or crop them to match first")
        }
        return size
    }
}

/// `overlay`: the top input (1) resampled into a placed rectangle and drawn over the main input (0), which
/// is read at the pixel itself (fused); the top is a texture (see the definition's maths).
final class OverlayKernel: ParameterizedKernel {
    let inputCount = 2
    let textureInputs: Set<Int> = [1]
    let isPointwise = true
    let cost = 4
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    /// Where the top lands on the main input, in main pixels: the visible rectangle [low, high), the placed
    /// rectangle's top left corner, and top texels per main pixel.
    struct Layout: Equatable {
        var low: SIMD2<Double>
        var high: SIMD2<Double>
        var origin: SIMD2<Double>
        var ratio: SIMD2<Double>
    }

    static func layout(_ values: ParameterValues?, main: Size, top: Size) -> Layout {
        let topSize = SIMD2(Double(top.width), Double(top.height))
        var box = SIMD2(PlacementLength.of(values, "width").pixels(of: main.width),
                        PlacementLength.of(values, "height").pixels(of: main.height))
        switch (box.x > 0, box.y > 0) {
        case (false, false): box = topSize
        case (true, false): box.y = box.x * topSize.y / topSize.x
        case (false, true): box.x = box.y * topSize.x / topSize.y
        case (true, true): break
        }
        box = SIMD2(max(1, box.x.rounded()), max(1, box.y.rounded()))
        let corner = SIMD2(PlacementLength.of(values, "x").position(on: main.width, extent: box.x),
                           PlacementLength.of(values, "y").position(on: main.height, extent: box.y))
        var content = box, offset = SIMD2<Double>.zero
        switch values?.word("fit") ?? "contain" {
        case "stretch": break
        case "none": content = topSize
        case let fit:
            let scales = box / topSize
            let s = fit == "cover" ? max(scales.x, scales.y) : min(scales.x, scales.y)
            content = SIMD2(max(1, (topSize.x * s).rounded()), max(1, (topSize.y * s).rounded()))
            offset = ((box - content) / 2).rounded(.down)
        }
        let origin = corner + offset
        return Layout(low: pointwiseMax(corner, origin), high: pointwiseMin(corner + box, origin + content),
                      origin: origin, ratio: topSize / content)
    }

    var uniforms: [KernelUniform] {
        func layout(_ inputs: UniformInputs) -> Layout {
            Self.layout(inputs.parameters, main: inputs.inputSizes[0], top: inputs.inputSizes[1])
        }
        return [
            KernelUniform("$low", .vec2, .computed { .vec2(layout($0).low) }),
            KernelUniform("$high", .vec2, .computed { .vec2(layout($0).high) }),
            KernelUniform("$origin", .vec2, .computed { .vec2(layout($0).origin) }),
            KernelUniform("$ratio", .vec2, .computed { .vec2(layout($0).ratio) }),
            KernelUniform("$opacity", .float, .parameter("opacity")),
        ]
    }

    let library = """
        // The top at q (its pixels): bilinear between the four nearest texel centres, edges clamped, with
        // colours weighted by alpha (a transparent texel's colour counts for nothing); straight alpha out.
        vec4 $top(vec2 q) {
            vec2 f = q - 0.5;
            vec2 base = floor(f);
            vec2 w = f - base;
            ivec2 last = ivec2($src1Size) - 1;
            // On a texel centre (the top at its own size, whole offsets): that texel, one fetch.
            if (w == vec2(0.0)) return texelFetch($src1, clamp(ivec2(base), ivec2(0), last), 0);
            ivec2 i0 = clamp(ivec2(base), ivec2(0), last), i1 = clamp(ivec2(base) + 1, ivec2(0), last);
            vec4 t00 = texelFetch($src1, i0, 0), t10 = texelFetch($src1, ivec2(i1.x, i0.y), 0);
            vec4 t01 = texelFetch($src1, ivec2(i0.x, i1.y), 0), t11 = texelFetch($src1, i1, 0);
            vec4 sum = vec4(t00.rgb * t00.a, t00.a) * (1.0 - w.x) * (1.0 - w.y) + vec4(t10.rgb * t10.a, t10.a) * w.x * (1.0 - w.y)
                + vec4(t01.rgb * t01.a, t01.a) * (1.0 - w.x) * w.y + vec4(t11.rgb * t11.a, t11.a) * w.x * w.y;
            return sum.a > 0.0 ? vec4(sum.rgb / sum.a, sum.a) : vec4(0.0);
        }

        """

    var expression: String {
        """
        vec4 $main(vec2 p) {
            vec4 b = $in0(p);
            if (any(lessThan(p, $low)) || any(greaterThanEqual(p, $high))) return b;
            vec4 a = $top((p - $origin) * $ratio);
            a.a *= $opacity;
        \(CompositingFilters.sourceOver("a", over: "b"))
        }

        """
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size { inputSizes[0] }
}

/// `side-by-side`: two inputs next to each other (an exact remap of each, fused).
final class SideBySideKernel: FilterKernel {
    let inputCount = 2
    let cost = 0

    static func offsets(_ sizes: [Size]) -> (SIMD2<Double>, SIMD2<Double>) {
        let height = max(sizes[0].height, sizes[1].height)
        return (SIMD2(0, Double((height - sizes[0].height) / 2)),
                SIMD2(Double(sizes[0].width), Double((height - sizes[1].height) / 2)))
    }

    var uniforms: [KernelUniform] {
        [
            KernelUniform("$offset0", .vec2, .computed { .vec2(Self.offsets($0.inputSizes).0) }),
            KernelUniform("$offset1", .vec2, .computed { .vec2(Self.offsets($0.inputSizes).1) }),
            KernelUniform("$size0", .vec2, .inputSize(0)),
            KernelUniform("$size1", .vec2, .inputSize(1)),
        ]
    }

    let expression = """
        vec4 $main(vec2 p) {
            vec2 q = p - $offset0;
            if (all(greaterThanEqual(q, vec2(0.0))) && all(lessThan(q, $size0))) return $in0(q);
            q = p - $offset1;
            if (all(greaterThanEqual(q, vec2(0.0))) && all(lessThan(q, $size1))) return $in1(q);
            return vec4(0.0, 0.0, 0.0, 1.0);
        }

        """

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        Size(width: inputSizes[0].width + inputSizes[1].width, height: max(inputSizes[0].height, inputSizes[1].height))
    }
}

/// `crossfade` and `wipe`: two same-sized inputs mixed by a time ramp (point-wise, fused).
final class TransitionKernel: ParameterizedKernel {
    let inputCount = 2
    let isPointwise = true
    let cost = 0
    var parameters: ParameterValues
    let wipe: Bool

    init(parameters: ParameterValues, wipe: Bool) {
        self.parameters = parameters
        self.wipe = wipe
    }

    /// The ramp at `time`: 0 before `start`, 1 from `start + duration`.
    static func progress(_ values: ParameterValues?, time: Double) -> Double {
        let duration = max(values?.double("duration") ?? 1, 0.001)
        return min(max((time - (values?.double("start") ?? 0)) / duration, 0), 1)
    }

    var uniforms: [KernelUniform] {
        guard wipe else {
            return [KernelUniform("$t", .float, .computed { .float(Float(Self.progress($0.parameters, time: $0.frame.time))) })]
        }
        // c = dot(p, axis) + shift runs 0...L along the edge's motion; in1 where c < L·t.
        func axis(_ inputs: UniformInputs) -> (axis: SIMD2<Double>, shift: Double, length: Double) {
            let size = inputs.inputSizes[0], w = Double(size.width), h = Double(size.height)
            switch inputs.parameters?.word("direction") {
            case "left": return (SIMD2(-1, 0), w, w)
            case "up": return (SIMD2(0, -1), h, h)
            case "down": return (SIMD2(0, 1), 0, h)
            default: return (SIMD2(1, 0), 0, w)
            }
        }
        return [
            KernelUniform("$axis", .vec2, .computed { .vec2(axis($0).axis) }),
            KernelUniform("$shift", .float, .computed { .float(Float(axis($0).shift)) }),
            KernelUniform("$reach", .float, .computed {
                .float(Float(axis($0).length * Self.progress($0.parameters, time: $0.frame.time)))
            }),
        ]
    }

    var expression: String {
        wipe ? "vec4 $main(vec2 p) {\n    return dot(p, $axis) + $shift < $reach ? $in1(p) : $in0(p);\n}\n"
            : "vec4 $main(vec2 p) {\n    return mix($in0(p), $in1(p), $t);\n}\n"
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        if inputSizes[0] != inputSizes[1] {
            throw InvalidRequest("inputs differ in size (\(inputSizes[0]) and \(inputSizes[1])); scale or crop them to match first")
        }
        return inputSizes[0]
    }
}

/// `grid`: inputs copied into cells of input 0's size (see the definition's maths); an exact remap of each,
/// fused. The definition makes one for the most inputs; the binder connects the number the graph gives.
final class GridKernel: ParameterizedKernel {
    static let most = 16
    let inputCount: Int
    let cost = 0
    var parameters: ParameterValues

    init(inputCount: Int, parameters: ParameterValues) {
        self.inputCount = inputCount
        self.parameters = parameters
    }

    /// This grid with `count` inputs (1 up to `most`).
    func connecting(_ count: Int) -> GridKernel? {
        (1...Self.most).contains(count) ? GridKernel(inputCount: count, parameters: parameters) : nil
    }

    /// Cells per row and rows, for `count` inputs.
    static func shape(_ values: ParameterValues?, count: Int) -> (columns: Int, rows: Int) {
        let columns = max(1, min(values?.int("columns") ?? 2, count))
        return (columns, (count + columns - 1) / columns)
    }

    /// Input `index`'s cell (top left, output pixels) and where its top left corner lands.
    static func placement(_ values: ParameterValues?, sizes: [Size], index: Int) -> (cell: SIMD2<Double>, offset: SIMD2<Double>) {
        let columns = shape(values, count: sizes.count).columns
        let cellSize = SIMD2(Double(sizes[0].width), Double(sizes[0].height))
        let cell = SIMD2(Double(index % columns), Double(index / columns)) * cellSize
        let own = SIMD2(Double(sizes[index].width), Double(sizes[index].height))
        return (cell, cell + ((cellSize - own) / 2).rounded(.down))
    }

    var uniforms: [KernelUniform] {
        [KernelUniform("$cellSize", .vec2, .inputSize(0))] + (0..<inputCount).flatMap { index in
            [
                KernelUniform("$cell\(index)", .vec2, .computed { .vec2(Self.placement($0.parameters, sizes: $0.inputSizes, index: index).cell) }),
                KernelUniform("$offset\(index)", .vec2, .computed { .vec2(Self.placement($0.parameters, sizes: $0.inputSizes, index: index).offset) }),
                KernelUniform("$size\(index)", .vec2, .inputSize(index)),
            ]
        }
    }

    var expression: String {
        let cells = (0..<inputCount).map { i in
            """
                if (all(greaterThanEqual(p, $cell\(i))) && all(lessThan(p, $cell\(i) + $cellSize))) {
                    vec2 q = p - $offset\(i);
                    return all(greaterThanEqual(q, vec2(0.0))) && all(lessThan(q, $size\(i))) ? $in\(i)(q) : vec4(0.0, 0.0, 0.0, 1.0);
                }
            """
        }.joined(separator: "\n")
        return "vec4 $main(vec2 p) {\n" + cells + "\n    return vec4(0.0, 0.0, 0.0, 1.0);\n}\n"
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        let (columns, rows) = Self.shape(parameters, count: inputSizes.count)
        return Size(width: columns * inputSizes[0].width, height: rows * inputSizes[0].height)
    }
}

/// `image`: a still read when the graph is bound, copied texel for pixel (a generator of the image's size).
final class StillImageKernel: FilterKernel {
    let inputCount = 0
    let isPointwise = true
    let image: (size: Size, rgba: [UInt8])
    private let still: StillTexture

    init(image: (size: Size, rgba: [UInt8])) {
        self.image = image
        still = StillTexture(image, filter: "image")
    }

    var textures: [KernelTexture] { [KernelTexture("$image", .sampler2D) { [still] in still.texture }] }

    // Rows from the top, as uploaded; p is a pixel centre of the image itself.
    let expression = "vec4 $main(vec2 p) {\n    return texelFetch($image, ivec2(p), 0);\n}\n"

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size { image.size }

    func prepare() throws { try still.prepare() }
    func releaseGPUResources() { still.release() }
}

/// A still image's texture (`image`, `background-replace`'s picture): uploaded on the GPU thread when the
/// first pass that reads it is prepared, let go when the last one is released; one owner for both kernels.
final class StillTexture {
    let image: (size: Size, rgba: [UInt8])?
    let filter: String
    private(set) var texture: Texture?
    private var users = 0

    init(_ image: (size: Size, rgba: [UInt8])?, filter: String) {
        self.image = image
        self.filter = filter
    }

    func prepare() throws {
        try KernelContextError.check(texture?.thread, filter: filter)
        if let image, texture == nil {
            let made = try Texture(size: image.size, format: .rgba8)
            image.rgba.withUnsafeBytes { made.upload($0.baseAddress!, rowBytes: image.size.width * 4) }
            texture = made
        }
        users += 1
    }

    func release() {
        users -= 1
        if users <= 0 { texture = nil }
    }
}
