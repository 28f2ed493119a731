import PrismCore

/// What a face detector reads: grey (the cascades) or colour (the networks).
public enum DetectionChannels: Sendable, Equatable {
    /// One byte a pixel, full-range BT.601 luma.
    case luma
    /// Four bytes a pixel, R'G'B'A (A = 255).
    case rgba

    public var bytesPerPixel: Int { self == .luma ? 1 : 4 }
}

/// A picture the GPU makes for the detector from one frame: the whole frame, or a part of it (a closer look
/// around a face the detector missed), reduced or enlarged to `size`. Rows from the top.
public struct DetectionImage: Sendable, Equatable {
    public var size: Size
    public var channels: DetectionChannels
    /// `size.pixelCount × channels.bytesPerPixel` bytes.
    public var pixels: [UInt8]
    /// The size of the frame it was made from.
    public var frameSize: Size
    /// The part of the frame it shows, in frame pixels (may reach past the frame's edges: those pixels
    /// repeat the edge).
    public var area: FaceBox
    /// The track a closer look was for (nil: the whole frame).
    public var track: Int?

    /// Wraps `pixels` (exactly size × channels bytes, else a precondition failure).
    public init(size: Size, channels: DetectionChannels, pixels: [UInt8], frameSize: Size, area: FaceBox? = nil, track: Int? = nil) {
        precondition(pixels.count == size.pixelCount * channels.bytesPerPixel, "a \(size) \(channels) image needs \(size.pixelCount * channels.bytesPerPixel) bytes")
        self.size = size
        self.channels = channels
        self.pixels = pixels
        self.frameSize = frameSize
        self.area = area ?? FaceBox(x: 0, y: 0, width: Double(frameSize.width), height: Double(frameSize.height))
        self.track = track
    }

    /// A whole-frame luma thumbnail as a detection image.
    public init(_ luma: LumaImage) {
        self.init(size: luma.size, channels: .luma, pixels: luma.pixels, frameSize: luma.frameSize)
    }

    /// A box in this image's pixels, in the frame's.
    public func frameBox(_ box: FaceBox) -> FaceBox {
        let sx = area.width / Double(size.width), sy = area.height / Double(size.height)
        return FaceBox(x: area.x + box.x * sx, y: area.y + box.y * sy, width: box.width * sx, height: box.height * sy)
    }

    /// A point in this image's pixels, in the frame's.
    public func framePoint(_ point: SIMD2<Double>) -> SIMD2<Double> {
        SIMD2(area.x + point.x * area.width / Double(size.width), area.y + point.y * area.height / Double(size.height))
    }
}

/// One picture the provider wants of a frame: its channels and size, and the part of the frame it shows.
public struct DetectionRequest: Sendable, Equatable {
    public var channels: DetectionChannels
    public var size: Size
    /// In frame pixels; nil: the whole frame.
    public var area: FaceBox?
    /// The track a closer look is for (nil: the whole frame).
    public var track: Int?

    public init(channels: DetectionChannels, size: Size, area: FaceBox? = nil, track: Int? = nil) {
        self.channels = channels
        self.size = size
        self.area = area
        self.track = track
    }
}
