import Foundation
import PrismCore
import PrismGPU

/// The filter parameters a user shader's parameters become (see `UserShaderKernel`'s documentation).
extension UserShaderKernel {
    /// The filter parameters of a shader's parameters (see the type's documentation).
    package static func parameterSpecs(for shader: UserShader) -> [ParameterSpec] {
        shader.parameters.compactMap(spec(for:)) + ShaderToyChannel.specs(for: shader) + transitionSpecs(for: shader)
    }

    /// Whether the shader is an ISF transition: `startImage` and `endImage` images and a float `progress`.
    static func isTransition(_ shader: UserShader) -> Bool {
        shader.kind == .isf && shader.extraImageInputs.contains("startImage") && shader.extraImageInputs.contains("endImage")
            && shader.parameters.contains { $0.name == "progress" && $0.type == .float }
    }

    /// An ISF transition between two real inputs takes its `progress` from the graph's time, as `crossfade`
    /// does, once `duration` is above 0: progress = clamp((time - start) / duration, 0, 1). With duration 0
    /// (the default) `progress` is the parameter as given. Names the shader already uses are left to it.
    static func transitionSpecs(for shader: UserShader) -> [ParameterSpec] {
        guard isTransition(shader) else { return [] }
        let taken = Set(shader.parameters.map(\.name))
        return [
            ParameterSpec("duration", .float(0...86400), default: .float(0),
                          "seconds the transition takes, progress running 0 to 1 from start; 0: progress as given"),
            ParameterSpec("start", .float(-86400...86400), default: .float(0), "seconds (graph time) at which progress leaves 0"),
        ].filter { !taken.contains($0.name) }
    }

    static func spec(for parameter: ShaderParameter) -> ParameterSpec? {
        let summary = parameter.label ?? ""
        let fallback = parameter.effectiveDefault
        switch parameter.type {
        case .float:
            let lo = parameter.minimum?.scalar ?? -Double.infinity, hi = parameter.maximum?.scalar ?? Double.infinity
            let value = fallback?.scalar ?? 0
            return ParameterSpec(parameter.name, .float(min(lo, hi)...max(lo, hi)), default: .float(value), summary)
        case .long:
            let value = Int(fallback?.scalar ?? 0)
            if !parameter.labels.isEmpty, parameter.labels.count == parameter.values.count {
                let index = parameter.values.firstIndex(of: value) ?? 0
                return ParameterSpec(parameter.name, .choice(parameter.labels), default: .choice(parameter.labels[index]), summary)
            }
            var lo = parameter.minimum?.scalar.map { Int($0) } ?? parameter.values.min() ?? Int.min
            var hi = parameter.maximum?.scalar.map { Int($0) } ?? parameter.values.max() ?? Int.max
            if lo > hi { swap(&lo, &hi) }
            return ParameterSpec(parameter.name, .int(lo...hi), default: .int(min(max(value, lo), hi)), summary)
        case .bool, .event:
            return ParameterSpec(parameter.name, .bool, default: .bool((fallback?.scalar ?? 0) != 0), summary)
        case .color, .vector3:
            guard case .vector(let v)? = fallback else { return nil }
            return ParameterSpec(parameter.name, .color, default: .color(SIMD4(v[0], v[1], v[2], v.count > 3 ? v[3] : 1)), summary)
        case .point2D:
            guard case .vector(let v)? = fallback, v.count >= 2 else { return nil }
            return ParameterSpec(parameter.name, .point, default: .point(SIMD2(v[0], v[1])), summary)
        case .image, .audio, .audioFFT:
            return nil
        }
    }
}
