import PrismCore

/// ONNX graph → `NetworkProgram` for one input size: folds constants and the shape arithmetic that depends
/// on the size, tracks how each tensor lies in its feature (`TensorView`: NHWC, a channel shuffle, a
/// crop cost nothing until an operator needs the plain layout), maps each operator onto a layer or onto the
/// epilogue of the layer before it (element-wise ops and activations fused; BatchNormalization folded into
/// the convolution it follows), packs the weights. Anything outside the supported set is refused naming the
/// operator and the node.
package enum NetworkLowering {
    /// Epilogue steps fused into one pass at most: past this the next step starts a pass of its own, so that
    /// a chain of thousands of activations is a bounded expression for the GLSL compiler (Mesa's recursion).
    package static let maximumFusedSteps = 48

    enum Value {
        case constant(NetworkConstant)
        case feature(Int)
        /// A value that could not be lowered (only where the outputs to lower were not chosen yet).
        case failed(NetworkError)
    }

    /// The model's image input, and its other inputs (scalars or small tensors: parameters).
    package struct ImageInput: Sendable {
        package var name: String
        package var channels: Int
        /// [1, H, W, C] (or [H, W, C]) as TensorFlow exports it, rather than [1, C, H, W].
        package var channelsLast: Bool
        package var rank: Int
        /// The size the file declares (nil where H or W is symbolic).
        package var declared: Size?
        /// The batch the file declares when it is a number above 1 (run as 1).
        package var declaredBatch: Int?
        package var extra: [NetworkGraph.Value]
    }

    /// Finds the image input: the first float input of rank 3 or 4 with 1 or 3 channels first or last.
    package static func imageInput(_ graph: NetworkGraph) throws -> ImageInput {
        var candidates: [ImageInput] = []
        for value in graph.inputs {
            guard value.elementType == 1, let dims = value.dims, dims.count == 3 || dims.count == 4 else { continue }
            let spatial = dims.count == 4 ? Array(dims.dropFirst()) : dims
            let first = spatial[0], last = spatial[2]
            // Channels first unless the first axis cannot be channels and the last can (NHWC).
            let channelsLast = !(first == 1 || first == 3) && (last == 1 || last == 3)
            let channels = channelsLast ? last : first
            guard channels == 1 || channels == 3 else {
                throw NetworkError(file: graph.path, "input '\(value.name)' has \(first < 0 && last < 0 ? "an unknown number of" : String(channelsLast ? last : first)) channels; image models take 1 or 3 (first or last: NCHW or NHWC)")
            }
            let h = channelsLast ? spatial[0] : spatial[1], w = channelsLast ? spatial[1] : spatial[2]
            let batch = dims.count == 4 && dims[0] > 1 ? dims[0] : nil
            candidates.append(ImageInput(name: value.name, channels: channels, channelsLast: channelsLast, rank: dims.count,
                                         declared: h > 0 && w > 0 ? Size(width: w, height: h) : nil, declaredBatch: batch, extra: []))
        }
        guard var image = candidates.first else {
            throw NetworkError(file: graph.path, graph.inputs.isEmpty ? "the model has no image input"
                               : "no input is a [1, C, H, W] or [1, H, W, C] float image (inputs: "
                               + graph.inputs.map { "'\($0.name)' \($0.dims.map { "\($0)" } ?? "?")" }.joined(separator: ", ") + ")")
        }
        image.extra = graph.inputs.filter { $0.name != image.name }
        guard candidates.count == 1 else {
            throw NetworkError(file: graph.path, "the model has \(candidates.count) image inputs (\(candidates.map(\.name).joined(separator: ", "))); image models take one")
        }
        return image
    }

    /// Lowers `graph` for an input of `input`. `outputs`: the graph outputs to compute (nil: every output,
    /// those that cannot be lowered left out and their reasons kept in `refusedOutputs`). `extraInputs`: the
    /// values of the model's other inputs.
    package static func lower(_ graph: NetworkGraph, input: Size, outputs: [String]? = nil,
                              extraInputs: [String: NetworkConstant] = [:]) throws -> NetworkProgram {
        var lowering = Lowerer(graph: graph, input: input, soft: outputs == nil)
        try lowering.run(outputs: outputs ?? graph.outputs.map(\.name), extraInputs: extraInputs)
        return lowering.program
    }
}

struct Lowerer {
    typealias Value = NetworkLowering.Value
    let graph: NetworkGraph
    let input: Size
    /// True: a node that cannot be lowered fails only the outputs that depend on it.
    let soft: Bool
    var program = NetworkProgram()
    var values: [String: Value] = [:]
    /// How each feature-valued name lies in its feature (absent: canonical NCHW).
    var views: [String: TensorView] = [:]
    /// Plain copies already made of a value (`canonicalFeature`), by name.
    var materialised: [String: Int] = [:]
    /// How many nodes (and graph outputs) read each value.
    var readers: [String: Int] = [:]
    /// The value name each feature currently stands for (the one its layer's last fused step wrote).
    var featureValue: [Int: String] = [:]
    /// Each feature's spatial size.
    var sizes: [Size] = []

    init(graph: NetworkGraph, input: Size, soft: Bool) {
        self.graph = graph
        self.input = input
        self.soft = soft
    }

    func fail(_ node: NetworkGraph.Node?, _ reason: String) -> NetworkError {
        NetworkError(file: graph.path, node: node?.name, reason)
    }

    /// The nodes the outputs depend on.
    func needed(for outputs: [String]) -> [NetworkGraph.Node] {
        var producer: [String: Int] = [:]
        for (i, node) in graph.nodes.enumerated() { for o in node.outputs { producer[o] = i } }
        var wanted = Set<Int>(), stack = outputs.compactMap { producer[$0] }
        while let i = stack.popLast() {
            guard wanted.insert(i).inserted else { continue }
            stack += graph.nodes[i].inputs.compactMap { producer[$0] }
        }
        return graph.nodes.indices.filter { wanted.contains($0) }.map { graph.nodes[$0] }
    }

    mutating func run(outputs: [String], extraInputs: [String: NetworkConstant]) throws {
        let image = try NetworkLowering.imageInput(graph)
        program.inputSize = input
        program.inputChannels = image.channels
        program.fixedInputSize = image.declared
        for (name, tensor) in graph.initializers {
            values[name] = .constant(NetworkConstant(dims: tensor.dims, values: tensor.values,
                                                     integer: NetworkFolding.integerTypes.contains(tensor.elementType)))
        }
        for extra in image.extra {
            guard let value = extraInputs[extra.name] else {
                throw fail(nil, "input '\(extra.name)' \(extra.dims.map { "\($0)" } ?? "") needs a value: "
                           + "model(…, inputs='\(extra.name)=VALUE')")
            }
            values[extra.name] = .constant(value)
        }
        let nodes = needed(for: outputs)
        for node in nodes { for input in node.inputs where !input.isEmpty { readers[input, default: 0] += 1 } }
        for output in outputs { readers[output, default: 0] += 1 }

        let inputFeature = addFeature(channels: image.channels, size: input)
        program.layers.append(.init(op: .input, inputs: [], output: inputFeature, node: "input", fused: []))
        values[image.name] = .feature(inputFeature)
        featureValue[inputFeature] = image.name
        let canonical = TensorView.canonical(channels: image.channels, size: input, rank: image.rank)
        if image.channelsLast, let view = canonical.transposed(image.rank == 4 ? [0, 2, 3, 1] : [1, 2, 0]) {
            views[image.name] = view
        } else {
            views[image.name] = canonical
        }

        for node in nodes {
            let known = values
            if let failed = node.inputs.compactMap({ name -> NetworkError? in
                if case .failed(let e)? = known[name] { return e }
                return nil
            }).first {
                for o in node.outputs { values[o] = .failed(failed) }
                continue
            }
            do {
                try lower(node)
            } catch let error as NetworkError where soft {
                for o in node.outputs { values[o] = .failed(error) }
            } catch let error as NetworkShapeError where soft {
                for o in node.outputs { values[o] = .failed(fail(node, error.reason)) }
            } catch let error as NetworkShapeError {
                throw NetworkError(file: graph.path, node: error.node ?? node.name, error.reason)
            }
        }
        for name in outputs {
            do {
                program.outputs.append(try output(name))
            } catch let error as NetworkError where soft {
                program.refusedOutputs[name] = error.reason
                if program.refusedOutputs.count == 1 { program.firstRefusal = error }
            }
        }
        guard let first = program.outputs.first else {
            throw program.firstRefusal ?? fail(nil, "the model has no output")
        }
        program.outputFeature = first.feature
    }

    /// Graph output `name` as a plain feature.
    mutating func output(_ name: String) throws -> NetworkOutput {
        switch values[name] {
        case .failed(let error)?: throw error
        case .constant?: throw fail(nil, "output '\(name)' does not depend on the input")
        case nil: throw fail(nil, "output '\(name)' is not computed by any node")
        case .feature(let f)?:
            var feature = f, view = self.view(of: name)
            if !view.isPlain(channels: program.features[f].channels, size: sizes[f]) {
                let plan = GatherPlan.make(view, channelAxis: view.rank == 3 && view.dims[2] <= 4 && view.dims[0] > 4 ? 2
                                           : view.rank >= 3 ? view.rank - 3 : view.rank - 1)
                guard let plan else { throw fail(nil, "output '\(name)' of shape \(view.dims) is not an image") }
                feature = gather(plan, from: f, name: name, node: "output \(name)")
                view = plan.result
            }
            return NetworkOutput(name: name, feature: feature, dims: view.dims, channelAxis: view.channelAxis())
        }
    }

    mutating func addFeature(channels: Int, size: Size, float32: Bool = false, global: Bool = false) -> Int {
        program.features.append(.init(channels: channels, producer: program.layers.count, float32: float32,
                                      global: global || (size.width == 1 && size.height == 1)))
        sizes.append(size)
        return program.features.count - 1
    }

    /// Appends a layer writing a new feature (its size computed from its inputs'); returns the feature.
    @discardableResult
    mutating func addLayer(_ op: NetworkProgram.Op, inputs: [Int], channels: Int, node: String, fused: [String], output name: String,
                           float32: Bool = false, global: Bool = false, view: TensorView? = nil) throws -> Int {
        let layer = NetworkProgram.Layer(op: op, inputs: inputs, output: program.features.count, node: node, fused: fused)
        let size = try NetworkProgram.outputSize(of: layer, sizes: sizes, input: input, features: program.features)
        let feature = addFeature(channels: channels, size: global ? Size(width: 1, height: 1) : size, float32: float32, global: global)
        program.layers.append(layer)
        featureValue[feature] = name
        values[name] = .feature(feature)
        views[name] = view
        return feature
    }

    @discardableResult
    mutating func addLayer(_ op: NetworkProgram.Op, inputs: [Int], channels: Int, node: NetworkGraph.Node, output name: String,
                           float32: Bool = false, global: Bool = false, view: TensorView? = nil) throws -> Int {
        try addLayer(op, inputs: inputs, channels: channels, node: node.name, fused: [node.op], output: name, float32: float32,
                     global: global, view: view)
    }

    mutating func weights(_ texels: [SIMD4<Float>]) -> Int {
        let offset = program.weights.count
        program.weights += texels
        return offset
    }

    // MARK: Values and views

    func view(of name: String) -> TensorView {
        if let v = views[name] { return v }
        guard case .feature(let f)? = values[name] else { return TensorView(axes: []) }
        return .canonical(channels: program.features[f].channels, size: sizes[f])
    }

    func constant(_ name: String, _ node: NetworkGraph.Node) throws -> NetworkConstant {
        guard case .constant(let c)? = values[name] else {
            throw fail(node, "input '\(name)' must be a constant (an initializer, a Constant node, or computed from the input's shape)")
        }
        return c
    }

    func optionalConstant(_ node: NetworkGraph.Node, _ index: Int) throws -> NetworkConstant? {
        guard index < node.inputs.count, !node.inputs[index].isEmpty else { return nil }
        return try constant(node.inputs[index], node)
    }

    /// Input `index` of `node` as a feature, however it lies.
    func feature(_ node: NetworkGraph.Node, _ index: Int = 0) throws -> Int {
        guard index < node.inputs.count, case .feature(let f)? = values[node.inputs[index]] else {
            throw fail(node, "input \(index) is missing or not an image tensor")
        }
        return f
    }

    /// Writes `plan` (a view of feature `f`) out as a plain feature.
    mutating func gather(_ plan: GatherPlan, from f: Int, name: String, node: String) -> Int {
        let size = plan.size
        let g = addFeature(channels: plan.channels, size: size, float32: program.features[f].float32)
        program.layers.append(.init(op: .gather(plan), inputs: [f], output: g, node: node, fused: ["layout"]))
        featureValue[g] = name
        return g
    }

    /// Input `index` of `node` as a feature in NCHW order (rank 4, or `channelAxis` given): its view written
    /// out by a gather pass when it is anything else (once per value).
    mutating func canonicalFeature(_ node: NetworkGraph.Node, _ index: Int = 0, channelAxis given: Int? = nil) throws -> Int {
        let f = try feature(node, index)
        let name = node.inputs[index]
        let view = self.view(of: name)
        let channels = program.features[f].channels
        if given == nil, view.isCanonical(channels: channels, size: sizes[f]) { return f }
        if given == nil, let g = materialised[name] { return g }
        let axis = given ?? (view.rank >= 3 ? view.rank - 3 : view.rank - 1)
        guard let plan = GatherPlan.make(view, channelAxis: axis) else {
            throw fail(node, "a tensor of shape \(view.dims) is not an image [1, C, H, W]")
        }
        let g = gather(plan, from: f, name: name, node: node.name)
        if given == nil { materialised[name] = g }
        return g
    }

    /// Whether a step can join the layer writing `f`: the value `f` stands for has this node as its only
    /// reader, is not an output, and the layer has room in its epilogue.
    func fusable(_ f: Int) -> Bool {
        guard let name = featureValue[f] else { return false }
        let layer = program.layers[program.features[f].producer]
        return readers[name] == 1 && !graph.outputs.contains { $0.name == name } && layer.epilogue.count < NetworkLowering.maximumFusedSteps
    }

    /// Applies `step` to feature `f` for `node`: fused into `f`'s layer when only this node reads it, else a
    /// point-wise pass of its own. The node's output then names the result, lying as `view` (default: as the
    /// node's first input).
    mutating func apply(_ step: NetworkProgram.Step, to f: Int, node: NetworkGraph.Node, view: TensorView? = nil,
                        reading name: String? = nil) throws {
        let output = node.outputs[0]
        let lies = view ?? (node.inputs.first.map { self.view(of: $0) })
        // Only where the value read is the one the layer wrote last: a Split's parts are views of one feature,
        // and a step fused for one part would change the others.
        if fusable(f), featureValue[f] == (name ?? node.inputs.first) {
            let layer = program.features[f].producer
            program.layers[layer].epilogue.append(step)
            program.layers[layer].fused.append(node.op)
            featureValue[f] = output
            values[output] = .feature(f)
            views[output] = lies
        } else {
            let g = try addLayer(.pointwise, inputs: [f], channels: program.features[f].channels, node: node, output: output,
                                 float32: program.features[f].float32, global: program.features[f].global, view: lies)
            program.layers[program.features[g].producer].epilogue = [step]
        }
    }

    /// The output of `node` names the same feature as its input, lying as `view`.
    mutating func alias(_ node: NetworkGraph.Node, view: TensorView) throws {
        let f = try feature(node)
        values[node.outputs[0]] = .feature(f)
        views[node.outputs[0]] = view
        // Later steps may fuse into the layer only when nothing else reads the value under its old name.
        if featureValue[f] == node.inputs[0], readers[node.inputs[0]] == 1 { featureValue[f] = node.outputs[0] }
    }
}
