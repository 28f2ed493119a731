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
        case .yuv420p16le: return AV_PIX_FMT_YUV420P16LE
        case .yuv444p16le: return AV_PIX_FMT_YUV444P16LE
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
        case AV_PIX_FMT_YUV420P16LE: self = .yuv420p16le
        case AV_PIX_FMT_YUV444P16LE: self = .yuv444p16le
        case AV_PIX_FMT_GRAY8: self = .gray
        default: return nil
        }
    }

    /// What a decoder's output in `av` becomes on the way into Prism: itself when Prism lists it,
    /// otherwise rgba for RGB-like and palette formats and yuv420p for everything else (converted with swscale).
    /// Deeper Y'CbCr keeps its bits: up to 10 (P010, 4:2:2 10-bit) in yuv420p10le / yuv422p10le, more (12-bit,
    /// 16-bit) in yuv420p16le, and 4:4:4 (or 4:2:2 beyond 10 bits) in yuv444p16le, whose chroma is full size.
    static func ingest(_ av: AVPixelFormat) -> PixelFormat {
        if let format = PixelFormat(av: av) { return format }
        if isRGBLike(av) { return .rgba }
        if let descriptor = av_pix_fmt_desc_get(av), descriptor.pointee.comp.0.depth > 8 {
            let depth = descriptor.pointee.comp.0.depth
            let (w, h) = (descriptor.pointee.log2_chroma_w, descriptor.pointee.log2_chroma_h)
            if w == 1 && h == 1 { return depth > 10 ? .yuv420p16le : .yuv420p10le }
            return w == 1 && h == 0 && depth <= 10 ? .yuv422p10le : .yuv444p16le
        }
        return .yuv420p
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
    /// A decoded frame's matrix and range: its tags where it has them, otherwise the stream's (`fallback`,
    /// which `VideoColor.from` worked out once). `yuvj` formats are full range.
    static func from(space: AVColorSpace, range: AVColorRange, format: AVPixelFormat, fallback: YUVColorSpace) -> YUVColorSpace {
        let matrix = ColorMatrix(av: space) ?? fallback.matrix
        let full: Bool
        switch range {
        case AVCOL_RANGE_JPEG: full = true
        case AVCOL_RANGE_MPEG: full = false
        default: full = isFullRangeJPEGFormat(format) || fallback.range == .full
        }
        return YUVColorSpace(matrix: matrix, range: full ? .full : .limited)
    }

    /// Tags alone: untagged is the size's usual matrix, limited range.
    static func from(space: AVColorSpace, range: AVColorRange, format: AVPixelFormat, size: Size) -> YUVColorSpace {
        from(space: space, range: range, format: format, fallback: YUVColorSpace(matrix: .defaultFor(size), range: .limited))
    }

    /// The `AVCodecContext` / `AVFrame` tags for this matrix and range.
    var avColorSpace: AVColorSpace { matrix.av }
    var avRange: AVColorRange { range == .full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG }
    /// `SWS_CS_ITU709`, `SWS_CS_ITU601` or `SWS_CS_BT2020`, for `sws_getCoefficients`.
    var swsColorSpace: Int32 {
        switch matrix {
        case .bt709: return SWS_CS_ITU709
        case .bt601: return SWS_CS_ITU601
        case .bt2020: return SWS_CS_BT2020
        }
    }
}

extension ColorMatrix {
    /// The matrix a tag names; nil for unspecified and for matrices Prism does not decode.
    init?(av: AVColorSpace) {
        switch av {
        case AVCOL_SPC_BT709: self = .bt709
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_FCC: self = .bt601
        case AVCOL_SPC_BT2020_NCL: self = .bt2020
        default: return nil
        }
    }

    var av: AVColorSpace {
        switch self {
        case .bt709: return AVCOL_SPC_BT709
        case .bt601: return AVCOL_SPC_SMPTE170M
        case .bt2020: return AVCOL_SPC_BT2020_NCL
        }
    }
}

extension ColorPrimaries {
    init?(av: AVColorPrimaries) {
        switch av {
        case AVCOL_PRI_BT709: self = .bt709
        case AVCOL_PRI_SMPTE170M, AVCOL_PRI_SMPTE240M: self = .smpte170m
        case AVCOL_PRI_BT470BG: self = .bt470bg
        case AVCOL_PRI_BT2020: self = .bt2020
        case AVCOL_PRI_SMPTE432: self = .p3
        default: return nil
        }
    }

    var av: AVColorPrimaries {
        switch self {
        case .bt709: return AVCOL_PRI_BT709
        case .smpte170m: return AVCOL_PRI_SMPTE170M
        case .bt470bg: return AVCOL_PRI_BT470BG
        case .bt2020: return AVCOL_PRI_BT2020
        case .p3: return AVCOL_PRI_SMPTE432
        }
    }
}

extension TransferFunction {
    init?(av: AVColorTransferCharacteristic) {
        switch av {
        // SMPTE 240M, IEC 61966-2-4 (xvYCC) and BT.1361 have BT.709's curve over 0...1.
        case AVCOL_TRC_BT709, AVCOL_TRC_SMPTE240M, AVCOL_TRC_IEC61966_2_4, AVCOL_TRC_BT1361_ECG: self = .bt709
        case AVCOL_TRC_SMPTE170M: self = .smpte170m
        case AVCOL_TRC_BT2020_10: self = .bt2020_10
        case AVCOL_TRC_BT2020_12: self = .bt2020_12
        case AVCOL_TRC_GAMMA22: self = .gamma22
        case AVCOL_TRC_GAMMA28: self = .gamma28
        case AVCOL_TRC_IEC61966_2_1: self = .srgb
        case AVCOL_TRC_LINEAR: self = .linear
        case AVCOL_TRC_SMPTE2084: self = .pq
        case AVCOL_TRC_ARIB_STD_B67: self = .hlg
        default: return nil
        }
    }

    var av: AVColorTransferCharacteristic {
        switch self {
        case .bt709: return AVCOL_TRC_BT709
        case .smpte170m: return AVCOL_TRC_SMPTE170M
        case .bt2020_10: return AVCOL_TRC_BT2020_10
        case .bt2020_12: return AVCOL_TRC_BT2020_12
        case .gamma22: return AVCOL_TRC_GAMMA22
        case .gamma28: return AVCOL_TRC_GAMMA28
        case .srgb: return AVCOL_TRC_IEC61966_2_1
        case .linear: return AVCOL_TRC_LINEAR
        case .pq: return AVCOL_TRC_SMPTE2084
        case .hlg: return AVCOL_TRC_ARIB_STD_B67
        }
    }
}

extension VideoColor {
    /// A stream's colour from its tags; what is untagged is guessed (and listed in `guessed`): the matrix
    /// by the primaries when they are BT.2020, else by size (HD: BT.709, SD: BT.601); the primaries and
    /// the transfer by the matrix; the range limited (`yuvj` formats: full). Tags Prism cannot honour
    /// (BT.2020 constant luminance, YCgCo, log curves, primaries it has no chromaticities for) are one
    /// clear error naming the tag and `--input-color`.
    static func from(space: AVColorSpace, range: AVColorRange, primaries: AVColorPrimaries,
                     transfer: AVColorTransferCharacteristic, chroma: AVChromaLocation = AVCHROMA_LOC_UNSPECIFIED,
                     format: AVPixelFormat, size: Size, context: String) throws(AVError) -> VideoColor {
        func unsupported(_ what: String, _ name: UnsafePointer<CChar>?, _ hint: String) -> AVError {
            AVError("\(what) '\(cString(name))' is not one Prism converts; \(hint)", context: context)
        }
        var guessed: [String] = []
        let taggedPrimaries = ColorPrimaries(av: primaries)
        if taggedPrimaries == nil && primaries != AVCOL_PRI_UNSPECIFIED && primaries != AVCOL_PRI_RESERVED
            && primaries != AVCOL_PRI_RESERVED0 {
            throw unsupported("colour primaries", av_color_primaries_name(primaries),
                              "\(Setting.inputColor) primaries=bt709|smpte170m|bt470bg|bt2020|p3 reads it as one that is")
        }
        let rgb = PixelFormat.isRGBLike(format)
        var matrix = ColorMatrix(av: space)
        if matrix == nil && !rgb && space != AVCOL_SPC_UNSPECIFIED && space != AVCOL_SPC_RESERVED {
            let hint = space == AVCOL_SPC_BT2020_CL
                ? "\(Setting.inputColor) matrix=bt2020 reads it as non-constant luminance (close, not exact)"
                : "\(Setting.inputColor) matrix=bt709|bt601|bt2020 reads it as one that is"
            throw unsupported("the Y'CbCr matrix", av_color_space_name(space), hint)
        }
        if matrix == nil {
            matrix = taggedPrimaries == .bt2020 ? .bt2020 : ColorMatrix.defaultFor(size)
            if !rgb { guessed.append("matrix") }
        }
        let taggedTransfer = TransferFunction(av: transfer)
        if taggedTransfer == nil && transfer != AVCOL_TRC_UNSPECIFIED && transfer != AVCOL_TRC_RESERVED
            && transfer != AVCOL_TRC_RESERVED0 {
            throw unsupported("the transfer", av_color_transfer_name(transfer),
                              "\(Setting.inputColor) transfer=bt709|pq|hlg|… reads it as one that is")
        }
        if taggedPrimaries == nil { guessed.append("primaries") }
        if taggedTransfer == nil { guessed.append("transfer") }
        let full = range == AVCOL_RANGE_JPEG || (range == AVCOL_RANGE_UNSPECIFIED && (isFullRangeJPEGFormat(format) || rgb))
        let coding = YUVColorSpace(matrix: matrix!, range: full ? .full : .limited)
        var color = VideoColor(space: coding, primaries: taggedPrimaries ?? .guess(for: matrix!, size: size),
                               transfer: taggedTransfer ?? .guess(for: matrix!), guessed: guessed)
        if chroma != AVCHROMA_LOC_UNSPECIFIED, !rgb, let name = av_chroma_location_name(chroma) { color.chromaLocation = cString(name) }
        return color
    }

    /// The HDR metadata of side data (a stream's or a frame's): ST 2086 mastering display, CTA-861.3 light level.
    mutating func readHDRMetadata(mastering: UnsafeRawPointer?, lightLevel: UnsafeRawPointer?) {
        if let mastering {
            let m = mastering.assumingMemoryBound(to: AVMasteringDisplayMetadata.self).pointee
            func q(_ r: AVRational) -> Double { r.den == 0 ? 0 : Double(r.num) / Double(r.den) }
            if m.has_luminance != 0 || m.has_primaries != 0 {
                let p = m.display_primaries, w = m.white_point
                self.mastering = MasteringDisplay(
                    red: SIMD2(q(p.0.0), q(p.0.1)), green: SIMD2(q(p.1.0), q(p.1.1)), blue: SIMD2(q(p.2.0), q(p.2.1)),
                    white: SIMD2(q(w.0), q(w.1)),
                    minLuminance: m.has_luminance != 0 ? q(m.min_luminance) : 0,
                    maxLuminance: m.has_luminance != 0 ? q(m.max_luminance) : 0)
            }
        }
        if let lightLevel {
            let l = lightLevel.assumingMemoryBound(to: AVContentLightMetadata.self).pointee
            self.lightLevel = ContentLightLevel(maxCLL: Int(l.MaxCLL), maxFALL: Int(l.MaxFALL))
        }
    }
}
