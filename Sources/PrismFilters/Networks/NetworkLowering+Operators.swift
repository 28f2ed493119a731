import Foundation
import PrismCore

/// The node dispatch, element-wise operators and layout operators of `Lowerer`.
extension Lowerer {
    /// A node's scalar attributes, checked before any is used: NaN is never a valid attribute, an infinity
    /// only where it means "no bound", and integers (pads, strides, sizes) stay within ±2^24 except where a
    /// huge value means "to the end" (Slice). A crafted file fails here in one line instead of trapping later.
    func checkAttributes(_ node: NetworkGraph.Node) throws {
        let unbounded: Set<String> = ["starts", "ends", "min", "max", "value_float", "value_floats", "value_int", "value_ints", "value"]
        for (name, attribute) in node.attributes where !unbounded.contains(name) {
            switch attribute {
            case .float(let v):
                guard v.isFinite else { throw fail(node, "attribute \(name) is \(v), not a finite number") }
            case .floats(let vs):
                guard vs.allSatisfy(\.isFinite) else { throw fail(node, "attribute \(name) holds a value that is not a finite number") }
            case .int(let v):
                guard abs(v) <= 1 << 24 else { throw fail(node, "attribute \(name) is \(v), out of range") }
            case .ints(let vs):
                guard vs.allSatisfy({ abs($0) <= 1 << 24 }) else { throw fail(node, "attribute \(name) holds a value out of range") }
            default: break
            }
        }
        if case .float(let v)? = node.attributes["min"], v.isNaN { throw fail(node, "attribute min is NaN") }
        if case .float(let v)? = node.attributes["max"], v.isNaN { throw fail(node, "attribute max is NaN") }
    }

    mutating func lower(_ node: NetworkGraph.Node) throws {
        guard node.domain.isEmpty || node.domain == "ai.onnx" else {
            throw fail(node, "operator '\(node.domain).\(node.op)' is not supported (only the default ONNX domain is)")
        }
        guard !node.outputs.isEmpty else { return }
        try checkAttributes(node)
        if node.op == "Constant" {
            values[node.outputs[0]] = .constant(try constantNode(node))
            return
        }
        // Shape and Size need only the shape of what they read: fold them for features too.
        if node.op == "Shape" || node.op == "Size", case .feature? = values[node.inputs[0]] {
            let dims = view(of: node.inputs[0]).dims
            var shape = dims
            if node.op == "Shape" {
                let rank = dims.count
                let start = min(max((node.int("start") ?? 0) < 0 ? (node.int("start") ?? 0) + rank : node.int("start") ?? 0, 0), rank)
                let end = min(max((node.int("end") ?? rank) < 0 ? (node.int("end") ?? rank) + rank : node.int("end") ?? rank, start), rank)
                shape = Array(dims[start..<end])
            }
            values[node.outputs[0]] = .constant(node.op == "Shape" ? NetworkConstant(dims: [shape.count], values: shape.map(Float.init), integer: true)
                                                : NetworkConstant(dims: [], values: [Float(dims.reduce(1, *))], integer: true))
            return
        }
        let inputsConstant = node.inputs.allSatisfy { name in
            guard !name.isEmpty else { return true }
            if case .constant? = values[name] { return true }
            return false
        }
        if inputsConstant, !node.inputs.isEmpty {
            let inputs = try node.inputs.map { $0.isEmpty ? nil : try constant($0, node) }
            do {
                if let folded = try NetworkFolding.fold(node, inputs) ?? dequantize(node, inputs) {
                    for (name, value) in zip(node.outputs, folded) { values[name] = .constant(value) }
                    return
                }
            } catch let failure as NetworkFolding.Failure {
                throw fail(node, failure.reason)
            }
        }
        program.operators[node.op, default: 0] += 1
        try lowerOnImage(node)
    }

    func constantNode(_ node: NetworkGraph.Node) throws -> NetworkConstant {
        if case .tensor(let t)? = node.attributes["value"] {
            return NetworkConstant(dims: t.dims, values: t.values, integer: NetworkFolding.integerTypes.contains(t.elementType))
        } else if let f = node.float("value_float") {
            return NetworkConstant(dims: [], values: [f])
        } else if let fs = node.floats("value_floats") {
            return NetworkConstant(dims: [fs.count], values: fs)
        } else if let i = node.int("value_int") {
            return NetworkConstant(dims: [], values: [Float(i)], integer: true)
        } else if let ints = node.ints("value_ints") {
            return NetworkConstant(dims: [ints.count], values: ints.map(Float.init), integer: true)
        }
        throw fail(node, "Constant without a numeric value")
    }

    /// DequantizeLinear of a constant (quantised weights): (x − zero point) · scale, per tensor or per axis.
    func dequantize(_ node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> [NetworkConstant]? {
        guard node.op == "DequantizeLinear", let x = inputs[0], let scale = inputs.count > 1 ? inputs[1] : nil else { return nil }
        let zero = inputs.count > 2 ? inputs[2] : nil
        let axis = try NetworkFolding.axis(node.int("axis") ?? 1, rank: max(x.dims.count, 1))
        let inner = x.dims.suffix(from: min(axis + 1, x.dims.count)).reduce(1, *)
        let values = x.values.indices.map { i -> Float in
            let k = scale.isScalar ? 0 : (i / inner) % scale.count
            return (x.values[i] - (zero.map { $0.values[$0.isScalar ? 0 : k] } ?? 0)) * scale.values[k]
        }
        return [NetworkConstant(dims: x.dims, values: values)]
    }

    mutating func lowerOnImage(_ node: NetworkGraph.Node) throws {
        switch node.op {
        case "Identity", "Dropout", "Cast": try alias(node, view: view(of: node.inputs[0]))
        case "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Expand": try layout(node)
        case "Slice": try slice(node)
        case "Split": try split(node)
        case "Gather": try gatherIndices(node)
        case "Conv", "ConvTranspose": try convolution(node)
        case "BatchNormalization": try batchNormalization(node)
        case "InstanceNormalization": try instanceNormalization(node)
        case "MatMul", "Gemm": try matrixProduct(node)
        case "Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Sum", "Mean": try elementwise(node)
        case "Concat": try concat(node)
        case "Resize", "Upsample": try resize(node)
        case "DepthToSpace", "SpaceToDepth": try depthSpace(node)
        case "MaxPool", "AveragePool": try pooling(node)
        case "GlobalAveragePool", "GlobalMaxPool": try globalPool(node, max: node.op == "GlobalMaxPool", input: try canonicalFeature(node))
        case "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp": try reduce(node)
        case "Softmax", "LogSoftmax": try softmax(node)
        case "Pad": try pad(node)
        case "PRelu":
            let f = try feature(node)
            let slope = try perChannel(try constant(node.inputs[1], node), of: node.inputs[0], node: node)
            try apply(.prelu(offset: weights(texels(slope))), to: f, node: node)
        case "Neg":
            let f = try feature(node)
            try apply(scaling(by: -1, channels: program.features[f].channels), to: f, node: node)
        case "Selu", "Celu":
            // Celu: alpha · elu(x / alpha); Selu: gamma · elu_alpha(x).
            let alpha = node.float("alpha") ?? (node.op == "Selu" ? 1.67326319 : 1), gamma = node.float("gamma") ?? 1.05070102
            let c = program.features[try feature(node)].channels
            func scale(_ k: Float) -> NetworkProgram.Step { scaling(by: k, channels: c) }
            let steps: [NetworkProgram.Step] = node.op == "Celu" ? [scale(1 / alpha), .activation(.elu(1)), scale(alpha)]
                                                                 : [.activation(.elu(alpha)), scale(gamma)]
            for (k, step) in steps.enumerated() {
                let reading = k == 0 ? node : renamed(node)
                try apply(step, to: try feature(reading), node: reading)
            }
        case "Clip":
            // opset ≥ 11: min and max are optional inputs; before, attributes.
            let low = try optionalConstant(node, 1)?.values.first ?? node.float("min") ?? -.greatestFiniteMagnitude
            let high = try optionalConstant(node, 2)?.values.first ?? node.float("max") ?? .greatestFiniteMagnitude
            guard !low.isNaN, !high.isNaN else { throw fail(node, "Clip bounds are NaN") }
            try apply(.activation(.clip(low, high)), to: try feature(node), node: node)
        default:
            guard let activation = try activation(node) else {
                throw fail(node, "operator '\(node.op)' is not supported (docs/models.md lists the operators Prism lowers)")
            }
            try apply(.activation(activation), to: try feature(node), node: node)
        }
    }

    /// The operators that are one activation without attributes.
    private static let plainActivations: [String: NetworkProgram.Activation] = [
        "Relu": .relu, "Sigmoid": .sigmoid, "Tanh": .tanh, "HardSwish": .hardSwish, "Exp": .exp, "Log": .log, "Abs": .abs,
        "Sqrt": .sqrt, "Reciprocal": .reciprocal, "Erf": .erf, "Gelu": .gelu, "Softplus": .softplus, "Mish": .mish,
        "Floor": .floor, "Ceil": .ceil, "Round": .round, "Sign": .sign, "Sin": .sin, "Cos": .cos
    ]

    func activation(_ node: NetworkGraph.Node) throws -> NetworkProgram.Activation? {
        switch node.op {
        case "LeakyRelu": return .leakyRelu(node.float("alpha") ?? 0.01)
        case "Elu": return .elu(node.float("alpha") ?? 1)
        case "HardSigmoid": return .hardSigmoid(node.float("alpha") ?? 0.2, node.float("beta") ?? 0.5)
        default: return Self.plainActivations[node.op]
        }
    }

    // MARK: Element-wise

    /// One texel per group of per-channel values (lanes past the last channel 0).
    func texels(_ values: [Float]) -> [SIMD4<Float>] {
        stride(from: 0, to: values.count, by: 4).map { base in SIMD4((0..<4).map { base + $0 < values.count ? values[base + $0] : 0 }) }
    }

    func affine(scale: [Float], shift: [Float]) -> [SIMD4<Float>] {
        var out: [SIMD4<Float>] = []
        for (s, t) in zip(texels(scale), texels(shift)) { out += [s, t] }
        return out
    }

    /// Every one of `channels` channels times `k`.
    mutating func scaling(by k: Float, channels: Int) -> NetworkProgram.Step {
        .affine(offset: weights(affine(scale: [Float](repeating: k, count: channels), shift: [Float](repeating: 0, count: channels))))
    }

    /// A constant as one value per channel of the feature `name` names (a scalar repeated): it may vary
    /// only along the tensor's channel axis.
    func perChannel(_ c: NetworkConstant, of name: String, node: NetworkGraph.Node) throws -> [Float] {
        guard case .feature(let f)? = values[name] else { throw fail(node, "input '\(name)' is not an image tensor") }
        let channels = program.features[f].channels
        if c.isScalar { return [Float](repeating: c.values[0], count: channels) }
        let view = self.view(of: name)
        var dims = c.dims
        while dims.count > view.rank, dims.first == 1 { dims.removeFirst() }
        let varying = dims.indices.filter { dims[$0] != 1 }.map { $0 + view.rank - dims.count }
        guard dims.count <= view.rank, varying.count == 1, view.isPlain(channels: channels, size: sizes[f]),
              view.axis(of: .c) == varying[0], c.count == channels else {
            throw fail(node, "a constant of shape \(c.dims) varies other than per channel over a tensor of shape \(view.dims)")
        }
        return c.values
    }

    mutating func elementwise(_ node: NetworkGraph.Node) throws {
        let ops: [String: NetworkProgram.BinaryOp] = ["Add": .add, "Sub": .sub, "Mul": .mul, "Div": .div, "Pow": .pow, "Min": .min,
                                                     "Max": .max, "Sum": .add, "Mean": .add]
        let op = ops[node.op]!
        let inputs = node.inputs.filter { !$0.isEmpty }
        guard !inputs.isEmpty else { throw fail(node, "\(node.op) needs inputs") }
        if inputs.count == 1 { return try alias(node, view: view(of: inputs[0])) }
        // n-ary ops as a chain of binary ones, each step's result a value of its own.
        var left = inputs[0]
        for (k, right) in inputs.dropFirst().enumerated() {
            let last = k == inputs.count - 2 && node.op != "Mean"
            let name = last ? node.outputs[0] : node.outputs[0] + "#\(k)"
            if !last { readers[name, default: 0] += 1 }
            try binary(op, left, right, output: name, node: node)
            left = name
        }
        if node.op == "Mean" {
            guard case .feature(let f)? = values[left] else { return }
            let step = scaling(by: 1 / Float(inputs.count), channels: program.features[f].channels)
            try apply(step, to: f, node: node, view: view(of: left), reading: left)
        }
    }

    /// `output = a op b` where at least one is a feature.
    mutating func binary(_ op: NetworkProgram.BinaryOp, _ a: String, _ b: String, output: String, node: NetworkGraph.Node) throws {
        let named = NetworkGraph.Node(name: node.name, op: node.op, domain: node.domain, inputs: [a, b], outputs: [output],
                                      attributes: [:])
        switch (values[a], values[b]) {
        case (.feature(let f)?, .constant(let c)?):
            try withConstant(op, f, c, featureName: a, constantFirst: false, node: named)
        case (.constant(let c)?, .feature(let f)?):
            try withConstant(op, f, c, featureName: b, constantFirst: true, node: named)
        case (.feature?, .feature?):
            try withTensor(op, named)
        default:
            throw fail(node, "\(node.op) has an input that is neither an image nor a constant")
        }
    }

    mutating func withConstant(_ op: NetworkProgram.BinaryOp, _ f: Int, _ c: NetworkConstant, featureName: String, constantFirst: Bool,
                               node: NetworkGraph.Node) throws {
        var f = f, name = featureName
        let v = view(of: featureName)
        if !c.isScalar && !v.isPlain(channels: program.features[f].channels, size: sizes[f]) {
            // A per-channel constant needs the channels where they are stored: the tensor written out first.
            f = try canonicalFeature(node, constantFirst ? 1 : 0)
            name = featureName + "#plain"
            values[name] = .feature(f)
            views[name] = GatherPlan.make(v, channelAxis: v.rank >= 3 ? v.rank - 3 : v.rank - 1)?.result
        }
        let k = try perChannel(c, of: name, node: node)
        let channels = program.features[f].channels
        let ones = [Float](repeating: 1, count: channels), zeros = [Float](repeating: 0, count: channels)
        let step: NetworkProgram.Step
        switch (op, constantFirst) {
        case (.add, _): step = .affine(offset: weights(affine(scale: ones, shift: k)))
        case (.sub, false): step = .affine(offset: weights(affine(scale: ones, shift: k.map { -$0 })))
        case (.sub, true): step = .affine(offset: weights(affine(scale: ones.map { -$0 }, shift: k)))
        case (.mul, _): step = .affine(offset: weights(affine(scale: k, shift: zeros)))
        case (.div, false): step = .affine(offset: weights(affine(scale: k.map { 1 / $0 }, shift: zeros)))
        case (.div, true): step = .reciprocal(offset: weights(texels(k)))
        case (.pow, false) where Set(k).count == 1: step = .activation(.power(k[0]))
        default: step = .constant(op, offset: weights(texels(k)), constantFirst: constantFirst)
        }
        try apply(step, to: f, node: node, view: view(of: name), reading: name == featureName ? featureName : featureValue[f])
    }

    /// Feature ∘ feature: the same layout, or one broadcast over the other's channels (one channel) or
    /// pixels (1×1); anything else is first written out as NCHW.
    mutating func withTensor(_ op: NetworkProgram.BinaryOp, _ node: NetworkGraph.Node) throws {
        var fa = try feature(node, 0), fb = try feature(node, 1)
        var va = view(of: node.inputs[0]), vb = view(of: node.inputs[1])
        let rank = max(va.rank, vb.rank)
        while va.rank < rank { va = va.inserting(axis: 0) }
        while vb.rank < rank { vb = vb.inserting(axis: 0) }
        guard let dims = NetworkConstant.broadcast(va.dims, vb.dims) else {
            throw fail(node, "\(node.op) of tensors of shapes \(va.dims) and \(vb.dims)")
        }
        func fits(_ small: TensorView, _ fs: Int, into big: TensorView, _ fbig: Int) -> Bool {
            guard small.offset == big.offset || (program.features[fs].global && program.features[fs].channels == 1) else { return false }
            let s = small.stored, b = big.stored
            for axis in 0..<rank where !s[axis].isEmpty && s[axis] != b[axis] { return false }
            let roles = Set(s.flatMap { $0.map(\.role) })
            let sameSize = sizes[fs] == sizes[fbig] || program.features[fs].global
            let sameChannels = program.features[fs].channels == program.features[fbig].channels || program.features[fs].channels == 1
            return sameSize && sameChannels && (roles.contains(.c) || program.features[fs].channels == 1)
                && ((roles.contains(.y) || sizes[fbig].height == 1 || program.features[fs].global)
                    && (roles.contains(.x) || sizes[fbig].width == 1 || program.features[fs].global))
        }
        var big: (Int, TensorView), small: Int, smallFirst: Bool
        if va.dims == dims && fits(vb, fb, into: va, fa) {
            (big, small, smallFirst) = ((fa, va), fb, false)
        } else if vb.dims == dims && fits(va, fa, into: vb, fb) {
            (big, small, smallFirst) = ((fb, vb), fa, true)
        } else {
            // Written out with the channels where either operand keeps them (NHWC stays NHWC).
            let channelAxis = va.channelAxis() ?? vb.channelAxis() ?? (rank >= 3 ? rank - 3 : rank - 1)
            fa = try canonicalFeature(node, 0, channelAxis: channelAxis)
            fb = try canonicalFeature(node, 1, channelAxis: channelAxis)
            let ca = program.features[fa], cb = program.features[fb]
            if ca.channels >= cb.channels && (sizes[fa] == sizes[fb] || cb.global) && (ca.channels == cb.channels || cb.channels == 1) {
                (big, small, smallFirst) = ((fa, GatherPlan.make(va, channelAxis: channelAxis)!.result), fb, false)
            } else if (sizes[fa] == sizes[fb] || ca.global) && (ca.channels == cb.channels || ca.channels == 1) {
                (big, small, smallFirst) = ((fb, GatherPlan.make(vb, channelAxis: channelAxis)!.result), fa, true)
            } else {
                throw fail(node, "\(node.op) of tensors of shapes \(va.dims) and \(vb.dims) (as images \(ca.channels)x\(sizes[fa]) "
                           + "and \(cb.channels)x\(sizes[fb]))")
            }
        }
        let (target, view) = big
        let step = NetworkProgram.Step.tensor(op, feature: small, tensorFirst: smallFirst)
        // Fuse onto the later producer when it is the big one (the other operand exists by then).
        let fsm = program.features[small], fbg = program.features[target]
        let names = (a: node.inputs[0], b: node.inputs[1])
        let smallName = smallFirst ? names.a : names.b, bigName = smallFirst ? names.b : names.a
        if fsm.channels == fbg.channels, fsm.global == fbg.global, fsm.producer > fbg.producer, fusable(small), featureValue[small] == smallName {
            try apply(.tensor(op, feature: target, tensorFirst: !smallFirst), to: small, node: node, view: view, reading: smallName)
        } else if fusable(target), fbg.producer > fsm.producer, featureValue[target] == bigName {
            try apply(step, to: target, node: node, view: view, reading: bigName)
        } else {
            let g = try addLayer(.pointwise, inputs: [target], channels: fbg.channels, node: node, output: node.outputs[0],
                                 float32: fbg.float32, global: fbg.global, view: view)
            program.layers[program.features[g].producer].epilogue = [step]
        }
    }

    // MARK: Layout

    /// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand: a new view of the same feature where the
    /// digits allow, else the tensor written out first.
    mutating func layout(_ node: NetworkGraph.Node) throws {
        let v = view(of: node.inputs[0])
        let dims = v.dims
        func target() throws -> [Int] {
            switch node.op {
            case "Reshape":
                var shape = try constant(node.inputs[1], node).ints ?? []
                for i in shape.indices where shape[i] == 0 && i < dims.count && node.int("allowzero") != 1 { shape[i] = dims[i] }
                if let unknown = shape.firstIndex(of: -1) {
                    let known = shape.enumerated().filter { $0.offset != unknown }.reduce(1) { $0 * $1.element }
                    guard known > 0 else { throw fail(node, "Reshape to \(shape)") }
                    shape[unknown] = dims.reduce(1, *) / known
                }
                return shape
            case "Flatten":
                let axis = try NetworkFolding.axis(node.int("axis") ?? 1, rank: dims.count + 1)
                return [dims.prefix(axis).reduce(1, *), dims.suffix(from: axis).reduce(1, *)]
            case "Squeeze":
                let given = try node.ints("axes") ?? optionalConstant(node, 1)?.ints
                let axes = try given.map { try $0.map { try NetworkFolding.axis($0, rank: dims.count) } } ?? dims.indices.filter { dims[$0] == 1 }
                guard axes.allSatisfy({ dims[$0] == 1 }) else { throw fail(node, "Squeeze of an axis longer than 1") }
                return dims.enumerated().filter { !axes.contains($0.offset) }.map(\.element)
            case "Unsqueeze":
                let given = try node.ints("axes") ?? optionalConstant(node, 1)?.ints ?? []
                var out = dims
                for a in try given.map({ try NetworkFolding.axis($0, rank: dims.count + given.count) }).sorted() { out.insert(1, at: min(a, out.count)) }
                return out
            default: return dims
            }
        }
        var result: TensorView?
        switch node.op {
        case "Transpose":
            result = v.transposed(node.ints("perm") ?? Array((0..<v.rank).reversed()))
            guard result != nil else { throw fail(node, "Transpose perm \(node.ints("perm") ?? []) of a rank-\(v.rank) tensor") }
        case "Expand":
            let shape = try constant(node.inputs[1], node).ints ?? []
            guard let out = NetworkConstant.broadcast(dims, shape), out.reduce(1, *) <= 1 << 28 else {
                throw fail(node, "Expand of \(dims) to \(shape)")
            }
            var e = v
            while e.rank < out.count { e = e.inserting(axis: 0) }
            for a in out.indices where e.dims[a] == 1 && out[a] != 1 { e = e.expanded(axis: a, to: out[a]) }
            result = e
        default:
            let shape = try target()
            result = v.reshaped(shape)
            if result == nil {
                // The digits do not regroup (a reshape across a crop or a broadcast): write it out, then reshape.
                let f = try canonicalFeature(node, 0, channelAxis: v.rank >= 3 ? v.rank - 3 : v.rank - 1)
                let plain = GatherPlan.make(v, channelAxis: v.rank >= 3 ? v.rank - 3 : v.rank - 1)!.result
                guard let r = plain.reshaped(shape) else { throw fail(node, "\(node.op) of \(dims) to \(shape)") }
                values[node.outputs[0]] = .feature(f)
                views[node.outputs[0]] = r
                featureValue[f] = node.outputs[0]
                return
            }
        }
        try alias(node, view: result!)
    }

    mutating func slice(_ node: NetworkGraph.Node) throws {
        var v = view(of: node.inputs[0])
        let dims = v.dims
        // opset ≥ 10: starts, ends, axes, steps as inputs; before, attributes.
        let starts = try optionalConstant(node, 1)?.ints ?? node.ints("starts") ?? []
        let ends = try optionalConstant(node, 2)?.ints ?? node.ints("ends") ?? []
        let axes = try optionalConstant(node, 3)?.ints ?? node.ints("axes") ?? Array(0..<starts.count)
        let steps = try optionalConstant(node, 4)?.ints ?? [Int](repeating: 1, count: starts.count)
        guard starts.count == ends.count, axes.count == starts.count, steps.count == starts.count else {
            throw fail(node, "Slice with \(starts.count) starts, \(ends.count) ends and \(axes.count) axes")
        }
        for k in starts.indices {
            let a = try NetworkFolding.axis(axes[k], rank: v.rank), n = dims[a]
            guard steps[k] >= 1 else { throw fail(node, "Slice with step \(steps[k]) (only positive steps are supported)") }
            func clamp(_ i: Int) -> Int { min(max(i < 0 ? i + n : i, 0), n) }
            let start = clamp(starts[k]), end = clamp(ends[k])
            let count = end > start ? (end - start + steps[k] - 1) / steps[k] : 0
            guard count > 0 else { throw fail(node, "Slice leaves nothing of axis \(a)") }
            if v.sliced(axis: a, start: start, count: count, step: steps[k]) == nil, k == 0 {
                // The axis is several digits (a channel shuffle): written out first, then sliced.
                let (f, plain) = try writtenOut(node)
                values[node.inputs[0] + "#plain"] = .feature(f)
                v = plain
            }
            guard let s = v.sliced(axis: a, start: start, count: count, step: steps[k]) else {
                throw fail(node, "Slice of axis \(a), which is several axes reshaped into one")
            }
            v = s
        }
        if case .feature(let f)? = values[node.inputs[0] + "#plain"] {
            values[node.outputs[0]] = .feature(f)
            views[node.outputs[0]] = v
            return
        }
        try alias(node, view: v)
    }

    mutating func split(_ node: NetworkGraph.Node) throws {
        var v = view(of: node.inputs[0])
        let axis = try NetworkFolding.axis(node.int("axis") ?? 0, rank: v.rank)
        let n = v.dims[axis]
        var parts = try optionalConstant(node, 1)?.ints ?? node.ints("split") ?? []
        if parts.isEmpty {
            let count = node.outputs.count
            let each = (n + count - 1) / count
            parts = (0..<count).map { min(each, n - $0 * each) }
        }
        guard parts.count == node.outputs.count, parts.reduce(0, +) == n, parts.allSatisfy({ $0 > 0 }) else {
            throw fail(node, "Split of \(n) into \(parts)")
        }
        var f = try feature(node)
        if (0..<parts.count).contains(where: { k in v.sliced(axis: axis, start: parts.prefix(k).reduce(0, +), count: parts[k], step: 1) == nil }) {
            // The axis is several digits (a channel shuffle): written out first, then split.
            (f, v) = try writtenOut(node)
        }
        var start = 0
        for (name, count) in zip(node.outputs, parts) {
            guard let s = v.sliced(axis: axis, start: start, count: count, step: 1) else {
                throw fail(node, "Split of axis \(axis), which is several axes reshaped into one")
            }
            values[name] = .feature(f)
            views[name] = s
            start += count
        }
    }

    /// Gather on an image tensor with constant indices that are one index or a run: a slice.
    mutating func gatherIndices(_ node: NetworkGraph.Node) throws {
        let v = view(of: node.inputs[0])
        let axis = try NetworkFolding.axis(node.int("axis") ?? 0, rank: v.rank)
        let indices = try constant(node.inputs[1], node)
        guard let idx = indices.ints, let first = idx.first, idx.enumerated().allSatisfy({ $0.element == first + $0.offset }) else {
            throw fail(node, "Gather on an image is supported for one index or a run of indices")
        }
        let start = first < 0 ? first + v.dims[axis] : first
        guard start >= 0, start + idx.count <= v.dims[axis], var s = v.sliced(axis: axis, start: start, count: idx.count, step: 1) else {
            throw fail(node, "Gather indices \(idx) outside axis \(axis) of \(v.dims)")
        }
        if indices.dims.isEmpty { s = s.removing(axis: axis) }
        try alias(node, view: s)
    }
}

extension Lowerer {
    /// Input 0 of `node` written out as a plain feature (channels where its view has them), and its new view.
    mutating func writtenOut(_ node: NetworkGraph.Node) throws -> (Int, TensorView) {
        let v = view(of: node.inputs[0])
        let axis = v.channelAxis() ?? (v.rank >= 3 ? v.rank - 3 : v.rank - 1)
        guard let plan = GatherPlan.make(v, channelAxis: axis) else { throw fail(node, "a tensor of shape \(v.dims) is not an image") }
        return (try canonicalFeature(node, 0, channelAxis: axis), plan.result)
    }

    /// `node` reading its own output: the second step of an operator lowered as two.
    func renamed(_ node: NetworkGraph.Node) -> NetworkGraph.Node {
        NetworkGraph.Node(name: node.name, op: node.op, domain: node.domain, inputs: [node.outputs[0]], outputs: node.outputs,
                          attributes: node.attributes)
    }
}
