import PrismCore

/// What `prism filters FILE.fs` prints about a user shader: its kind, its image inputs (and what an
/// unconnected one holds), its vertex shader and its parameters.
extension UserShader {
    package var summary: String {
        var lines = ["\(path) — \(kind == .isf ? "ISF" : kind == .shadertoy ? "ShaderToy" : "GLSL") shader"
            + (isf?.description.map { ": \($0)" } ?? "")]
        if kind == .shadertoy {
            lines.append("  input: the filtered stream (what `input` channels read; it sets the output size)")
        } else if let inputImage {
            lines.append("  input: \(inputImage) (the filtered stream)")
        } else {
            lines.append("  input: none, a generator (renders at the graph source's size)")
        }
        for (index, image) in extraImageInputs.enumerated() {
            lines.append("  input \(index + 2): \(image) (a second stream: `[a][b]\(shortName)`; unconnected it reads as "
                         + UserShaderKernel.unconnectedImageContents + ")")
        }
        for input in audioInputs {
            let native = input.type == .audio ? AudioWindow.sampleCount : AudioWindow.sampleCount / 2
            let what = input.type == .audio ? "samples" : "bins"
            let width = input.maximum?.scalar.map { "MAX \(Int($0)): \(min(Int($0), native)) \(what)" } ?? "\(native) \(what)"
            lines.append("  audio input: \(input.name) (\(input.type.rawValue), \(width) × one row per channel, "
                         + (input.type == .audio ? "waveform as 0…1, 0.5 silence" : "FFT magnitudes")
                         + "; fed from the input's audio track or \(Setting.audio))")
        }
        if let vertexPath { lines.append("  vertex shader: \(vertexPath) (runs as a pass of its own)") }
        if passes.count > 1 { lines.append("  passes: \(passes.count)") }
        if kind == .shadertoy { lines += shaderToySummary }
        // A ShaderToy shader's channels are listed above.
        for spec in UserShaderKernel.parameterSpecs(for: self) where !(kind == .shadertoy && ShaderToyChannel.names.contains(spec.name)) {
            let range = spec.kind.rangeDescription.map { " in \($0)" } ?? ""
            lines.append("    \(spec.name): \(spec.kind.typeName)\(range), default \(spec.defaultValue)"
                         + (spec.summary.isEmpty ? "" : " — \(spec.summary)"))
        }
        return lines.joined(separator: "\n")
    }

    private var shortName: String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.contains(" ") ? "\"\(path)\"" : path
    }
}
