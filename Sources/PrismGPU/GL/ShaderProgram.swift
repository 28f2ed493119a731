import CGLES
import PrismCore

/// A linked GLSL ES program with a cache of uniform locations: a vertex and fragment pair that draws, or
/// a compute shader that dispatches. Made, used and deleted on its context's GPU thread (checked).
package final class ShaderProgram {
    let name: GLuint
    package let label: String
    private let home: GLObjectHome
    private var locations: [String: GLint] = [:]
    /// Locations of kernel uniforms by instance prefix and placeholder (`n3_` + `$scale`), so setting
    /// them every frame builds no strings.
    private var prefixedLocations: [String: [String: GLint]] = [:]

    /// The vertex shader every full-frame pass uses: one triangle covering the target, no vertex buffers.
    /// `prism_texcoord` runs 0...1 across the target with y = 0 at the first row in memory (image top).
    package static let fullscreenVertexBody = """
        out vec2 prism_texcoord;
        void main() {
            vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
            prism_texcoord = corner;
            gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
        }
        """

    /// Draws 6 vertices (a quad of two triangles, which a custom vertex shader builds from `gl_VertexID`
    /// and may move) after clearing the target, instead of one full-target triangle.
    package let drawsQuad: Bool
    /// A compute program (`init(label:compute:)`): it dispatches, and never draws.
    package let isCompute: Bool

    /// Compiles and links; failures come back as `ShaderCompileError` with the driver's log.
    /// `drawsQuad`: see the property (only with a `vertex` shader that builds the quad).
    package init(label: String, vertex: String? = nil, fragment: String, drawsQuad: Bool = false) throws {
        let thread = GLObjectHome.requireGPUThread(.program)
        self.label = label
        self.drawsQuad = drawsQuad
        isCompute = false
        // Both stages must declare the same GLSL version: the default vertex shader follows the fragment's.
        let version = fragment.split(separator: "\n", maxSplits: 1).first.map(String.init)
            .flatMap { $0.hasPrefix("#version") ? $0 : nil } ?? "#version 300 es"
        let vertex = vertex ?? version + "\n" + ShaderProgram.fullscreenVertexBody
        let vs = try ShaderProgram.compile(GLenum(GL_VERTEX_SHADER), vertex, label: label, stage: .vertex)
        defer { glDeleteShader(vs) }
        let fs = try ShaderProgram.compile(GLenum(GL_FRAGMENT_SHADER), fragment, label: label, stage: .fragment)
        defer { glDeleteShader(fs) }
        name = try ShaderProgram.link([vs, fs], label: label, thread: thread)
        home = GLObjectHome(.program)
    }

    /// Compiles and links a compute program (`#version 310 es` or newer, with its `local_size` layout);
    /// failures come back as `ShaderCompileError` at `.compute` (or `.link`) with the driver's log. On a
    /// context without compute (`GPULimits.supportsCompute`, which `GPUOptions.maxGLESMinorVersion` may
    /// cap below what the driver has) it throws at `.compute` before any GL call, so a capped context
    /// behaves like a real GLES 3.0 one.
    package init(label: String, compute: String) throws {
        let thread = GLObjectHome.requireGPUThread(.program)
        let limits = GPULimits.query()
        guard limits.supportsCompute else {
            throw ShaderCompileError(stage: .compute, name: label, log:
                "error: compute shaders need OpenGL ES 3.1; this context is OpenGL ES \(limits.glesMajorVersion).\(limits.glesMinorVersion)")
        }
        self.label = label
        drawsQuad = false
        isCompute = true
        let cs = try ShaderProgram.compile(GLenum(GL_COMPUTE_SHADER), compute, label: label, stage: .compute)
        defer { glDeleteShader(cs) }
        name = try ShaderProgram.link([cs], label: label, thread: thread)
        home = GLObjectHome(.program)
    }

    /// Links compiled shaders into a program (counted as a link on `thread`, failed ones too).
    private static func link(_ shaders: [GLuint], label: String, thread: GPUThread) throws -> GLuint {
        let program = glCreateProgram()
        for shader in shaders { glAttachShader(program, shader) }
        glLinkProgram(program)
        thread.countLink()
        var status: GLint = 0
        glGetProgramiv(program, GLenum(GL_LINK_STATUS), &status)
        guard status == GL_TRUE else {
            let log = Self.infoLog(program, length: glGetProgramiv, read: glGetProgramInfoLog)
            glDeleteProgram(program)
            throw ShaderCompileError(stage: .link, name: label, log: log)
        }
        return program
    }

    deinit {
        let name = self.name
        home.delete { glDeleteProgram(name) }
    }

    private static func compile(_ type: GLenum, _ source: String, label: String,
                                stage: ShaderCompileError.Stage) throws -> GLuint {
        let shader = glCreateShader(type)
        source.withCString { pointer in
            var sources: UnsafePointer<GLchar>? = pointer
            glShaderSource(shader, 1, &sources, nil)
        }
        glCompileShader(shader)
        var status: GLint = 0
        glGetShaderiv(shader, GLenum(GL_COMPILE_STATUS), &status)
        guard status == GL_TRUE else {
            let log = Self.infoLog(shader, length: glGetShaderiv, read: glGetShaderInfoLog)
            glDeleteShader(shader)
            throw ShaderCompileError(stage: stage, name: label, log: log)
        }
        return shader
    }

    /// A shader's or program's info log as text (the two differ only in the GL calls that read it).
    private static func infoLog(_ object: GLuint,
                                length: (GLuint, GLenum, UnsafeMutablePointer<GLint>?) -> Void,
                                read: (GLuint, GLsizei, UnsafeMutablePointer<GLsizei>?, UnsafeMutablePointer<GLchar>?) -> Void) -> String {
        var count: GLint = 0
        length(object, GLenum(GL_INFO_LOG_LENGTH), &count)
        var log = [GLchar](repeating: 0, count: Int(max(count, 1)))
        read(object, GLsizei(log.count), nil, &log)
        return String(cMessage: log)
    }

    package func use() {
        home.check()
        glUseProgram(name)
    }

    /// The location of a uniform, or -1 when the compiler removed or never had it (setting -1 is a no-op).
    package func location(_ uniform: String) -> GLint {
        if let cached = locations[uniform] { return cached }
        let location = glGetUniformLocation(name, uniform)
        locations[uniform] = location
        return location
    }

    /// The location of `placeholder` (`$name`) with its `$` replaced by `prefix`.
    package func location(prefix: String, placeholder: String) -> GLint {
        if let cached = prefixedLocations[prefix]?[placeholder] { return cached }
        let name = placeholder.hasPrefix("$") ? prefix + placeholder.dropFirst() : placeholder
        let found = location(name)
        prefixedLocations[prefix, default: [:]][placeholder] = found
        return found
    }

    package func set(_ uniform: String, _ value: Float) { set(at: location(uniform), value) }
    package func set(_ uniform: String, _ value: Int32) { set(at: location(uniform), value) }
    package func set(_ uniform: String, _ x: Float, _ y: Float) { set(at: location(uniform), x, y) }
    package func set(_ uniform: String, _ x: Float, _ y: Float, _ z: Float) { set(at: location(uniform), x, y, z) }
    package func set(_ uniform: String, _ x: Float, _ y: Float, _ z: Float, _ w: Float) {
        set(at: location(uniform), x, y, z, w)
    }
    package func set(_ uniform: String, _ x: Int32, _ y: Int32, _ z: Int32, _ w: Int32) {
        glUniform4i(location(uniform), x, y, z, w)
    }

    // By location (from `location(_:)`, cached by the caller); -1 is a no-op. The program must be in use.
    package func set(at location: GLint, _ value: Float) { glUniform1f(location, value) }
    package func set(at location: GLint, _ value: Int32) { glUniform1i(location, value) }
    package func set(at location: GLint, _ x: Float, _ y: Float) { glUniform2f(location, x, y) }
    package func set(at location: GLint, _ x: Float, _ y: Float, _ z: Float) { glUniform3f(location, x, y, z) }
    package func set(at location: GLint, _ x: Float, _ y: Float, _ z: Float, _ w: Float) { glUniform4f(location, x, y, z, w) }

    /// Sets a mat3 from row-major rows (GL wants columns, so it is transposed here).
    package func setMatrix3(_ uniform: String, rows: [[Double]]) {
        setMatrix3(at: location(uniform), rows: rows)
    }

    /// Sets a mat3 at a location from row-major rows, without allocating.
    package func setMatrix3(at location: GLint, rows: [[Double]]) {
        guard location >= 0 else { return }
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 9) { columns in
            for column in 0..<3 { for row in 0..<3 { columns[column * 3 + row] = Float(rows[row][column]) } }
            glUniformMatrix3fv(location, 1, GLboolean(GL_FALSE), columns.baseAddress)
        }
    }

    /// Draws one full-target triangle with this program into the bound framebuffer (or, for a program that
    /// `drawsQuad`, clears to transparent black and draws its quad: moved corners may leave parts uncovered).
    package func drawFullscreen() {
        home.check()
        precondition(!isCompute, "\(label) is a compute program: dispatchCompute, not drawFullscreen")
        glUseProgram(name)
        if drawsQuad {
            glClearColor(0, 0, 0, 0)
            glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 6)
        } else {
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        }
    }
}

extension ShaderProgram {
    /// What a dispatch's writes must be visible to before the next command: sampling (`texture`,
    /// `texelFetch`), image loads and stores by a later dispatch, framebuffer access (a draw into it, a
    /// clear, glReadPixels readback) and texture updates (an upload into a pooled texture). Image stores
    /// are incoherent in GLES: without the barrier a following pass may read stale texels.
    static let computeBarriers = GLbitfield(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT
                                            | GL_FRAMEBUFFER_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT)

    /// Runs this compute program over `groupsX × groupsY` work groups (each of the shader's `local_size`),
    /// then puts up the barrier that lets the next draw, dispatch or readback see what it wrote. Images
    /// (`Texture.bindImage`), samplers and uniforms are bound and set by the caller first.
    package func dispatchCompute(groupsX: Int, groupsY: Int) {
        home.check()
        precondition(isCompute, "\(label) is not a compute program")
        precondition(groupsX > 0 && groupsY > 0, "a dispatch has at least one work group each way")
        // Mesa's softpipe lets a dispatch sample a texture whose rendering is still in its tile cache
        // (garbage, where GL promises the finished picture); a flush puts it in memory, and costs a real
        // GPU one submit per compute pass.
        glFlush()
        glUseProgram(name)
        glDispatchCompute(GLuint(groupsX), GLuint(groupsY), 1)
        glMemoryBarrier(Self.computeBarriers)
    }
}

/// The GL state a context needs once: a bound vertex array (required by GLES 3 for attribute-less draws).
package final class DrawState {
    private let vertexArray: GLuint
    private let home: GLObjectHome

    package init() {
        home = GLObjectHome(.vertexArray)
        var vertexArray: GLuint = 0
        glGenVertexArrays(1, &vertexArray)
        self.vertexArray = vertexArray
        glBindVertexArray(vertexArray)
        glDisable(GLenum(GL_BLEND))
        glDisable(GLenum(GL_DEPTH_TEST))
        glDisable(GLenum(GL_DITHER))
    }

    deinit {
        let vertexArray = self.vertexArray
        home.delete {
            var name = vertexArray
            glDeleteVertexArrays(1, &name)
        }
    }
}
