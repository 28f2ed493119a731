import CFFmpeg
import PrismCore

/// A Prism value and the FFmpeg tags that name it: the first is what the value is written as, the others
/// are read as it too (full-range `yuvj` layouts, tags with the same meaning).
protocol AVTagged: CaseIterable, Equatable {
    associatedtype AVTag: Equatable
    static var avTags: [(value: Self, tags: [AVTag])] { get }
}

extension AVTagged {
    /// The value `tag` names; nil when Prism has none.
    init?(av tag: AVTag) {
        guard let entry = Self.avTags.first(where: { $0.tags.contains(tag) }) else { return nil }
        self = entry.value
    }

    /// The tag the value is written as.
    var av: AVTag { Self.avTags.first { $0.value == self }!.tags[0] }
}

extension PixelFormat: AVTagged {
    /// The libavutil pixel formats with each format's memory layout; the full-range `yuvj` variants are read
    /// as their plain twins (the range goes into `YUVColorSpace`).
    static let avTags: [(value: PixelFormat, tags: [AVPixelFormat])] = [
        (.yuv420p, [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P]), (.nv12, [AV_PIX_FMT_NV12]), (.yuyv422, [AV_PIX_FMT_YUYV422]),
        (.rgba, [AV_PIX_FMT_RGBA]), (.bgra, [AV_PIX_FMT_BGRA]), (.yuv420p10le, [AV_PIX_FMT_YUV420P10LE]),
        (.yuv422p, [AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P]), (.yuv444p, [AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P]),
        (.yuv422p10le, [AV_PIX_FMT_YUV422P10LE]), (.yuv420p16le, [AV_PIX_FMT_YUV420P16LE]),
        (.yuv444p16le, [AV_PIX_FMT_YUV444P16LE]), (.gray, [AV_PIX_FMT_GRAY8]),
    ]

    /// The libavutil pixel format with the same memory layout.
    public var avPixelFormat: AVPixelFormat { av }

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

extension ColorMatrix: AVTagged {
    static let avTags: [(value: ColorMatrix, tags: [AVColorSpace])] = [
        (.bt709, [AVCOL_SPC_BT709]), (.bt601, [AVCOL_SPC_SMPTE170M, AVCOL_SPC_BT470BG, AVCOL_SPC_FCC]),
        (.bt2020, [AVCOL_SPC_BT2020_NCL]),
    ]
}

extension ColorPrimaries: AVTagged {
    static let avTags: [(value: ColorPrimaries, tags: [AVColorPrimaries])] = [
        (.bt709, [AVCOL_PRI_BT709]), (.smpte170m, [AVCOL_PRI_SMPTE170M, AVCOL_PRI_SMPTE240M]), (.bt470bg, [AVCOL_PRI_BT470BG]),
        (.bt2020, [AVCOL_PRI_BT2020]), (.p3, [AVCOL_PRI_SMPTE432]),
    ]
}

extension TransferFunction: AVTagged {
    static let avTags: [(value: TransferFunction, tags: [AVColorTransferCharacteristic])] = [
        // SMPTE 240M, IEC 61966-2-4 (xvYCC) and BT.1361 have BT.709's curve over 0...1.
        (.bt709, [AVCOL_TRC_BT709, AVCOL_TRC_SMPTE240M, AVCOL_TRC_IEC61966_2_4, AVCOL_TRC_BT1361_ECG]),
        (.smpte170m, [AVCOL_TRC_SMPTE170M]), (.bt2020_10, [AVCOL_TRC_BT2020_10]), (.bt2020_12, [AVCOL_TRC_BT2020_12]),
        (.gamma22, [AVCOL_TRC_GAMMA22]), (.gamma28, [AVCOL_TRC_GAMMA28]), (.srgb, [AVCOL_TRC_IEC61966_2_1]),
        (.linear, [AVCOL_TRC_LINEAR]), (.pq, [AVCOL_TRC_SMPTE2084]), (.hlg, [AVCOL_TRC_ARIB_STD_B67]),
    ]
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
