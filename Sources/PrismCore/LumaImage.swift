/// A small 8-bit grayscale picture of a frame (full-range luma, top row first, rows packed): what the
/// GPU hands the face detector instead of the whole frame.
public struct LumaImage: Sendable, Equatable {
    /// Width and height of the thumbnail in pixels (not the frame's).
    public var size: Size
    /// size.width × size.height bytes.
    public var pixels: [UInt8]
    /// The size of the frame it was reduced from, so positions found in it map back to the frame.
    public var frameSize: Size

    /// Wraps `pixels` (exactly `size.pixelCount` bytes, else a precondition failure) reduced from a frame of `frameSize`.
    public init(size: Size, pixels: [UInt8], frameSize: Size) {
        precondition(pixels.count == size.pixelCount, "a \(size) luma image needs \(size.pixelCount) bytes")
        self.size = size
        self.pixels = pixels
        self.frameSize = frameSize
    }

    /// The thumbnail size for a frame: at most `maxWidth` wide (a multiple of 4, so four samples fill
    /// one RGBA8 texel on the GPU), never enlarged, with the frame's aspect ratio.
    public static func thumbnailSize(for frame: Size, maxWidth: Int = 320) -> Size {
        let width = max(4, min(maxWidth, frame.width) / 4 * 4)
        let height = max(1, Int((Double(frame.height) * Double(width) / Double(frame.width)).rounded()))
        return Size(width: width, height: height)
    }
}
