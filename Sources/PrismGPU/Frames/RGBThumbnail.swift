import CGLES
import PrismCore

/// A frame's small R'G'B' picture, 8 bits per channel, row by row from the top, RGBA (alpha 255): what
/// the segmentation model reads. `frameSize` is the size of the frame it was made from.
package struct RGBThumbnail: Sendable {
    package let size: Size
    package let rgba: [UInt8]
    package let frameSize: Size
}

/// Renders a frame's small R'G'B' picture for the segmentation model, at exactly the size asked (a model's
/// fixed input size stretches the frame to it), each pixel the mean of a 2×2 grid of samples inside the block
/// of the frame it covers, as the face detector's `LumaThumbnailer`. One per pipeline, on its GPU thread;
/// programs are made per source format.
package final class RGBThumbnailer {
    private var programs: [PixelFormat: ShaderProgram] = [:]
    /// Targets by size (the whole frame's picture and closer looks alternate); a few at most.
    private var targets: [Size: RenderTarget] = [:]
    private var vertexArray: GLuint = 0

    package init() { glGenVertexArrays(1, &vertexArray) }

    deinit { glDeleteVertexArrays(1, &vertexArray) }

    /// Draws and reads back `area` of `frame` (frame pixels: x, y, width, height; nil: the whole frame) at `size`
    /// (synchronously: 256×144 is 147 kB). Samples beyond the frame repeat its edge.
    package func render(_ frame: UploadedFrame, size: Size, area: SIMD4<Double>? = nil) throws -> RGBThumbnail {
        let program = try self.program(for: frame.format)
        if targets[size] == nil {
            if targets.count >= 4 { targets.removeAll() }
            targets[size] = try RenderTarget(size: size, format: .rgba8, linear: false)
        }
        guard let target = targets[size] else { preconditionFailure("thumbnail target was just made") }
        let pixels = try LumaThumbnailer.draw(program, frame: frame, thumbnail: size, area: area, into: target, vertexArray: vertexArray,
                                              label: "RGB thumbnail \(size)")
        return RGBThumbnail(size: size, rgba: pixels, frameSize: frame.size)
    }

    private func program(for format: PixelFormat) throws -> ShaderProgram {
        if let program = programs[format] { return program }
        // Row y of the target is row y of the picture from the top, as the luma thumbnail's.
        let fragment = FrameShaders.header + FrameShaders.sourceFunctions(for: format) + """

            uniform vec2 prism_origin;
            uniform vec2 prism_blockSize;
            uniform vec2 prism_frameSize;
            out vec4 prism_out;
            void main() {
                vec2 t = floor(gl_FragCoord.xy);
                vec3 sum = vec3(0.0);
                for (int j = 0; j < 2; j++) {
                    for (int i = 0; i < 2; i++) {
                        vec2 p = floor(prism_origin + (t + vec2(0.25 + 0.5 * float(i), 0.25 + 0.5 * float(j))) * prism_blockSize);
                        sum += prism_fetchSource(clamp(p, vec2(0.0), prism_frameSize - 1.0) + 0.5).rgb;
                    }
                }
                prism_out = vec4(sum * 0.25, 1.0);
            }

            """
        let program = try ShaderProgram(label: "RGB thumbnail (\(format))", fragment: fragment)
        programs[format] = program
        return program
    }
}
