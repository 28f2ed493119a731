import CFFmpeg
import Foundation
import PrismCore

/// The video encoder of a `MovieWriter`: one libavcodec context, set up from the settings and the stream's
/// colour (HDR metadata for x265, SVT-AV1 and the container), fed pooled buffers without a copy. Owns the
/// context; frees it in deinit.
final class VideoEncoder {
    let settings: VideoEncoderSettings
    let video: VideoStreamConfig
    /// The buffers it takes: `settings.pixelFormat` at `video.size`.
    let layout: PackedFrameLayout
    let context: UnsafeMutablePointer<AVCodecContext>
    let timeBase: AVRational
    private let label: String
    private let frame = OwnedFrame()
    /// Each frame's duration by its pts, for the packets the encoder gives back without one.
    private var durations: [Int64: Int64] = [:]

    /// What the settings cannot encode at `video`'s size and time base, thrown before any output is touched.
    static func layout(settings: VideoEncoderSettings, video: VideoStreamConfig, path: String) throws -> PackedFrameLayout {
        guard let layout = PackedFrameLayout(format: settings.pixelFormat, size: video.size) else {
            throw InvalidRequest("\(path): cannot encode \(settings.pixelFormat.rawValue) at \(video.size)")
        }
        let chroma = settings.pixelFormat.planes.count > 1 ? settings.pixelFormat.planes[1] : nil
        if let chroma, (chroma.horizontalShift > 0 && video.size.width % 2 != 0)
            || (chroma.verticalShift > 0 && video.size.height % 2 != 0) {
            throw InvalidRequest("\(path): \(settings.codec.rawValue) (\(settings.pixelFormat.rawValue)) needs an even "
                             + "frame size, not \(video.size)")
        }
        // What the encoders refuse with a bare "Function not implemented" / "Invalid argument" at open.
        let minimum = settings.codec.minimumSize
        if video.size.width < minimum.width || video.size.height < minimum.height {
            throw InvalidRequest("\(path): \(settings.codec.rawValue) encodes frames of at least \(minimum), not \(video.size)")
        }
        if let crf = settings.crf, !(0...51).contains(crf) {
            throw InvalidRequest("\(path): crf \(crf) is out of range (0-51)")
        }
        guard video.timeBase.num > 0, video.timeBase.den > 0 else {
            throw InvalidRequest("\(path): invalid video time base \(video.timeBase)")
        }
        return layout
    }

    /// Finds, configures and opens the encoder.
    /// - Parameters:
    ///   - globalHeader: the container wants the codec's headers out of band (`AVFMT_GLOBALHEADER`).
    ///   - lowDelay: a live recording: the encoder gives each frame's packet back before it takes the next
    ///     (no lookahead, no B-frames, slice rather than frame threads), so a killed process loses at most
    ///     the fragment being built, and a byte budget is checked against every frame's real size.
    init(settings: VideoEncoderSettings, video: VideoStreamConfig, layout: PackedFrameLayout, globalHeader: Bool,
         lowDelay: Bool, label: String) throws {
        let codecName = settings.encoderName
        guard let codec = avcodec_find_encoder_by_name(codecName), let context = avcodec_alloc_context3(codec) else {
            let why = settings.codec == .hevc ? "HEVC needs the libx265 encoder, which this FFmpeg lacks"
                : "this FFmpeg has no \(codecName) encoder"
            throw AVError(why, context: label, call: "avcodec_find_encoder_by_name")
        }
        self.settings = settings
        self.video = video
        self.layout = layout
        self.context = context
        self.label = label
        timeBase = video.timeBase.av
        durations.reserveCapacity(64)
        // Every stored property is set: from here on a throw runs deinit, which frees the context.
        configure(globalHeader: globalHeader)
        try setPrivateOptions(lowDelay: lowDelay)
        // Frame threads hold a frame per thread; slices give each frame back at once.
        if lowDelay && settings.codec != .h264 && settings.codec != .hevc { context.pointee.thread_type = FF_THREAD_SLICE }
        try check(avcodec_open2(context, codec, nil), "avcodec_open2", label, what: "cannot open the \(settings.encoderName) encoder")
    }

    deinit {
        var e: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&e)
    }

    private func configure(globalHeader: Bool) {
        let enc = context
        enc.pointee.width = Int32(video.size.width)
        enc.pointee.height = Int32(video.size.height)
        enc.pointee.pix_fmt = settings.pixelFormat.avPixelFormat
        enc.pointee.time_base = timeBase
        if let rate = video.frameRate { enc.pointee.framerate = rate.av }
        enc.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        enc.pointee.thread_count = Int32(settings.threads)
        if let gop = settings.gopSize { enc.pointee.gop_size = Int32(gop) }
        if let seconds = settings.keyframeSeconds, let rate = video.frameRate, rate.num > 0 {
            let gop = Int32(max(1, (seconds * rate.doubleValue).rounded()))
            enc.pointee.gop_size = gop
            enc.pointee.keyint_min = gop
        }
        if let frames = settings.bFrames { enc.pointee.max_b_frames = Int32(frames) }
        if let bitrate = settings.bitrate {
            enc.pointee.bit_rate = Int64(bitrate)
            if settings.constantBitrate {
                enc.pointee.rc_max_rate = Int64(bitrate)
                enc.pointee.rc_buffer_size = Int32(clamping: bitrate)
            }
        }
        if settings.pixelFormat.isYUV {
            enc.pointee.colorspace = video.colorSpace.avColorSpace
            enc.pointee.color_range = video.colorSpace.avRange
            // The GPU packer downsamples chroma by the mean of each block: centred samples.
            enc.pointee.chroma_sample_location = AVCHROMA_LOC_CENTER
        } else {
            enc.pointee.colorspace = AVCOL_SPC_RGB
            enc.pointee.color_range = AVCOL_RANGE_JPEG
        }
        enc.pointee.color_primaries = video.color.primaries.av
        enc.pointee.color_trc = video.color.transfer.av
        if globalHeader { enc.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
    }

    /// The codec's own options (preset, crf, x265 / SVT-AV1 parameters with HDR10 metadata).
    private func setPrivateOptions(lowDelay: Bool) throws {
        let enc = context
        let options = enc.pointee.priv_data
        func set(_ key: String, _ value: String) throws {
            try check(av_opt_set(options, key, value, 0), "av_opt_set", label,
                      what: "\(settings.encoderName) rejects \(key)=\(value)")
        }
        switch settings.codec {
        case .h264, .hevc:
            try set("preset", settings.preset)
            if lowDelay || settings.lowLatency { try set("tune", "zerolatency") }
            if let crf = settings.crf { try set("crf", String(crf)) }
            var x265 = Self.x265Parameters(video.color)
            if settings.keyframeSeconds != nil {
                // A fixed interval: no keyframe at scene cuts, so segments and a late joiner's wait stay predictable.
                if settings.codec == .h264 { try set("x264-params", "scenecut=0") } else { x265 += ":scenecut=0" }
            }
            if settings.codec == .hevc { try set("x265-params", x265) }
        case .ffv1:
            // Version 3 (AVCodecContext.level) allows slice threads; slices carry CRCs.
            enc.pointee.level = 3
            try set("slicecrc", "1")
        case .prores:
            break
        case .av1:
            // SVT-AV1's presets are numbers, 0 (slowest) to 13; x264's names map onto them.
            try set("preset", String(Self.svtPreset(settings.preset)))
            if let crf = settings.crf { try set("crf", String(crf)) }
            if let parameters = Self.svtParameters(video.color) { try set("svtav1-params", parameters) }
            // SVT-AV1 prints its configuration to stderr at its default level; errors only (unless SVT_LOG says).
            setenv("SVT_LOG", "1", 0)
        }
    }

    /// Describes the encoded video on the container's `stream`: codec parameters, HDR side data, time base
    /// and rate hints, the `hvc1` tag that MP4/MOV players want for HEVC.
    func describe(_ stream: UnsafeMutablePointer<AVStream>, formatName: String) throws {
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, context), "avcodec_parameters_from_context", label)
        Self.writeHDRMetadata(video.color, to: stream)
        // A 1/N hint keeps timestamps exact when the time base is not 1/N (e.g. 1001/30000).
        stream.pointee.time_base = AVRational(num: 1, den: video.timeBase.den)
        if let rate = video.frameRate { stream.pointee.avg_frame_rate = rate.av }
        if settings.codec == .hevc && (formatName.contains("mp4") || formatName.contains("mov")) {
            stream.pointee.codecpar.pointee.codec_tag = Self.fourCC("hvc1")
        }
    }

    // MARK: encoding

    /// The send/receive loop over the encoder.
    private var session: CodecSession { CodecSession(context: context, label: label, activity: "encode video") }

    /// Sends one frame whose planes point into `buffer` (`buf[0]` references it, so the buffer stays out of its
    /// pool until the encoder is done), at `ticks` of the time base, lasting `durationTicks`.
    func send(_ buffer: PooledFrameBuffer, ticks: Int64, durationTicks: Int64) throws {
        let f = frame.pointer
        f.pointee.format = layout.format.avPixelFormat.rawValue
        f.pointee.width = Int32(layout.size.width)
        f.pointee.height = Int32(layout.size.height)
        for (index, plane) in layout.planes.enumerated() {
            f.setPlane(index, (buffer.data + plane.offset).assumingMemoryBound(to: UInt8.self), lineSize: Int32(plane.rowBytes))
        }
        guard let ref = buffer.avBufferRef() else {
            throw AVError(call: "av_buffer_create", code: averrorENOMEM, context: label)
        }
        f.setBuffer(0, ref)
        f.pointee.pts = ticks
        f.pointee.pkt_duration = durationTicks
        f.pointee.colorspace = context.pointee.colorspace
        f.pointee.color_range = context.pointee.color_range
        f.pointee.color_primaries = context.pointee.color_primaries
        f.pointee.color_trc = context.pointee.color_trc
        durations[ticks] = max(1, durationTicks)
        // The encoder holds its own reference (or is done with the data) either way.
        do { try session.send(frame: f) } catch { av_frame_unref(f); throw error }
        av_frame_unref(f)
    }

    /// Tells the encoder no more frames come (it then gives back what it holds).
    func sendEnd() throws { try session.send(frame: nil) }

    /// Tells the encoder no more frames come, as `sendEnd`, and says whether it took that.
    func trySendEnd() -> Bool { avcodec_send_frame(context, nil) >= 0 }

    /// Hands each packet the encoder has ready to `write`, with its duration (the frame's, or `fallback` ticks).
    func drain(into packet: UnsafeMutablePointer<AVPacket>, fallback: Int64,
               _ write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        try session.drainPackets(into: packet) { pkt in
            if pkt.pointee.duration <= 0 {
                pkt.pointee.duration = durations.removeValue(forKey: pkt.pointee.pts) ?? fallback
            } else {
                durations.removeValue(forKey: pkt.pointee.pts)
            }
            try write(pkt)
        }
    }

    // MARK: parameters

    /// x265's own parameters: quiet, and HDR10's SEI (ST 2086 mastering display, CTA-861.3 light level).
    static func x265Parameters(_ color: VideoColor) -> String {
        var parameters = ["log-level=error"]
        guard color.isHDR else { return parameters.joined(separator: ":") }
        if let m = color.mastering, m.maxLuminance > 0 {
            func xy(_ p: SIMD2<Double>) -> String { "(\(Int((p.x * 50000).rounded())),\(Int((p.y * 50000).rounded())))" }
            var display = ""
            if m.red != .zero { display += "G\(xy(m.green))B\(xy(m.blue))R\(xy(m.red))WP\(xy(m.white))" }
            else { display += "G(8500,39850)B(6550,2300)R(35400,14600)WP(15635,16450)" }  // BT.2020's
            display += "L(\(Int((m.maxLuminance * 10000).rounded())),\(Int((m.minLuminance * 10000).rounded())))"
            parameters.append("master-display=\(display)")
        }
        if let l = color.lightLevel { parameters.append("max-cll=\(l.maxCLL),\(l.maxFALL)") }
        if color.transfer == .pq { parameters.append("hdr10=1") }
        return parameters.joined(separator: ":")
    }

    /// SVT-AV1's preset for an x264 preset name (the speeds roughly match: medium is 8).
    static func svtPreset(_ name: String) -> Int {
        let presets = ["placebo": 1, "veryslow": 2, "slower": 4, "slow": 6, "medium": 8, "fast": 9, "faster": 10,
                       "veryfast": 11, "superfast": 12, "ultrafast": 13]
        return presets[name] ?? 8
    }

    /// SVT-AV1's HDR10 metadata parameters (values as decimals, luminance in cd/m²); nil for SDR.
    static func svtParameters(_ color: VideoColor) -> String? {
        guard color.isHDR else { return nil }
        var parameters: [String] = []
        if let m = color.mastering, m.maxLuminance > 0 {
            let chromaticities = m.red != .zero ? (m.red, m.green, m.blue, m.white)
                : (SIMD2(0.708, 0.292), SIMD2(0.170, 0.797), SIMD2(0.131, 0.046), SIMD2(0.3127, 0.3290))
            func xy(_ p: SIMD2<Double>) -> String { "(\(p.x),\(p.y))" }
            parameters.append("mastering-display=G\(xy(chromaticities.1))B\(xy(chromaticities.2))R\(xy(chromaticities.0))"
                              + "WP\(xy(chromaticities.3))L(\(m.maxLuminance),\(m.minLuminance))")
        }
        if let l = color.lightLevel { parameters.append("content-light=\(l.maxCLL),\(l.maxFALL)") }
        return parameters.isEmpty ? nil : parameters.joined(separator: ":")
    }

    /// HDR metadata as stream side data, which MP4/MOV (mdcv, clli) and Matroska write into the container.
    private static func writeHDRMetadata(_ color: VideoColor, to stream: UnsafeMutablePointer<AVStream>) {
        guard color.isHDR else { return }
        if let m = color.mastering, m.maxLuminance > 0,
           let data = av_stream_new_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA,
                                              MemoryLayout<AVMasteringDisplayMetadata>.size) {
            let metadata = UnsafeMutableRawPointer(data).bindMemory(to: AVMasteringDisplayMetadata.self, capacity: 1)
            func q(_ v: Double, _ den: Int32) -> AVRational { AVRational(num: Int32((v * Double(den)).rounded()), den: den) }
            func xy(_ p: SIMD2<Double>) -> (AVRational, AVRational) { (q(p.x, 50000), q(p.y, 50000)) }
            metadata.pointee.display_primaries = (xy(m.red), xy(m.green), xy(m.blue))
            metadata.pointee.white_point = xy(m.white)
            metadata.pointee.has_primaries = m.red != .zero ? 1 : 0
            metadata.pointee.min_luminance = q(m.minLuminance, 10000)
            metadata.pointee.max_luminance = q(m.maxLuminance, 10000)
            metadata.pointee.has_luminance = 1
        }
        if let l = color.lightLevel,
           let data = av_stream_new_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, MemoryLayout<AVContentLightMetadata>.size) {
            let metadata = UnsafeMutableRawPointer(data).bindMemory(to: AVContentLightMetadata.self, capacity: 1)
            metadata.pointee.MaxCLL = UInt32(l.maxCLL)
            metadata.pointee.MaxFALL = UInt32(l.maxFALL)
        }
    }

    private static func fourCC(_ text: String) -> UInt32 {
        text.utf8.reversed().reduce(0) { ($0 << 8) | UInt32($1) }
    }
}
