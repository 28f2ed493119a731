import CFFmpeg
import PrismCore

/// Small pictures of decoded frames on the CPU, for an analysis that must see frames before the GPU does
/// (a file's face detector reading ahead of the frames it covers): a part of the frame, reduced or enlarged
/// by swscale (bilinear, which widens its filter when reducing) to R'G'B'A or grey. One per reading thread.
package final class FramePictures {
    private let scaler = Scaler(accurate: false)

    package init() {}

    /// A part of a frame in whole pixels, on even columns and rows (every format's chroma lines up there).
    package struct Area: Equatable, Sendable {
        package var x, y, width, height: Int
    }

    /// `area` of `frame` (frame pixels; clipped to the frame, then widened to even edges) at `size`: RGBA
    /// bytes (`grey` false, alpha 255) or one byte a pixel (full-range luma). Returns the bytes and the area
    /// they show.
    package func picture(of frame: VideoFrame, size: Size, area wanted: (x: Double, y: Double, width: Double, height: Double)?,
                         grey: Bool) throws -> (pixels: [UInt8], area: Area) {
        let area = Self.clipped(wanted, to: frame.size)
        let format = frame.format.avPixelFormat
        let planes = frame.format.planes
        // Each plane's first byte inside the area (x and y are even, so subsampled planes line up).
        let sources: [UnsafePointer<UInt8>?] = frame.planes.enumerated().map { index, plane in
            let layout = planes[index]
            let offset = (area.y >> layout.verticalShift) * plane.rowBytes + (area.x >> layout.horizontalShift) * layout.bytesPerPixel
            return (plane.base + offset).assumingMemoryBound(to: UInt8.self)
        }
        let bytesPerPixel = grey ? 1 : 4
        var pixels = [UInt8](repeating: 0, count: size.pixelCount * bytesPerPixel)
        let full = YUVColorSpace(matrix: frame.colorSpace.matrix, range: .full)
        try pixels.withUnsafeMutableBufferPointer { out in
            try scaler.scale(src: sources, srcStrides: frame.planes.map { Int32($0.rowBytes) }, srcFormat: format,
                             srcSize: Size(width: area.width, height: area.height), srcColor: frame.colorSpace,
                             dst: [out.baseAddress], dstStrides: [Int32(size.width * bytesPerPixel)],
                             dstFormat: grey ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGBA, dstSize: size, dstColor: full,
                             context: "the detector's picture")
        }
        return (pixels, area)
    }

    /// `wanted` clipped to a frame of `size`, its left and top edges moved down to even pixels and its width and
    /// height up to even ones (never past the frame); nil: the whole frame.
    static func clipped(_ wanted: (x: Double, y: Double, width: Double, height: Double)?, to size: Size) -> Area {
        guard let wanted, wanted.x.isFinite, wanted.y.isFinite, wanted.width.isFinite, wanted.height.isFinite else {
            return Area(x: 0, y: 0, width: size.width, height: size.height)
        }
        func span(_ start: Double, _ length: Double, _ limit: Int) -> (Int, Int) {
            let low = min(max(Int(start.rounded(.down)), 0), max(limit - 2, 0)) / 2 * 2
            let high = min(max(Int((start + length).rounded(.up)), low + 2), limit)
            let even = min(high - low + 1, limit - low) / 2 * 2
            return (low, max(even, min(2, limit - low)))
        }
        let (x, width) = span(wanted.x, wanted.width, size.width)
        let (y, height) = span(wanted.y, wanted.height, size.height)
        return Area(x: x, y: y, width: width, height: height)
    }

    /// The frame's grey as a `columns`×`rows` grid of cell means (0...255), from 8×8 samples of each cell of
    /// its first plane (luma, or R'G'B' weighted): a few thousand reads, cheap enough for every frame.
    package static func greyGrid(of frame: VideoFrame, columns: Int, rows: Int) -> [Double] {
        let format = frame.format, plane = frame.planes[0], w = frame.size.width, h = frame.size.height
        let wide = format.bitDepth > 8, step = format.planes[0].bytesPerPixel
        func grey(_ x: Int, _ y: Int) -> Double {
            let row = plane.base + y * plane.rowBytes
            switch format {
            case .rgba: return 0.299 * Double(row.load(fromByteOffset: 4 * x, as: UInt8.self))
                + 0.587 * Double(row.load(fromByteOffset: 4 * x + 1, as: UInt8.self)) + 0.114 * Double(row.load(fromByteOffset: 4 * x + 2, as: UInt8.self))
            case .bgra: return 0.114 * Double(row.load(fromByteOffset: 4 * x, as: UInt8.self))
                + 0.587 * Double(row.load(fromByteOffset: 4 * x + 1, as: UInt8.self)) + 0.299 * Double(row.load(fromByteOffset: 4 * x + 2, as: UInt8.self))
            default:
                // Luma: one byte, or a little-endian 16-bit sample scaled to 8 bits (10-bit samples by their depth).
                guard wide else { return Double(row.load(fromByteOffset: x * step, as: UInt8.self)) }
                let value = Double(UInt16(littleEndian: row.loadUnaligned(fromByteOffset: x * step, as: UInt16.self)))
                return value * 255 / Double((1 << format.bitDepth) - 1)
            }
        }
        var cells = [Double](repeating: 0, count: columns * rows)
        for row in 0..<rows {
            for column in 0..<columns {
                var sum = 0.0
                for j in 0..<8 {
                    let y = min(h - 1, (row * 8 + j) * h / (rows * 8) + h / (rows * 16))
                    for i in 0..<8 {
                        sum += grey(min(w - 1, (column * 8 + i) * w / (columns * 8) + w / (columns * 16)), y)
                    }
                }
                cells[row * columns + column] = sum / 64
            }
        }
        return cells
    }
}
