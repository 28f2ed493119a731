import PrismCore

/// A `NetworkProgram` written out for one input size: each feature's atlas layout and each layer's fragment
/// shader (`void main()` writing `prism_out`, as a kernel prepass). Sizes are baked into the text, so the
/// loops have constant bounds; a new frame size is a new compile, as for every kernel.
///
/// Names (the kernel prefix `$` is rewritten by the graph compiler): `$src0` the frame, `$passK` layer K's
/// target, `$weights` the weight texels (`$w(i)`), `$in*` uniforms for the input normalisation.
package struct NetworkPasses {
    package let program: NetworkProgram
    package let input: Size
    /// The frame when a dynamic model runs on it padded up to `input` (its sides to a multiple the network's
    /// down- and up-sampling needs): the input pass repeats the frame's last column and row into the padding,
    /// and the output is cropped back (the expression reads only the frame's part). Nil: no padding.
    package var paddedFrame: Size?
    /// True when the frame is resampled to `input` (a model that runs at a size of its own).
    package var resamplesInput = false
    package let sizes: [Size]
    package let layouts: [FeatureLayout]

    /// Lays out every feature; fails naming the layer whose texture would exceed `maxSide`.
    package init(program: NetworkProgram, input: Size, maxSide: Int) throws {
        self.program = program
        self.input = input
        sizes = try program.sizes(input: input)
        var layouts: [FeatureLayout] = []
        for (index, feature) in program.features.enumerated() {
            guard let layout = FeatureLayout.fit(size: sizes[index], groups: feature.groups, maxSide: maxSide) else {
                let layer = program.layers[feature.producer]
                throw NetworkShapeError(node: layer.node, "\(feature.channels) channels at \(sizes[index]) do not fit this GPU's "
                                        + "\(maxSide)x\(maxSide) textures (try a smaller input: \(Setting.size), or scale first)")
            }
            layouts.append(layout)
        }
        self.layouts = layouts
    }

    /// Bytes of the intermediate textures (16- or 32-bit float RGBA).
    package func textureBytes(float32: Bool) -> Int {
        zip(program.features, layouts).reduce(0) { sum, pair in
            sum + pair.1.atlas.pixelCount * (pair.0.float32 || float32 ? 16 : 8)
        }
    }

    /// The GLSL library every pass shares: weight fetches and the activations.
    package static let library = """
        vec4 $w(int i) { return texelFetch($weights, ivec2(i & 2047, i >> 11), 0); }
        vec4 $sigmoid(vec4 v) { return 1.0 / (1.0 + exp(-v)); }
        vec4 $erf(vec4 x) {
            // Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7).
            vec4 t = 1.0 / (1.0 + 0.3275911 * abs(x));
            vec4 y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-x * x);
            return sign(x) * y;
        }
        vec4 $softplus(vec4 v) { return max(v, 0.0) + log(1.0 + exp(-abs(v))); }
        vec4 $pow(vec4 a, vec4 b) {
            // ONNX's Pow: a negative base to an integer power keeps its sign rules; GLSL's pow is undefined there.
            vec4 m = pow(abs(a), b);
            vec4 odd = mod(abs(b), 2.0);
            return mix(m, mix(m, -m, step(0.5, odd) * step(odd, vec4(1.5))), step(a, vec4(-0.0)) * (1.0 - step(1e-6, abs(fract(b)))));
        }

        """

    /// Texel of group `g` (GLSL int expression) at position `p` (ivec2 expression) of feature `f`.
    func fetch(_ f: Int, group g: String, at p: String) -> String {
        let l = layouts[f]
        let texture = "$pass\(program.features[f].producer)"
        if l.groups == 1 { return "texelFetch(\(texture), \(p), 0)" }
        return "texelFetch(\(texture), ivec2(((\(g)) % \(l.columns)) * \(l.size.width), ((\(g)) / \(l.columns)) * \(l.size.height)) + \(p), 0)"
    }

    /// The fragment shader of layer `index`.
    package func main(layer index: Int) -> String {
        let layer = program.layers[index]
        let out = layouts[layer.output]
        let channels = program.features[layer.output].channels
        var text = """
            void main() {
                ivec2 fc = ivec2(gl_FragCoord.xy);
                ivec2 tile = fc / ivec2(\(out.size.width), \(out.size.height));
                int go = tile.y * \(out.columns) + tile.x;
                ivec2 p = fc - tile * ivec2(\(out.size.width), \(out.size.height));
                if (go >= \(out.groups)) { prism_out = vec4(0.0); return; }
                vec4 v = vec4(0.0);

            """
        text += body(layer)
        for step in layer.epilogue { text += "    " + epilogue(step) + "\n" }
        if channels % 4 != 0 {
            // Lanes past the last channel stay 0, so that what reads them (a convolution's zero weights times
            // a NaN from 1/0) cannot be poisoned.
            let mask = (0..<4).map { $0 < channels % 4 ? "1.0" : "0.0" }.joined(separator: ", ")
            text += "    if (go == \(out.groups - 1)) v *= vec4(\(mask));\n"
        }
        text += "    prism_out = v;\n}\n"
        return text
    }

    func float(_ v: Float) -> String {
        if v.isInfinite { return v > 0 ? "3.4e38" : "-3.4e38" }
        var s = "\(v)"
        if !s.contains(".") && !s.contains("e") { s += ".0" }
        return s
    }

    func epilogue(_ step: NetworkProgram.Step) -> String {
        switch step {
        case .affine(let o): return "v = v * $w(\(o) + 2 * go) + $w(\(o + 1) + 2 * go);"
        case .reciprocal(let o): return "v = $w(\(o) + go) / v;"
        case .prelu(let o): return "v = mix($w(\(o) + go) * v, v, step(0.0, v));"
        case .activation(let a):
            switch a {
            case .relu: return "v = max(v, 0.0);"
            case .leakyRelu(let alpha): return "v = mix(\(float(alpha)) * v, v, step(0.0, v));"
            case .sigmoid: return "v = $sigmoid(v);"
            case .tanh: return "v = tanh(clamp(v, -15.0, 15.0));"  // GLSL tanh overflows exp() past ±44 on some drivers
            case .clip(let lo, let hi): return "v = clamp(v, \(float(lo)), \(float(hi)));"
            case .hardSigmoid(let a, let b): return "v = clamp(\(float(a)) * v + \(float(b)), 0.0, 1.0);"
            case .hardSwish: return "v = v * clamp(v / 6.0 + 0.5, 0.0, 1.0);"
            case .elu(let alpha): return "v = mix(\(float(alpha)) * (exp(min(v, 0.0)) - 1.0), v, step(0.0, v));"
            case .exp: return "v = exp(min(v, 88.0));"
            case .log: return "v = log(v);"
            case .abs: return "v = abs(v);"
            case .sqrt: return "v = sqrt(v);"
            case .reciprocal: return "v = 1.0 / v;"
            case .erf: return "v = $erf(v);"
            case .gelu: return "v = 0.5 * v * (1.0 + $erf(v * 0.70710678));"
            case .softplus: return "v = $softplus(v);"
            case .mish: return "v = v * tanh(clamp($softplus(v), -15.0, 15.0));"
            case .floor: return "v = floor(v);"
            case .ceil: return "v = ceil(v);"
            case .round: return "v = roundEven(v);"
            case .sign: return "v = sign(v);"
            case .sin: return "v = sin(v);"
            case .cos: return "v = cos(v);"
            case .power(let e):
                switch e {
                case 1: return ""
                case 2: return "v = v * v;"
                case 3: return "v = v * v * v;"
                case 0.5: return "v = sqrt(v);"
                case -1: return "v = 1.0 / v;"
                default: return "v = $pow(v, vec4(\(float(e))));"
                }
            }
        case .tensor(let op, let t, let tensorFirst):
            let feature = program.features[t]
            let position = feature.global ? "ivec2(0)" : "p"
            var read = fetch(t, group: feature.channels == 1 ? "0" : "go", at: position)
            if feature.channels == 1 { read = "vec4((\(read)).x)" }
            return "v = " + Self.binary(op, tensorFirst ? read : "v", tensorFirst ? "v" : read) + ";"
        case .constant(let op, let o, let constantFirst):
            let k = "$w(\(o) + go)"
            return "v = " + Self.binary(op, constantFirst ? k : "v", constantFirst ? "v" : k) + ";"
        }
    }

    static func binary(_ op: NetworkProgram.BinaryOp, _ a: String, _ b: String) -> String {
        switch op {
        case .add, .sub, .mul, .div: return "\(a) \(op.rawValue) \(b)"
        case .min: return "min(\(a), \(b))"
        case .max: return "max(\(a), \(b))"
        case .pow: return "$pow(\(a), \(b))"
        }
    }

    func body(_ layer: NetworkProgram.Layer) -> String {
        switch layer.op {
        case .input: return inputBody(layer)
        case .convolution(let c): return convolutionBody(layer, c)
        case .pooling(let p): return poolingBody(layer, p)
        case .rowReduction(let max, let statistics):
            let f = layer.inputs[0], s = sizes[f], groups = program.features[f].groups
            let group = statistics ? "(go % \(groups))" : "go"
            let square = statistics ? "if (go >= \(groups)) t *= t;\n            " : ""
            return """
                    v = vec4(\(max ? "-3.4e38" : "0.0"));
                    for (int x = 0; x < \(s.width); x++) {
                        vec4 t = \(fetch(f, group: group, at: "ivec2(x, p.y)"));
                        \(square)v = \(max ? "max(v, t)" : "v + t");
                    }

                """
        case .columnReduction(let max, let meanOver):
            let f = layer.inputs[0], s = sizes[f]
            let divide = meanOver.map { "    v /= \(float(Float(sizes[$0].pixelCount)));\n" } ?? ""
            return """
                    v = vec4(\(max ? "-3.4e38" : "0.0"));
                    for (int y = 0; y < \(s.height); y++) {
                        vec4 t = \(fetch(f, group: "go", at: "ivec2(0, y)"));
                        v = \(max ? "max(v, t)" : "v + t");
                    }

                """ + divide
        case .instanceNormalization(let epsilon, let offset, let groupChannels):
            let x = layer.inputs[0], stats = layer.inputs[1]
            let groups = program.features[x].groups
            var statistics = """
                    vec4 mean = \(fetch(stats, group: "go", at: "ivec2(0)"));
                    vec4 meanSquare = \(fetch(stats, group: "go + \(groups)", at: "ivec2(0)"));

                """
            if groupChannels > 1 {
                // Group normalisation: each lane's statistics are the mean of its group's channels'.
                statistics = """
                        vec4 mean = vec4(0.0), meanSquare = vec4(0.0);
                        for (int lane = 0; lane < 4; lane++) {
                            int first = ((go * 4 + lane) / \(groupChannels)) * \(groupChannels);
                            for (int k = first; k < first + \(groupChannels); k++) {
                                mean[lane] += \(fetch(stats, group: "k / 4", at: "ivec2(0)"))[k % 4];
                                meanSquare[lane] += \(fetch(stats, group: "k / 4 + \(groups)", at: "ivec2(0)"))[k % 4];
                            }
                        }
                        mean /= \(float(Float(groupChannels)));
                        meanSquare /= \(float(Float(groupChannels)));

                    """
            }
            return statistics + """
                    vec4 x = \(fetch(x, group: "go", at: "p"));
                    v = (x - mean) * inversesqrt(max(meanSquare - mean * mean, 0.0) + \(float(epsilon)));
                    v = v * $w(\(offset) + 2 * go) + $w(\(offset + 1) + 2 * go);

                """
        case .gather(let plan): return gatherBody(layer, plan)
        case .fill(let offset, _): return "    v = $w(\(offset) + go);\n"
        case .channelReduction(let kind): return channelReductionBody(layer, kind)
        case .softmax(let log): return softmaxBody(layer, log: log)
        case .resize(let r): return resizeBody(layer, r)
        case .rearrange(let r): return rearrangeBody(layer, r)
        case .pad(let pad): return padBody(layer, pad)
        case .pointwise:
            let f = layer.inputs[0]
            return "    v = \(fetch(f, group: "go", at: program.features[f].global ? "ivec2(0)" : "p"));\n"
        }
    }

    func inputBody(_ layer: NetworkProgram.Layer) -> String {
        let read: String
        if resamplesInput {
            // A fixed-size model: the frame resampled bilinearly to its input (no prefilter when shrinking).
            read = "texture($src0, (vec2(p) + 0.5) / vec2(\(input.width).0, \(input.height).0))"
        } else if let frame = paddedFrame {
            read = "texelFetch($src0, min(p, ivec2(\(frame.width - 1), \(frame.height - 1))), 0)"
        } else {
            read = "texelFetch($src0, p, 0)"
        }
        let grey = program.inputChannels == 1
        return """
                vec4 c = \(read);
                vec3 rgb = $inOrder == 1 ? c.bgr : c.rgb;
                v = vec4((rgb * $inScale - $inMean) / $inStd, 0.0);
                \(grey ? "v = vec4((dot(rgb, vec3(0.299, 0.587, 0.114)) * $inScale - $inMean.x) / $inStd.x, 0.0, 0.0, 0.0);" : "")

            """
    }

    func convolutionBody(_ layer: NetworkProgram.Layer, _ c: NetworkProgram.Convolution) -> String {
        let f = layer.inputs[0], s = sizes[f]
        let taps = c.kernel.x * c.kernel.y
        // Tap (kx, ky) of output p reads input (x, y); a transposed convolution's output o takes input i through
        // tap k where o = i·stride − pad + k·dilation.
        let origin: String, row: [String], column: [String]
        if c.transposed {
            origin = "ivec2 shifted = p + ivec2(\(c.pads.x), \(c.pads.y));"
            row = ["int ny = shifted.y - ky * \(c.dilations.y);", "if (ny < 0 || ny % \(c.strides.y) != 0) continue;",
                   "int y = ny / \(c.strides.y);", "if (y >= \(s.height)) continue;"]
            column = ["int nx = shifted.x - kx * \(c.dilations.x);", "if (nx < 0 || nx % \(c.strides.x) != 0) continue;",
                      "int x = nx / \(c.strides.x);", "if (x >= \(s.width)) continue;"]
        } else {
            let pads = NetworkProgram.pads(explicit: c.pads, autoPad: c.autoPad, kernel: c.kernel, strides: c.strides,
                                           dilations: c.dilations, input: s)
            origin = "ivec2 origin = p * ivec2(\(c.strides.x), \(c.strides.y)) - ivec2(\(pads.x), \(pads.y));"
            row = ["int y = origin.y + ky * \(c.dilations.y);", "if (y < 0 || y >= \(s.height)) continue;"]
            column = ["int x = origin.x + kx * \(c.dilations.x);", "if (x < 0 || x >= \(s.width)) continue;"]
        }
        return """
                v = $w(\(c.biasOffset) + go);
                int first = int($w(\(c.headerOffset) + go).x);
                \(origin)
                for (int k = 0; k < \(c.inputGroupsPerOutputGroup); k++) {
                    int gi = first + k;
                    int base = \(c.weightOffset) + (go * \(c.inputGroupsPerOutputGroup) + k) * \(taps * 4);
                    for (int ky = 0; ky < \(c.kernel.y); ky++) {
                        \(row.joined(separator: "\n" + String(repeating: " ", count: 12)))
                        for (int kx = 0; kx < \(c.kernel.x); kx++) {
                            \(column.joined(separator: "\n" + String(repeating: " ", count: 16)))
                            vec4 t = \(fetch(f, group: "gi", at: "ivec2(x, y)"));
                            int i = base + (ky * \(c.kernel.x) + kx) * 4;
                            v += mat4($w(i), $w(i + 1), $w(i + 2), $w(i + 3)) * t;
                        }
                    }
                }

            """
    }

    func poolingBody(_ layer: NetworkProgram.Layer, _ pool: NetworkProgram.Pooling) -> String {
        let f = layer.inputs[0], s = sizes[f]
        let pads = NetworkProgram.pads(explicit: pool.pads, autoPad: pool.autoPad, kernel: pool.kernel, strides: pool.strides,
                                       dilations: pool.dilations, input: s)
        let accumulate = pool.max ? "v = max(v, t);" : "v += t; n += 1.0;"
        // count_include_pad counts the window's taps inside the padded image (not those past it in ceil mode).
        let padded = pool.countIncludePad && !pool.max
            ? "if (y >= -\(pads.y) && y < \(s.height + pads.w) && x >= -\(pads.x) && x < \(s.width + pads.z)) n += 1.0;" : ""
        return """
                v = vec4(\(pool.max ? "-3.4e38" : "0.0"));
                float n = 0.0;
                ivec2 origin = p * ivec2(\(pool.strides.x), \(pool.strides.y)) - ivec2(\(pads.x), \(pads.y));
                for (int ky = 0; ky < \(pool.kernel.y); ky++) {
                    int y = origin.y + ky * \(pool.dilations.y);
                    for (int kx = 0; kx < \(pool.kernel.x); kx++) {
                        int x = origin.x + kx * \(pool.dilations.x);
                        \(padded)
                        if (y < 0 || y >= \(s.height) || x < 0 || x >= \(s.width)) continue;
                        vec4 t = \(fetch(f, group: "go", at: "ivec2(x, y)"));
                        \(pool.countIncludePad && !pool.max ? "v += t;" : accumulate)
                    }
                }
                \(pool.max ? "" : "v /= max(n, 1.0);")

            """
    }

    func resizeBody(_ layer: NetworkProgram.Layer, _ r: NetworkProgram.Resizing) -> String {
        let f = layer.inputs[0], s = sizes[f], o = sizes[layer.output]
        // The scale the coordinate transform divides by: the given scale, else output over input.
        let scale = r.scales ?? SIMD2(Double(o.width) / Double(s.width), Double(o.height) / Double(s.height))
        func source(_ axis: String, _ n: Int, _ out: Int, _ k: Double) -> String {
            switch r.coordinates {
            case "align_corners": return out == 1 ? "0.0" : "float(p.\(axis)) * \(Double(n - 1) / Double(out - 1))"
            case "asymmetric": return "float(p.\(axis)) / \(k)"
            case "pytorch_half_pixel": return out == 1 ? "0.0" : "(float(p.\(axis)) + 0.5) / \(k) - 0.5"
            default: return "(float(p.\(axis)) + 0.5) / \(k) - 0.5"
            }
        }
        let sx = source("x", s.width, o.width, scale.x), sy = source("y", s.height, o.height, scale.y)
        let limit = "vec2(\(s.width - 1).0, \(s.height - 1).0)"
        if r.linear {
            return """
                    vec2 q = clamp(vec2(\(sx), \(sy)), vec2(0.0), \(limit));
                    ivec2 q0 = ivec2(floor(q));
                    ivec2 q1 = min(q0 + 1, ivec2(\(s.width - 1), \(s.height - 1)));
                    vec2 t = q - vec2(q0);
                    vec4 a = mix(\(fetch(f, group: "go", at: "q0")), \(fetch(f, group: "go", at: "ivec2(q1.x, q0.y)")), t.x);
                    vec4 b = mix(\(fetch(f, group: "go", at: "ivec2(q0.x, q1.y)")), \(fetch(f, group: "go", at: "q1")), t.x);
                    v = mix(a, b, t.y);

                """
        }
        let round: String
        switch r.nearestMode {
        case "floor": round = "floor(q)"
        case "ceil": round = "ceil(q)"
        case "round_prefer_ceil": round = "floor(q + 0.5)"
        default: round = "ceil(q - 0.5)"
        }
        return """
                vec2 q = vec2(\(sx), \(sy));
                ivec2 n = clamp(ivec2(\(round)), ivec2(0), ivec2(\(s.width - 1), \(s.height - 1)));
                v = \(fetch(f, group: "go", at: "n"));

            """
    }

    func rearrangeBody(_ layer: NetworkProgram.Layer, _ r: NetworkProgram.Rearrangement) -> String {
        let outChannels = program.features[layer.output].channels
        // Each of the four lanes from its own source channel: (input, channel expression, position expression).
        var lanes = ""
        for lane in 0..<4 {
            var code = "    {\n        int c = go * 4 + \(lane);\n        if (c < \(outChannels)) {\n"
            switch r {
            case .depthToSpace(let b, let crd):
                let f = layer.inputs[0]
                code += "            ivec2 block = p % \(b);\n"
                code += crd ? "            int s = c * \(b * b) + block.y * \(b) + block.x;\n"
                            : "            int s = (block.y * \(b) + block.x) * \(outChannels) + c;\n"
                code += "            v[\(lane)] = \(fetch(f, group: "s / 4", at: "p / \(b)"))[s % 4];\n"
            case .spaceToDepth(let b):
                let f = layer.inputs[0], inChannels = program.features[f].channels
                code += "            int block = c / \(inChannels), s = c % \(inChannels);\n"
                code += "            ivec2 q = p * \(b) + ivec2(block % \(b), block / \(b));\n"
                code += "            v[\(lane)] = \(fetch(f, group: "s / 4", at: "q"))[s % 4];\n"
            case .concat(let offsets):
                for (k, f) in layer.inputs.enumerated() {
                    let end = k + 1 < offsets.count ? offsets[k + 1] : outChannels
                    let position = program.features[f].global ? "ivec2(0)" : "p"
                    code += "            \(k == 0 ? "" : "else ")if (c < \(end)) { int s = c - \(offsets[k]); v[\(lane)] = \(fetch(f, group: "s / 4", at: position))[s % 4]; }\n"
                }
            case .slice(let start, let step):
                let f = layer.inputs[0]
                code += "            int s = \(start) + c * \(step);\n"
                code += "            v[\(lane)] = \(fetch(f, group: "s / 4", at: "p"))[s % 4];\n"
            }
            code += "        }\n    }\n"
            lanes += code
        }
        return lanes
    }

    /// Each lane's source: the output's (c, y, x) as indices of the plan's axes, each index's digits adding
    /// to the input's coordinates.
    func gatherBody(_ layer: NetworkProgram.Layer, _ plan: GatherPlan) -> String {
        let f = layer.inputs[0], channels = program.features[layer.output].channels
        func digits(_ axis: Int?, _ index: String) -> String {
            guard let axis else { return "" }
            var code = "            r = \(index);\n"
            for d in plan.source.axes[axis].reversed() {
                code += "            src[\(d.role.rawValue)] += (r % \(d.extent)) * \(d.stride); r /= \(d.extent);\n"
            }
            return code
        }
        var text = ""
        for lane in 0..<4 {
            text += "    {\n        int c = go * 4 + \(lane);\n        if (c < \(channels)) {\n"
            text += "            ivec3 src = ivec3(\(plan.source.offset.x), \(plan.source.offset.y), \(plan.source.offset.z));\n            int r;\n"
            text += digits(plan.channelAxis, "c") + digits(plan.rowAxis, "p.y") + digits(plan.columnAxis, "p.x")
            text += "            v[\(lane)] = \(fetch(f, group: "src.x / 4", at: "src.zy"))[src.x % 4];\n        }\n    }\n"
        }
        return text
    }

    /// Over every channel group at the pixel: a running reduction, the padding lanes left out.
    func channelReductionBody(_ layer: NetworkProgram.Layer, _ kind: NetworkProgram.ChannelReduction) -> String {
        let f = layer.inputs[0], channels = program.features[f].channels, groups = program.features[f].groups
        let position = program.features[f].global ? "ivec2(0)" : "p"
        let (initial, combine, finish): (String, String, String)
        switch kind {
        case .sum, .mean: (initial, combine, finish) = ("0.0", "a += t;", kind == .mean ? "a / \(float(Float(channels)))" : "a")
        case .max: (initial, combine, finish) = ("-3.4e38", "a = max(a, t);", "a")
        case .min: (initial, combine, finish) = ("3.4e38", "a = min(a, t);", "a")
        case .sumSquare, .l2: (initial, combine, finish) = ("0.0", "a += t * t;", kind == .l2 ? "sqrt(a)" : "a")
        case .logSumExp: (initial, combine, finish) = ("0.0", "a += exp(t);", "log(a)")
        }
        return """
                float a = \(initial);
                for (int g = 0; g < \(groups); g++) {
                    vec4 q = \(fetch(f, group: "g", at: position));
                    for (int lane = 0; lane < 4; lane++) {
                        if (g * 4 + lane >= \(channels)) break;
                        float t = q[lane];
                        \(combine)
                    }
                }
                v = vec4(\(finish), 0.0, 0.0, 0.0);

            """
    }

    /// exp(x − max) / Σ exp(x − max) over every channel at the pixel (or its log).
    func softmaxBody(_ layer: NetworkProgram.Layer, log: Bool) -> String {
        let f = layer.inputs[0], channels = program.features[f].channels, groups = program.features[f].groups
        let position = program.features[f].global ? "ivec2(0)" : "p"
        let mask = "vec4(\((0..<4).map { "(g * 4 + \($0) < \(channels)) ? 1.0 : 0.0" }.joined(separator: ", ")))"
        return """
                float top = -3.4e38;
                for (int g = 0; g < \(groups); g++) {
                    vec4 q = \(fetch(f, group: "g", at: position));
                    for (int lane = 0; lane < 4; lane++) if (g * 4 + lane < \(channels)) top = max(top, q[lane]);
                }
                float sum = 0.0;
                for (int g = 0; g < \(groups); g++) sum += dot(exp(\(fetch(f, group: "g", at: position)) - top), \(mask));
                vec4 x = \(fetch(f, group: "go", at: position)) - top;
                v = \(log ? "x - log(sum)" : "exp(x) / sum");

            """
    }

    func padBody(_ layer: NetworkProgram.Layer, _ pad: NetworkProgram.Padding) -> String {
        let f = layer.inputs[0], s = sizes[f]
        let q = "p - ivec2(\(pad.pads.x), \(pad.pads.y))"
        let last = "ivec2(\(s.width - 1), \(s.height - 1))"
        switch pad.mode {
        case "edge":
            return "    v = \(fetch(f, group: "go", at: "clamp(\(q), ivec2(0), \(last))"));\n"
        case "reflect":
            return """
                    ivec2 q = \(q);
                    q = abs(q);
                    q = \(last) - abs(\(last) - q);
                    v = \(fetch(f, group: "go", at: "clamp(q, ivec2(0), \(last))"));

                """
        default:
            return """
                    ivec2 q = \(q);
                    if (any(lessThan(q, ivec2(0))) || any(greaterThan(q, \(last)))) v = vec4(\(float(pad.value)));
                    else v = \(fetch(f, group: "go", at: "q"));

                """
        }
    }

    /// `$main(vec2 p)`: the output feature at output pixel `p`, denormalised, as RGBA: the channels `shown`
    /// (1: grey; 2: red and green; 3: RGB with the frame's alpha; 4: RGBA), read where the output pixel
    /// lies, or resampled bilinearly to the output size (`resample`: the model ran at another size, or its
    /// output is at another scale).
    package func expression(outputSize: Size, resample: Bool, feature f: Int? = nil, shown: [Int]? = nil) -> String {
        let f = f ?? program.outputFeature, s = sizes[f]
        let channels = shown ?? Array(0..<min(program.features[f].channels, program.features[f].channels > 4 ? 3 : 4))
        let read: String
        if resample && s != outputSize {
            read = """
                    vec2 q = clamp(p * vec2(\(Double(s.width) / Double(outputSize.width)), \(Double(s.height) / Double(outputSize.height))) - 0.5,
                                   vec2(0.0), vec2(\(s.width - 1).0, \(s.height - 1).0));
                    ivec2 q0 = ivec2(floor(q));
                    ivec2 q1 = min(q0 + 1, ivec2(\(s.width - 1), \(s.height - 1)));
                    vec2 t = q - vec2(q0);
                    return mix(mix(\(fetch(f, group: "g", at: "q0")), \(fetch(f, group: "g", at: "ivec2(q1.x, q0.y)")), t.x),
                               mix(\(fetch(f, group: "g", at: "ivec2(q0.x, q1.y)")), \(fetch(f, group: "g", at: "q1")), t.x), t.y);

                """
        } else {
            read = "    return \(fetch(f, group: "g", at: "clamp(ivec2(p), ivec2(0), ivec2(\(s.width - 1), \(s.height - 1)))"));\n"
        }
        let lanes = (0..<4).map { k in k < channels.count ? "$outGroup(\(channels[k] / 4), p)[\(channels[k] % 4)]" : "0.0" }
        let alpha = "texture($src0, p / vec2(\(outputSize.width).0, \(outputSize.height).0)).a"
        let color: String
        switch channels.count {
        case 1: color = "vec4(vec3(v.x * $outStd.x + $outMean.x) / $outScale, \(alpha))"
        case 2: color = "vec4(o.rg, 0.0, \(alpha))"
        case 3: color = "vec4(o, \(alpha))"
        default: color = "vec4(o, (v.a * $outStd.x + $outMean.x) / $outScale)"
        }
        return """
            vec4 $outGroup(int g, vec2 p) {
            \(read)}

            vec4 $main(vec2 p) {
                vec4 v = vec4(\(lanes.joined(separator: ", ")));
                vec3 o = (v.rgb * $outStd + $outMean) / $outScale;
                o = $outOrder == 1 ? o.bgr : o;
                return \(color);
            }

            """
    }
}
