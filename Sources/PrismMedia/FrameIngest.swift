import CFFmpeg
import PrismCore

/// Turns decoder output into `VideoFrame`s: formats Prism lists are adopted as they are (no copy);
/// others are converted with swscale into yuv420p, or rgba for RGB-like and palette sources, into
/// buffers from an `AVBufferPool` (`av_buffer_pool_init` / `av_buffer_pool_get`) so the steady state
/// does not allocate frame memory.
final class FrameIngest {
    private let scaler = Scaler(accurate: false)
    private var pool: OpaquePointer?
    private var poolKey: (AVPixelFormat, Int32, Int32)?
    private let label: String

    init(label: String) { self.label = label }

    deinit { av_buffer_pool_uninit(&pool) }

    /// Takes ownership of `frame` (always: on error it is freed).
    func makeFrame(_ frame: UnsafeMutablePointer<AVFrame>, colorSpace: YUVColorSpace, pts: MediaTime,
                   duration: MediaTime?) throws(AVError) -> VideoFrame {
        let source = AVPixelFormat(frame.pointee.format)
        if let format = PixelFormat(av: source) {
            return VideoFrame(adopting: frame, format: format, colorSpace: colorSpace, pts: pts, duration: duration)
        }
        var owned: UnsafeMutablePointer<AVFrame>? = frame
        defer { av_frame_free(&owned) }
        let target = PixelFormat.ingest(source)
        let converted = try convert(frame, to: target, colorSpace: colorSpace)
        return VideoFrame(adopting: converted, format: target, colorSpace: colorSpace, pts: pts, duration: duration)
    }

    private func convert(_ frame: UnsafeMutablePointer<AVFrame>, to target: PixelFormat,
                         colorSpace: YUVColorSpace) throws(AVError) -> UnsafeMutablePointer<AVFrame> {
        let width = frame.pointee.width, height = frame.pointee.height
        let dstFormat = target.avPixelFormat
        let byteCount = av_image_get_buffer_size(dstFormat, width, height, 64)
        try check(byteCount, "av_image_get_buffer_size", label)
        if poolKey == nil || poolKey! != (dstFormat, width, height) {
            av_buffer_pool_uninit(&pool)
            pool = av_buffer_pool_init(Int(byteCount) + 64, nil)
            poolKey = (dstFormat, width, height)
        }
        guard let out = av_frame_alloc() else { throw AVError(call: "av_frame_alloc", code: averrorENOMEM, context: label) }
        var owned: UnsafeMutablePointer<AVFrame>? = out
        guard let buffer = av_buffer_pool_get(pool) else {
            av_frame_free(&owned)
            throw AVError(call: "av_buffer_pool_get", code: averrorENOMEM, context: label)
        }
        out.pointee.format = dstFormat.rawValue
        out.pointee.width = width
        out.pointee.height = height
        out.setBuffer(0, buffer)
        let filled = withUnsafeMutableBytes(of: &out.pointee.data) { data in
            withUnsafeMutableBytes(of: &out.pointee.linesize) { lines in
                av_image_fill_arrays(data.baseAddress!.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self),
                                     lines.baseAddress!.assumingMemoryBound(to: Int32.self),
                                     buffer.pointee.data, dstFormat, width, height, 64)
            }
        }
        do throws(AVError) {
            try check(filled, "av_image_fill_arrays", label)
            let src = framePlanes(frame)
            let dst = framePlanes(out)
            let size = Size(width: Int(width), height: Int(height))
            try scaler.scale(src: src.data.map { UnsafePointer($0) }, srcStrides: src.lines,
                             srcFormat: AVPixelFormat(frame.pointee.format), srcSize: size, srcColor: colorSpace,
                             dst: dst.data, dstStrides: dst.lines, dstFormat: dstFormat, dstSize: size,
                             dstColor: colorSpace, context: label)
        } catch {
            av_frame_free(&owned)
            throw error
        }
        return out
    }
}
