import Foundation
import PrismCore

/// What `prism filters NET.onnx` prints: the model's input and output, normalisation, operators, weights, and
/// the passes Prism runs it as with their cost for a 1-megapixel frame (a fixed-size model: at its own size).
extension NetworkKernel {
    /// Multiply-adds of layer `index` at the sizes given (convolutions; every other layer counts one per
    /// output element, which is what it costs to the order that matters).
    static func multiplyAdds(_ program: NetworkProgram, layer index: Int, sizes: [Size]) -> Int {
        let layer = program.layers[index]
        let out = sizes[layer.output].pixelCount * program.features[layer.output].channels
        guard case .convolution(let c) = layer.op else { return out }
        let taps = c.kernel.x * c.kernel.y
        if c.transposed {
            let input = sizes[layer.inputs[0]].pixelCount
            return input * c.inChannels * (c.outChannels / c.groups) * taps
        }
        return out * (c.inChannels / c.groups) * taps
    }

    package var summary: String {
        func shape(_ value: NetworkGraph.Value) -> String {
            let names = ["1", "C", "height", "width"]
            let dims = (value.dims ?? []).enumerated().map { $0.element >= 0 ? "\($0.element)" : (names.indices.contains($0.offset) ? names[$0.offset] : "?") }
            return "'\(value.name)' [\(dims.joined(separator: ","))]"
        }
        var lines = ["\((path as NSString).lastPathComponent): ONNX image network (opset \(graph.opset)"
                     + (graph.producer.isEmpty ? "" : ", from \(graph.producer)") + ")"]
        let input = program.inputSize
        let imageValue = graph.inputs.first { $0.name == image.name }
        lines.append("  input:  \(imageValue.map(shape) ?? "?"), \(image.channels == 1 ? "1 channel (luma)" : "3 channels")"
                     + (image.channelsLast ? ", channels last (NHWC)" : "")
                     + (image.declared.map { ": a fixed \($0); frames are resized to it bilinearly and the result back (size=frame runs it at the frame's size)" }
                        ?? ": any size (dynamic)")
                     + (image.declaredBatch.map { "; its batch of \($0) runs as 1" } ?? ""))
        for extra in image.extra {
            lines.append("  input:  \(shape(extra)), a parameter: inputs='\(extra.name)=…'" + (extraInputs[extra.name].map { " (given \($0.values))" } ?? ""))
        }
        let sizes = (try? program.sizes(input: input)) ?? []
        for (index, value) in graph.outputs.enumerated() {
            var line = "  output \(index): \(shape(value))"
            if let lowered = program.outputs.first(where: { $0.name == value.name }), sizes.indices.contains(lowered.feature) {
                let channels = program.features[lowered.feature].channels, at = sizes[lowered.feature]
                line += ", \(channels) channel\(channels == 1 ? "" : "s") at \(at) for a \(input) input"
                if value.name == shownOutput {
                    line += " — shown" + (channels > 4 ? " (channels 0–2; channels= picks others)" : "")
                    if at != input { line += at.width % input.width == 0 ? "" : "; resized to the frame (output-size=own keeps \(at))" }
                }
            } else if value.name != shownOutput {
                line += ": not computed (output=\(index) computes it)"
            }
            lines.append(line)
        }
        if !graph.notes.isEmpty { lines.append("  checked: " + graph.notes) }
        for output in [false, true] {
            if let n = try? normalisation(output: output) {
                let mean = "\(n.mean.x),\(n.mean.y),\(n.mean.z)", std = "\(n.std.x),\(n.std.y),\(n.std.z)"
                lines.append(output
                    ? "  colour: (o · std[\(std)] + mean[\(mean)]) / \(n.scale), \(n.bgr ? "BGR" : "RGB")"
                    : "  model input: (rgb · \(n.scale) − mean[\(mean)]) / std[\(std)], \(n.bgr ? "BGR" : "RGB")")
            }
        }
        let keys = graph.metadata.keys.sorted()
        if !keys.isEmpty { lines.append("  metadata: " + keys.map { "\($0)=\(graph.metadata[$0]!)" }.joined(separator: ", ")) }
        lines.append("  weights: \(graph.weightCount) parameters (\(program.weights.count) RGBA32F texels, "
                     + "\(program.weights.count * 16 / 1024) KiB on the GPU)")
        lines.append("  operators: " + program.operators.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))
        guard let passes = try? NetworkPasses(program: program, input: input, maxSide: 16384) else {
            lines.append("  passes: \(program.layers.count) (a \(input) input does not fit; see the error at run time)")
            return lines.joined(separator: "\n")
        }
        let megapixels = Double(input.pixelCount) / 1e6
        var total = 0
        var layerLines: [String] = []
        for (index, layer) in program.layers.enumerated() {
            let macs = Self.multiplyAdds(program, layer: index, sizes: passes.sizes)
            total += macs
            let f = program.features[layer.output]
            layerLines.append("    \(index + 1). \(layer.node) (\(layer.fused.joined(separator: "+"))): \(f.channels) channels at "
                              + "\(passes.sizes[layer.output]), " + String(format: "%.3f GMAC", Double(macs) / 1e9 / megapixels))
        }
        lines.append("  passes: \(program.layers.count), one per layer (the ops fused into each in brackets); per megapixel of "
                     + "input (\(input)): " + String(format: "%.2f GMAC, %.0f MiB of intermediate textures (half) or %.0f (float)",
                                                  Double(total) / 1e9 / megapixels,
                                                  Double(passes.textureBytes(float32: false)) / 1048576 / megapixels,
                                                  Double(passes.textureBytes(float32: true)) / 1048576 / megapixels))
        lines += layerLines
        return lines.joined(separator: "\n")
    }
}
