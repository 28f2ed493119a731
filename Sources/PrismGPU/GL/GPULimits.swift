import CGLES
import Foundation
import PrismCore

/// What the current GL context can allocate, read once per compile from the context itself
/// (`glGetIntegerv`), so limits in errors are this GPU's, not a guess. Call on the GPU thread.
package struct GPULimits: Sendable, Hashable {
    /// `GL_MAX_TEXTURE_SIZE`: the widest or tallest 2D texture.
    package var maxTextureSize: Int
    /// `GL_MAX_RENDERBUFFER_SIZE` and `GL_MAX_VIEWPORT_DIMS`: what a render target may be drawn at.
    package var maxRenderSize: Int

    package init(maxTextureSize: Int, maxRenderSize: Int) {
        self.maxTextureSize = maxTextureSize
        self.maxRenderSize = maxRenderSize
    }

    /// The smaller of the texture and render limits: the largest side a pass target can have.
    package var maxTargetSide: Int { Swift.min(maxTextureSize, maxRenderSize) }

    /// Reads the limits of the context current on this thread.
    package static func query() -> GPULimits {
        var texture: GLint = 0, renderbuffer: GLint = 0
        var viewport: [GLint] = [0, 0]
        glGetIntegerv(GLenum(GL_MAX_TEXTURE_SIZE), &texture)
        glGetIntegerv(GLenum(GL_MAX_RENDERBUFFER_SIZE), &renderbuffer)
        glGetIntegerv(GLenum(GL_MAX_VIEWPORT_DIMS), &viewport)
        // GLES 3.0 guarantees 2048 for each; a context that answers less (or nothing) gets the minimum.
        let render = [Int(renderbuffer), Int(viewport[0]), Int(viewport[1])].filter { $0 > 0 }.min() ?? 2048
        return GPULimits(maxTextureSize: Swift.max(2048, Int(texture)), maxRenderSize: Swift.max(2048, render))
    }
}
