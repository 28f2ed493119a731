import Foundation
import PrismCore
import PrismGPU

/// How a model's input is made from the frame and its output turned back into colour: the model sees
/// (rgb · scale − mean) / std, in RGB or BGR order; the output o becomes (o · std + mean) / scale.
package struct NetworkNormalisation: Sendable, Equatable {
    package var scale: Float = 1
    package var mean: SIMD3<Float> = .zero
    package var std: SIMD3<Float> = .one
    package var bgr = false

    /// Values from the model's `metadata_props` keys `prefix`scale, mean, std and order (a missing key keeps
    /// the default: RGB in 0–1), then those given as parameters (text: one number or three, comma-separated).
    static func make(metadata: [String: String], prefix: String, given: (String) -> String) throws -> NetworkNormalisation {
        var n = NetworkNormalisation()
        func value(_ key: String) -> String? {
            let parameter = given(prefix.isEmpty ? key : "output-" + key)
            if !parameter.isEmpty { return parameter }
            return metadata[prefix + key]
        }
        func numbers(_ key: String) throws -> [Float]? {
            guard let text = value(key) else { return nil }
            let parts = text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "[" || $0 == "]" }).map { Float($0) }
            guard !parts.isEmpty, parts.count == 1 || parts.count == 3, parts.allSatisfy({ $0 != nil && $0!.isFinite }) else {
                throw InvalidRequest("model \(prefix.isEmpty ? "" : "output-")\(key) takes one number or three (r,g,b), not '\(text)'")
            }
            return parts.map { $0! }
        }
        if let s = try numbers("scale") {
            guard s.count == 1, s[0] != 0 else { throw InvalidRequest("model \(prefix.isEmpty ? "" : "output-")scale takes one non-zero number") }
            n.scale = s[0]
        }
        if let m = try numbers("mean") { n.mean = m.count == 1 ? SIMD3(repeating: m[0]) : SIMD3(m[0], m[1], m[2]) }
        if let s = try numbers("std") {
            guard !s.contains(0) else { throw InvalidRequest("model \(prefix.isEmpty ? "" : "output-")std cannot be 0") }
            n.std = s.count == 1 ? SIMD3(repeating: s[0]) : SIMD3(s[0], s[1], s[2])
        }
        if let order = value("order")?.lowercased() {
            guard order == "rgb" || order == "bgr" else { throw InvalidRequest("model order is rgb or bgr, not '\(order)'") }
            n.bgr = order == "bgr"
        }
        return n
    }
}

/// An ONNX image network as one graph node: the layers of its `NetworkProgram` are prepasses (one feature
/// atlas each, RGBA16F or RGBA32F), the expression reads the chosen output back into colour. The program is
/// lowered for each input size the node sees (the shape arithmetic folds to that size). Weights are one
/// RGBA32F texture, uploaded on the GPU thread and kept while any renderer uses the kernel.
package final class NetworkKernel: ParameterizedKernel {
    /// Which graph outputs the passes compute: the one shown (`output=`, default the first image of the
    /// input's size), or every output that lowers (read back with `readOutputs`: a detector's heads).
    package enum Outputs: Sendable { case shown, all }

    package let path: String
    package let graph: NetworkGraph
    package var parameters: ParameterValues
    package let inputCount = 1
    package let image: NetworkLowering.ImageInput
    /// The graph output shown, and those computed.
    package let shownOutput: String
    package let computedOutputs: [String]
    /// The values given to the model's other inputs (`inputs=`).
    let extraInputs: [String: NetworkConstant]
    /// The program for the last input size planned (at first: the model's declared size, or 256×256).
    package private(set) var program: NetworkProgram
    private var passes: NetworkPasses?
    private var cachedPrepasses: [KernelPrepass] = []
    private var cachedExpression = "vec4 $main(vec2 p) { return vec4(0.0); }\n"
    private var weightTexture: Texture?
    /// The weights `weightTexture` holds (a program lowered for another size may pack other constants).
    private var uploadedWeights: [SIMD4<Float>] = []
    private var gpuUsers = 0
    /// The last calibration run (`precision=half`: which features may be RGBA16F; `NetworkPrecision.swift`).
    package internal(set) var calibration: NetworkCalibration?

    /// The same network with `precision=float`, sharing the loaded graph (the calibration run).
    init(floatCopyOf other: NetworkKernel) throws {
        path = other.path
        parameters = other.parameters
        try parameters.set("precision", .choice("float"))
        graph = other.graph
        image = other.image
        shownOutput = other.shownOutput
        computedOutputs = other.computedOutputs
        extraInputs = other.extraInputs
        program = other.program
    }

    package init(path: String, parameters: ParameterValues, outputs: Outputs = .shown) throws {
        self.path = path
        self.parameters = parameters
        graph = try NetworkGraph.load(path: path)
        image = try NetworkLowering.imageInput(graph)
        extraInputs = try Self.extraInputs(parameters.word("inputs"), image: image, path: path)
        let reference = try Self.modelSize(parameters.word("size"), image: image, path: path) ?? image.declared ?? Size(width: 256, height: 256)
        // Every output lowered once to find what each is; then only those wanted.
        let survey: NetworkProgram
        do { survey = try NetworkLowering.lower(graph, input: reference, extraInputs: extraInputs) } catch let e as NetworkShapeError {
            throw NetworkError(file: path, node: e.node, e.reason)
        }
        let wanted = parameters.word("output")
        let chosen: NetworkOutput
        if wanted.isEmpty {
            let sizes = (try? survey.sizes(input: reference)) ?? []
            chosen = survey.outputs.first { survey.features[$0.feature].channels <= 4 && sizes.indices.contains($0.feature) && sizes[$0.feature] == reference }
                ?? survey.outputs[0]
        } else if let found = survey.outputs.first(where: { $0.name == wanted }) {
            chosen = found
        } else if let index = Int(wanted) {
            guard graph.outputs.indices.contains(index) else {
                throw InvalidRequest("\(path): output=\(index): the model has \(graph.outputs.count) outputs (0…\(graph.outputs.count - 1))")
            }
            let name = graph.outputs[index].name
            guard let found = survey.outputs.first(where: { $0.name == name }) else {
                throw NetworkError(file: path, "output \(index) '\(name)': " + (survey.refusedOutputs[name] ?? "not computed"))
            }
            chosen = found
        } else {
            guard let found = survey.outputs.first(where: { $0.name == wanted }) else {
                throw InvalidRequest("\(path): output='\(wanted)': " + (survey.refusedOutputs[wanted]
                                 ?? "no such output (outputs: \(graph.outputs.map(\.name).joined(separator: ", ")))"))
            }
            chosen = found
        }
        shownOutput = chosen.name
        computedOutputs = outputs == .all ? [chosen.name] + survey.outputs.map(\.name).filter { $0 != chosen.name } : [chosen.name]
        program = try NetworkLowering.lower(graph, input: reference, outputs: computedOutputs, extraInputs: extraInputs)
        _ = try shownChannels()
        _ = try normalisation(output: false)
        _ = try normalisation(output: true)
    }

    /// `size=`: declared (nil: the file's size, or the frame's where it has none), frame, or WxH.
    static func modelSize(_ text: String, image: NetworkLowering.ImageInput, path: String) throws -> Size? {
        switch text {
        case "", "declared": return nil
        case "frame": return nil
        default:
            let parts = text.lowercased().split(separator: "x").map { Int($0) }
            guard parts.count == 2, let w = parts[0], let h = parts[1], (1...16384).contains(w), (1...16384).contains(h) else {
                throw InvalidRequest("model size is declared, frame or WxH (1…16384 each), not '\(text)'")
            }
            return Size(width: w, height: h)
        }
    }

    /// `inputs='name=1.5;other=1,2,3'`: the values of the model's inputs other than the image.
    static func extraInputs(_ text: String, image: NetworkLowering.ImageInput, path: String) throws -> [String: NetworkConstant] {
        var given: [String: [Float]] = [:]
        for item in text.split(separator: ";") where !item.trimmingCharacters(in: .whitespaces).isEmpty {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let numbers = pair.count == 2 ? pair[1].split(separator: ",").map { Float($0.trimmingCharacters(in: .whitespaces)) } : []
            guard pair.count == 2, !numbers.isEmpty, numbers.allSatisfy({ $0?.isFinite == true }) else {
                throw InvalidRequest("model inputs= takes NAME=NUMBER[,NUMBER…] separated by ';', not '\(item)'")
            }
            guard image.extra.contains(where: { $0.name == pair[0] }) else {
                throw InvalidRequest("\(path): the model has no input '\(pair[0])' besides its image"
                                 + (image.extra.isEmpty ? "" : " (it has: \(image.extra.map(\.name).joined(separator: ", ")))"))
            }
            given[pair[0]] = numbers.map { $0! }
        }
        var values: [String: NetworkConstant] = [:]
        for extra in image.extra {
            guard let numbers = given[extra.name] else {
                throw InvalidRequest("\(path): the model's input '\(extra.name)' \(extra.dims.map { "\($0)" } ?? "") needs a value: "
                                 + "model(file=…, inputs='\(extra.name)=VALUE')")
            }
            let dims = (extra.dims ?? [numbers.count]).map { max($0, 1) }
            guard dims.reduce(1, *) == numbers.count || numbers.count == 1 else {
                throw InvalidRequest("\(path): input '\(extra.name)' takes \(dims.reduce(1, *)) values, not \(numbers.count)")
            }
            values[extra.name] = NetworkConstant(dims: dims, values: numbers.count == 1 ? [Float](repeating: numbers[0], count: dims.reduce(1, *)) : numbers)
        }
        return values
    }

    package var float32: Bool { parameters.word("precision") == "float" }

    func normalisation(output: Bool) throws -> NetworkNormalisation {
        try NetworkNormalisation.make(metadata: graph.metadata, prefix: output ? "output_" : "") { [parameters] in parameters.word($0) }
    }

    /// The channels of the shown output that become the picture (`channels=`; default all of 1–4, the first
    /// three of more).
    func shownChannels() throws -> [Int]? {
        let text = parameters.word("channels")
        guard !text.isEmpty else { return nil }
        let picks = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        let available = program.features[program.outputFeature].channels
        guard (1...4).contains(picks.count), picks.allSatisfy({ $0 != nil && (0..<available).contains($0!) }) else {
            throw InvalidRequest("\(path): channels= takes 1 to 4 channel numbers in 0…\(available - 1), not '\(text)'")
        }
        return picks.map { $0! }
    }

    /// The plan for the last compiled size (nil before the first).
    package var currentPasses: NetworkPasses? { passes }

    // MARK: FilterKernel

    package var textureInputs: Set<Int> { [0] }
    package var expressionReadsInputs: Bool { false }
    package var cost: Int { 8 }
    package var compileKey: String { "network:" + (float32 ? "float" : "half") }
    package var library: String { NetworkPasses.library }

    package func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size {
        let frame = inputSizes.first ?? sourceSize
        let maxSide = GPUThread.current != nil ? GPULimits.query().maxTargetSide : 16384
        let passes = try plan(frame: frame, maxSide: maxSide)
        let input = passes.input, out = passes.sizes[program.outputFeature]
        // An integer multiple of the input comes out at that multiple of the frame; any other size (a detector's
        // quarter-resolution heads) at the frame's size, or at its own with output-size=own.
        let scale = out.width % input.width == 0 && out.height % input.height == 0 && out.width / input.width == out.height / input.height
            ? out.width / input.width : 0
        let output: Size
        if parameters.word("output-size") == "own" {
            output = out
        } else if scale > 0 {
            output = Size(width: frame.width * scale, height: frame.height * scale)
        } else {
            output = frame
        }
        guard output.width <= maxSide, output.height <= maxSide else {
            throw NetworkError(file: path, "its output of \(output) for a \(frame) frame exceeds this GPU's \(maxSide)x\(maxSide) textures")
        }
        self.passes = passes
        let formats = try featureFormats(input: passes.input)
        let outputs = Set(program.outputs.map(\.feature))
        cachedPrepasses = program.layers.indices.map { index in
            let layer = program.layers[index]
            let atlas = passes.layouts[layer.output].atlas
            var prepass = KernelPrepass(main: passes.main(layer: index), format: formats[layer.output], size: { _ in atlas })
            prepass.label = "\(layer.node) (\(layer.fused.joined(separator: "+")))"
            // Only the outputs are read after the frame (the expression, `readOutputs`): every other feature's
            // texture is drawn again once its last reader has run.
            prepass.transient = !outputs.contains(layer.output)
            return prepass
        }
        let direct = !passes.resamplesInput && scale > 0 && Size(width: frame.width * scale, height: frame.height * scale) == output
        cachedExpression = passes.expression(outputSize: output, resample: !direct, shown: try shownChannels())
        return output
    }

    /// The passes for a frame: at the model's size (`size=WxH`, or the size its file declares), or at the
    /// frame's (`size=frame`, or a model without a declared size); a dynamic one that cannot take the
    /// frame's size (a U-Net's skips need sides divisible by 8) padded up to the smallest multiple of 2, 4 … 64
    /// that it can, the output cropped back.
    func plan(frame: Size, maxSide: Int) throws -> NetworkPasses {
        let sizeWord = parameters.word("size")
        let fixed = try Self.modelSize(sizeWord, image: image, path: path) ?? (sizeWord == "frame" ? nil : image.declared)
        func attempt(_ input: Size) throws -> NetworkPasses {
            if program.inputSize != input {
                program = try NetworkLowering.lower(graph, input: input, outputs: computedOutputs, extraInputs: extraInputs)
            }
            var passes = try NetworkPasses(program: program, input: input, maxSide: maxSide)
            passes.resamplesInput = input != frame
            return passes
        }
        func padded() -> NetworkPasses? {
            for multiple in [2, 4, 8, 16, 32, 64] {
                let padded = Size(width: (frame.width + multiple - 1) / multiple * multiple,
                                  height: (frame.height + multiple - 1) / multiple * multiple)
                guard padded != frame, var passes = try? attempt(padded) else { continue }
                passes.paddedFrame = frame
                passes.resamplesInput = false
                return passes
            }
            return nil
        }
        do {
            return try attempt(fixed ?? frame)
        } catch let first as NetworkShapeError {
            if fixed == nil, let passes = padded() { return passes }
            throw NetworkError(file: path, node: first.node, first.reason)
        } catch let first as NetworkError where fixed == nil {
            if let passes = padded() { return passes }
            throw first
        }
    }

    package var prepasses: [KernelPrepass] { cachedPrepasses }
    package var expression: String { cachedExpression }

    package var uniforms: [KernelUniform] {
        func normalised(_ output: Bool) -> (UniformInputs) -> NetworkNormalisation {
            let metadata = graph.metadata
            return { inputs in
                guard let p = inputs.parameters else { return NetworkNormalisation() }
                // Validated at init and on every change; a value that no longer parses keeps the defaults.
                return (try? NetworkNormalisation.make(metadata: metadata, prefix: output ? "output_" : "") { p.word($0) })
                    ?? NetworkNormalisation()
            }
        }
        let input = normalised(false), output = normalised(true)
        return [
            KernelUniform("$inScale", .float, .computed { .float(input($0).scale) }),
            KernelUniform("$inMean", .vec3, .computed { let m = input($0).mean; return .vec3(m.x, m.y, m.z) }),
            KernelUniform("$inStd", .vec3, .computed { let s = input($0).std; return .vec3(s.x, s.y, s.z) }),
            KernelUniform("$inOrder", .int, .computed { .int(input($0).bgr ? 1 : 0) }),
            KernelUniform("$outScale", .float, .computed { .float(output($0).scale) }),
            KernelUniform("$outMean", .vec3, .computed { let m = output($0).mean; return .vec3(m.x, m.y, m.z) }),
            KernelUniform("$outStd", .vec3, .computed { let s = output($0).std; return .vec3(s.x, s.y, s.z) }),
            KernelUniform("$outOrder", .int, .computed { .int(output($0).bgr ? 1 : 0) }),
        ]
    }

    package var textures: [KernelTexture] {
        [KernelTexture("$weights", .sampler2D) { [self] in
            // A program lowered for a new size may have folded other constants: upload what it packs.
            if weightTexture != nil && uploadedWeights != program.weights { try? uploadWeights() }
            return weightTexture
        }]
    }

    // MARK: GPU

    /// The weight texels in rows of 2048 (`$w(i)` reads texel i at (i mod 2048, i div 2048)).
    private func uploadWeights() throws {
        let texels = max(program.weights.count, 1)
        let rows = (texels + 2047) / 2048
        let maxSide = GPULimits.query().maxTextureSize
        guard rows <= maxSide else {
            throw NetworkError(file: path, "its \(program.weights.count) weight texels exceed this GPU's \(maxSide)-row textures")
        }
        var rgba = [Float](repeating: 0, count: rows * 2048 * 4)
        for (i, t) in program.weights.enumerated() {
            rgba[i * 4] = t.x; rgba[i * 4 + 1] = t.y; rgba[i * 4 + 2] = t.z; rgba[i * 4 + 3] = t.w
        }
        weightTexture = try Texture(lookup: Size(width: 2048, height: rows), depth: 1, format: .rgba32f, linear: false,
                                    wrap: .clamp, rgba: rgba)
        uploadedWeights = program.weights
    }

    package func prepare() throws {
        gpuUsers += 1
        do {
            try KernelContextError.check(weightTexture?.thread, filter: path)
            if weightTexture == nil { try uploadWeights() }
        } catch {
            releaseGPUResources()
            throw error
        }
    }

    package func releaseGPUResources() {
        gpuUsers -= 1
        if gpuUsers <= 0 {
            weightTexture = nil
            uploadedWeights = []
        }
    }

    /// A computed output after a render: [C, H, W] floats, unpacked from its atlas.
    package struct OutputTensor: Sendable {
        package var name: String
        /// The shape as the graph gives it (e.g. [1, 10, 8, 8]), and which of its axes holds the channels.
        package var dims: [Int]
        package var channelAxis: Int?
        package var channels: Int
        package var size: Size
        package var values: [Float]
    }

    /// Every computed output (`Outputs.all`: each head of a detector) as floats, read from the targets the
    /// renderer drew for this kernel's node (`node`: its index in the graph). On the GPU thread, after
    /// `render`. The first is the shown output.
    package func readOutputs(from renderer: GraphRenderer, node: Int) throws -> [OutputTensor] {
        guard let passes else { throw NetworkError(file: path, "no frame rendered yet") }
        return try program.outputs.map { output in
            let f = output.feature
            guard let target = renderer.prepassTarget(node: node, index: program.features[f].producer) else {
                throw NetworkError(file: path, "output '\(output.name)' was not drawn")
            }
            let layout = passes.layouts[f], channels = program.features[f].channels, s = layout.size
            let texels = target.readRGBAFloats(), atlasWidth = layout.atlas.width
            var values = [Float](repeating: 0, count: channels * s.pixelCount)
            for c in 0..<channels {
                let g = c / 4, lane = c % 4
                let tx = (g % layout.columns) * s.width, ty = (g / layout.columns) * s.height
                for y in 0..<s.height {
                    for x in 0..<s.width { values[(c * s.height + y) * s.width + x] = texels[((ty + y) * atlasWidth + tx + x) * 4 + lane] }
                }
            }
            return OutputTensor(name: output.name, dims: output.dims, channelAxis: output.channelAxis, channels: channels, size: s, values: values)
        }
    }
}

/// `model(file=NET.onnx, …)`: an ONNX image-to-image network run as GPU passes on every frame.
package enum NetworkFilter {
    /// The parameters a model takes besides its file (a graph's `'net.onnx'` node takes these too).
    package static let modelParameters: [ParameterSpec] = [
        ParameterSpec("precision", .choice(["half", "float"]), default: .choice("half"),
                      "intermediate textures: half (RGBA16F, fast) or float (RGBA32F, exact to ~1e-6)"),
        ParameterSpec("output", .text, default: .text(""),
                      "the graph output shown, by name or number; default: the first image of the input's size, else the first"),
        ParameterSpec("size", .text, default: .text("declared"),
                      "the model's input size: declared (the file's, or the frame's where it has none), frame (placeholder sizes overridden) or WxH"),
        ParameterSpec("output-size", .choice(["frame", "own"]), default: .choice("frame"),
                      "an output at another scale than the input (a detector's quarter-size heads): resized to the frame, or at its own size"),
        ParameterSpec("channels", .text, default: .text(""), "the output channels shown, 1 to 4 numbers (default: all of 1–4, the first three of more)"),
        ParameterSpec("inputs", .text, default: .text(""), "values of the model's inputs besides the image: NAME=V[,V…];NAME2=…"),
        ParameterSpec("scale", .text, default: .text(""), "input = rgb · scale (255 for 0–255 models); default: metadata or 1"),
        ParameterSpec("mean", .text, default: .text(""), "subtracted after scale: one number or r,g,b; default: metadata or 0"),
        ParameterSpec("std", .text, default: .text(""), "divided by after mean: one number or r,g,b; default: metadata or 1"),
        ParameterSpec("order", .text, default: .text(""), "channel order the model takes: rgb or bgr; default: metadata or rgb"),
        ParameterSpec("output-scale", .text, default: .text(""), "output colour = (o · std + mean) / scale; default: metadata or 1"),
        ParameterSpec("output-mean", .text, default: .text(""), "see output-scale; default: metadata or 0"),
        ParameterSpec("output-std", .text, default: .text(""), "see output-scale; default: metadata or 1"),
        ParameterSpec("output-order", .text, default: .text(""), "channel order the model gives: rgb or bgr; default: metadata or rgb"),
    ]

    static let definition = FilterDefinition(
        name: "model", summary: "Runs an ONNX image network (1 or 3 channels in, NCHW or NHWC; any output that is an image) on the GPU.",
        maths: """
            The network's layers are fragment passes over channel-packed RGBA textures (docs/models.md): the frame is
            normalised to (rgb · scale − mean) / std, the output o returned as (o · output-std + output-mean) / output-scale.
            Models with a fixed input size see the frame resized bilinearly to it; their output is resized back bilinearly.
            """,
        parameters: [ParameterSpec("file", .text, default: .text(""), "path of the .onnx file")] + modelParameters,
        example: "model(file=models/sr2x.onnx, precision=float)",
        positional: ["file"],
        make: { values in
            let path = values.word("file")
            guard !path.isEmpty else { throw InvalidRequest("model needs file=PATH.onnx") }
            return try NetworkKernel(path: path, parameters: values)
        })
}
