import CGLES
import PrismCore

/// Renders a frame's small grayscale picture for the face detector: at most `maxWidth` pixels wide
/// (`LumaImage.thumbnailSize`), full-range BT.601 luma of the R'G'B' the filters see, each pixel the
/// mean of a 2×2 grid of samples inside the block of the frame it covers. Four thumbnail pixels are
/// packed into one RGBA8 texel, so the draw is tiny (80×180 texels for 720p) and the readback is
/// width×height bytes. One per pipeline, on its GPU thread; programs are made per source format.
package final class LumaThumbnailer {
    package let maxWidth: Int
    private let drawer = ThumbnailDrawer(name: "luma thumbnail", main: """
        // Mean luma of samples at 1/4 and 3/4 of thumbnail pixel t's block, in each direction.
        float prism_thumbLuma(vec2 t) {
            float sum = 0.0;
            for (int j = 0; j < 2; j++) {
                for (int i = 0; i < 2; i++) {
                    vec2 p = floor(prism_origin + (t + vec2(0.25 + 0.5 * float(i), 0.25 + 0.5 * float(j))) * prism_blockSize);
                    sum += dot(prism_fetchSource(clamp(p, vec2(0.0), prism_frameSize - 1.0) + 0.5).rgb, vec3(0.299, 0.587, 0.114));
                }
            }
            return sum * 0.25;
        }
        void main() {
            ivec2 texel = ivec2(gl_FragCoord.xy);
            float y = float(texel.y);
            float x = float(texel.x * 4);
            prism_out = vec4(prism_thumbLuma(vec2(x, y)), prism_thumbLuma(vec2(x + 1.0, y)),
                             prism_thumbLuma(vec2(x + 2.0, y)), prism_thumbLuma(vec2(x + 3.0, y)));
        }

        """)

    package init(maxWidth: Int = 320) { self.maxWidth = maxWidth }

    /// Draws and reads back the thumbnail of `frame` (synchronously: it is a few kilobytes).
    package func render(_ frame: UploadedFrame) throws -> LumaImage {
        try render(frame, size: LumaImage.thumbnailSize(for: frame.size, maxWidth: maxWidth))
    }

    /// Draws and reads back `area` of `frame` (frame pixels: x, y, width, height; nil: the whole frame) at
    /// `size`, whose width must be a multiple of 4. Samples beyond the frame repeat its edge.
    package func render(_ frame: UploadedFrame, size: Size, area: SIMD4<Double>? = nil) throws -> LumaImage {
        precondition(size.width % 4 == 0, "four luma pixels a texel")
        // Four luma pixels a texel (`thumbnailSize` keeps the width a multiple of 4): the bytes are the picture's.
        let pixels = try drawer.draw(frame, thumbnail: size, target: Size(width: size.width / 4, height: size.height), area: area)
        return LumaImage(size: size, pixels: pixels, frameSize: frame.size)
    }
}

/// What the luma and RGB thumbnailers share: a program per source format whose `main` (GLSL) reads the
/// uniforms `prism_origin` (the area's top left in frame pixels), `prism_blockSize` (frame pixels per
/// thumbnail pixel) and `prism_frameSize`; a few targets by size (the whole frame's picture and closer looks
/// alternate); the draw and the RGBA8 readback.
final class ThumbnailDrawer {
    private let name: String
    private let main: String
    private var programs: [PixelFormat: ShaderProgram] = [:]
    private var targets: [Size: RenderTarget] = [:]
    private var vertexArray: GLuint = 0

    init(name: String, main: String) {
        self.name = name
        self.main = main
        glGenVertexArrays(1, &vertexArray)
    }

    deinit { glDeleteVertexArrays(1, &vertexArray) }

    /// Draws the `size` thumbnail of `area` of `frame` (nil: all of it) over a `targetSize` target and reads
    /// the target back as RGBA8 bytes.
    func draw(_ frame: UploadedFrame, thumbnail size: Size, target targetSize: Size, area: SIMD4<Double>?) throws -> [UInt8] {
        let program = try self.program(for: frame.format)
        if targets[targetSize] == nil {
            if targets.count >= 4 { targets.removeAll() }
            targets[targetSize] = try RenderTarget(size: targetSize, format: .rgba8, linear: false)
        }
        guard let target = targets[targetSize] else { preconditionFailure("thumbnail target was just made") }
        let area = area ?? SIMD4(0, 0, Double(frame.size.width), Double(frame.size.height))
        var previousArray: GLint = 0
        glGetIntegerv(GLenum(GL_VERTEX_ARRAY_BINDING), &previousArray)
        defer { glBindVertexArray(GLuint(previousArray)) }
        glBindVertexArray(vertexArray)
        target.bindForDrawing()
        program.use()
        frame.bind(to: program)
        program.set("prism_origin", Float(area.x), Float(area.y))
        program.set("prism_blockSize", Float(area.z / Double(size.width)), Float(area.w / Double(size.height)))
        program.set("prism_frameSize", Float(frame.size.width), Float(frame.size.height))
        program.drawFullscreen()
        var pixels = [UInt8](repeating: 0, count: target.size.pixelCount * 4)
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), target.framebuffer)
        glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0))
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 4)
        pixels.withUnsafeMutableBytes { bytes in
            glReadPixels(0, 0, GLsizei(target.size.width), GLsizei(target.size.height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE),
                         bytes.baseAddress)
        }
        try GLError.check("glReadPixels(\(name) \(size))")
        return pixels
    }

    private func program(for format: PixelFormat) throws -> ShaderProgram {
        if let program = programs[format] { return program }
        let fragment = FrameShaders.header + FrameShaders.sourceFunctions(for: format) + """

            uniform vec2 prism_origin;
            uniform vec2 prism_blockSize;
            uniform vec2 prism_frameSize;
            out vec4 prism_out;

            """ + main
        let program = try ShaderProgram(label: "\(name) (\(format))", fragment: fragment)
        programs[format] = program
        return program
    }
}
