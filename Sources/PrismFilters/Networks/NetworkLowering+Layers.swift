import PrismCore

/// The layers of `Lowerer` that read neighbourhoods or whole channels: convolutions, normalisation,
/// pooling, resizing, padding, channel rearrangements, reductions and softmax, products with constants.
extension Lowerer {
    // MARK: Convolution

    /// Packs a convolution's weights (`weight(oc, ic, tap)`, 0 where not connected) and bias as texels:
    /// per output group, a header (its first input group), the bias, then per input group read and tap the
    /// 4×4 matrix.
    mutating func packConvolution(inChannels: Int, outChannels: Int, groups: Int, taps: Int, bias: [Float],
                                  weight: (Int, Int, Int) -> Float) -> (count: Int, header: Int, bias: Int, weights: Int) {
        let inPerGroup = inChannels / groups, outPerGroup = outChannels / groups
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
                            guard oc < outChannels, ic < inChannels, ic / inPerGroup == oc / outPerGroup else { return 0 }
                            return weight(oc, ic, t)
                        }))
                    }
                }
            }
        }
        return (count, weights(header), weights(biasTexels), weights(kernelTexels))
    }

    mutating func convolution(_ node: NetworkGraph.Node) throws {
        let transposed = node.op == "ConvTranspose"
        let f = try canonicalFeature(node)
        let w = try constant(node.inputs[1], node)
        guard w.dims.count == 4 else { throw fail(node, "\(node.op) with a \(w.dims.count)-D kernel (only 2-D images are supported)") }
        let groups = node.int("group") ?? 1
        let inChannels = program.features[f].channels
        let outChannels = transposed ? w.dims[1] * groups : w.dims[0]
        let kernel = SIMD2(w.dims[3], w.dims[2])
        guard groups >= 1, inChannels % groups == 0, outChannels % groups == 0, outChannels >= 1,
              (transposed ? w.dims[0] : w.dims[1] * groups) == inChannels else {
            throw fail(node, "a \(w.dims) kernel with group=\(groups) does not fit a \(inChannels)-channel input")
        }
        if let shape = node.ints("kernel_shape"), shape != [kernel.y, kernel.x] {
            throw fail(node, "kernel_shape \(shape) disagrees with the weights' \(w.dims)")
        }
        var pads = node.ints("pads") ?? [0, 0, 0, 0]
        guard pads.count == 4, pads.allSatisfy({ $0 >= 0 }) else { throw fail(node, "pads \(pads) for a 2-D convolution") }
        var autoPad = node.string("auto_pad").flatMap { $0 == "NOTSET" || $0 == "VALID" ? nil : $0 }
        let strides = node.ints("strides") ?? [1, 1], dilations = node.ints("dilations") ?? [1, 1]
        var outputPadding = node.ints("output_padding") ?? [0, 0]
        guard strides.count == 2, dilations.count == 2, strides.allSatisfy({ $0 >= 1 }), dilations.allSatisfy({ $0 >= 1 }),
              outputPadding.count == 2, outputPadding.allSatisfy({ $0 >= 0 }) else {
            throw fail(node, "strides and dilations must be two positive numbers")
        }
        if transposed, autoPad != nil || node.ints("output_shape") != nil {
            // The pads that give the output shape asked for (or the input's times the stride), split as
            // onnxruntime does: the odd one at the end, except with SAME_UPPER.
            let shape = node.ints("output_shape").map { Array($0.suffix(2)) }
                ?? [sizes[f].height * strides[0], sizes[f].width * strides[1]]
            guard shape.count == 2 else { throw fail(node, "ConvTranspose output_shape \(node.ints("output_shape") ?? [])") }
            let input = [sizes[f].height, sizes[f].width], kernelSides = [kernel.y, kernel.x]
            for axis in 0..<2 {
                let total = strides[axis] * (input[axis] - 1) + outputPadding[axis] + (kernelSides[axis] - 1) * dilations[axis] + 1 - shape[axis]
                if total < 0 {
                    outputPadding[axis] -= total
                    pads[axis] = 0
                    pads[axis + 2] = 0
                } else if autoPad == "SAME_UPPER" {
                    pads[axis] = total - total / 2
                    pads[axis + 2] = total / 2
                } else {
                    pads[axis] = total / 2
                    pads[axis + 2] = total - total / 2
                }
            }
            autoPad = nil
        }
        let bias = try optionalConstant(node, 2)?.values ?? [Float](repeating: 0, count: outChannels)
        guard bias.count == outChannels else { throw fail(node, "bias of \(bias.count) for \(outChannels) output channels") }
        let inPerGroup = inChannels / groups, outPerGroup = outChannels / groups
        let taps = kernel.x * kernel.y
        let packed = packConvolution(inChannels: inChannels, outChannels: outChannels, groups: groups, taps: taps, bias: bias) { oc, ic, t in
            let group = oc / outPerGroup
            if transposed { return w.values[((ic * outPerGroup + (oc - group * outPerGroup)) * taps) + t] }
            return w.values[((oc * inPerGroup + (ic - group * inPerGroup)) * taps) + t]
        }
        let conv = NetworkProgram.Convolution(
            inChannels: inChannels, outChannels: outChannels, groups: groups, kernel: kernel,
            strides: SIMD2(strides[1], strides[0]), dilations: SIMD2(dilations[1], dilations[0]),
            pads: SIMD4(pads[1], pads[0], pads[3], pads[2]), autoPad: autoPad,
            outputPadding: SIMD2(outputPadding.count == 2 ? outputPadding[1] : 0, outputPadding.count == 2 ? outputPadding[0] : 0),
            inputGroupsPerOutputGroup: packed.count, headerOffset: packed.header, biasOffset: packed.bias,
            weightOffset: packed.weights, transposed: transposed)
        try addLayer(.convolution(conv), inputs: [f], channels: outChannels, node: node, output: node.outputs[0])
    }

    /// A [.., C] × [C, K] product (MatMul, Gemm) with a constant: a 1×1 convolution over the channels, the
    /// tensor's last axis (squeeze-excitation written with Linear layers, Tensordot over NHWC features).
    mutating func matrixProduct(_ node: NetworkGraph.Node) throws {
        guard node.inputs.count >= 2, case .constant(let b)? = values[node.inputs[1]], b.dims.count == 2 else {
            throw fail(node, "\(node.op) is supported with a constant 2-D right operand (a product of two images is not)")
        }
        let gemm = node.op == "Gemm"
        if gemm, node.int("transA") == 1 { throw fail(node, "Gemm with transA is not supported") }
        let transB = gemm && node.int("transB") == 1
        let alpha = gemm ? node.float("alpha") ?? 1 : 1, beta = gemm ? node.float("beta") ?? 1 : 1
        let (inChannels, outChannels) = transB ? (b.dims[1], b.dims[0]) : (b.dims[0], b.dims[1])
        var v = view(of: node.inputs[0])
        var f = try feature(node)
        let last = v.rank - 1
        guard v.dims[last] == inChannels else { throw fail(node, "\(node.op) of \(v.dims) by \(b.dims)") }
        if !(v.isPlain(channels: program.features[f].channels, size: sizes[f]) && v.channelAxis() == last) {
            f = try canonicalFeature(node, 0, channelAxis: last)
            v = GatherPlan.make(v, channelAxis: last)!.result
        }
        var bias = [Float](repeating: 0, count: outChannels)
        if gemm, let c = try optionalConstant(node, 2) {
            guard c.isScalar || c.count == outChannels else { throw fail(node, "Gemm bias of \(c.dims) for \(outChannels) outputs") }
            bias = (0..<outChannels).map { beta * c.values[c.isScalar ? 0 : $0] }
        }
        let packed = packConvolution(inChannels: inChannels, outChannels: outChannels, groups: 1, taps: 1, bias: bias) { oc, ic, _ in
            alpha * (transB ? b.values[oc * inChannels + ic] : b.values[ic * outChannels + oc])
        }
        let conv = NetworkProgram.Convolution(
            inChannels: inChannels, outChannels: outChannels, groups: 1, kernel: SIMD2(1, 1), strides: SIMD2(1, 1), dilations: SIMD2(1, 1),
            pads: .zero, autoPad: nil, outputPadding: .zero, inputGroupsPerOutputGroup: packed.count, headerOffset: packed.header,
            biasOffset: packed.bias, weightOffset: packed.weights, transposed: false)
        var out = v
        out.axes[last] = outChannels == 1 ? [] : [.init(role: .c, stride: 1, extent: outChannels)]
        try addLayer(.convolution(conv), inputs: [f], channels: outChannels, node: node, output: node.outputs[0],
                     global: program.features[f].global, view: out)
    }

    // MARK: Normalisation

    mutating func batchNormalization(_ node: NetworkGraph.Node) throws {
        let f = try canonicalFeature(node)
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
        if fusable(f), featureValue[f] == node.inputs[0], program.layers[layer].epilogue.isEmpty, case .convolution(let conv) = program.layers[layer].op {
            let scaleTexels = texels(s), shiftTexels = texels(shift)
            let perGroup = conv.inputGroupsPerOutputGroup * conv.kernel.x * conv.kernel.y * 4
            for go in 0..<((conv.outChannels + 3) / 4) {
                let b = conv.biasOffset + go
                program.weights[b] = program.weights[b] * scaleTexels[go] + shiftTexels[go]
                for k in 0..<perGroup { program.weights[conv.weightOffset + go * perGroup + k] *= scaleTexels[go] }
            }
            program.layers[layer].fused.append(node.op)
            featureValue[f] = node.outputs[0]
            values[node.outputs[0]] = .feature(f)
            views[node.outputs[0]] = nil
            return
        }
        try apply(.affine(offset: weights(affine(scale: s, shift: shift))), to: f, node: node, view: .canonical(channels: channels, size: sizes[f]))
    }

    mutating func instanceNormalization(_ node: NetworkGraph.Node) throws {
        var f = try feature(node)
        let v = view(of: node.inputs[0])
        var channels = program.features[f].channels
        // [N, G, C/G·H·W] of a plain NCHW feature: group normalisation, as PyTorch's GroupNorm exports.
        var groupChannels = 1
        let G = v.rank == 3 ? v.dims[1] : 0
        if G >= 1, channels % G == 0, v.offset == .zero, v.axes[0].isEmpty,
           v.axes[1] == TensorView.normalised([.init(role: .c, stride: channels / G, extent: G)]),
           v.axes[2] == TensorView.normalised([.init(role: .c, stride: 1, extent: channels / G), .init(role: .y, stride: 1, extent: sizes[f].height),
                                               .init(role: .x, stride: 1, extent: sizes[f].width)]) {
            groupChannels = channels / G
        } else {
            f = try canonicalFeature(node)
            channels = program.features[f].channels
        }
        let scale = try constant(node.inputs[1], node).values, bias = try constant(node.inputs[2], node).values
        let groups = channels / groupChannels
        guard scale.count == groups, bias.count == groups else {
            throw fail(node, "InstanceNormalization parameters do not have \(groups) values")
        }
        let perChannelScale = (0..<channels).map { scale[$0 / groupChannels] }, perChannelBias = (0..<channels).map { bias[$0 / groupChannels] }
        let texelGroups = program.features[f].groups
        // Row sums of x and x², then the column's means: E[x] in the first groups, E[x²] in the rest.
        let rows = try addLayer(.rowReduction(max: false, statistics: true), inputs: [f], channels: texelGroups * 8, node: node.name,
                                fused: ["InstanceNormalization (sums)"], output: node.outputs[0] + "#sums", float32: true)
        let stats = try addLayer(.columnReduction(max: false, meanOver: f), inputs: [rows], channels: texelGroups * 8, node: node.name,
                                 fused: ["InstanceNormalization (means)"], output: node.outputs[0] + "#means", float32: true, global: true)
        try addLayer(.instanceNormalization(epsilon: node.float("epsilon") ?? 1e-5, offset: weights(affine(scale: perChannelScale, shift: perChannelBias)),
                                            groupChannels: groupChannels),
                     inputs: [f, stats], channels: channels, node: node, output: node.outputs[0], view: groupChannels > 1 ? v : nil)
    }

    // MARK: Spatial

    mutating func pooling(_ node: NetworkGraph.Node) throws {
        let f = try canonicalFeature(node)
        guard let shape = node.ints("kernel_shape"), shape.count == 2, shape.allSatisfy({ $0 >= 1 }) else {
            throw fail(node, "\(node.op) needs a 2-D kernel_shape")
        }
        let pads = node.ints("pads") ?? [0, 0, 0, 0], strides = node.ints("strides") ?? [1, 1], dilations = node.ints("dilations") ?? [1, 1]
        guard pads.count == 4, strides.count == 2, dilations.count == 2, pads.allSatisfy({ $0 >= 0 }),
              strides.allSatisfy({ $0 >= 1 }), dilations.allSatisfy({ $0 >= 1 }) else {
            throw fail(node, "\(node.op) needs 2-D non-negative pads and positive strides")
        }
        if node.outputs.count > 1, !node.outputs[1].isEmpty { throw fail(node, "MaxPool's Indices output is not supported") }
        let pool = NetworkProgram.Pooling(
            max: node.op == "MaxPool", kernel: SIMD2(shape[1], shape[0]), strides: SIMD2(strides[1], strides[0]),
            dilations: SIMD2(dilations[1], dilations[0]), pads: SIMD4(pads[1], pads[0], pads[3], pads[2]),
            autoPad: node.string("auto_pad").flatMap { $0 == "NOTSET" || $0 == "VALID" ? nil : $0 },
            ceilMode: node.int("ceil_mode") == 1, countIncludePad: node.int("count_include_pad") == 1)
        try addLayer(.pooling(pool), inputs: [f], channels: program.features[f].channels, node: node, output: node.outputs[0])
    }

    mutating func globalPool(_ node: NetworkGraph.Node, max: Bool, input f: Int, view: TensorView? = nil) throws {
        let channels = program.features[f].channels
        let rows = try addLayer(.rowReduction(max: max, statistics: false), inputs: [f], channels: channels, node: node.name,
                                fused: [node.op + " (rows)"], output: node.outputs[0] + "#rows", float32: true)
        try addLayer(.columnReduction(max: max, meanOver: max ? nil : f), inputs: [rows], channels: channels, node: node,
                     output: node.outputs[0], float32: true, global: true, view: view)
    }

    mutating func resize(_ node: NetworkGraph.Node) throws {
        var f = try feature(node)
        var v = view(of: node.inputs[0])
        let channels = program.features[f].channels
        // Canonical NCHW, or NHWC as TensorFlow exports leave it; anything else written out as NCHW first.
        var axes = (c: 1, y: 2, x: 3)
        if v.rank == 4, v.isPlain(channels: channels, size: sizes[f]), v.channelAxis() == 3, v.axis(of: .y) ?? 1 == 1, v.axis(of: .x) ?? 2 == 2 {
            axes = (3, 1, 2)
        } else if !v.isCanonical(channels: channels, size: sizes[f]) {
            f = try canonicalFeature(node)
            v = .canonical(channels: channels, size: sizes[f])
        }
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
        let sizesGiven = node.op == "Resize" && node.inputs.count > 3 ? try optionalConstant(node, 3) : nil
        if let s = (scales?.count == 4 ? scales?.values : nil) ?? node.floats("scales").flatMap({ $0.count == 4 ? $0 : nil }) {
            guard s.allSatisfy({ $0.isFinite && $0 > 0 && $0 <= 65536 }) else { throw fail(node, "\(node.op) scales \(s) are not finite positive numbers") }
            guard s[0] == 1, s[axes.c] == 1 else { throw fail(node, "\(node.op) scales the batch or channel axis") }
            resizing.scales = SIMD2(Double(s[axes.x]), Double(s[axes.y]))
        } else if let s = sizesGiven, s.count == 4, let ints = s.ints {
            guard ints[axes.c] == channels, ints[axes.y] >= 1, ints[axes.x] >= 1, ints[axes.y] <= 1 << 16, ints[axes.x] <= 1 << 16 else {
                throw fail(node, "\(node.op) to sizes \(ints) changes the channel count or is not a size")
            }
            resizing.sizes = Size(width: ints[axes.x], height: ints[axes.y])
        } else {
            throw fail(node, "\(node.op) needs constant scales or sizes of 4 values")
        }
        let g = try addLayer(.resize(resizing), inputs: [f], channels: channels, node: node, output: node.outputs[0])
        if axes.c == 3, let nhwc = TensorView.canonical(channels: channels, size: sizes[g]).transposed([0, 2, 3, 1]) { views[node.outputs[0]] = nhwc }
    }

    mutating func depthSpace(_ node: NetworkGraph.Node) throws {
        let f = try canonicalFeature(node)
        guard let block = node.int("blocksize"), block >= 1, block <= 64 else { throw fail(node, "\(node.op) without a blocksize in 1…64") }
        let c = program.features[f].channels
        if node.op == "DepthToSpace" {
            guard c % (block * block) == 0 else { throw fail(node, "DepthToSpace of \(c) channels by \(block)x\(block)") }
            let crd = (node.string("mode") ?? "DCR") == "CRD"
            try addLayer(.rearrange(.depthToSpace(block: block, columnRowDepth: crd)), inputs: [f], channels: c / (block * block),
                         node: node, output: node.outputs[0])
        } else {
            try addLayer(.rearrange(.spaceToDepth(block: block)), inputs: [f], channels: c * block * block, node: node, output: node.outputs[0])
        }
    }

    mutating func concat(_ node: NetworkGraph.Node) throws {
        let names = node.inputs.filter { !$0.isEmpty }
        guard let first = names.first else { throw fail(node, "Concat of nothing") }
        let rank = view(of: first).rank
        let axis = try NetworkFolding.axis(node.int("axis") ?? 1, rank: rank)
        var inputs: [Int] = [], lies: [TensorView] = []
        for (k, name) in names.enumerated() {
            if case .constant(let c)? = values[name] {
                try fill(c, like: names.first { if case .feature? = values[$0] { return true } else { return false } }, axis: axis, name: name, node: node)
            }
            guard case .feature(var f)? = values[name] else {
                throw fail(node, "Concat of an image with a constant is not supported")
            }
            var v = view(of: name)
            guard v.rank == rank else { throw fail(node, "Concat of tensors of ranks \(rank) and \(v.rank)") }
            if !(v.isPlain(channels: program.features[f].channels, size: sizes[f]) && v.channelAxis() == axis) {
                guard let plan = GatherPlan.make(v, channelAxis: axis) else {
                    throw fail(node, "Concat on axis \(axis) of a tensor of shape \(v.dims) (only the channel axis of images is supported)")
                }
                f = gather(plan, from: f, name: name + "#concat\(k)", node: node.name)
                v = plan.result
            }
            inputs.append(f)
            lies.append(v)
        }
        var offsets: [Int] = [], total = 0
        for f in inputs {
            offsets.append(total)
            total += program.features[f].channels
        }
        for v in lies.dropFirst() {
            for a in 0..<rank where a != axis && v.axes[a] != lies[0].axes[a] {
                throw fail(node, "Concat on axis \(axis) of tensors of shapes \(lies[0].dims) and \(v.dims)")
            }
        }
        var out = lies[0]
        out.axes[axis] = [.init(role: .c, stride: 1, extent: total)]
        try addLayer(.rearrange(.concat(offsets: offsets)), inputs: inputs, channels: total, node: node, output: node.outputs[0], view: out)
    }

    /// A constant that is the same at every pixel (a ratio broadcast to the image) as a feature of its own,
    /// the size of the image `like` names, so that it can be concatenated.
    mutating func fill(_ c: NetworkConstant, like other: String?, axis: Int, name: String, node: NetworkGraph.Node) throws {
        guard let other, case .feature(let g)? = values[other] else { throw fail(node, "Concat of constants only") }
        let v = view(of: other)
        guard v.isCanonical(channels: program.features[g].channels, size: sizes[g]), axis == 1, c.dims.count == 4,
              c.dims[2] == sizes[g].height, c.dims[3] == sizes[g].width else {
            throw fail(node, "Concat of an image with a constant of shape \(c.dims) is not supported")
        }
        let channels = c.dims[1], plane = c.dims[2] * c.dims[3]
        let perChannel = (0..<channels).map { c.values[$0 * plane] }
        for k in 0..<channels where c.values[(k * plane)..<((k + 1) * plane)].contains(where: { $0 != perChannel[k] }) {
            throw fail(node, "Concat of an image with a constant that varies over the image is not supported")
        }
        let offset = weights(texels(perChannel))
        try addLayer(.fill(offset: offset, size: sizes[g]), inputs: [], channels: channels, node: node.name, fused: ["constant"], output: name)
    }

    mutating func pad(_ node: NetworkGraph.Node) throws {
        let f = try canonicalFeature(node)
        let pads = try optionalConstant(node, 1)?.ints ?? node.ints("pads") ?? []
        guard pads.count == 8, pads[0] == 0, pads[1] == 0, pads[4] == 0, pads[5] == 0 else {
            throw fail(node, "Pad is supported on the two spatial axes only, got pads \(pads)")
        }
        guard pads.allSatisfy({ $0 >= 0 && $0 <= 1 << 16 }) else { throw fail(node, "Pad with negative pads (a crop) is not supported") }
        let mode = node.string("mode") ?? "constant"
        guard ["constant", "reflect", "edge"].contains(mode) else { throw fail(node, "Pad mode '\(mode)' is not supported") }
        let value = try optionalConstant(node, 2)?.values.first ?? node.float("value") ?? 0
        let padding = NetworkProgram.Padding(pads: SIMD4(pads[3], pads[2], pads[7], pads[6]), mode: mode, value: value.isFinite ? value : 0)
        try addLayer(.pad(padding), inputs: [f], channels: program.features[f].channels, node: node, output: node.outputs[0])
    }

    // MARK: Reductions

    /// The input as a plain view (written out as NCHW when it is not) and which of its axes hold c, y, x.
    mutating func plainInput(_ node: NetworkGraph.Node) throws -> (Int, TensorView) {
        let f = try feature(node), v = view(of: node.inputs[0])
        if v.isPlain(channels: program.features[f].channels, size: sizes[f]) { return (f, v) }
        let g = try canonicalFeature(node)
        return (g, GatherPlan.make(v, channelAxis: v.rank >= 3 ? v.rank - 3 : v.rank - 1)!.result)
    }

    mutating func reduce(_ node: NetworkGraph.Node) throws {
        let (f, v) = try plainInput(node)
        let given = try node.ints("axes") ?? optionalConstant(node, 1)?.ints
        if given == nil || given!.isEmpty, node.int("noop_with_empty_axes") == 1 { return try alias(node, view: view(of: node.inputs[0])) }
        let axes = try Set((given ?? Array(0..<v.rank)).map { try NetworkFolding.axis($0, rank: v.rank) })
        let keep = node.int("keepdims") ?? 1 == 1
        var out = TensorView(axes: v.axes.enumerated().map { axes.contains($0.offset) ? [] : $0.element })
        if !keep { out.axes = out.axes.enumerated().filter { !axes.contains($0.offset) }.map(\.element) }
        let roles = Set(axes.flatMap { v.axes[$0].map(\.role) })
        let channels = program.features[f].channels
        if roles == [.c] || (roles.isEmpty && axes.contains { $0 == v.channelAxis() }) {
            let kinds: [String: NetworkProgram.ChannelReduction] = ["ReduceMean": .mean, "ReduceSum": .sum, "ReduceMax": .max, "ReduceMin": .min,
                                                                   "ReduceL2": .l2, "ReduceSumSquare": .sumSquare, "ReduceLogSumExp": .logSumExp]
            try addLayer(.channelReduction(kinds[node.op]!), inputs: [f], channels: 1, node: node, output: node.outputs[0], view: out)
        } else if roles.isSubset(of: [.y, .x]), !roles.isEmpty, node.op == "ReduceMean" || node.op == "ReduceMax" || node.op == "ReduceSum",
                  sizes[f].width == 1 || roles.contains(.x), sizes[f].height == 1 || roles.contains(.y) {
            try globalPool(node, max: node.op == "ReduceMax", input: f, view: out)
            if node.op == "ReduceSum", case .feature(let g)? = values[node.outputs[0]] {
                let n = Float(sizes[f].pixelCount)
                try apply(scaling(by: n, channels: channels), to: g, node: renamed(node), view: out)
            }
        } else {
            throw fail(node, "\(node.op) over axes \(axes.sorted()) of \(v.dims) is not supported (over the channels, or over the whole image)")
        }
    }

    mutating func softmax(_ node: NetworkGraph.Node) throws {
        let (f, v) = try plainInput(node)
        let axis = try NetworkFolding.axis(node.int("axis") ?? (graph.opset >= 13 ? -1 : 1), rank: v.rank)
        // Before opset 13 Softmax normalises over every axis from `axis` on, flattened.
        let over = graph.opset >= 13 ? [axis] : Array(axis..<v.rank)
        let roles = Set(over.flatMap { v.axes[$0].map(\.role) })
        guard roles == [.c] || (roles.isEmpty && program.features[f].channels == 1) else {
            throw fail(node, "\(node.op) over axes \(over) of \(v.dims) is not supported (only over the channels)")
        }
        try addLayer(.softmax(log: node.op == "LogSoftmax"), inputs: [f], channels: program.features[f].channels, node: node,
                     output: node.outputs[0], view: v)
    }
}
