import Foundation
import PrismCore
import PrismGPU

extension RGBPlan {
    /// An output that is a blend by one generated mask, on the R'G'B' route: on frames where the mask is zero
    /// everywhere (no face), the passes that feed only the blend's effect are skipped and the passes that
    /// evaluate the output draw its background instead (a variant per draw), so such frames cost the
    /// background alone. (The Y'CbCr route's `YUVBlendPlan` also bounds the work by the mask's rectangles.)
    struct MaskedOutput {
        let output: Int
        /// The blend: the output, or under it through colour maps (single-input point-wise kernels).
        let blend: Int
        let generator: Int
        let channel: Int
        /// The blend's input where the mask is 0.
        let background: FilterGraph.Stream

        init?(_ graph: FilterGraph) {
            guard case .node(let output) = graph.output else { return nil }
            var index = output.index
            while graph.nodes[index].kernel.colorBlend == nil {
                let node = graph.nodes[index], kernel = node.kernel
                guard kernel.isPointwise, node.inputs.count == 1, kernel.prepasses.isEmpty, kernel.textureInputs.isEmpty,
                      case .node(let next) = node.inputs[0] else { return nil }
                index = next.index
            }
            guard let blend = graph.nodes[index].kernel.colorBlend, graph.nodes[index].inputs.count == 3,
                  case .node(let weight) = graph.nodes[index].inputs[blend.weight], graph.nodes[weight.index].inputs.isEmpty
            else { return nil }
            let inputs = graph.nodes[index].inputs
            self.output = output.index
            self.blend = index
            generator = weight.index
            channel = blend.channel
            background = inputs[blend.from]
        }

        /// Marks the passes a zero mask does not need and gives the sink passes their background programs.
        func apply(to passes: inout [CompiledPass], builder: PassBuilder) throws {
            let graph = builder.graph
            /// The nodes `stream` is computed from, itself included (visited once each: graphs share streams).
            func ancestors(_ stream: FilterGraph.Stream) -> Set<Int> {
                var found = Set<Int>(), pending = [stream]
                while let next = pending.popLast() {
                    if case .node(let id) = next, found.insert(id.index).inserted { pending += graph.nodes[id.index].inputs }
                }
                return found
            }
            // The background's nodes: the blend's `from` input and the colour maps above the blend.
            var backgroundNodes = ancestors(background)
            var index = output
            while index != blend {
                backgroundNodes.insert(index)
                guard case .node(let next) = graph.nodes[index].inputs[0] else { break }
                index = next.index
            }
            // Evaluated from the frame's planes, fused, except what must be a texture (a kernel's texture input).
            var textureInputs = Set<Int>(), sourceIsTexture = false
            for node in backgroundNodes {
                for input in graph.nodes[node].kernel.textureInputs {
                    switch graph.nodes[node].inputs[input] {
                    case .source: sourceIsTexture = true
                    case .node(let id): textureInputs.formUnion(ancestors(.node(id)))
                    }
                }
            }
            var plain = builder
            plain.replaced = [blend: background]
            plain.materialized = builder.materialized.intersection(textureInputs)
            plain.sourceMaterialized = builder.sourceMaterialized && sourceIsTexture
            let root = output == blend ? background : graph.output
            let maskIsZero = CompiledPass.Variant.Condition.maskIsZero(generator: generator, channel: channel)
            for index in passes.indices where !passes[index].persistent {
                let needed: Bool
                switch passes[index].kind {
                case .sink:
                    let pass = passes[index]
                    let variant = try plain.expressionPass(root: root, kind: pass.kind, target: pass.target, pack: pass.packLayout)
                    precondition(variant.draws.count == pass.draws.count, "the same packing draws the same rectangles")
                    for draw in pass.draws.indices {
                        let zeroMask = CompiledPass.Variant(program: variant.draws[draw].program, condition: maskIsZero)
                        passes[index].draws[draw].variants.insert(zeroMask, at: 0)
                    }
                    passes[index].addBindings(of: variant)
                    needed = true
                case .prepass(let node, _): needed = backgroundNodes.contains(node) || textureInputs.contains(node)
                case .materialize(let node): needed = plain.materialized.contains(node)
                case .source: needed = plain.sourceMaterialized
                case .fullResolution: needed = true
                }
                if !needed { passes[index].skippedWhen = maskIsZero }
            }
            // The source's texture stays while a pass still drawn (other than the sinks, whose backgrounds read
            // the planes) reads it.
            if let source = passes.firstIndex(where: { $0.kind == .source }), passes.contains(where: { pass in
                if case .sink = pass.kind { return false }
                return pass.skippedWhen == nil && pass.textures.contains { $0.source == .sourceTarget }
            }) {
                passes[source].skippedWhen = nil
            }
        }
    }
}
