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
    // Row y of the target is row y of the picture from the top, as the luma thumbnail's.
    private let drawer = ThumbnailDrawer(name: "RGB thumbnail", main: """
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

        """)

    package init() {}

    /// Draws and reads back `area` of `frame` (frame pixels: x, y, width, height; nil: the whole frame) at `size`
    /// (synchronously: 256×144 is 147 kB). Samples beyond the frame repeat its edge.
    package func render(_ frame: UploadedFrame, size: Size, area: SIMD4<Double>? = nil) throws -> RGBThumbnail {
        let pixels = try drawer.draw(frame, thumbnail: size, target: size, area: area)
        return RGBThumbnail(size: size, rgba: pixels, frameSize: frame.size)
    }
}
