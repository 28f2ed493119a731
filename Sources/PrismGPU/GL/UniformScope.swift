import CGLES

/// Hands out texture units for one draw; a renderer keeps one and resets it per draw.
package final class TextureUnits {
    private var used: Int
    package init(startingAt first: Int = 0) { used = first }
    package func reset(to first: Int) { used = first }
    package func next() -> Int {
        defer { used += 1 }
        return used
    }
}

/// The uniforms and textures of one shader fragment inside a program, set by name: `$name` stands for
/// the fragment's prefix (`n3_` + `$scale` → `n3_scale`). What a fragment hands over is plain data —
/// numbers, vectors, matrices, `Texture` objects (2D or 3D) — and this type turns it into GL calls
/// (locations looked up once per program and prefix, so setting them every frame builds no strings).
/// Use it while the program is in use, on its GPU thread.
package struct UniformScope {
    package let program: ShaderProgram
    package let prefix: String
    package let units: TextureUnits

    package init(program: ShaderProgram, prefix: String, units: TextureUnits) {
        self.program = program
        self.prefix = prefix
        self.units = units
    }

    private func at(_ placeholder: String) -> GLint { program.location(prefix: prefix, placeholder: placeholder) }

    package func set(_ uniform: String, _ value: Float) { program.set(at: at(uniform), value) }
    package func set(_ uniform: String, _ value: Int32) { program.set(at: at(uniform), value) }
    package func set(_ uniform: String, _ x: Float, _ y: Float) { program.set(at: at(uniform), x, y) }
    package func set(_ uniform: String, _ x: Float, _ y: Float, _ z: Float) { program.set(at: at(uniform), x, y, z) }
    package func set(_ uniform: String, _ x: Float, _ y: Float, _ z: Float, _ w: Float) {
        program.set(at: at(uniform), x, y, z, w)
    }
    package func set(_ uniform: String, _ v: SIMD4<Double>) {
        program.set(at: at(uniform), Float(v.x), Float(v.y), Float(v.z), Float(v.w))
    }
    package func set(_ uniform: String, _ v: SIMD2<Double>) { program.set(at: at(uniform), Float(v.x), Float(v.y)) }
    /// A mat3 from row-major rows.
    package func setMatrix3(_ uniform: String, rows: [[Double]]) { program.setMatrix3(at: at(uniform), rows: rows) }

    /// Binds `texture` (2D or 3D, for a `sampler2D` or `sampler3D`) to the next free unit and points the
    /// sampler `uniform` at it (nothing when the compiler removed the sampler).
    package func bind(_ uniform: String, _ texture: Texture) {
        let location = at(uniform)
        guard location >= 0 else { return }
        let unit = units.next()
        texture.bind(unit: unit)
        program.set(at: location, Int32(unit))
    }
}
