import PrismCore

/// What `prism filters FILE.glsl` prints about an mpv hook file: its passes (stage, what they bind and
/// save, their size and condition, compute shape), embedded textures and parameters.
extension HookFile {
    package var summary: String {
        var lines = ["\(path) — mpv hook shader: \(passes.count) pass\(passes.count == 1 ? "" : "es") hooking "
                     + HookPlan.stages([self]).map(\.name).joined(separator: ", ")]
        if HookPlan.usesPlanes([self]) {
            lines.append("  runs on Y'CbCr planes split from the graph's R'G'B' image (BT.709, limited range), merged back after")
        }
        for pass in passes {
            var line = "  line \(pass.line): \(pass.description) — HOOK \(pass.hooks.joined(separator: " "))"
            if !pass.binds.isEmpty { line += "; BIND \(pass.binds.map(\.name).joined(separator: ", "))" }
            if let save = pass.save { line += "; SAVE \(save)" }
            lines.append(line)
            var details: [String] = []
            if pass.width.text != "HOOKED.w" || pass.height.text != "HOOKED.h" { details.append("size \(pass.width) × \(pass.height)") }
            if pass.when.text != "1" { details.append("when \(pass.when)") }
            if let compute = pass.compute {
                details.append("compute: \(compute.blockWidth)x\(compute.blockHeight) pixels per group, "
                               + "\(compute.threadsWidth)x\(compute.threadsHeight) threads")
            }
            if pass.alignOffset { details.append("offset ALIGN") } else if pass.offset != .zero { details.append("offset \(pass.offset.x) \(pass.offset.y)") }
            if let components = pass.components { details.append("\(components) component\(components == 1 ? "" : "s")") }
            if !details.isEmpty { lines.append("      " + details.joined(separator: "; ")) }
        }
        for texture in textures {
            lines.append("  texture \(texture.name): \(texture.width)x\(texture.height)\(texture.depth.map { "x\($0)" } ?? "") "
                         + "\(texture.format.name), \(texture.linear ? "LINEAR" : "NEAREST"), \(texture.border.rawValue)")
        }
        if !parameters.isEmpty { lines.append("  parameters (set them in the graph: '\(shortName)(NAME=value)'):") }
        for (parameter, spec) in zip(parameters, HookKernel.parameterSpecs(for: [self])) {
            let range = spec.kind.rangeDescription.map { " in \($0)" } ?? ""
            lines.append("    \(spec.name): \(spec.kind.typeName)\(range), default \(spec.defaultValue), \(parameter.mode.rawValue.uppercased())"
                         + (spec.summary.isEmpty ? "" : " — \(spec.summary)"))
        }
        lines.append("  OUTPUT is the run's \(Setting.size) when given, else the input's size; the group ends with a bilinear resize to it")
        return lines.joined(separator: "\n")
    }

    private var shortName: String { path.split(separator: "/").last.map(String.init) ?? path }
}
