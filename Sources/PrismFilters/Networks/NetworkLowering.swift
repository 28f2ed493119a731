import PrismCore

/// ONNX graph → `NetworkProgram`: folds constants, maps each operator onto a layer or onto the epilogue of
/// the layer before it (element-wise ops and activations fused; BatchNormalization folded into the
/// convolution it follows), packs the weights. Anything outside the supported set is refused naming the
/// operator and the node.
package enum NetworkLowering {
    /// The operators lowered (others are refused).
    package static let supportedOperators: [String] = [
        "Conv", "ConvTranspose", "BatchNormalization", "InstanceNormalization",
        "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Clip", "HardSigmoid", "HardSwish", "Elu",
        "Add", "Sub", "Mul", "Div", "Concat", "Slice", "Resize", "Upsample", "DepthToSpace", "SpaceToDepth",
        "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "Pad",
        "Identity", "Constant", "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Dropout", "Cast",
        "Neg", "Sqrt",
    ]

    /// A constant tensor during lowering.
    struct Constant {
        var dims: [Int]
        var values: [Float]
        var count: Int { values.count }
        var isScalar: Bool { values.count == 1 }
    }

    enum Value {
        case constant(Constant)
        case feature(Int)
    }

    package static func lower(_ graph: NetworkGraph) throws -> NetworkProgram {
        var lowering = Lowerer(graph: graph)
        try lowering.run()
        return lowering.program
    }
}

private struct Lowerer {
    typealias Constant = NetworkLowering.Constant
    typealias Value = NetworkLowering.Value
    let graph: NetworkGraph
    var program = NetworkProgram()
    var values: [String: Value] = [:]
    /// How many nodes (and graph outputs) read each value.
    var readers: [String: Int] = [:]
    /// The value name each feature currently stands for (the one its layer's last fused step wrote).
    var featureValue: [Int: String] = [:]

    init(graph: NetworkGraph) { self.graph = graph }

    func fail(_ node: NetworkGraph.Node?, _ reason: String) -> NetworkError {
        NetworkError(file: graph.path, node: node?.name, reason)
    }

    mutating func run() throws {
        for (name, tensor) in graph.initializers { values[name] = .constant(Constant(dims: tensor.dims, values: tensor.values)) }
        for node in graph.nodes { for input in node.inputs where !input.isEmpty { readers[input, default: 0] += 1 } }
        for output in graph.outputs { readers[output.name, default: 0] += 1 }

        guard graph.inputs.count == 1 else {
            throw fail(nil, graph.inputs.isEmpty ? "the model has no image input"
                       : "the model has \(graph.inputs.count) inputs (\(graph.inputs.map(\.name).joined(separator: ", "))); image models take one")
        }
        let input = graph.inputs[0]
        guard input.elementType == 1, let dims = input.dims, dims.count == 4, dims[0] == 1 || dims[0] == -1 else {
            throw fail(nil, "input '\(input.name)' is not a [1, C, H, W] float image")
        }
        guard dims[1] == 1 || dims[1] == 3 else {
            throw fail(nil, "input '\(input.name)' has \(dims[1] < 0 ? "an unknown number of" : String(dims[1])) channels; image models take 1 or 3")
        }
        program.inputChannels = dims[1]
        if dims[2] > 0, dims[3] > 0 { program.fixedInputSize = Size(width: dims[3], height: dims[2]) }
        let inputFeature = addFeature(channels: dims[1])
        program.layers.append(.init(op: .input, inputs: [], output: inputFeature, node: "input", fused: []))
        program.features[inputFeature].producer = 0
        values[input.name] = .feature(inputFeature)
        featureValue[inputFeature] = input.name

        for node in graph.nodes { try lower(node) }

        guard graph.outputs.count == 1 else {
            throw fail(nil, "the model has \(graph.outputs.count) outputs; image models give one")
        }
        guard case .feature(let out)? = values[graph.outputs[0].name] else {
            throw fail(nil, "output '\(graph.outputs[0].name)' does not depend on the input")
        }
        let channels = program.features[out].channels
        guard [1, 3, 4].contains(channels), !program.features[out].global else {
            throw fail(nil, "output '\(graph.outputs[0].name)' has \(channels) channels\(program.features[out].global ? " and is 1x1" : ""); "
                       + "image models give 1, 3 or 4 channels")
        }
        program.outputFeature = out
    }

    mutating func addFeature(channels: Int, float32: Bool = false, global: Bool = false) -> Int {
        program.features.append(.init(channels: channels, producer: program.layers.count, float32: float32, global: global))
        return program.features.count - 1
    }

    /// Appends a layer writing a new feature; returns the feature.
    mutating func addLayer(_ op: NetworkProgram.Op, inputs: [Int], channels: Int, node: NetworkGraph.Node, output name: String,
                           float32: Bool = false, global: Bool = false) -> Int {
        let feature = addFeature(channels: channels, float32: float32, global: global)
        program.layers.append(.init(op: op, inputs: inputs, output: feature, node: node.name, fused: [node.op]))
        featureValue[feature] = name
        values[name] = .feature(feature)
        return feature
    }

    mutating func weights(_ texels: [SIMD4<Float>]) -> Int {
        let offset = program.weights.count
        program.weights += texels
        return offset
    }

    /// Per-channel constants as one texel per group (lanes past `channels` 0); a scalar fills every lane.
    func perChannel(_ c: Constant, channels: Int, node: NetworkGraph.Node) throws -> [SIMD4<Float>] {
        let values: [Float]
        if c.isScalar {
            values = [Float](repeating: c.values[0], count: channels)
        } else {
            // [C], [C,1,1] or [1,C,1,1]: exactly C values along the channel axis.
            let nonUnit = c.dims.filter { $0 != 1 }
            guard c.count == channels, nonUnit.count <= 1,
                  c.dims.count <= 1 || (c.dims.count >= 3 && c.dims.suffix(2).allSatisfy { $0 == 1 }) || c.dims.count == 2 && c.dims[1] == 1 else {
                throw fail(node, "a constant of shape \(c.dims) does not broadcast per channel over \(channels) channels")
            }
            values = c.values
        }
        return stride(from: 0, to: channels, by: 4).map { base in
            SIMD4((0..<4).map { base + $0 < channels ? values[base + $0] : 0 })
        }
    }

    func constant(_ name: String, _ node: NetworkGraph.Node) throws -> Constant {
        guard case .constant(let c)? = values[name] else {
            throw fail(node, "input '\(name)' must be a constant (an initializer or Constant node)")
        }
        return c
    }

    func optionalConstant(_ node: NetworkGraph.Node, _ index: Int) throws -> Constant? {
        guard index < node.inputs.count, !node.inputs[index].isEmpty else { return nil }
        return try constant(node.inputs[index], node)
    }

    func feature(_ node: NetworkGraph.Node, _ index: Int = 0) throws -> Int {
        guard index < node.inputs.count, case .feature(let f)? = values[node.inputs[index]] else {
            throw fail(node, "input \(index) is missing or not an image tensor")
        }
        return f
    }

    /// Whether a step can join the layer writing `f`: the value `f` stands for has this node as its only reader.
    func fusable(_ f: Int) -> Bool {
        guard let name = featureValue[f] else { return false }
        return readers[name] == 1 && !graph.outputs.contains { $0.name == name }
    }

    /// Applies `step` to feature `f` for `node`: fused into `f`'s layer when only this node reads it, else a
    /// point-wise pass of its own. The node's output then names the result.
    mutating func apply(_ step: NetworkProgram.Step, to f: Int, node: NetworkGraph.Node) {
        let output = node.outputs[0]
        if fusable(f) {
            let layer = program.features[f].producer
            program.layers[layer].epilogue.append(step)
            program.layers[layer].fused.append(node.op)
            featureValue[f] = output
            values[output] = .feature(f)
        } else {
            let g = addLayer(.pointwise, inputs: [f], channels: program.features[f].channels, node: node, output: output,
                             float32: program.features[f].float32, global: program.features[f].global)
            program.layers[program.layers.count - 1].epilogue = [step]
        }
    }

    func attributeInts(_ node: NetworkGraph.Node, _ name: String, default value: [Int]) -> [Int] { node.ints(name) ?? value }

    // MARK: Nodes

    mutating func lower(_ node: NetworkGraph.Node) throws {
        guard node.domain.isEmpty || node.domain == "ai.onnx" else {
            throw fail(node, "operator '\(node.domain).\(node.op)' is not supported (only the default ONNX domain is)")
        }
        guard !node.outputs.isEmpty else { return }
        let inputsConstant = node.inputs.allSatisfy { name in
            guard !name.isEmpty else { return true }
            if case .constant? = values[name] { return true }
            return false
        }
        if node.op == "Constant" {
            if case .tensor(let t)? = node.attributes["value"] {
                values[node.outputs[0]] = .constant(Constant(dims: t.dims, values: t.values))
            } else if let f = node.float("value_float") {
                values[node.outputs[0]] = .constant(Constant(dims: [], values: [f]))
            } else if let fs = node.floats("value_floats") {
                values[node.outputs[0]] = .constant(Constant(dims: [fs.count], values: fs))
            } else if let i = node.int("value_int") {
                values[node.outputs[0]] = .constant(Constant(dims: [], values: [Float(i)]))
            } else if let ints = node.ints("value_ints") {
                values[node.outputs[0]] = .constant(Constant(dims: [ints.count], values: ints.map(Float.init)))
            } else {
                throw fail(node, "Constant without a numeric value")
            }
            return
        }
        if inputsConstant, !node.inputs.isEmpty, let folded = try fold(node) {
            values[node.outputs[0]] = .constant(folded)
            return
        }
        program.operators[node.op, default: 0] += 1
        switch node.op {
        case "Identity", "Dropout", "Cast":
            values[node.outputs[0]] = values[node.inputs[0]]
            try alias(node)
        case "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose":
            try layoutNoOp(node)
        case "Conv", "ConvTranspose": try convolution(node)
        case "BatchNormalization": try batchNormalization(node)
        case "InstanceNormalization": try instanceNormalization(node)
        case "Relu": apply(.activation(.relu), to: try feature(node), node: node)
        case "Sigmoid": apply(.activation(.sigmoid), to: try feature(node), node: node)
        case "Tanh": apply(.activation(.tanh), to: try feature(node), node: node)
        case "HardSwish": apply(.activation(.hardSwish), to: try feature(node), node: node)
        case "LeakyRelu": apply(.activation(.leakyRelu(node.float("alpha") ?? 0.01)), to: try feature(node), node: node)
        case "Elu": apply(.activation(.elu(node.float("alpha") ?? 1)), to: try feature(node), node: node)
        case "HardSigmoid":
            apply(.activation(.hardSigmoid(node.float("alpha") ?? 0.2, node.float("beta") ?? 0.5)), to: try feature(node), node: node)
        case "Clip":
            // opset ≥ 11: min and max are optional inputs; before, attributes.
            let low = try optionalConstant(node, 1)?.values.first ?? node.float("min") ?? -.greatestFiniteMagnitude
            let high = try optionalConstant(node, 2)?.values.first ?? node.float("max") ?? .greatestFiniteMagnitude
            apply(.activation(.clip(low, high)), to: try feature(node), node: node)
        case "PRelu":
            let f = try feature(node)
            let slope = try perChannel(try constant(node.inputs[1], node), channels: program.features[f].channels, node: node)
            apply(.prelu(offset: weights(slope)), to: f, node: node)
        case "Neg":
            let f = try feature(node)
            let c = program.features[f].channels
            apply(.affine(offset: weights(affine(scale: [Float](repeating: -1, count: c), shift: [Float](repeating: 0, count: c)))), to: f, node: node)
        case "Add", "Sub", "Mul", "Div": try binary(node)
        case "Concat": try concat(node)
        case "Slice": try slice(node)
        case "Resize", "Upsample": try resize(node)
        case "DepthToSpace", "SpaceToDepth":
            let f = try feature(node)
            guard let block = node.int("blocksize"), block >= 1 else { throw fail(node, "\(node.op) without a blocksize") }
            let c = program.features[f].channels
            if node.op == "DepthToSpace" {
                guard c % (block * block) == 0 else { throw fail(node, "DepthToSpace of \(c) channels by \(block)x\(block)") }
                let crd = (node.string("mode") ?? "DCR") == "CRD"
                _ = addLayer(.rearrange(.depthToSpace(block: block, columnRowDepth: crd)), inputs: [f], channels: c / (block * block),
                             node: node, output: node.outputs[0])
            } else {
                _ = addLayer(.rearrange(.spaceToDepth(block: block)), inputs: [f], channels: c * block * block, node: node, output: node.outputs[0])
            }
        case "MaxPool", "AveragePool": try pooling(node)
        case "GlobalAveragePool", "GlobalMaxPool": try globalPool(node, max: node.op == "GlobalMaxPool")
        case "ReduceMean":
            let given = try optionalConstant(node, 1)?.values.map { Int($0) }
            let axes = node.ints("axes") ?? given ?? []
            guard Set(axes.map { $0 < 0 ? $0 + 4 : $0 }) == [2, 3], node.int("keepdims") ?? 1 == 1 else {
                throw fail(node, "ReduceMean is supported over the spatial axes [2, 3] with keepdims=1 (a global average), not axes \(axes)")
            }
            try globalPool(node, max: false)
        case "Pad": try pad(node)
        default:
            throw fail(node, "operator '\(node.op)' is not supported (docs/models.md lists the operators Prism lowers)")
        }
    }

    /// An op that passes its input through: the output names the same feature; fusion must see through it.
    mutating func alias(_ node: NetworkGraph.Node) throws {
        guard case .feature(let f)? = values[node.outputs[0]] else { return }
        // The output stands for the feature now; its readers are the feature's.
        if featureValue[f] == node.inputs[0] { featureValue[f] = node.outputs[0] }
    }

    /// Reshape/Flatten/Squeeze/Unsqueeze/Transpose of an image: accepted only where the layout does not change.
    mutating func layoutNoOp(_ node: NetworkGraph.Node) throws {
        let f = try feature(node)
        let channels = program.features[f].channels
        var ok = false
        switch node.op {
        case "Transpose":
            let perm = node.ints("perm") ?? [3, 2, 1, 0]
            ok = perm == [0, 1, 2, 3] || (program.features[f].global && perm.count == 4 && perm[0] == 0 && perm[1] == 1)
        case "Reshape":
            let shape = try constant(node.inputs[1], node).values.map { Int($0) }
            if shape.count == 4 {
                let spatial = Array(shape.suffix(2))
                let inferred = graph.values[node.outputs[0]]?.dims
                // A fixed-size model reshaping to its own shape, spelled out.
                let before = graph.values[node.inputs[0]]?.dims
                ok = [0, 1, -1].contains(shape[0]) && (shape[1] == channels || shape[1] == 0)
                    && (spatial.allSatisfy { $0 == 0 } || (program.features[f].global && spatial.allSatisfy { $0 == 1 || $0 == 0 || $0 == -1 })
                        || inferred.map { $0.count == 4 && $0[1] == channels } == true && spatial.filter { $0 == -1 }.count <= 1 && spatial.contains(0)
                        || before.map { $0.count == 4 && $0.suffix(3).allSatisfy { $0 > 0 } && Array($0.suffix(3)) == Array(shape.suffix(3)) } == true)
            } else if shape.count == 2, program.features[f].global {
                ok = [0, 1, -1].contains(shape[0]) && (shape[1] == channels || shape[1] == -1)   // [1, C] of a 1x1 image
            }
        case "Flatten": ok = program.features[f].global
        case "Squeeze", "Unsqueeze":
            // A 1x1 feature flattened to [1, C] and back (squeeze-excitation written with Linear layers).
            ok = program.features[f].global
        default: break
        }
        guard ok else {
            throw fail(node, "\(node.op) that changes the image layout is not supported (only layout no-ops are)")
        }
        values[node.outputs[0]] = .feature(f)
        try alias(node)
    }

    // MARK: Constants

    /// Evaluates a node whose inputs are all constants (nil: not foldable here, lower it as usual).
    func fold(_ node: NetworkGraph.Node) throws -> Constant? {
        let inputs = try node.inputs.map { $0.isEmpty ? nil : try constant($0, node) }
        switch node.op {
        case "Identity", "Cast", "Dropout": return inputs[0]
        case "Reshape":
            guard let x = inputs[0], let shape = inputs[1]?.values.map({ Int($0) }) else { return nil }
            var dims = shape.enumerated().map { $1 == 0 && $0 < x.dims.count ? x.dims[$0] : $1 }
            if let unknown = dims.firstIndex(of: -1) {
                let known = dims.filter { $0 != -1 }.reduce(1, *)
                dims[unknown] = known == 0 ? 0 : x.count / known
            }
            return Constant(dims: dims, values: x.values)
        case "Unsqueeze", "Squeeze", "Flatten":
            guard let x = inputs[0] else { return nil }
            return Constant(dims: x.count == 1 ? [] : [x.count], values: x.values)  // shapes of constants matter only as per-channel vectors here
        case "Neg": return inputs[0].map { Constant(dims: $0.dims, values: $0.values.map { -$0 }) }
        case "Sqrt": return inputs[0].map { Constant(dims: $0.dims, values: $0.values.map { $0.squareRoot() }) }
        case "Add", "Sub", "Mul", "Div":
            guard let a = inputs[0], let b = inputs[1] else { return nil }
            let f: (Float, Float) -> Float
            switch node.op {
            case "Add": f = { $0 + $1 }
            case "Sub": f = { $0 - $1 }
            case "Mul": f = { $0 * $1 }
            default: f = { $0 / $1 }
            }
            if a.count == b.count { return Constant(dims: a.dims, values: zip(a.values, b.values).map(f)) }
            if b.isScalar { return Constant(dims: a.dims, values: a.values.map { f($0, b.values[0]) }) }
            if a.isScalar { return Constant(dims: b.dims, values: b.values.map { f(a.values[0], $0) }) }
            throw fail(node, "constant \(node.op) of shapes \(a.dims) and \(b.dims) is not supported")
        default: return nil
        }
    }

    func affine(scale: [Float], shift: [Float]) -> [SIMD4<Float>] {
        var texels: [SIMD4<Float>] = []
        for base in stride(from: 0, to: scale.count, by: 4) {
            texels.append(SIMD4((0..<4).map { base + $0 < scale.count ? scale[base + $0] : 0 }))
            texels.append(SIMD4((0..<4).map { base + $0 < shift.count ? shift[base + $0] : 0 }))
        }
        return texels
    }

    func expand(_ texels: [SIMD4<Float>], channels: Int) -> [Float] {
        (0..<channels).map { texels[$0 / 4][$0 % 4] }
    }

    // MARK: Element-wise

    mutating func binary(_ node: NetworkGraph.Node) throws {
        guard node.inputs.count == 2 else { throw fail(node, "\(node.op) needs two inputs") }
        let op = NetworkProgram.BinaryOp(rawValue: ["Add": "+", "Sub": "-", "Mul": "*", "Div": "/"][node.op]!)!
        switch (values[node.inputs[0]], values[node.inputs[1]]) {
        case (.feature(let a)?, .feature(let b)?):
            let fa = program.features[a], fb = program.features[b]
            // The result has the larger image's shape; the other operand is broadcast from 1x1 or one channel.
            let (big, small, smallFirst): (Int, Int, Bool)
            if fa.global && !fb.global || (fa.global == fb.global && fa.channels < fb.channels) { (big, small, smallFirst) = (b, a, true) }
            else { (big, small, smallFirst) = (a, b, false) }
            let fs = program.features[small], fbg = program.features[big]
            guard fs.channels == fbg.channels || fs.channels == 1 else {
                throw fail(node, "\(node.op) of \(fa.channels)- and \(fb.channels)-channel images")
            }
            // Fuse onto the later producer (the other operand exists by then).
            if fs.channels == fbg.channels, fs.global == fbg.global, program.features[small].producer > program.features[big].producer,
               fusable(small) {
                apply(.tensor(op, feature: big, tensorFirst: !smallFirst), to: small, node: node)
            } else if program.features[big].producer > program.features[small].producer || fs.global || fs.channels == 1 {
                if fusable(big) {
                    apply(.tensor(op, feature: small, tensorFirst: smallFirst), to: big, node: node)
                } else {
                    let g = addLayer(.pointwise, inputs: [big], channels: fbg.channels, node: node, output: node.outputs[0],
                                     float32: fbg.float32, global: fbg.global)
                    program.layers[program.features[g].producer].epilogue = [.tensor(op, feature: small, tensorFirst: smallFirst)]
                }
            } else {
                let g = addLayer(.pointwise, inputs: [big], channels: fbg.channels, node: node, output: node.outputs[0],
                                 float32: fbg.float32, global: fbg.global)
                program.layers[program.features[g].producer].epilogue = [.tensor(op, feature: small, tensorFirst: smallFirst)]
            }
        case (.feature(let f)?, .constant(let c)?):
            let channels = program.features[f].channels
            let k = expand(try perChannel(c, channels: channels, node: node), channels: channels)
            let ones = [Float](repeating: 1, count: channels), zeros = [Float](repeating: 0, count: channels)
            let texels: [SIMD4<Float>]
            switch op {
            case .add: texels = affine(scale: ones, shift: k)
            case .sub: texels = affine(scale: ones, shift: k.map { -$0 })
            case .mul: texels = affine(scale: k, shift: zeros)
            case .div: texels = affine(scale: k.map { 1 / $0 }, shift: zeros)
            }
            apply(.affine(offset: weights(texels)), to: f, node: node)
        case (.constant(let c)?, .feature(let f)?):
            let channels = program.features[f].channels
            let k = expand(try perChannel(c, channels: channels, node: node), channels: channels)
            let ones = [Float](repeating: 1, count: channels), zeros = [Float](repeating: 0, count: channels)
            switch op {
            case .add: apply(.affine(offset: weights(affine(scale: ones, shift: k))), to: f, node: node)
            case .sub: apply(.affine(offset: weights(affine(scale: ones.map { -$0 }, shift: k))), to: f, node: node)
            case .mul: apply(.affine(offset: weights(affine(scale: k, shift: zeros))), to: f, node: node)
            case .div: apply(.reciprocal(offset: weights(try perChannel(c, channels: channels, node: node))), to: f, node: node)
            }
        default:
            throw fail(node, "\(node.op) has an input that is neither an image nor a constant")
        }
    }

    // MARK: Convolution

    mutating func convolution(_ node: NetworkGraph.Node) throws {
        let transposed = node.op == "ConvTranspose"
        let f = try feature(node)
        let w = try constant(node.inputs[1], node)
        guard w.dims.count == 4 else { throw fail(node, "\(node.op) with a \(w.dims.count)-D kernel (only 2-D images are supported)") }
        let groups = node.int("group") ?? 1
        let inChannels = program.features[f].channels
        let outChannels = transposed ? w.dims[1] * groups : w.dims[0]
        let kernel = SIMD2(w.dims[3], w.dims[2])
        guard groups >= 1, inChannels % groups == 0, outChannels % groups == 0,
              (transposed ? w.dims[0] : w.dims[1] * groups) == inChannels else {
            throw fail(node, "a \(w.dims) kernel with group=\(groups) does not fit a \(inChannels)-channel input")
        }
        if let shape = node.ints("kernel_shape"), shape != [kernel.y, kernel.x] {
            throw fail(node, "kernel_shape \(shape) disagrees with the weights' \(w.dims)")
        }
        if node.ints("output_shape") != nil { throw fail(node, "ConvTranspose with output_shape is not supported (give pads)") }
        let pads = node.ints("pads") ?? [0, 0, 0, 0]
        guard pads.count == 4 else { throw fail(node, "pads \(pads) for a 2-D convolution") }
        let autoPad = node.string("auto_pad").flatMap { $0 == "NOTSET" || $0 == "VALID" ? nil : $0 }
        if autoPad != nil && transposed { throw fail(node, "ConvTranspose with auto_pad is not supported (give pads)") }
        let strides = node.ints("strides") ?? [1, 1], dilations = node.ints("dilations") ?? [1, 1]
        let outputPadding = node.ints("output_padding") ?? [0, 0]
        let bias = try optionalConstant(node, 2)?.values ?? [Float](repeating: 0, count: outChannels)
        guard bias.count == outChannels else { throw fail(node, "bias of \(bias.count) for \(outChannels) output channels") }

        let inPerGroup = inChannels / groups, outPerGroup = outChannels / groups
        let kh = kernel.y, kw = kernel.x, taps = kh * kw
        // The weight of output channel oc from input channel ic at tap t (0 where they are not connected).
        func weight(_ oc: Int, _ ic: Int, _ t: Int) -> Float {
            let group = oc / outPerGroup
            guard ic / inPerGroup == group else { return 0 }
            if transposed {
                return w.values[((ic * outPerGroup + (oc - group * outPerGroup)) * taps) + t]
            }
            return w.values[((oc * inPerGroup + (ic - group * inPerGroup)) * taps) + t]
        }
        let outGroups = (outChannels + 3) / 4, inGroups = (inChannels + 3) / 4
        // The input groups each output group reads: those holding any connected channel.
        var starts: [Int] = [], count = 1
        for go in 0..<outGroups {
            let channels = (go * 4)..<min(go * 4 + 4, outChannels)
            let firstIn = channels.map { ($0 / outPerGroup) * inPerGroup }.min()!
            let lastIn = channels.map { ($0 / outPerGroup + 1) * inPerGroup - 1 }.max()!
            starts.append(firstIn / 4)
            count = max(count, lastIn / 4 - firstIn / 4 + 1)
        }
        starts = starts.map { min($0, inGroups - count) }
        var header: [SIMD4<Float>] = [], biasTexels: [SIMD4<Float>] = [], kernelTexels: [SIMD4<Float>] = []
        kernelTexels.reserveCapacity(outGroups * count * taps * 4)
        for go in 0..<outGroups {
            header.append(SIMD4(Float(starts[go]), 0, 0, 0))
            biasTexels.append(SIMD4((0..<4).map { go * 4 + $0 < outChannels ? bias[go * 4 + $0] : 0 }))
            for k in 0..<count {
                let gi = starts[go] + k
                for t in 0..<taps {
                    for lane in 0..<4 {   // column `lane`: input channel 4gi + lane into the four output channels
                        let ic = gi * 4 + lane
                        kernelTexels.append(SIMD4((0..<4).map { r -> Float in
                            let oc = go * 4 + r
                            return oc < outChannels && ic < inChannels ? weight(oc, ic, t) : 0
                        }))
                    }
                }
            }
        }
        let conv = NetworkProgram.Convolution(
            inChannels: inChannels, outChannels: outChannels, groups: groups, kernel: kernel,
            strides: SIMD2(strides[1], strides[0]), dilations: SIMD2(dilations[1], dilations[0]),
            pads: SIMD4(pads[1], pads[0], pads[3], pads[2]), autoPad: autoPad,
            outputPadding: SIMD2(outputPadding.count == 2 ? outputPadding[1] : 0, outputPadding.count == 2 ? outputPadding[0] : 0),
            inputGroupsPerOutputGroup: count, headerOffset: weights(header), biasOffset: weights(biasTexels),
            weightOffset: weights(kernelTexels), transposed: transposed)
        guard conv.strides.x >= 1, conv.strides.y >= 1, conv.dilations.x >= 1, conv.dilations.y >= 1 else {
            throw fail(node, "strides and dilations must be positive")
        }
        // A 1x1 convolution of a global (1x1) feature, as in squeeze-excitation, stays global: what it is multiplied
        // with broadcasts it, whatever size the frame is.
        let staysGlobal = program.features[f].global && !transposed && taps == 1 && conv.pads == .zero && conv.autoPad == nil
        _ = addLayer(.convolution(conv), inputs: [f], channels: outChannels, node: node, output: node.outputs[0], global: staysGlobal)
    }

    mutating func batchNormalization(_ node: NetworkGraph.Node) throws {
        let f = try feature(node)
        let channels = program.features[f].channels
        let scale = try constant(node.inputs[1], node).values, bias = try constant(node.inputs[2], node).values
        let mean = try constant(node.inputs[3], node).values, variance = try constant(node.inputs[4], node).values
        guard [scale, bias, mean, variance].allSatisfy({ $0.count == channels }) else {
            throw fail(node, "BatchNormalization parameters do not have \(channels) values")
        }
        let epsilon = node.float("epsilon") ?? 1e-5
        let s = (0..<channels).map { scale[$0] / (variance[$0] + epsilon).squareRoot() }
        let shift = (0..<channels).map { bias[$0] - mean[$0] * s[$0] }
        let layer = program.features[f].producer
        // Folded into the convolution before it when nothing else reads the convolution's output.
        if fusable(f), program.layers[layer].epilogue.isEmpty, case .convolution(let conv) = program.layers[layer].op {
            let groups = (conv.outChannels + 3) / 4
            let scaleTexels = stride(from: 0, to: channels, by: 4).map { b in SIMD4((0..<4).map { b + $0 < channels ? s[b + $0] : 0 }) }
            for go in 0..<groups {
                let b = conv.biasOffset + go
                program.weights[b] = program.weights[b] * scaleTexels[go]
                    + SIMD4((0..<4).map { go * 4 + $0 < channels ? shift[go * 4 + $0] : 0 })
                let perGroup = conv.inputGroupsPerOutputGroup * conv.kernel.x * conv.kernel.y * 4
                for k in 0..<perGroup { program.weights[conv.weightOffset + go * perGroup + k] *= scaleTexels[go] }
            }
            program.layers[layer].fused.append(node.op)
            featureValue[f] = node.outputs[0]
            values[node.outputs[0]] = .feature(f)
            return
        }
        apply(.affine(offset: weights(affine(scale: s, shift: shift))), to: f, node: node)
    }

    mutating func instanceNormalization(_ node: NetworkGraph.Node) throws {
        let f = try feature(node)
        let channels = program.features[f].channels
        let scale = try constant(node.inputs[1], node).values, bias = try constant(node.inputs[2], node).values
        guard scale.count == channels, bias.count == channels else {
            throw fail(node, "InstanceNormalization parameters do not have \(channels) values")
        }
        let groups = program.features[f].groups
        // Row sums of x and x², then the column's means: E[x] in the first groups, E[x²] in the rest.
        let rows = addFeature(channels: groups * 8, float32: true)
        program.layers.append(.init(op: .rowReduction(max: false, statistics: true), inputs: [f], output: rows, node: node.name, fused: ["InstanceNormalization (sums)"]))
        let stats = addFeature(channels: groups * 8, float32: true, global: true)
        program.layers.append(.init(op: .columnReduction(max: false, meanOver: f), inputs: [rows], output: stats, node: node.name, fused: ["InstanceNormalization (means)"]))
        _ = addLayer(.instanceNormalization(epsilon: node.float("epsilon") ?? 1e-5, offset: weights(affine(scale: scale, shift: bias))),
                     inputs: [f, stats], channels: channels, node: node, output: node.outputs[0])
    }

    // MARK: Spatial

    mutating func pooling(_ node: NetworkGraph.Node) throws {
        let f = try feature(node)
        guard let shape = node.ints("kernel_shape"), shape.count == 2 else { throw fail(node, "\(node.op) needs a 2-D kernel_shape") }
        let pads = node.ints("pads") ?? [0, 0, 0, 0], strides = node.ints("strides") ?? [1, 1], dilations = node.ints("dilations") ?? [1, 1]
        guard pads.count == 4, strides.count == 2, dilations.count == 2 else { throw fail(node, "\(node.op) with pads/strides for other than 2-D") }
        if node.outputs.count > 1, !node.outputs[1].isEmpty { throw fail(node, "MaxPool's Indices output is not supported") }
        let pool = NetworkProgram.Pooling(
            max: node.op == "MaxPool", kernel: SIMD2(shape[1], shape[0]), strides: SIMD2(strides[1], strides[0]),
            dilations: SIMD2(dilations[1], dilations[0]), pads: SIMD4(pads[1], pads[0], pads[3], pads[2]),
            autoPad: node.string("auto_pad").flatMap { $0 == "NOTSET" || $0 == "VALID" ? nil : $0 },
            ceilMode: node.int("ceil_mode") == 1, countIncludePad: node.int("count_include_pad") == 1)
        _ = addLayer(.pooling(pool), inputs: [f], channels: program.features[f].channels, node: node, output: node.outputs[0])
    }

    mutating func globalPool(_ node: NetworkGraph.Node, max: Bool) throws {
        let f = try feature(node)
        let channels = program.features[f].channels
        let rows = addFeature(channels: channels, float32: true)
        program.layers.append(.init(op: .rowReduction(max: max, statistics: false), inputs: [f], output: rows, node: node.name, fused: [node.op + " (rows)"]))
        _ = addLayer(.columnReduction(max: max, meanOver: max ? nil : f), inputs: [rows], channels: channels, node: node,
                     output: node.outputs[0], float32: true, global: true)
    }

    mutating func resize(_ node: NetworkGraph.Node) throws {
        let f = try feature(node)
        let mode = node.string("mode") ?? "nearest"
        guard mode == "nearest" || mode == "linear" || mode == "bilinear" else {
            throw fail(node, "\(node.op) mode '\(mode)' is not supported (nearest and linear are)")
        }
        var resizing = NetworkProgram.Resizing(linear: mode != "nearest",
                                               coordinates: node.string("coordinate_transformation_mode") ?? (node.op == "Upsample" ? "asymmetric" : "half_pixel"),
                                               nearestMode: node.string("nearest_mode") ?? (node.op == "Upsample" ? "floor" : "round_prefer_floor"))
        guard ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"].contains(resizing.coordinates) else {
            throw fail(node, "\(node.op) coordinate_transformation_mode '\(resizing.coordinates)' is not supported")
        }
        guard ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"].contains(resizing.nearestMode) else {
            throw fail(node, "\(node.op) nearest_mode '\(resizing.nearestMode)' is not supported")
        }
        // Upsample: (X, scales); Resize opset 11+: (X, roi, scales, sizes); opset 10: (X, scales).
        let scales = node.op == "Upsample" || node.inputs.count == 2 ? try optionalConstant(node, 1) : try optionalConstant(node, 2)
        let sizes = node.op == "Resize" && node.inputs.count > 3 ? try optionalConstant(node, 3) : nil
        if let s = scales, s.count == 4 {
            guard s.values[0] == 1, s.values[1] == 1 else { throw fail(node, "\(node.op) scales the batch or channel axis") }
            resizing.scales = SIMD2(Double(s.values[3]), Double(s.values[2]))
        } else if let s = sizes, s.count == 4 {
            guard s.values[1] == Float(program.features[f].channels) else { throw fail(node, "\(node.op) changes the channel count") }
            resizing.sizes = Size(width: Int(s.values[3]), height: Int(s.values[2]))
        } else if let s = node.floats("scales"), s.count == 4 {
            resizing.scales = SIMD2(Double(s[3]), Double(s[2]))
        } else {
            throw fail(node, "\(node.op) needs constant scales or sizes of 4 values")
        }
        _ = addLayer(.resize(resizing), inputs: [f], channels: program.features[f].channels, node: node, output: node.outputs[0])
    }

    mutating func concat(_ node: NetworkGraph.Node) throws {
        let axis = node.int("axis") ?? 1
        guard axis == 1 || axis == -3 else { throw fail(node, "Concat on axis \(axis) is not supported (only channels, axis 1)") }
        let inputs = try (0..<node.inputs.count).map { try feature(node, $0) }
        var offsets: [Int] = [], total = 0
        for f in inputs {
            offsets.append(total)
            total += program.features[f].channels
        }
        _ = addLayer(.rearrange(.concat(offsets: offsets)), inputs: inputs, channels: total, node: node, output: node.outputs[0])
    }

    mutating func slice(_ node: NetworkGraph.Node) throws {
        let f = try feature(node)
        let channels = program.features[f].channels
        // opset ≥ 10: starts, ends, axes, steps as inputs; before, attributes.
        let starts = try optionalConstant(node, 1)?.values.map { Int($0) } ?? node.ints("starts") ?? []
        let ends = try optionalConstant(node, 2)?.values.map { Int(max(min($0, Float(Int32.max)), Float(Int32.min))) } ?? node.ints("ends") ?? []
        let axes = try optionalConstant(node, 3)?.values.map { Int($0) } ?? node.ints("axes") ?? Array(0..<starts.count)
        let steps = try optionalConstant(node, 4)?.values.map { Int($0) } ?? [Int](repeating: 1, count: starts.count)
        guard starts.count == 1, axes.map({ $0 < 0 ? $0 + 4 : $0 }) == [1], steps.count == 1, steps[0] >= 1, ends.count == 1 else {
            throw fail(node, "Slice is supported on the channel axis only, with a positive step")
        }
        func clampIndex(_ i: Int) -> Int { min(max(i < 0 ? i + channels : i, 0), channels) }
        let start = clampIndex(starts[0]), end = clampIndex(ends[0])
        let count = end > start ? (end - start + steps[0] - 1) / steps[0] : 0
        guard count > 0 else { throw fail(node, "Slice leaves no channels") }
        _ = addLayer(.rearrange(.slice(start: start, step: steps[0])), inputs: [f], channels: count, node: node, output: node.outputs[0])
    }

    mutating func pad(_ node: NetworkGraph.Node) throws {
        let f = try feature(node)
        let pads = try optionalConstant(node, 1)?.values.map { Int($0) } ?? node.ints("pads") ?? []
        guard pads.count == 8, pads[0] == 0, pads[1] == 0, pads[4] == 0, pads[5] == 0 else {
            throw fail(node, "Pad is supported on the two spatial axes only, got pads \(pads)")
        }
        guard pads.allSatisfy({ $0 >= 0 }) else { throw fail(node, "Pad with negative pads (a crop) is not supported") }
        let mode = node.string("mode") ?? "constant"
        guard ["constant", "reflect", "edge"].contains(mode) else { throw fail(node, "Pad mode '\(mode)' is not supported") }
        let value = try optionalConstant(node, 2)?.values.first ?? node.float("value") ?? 0
        let padding = NetworkProgram.Padding(pads: SIMD4(pads[3], pads[2], pads[7], pads[6]), mode: mode, value: value)
        _ = addLayer(.pad(padding), inputs: [f], channels: program.features[f].channels, node: node, output: node.outputs[0])
    }
}
