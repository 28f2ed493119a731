/// A value of a shader parameter.
package enum ShaderValue: Hashable, Sendable, CustomStringConvertible {
    case bool(Bool)
    case int(Int)
    case float(Double)
    /// vec2, vec3 or vec4 components.
    case vector([Double])

    package var description: String {
        switch self {
        case .bool(let b): return String(b)
        case .int(let i): return String(i)
        case .float(let f): return String(f)
        case .vector(let v): return "(" + v.map { String($0) }.joined(separator: ", ") + ")"
        }
    }

    /// The value as a Double when it is a scalar (bools are 0 or 1).
    package var scalar: Double? {
        switch self {
        case .bool(let b): return b ? 1 : 0
        case .int(let i): return Double(i)
        case .float(let f): return f
        case .vector: return nil
        }
    }
}

/// The kind of a shader parameter. The names follow ISF; plain GLSL `@param` uniforms map onto them.
package enum ShaderParameterType: String, Hashable, Sendable, CaseIterable {
    /// A momentary trigger: `bool` uniform, true for one frame.
    case event
    /// `bool` uniform.
    case bool
    /// `int` uniform, usually a choice among `values` shown with `labels` (ISF "long").
    case long
    /// `float` uniform.
    case float
    /// `vec2` uniform, a position.
    case point2D
    /// `vec3` uniform (plain GLSL only; ISF has no vec3 input).
    case vector3
    /// `vec4` uniform, RGBA.
    case color
    /// `sampler2D` uniform plus `vec2 _<name>_imgSize`.
    case image
    /// ISF `audio`: a `sampler2D` of the waveform (width = samples, capped by MAX; height = channels).
    case audio
    /// ISF `audioFFT`: a `sampler2D` of FFT magnitudes (width = bins, capped by MAX; height = channels).
    case audioFFT

    /// Sampled as a texture (image, audio and audioFFT inputs), not set as a value.
    package var isSampler: Bool { self == .image || self == .audio || self == .audioFFT }
    /// Fed from the input's sound (audio and audioFFT inputs).
    package var isAudio: Bool { self == .audio || self == .audioFFT }

    /// The GLSL type of the uniform.
    package var glslType: String {
        switch self {
        case .event, .bool: return "bool"
        case .long: return "int"
        case .float: return "float"
        case .point2D: return "vec2"
        case .vector3: return "vec3"
        case .color: return "vec4"
        case .image, .audio, .audioFFT: return "sampler2D"
        }
    }

    /// How many numbers a value of this type has (vectors), or 1.
    package var componentCount: Int {
        switch self {
        case .point2D: return 2
        case .vector3: return 3
        case .color: return 4
        default: return 1
        }
    }
}

/// A parameter a user shader declares: an ISF input or a plain shader's `@param` uniform.
/// The uniform has the parameter's name.
package struct ShaderParameter: Hashable, Sendable {
    package var name: String
    /// A human label (ISF LABEL, `@param label="…"`).
    package var label: String?
    package var type: ShaderParameterType
    package var defaultValue: ShaderValue?
    package var minimum: ShaderValue?
    /// For audio and audioFFT inputs, MAX: the most columns (samples or bins) the shader wants.
    package var maximum: ShaderValue?
    /// ISF IDENTITY: the value at which the filter leaves its input unchanged.
    package var identity: ShaderValue?
    /// For `long`: the allowed values, and their labels (same count when both are given).
    package var values: [Int]
    package var labels: [String]

    package init(name: String, label: String? = nil, type: ShaderParameterType, defaultValue: ShaderValue? = nil,
                minimum: ShaderValue? = nil, maximum: ShaderValue? = nil, identity: ShaderValue? = nil,
                values: [Int] = [], labels: [String] = []) {
        self.name = name
        self.label = label
        self.type = type
        self.defaultValue = defaultValue
        self.minimum = minimum
        self.maximum = maximum
        self.identity = identity
        self.values = values
        self.labels = labels
    }

    /// The value used when the user gives none: the declared default, else what the reference renderer
    /// (interactive-shader-format-js) leaves in a uniform without a DEFAULT, zero: 0 for a float (the nearer
    /// end of MIN...MAX when 0 is outside it), false, (0, 0), transparent black (0, 0, 0, 0), and 0 for a long
    /// (the first of `values` when 0 is not among them, since a long with values is a choice). The Vidvox
    /// editor differs (a float's midpoint, true for a bool); the ISF spec says nothing.
    package var effectiveDefault: ShaderValue? {
        if let defaultValue { return defaultValue }
        switch type {
        case .event, .bool: return .bool(false)
        case .long: return .int(values.isEmpty || values.contains(0) ? 0 : values[0])
        case .float:
            let lo = minimum?.scalar ?? -Double.infinity, hi = maximum?.scalar ?? Double.infinity
            return .float(min(max(0, min(lo, hi)), max(lo, hi)))
        case .point2D: return .vector([0, 0])
        case .vector3: return .vector([0, 0, 0])
        case .color: return .vector([0, 0, 0, 0])
        case .image, .audio, .audioFFT: return nil
        }
    }
}
