import CGLES

/// The GLSL type of a uniform declared as data (`KernelUniform`, a plan's pass uniforms): what the planner
/// writes in the shader's declaration and what the value set each frame must be.
package enum UniformType: String, Hashable, Sendable {
    /// `bool` is set as an int (0 or 1), as GL does.
    case float, int, bool, vec2, vec3, vec4, ivec4, mat3

    /// The type as GLSL spells it.
    package var glsl: String { rawValue }
}

/// A uniform's value for one frame: plain numbers, which `ShaderProgram.set(at:_:)` turns into the GL call
/// for its type.
package enum UniformValue: Equatable, Sendable {
    case float(Float)
    case int(Int32)
    case vec2(Float, Float)
    case vec3(Float, Float, Float)
    case vec4(Float, Float, Float, Float)
    case ivec4(Int32, Int32, Int32, Int32)
    /// Row-major rows (GL wants columns: transposed when set).
    case mat3(rows: [[Double]])
    /// The first elements of a `vec4` array (the rest keep their values).
    case vec4Array([SIMD4<Double>])

    package static func vec2(_ v: SIMD2<Double>) -> UniformValue { .vec2(Float(v.x), Float(v.y)) }
    package static func vec4(_ v: SIMD4<Double>) -> UniformValue { .vec4(Float(v.x), Float(v.y), Float(v.z), Float(v.w)) }

    /// Zero of a type (a matrix of zeros), for a value its source cannot give.
    package static func zero(_ type: UniformType) -> UniformValue {
        switch type {
        case .float: .float(0)
        case .int, .bool: .int(0)
        case .vec2: .vec2(0, 0)
        case .vec3: .vec3(0, 0, 0)
        case .vec4: .vec4(0, 0, 0, 0)
        case .ivec4: .ivec4(0, 0, 0, 0)
        case .mat3: .mat3(rows: Array(repeating: [0, 0, 0], count: 3))
        }
    }

    /// Whether the value may be set on a uniform of `type` (a bool takes an int).
    package func fits(_ type: UniformType) -> Bool { self.type == type || (type == .bool && self.type == .int) }

    /// The GLSL type the value fits.
    package var type: UniformType {
        switch self {
        case .float: .float
        case .int: .int
        case .vec2: .vec2
        case .vec3: .vec3
        case .vec4, .vec4Array: .vec4
        case .ivec4: .ivec4
        case .mat3: .mat3
        }
    }
}

/// The kind of sampler a texture declared as data is read through.
package enum SamplerType: String, Hashable, Sendable {
    case sampler2D
    /// Declared `highp` (ES has no default precision for it).
    case sampler3D

    package var glsl: String { self == .sampler3D ? "highp sampler3D" : "sampler2D" }
}

extension ShaderProgram {
    /// Sets a declared uniform's value at `location` (-1: nothing). The program must be in use.
    package func set(at location: GLint, _ value: UniformValue) {
        guard location >= 0 else { return }
        switch value {
        case .float(let x): glUniform1f(location, x)
        case .int(let x): glUniform1i(location, x)
        case .vec2(let x, let y): glUniform2f(location, x, y)
        case .vec3(let x, let y, let z): glUniform3f(location, x, y, z)
        case .vec4(let x, let y, let z, let w): glUniform4f(location, x, y, z, w)
        case .ivec4(let x, let y, let z, let w): glUniform4i(location, x, y, z, w)
        case .mat3(let rows): setMatrix3(at: location, rows: rows)
        case .vec4Array(let elements):
            guard !elements.isEmpty else { return }
            withUnsafeTemporaryAllocation(of: Float.self, capacity: elements.count * 4) { values in
                for (index, v) in elements.enumerated() {
                    values[index * 4] = Float(v.x)
                    values[index * 4 + 1] = Float(v.y)
                    values[index * 4 + 2] = Float(v.z)
                    values[index * 4 + 3] = Float(v.w)
                }
                glUniform4fv(location, GLsizei(elements.count), values.baseAddress)
            }
        }
    }
}
