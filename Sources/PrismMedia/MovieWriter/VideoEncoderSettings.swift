import CFFmpeg
import PrismCore

/// Which video encoder a `MovieWriter` uses, and how.
public struct VideoEncoderSettings: Hashable, Sendable {
    /// The video codecs Prism encodes to; raw values are the `--codec` names.
    public enum Codec: String, CaseIterable, Hashable, Sendable {
        /// H.264 with libx264.
        case h264
        /// HEVC with libx265 (an error when this FFmpeg lacks it).
        case hevc
        /// FFV1, lossless, on bgra (RGB) so it keeps the GPU's RGBA output exactly.
        case ffv1
        /// Apple ProRes with prores_ks, 4:2:2 10-bit.
        case prores
        /// AV1 with SVT-AV1 (libsvtav1), 4:2:0 8- or 10-bit.
        case av1

        /// The smallest frame the encoder opens for (FFV1 refuses width 1; x265 works in 16x16 blocks).
        public var minimumSize: Size {
            switch self {
            case .h264, .prores: return Size(width: 1, height: 1)
            case .hevc: return Size(width: 16, height: 16)
            case .av1: return Size(width: 64, height: 64)
            case .ffv1: return Size(width: 2, height: 1)
            }
        }
    }

    /// The encoder to use; it also decides `pixelFormat`.
    public var codec: Codec
    /// x264 / x265 preset ("ultrafast" … "veryslow"); ignored by the other codecs.
    public var preset: String
    /// Constant rate factor (x264 / x265); nil keeps the encoder's default unless `bitrate` is set.
    public var crf: Int?
    /// Target bits per second; nil for constant quality.
    public var bitrate: Int?
    /// Encoder threads; 0 lets the encoder choose.
    public var threads: Int
    /// Keyframe interval in frames; nil for the encoder's default (or `keyframeSeconds`).
    public var gopSize: Int?
    /// Keyframe interval in seconds of the stream's nominal rate (`--keyframes`), fixed (no extra keyframes at
    /// scene cuts) so streams and playlist segments start on one every so often; nil: `gopSize`.
    public var keyframeSeconds: Double?
    /// B-frames between reference frames (x264/x265 `bframes`); nil: the encoder's default.
    public var bFrames: Int?
    /// Tune x264/x265 for latency (no lookahead, no frame threads): each frame's packet leaves at once.
    public var lowLatency = false
    /// With `bitrate`: hold it constant within a one-second buffer (VBV), as a stream's link needs.
    public var constantBitrate = false
    /// Bits per sample: 10 for HEVC Main10, AV1 and FFV1 (what HDR and deep inputs keep), 16 for FFV1 of input
    /// deeper than 10 bits; ProRes is always 10, H.264 always 8.
    public var bitDepth = 8

    /// Settings; the defaults are H.264, preset "medium", the encoder's own quality, threads and keyframe interval.
    public init(codec: Codec = .h264, preset: String = "medium", crf: Int? = nil, bitrate: Int? = nil,
                threads: Int = 0, gopSize: Int? = nil) {
        self.codec = codec
        self.preset = preset
        self.crf = crf
        self.bitrate = bitrate
        self.threads = threads
        self.gopSize = gopSize
    }

    /// What a stream needs unless asked otherwise: a keyframe every 2 s (a viewer who joins, a segment,
    /// waits at most that), no B-frames (they delay every frame), the bitrate held within a one-second
    /// buffer when one is given; a network stream also leaves the encoder frame by frame (`lowLatency`).
    public func streaming(network: Bool) -> VideoEncoderSettings {
        var settings = self
        if settings.keyframeSeconds == nil && settings.gopSize == nil { settings.keyframeSeconds = 2 }
        if settings.bFrames == nil { settings.bFrames = 0 }
        settings.constantBitrate = settings.bitrate != nil
        settings.lowLatency = settings.lowLatency || network
        return settings
    }

    /// What the GPU must pack into the pooled buffers handed to `MovieWriter.writeVideo`.
    public var pixelFormat: PixelFormat {
        switch codec {
        // x264 works on NV12 internally: handing it NV12 saves it a conversion, and the GPU packs
        // Cb/Cr together in one pass. x265 takes planar 4:2:0.
        case .h264: return .nv12
        case .hevc: return bitDepth > 8 ? .yuv420p10le : .yuv420p
        // 8-bit: RGB, so it keeps the GPU's RGBA output exactly; deeper: 4:2:0 Y'CbCr at 10 bits, or 4:4:4 at 16.
        case .ffv1: return bitDepth > 10 ? .yuv444p16le : bitDepth > 8 ? .yuv420p10le : .bgra
        case .prores: return .yuv422p10le
        case .av1: return bitDepth > 8 ? .yuv420p10le : .yuv420p
        }
    }

    /// Whether the codec carries more than 8 bits a sample in Prism (and so HDR): HEVC, AV1, FFV1, ProRes.
    public var canBeDeep: Bool { codec != .h264 }

    /// Whether this FFmpeg has the encoder these settings need (`avcodec_find_encoder_by_name`).
    public var isAvailable: Bool { Self.encoderAvailable(encoderName) }

    /// Whether this FFmpeg has an encoder called `name`.
    public static func encoderAvailable(_ name: String) -> Bool { avcodec_find_encoder_by_name(name) != nil }

    /// libavcodec's name of the encoder.
    public var encoderName: String {
        switch codec {
        case .h264: return "libx264"
        case .hevc: return "libx265"
        case .ffv1: return "ffv1"
        case .prores: return "prores_ks"
        case .av1: return "libsvtav1"
        }
    }
}

/// The video stream a `MovieWriter` makes.
package struct VideoStreamConfig: Hashable, Sendable {
    package var size: Size
    /// The encoder's time base: use the source's, so its per-frame timing (VFR) is kept exactly.
    package var timeBase: Rational
    /// Nominal rate, when known (rate control and container hints).
    package var frameRate: Rational?
    /// Tags written into the stream: matrix, range, primaries, transfer, HDR metadata.
    package var color: VideoColor
    package var colorSpace: YUVColorSpace { color.space }

    package init(size: Size, timeBase: Rational, frameRate: Rational?, color: VideoColor) {
        self.size = size
        self.timeBase = timeBase
        self.frameRate = frameRate
        self.color = color
    }

    /// SDR in `colorSpace` with the primaries and transfer that go with its matrix.
    package init(size: Size, timeBase: Rational, frameRate: Rational?, colorSpace: YUVColorSpace) {
        self.init(size: size, timeBase: timeBase, frameRate: frameRate, color: .sdr(colorSpace, size: size))
    }

    /// The stream that keeps `source`'s size, time base, rate; `color` defaults to the source's.
    package init(source: SourceInfo, size: Size? = nil, color: VideoColor? = nil) {
        self.init(size: size ?? source.size, timeBase: source.timeBase, frameRate: source.frameRate,
                  color: color ?? source.color)
    }
}

extension VideoEncoderSettings.Codec {
    /// libavcodec's id of the codec (what a container is asked whether it takes).
    var avCodecID: AVCodecID {
        switch self {
        case .h264: return AV_CODEC_ID_H264
        case .hevc: return AV_CODEC_ID_HEVC
        case .ffv1: return AV_CODEC_ID_FFV1
        case .prores: return AV_CODEC_ID_PRORES
        case .av1: return AV_CODEC_ID_AV1
        }
    }
}
