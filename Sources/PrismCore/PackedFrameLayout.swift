/// How a frame of a given pixel format is laid out in one readback buffer.
///
/// The GPU writes every plane of a frame into one RGBA8 render target, four bytes per texel, so a
/// single `glReadPixels` (or one pixel-buffer-object copy) returns the whole frame. Planes are stacked:
/// the luma (or packed RGB) plane fills the top `lumaRows` rows; the two chroma planes of planar YUV sit
/// side by side below it (Cb in the left half of each row, Cr in the right half), and the interleaved
/// CbCr plane of NV12 fills the rows below luma. FFmpeg takes such planes as they are, through
/// per-plane data pointers and line sizes, so the encoder reads the buffer without a copy.
public struct PackedFrameLayout: Hashable, Sendable {
    /// Where one plane of the frame lies in the buffer, in bytes.
    public struct Plane: Hashable, Sendable {
        /// Byte offset of the plane's first row in the buffer.
        public var offset: Int
        /// Bytes from one row of the plane to the next (the buffer's row pitch).
        public var rowBytes: Int
        /// Bytes of samples in one row (without padding).
        public var usedRowBytes: Int
        /// Rows in the plane.
        public var rows: Int
    }

    /// The pixel format packed.
    public let format: PixelFormat
    /// The frame size in pixels.
    public let size: Size
    /// Bytes per buffer row; a multiple of 8 so that half a row is still whole RGBA8 texels.
    public let rowBytes: Int
    /// Rows of the luma / RGB plane.
    public let lumaRows: Int
    /// Rows below luma holding chroma (0 for RGB formats).
    public let chromaRows: Int
    /// The format's planes in FFmpeg order (Y, Cb, Cr; Y, CbCr; or the one RGB plane), ready for per-plane data pointers.
    public let planes: [Plane]

    /// Formats the GPU can pack into a readback buffer.
    public static let supportedFormats: Set<PixelFormat> = [.rgba, .bgra, .yuv420p, .nv12, .yuv422p, .yuv444p,
                                                            .yuv420p10le, .yuv422p10le, .gray, .yuv420p16le, .yuv444p16le]

    /// The layout of a `size` frame of `format`; nil for a format not in `supportedFormats` or an empty size.
    public init?(format: PixelFormat, size: Size) {
        guard Self.supportedFormats.contains(format), size.width > 0, size.height > 0 else { return nil }
        self.format = format
        self.size = size
        let layouts = format.planes
        let luma = layouts[0]
        lumaRows = size.height
        func roundUp8(_ value: Int) -> Int { (value + 7) & ~7 }
        switch layouts.count {
        case 1:
            rowBytes = roundUp8(luma.minimumRowBytes(for: size.width))
            chromaRows = 0
            planes = [Plane(offset: 0, rowBytes: rowBytes, usedRowBytes: luma.minimumRowBytes(for: size.width),
                            rows: size.height)]
        case 2:
            let chroma = layouts[1]
            rowBytes = roundUp8(max(luma.minimumRowBytes(for: size.width), chroma.minimumRowBytes(for: size.width)))
            chromaRows = chroma.height(for: size.height)
            planes = [Plane(offset: 0, rowBytes: rowBytes, usedRowBytes: luma.minimumRowBytes(for: size.width),
                            rows: size.height),
                      Plane(offset: rowBytes * size.height, rowBytes: rowBytes,
                            usedRowBytes: chroma.minimumRowBytes(for: size.width), rows: chromaRows)]
        default:
            let chroma = layouts[1]
            let chromaBytes = chroma.minimumRowBytes(for: size.width)
            rowBytes = roundUp8(max(luma.minimumRowBytes(for: size.width), 2 * chromaBytes))
            chromaRows = chroma.height(for: size.height)
            let chromaStart = rowBytes * size.height
            planes = [Plane(offset: 0, rowBytes: rowBytes, usedRowBytes: luma.minimumRowBytes(for: size.width),
                            rows: size.height),
                      Plane(offset: chromaStart, rowBytes: rowBytes, usedRowBytes: chromaBytes, rows: chromaRows),
                      Plane(offset: chromaStart + rowBytes / 2, rowBytes: rowBytes, usedRowBytes: chromaBytes,
                            rows: chromaRows)]
        }
    }

    /// The RGBA8 render target that holds the packed frame.
    public var textureSize: Size { Size(width: rowBytes / 4, height: lumaRows + chromaRows) }
    /// Bytes of the whole readback buffer.
    public var byteCount: Int { rowBytes * (lumaRows + chromaRows) }
}
