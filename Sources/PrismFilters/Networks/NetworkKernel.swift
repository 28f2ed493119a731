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
                throw UsageError("model \(prefix.isEmpty ? "" : "output-")\(key) takes one number or three (r,g,b), not '\(text)'")
            }
            return parts.map { $0! }
        }
        if let s = try numbers("scale") {
            guard s.count == 1, s[0] != 0 else { throw UsageError("model \(prefix.isEmpty ? "" : "output-")scale takes one non-zero number") }
            n.scale = s[0]
        }
        if let m = try numbers("mean") { n.mean = m.count == 1 ? SIMD3(repeating: m[0]) : SIMD3(m[0], m[1], m[2]) }
        if let s = try numbers("std") {
            guard !s.contains(0) else { throw UsageError("model \(prefix.isEmpty ? "" : "output-")std cannot be 0") }
            n.std = s.count == 1 ? SIMD3(repeating: s[0]) : SIMD3(s[0], s[1], s[2])
        }
        if let order = value("order")?.lowercased() {
            guard order == "rgb" || order == "bgr" else { throw UsageError("model order is rgb or bgr, not '\(order)'") }
            n.bgr = order == "bgr"
        }
        return n
    }
}

/// An ONNX image-to-image network as one graph node: the layers of its `NetworkProgram` are prepasses (one
/// feature atlas each, RGBA16F or RGBA32F), the expression reads the output feature back into colour.
/// Weights are one RGBA32F texture, uploaded in `prepare` and kept while any renderer uses the kernel.
package final class NetworkKernel: ParameterizedKernel {
    package let path: String
    package let graph: NetworkGraph
    package let program: NetworkProgram
    package var parameters: ParameterValues
    package let inputCount = 1
    private var passes: NetworkPasses?
    private var cachedPrepasses: [KernelPrepass] = []
    private var cachedExpression = "vec4 $main(vec2 p) { return vec4(0.0); }\n"
    private var weightTexture: Texture?
    private var gpuUsers = 0

    package init(path: String, parameters: ParameterValues) throws {
        self.path = path
        self.parameters = parameters
        graph = try NetworkGraph.load(path: path)
        program = try NetworkLowering.lower(graph)
        _ = try normalisation(output: false)
        _ = try normalisation(output: true)
    }

    package var float32: Bool { parameters.word("precision") == "float" }

    func normalisation(output: Bool) throws -> NetworkNormalisation {
        try NetworkNormalisation.make(metadata: graph.metadata, prefix: output ? "output_" : "") { [parameters] in parameters.word($0) }
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
        let (passes, scale) = try plan(frame: frame, maxSide: maxSide)
        let output = Size(width: frame.width * scale, height: frame.height * scale)
        guard output.width <= maxSide, output.height <= maxSide else {
            throw NetworkError(file: path, "its \(scale)x output of a \(frame) frame exceeds this GPU's \(maxSide)x\(maxSide) textures")
        }
        self.passes = passes
        let float32 = self.float32
        cachedPrepasses = program.layers.indices.map { index in
            let layer = program.layers[index]
            let atlas = passes.layouts[layer.output].atlas
            let format: TextureFormat = program.features[layer.output].float32 || float32 ? .rgba32f : .rgba16f
            var prepass = KernelPrepass(main: passes.main(layer: index), format: format, size: { _ in atlas })
            prepass.label = "\(layer.node) (\(layer.fused.joined(separator: "+")))"
            return prepass
        }
        cachedExpression = passes.expression(outputSize: output)
        return output
    }

    /// The passes for a frame: a fixed-size model at its size; a dynamic one at the frame's, or, when the
    /// network cannot take that (a U-Net's skips need sides divisible by 8), padded up to the smallest multiple
    /// of 2, 4 … 64 that it can, the output cropped back.
    func plan(frame: Size, maxSide: Int) throws -> (NetworkPasses, Int) {
        func attempt(_ input: Size) throws -> (NetworkPasses, Int) {
            (try NetworkPasses(program: program, input: input, maxSide: maxSide), try program.outputScale(input: input))
        }
        do {
            return try attempt(program.fixedInputSize ?? frame)
        } catch let first as NetworkShapeError {
            if program.fixedInputSize == nil {
                for multiple in [2, 4, 8, 16, 32, 64] {
                    let padded = Size(width: (frame.width + multiple - 1) / multiple * multiple,
                                      height: (frame.height + multiple - 1) / multiple * multiple)
                    guard padded != frame, var (passes, scale) = try? attempt(padded) else { continue }
                    passes.paddedFrame = frame
                    return (passes, scale)
                }
            }
            throw NetworkError(file: path, node: first.node, first.reason)
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
        [KernelTexture("$weights", .sampler2D) { [self] in weightTexture }]
    }

    // MARK: GPU

    /// The weight texels in rows of 2048 (`$w(i)` reads texel i at (i mod 2048, i div 2048)).
    package func prepare() throws {
        gpuUsers += 1
        do {
            try KernelContextError.check(weightTexture?.thread, filter: path)
            if weightTexture == nil {
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
            }
        } catch {
            releaseGPUResources()
            throw error
        }
    }

    package func releaseGPUResources() {
        gpuUsers -= 1
        if gpuUsers <= 0 { weightTexture = nil }
    }
}

/// `model(file=NET.onnx, …)`: an ONNX image-to-image network run as GPU passes on every frame.
package enum NetworkFilter {
    /// The parameters a model takes besides its file (a graph's `'net.onnx'` node takes these too).
    package static let modelParameters: [ParameterSpec] = [
        ParameterSpec("precision", .choice(["half", "float"]), default: .choice("half"),
                      "intermediate textures: half (RGBA16F, fast) or float (RGBA32F, exact to ~1e-6)"),
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
        name: "model", summary: "Runs an ONNX image-to-image network (1 or 3 channels in; 1, 3 or 4 out, any integer scale) on the GPU.",
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
            guard !path.isEmpty else { throw UsageError("model needs file=PATH.onnx") }
            return try NetworkKernel(path: path, parameters: values)
        })
}
