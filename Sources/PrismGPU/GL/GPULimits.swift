import CGLES
import Foundation
import PrismCore

/// What the current GL context can allocate and run, read once when the context is made
/// (`glGetIntegerv`), so limits in errors are this GPU's, not a guess. Call on the GPU thread.
package struct GPULimits: Sendable, Hashable {
    /// `GL_MAX_TEXTURE_SIZE`: the widest or tallest 2D texture.
    package var maxTextureSize: Int
    /// `GL_MAX_RENDERBUFFER_SIZE` and `GL_MAX_VIEWPORT_DIMS`: what a render target may be drawn at.
    package var maxRenderSize: Int
    /// The GLES version the context is used as: what the driver reports, capped by
    /// `GPUOptions.maxGLESMinorVersion` (a driver may hand out 3.2 when 3.0 was asked for).
    package var glesMajorVersion: Int
    package var glesMinorVersion: Int
    /// `GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS`: the most invocations in one work group (`local_size_x × y × z`);
    /// 0 without compute.
    package var maxComputeWorkGroupInvocations: Int
    /// `GL_MAX_COMPUTE_WORK_GROUP_SIZE` (x, y): the largest `local_size_x` and `local_size_y`; 0 without compute.
    package var maxComputeWorkGroupSize: SIMD2<Int>
    /// `GL_MAX_COMPUTE_SHARED_MEMORY_SIZE`: bytes of `shared` variables one work group may declare; 0 without compute.
    package var maxComputeSharedMemorySize: Int

    /// Limits without compute (a GLES 3.0 context) unless the compute ones are given.
    package init(maxTextureSize: Int, maxRenderSize: Int, glesMajorVersion: Int = 3, glesMinorVersion: Int = 0,
                 maxComputeWorkGroupInvocations: Int = 0, maxComputeWorkGroupSize: SIMD2<Int> = .zero,
                 maxComputeSharedMemorySize: Int = 0) {
        self.maxTextureSize = maxTextureSize
        self.maxRenderSize = maxRenderSize
        self.glesMajorVersion = glesMajorVersion
        self.glesMinorVersion = glesMinorVersion
        self.maxComputeWorkGroupInvocations = maxComputeWorkGroupInvocations
        self.maxComputeWorkGroupSize = maxComputeWorkGroupSize
        self.maxComputeSharedMemorySize = maxComputeSharedMemorySize
    }

    /// The smaller of the texture and render limits: the largest side a pass target can have.
    package var maxTargetSide: Int { Swift.min(maxTextureSize, maxRenderSize) }

    /// Compute shaders, image load/store and memory barriers: GLES 3.1 or newer (mpv hooks' `//!COMPUTE` passes need it).
    package var supportsCompute: Bool { (glesMajorVersion, glesMinorVersion) >= (3, 1) }

    /// The limits of the context current on this thread: those read when its `GPUContext` was made, or
    /// (a context made some other way) read now, uncapped.
    package static func query() -> GPULimits {
        GPUThread.current?.limits ?? read(maxMinorVersion: nil)
    }

    /// Reads the limits of the context current on this thread, treating it as at most GLES 3.`maxMinorVersion`.
    static func read(maxMinorVersion: Int?) -> GPULimits {
        var texture: GLint = 0, renderbuffer: GLint = 0
        var viewport: [GLint] = [0, 0]
        glGetIntegerv(GLenum(GL_MAX_TEXTURE_SIZE), &texture)
        glGetIntegerv(GLenum(GL_MAX_RENDERBUFFER_SIZE), &renderbuffer)
        glGetIntegerv(GLenum(GL_MAX_VIEWPORT_DIMS), &viewport)
        // GLES 3.0 guarantees 2048 for each; a context that answers less (or nothing) gets the minimum.
        let render = [Int(renderbuffer), Int(viewport[0]), Int(viewport[1])].filter { $0 > 0 }.min() ?? 2048
        var limits = GPULimits(maxTextureSize: Swift.max(2048, Int(texture)), maxRenderSize: Swift.max(2048, render))
        // GL_MAJOR/MINOR_VERSION are GLES 3.0 queries, so every context Prism makes answers them.
        var major: GLint = 3, minor: GLint = 0
        glGetIntegerv(GLenum(GL_MAJOR_VERSION), &major)
        glGetIntegerv(GLenum(GL_MINOR_VERSION), &minor)
        limits.glesMajorVersion = Int(major)
        limits.glesMinorVersion = Int(minor)
        if major == 3, let cap = maxMinorVersion { limits.glesMinorVersion = Swift.min(Int(minor), cap) }
        guard limits.supportsCompute else { return limits }
        func integer(_ name: Int32, index: GLuint? = nil) -> Int {
            var value: GLint = 0
            if let index { glGetIntegeri_v(GLenum(name), index, &value) } else { glGetIntegerv(GLenum(name), &value) }
            return Int(value)
        }
        limits.maxComputeWorkGroupInvocations = integer(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS)
        limits.maxComputeWorkGroupSize = SIMD2(integer(GL_MAX_COMPUTE_WORK_GROUP_SIZE, index: 0),
                                          integer(GL_MAX_COMPUTE_WORK_GROUP_SIZE, index: 1))
        limits.maxComputeSharedMemorySize = integer(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE)
        return limits
    }
}
