import PrismCore
import PrismGPU

/// The Y'CbCr route (see `YUVPlan`) for graphs that mix streams by a generated mask: the seed's masked
/// pixellate (`[in]pixellate[px]; radial-gradient[m]; [px][in][m]blend-mask`), `face-pixellate`, `face-blur`,
/// and any graph of colour maps, at most one pixellate or blur, and blends whose weights come from generators.
///
/// A mix by a weight commutes with the colour conversions (its weights add up to 1), so a blend runs on
/// Y'CbCr as it is; the mask generator runs as usual (it makes R'G'B' from positions and parameters) and
/// only its weight channel is read. Pixellate's block means and the blur's planes come from the raw planes
/// (kernels before them must be affine); everything else is evaluated per pixel, four pixels per fetch of
/// the planes. With one mask, only what it reaches is blended, and the blocks and blurred planes are made
/// only there: no face costs the chain alone.
struct YUVBlendPlan {
    let pixellate: Int?
    /// A Gaussian blur instead of pixellate (`YUVBlurPlan.blurredPlanes`).
    let blur: Int?
    /// Affine kernels between the source and pixellate (applied to the block means) or the blur (applied to
    /// the blurred planes; they stay per-pixel nodes too, for their other readers).
    let prefix: [Int]
    /// Colour kernels and blends evaluated at every pixel, in graph order.
    let perPixel: [Int]
    /// Mask generators, read only as blend weights.
    let generators: [Int]

    static func make(_ graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, sizes: [Size],
                     layouts: [PackedFrameLayout], options: CompileOptions) -> YUVBlendPlan? {
        guard options.fuse, options.yuvRoute,
              YUVNativeShaders.handles(source: sourceFormat, size: sourceSize, sinks: layouts),
              sizes.allSatisfy({ $0 == sourceSize }),
              graph.nodes.contains(where: { $0.kernel.colorBlend != nil }),
              case .node(let output) = graph.output
        else { return nil }
        func isGenerator(_ index: Int) -> Bool {
            let node = graph.nodes[index], kernel = node.kernel
            return node.inputs.isEmpty && kernel.isPointwise && kernel.prepasses.isEmpty && kernel.textureInputs.isEmpty
                && kernel.colorForm == nil
        }
        var pixellate: Int?, blur: Int?
        var generators: [Int] = []
        for (index, node) in graph.nodes.enumerated() {
            let kernel = node.kernel
            if kernel.blockAveraging != nil || kernel is BlurKernel {
                guard pixellate == nil, blur == nil, node.inputs.count == 1 else { return nil }
                if kernel is BlurKernel { blur = index } else { pixellate = index }
            } else if let blend = kernel.colorBlend {
                guard node.inputs.count == 3, case .node(let weight) = node.inputs[blend.weight],
                      isGenerator(weight.index) else { return nil }
            } else if isGenerator(index) {
                // A mask is only ever a weight: its colours are R'G'B', never mixed into the picture.
                guard index != output.index,
                      consumers(of: index, graph: graph).allSatisfy({ graph.nodes[$0.node].kernel.colorBlend?.weight == $0.input })
                else { return nil }
                generators.append(index)
            } else {
                guard kernel.colorForm != nil, node.inputs.count == 1 else { return nil }
            }
        }
        // Kernels before pixellate or the blur: affine (they commute with the means and the blur); before
        // pixellate feeding nothing else (they are applied to the block means alone).
        var prefix: [Int] = []
        if let effect = pixellate ?? blur {
            var stream = graph.nodes[effect].inputs[0]
            while case .node(let id) = stream {
                guard case .affine? = graph.nodes[id.index].kernel.colorForm, blur != nil || consumers(of: id.index, graph: graph).count == 1
                else { return nil }
                prefix.insert(id.index, at: 0)
                stream = graph.nodes[id.index].inputs[0]
            }
        }
        let perPixel = graph.nodes.indices.filter {
            (blur != nil || !prefix.contains($0)) && $0 != pixellate && $0 != blur && !generators.contains($0)
        }
        return YUVBlendPlan(pixellate: pixellate, blur: blur, prefix: prefix, perPixel: perPixel, generators: generators)
    }

    func compile(graph: FilterGraph, sourceFormat: PixelFormat, sourceSize: Size, layouts: [PackedFrameLayout],
                 budget: inout GraphBudget) throws -> [CompiledPass] {
        let blockSize = pixellate.map { graph.nodes[$0].kernel.blockAveraging!.blockGrid(for: sourceSize).size }
        if let blockSize, let pixellate {
            try budget.add(PixellateShaders.blockTargetSize(grid: blockSize), format: .rgba16f, what: "\(graph.nodes[pixellate].name) (blocks)")
        }
        try budget.addSinks(layouts) { YUVNativeShaders.packPlan(layout: $0, values: .rows) }
        var passes: [CompiledPass] = []
        // Blocks or blurred planes only the mask can show need only be made where it reaches.
        let effectMasked = generators.count == 1 && (pixellate ?? blur).map { effect in
            Self.consumers(of: effect, graph: graph).allSatisfy { graph.nodes[$0.node].kernel.colorBlend?.to == $0.input }
        } == true
        var blurred = YUVBlurPlan.BlurredPlanes()
        if let blur {
            blurred = try YUVBlurPlan.blurredPlanes(graph: graph, blur: blur, sourceFormat: sourceFormat, sourceSize: sourceSize,
                                                    mask: effectMasked ? (generators[0], blendChannel(graph)) : nil,
                                                    budget: &budget)
            passes += blurred.passes
        }
        if let pixellate, let blockSize {
            let steps = YUVPlan.steps(prefix, graph: graph)
            passes.append(try YUVPlan.blockPass(graph: graph, pixellate: pixellate, steps: steps, sink: nil,
                                                sourceFormat: sourceFormat, sourceSize: sourceSize, blockSize: blockSize,
                                                mask: effectMasked ? (generators[0], blendChannel(graph)) : nil))
        }
        let (steps, stepOf) = chainSteps(graph: graph)
        let wide = pixellate.map { graph.nodes[$0].kernel.blockAveraging!.isWide } ?? false
        for (index, layout) in layouts.enumerated() {
            let uniforms = ChainUniforms(steps: steps, sink: layout, pixellate: pixellate, sourceSize: sourceSize)
            let reads = FrameShaders.header + YUVNativeShaders.planeReads(for: sourceFormat)
                + (pixellate == nil ? "" : PixellateShaders.blockReads(grid: blockSize!, wide: wide))
                + (blur == nil ? "" : Self.blurredReads(blurred)) + uniforms.glsl
            let plan = YUVNativeShaders.packPlan(layout: layout, values: .rows)
            let label = "pack \(layout.format.rawValue) (Y'CbCr, blended)"
            let draws: [CompiledPass.Draw]
            if generators.count == 1 {
                draws = try maskedDraws(graph: graph, layout: layout, plan: plan, label: label, sourceFormat: sourceFormat,
                                        sourceSize: sourceSize, reads: reads, stepOf: stepOf, packStep: steps.count - 1)
            } else {
                draws = CompiledPass.Draw.packing(plan.draws, label: label, prelude: reads + generatorCode(graph: graph)
                                    + valueFunctions(graph: graph, stepOf: stepOf, packStep: steps.count - 1, masksAreZero: false))
            }
            let members = generators.map {
                CompiledPass.Member(node: $0, prefix: "n\($0)_", outputSize: sourceSize, inputSizes: [])
            }
            let textures = pixellate.map {
                [CompiledPass.TextureBinding(uniform: "prism_blocks", source: .prepass(node: $0, index: 0))]
            } ?? blurred.textures
            var pass = CompiledPass(kind: .sink(index), label: label, draws: draws, target: plan.target, members: members,
                                    textures: textures, readsSourcePlanes: true, packLayout: layout)
            pass.colorChain = uniforms
            passes.append(pass)
        }
        return passes
    }

    /// One step per per-pixel colour kernel (they may sit on different branches), then the packing; and
    /// each kernel's step.
    private func chainSteps(graph: FilterGraph) -> (steps: [YUVPlan.Step], stepOf: [Int: Int]) {
        var stepOf: [Int: Int] = [:]
        var steps: [YUVPlan.Step] = []
        for index in perPixel where graph.nodes[index].kernel.colorForm != nil {
            stepOf[index] = steps.count
            steps += YUVPlan.steps([index], graph: graph)
        }
        steps.append(.affine(nodes: []))
        return (steps, stepOf)
    }

    /// A sink's draws with one mask: the rectangles it can touch this frame (`nonzeroRegions`) are drawn blended,
    /// every other pixel as if the mask were 0 (the background alone, cheap). `reads`: the planes', blocks' and
    /// blurred planes' reads and the chain's uniforms; `packStep`: the packing's step in the chain.
    private func maskedDraws(graph: FilterGraph, layout: PackedFrameLayout, plan: PackPlan, label: String,
                             sourceFormat: PixelFormat, sourceSize: Size, reads: String,
                             stepOf: [Int: Int], packStep: Int) throws -> [CompiledPass.Draw] {
        let shared = reads + generatorCode(graph: graph)
        let blendedValues = valueFunctions(graph: graph, stepOf: stepOf, packStep: packStep, masksAreZero: false)
        let blended = shared + blendedValues
        var draws: [CompiledPass.Draw] = []
        func maskRegion(_ draw: PackDraw, outside: Bool) -> CompiledPass.MaskRegion {
            var region = CompiledPass.MaskRegion(generator: generators[0], channel: blendChannel(graph),
                                                 layout: .pixels(texel: draw.texelPixels),
                                                 targetArea: PixelRect(x: draw.columns ?? 0..<plan.targetSize.width, y: draw.rows))
            region.outside = outside
            return region
        }
        if let line = backgroundLine(graph) {
            // A chain of colour maps: packed as `YUVPlan` packs it, with its lean programs, through a
            // chain of its own.
            let plain = try YUVPlan.sinkPasses(graph: graph, steps: YUVPlan.steps(line, graph: graph), layouts: [layout],
                                               sourceFormat: sourceFormat, sourceSize: sourceSize, pixellate: nil)[0]
            precondition(plain.draws.count == plan.draws.count, "a packing's draws depend on its layout alone")
            draws += zip(plain.draws, plan.draws).map { draw, shape in
                var draw = draw
                draw.colorChain = plain.colorChain
                draw.mask = maskRegion(shape, outside: true)
                return draw
            }
        } else {
            let background = shared + valueFunctions(graph: graph, stepOf: stepOf, packStep: packStep,
                                                     masksAreZero: true)
            for draw in plan.draws {
                var drawn = CompiledPass.Draw(label: label + ", background", fragment: background + draw.main,
                                              rows: draw.rows, columns: draw.columns)
                drawn.mask = maskRegion(draw, outside: true)
                draws.append(drawn)
            }
        }
        for (drawIndex, draw) in plan.draws.enumerated() {
            var masked = CompiledPass.Draw(label: label, fragment: blended + draw.main, rows: draw.rows, columns: draw.columns)
            masked.mask = maskRegion(draw, outside: false)
            // Cheaper programs: the generator's for few regions; and, where every step keeps luma and
            // chroma apart (face-blur alone), the luma draw without chroma reads, the chroma draw without
            // luma reads (the blurred luma is the costliest read there).
            let limits = graph.nodes[generators[0]].kernel.regionLimits
            let lean: CompiledPass.LeanCondition? = switch layout.format {
            case .yuv420p: drawIndex == 0 ? .lumaIgnoresChroma : .chromaIgnoresLuma
            case .gray: .lumaIgnoresChroma
            default: nil
            }
            if let lean {
                let leanValues = valueFunctions(graph: graph, stepOf: stepOf, packStep: packStep,
                                                masksAreZero: false, lean: lean)
                masked.variants += limits.map { limit in
                    let source = reads + generatorCode(graph: graph, regionLimit: limit) + leanValues + draw.main
                    return .init(program: ProgramSource(label: label + ", lean, ≤ \(limit) regions", fragment: source),
                                 condition: .all([.leanSteps(lean), .fewRegions(limit: limit)]))
                }
            }
            masked.variants += limits.map { limit in
                let source = reads + generatorCode(graph: graph, regionLimit: limit) + blendedValues + draw.main
                return .init(program: ProgramSource(label: label + ", ≤ \(limit) regions", fragment: source),
                             condition: .fewRegions(limit: limit))
            }
            draws.append(masked)
        }
        return draws
    }

    /// The generators' code; `regionLimit`: their versions for frames with at most that many regions.
    private func generatorCode(graph: FilterGraph, regionLimit: Int? = nil) -> String {
        generators.map { index -> String in
            let kernel = graph.nodes[index].kernel
            let expression = regionLimit.map { kernel.expression(regionLimit: $0) } ?? kernel.expression
            return (CompiledPass.Member.declarations(of: kernel) + kernel.library + expression + "\n")
                .replacingOccurrences(of: "$", with: "n\(index)_")
        }.joined()
    }

    /// `prism_value(src, blk, p)`: the graph at one pixel from its source value, its block value and its
    /// position, packed; `prism_rowValues` for four pixels of a row.
    /// The blurred planes' reads under their own names (`prism_blurYTexel`, `prism_blurChromaQuad`,
    /// `prism_blurChromaPair`) beside the source's; at σ 0 the source's themselves.
    private static func blurredReads(_ blurred: YUVBlurPlan.BlurredPlanes) -> String {
        guard let reads = blurred.reads else {
            return """
                vec4 prism_blurYTexel(int tx, int y) { return prism_yTexel(tx, y); }
                vec4 prism_blurChromaPair(int j, int cy) { return prism_chromaPair(j, cy); }

                """
        }
        return reads.replacingOccurrences(of: FrameShaders.header, with: "")
            .replacingOccurrences(of: "prism_yTexel", with: "prism_blurYTexel")
            .replacingOccurrences(of: "prism_chromaQuad", with: "prism_blurChromaQuad")
            .replacingOccurrences(of: "prism_chromaPair", with: "prism_blurChromaPair")
    }

    /// The kernels the picture passes through where every mask is 0 (each blend gives its `from` input),
    /// source first; nil when that passes pixellate or the blur.
    private func backgroundLine(_ graph: FilterGraph) -> [Int]? {
        var line: [Int] = []
        var stream = graph.output
        while case .node(let id) = stream {
            let node = graph.nodes[id.index]
            if let blend = node.kernel.colorBlend {
                stream = node.inputs[blend.from]
                continue
            }
            guard id.index != pixellate, id.index != blur, node.kernel.colorForm != nil, node.inputs.count == 1 else { return nil }
            line.insert(id.index, at: 0)
            stream = node.inputs[0]
        }
        return line
    }

    /// The nodes reading `index`, and at which input.
    private static func consumers(of index: Int, graph: FilterGraph) -> [(node: Int, input: Int)] {
        graph.nodes.enumerated().flatMap { node, n in
            n.inputs.enumerated().compactMap { input, stream in
                if case .node(let id) = stream, id.index == index { return (node, input) } else { return nil }
            }
        }
    }

    /// The channel the blends read from the one mask (they all read the same one, or the first's is used
    /// and `nonzeroRegions` of another channel is nil).
    private func blendChannel(_ graph: FilterGraph) -> Int {
        perPixel.lazy.compactMap { graph.nodes[$0].kernel.colorBlend?.channel }.first ?? 1
    }

    /// `masksAreZero`: every mask reads 0 (the pixels a mask does not reach).
    /// `lean`: the draw needs only luma or only chroma and every step keeps them apart, so the other one's
    /// planes are not read (zeros in their place).
    private func valueFunctions(graph: FilterGraph, stepOf: [Int: Int], packStep: Int, masksAreZero: Bool,
                                lean: CompiledPass.LeanCondition? = nil) -> String {
        func value(_ stream: FilterGraph.Stream) -> String {
            switch stream {
            case .source: return "src"
            case .node(let id): return id.index == pixellate || id.index == blur ? "blk" : "v\(id.index)"
            }
        }
        var body = ""
        for index in perPixel {
            let node = graph.nodes[index]
            if let blend = node.kernel.colorBlend, case .node(let weight) = node.inputs[blend.weight] {
                let channel = ["r", "g", "b", "a"][blend.channel]
                // A zero mask is the background itself: no mix, so nothing the foreground needs is computed
                // (x·0 is not folded to 0 under IEEE rules, so mix(a, b, 0.0) would still fetch b).
                body += masksAreZero
                    ? "    vec3 v\(index) = \(value(node.inputs[blend.from]));\n"
                    : "    vec3 v\(index) = mix(\(value(node.inputs[blend.from])), \(value(node.inputs[blend.to])), "
                        + "clamp(n\(weight.index)_main(p), 0.0, 1.0).\(channel));\n"
            } else if let step = stepOf[index] {
                body += "    vec3 v\(index) = prism_step\(step)(\(value(node.inputs[0])));\n"
            }
        }
        // The effect's value at the four pixels: pixellate's blocks, or the blurred planes through the
        // affine kernels before the blur (not read where every mask is zero).
        var effect = ""
        if pixellate != nil {
            effect = "    prism_blockQuad(tx, y, b0, b1, b2, b3);\n"
        } else if blur != nil, !masksAreZero {
            let prefixed = prefix.reduce("raw") { value, node in stepOf[node].map { "prism_step\($0)(\(value))" } ?? value }
            effect = """
                    vec4 bl = \(lean == .chromaIgnoresLuma ? "vec4(0.0)" : "prism_blurYTexel(tx, y)");
                    vec4 bc = \(lean == .lumaIgnoresChroma ? "vec4(0.0)" : "prism_blurChromaPair(tx, y >> 1)");
                    vec3 raw = vec3(bl.x, bc.xy); b0 = \(prefixed);
                    raw = vec3(bl.y, bc.xy); b1 = \(prefixed);
                    raw = vec3(bl.z, bc.zw); b2 = \(prefixed);
                    raw = vec3(bl.w, bc.zw); b3 = \(prefixed);

                """
        }
        return """
            vec3 prism_value(vec3 src, vec3 blk, vec2 p) {
            \(body)    return prism_step\(packStep)(\(value(graph.output)));
            }
            void prism_rowValues(int tx, int y, out vec3 v0, out vec3 v1, out vec3 v2, out vec3 v3) {
                vec4 l = \(lean == .chromaIgnoresLuma ? "vec4(0.0)" : "prism_yTexel(tx, y)");
                vec4 c = \(lean == .lumaIgnoresChroma ? "vec4(0.0)" : "prism_chromaPair(tx, y >> 1)");
                vec3 b0 = vec3(0.0), b1 = vec3(0.0), b2 = vec3(0.0), b3 = vec3(0.0);
            \(effect)    vec2 p = vec2(float(tx * 4) + 0.5, float(y) + 0.5);
                v0 = prism_value(vec3(l.x, c.xy), b0, p);
                v1 = prism_value(vec3(l.y, c.xy), b1, p + vec2(1.0, 0.0));
                v2 = prism_value(vec3(l.z, c.zw), b2, p + vec2(2.0, 0.0));
                v3 = prism_value(vec3(l.w, c.zw), b3, p + vec2(3.0, 0.0));
            }

            """
    }
}
