import PrismCore

/// A network lowered to GPU passes, independent of the frame size: what `NetworkLowering` makes from an
/// ONNX graph and `NetworkPasses` writes GLSL from for one size.
///
/// Every value between passes is a *feature*: a [C, H, W] tensor stored channel-packed, four channels to
/// an RGBA texel, the ⌈C/4⌉ channel groups tiled over one 2-D texture (an atlas; see `FeatureLayout`).
/// Every *layer* is one pass writing one feature; element-wise operations and activations that follow a
/// layer are folded into its `epilogue` instead of passes of their own. Weights are one list of texels,
/// uploaded once into a single RGBA32F texture the passes fetch from.
package struct NetworkProgram: Sendable {
    package struct Feature: Sendable {
        package var channels: Int
        /// The layer that writes it.
        package var producer: Int
        /// Sums and statistics stay 32-bit whatever the precision chosen (fp16 overflows past 65504).
        package var float32: Bool
        /// 1×1 spatially (a global pool's output): read at (0, 0) wherever it is broadcast.
        package var global: Bool
        package var groups: Int { (channels + 3) / 4 }
    }

    package enum Activation: Sendable, Equatable {
        case relu, leakyRelu(Float), sigmoid, tanh, clip(Float, Float), hardSigmoid(Float, Float), hardSwish, elu(Float)
        case exp, log, abs, sqrt, reciprocal, erf, gelu, softplus, mish, floor, ceil, round, sign, sin, cos
        case power(Float)
    }

    package enum BinaryOp: String, Sendable { case add = "+", sub = "-", mul = "*", div = "/", min, max, pow }

    /// What a reduction over the channels at each pixel gives (one channel).
    package enum ChannelReduction: String, Sendable { case sum, mean, max, min, sumSquare, l2, logSumExp }

    /// One step of a layer's epilogue, applied to the layer's output texel `v` in order.
    package enum Step: Sendable {
        /// v = v · scale + shift, per channel: two texels per group at the offset (BatchNormalization that could
        /// not be folded, constants broadcast over channels).
        case affine(offset: Int)
        /// v = c / v, c per channel: one texel per group.
        case reciprocal(offset: Int)
        case activation(Activation)
        /// v = v ≥ 0 ? v : slope · v, slope per channel: one texel per group.
        case prelu(offset: Int)
        /// v = v ∘ t (or t ∘ v) with another feature read at the same position (at (0,0) when it is global),
        /// its channel 0 broadcast when it has one channel.
        case tensor(BinaryOp, feature: Int, tensorFirst: Bool)
        /// v = v ∘ k (or k ∘ v), k per channel: one texel per group (the ops an affine cannot express).
        case constant(BinaryOp, offset: Int, constantFirst: Bool)
    }

    package struct Convolution: Sendable {
        package var inChannels: Int, outChannels: Int, groups: Int
        package var kernel: SIMD2<Int>       // (x, y) = (kW, kH)
        package var strides: SIMD2<Int>
        package var dilations: SIMD2<Int>
        /// Explicit pads: (left, top, right, bottom); ignored when `autoPad` is set.
        package var pads: SIMD4<Int>
        package var autoPad: String?
        package var outputPadding: SIMD2<Int>
        /// Input channel groups each output group reads (its first from `headerOffset`).
        package var inputGroupsPerOutputGroup: Int
        package var headerOffset: Int, biasOffset: Int, weightOffset: Int
        package var transposed: Bool
    }

    package struct Pooling: Sendable {
        package var max: Bool
        package var kernel: SIMD2<Int>, strides: SIMD2<Int>, dilations: SIMD2<Int>
        package var pads: SIMD4<Int>
        package var autoPad: String?
        package var ceilMode: Bool
        package var countIncludePad: Bool
    }

    package struct Resizing: Sendable {
        package var linear: Bool
        /// half_pixel, pytorch_half_pixel, align_corners or asymmetric.
        package var coordinates: String
        /// round_prefer_floor, round_prefer_ceil, floor or ceil.
        package var nearestMode: String
        /// Either scales (x, y) or sizes.
        package var scales: SIMD2<Double>?
        package var sizes: Size?
    }

    package enum Rearrangement: Sendable {
        case depthToSpace(block: Int, columnRowDepth: Bool)
        case spaceToDepth(block: Int)
        /// Inputs' first output channels.
        case concat(offsets: [Int])
        case slice(start: Int, step: Int)
    }

    package struct Padding: Sendable {
        package var pads: SIMD4<Int>  // left, top, right, bottom
        package var mode: String      // constant, reflect, edge
        package var value: Float
    }

    package enum Op: Sendable {
        /// The frame, normalised (the kernel's input parameters), resized to a fixed-size model's input.
        case input
        case convolution(Convolution)
        case pooling(Pooling)
        /// Each row's sum (or max) over x: W×H → 1×H. With `statistics`, the feature's groups then its squares' groups.
        case rowReduction(max: Bool, statistics: Bool)
        /// The column's sum (or max) over y: 1×H → 1×1, divided by the pixel count of `meanOver` (a mean).
        case columnReduction(max: Bool, meanOver: Int?)
        /// (x − mean) / √(var + ε) · scale + bias; inputs [x, statistics]; scale and bias as an affine at `offset`.
        /// The statistics are over `groupChannels` channels together (1: instance normalisation; more: group
        /// normalisation, as a Reshape to [N, G, C/G·H·W] around InstanceNormalization exports it).
        case instanceNormalization(epsilon: Float, offset: Int, groupChannels: Int)
        /// The input's view written out as a plain feature (a channel shuffle, a strided crop, a broadcast).
        case gather(GatherPlan)
        /// A reduction over all channels at each pixel: one channel.
        case channelReduction(ChannelReduction)
        /// Softmax (or its log) over the channels at each pixel.
        case softmax(log: Bool)
        /// A constant image, one value per channel (one texel per group at `offset`) everywhere.
        case fill(offset: Int, size: Size)
        case resize(Resizing)
        case rearrange(Rearrangement)
        case pad(Padding)
        /// The input as it is (then the epilogue): an element-wise op that could not be fused.
        case pointwise
    }

    package struct Layer: Sendable {
        package var op: Op
        package var inputs: [Int]
        package var output: Int
        package var epilogue: [Step] = []
        /// The ONNX node it came from, and the ops fused into it (labels, `prism filters`).
        package var node: String
        package var fused: [String]
    }

    package var features: [Feature] = []
    package var layers: [Layer] = []
    package var weights: [SIMD4<Float>] = []
    package var inputChannels: Int = 3
    /// The model's input size when it is fixed (frames are resized to it), nil when dynamic.
    package var fixedInputSize: Size?
    package var outputFeature: Int = 0
    /// The graph outputs lowered, in the order asked for; the first is `outputFeature`.
    package var outputs: [NetworkOutput] = []
    /// Graph outputs that could not be lowered, with the reason (only when every output was asked for).
    package var refusedOutputs: [String: String] = [:]
    var firstRefusal: NetworkError?
    /// The input size the program was made for (shapes folded for it).
    package var inputSize = Size(width: 1, height: 1)
    /// ONNX operators by count (after folding constants).
    package var operators: [String: Int] = [:]

    /// Each feature's spatial size for an input of `input` (the model's own input size for a fixed one).
    package func sizes(input: Size) throws -> [Size] {
        var sizes = [Size](repeating: Size(width: 1, height: 1), count: features.count)
        for layer in layers {
            let out = try Self.outputSize(of: layer, sizes: sizes, input: input, features: features)
            sizes[layer.output] = features[layer.output].global ? Size(width: 1, height: 1) : out
        }
        return sizes
    }

    /// The size `layer` writes, given its inputs' sizes.
    static func outputSize(of layer: Layer, sizes: [Size], input: Size, features: [Feature]) throws -> Size {
        let inSize = layer.inputs.first.map { sizes[$0] } ?? input
        let out: Size
        switch layer.op {
        case .input: out = input
        case .convolution(let c): out = try Self.convolutionSize(c, input: inSize, node: layer.node)
        case .pooling(let p): out = try Self.poolingSize(p, input: inSize, node: layer.node)
        case .rowReduction: out = Size(width: 1, height: inSize.height)
        case .columnReduction: out = Size(width: 1, height: 1)
        case .instanceNormalization, .pointwise, .channelReduction, .softmax: out = inSize
        case .gather(let plan): out = plan.size
        case .fill(_, let size): out = size
        case .resize(let r):
            if let s = r.sizes { out = s } else {
                let s = r.scales!
                let w = Double(inSize.width) * s.x, h = Double(inSize.height) * s.y
                guard w.isFinite, h.isFinite, w >= 1, h >= 1, w <= Double(1 << 20), h <= Double(1 << 20) else {
                    throw NetworkShapeError(node: layer.node, "Resize scales \(s.x), \(s.y) give a \(w)x\(h) image")
                }
                out = Size(width: Int(w.rounded(.down)), height: Int(h.rounded(.down)))
            }
        case .rearrange(let r):
            switch r {
            case .depthToSpace(let b, _): out = Size(width: inSize.width * b, height: inSize.height * b)
            case .spaceToDepth(let b):
                guard inSize.width % b == 0, inSize.height % b == 0 else {
                    throw NetworkShapeError(node: layer.node, "SpaceToDepth needs sides divisible by \(b), got \(inSize)")
                }
                out = Size(width: inSize.width / b, height: inSize.height / b)
            case .concat, .slice:
                out = inSize
                for other in layer.inputs where sizes[other] != inSize && !features[other].global {
                    throw NetworkShapeError(node: layer.node, "Concat of \(inSize) and \(sizes[other]) images")
                }
            }
        case .pad(let p): out = Size(width: inSize.width + p.pads.x + p.pads.z, height: inSize.height + p.pads.y + p.pads.w)
        }
        guard out.width > 0, out.height > 0, out.width <= 1 << 20, out.height <= 1 << 20 else {
            throw NetworkShapeError(node: layer.node, "an input of \(input) leaves \(out.width)x\(out.height) here")
        }
        for step in layer.epilogue {
            if case .tensor(_, let t, _) = step, !features[t].global, sizes[t] != out {
                throw NetworkShapeError(node: layer.node, "element-wise op on \(out) and \(sizes[t]) images")
            }
        }
        return out
    }

    /// (left, top, right, bottom) pads for a window of `kernel` (dilated) at `strides` over `input`.
    static func pads(explicit: SIMD4<Int>, autoPad: String?, kernel: SIMD2<Int>, strides: SIMD2<Int>, dilations: SIMD2<Int>, input: Size) -> SIMD4<Int> {
        guard let autoPad, autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" else { return explicit }
        func axis(_ n: Int, _ k: Int, _ s: Int, _ d: Int) -> (Int, Int) {
            let out = (n + s - 1) / s
            let total = max(0, (out - 1) * s + (k - 1) * d + 1 - n)
            return autoPad == "SAME_UPPER" ? (total / 2, total - total / 2) : (total - total / 2, total / 2)
        }
        let x = axis(input.width, kernel.x, strides.x, dilations.x), y = axis(input.height, kernel.y, strides.y, dilations.y)
        return SIMD4(x.0, y.0, x.1, y.1)
    }

    static func convolutionSize(_ c: Convolution, input: Size, node: String) throws -> Size {
        let p = pads(explicit: c.pads, autoPad: c.autoPad, kernel: c.kernel, strides: c.strides, dilations: c.dilations, input: input)
        let extent = (c.kernel &- 1) &* c.dilations &+ 1
        if c.transposed {
            return Size(width: c.strides.x * (input.width - 1) + c.outputPadding.x + extent.x - p.x - p.z,
                        height: c.strides.y * (input.height - 1) + c.outputPadding.y + extent.y - p.y - p.w)
        }
        let w = (input.width + p.x + p.z - extent.x), h = (input.height + p.y + p.w - extent.y)
        guard w >= 0, h >= 0 else { throw NetworkShapeError(node: node, "a \(c.kernel.x)x\(c.kernel.y) kernel is larger than its \(input) input") }
        return Size(width: w / c.strides.x + 1, height: h / c.strides.y + 1)
    }

    static func poolingSize(_ pool: Pooling, input: Size, node: String) throws -> Size {
        let p = pads(explicit: pool.pads, autoPad: pool.autoPad, kernel: pool.kernel, strides: pool.strides, dilations: pool.dilations, input: input)
        let extent = (pool.kernel &- 1) &* pool.dilations &+ 1
        func axis(_ n: Int, _ a: Int, _ b: Int, _ k: Int, _ s: Int) -> Int {
            let span = n + a + b - k
            return (pool.ceilMode ? (span + s - 1) / s : span / s) + 1
        }
        guard input.width + p.x + p.z >= extent.x, input.height + p.y + p.w >= extent.y else {
            throw NetworkShapeError(node: node, "a \(pool.kernel.x)x\(pool.kernel.y) window is larger than its \(input) input")
        }
        return Size(width: axis(input.width, p.x, p.z, extent.x, pool.strides.x), height: axis(input.height, p.y, p.w, extent.y, pool.strides.y))
    }

    /// The scale of the output over the input (integer, the same on both axes), for an input of `input`.
    package func outputScale(input: Size) throws -> Int {
        let out = try sizes(input: input)[outputFeature]
        guard out.width % input.width == 0, out.height % input.height == 0, out.width / input.width == out.height / input.height else {
            throw NetworkShapeError(node: nil, "the output is \(out.width)x\(out.height) for a \(input.width)x\(input.height) input: "
                                    + "not the same integer scale on both axes")
        }
        return out.width / input.width
    }
}

/// One graph output the program computes: which feature holds it and how its tensor lies there.
package struct NetworkOutput: Sendable {
    package var name: String
    package var feature: Int
    /// The output's shape as the graph gives it (batch 1), e.g. [1, 1, 80, 80] or [180, 320, 3].
    package var dims: [Int]
    /// The axis of `dims` that holds the channels (1 for NCHW, the last for NHWC).
    package var channelAxis: Int?
}

/// A shape problem found for one input size (the node, when one is to blame).
package struct NetworkShapeError: Error, CustomStringConvertible {
    package var description: String { (node.map { "node '\($0)': " } ?? "") + reason }
    package let node: String?
    package let reason: String
    package init(node: String?, _ reason: String) {
        self.node = node
        self.reason = reason
    }
}

/// Where a feature's channel groups lie in its atlas texture: group g's tile starts at
/// ((g mod columns)·width, (g div columns)·height).
package struct FeatureLayout: Sendable, Equatable {
    package var size: Size
    package var groups: Int
    package var columns: Int
    package var rows: Int { (groups + columns - 1) / columns }
    package var atlas: Size { Size(width: size.width * columns, height: size.height * rows) }

    /// The most square atlas that fits `maxSide` (nil if none does).
    package static func fit(size: Size, groups: Int, maxSide: Int) -> FeatureLayout? {
        guard size.width <= maxSide, size.height <= maxSide else { return nil }
        var best: FeatureLayout?
        for columns in 1...max(groups, 1) {
            let layout = FeatureLayout(size: size, groups: groups, columns: columns)
            let a = layout.atlas
            guard a.width <= maxSide, a.height <= maxSide else { continue }
            if best == nil || max(a.width, a.height) < max(best!.atlas.width, best!.atlas.height) { best = layout }
        }
        return best
    }
}
