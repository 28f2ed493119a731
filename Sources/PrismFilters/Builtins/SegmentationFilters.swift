import Foundation
import PrismCore
import PrismGPU

/// Filters driven by the segmentation side input (`FrameContext.segmentation`, from `--segment-model`):
/// `segment-mask` is the mask as a generator; `background-blur` and `background-replace` expand to an
/// effect, the mask and `blend-mask`, as `face-blur` does with `face-mask`.
enum SegmentationFilters {
    static let feather = ParameterSpec("feather", .float(0...200), default: .float(6),
                                       "soft edge: the mask is blurred by this many frame pixels (a box, twice)")
    static let model = ParameterSpec("model", .text, default: .text(""),
                                     "the segmentation model (SEG.onnx), when \(Setting.segmentModel) names none")

    static let definitions: [FilterDefinition] = [
        FilterDefinition(
            name: "segment-mask", summary: "The segmentation model's foreground mask: white over the person, black elsewhere.",
            maths: """
                The model's mask (0 background … 1 foreground, smoothed over time by the side input) at its own
                resolution, blurred by `feather` frame pixels (scaled to the mask's resolution; a box filter
                applied twice), then upsampled bilinearly to the frame: out = (m, m, m, 1). Before the model's
                first answer (live runs) m = 0 everywhere. The frame size is the graph input's.
                """,
            parameters: [feather, model], inputs: [],
            example: "[in]blur(radius=16)[b]; segment-mask(feather=6)[m]; [in][b][m]blend-mask",
            make: { SegmentMaskKernel(parameters: $0) }),
        FilterDefinition(
            name: "background-blur", summary: "Blurs everything but the person the segmentation model finds.",
            maths: "Expands to [in]blur(radius=R)[bg]; segment-mask(feather=F)[m]; [in][bg][m]blend-mask.",
            parameters: [
                ParameterSpec("radius", .float(0...200), default: .float(16), "blur radius in pixels (σ = radius / 2)"),
                feather, model,
            ],
            example: "background-blur(radius=16)",
            make: { _ in throw InvalidRequest("background-blur stands for several filters and is expanded when the graph is bound") },
            expand: { graph, input, values in
                let background = try graph.addBuiltin("blur", ["radius": values["radius"]], inputs: [input])
                return try blend(graph, "background-blur", input: input, background: background, feather: values["feather"],
                                 model: values["model"])
            }),
        FilterDefinition(
            name: "background-replace",
            summary: "Replaces everything but the person the segmentation model finds with an image or a colour.",
            maths: """
                Expands to [in][bg][m]blend-mask with m = segment-mask(feather=F) and bg the image (scaled to
                cover the frame, centred, the overflow cropped) or, without image=, the colour.
                """,
            parameters: [
                ParameterSpec("image", .text, default: .text(""), "an image file (PNG, JPEG…) for the background; overrides color"),
                ParameterSpec("color", .color, default: .color(SIMD4(0, 0, 0, 1)), "the background colour when no image is given"),
                feather, model,
            ],
            example: "background-replace(color=#2060ff)",
            positional: ["image"],
            make: { _ in throw InvalidRequest("background-replace stands for several filters and is expanded when the graph is bound") },
            expand: { graph, input, values in
                let path = values.word("image")
                let image = try path.isEmpty ? nil : graph.loadImage(path, filter: "background-replace", what: "the background image")
                let backdrop = BackdropKernel(color: values.color("color"), image: image)
                let background = try graph.add("background", kernel: backdrop, inputs: [], parameters: nil)
                return try blend(graph, "background-replace", input: input, background: background, feather: values["feather"],
                                 model: values["model"])
            }),
    ]

    /// input where the mask is white, `background` where it is black.
    private static func blend(_ graph: FilterGraph, _ shorthand: String, input: FilterGraph.Stream, background: FilterGraph.NodeID,
                              feather: ParameterValue?, model: ParameterValue?) throws -> FilterGraph.NodeID {
        let mask = try graph.addBuiltin("segment-mask", ["feather": feather, "model": model], inputs: [])
        (graph.nodes[mask.index].kernel as? SegmentMaskKernel)?.shorthand = shorthand
        return try graph.addBuiltin("blend-mask", [:], inputs: [input, .node(background), .node(mask)])
    }
}

extension FilterGraph {
    /// Adds built-in `name` made from `given` (nil: the default): what the shorthands expand to.
    func addBuiltin(_ name: String, _ given: [String: ParameterValue?], inputs: [Stream]) throws -> NodeID {
        guard let definition = BuiltinFilters.named(name) else { preconditionFailure("shorthands need the \(name) built-in") }
        let (kernel, values) = try definition.instantiate(given.compactMapValues { $0 })
        return try add(name, kernel: kernel, inputs: inputs, parameters: values)
    }

    /// The image at `path`, read by the graph's loader when the graph is bound (`filter` and `what` name it in
    /// errors), with the checks the loader does not make itself: a missing file is one line.
    func loadImage(_ path: String, filter: String, what: String) throws -> (size: Size, rgba: [UInt8]) {
        guard let loader = imageLoader else {
            throw InvalidRequest("\(filter): this graph was bound without an image reader for \(path)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw InvalidRequest("\(path): no such image file")
        }
        let image: (size: Size, rgba: [UInt8])
        do { image = try loader(path) } catch { throw InvalidRequest("cannot load \(what) \(path): \(error)") }
        guard image.size.pixelCount > 0, image.rgba.count == image.size.pixelCount * 4 else {
            throw InvalidRequest("\(path): not an image with pixels")
        }
        return image
    }
}

/// `segment-mask`: the frame's segmentation mask, feathered on the CPU at the mask's resolution (a few
/// thousand pixels) and upsampled by the GPU's bilinear filtering. Point-wise, so it fuses into the blend.
final class SegmentMaskKernel: ParameterizedKernel {
    let inputCount = 0
    let isPointwise = true
    var parameters: ParameterValues
    /// The mask as uploaded (R8, linear), made on the GPU thread for the first mask; one per kernel.
    private var texture: Texture?
    /// What `texture` holds: the mask's generation, the feather and frame width it was blurred for.
    private var uploaded: (generation: Int, feather: Double, width: Int)?
    /// Renderers using the kernel (`prepare` / `releaseGPUResources`).
    private var users = 0
    /// The filter the user wrote when this mask is part of one (`background-blur`), for errors.
    var shorthand: String?

    init(parameters: ParameterValues) { self.parameters = parameters }

    var uniforms: [KernelUniform] {
        [
            KernelUniform("$size", .vec2, .outputSize),
            KernelUniform("$hasMask", .int, .computed { .int($0.frame.segmentation == nil ? 0 : 1) }),
        ]
    }

    /// Declared here, bound by `setUniforms`: only it sees the frame whose mask the texture must hold, and
    /// the renderer binds declared textures before calling it.
    var textures: [KernelTexture] { [KernelTexture("$segMask", .sampler2D) { nil }] }

    let expression = """
        vec4 $main(vec2 p) {
            float m = $hasMask != 0 ? texture($segMask, p / $size).r : 0.0;
            return vec4(m, m, m, 1.0);
        }

        """

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size { sourceSize }

    func prepare() throws {
        try KernelContextError.check(texture?.thread, filter: "segment-mask")
        users += 1
    }

    func releaseGPUResources() {
        users -= 1
        if users <= 0 {
            texture = nil
            uploaded = nil
        }
    }

    func setUniforms(_ uniforms: KernelUniforms, frame: FrameContext) {
        guard let mask = frame.segmentation else { return }
        let feather = parameters.double("feather"), width = uniforms.outputSize.width
        if uploaded?.generation != mask.generation || uploaded?.feather != feather || uploaded?.width != width {
            upload(mask, radius: feather * Double(mask.size.width) / Double(max(width, 1)))
            uploaded = (mask.generation, feather, width)
        }
        if let texture { uniforms.bind("$segMask", texture) }
    }

    private func upload(_ mask: SegmentationMask, radius: Double) {
        if texture?.size != mask.size {
            // Only when the model's output size changes: every later mask refills the same texture.
            texture = try? Texture(size: mask.size, format: .r8)
        }
        guard let texture else { return }
        let bytes = mask.feathered(radius: radius).map { UInt8((min(max($0, 0), 1) * 255).rounded()) }
        bytes.withUnsafeBytes { texture.upload($0.baseAddress!, rowBytes: mask.size.width) }
    }
}

/// `background-replace`'s background: a colour, or an image scaled to cover the frame (centred, cropped).
/// A generator with no parameters of its own; the image is read when the graph is bound.
final class BackdropKernel: FilterKernel {
    let inputCount = 0
    let isPointwise = true
    let color: SIMD4<Double>
    let image: (size: Size, rgba: [UInt8])?
    private let still: StillTexture

    init(color: SIMD4<Double>, image: (size: Size, rgba: [UInt8])?) {
        self.color = color
        self.image = image
        still = StillTexture(image, filter: "background-replace")
    }

    var uniforms: [KernelUniform] {
        let imageSize = image?.size ?? Size(width: 1, height: 1)
        return [
            KernelUniform("$color", .vec4, .constant(.vec4(Float(color.x), Float(color.y), Float(color.z), Float(color.w)))),
            KernelUniform("$size", .vec2, .outputSize),
            KernelUniform("$imageSize", .vec2, .constant(.vec2(Float(imageSize.width), Float(imageSize.height)))),
        ]
    }

    var textures: [KernelTexture] { image == nil ? [] : [KernelTexture("$image", .sampler2D) { [still] in still.texture }] }

    var expression: String {
        guard image != nil else { return "vec4 $main(vec2 p) { return $color; }\n" }
        // Cover: the image scaled by the larger of the two ratios, centred; rows from the top (as uploaded).
        return """
            vec4 $main(vec2 p) {
                float s = max($size.x / $imageSize.x, $size.y / $imageSize.y);
                vec2 q = (p - 0.5 * $size) / s + 0.5 * $imageSize;
                return vec4(texture($image, q / $imageSize).rgb, 1.0);
            }

            """
    }

    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size { sourceSize }

    func prepare() throws { try still.prepare() }
    func releaseGPUResources() { still.release() }
}

extension FilterGraph {
    /// The model a mask node names (`background-blur(model=SEG.onnx)`), used when no `--segment-model` is given.
    public var segmentationModel: String? {
        nodes.lazy.compactMap { ($0.kernel as? SegmentMaskKernel)?.parameters.word("model") }.first { !$0.isEmpty }
    }
}
