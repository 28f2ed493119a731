import PrismCore
import PrismGPU

/// What a declared uniform's value may be computed from each frame.
package struct UniformInputs {
    package let frame: FrameContext
    /// The size of the kernel's output in the pass.
    package let outputSize: Size
    /// The sizes of the kernel's inputs.
    package let inputSizes: [Size]
    /// The kernel's parameters now (a parameter changed since compiling reaches its uniforms).
    package let parameters: ParameterValues?
}

/// One uniform of a kernel, declared as data (libplacebo's `pl_shader_var` is the model): its name and
/// GLSL type, written into the shader text by the planner (the kernel's GLSL only uses it), and where its
/// value comes from each frame, which the renderer sets. Names use the kernel's `$` prefix.
package struct KernelUniform {
    /// `$name`, as the kernel's GLSL uses it.
    package let name: String
    package let type: UniformType
    /// An array's length (nil: not an array).
    package let count: Int?
    /// The kernel's GLSL declares it itself (a user shader's text, by ISF or ShaderToy convention): the
    /// planner writes no declaration, the renderer still sets it from `source`.
    package let inSource: Bool
    package let source: Source

    package enum Source {
        /// The same value every frame.
        case constant(UniformValue)
        /// The kernel's parameter of that name, as the uniform's type (numbers as float or int, points as
        /// vec2, colours as vec3 or vec4).
        case parameter(String)
        /// The kernel's output size in pixels (vec2).
        case outputSize
        /// Input `index`'s size in pixels (vec2).
        case inputSize(Int)
        /// Seconds since the run's first frame (float).
        case time
        /// The frame's regions (faces) as the kernel maps them, or anything else the kernel derives from
        /// its parameters, the sizes and the frame.
        case computed((UniformInputs) -> UniformValue)
    }

    package init(_ name: String, _ type: UniformType, count: Int? = nil, inSource: Bool = false, _ source: Source) {
        self.name = name
        self.type = type
        self.count = count
        self.inSource = inSource
        self.source = source
    }

    /// The GLSL declaration the planner writes (before the prefix replaces `$`).
    package var declaration: String {
        "uniform \(type.glsl) \(name)\(count.map { "[\($0)]" } ?? "");\n"
    }

    /// This frame's value.
    package func value(_ inputs: UniformInputs) -> UniformValue {
        switch source {
        case .constant(let value): return value
        case .outputSize: return .vec2(Float(inputs.outputSize.width), Float(inputs.outputSize.height))
        case .inputSize(let index):
            let size = index < inputs.inputSizes.count ? inputs.inputSizes[index] : inputs.outputSize
            return .vec2(Float(size.width), Float(size.height))
        case .time: return .float(Float(inputs.frame.time))
        case .computed(let compute): return compute(inputs)
        case .parameter(let parameter):
            // Only a `ParameterizedKernel` has parameters to read.
            guard let p = inputs.parameters else { return .zero(type) }
            switch type {
            case .int: return .int(Int32(truncatingIfNeeded: p.int(parameter)))
            case .bool: return .int(p.bool(parameter) ? 1 : 0)
            case .vec2: return .vec2(p.point(parameter))
            case .vec3:
                let c = p.color(parameter)
                return .vec3(Float(c.x), Float(c.y), Float(c.z))
            case .vec4: return .vec4(p.color(parameter))
            default: return .float(Float(p.double(parameter)))
            }
        }
    }
}

/// One texture a kernel binds itself (a LUT, an imported image), declared as data (libplacebo's
/// `pl_shader_desc`): the sampler's name and type, declared by the planner, and the texture the renderer
/// binds to it each frame. Textures of other passes (inputs, prepass targets) are the planner's own
/// bindings (`CompiledPass.textures`).
package struct KernelTexture {
    /// `$name`, as the kernel's GLSL uses it.
    package let name: String
    package let type: SamplerType
    /// Declared by the kernel's GLSL itself (see `KernelUniform.inSource`).
    package let inSource: Bool
    /// The texture to bind this frame (nil: none is made yet; the sampler is left alone).
    package let texture: () -> Texture?

    package init(_ name: String, _ type: SamplerType, inSource: Bool = false, texture: @escaping () -> Texture?) {
        self.name = name
        self.type = type
        self.inSource = inSource
        self.texture = texture
    }

    package var declaration: String { "uniform \(type.glsl) \(name);\n" }
}

/// A uniform a planner adds to a pass of its own (a Y'CbCr route's colour chain): its name and type, declared
/// in the pass's text from this; the planner's per-frame values come in the same order.
struct PassUniform: Equatable {
    let name: String
    let type: UniformType
    init(_ name: String, _ type: UniformType) {
        self.name = name
        self.type = type
    }
    var declaration: String { "uniform \(type.glsl) \(name);\n" }
}
