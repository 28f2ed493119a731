import CFFmpeg
import PrismCore

/// One swscale context (`SwsContext`), reused while the conversion stays the same
/// (`sws_getCachedContext`), freed with `sws_freeContext`. Used only where Prism must convert on the
/// CPU: decoder outputs in formats Prism does not list, still images, and test inspection.
final class Scaler {
    struct Key: Equatable {
        var srcFormat: AVPixelFormat, srcSize: Size, srcColor: YUVColorSpace
        var dstFormat: AVPixelFormat, dstSize: Size, dstColor: YUVColorSpace
    }

    private var context: OpaquePointer?
    private var key: Key?
    private let flags: Int32

    /// `accurate`: `SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP` on top of bilinear,
    /// for comparisons and stills; otherwise fast bilinear for the per-frame ingest path.
    init(accurate: Bool) {
        flags = accurate ? (SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP) : SWS_BILINEAR
    }

    deinit { sws_freeContext(context) }

    /// Converts one picture with `sws_scale`. `src`/`dst` are per-plane pointers and line sizes; the
    /// colour spaces tell swscale the YUV matrix and range on each side (`sws_setColorspaceDetails`).
    func scale(src: [UnsafePointer<UInt8>?], srcStrides: [Int32], srcFormat: AVPixelFormat, srcSize: Size,
               srcColor: YUVColorSpace,
               dst: [UnsafeMutablePointer<UInt8>?], dstStrides: [Int32], dstFormat: AVPixelFormat, dstSize: Size,
               dstColor: YUVColorSpace, context what: String) throws(AVError) {
        let wanted = Key(srcFormat: srcFormat, srcSize: srcSize, srcColor: srcColor,
                         dstFormat: dstFormat, dstSize: dstSize, dstColor: dstColor)
        if key != wanted {
            guard let ctx = sws_getCachedContext(context, Int32(srcSize.width), Int32(srcSize.height), srcFormat,
                                                 Int32(dstSize.width), Int32(dstSize.height), dstFormat,
                                                 flags, nil, nil, nil) else {
                key = nil
                context = nil
                throw AVError("cannot convert \(pixelFormatName(srcFormat)) \(srcSize) to \(pixelFormatName(dstFormat)) \(dstSize)",
                              context: what, call: "sws_getCachedContext")
            }
            context = ctx
            // Range flags: 1 = full ("JPEG"), 0 = limited. RGB sides ignore the table but need range 1.
            let srcRange: Int32 = (srcColor.range == .full || PixelFormat.isRGBLike(srcFormat)) ? 1 : 0
            let dstRange: Int32 = (dstColor.range == .full || PixelFormat.isRGBLike(dstFormat)) ? 1 : 0
            _ = sws_setColorspaceDetails(ctx, sws_getCoefficients(srcColor.swsColorSpace), srcRange,
                                         sws_getCoefficients(dstColor.swsColorSpace), dstRange, 0, 1 << 16, 1 << 16)
            key = wanted
        }
        var srcPlanes = (0..<4).map { $0 < src.count ? src[$0] : nil }
        var srcLines = (0..<4).map { $0 < srcStrides.count ? srcStrides[$0] : 0 }
        var dstPlanes = (0..<4).map { $0 < dst.count ? dst[$0] : nil }
        var dstLines = (0..<4).map { $0 < dstStrides.count ? dstStrides[$0] : 0 }
        let rows = srcPlanes.withUnsafeMutableBufferPointer { sp in
            srcLines.withUnsafeMutableBufferPointer { sl in
                dstPlanes.withUnsafeMutableBufferPointer { dp in
                    dstLines.withUnsafeMutableBufferPointer { dl in
                        sws_scale(context, sp.baseAddress, sl.baseAddress, 0, Int32(srcSize.height),
                                  dp.baseAddress, dl.baseAddress)
                    }
                }
            }
        }
        try check(rows, "sws_scale", what)
    }
}

/// The data pointers and line sizes of an AVFrame as arrays (the C struct holds them as 8-tuples).
func framePlanes(_ frame: UnsafePointer<AVFrame>) -> (data: [UnsafeMutablePointer<UInt8>?], lines: [Int32]) {
    var f = frame.pointee
    let data = withUnsafeBytes(of: &f.data) { Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)) }
    let lines = withUnsafeBytes(of: &f.linesize) { Array($0.bindMemory(to: Int32.self)) }
    return (data, lines)
}

extension UnsafeMutablePointer where Pointee == AVFrame {
    /// Sets `data[index]` and `linesize[index]`.
    func setPlane(_ index: Int, _ pointer: UnsafeMutablePointer<UInt8>?, lineSize: Int32) {
        withUnsafeMutableBytes(of: &pointee.data) { $0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)[index] = pointer }
        withUnsafeMutableBytes(of: &pointee.linesize) { $0.bindMemory(to: Int32.self)[index] = lineSize }
    }

    func plane(_ index: Int) -> (data: UnsafeMutablePointer<UInt8>?, lineSize: Int32) {
        let data = withUnsafeBytes(of: &pointee.data) { $0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)[index] }
        let line = withUnsafeBytes(of: &pointee.linesize) { $0.bindMemory(to: Int32.self)[index] }
        return (data, line)
    }

    /// Sets `buf[index]`.
    func setBuffer(_ index: Int, _ buffer: UnsafeMutablePointer<AVBufferRef>?) {
        withUnsafeMutableBytes(of: &pointee.buf) { $0.bindMemory(to: UnsafeMutablePointer<AVBufferRef>?.self)[index] = buffer }
    }
}
