import CFFmpeg
import PrismCore

extension PixelFormat {
    /// The libavutil pixel format with the same memory layout.
    public var avPixelFormat: AVPixelFormat {
        switch self {
        case .yuv420p: return AV_PIX_FMT_YUV420P
        case .nv12: return AV_PIX_FMT_NV12
        case .yuyv422: return AV_PIX_FMT_YUYV422
        case .rgba: return AV_PIX_FMT_RGBA
        case .bgra: return AV_PIX_FMT_BGRA
        case .yuv420p10le: return AV_PIX_FMT_YUV420P10LE
        case .yuv422p: return AV_PIX_FMT_YUV422P
        case .yuv444p: return AV_PIX_FMT_YUV444P
        case .yuv422p10le: return AV_PIX_FMT_YUV422P10LE
        case .gray: return AV_PIX_FMT_GRAY8
        }
    }

    /// The Prism format whose layout is `av`'s, treating the full-range `yuvj` variants as their
    /// plain twins (the range goes into `YUVColorSpace`). Nil when Prism has no such format.
    public init?(av: AVPixelFormat) {
        switch av {
        case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P: self = .yuv420p
        case AV_PIX_FMT_NV12: self = .nv12
        case AV_PIX_FMT_YUYV422: self = .yuyv422
        case AV_PIX_FMT_RGBA: self = .rgba
        case AV_PIX_FMT_BGRA: self = .bgra
        case AV_PIX_FMT_YUV420P10LE: self = .yuv420p10le
        case AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P: self = .yuv422p
        case AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P: self = .yuv444p
        case AV_PIX_FMT_YUV422P10LE: self = .yuv422p10le
        case AV_PIX_FMT_GRAY8: self = .gray
        default: return nil
        }
    }

    /// What a decoder's output in `av` becomes on the way into Prism: itself when Prism lists it,
    /// otherwise rgba for RGB-like and palette formats and yuv420p for everything else (converted with swscale).
    static func ingest(_ av: AVPixelFormat) -> PixelFormat {
        if let format = PixelFormat(av: av) { return format }
        return isRGBLike(av) ? .rgba : .yuv420p
    }

    static func isRGBLike(_ av: AVPixelFormat) -> Bool {
        guard let descriptor = av_pix_fmt_desc_get(av) else { return false }
        let rgbOrPalette = UInt64(1 << 5) | UInt64(1 << 1) // AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL
        return descriptor.pointee.flags & rgbOrPalette != 0
    }
}

/// libavutil's name for a pixel format (`av_get_pix_fmt_name`).
func pixelFormatName(_ format: AVPixelFormat) -> String {
    cString(av_get_pix_fmt_name(format))
}

/// Full range when the format is a `yuvj` one.
func isFullRangeJPEGFormat(_ format: AVPixelFormat) -> Bool {
    format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P || format == AV_PIX_FMT_YUVJ444P
        || format == AV_PIX_FMT_YUVJ440P || format == AV_PIX_FMT_YUVJ411P
}

extension YUVColorSpace {
    /// The colour space a decoded stream declares: its matrix tag (BT.709 or BT.601 family; anything
    /// else, or untagged, gets `ColorMatrix.defaultFor(size)`), and its range tag (`yuvj` formats are full;
    /// untagged is limited).
    static func from(space: AVColorSpace, range: AVColorRange, format: AVPixelFormat, size: Size) -> YUVColorSpace {
        let matrix: ColorMatrix
        switch space {
        case AVCOL_SPC_BT709: matrix = .bt709
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_FCC: matrix = .bt601
        default: matrix = ColorMatrix.defaultFor(size)
        }
        let full = range == AVCOL_RANGE_JPEG || (range == AVCOL_RANGE_UNSPECIFIED && isFullRangeJPEGFormat(format))
        return YUVColorSpace(matrix: matrix, range: full ? .full : .limited)
    }

    /// The `AVCodecContext` / `AVFrame` tags for this colour space.
    var avColorSpace: AVColorSpace { matrix == .bt709 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M }
    var avPrimaries: AVColorPrimaries { matrix == .bt709 ? AVCOL_PRI_BT709 : AVCOL_PRI_SMPTE170M }
    var avTransfer: AVColorTransferCharacteristic { matrix == .bt709 ? AVCOL_TRC_BT709 : AVCOL_TRC_SMPTE170M }
    var avRange: AVColorRange { range == .full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG }
    /// `SWS_CS_ITU709` or `SWS_CS_ITU601`, for `sws_getCoefficients`.
    var swsColorSpace: Int32 { matrix == .bt709 ? SWS_CS_ITU709 : SWS_CS_ITU601 }
}
