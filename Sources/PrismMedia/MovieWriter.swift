import CFFmpeg
import CMediaShims
import Foundation
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

/// Encodes video from pooled buffers (and audio from a source) into a movie file with libavcodec and
/// libavformat.
///
/// - The container follows the output's extension (`av_guess_format`): mp4, mov, mkv, or any other
///   libavformat muxes; mp4/mov get `movflags=+faststart` (index before the media data).
/// - Video buffers are laid out per `PackedFrameLayout` in `settings.pixelFormat`; they are wrapped as
///   `AVFrame` planes without a copy (`buf[0]` is an `AVBufferRef` over the pooled memory, so the buffer
///   returns to its pool when the encoder lets go of it).
/// - Timestamps are rebased so the first video frame is at 0; audio is shifted by the same amount, so
///   the A/V offset is kept. Audio packets are copied when the container takes their codec
///   (`avformat_query_codec`), otherwise decoded, resampled and encoded as AAC.
/// - Raw PCM (`pcm:` at init, `writeAudio(pcm:pts:)`, e.g. from `AudioCaptureSource`) is encoded as AAC
///   by the same transcoder. Chunks are timed on the video's time line; the first kept sample is placed
///   by its time stamp and later samples follow it without gaps, except that a chunk starting more than
///   50 ms after the previous one ended (samples lost to an overrun) is preceded by silence. PCM is held
///   back until the video has reached it, and `finish()` cuts it at the end of the last video frame, so
///   a recording has the video's length.
/// - The file is written to a hidden temporary name next to the target and renamed over it only by a
///   successful `finish()` of at least one frame. `abort()`, or dropping the writer unfinished, deletes
///   the temporary and leaves any existing target untouched. A symlink target is written through (the
///   link stays); a FIFO or character device is written in place, in a container that needs no seeking
///   (see `OutputTarget`).
///
/// Not thread-safe: use a writer from one thread at a time (e.g. a dedicated encoding thread).
package final class MovieWriter {
    package enum AudioMode: Sendable, Equatable { case none, copy, transcode }

    /// The file (or URL) the movie ends up at.
    package let outputPath: String
    package let settings: VideoEncoderSettings
    package let video: VideoStreamConfig
    /// What happens to the source's audio.
    package let audioMode: AudioMode
    /// Frames handed to the encoder.
    package private(set) var videoFramesWritten = 0
    /// Frames refused because their timestamp did not increase after rounding to the time base.
    package private(set) var videoFramesDropped = 0
    /// Audio packets muxed (copy mode) or encoded (transcode mode).
    package private(set) var audioPacketsWritten = 0
    /// Recordings a killed earlier run left as temporaries of this output, recovered next to it.
    package private(set) var recoveredLeftovers: [OutputTarget.Recovered] = []
    /// The most bytes the finished file may take (a size limit, or what the disk may still give under a
    /// free-space floor); nil: no limit. Checked before each packet is muxed, against `projectedBytes`:
    /// what the encoder still holds and the fragment the muxer is building count, because the check is
    /// made when their packets arrive, not when they reach the disk.
    package var byteBudget: Int64?
    /// A packet did not fit `byteBudget`: it and every packet after it (video and audio, the encoder's
    /// flushed lookahead included) are left out, so the file ends at or under the budget. Stop writing.
    package private(set) var budgetReached = false
    /// Video packets in the file: fewer than `videoFramesWritten` once the budget was reached (the frames
    /// the encoder held then are not in it).
    package private(set) var videoPacketsMuxed = 0
    /// Bytes handed to the muxer so far, each packet with an upper estimate of its container overhead.
    private var muxedBytes: Int64 = 0
    /// Bytes in the file so far (`avio_tell`); 0 for outputs without a file.
    package var bytesWritten: Int64 { ioOpen ? max(0, avio_tell(format.pointee.pb)) : 0 }

    /// An upper estimate of the finished file's size if nothing more were muxed: the packets muxed (on
    /// disk or still queued in the muxer's interleaving and fragment buffers), their container overhead,
    /// and room for the header and the trailer (index, cues).
    package var projectedBytes: Int64 { max(bytesWritten, muxedBytes) + Self.trailerReserve }

    /// Header and trailer beyond the per-packet overhead (moov's fixed boxes, Matroska's seek head and
    /// cues' fixed part, a last PAT/PMT).
    static let trailerReserve: Int64 = 16_384

    /// An upper bound on what the container adds for one packet of `size` bytes: index entries (MP4's
    /// stsz/stts/ctts/stco/stss, a fragment's trun, Matroska's block header and cue), and for MPEG-TS the
    /// 4-byte header per 184 bytes of payload, the PES header and the last transport packet's stuffing.
    private func overhead(_ size: Int32) -> Int64 {
        isTransportStream ? 220 + Int64(size) / 40 : 48 + Int64(size) / 256
    }
    private let format: UnsafeMutablePointer<AVFormatContext>
    private let encoder: UnsafeMutablePointer<AVCodecContext>
    private let videoStream: UnsafeMutablePointer<AVStream>
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private let audioInput: AudioStreamInfo?
    /// The raw PCM that `writeAudio(pcm:pts:)` takes, when set up for it.
    package let pcmInput: PCMFormat?
    private var pendingPCM: [(bytes: [UInt8], pts: MediaTime)] = []
    /// The input sample (in 1/rate on the video's time line) that follows what was passed to the transcoder.
    private var pcmExpected: Int64?
    /// End of the last video frame written, on the video's time line.
    private var videoEnd: MediaTime?
    private var transcoder: AudioTranscoder?
    private let layout: PackedFrameLayout
    private let temporaryPath: String?
    /// Where the finished movie goes: `outputPath`, or the final target of the symlink it names (for a new file
    /// only, another name when something took this one meanwhile: see `placeFinished`).
    private var finalPath: String
    /// A new file only (a take Prism named): nothing at the path is followed or replaced, at open or at the end.
    private let newFileOnly: Bool
    private let frame = OwnedFrame()
    private let packet = OwnedPacket()
    private let encoderTimeBase: AVRational
    private var start: MediaTime?
    private var lastTicks: Int64?
    private var lastDurationTicks: Int64 = 1
    private var durations: [Int64: Int64] = [:]
    private var pendingAudio: [AudioPacket] = []
    private var ioOpen = false
    private var headerWritten = false
    private var state: State = .open
    private let allowsNegativeTimestamps: Bool
    /// Whether a file cut off before its trailer still plays (see `salvage`).
    private var keepsWithoutTrailer = false
    private var isFragmentedMP4 = false
    private var isTransportStream = false
    /// Where the movie goes (file, stream, network URL, playlist) and in which container.
    package let destination: MovieDestination
    /// An HLS or DASH output's segments (removed with the playlist when a run fails).
    private var playlistFiles: PlaylistFiles?
    /// The files this run's playlist wrote, listed as they are opened (what a failed run removes, what the
    /// next run of the same playlist may delete); nothing it did not write is written over.
    private var playlistLedger: PlaylistLedger?
    /// The deadline every blocking call on a network output runs under.
    private let deadline = IOWatchdog()

    /// How long a network output may block in one call (connecting, a write the server does not take)
    /// before it fails instead of hanging the run.
    package static let networkTimeout: Double = 10
    /// How long a listening output (SRT listener, RTMP/TCP `listen`) waits for its reader to connect.
    package static let listenTimeout: Double = 60

    private enum State { case open, finished, aborted }

    /// Opens `path` for writing: picks the container, opens the encoders, creates the temporary file
    /// (`avio_open`) and writes the header (`avformat_write_header`). Every problem with the output
    /// (unknown extension, unwritable directory, codec not available or not allowed in the container)
    /// is thrown here, before any frame.
    /// - Parameters:
    ///   - audio: the source's audio stream whose packets will be passed to `writeAudio(_:)`.
    ///   - pcm: raw S16 interleaved PCM that will be passed to `writeAudio(pcm:pts:)`, encoded as AAC
    ///     (instead of `audio`; giving both is an error).
    ///   - fragmented: a live recording: MP4/MOV is written as fragments of about a second (no index at the
    ///     end to lose), Matroska with one-second clusters, so a killed process or a full disk still leaves
    ///     a playable file of everything up to the last fragment (see `salvage`).
    ///   - destination: the container and kind of output, when `--format` chose it (else from `path`).
    ///   - playlist: how an HLS or DASH destination is cut and kept.
    ///   - newFileOnly: a file that must not exist (a take whose name Prism chose): refused if anything is at
    ///     `path` now; finished beside whatever appeared there meanwhile (`NAME-2.EXT`…), never over it.
    package init(path: String, video: VideoStreamConfig, settings: VideoEncoderSettings = VideoEncoderSettings(),
                audio: AudioStreamInfo? = nil, pcm: PCMFormat? = nil, audioBitrate: Int = 128_000,
                fragmented: Bool = false, destination: MovieDestination? = nil,
                playlist: PlaylistSettings = PlaylistSettings(), newFileOnly: Bool = false) throws {
        outputPath = path
        self.newFileOnly = newFileOnly
        self.settings = settings
        self.video = video
        audioInput = audio
        pcmInput = pcm
        if audio != nil && pcm != nil {
            throw InvalidRequest("\(path): a movie takes one audio input, not a source's stream and raw PCM")
        }
        if let pcm, pcm.sampleRate <= 0 || !(1...2).contains(pcm.channels) {
            throw InvalidRequest("\(path): raw PCM must be mono or stereo at a positive rate, not \(pcm)")
        }
        guard let layout = PackedFrameLayout(format: settings.pixelFormat, size: video.size) else {
            throw InvalidRequest("\(path): cannot encode \(settings.pixelFormat.rawValue) at \(video.size)")
        }
        self.layout = layout
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

        // The container: from the extension, the URL's scheme, or --format (see MovieDestination).
        let destination = try destination ?? MovieDestination(path)
        self.destination = destination
        let outputFormat = destination.outputFormat
        let formatName = destination.formatName
        // 0: the container refuses the codec. Unknown (< 0) is refused for raw single-codec formats too
        // (`.mjpeg` would otherwise get a raw H.264 stream under a JPEG name).
        let takes = avformat_query_codec(outputFormat, MovieWriter.codecID(settings.codec), FF_COMPLIANCE_NORMAL)
        if takes == 0 || (takes < 0 && outputFormat.pointee.flags & AVFMT_NOTIMESTAMPS != 0) {
            throw InvalidRequest("\(path): the \(formatName) container cannot hold \(settings.codec.rawValue) video")
        }
        // Files: symlinks followed, FIFOs and devices written in place, directories refused (see OutputTarget).
        // Network URLs and pipe:N are written as they are; a playlist is checked as a file.
        var target: OutputTarget?
        var info = stat()
        if newFileOnly, lstat(path, &info) == 0 {
            throw InvalidRequest("\(path) exists now; a new recording never replaces a file")
        }
        switch destination.kind {
        case .file, .playlist: target = try OutputTarget(path: MovieDestination.localPath(of: path) ?? path)  // `file:` URLs too
        case .stream, .network: target = nil
        }
        let inPlace = destination.kind == .stream || target?.isStream == true
        if inPlace, !MovieWriter.streamableFormats.contains(where: formatName.contains) {
            let what = target?.streamKind ?? "pipe"
            throw InvalidRequest("\(path): is a \(what), and the \(formatName) container needs a seekable "
                             + "file; write .mkv or .ts into it (or -o - for raw frames)")
        }
        if let target, !target.isStream, destination.kind == .file {
            recoveredLeftovers = target.removeStaleTemporaries().recovered
            temporaryPath = target.makeTemporaryPath()
        } else {
            temporaryPath = nil
        }
        finalPath = target?.path ?? path
        let writePath = temporaryPath ?? finalPath
        if case .playlist(let format) = destination.kind {
            playlistFiles = PlaylistFiles(path: finalPath, format: format, settings: playlist)
        }

        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&ctx, outputFormat, nil, writePath), "avformat_alloc_output_context2", path)
        guard let ctx else { throw AVError("cannot create the output context", context: path) }
        format = ctx
        allowsNegativeTimestamps = outputFormat.pointee.flags & AVFMT_TS_NEGATIVE != 0

        // Video encoder.
        let codecName = settings.encoderName
        let codec = avcodec_find_encoder_by_name(codecName)
        guard let codec, let enc = avcodec_alloc_context3(codec) else {
            avformat_free_context(ctx)
            let why = settings.codec == .hevc ? "HEVC needs the libx265 encoder, which this FFmpeg lacks"
                : "this FFmpeg has no \(codecName) encoder"
            throw AVError(why, context: path, call: "avcodec_find_encoder_by_name")
        }
        encoder = enc
        encoderTimeBase = video.timeBase.av
        guard let stream = avformat_new_stream(ctx, nil) else {
            var e: UnsafeMutablePointer<AVCodecContext>? = enc
            avcodec_free_context(&e)
            avformat_free_context(ctx)
            throw AVError(call: "avformat_new_stream", code: averrorENOMEM, context: path)
        }
        videoStream = stream
        audioMode = pcm != nil ? .transcode : audio == nil ? .none
            : (avformat_query_codec(outputFormat, audio!.codecID, FF_COMPLIANCE_NORMAL) == 1 ? .copy : .transcode)
        // Every stored property is set: from here on a throw runs deinit, which frees and deletes all.

        try configureVideoEncoder(codec: codec, outputFormat: outputFormat, lowDelay: fragmented)
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, enc), "avcodec_parameters_from_context", path)
        writeHDRMetadata(video.color, to: stream)
        // A 1/N hint keeps timestamps exact when the time base is not 1/N (e.g. 1001/30000).
        stream.pointee.time_base = AVRational(num: 1, den: video.timeBase.den)
        if let rate = video.frameRate { stream.pointee.avg_frame_rate = rate.av }
        if settings.codec == .hevc && (formatName.contains("mp4") || formatName.contains("mov")) {
            stream.pointee.codecpar.pointee.codec_tag = MovieWriter.fourCC("hvc1")
        }

        if let pcm {
            guard let audioStream = avformat_new_stream(ctx, nil) else {
                throw AVError(call: "avformat_new_stream", code: averrorENOMEM, context: path)
            }
            self.audioStream = audioStream
            let transcoder = try AudioTranscoder(input: .pcm(pcm), output: ctx, bitrate: audioBitrate, label: path)
            self.transcoder = transcoder
            try check(avcodec_parameters_from_context(audioStream.pointee.codecpar, transcoder.encoder),
                      "avcodec_parameters_from_context", path)
            audioStream.pointee.time_base = transcoder.encoder.pointee.time_base
        } else if let audio {
            guard let audioStream = avformat_new_stream(ctx, nil) else {
                throw AVError(call: "avformat_new_stream", code: averrorENOMEM, context: path)
            }
            self.audioStream = audioStream
            if audioMode == .copy {
                try check(avcodec_parameters_copy(audioStream.pointee.codecpar, audio.parameters), "avcodec_parameters_copy", path)
                audioStream.pointee.codecpar.pointee.codec_tag = 0
                audioStream.pointee.time_base = audio.timeBase.av
            } else {
                let transcoder = try AudioTranscoder(input: audio, output: ctx, bitrate: audioBitrate, label: path)
                self.transcoder = transcoder
                try check(avcodec_parameters_from_context(audioStream.pointee.codecpar, transcoder.encoder),
                          "avcodec_parameters_from_context", path)
                audioStream.pointee.time_base = transcoder.encoder.pointee.time_base
            }
        }

        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if destination.isNetwork {
            // A server that never answers or stops reading fails the call at the deadline (no hang). A peer
            // that closes the connection is an error from write: FFmpeg's tcp and unix sockets send with
            // MSG_NOSIGNAL, and FIFOs and pipe:N are written with SIGPIPE blocked on this thread (`muxing`).
            ctx.pointee.interrupt_callback = deadline.callback
            ctx.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS
            // A listening output waits for its reader to connect: a minute, not the deadline of a call.
            deadline.arm(seconds: destination.waitsForPeer ? Self.listenTimeout : Self.networkTimeout)
            if formatName == "rtsp" { av_dict_set(&options, "rtsp_transport", "tcp", 0) }
            if formatName == "flv" { av_dict_set(&options, "flvflags", "no_duration_filesize", 0) }
        }
        if outputFormat.pointee.flags & AVFMT_NOFILE == 0 {
            if let temporaryPath { PartialOutputs.register(temporaryPath) }
            if case .network(let scheme) = destination.kind {
                var callback = deadline.callback
                var ioOptions: OpaquePointer?
                defer { av_dict_free(&ioOptions) }
                // SRT drops what is still in flight when the socket closes unless it lingers; MPEG-TS over UDP
                // goes in datagrams of seven transport packets. A setting in the URL's query wins.
                if scheme == "srt", !path.contains("linger=") { av_dict_set(&ioOptions, "linger", "2", 0) }
                if scheme == "udp", !path.contains("pkt_size=") { av_dict_set(&ioOptions, "pkt_size", "1316", 0) }
                try Self.checkNetwork(avio_open2(&ctx.pointee.pb, writePath, AVIO_FLAG_WRITE, &callback, &ioOptions),
                                      "avio_open2", path, waited: destination.waitsForPeer ? Self.listenTimeout : Self.networkTimeout)
            } else {
                try check(avio_open(&ctx.pointee.pb, writePath, AVIO_FLAG_WRITE), "avio_open", path,
                          what: "cannot create the output file")
            }
            ioOpen = true
        }
        for (key, value) in playlistFiles?.muxerOptions() ?? [] { av_dict_set(&options, key, value, 0) }
        let isMP4 = formatName.contains("mp4") || formatName.contains("mov")
        if isMP4 && fragmented {
            // delay_moov: the header waits for the first fragment, so it can carry the edit list that
            // starts B-frame video at 0.
            av_dict_set(&options, "movflags", "+frag_keyframe+empty_moov+delay_moov+default_base_moof", 0)
            av_dict_set(&options, "frag_duration", "1000000", 0)
        } else if isMP4 {
            av_dict_set(&options, "movflags", "+faststart", 0)
        } else if fragmented && formatName.contains("matroska") {
            av_dict_set(&options, "cluster_time_limit", "1000", 0)
        }
        if fragmented { ctx.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS }
        // What survives without a trailer: fragments, clusters, transport packets.
        isFragmentedMP4 = isMP4 && fragmented
        isTransportStream = formatName.contains("mpegts")
        keepsWithoutTrailer = (isMP4 && fragmented) || formatName.contains("matroska") || formatName.contains("webm")
            || formatName == "mpegts" || formatName == "nut"
        // An earlier run's segments go with the playlist this run replaces (they would pile up otherwise): only
        // those it listed as written; another file with a segment's name refuses the run instead.
        if let playlistFiles {
            let ledger = try playlistFiles.prepare()
            ledger.guardOpens(of: ctx)
            playlistLedger = ledger
        }
        if destination.isNetwork {
            // An RTSP publish connects here (the server may refuse the path); the others send their header.
            try Self.checkNetwork(Self.muxing { avformat_write_header(ctx, &options) }, "avformat_write_header", path)
        } else {
            let code = Self.muxing { avformat_write_header(ctx, &options) }
            if let refusal = playlistLedger?.refusal(code, playlist: path) { throw refusal }
            try check(code, "avformat_write_header", path, what: "cannot write the header")
        }
        headerWritten = true
        durations.reserveCapacity(64)
    }

    /// A writer for frames from `source`: its size, time base, rate, colour space and audio.
    package convenience init(path: String, source: SourceInfo, settings: VideoEncoderSettings = VideoEncoderSettings(),
                            includeAudio: Bool = true) throws {
        try self.init(path: path, video: VideoStreamConfig(source: source), settings: settings,
                      audio: includeAudio ? source.audio : nil)
    }

    deinit {
        if state == .open { abort() }
        var e: UnsafeMutablePointer<AVCodecContext>? = encoder
        avcodec_free_context(&e)
        transcoder = nil
        if ioOpen { _ = Self.muxing { avio_closep(&format.pointee.pb) } }
        avformat_free_context(format)
    }

    /// Containers that are written front to back without seeking, so they can go into a FIFO or a device.
    private static let streamableFormats = ["matroska", "webm", "mpegts", "nut"]

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
    private func writeHDRMetadata(_ color: VideoColor, to stream: UnsafeMutablePointer<AVStream>) {
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

    private static func codecID(_ codec: VideoEncoderSettings.Codec) -> AVCodecID {
        switch codec {
        case .h264: return AV_CODEC_ID_H264
        case .hevc: return AV_CODEC_ID_HEVC
        case .ffv1: return AV_CODEC_ID_FFV1
        case .prores: return AV_CODEC_ID_PRORES
        case .av1: return AV_CODEC_ID_AV1
        }
    }

    private static func fourCC(_ text: String) -> UInt32 {
        text.utf8.reversed().reduce(0) { ($0 << 8) | UInt32($1) }
    }

    /// - Parameter lowDelay: a live recording: the encoder gives each frame's packet back before it takes
    ///   the next (no lookahead, no B-frames, slice rather than frame threads), so a killed process loses
    ///   at most the fragment being built, and a byte budget is checked against every frame's real size.
    private func configureVideoEncoder(codec: UnsafePointer<AVCodec>, outputFormat: UnsafePointer<AVOutputFormat>,
                                       lowDelay: Bool) throws {
        let enc = encoder
        enc.pointee.width = Int32(video.size.width)
        enc.pointee.height = Int32(video.size.height)
        enc.pointee.pix_fmt = settings.pixelFormat.avPixelFormat
        enc.pointee.time_base = encoderTimeBase
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
        if outputFormat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            enc.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        let options = enc.pointee.priv_data
        func set(_ key: String, _ value: String) throws {
            try check(av_opt_set(options, key, value, 0), "av_opt_set", outputPath,
                      what: "\(settings.encoderName) rejects \(key)=\(value)")
        }
        switch settings.codec {
        case .h264, .hevc:
            try set("preset", settings.preset)
            if lowDelay || settings.lowLatency { try set("tune", "zerolatency") }
            if let crf = settings.crf { try set("crf", String(crf)) }
            var x265 = MovieWriter.x265Parameters(video.color)
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
            try set("preset", String(MovieWriter.svtPreset(settings.preset)))
            if let crf = settings.crf { try set("crf", String(crf)) }
            if let parameters = MovieWriter.svtParameters(video.color) { try set("svtav1-params", parameters) }
            // SVT-AV1 prints its configuration to stderr at its default level; errors only (unless SVT_LOG says).
            setenv("SVT_LOG", "1", 0)
        }
        // Frame threads hold a frame per thread; slices give each frame back at once.
        if lowDelay && settings.codec != .h264 && settings.codec != .hevc { enc.pointee.thread_type = FF_THREAD_SLICE }
        try check(avcodec_open2(enc, codec, nil), "avcodec_open2", outputPath, what: "cannot open the \(settings.encoderName) encoder")
    }

    // MARK: video

    /// Encodes one frame from a pooled buffer without copying it (`avcodec_send_frame` on an `AVFrame`
    /// whose planes point into the buffer). The buffer stays out of its pool until the encoder is done.
    /// - Parameters:
    ///   - pts: presentation time on the source's time line (rebased so the first frame is at 0).
    ///   - duration: how long the frame shows; used for the last frame's length (defaults to the
    ///     previous interval, or one nominal frame).
    /// - Returns: false when the frame was dropped because its timestamp did not increase.
    @discardableResult
    package func writeVideo(_ buffer: PooledFrameBuffer, pts: MediaTime, duration: MediaTime? = nil) throws -> Bool {
        guard state == .open else { throw InvalidRequest("\(outputPath): writer is already \(state == .finished ? "finished" : "aborted")") }
        guard buffer.layout == layout else {
            throw InvalidRequest("\(outputPath): buffer holds \(buffer.layout.format.rawValue) \(buffer.layout.size), "
                             + "encoder wants \(layout.format.rawValue) \(layout.size)")
        }
        if start == nil {
            start = pts
            try flushPendingAudio()
        }
        let tb = video.timeBase
        let ticks = (pts - start!).ticks(in: tb)
        if let lastTicks, ticks <= lastTicks {
            videoFramesDropped += 1
            return false
        }
        if let lastTicks { lastDurationTicks = ticks - lastTicks }
        var durationTicks = duration.map { $0.ticks(in: tb) } ?? 0
        if durationTicks <= 0 {
            durationTicks = lastTicks != nil ? lastDurationTicks
                : (video.frameRate.map { MediaTime(value: Int64($0.den), timescale: $0.num).ticks(in: tb) } ?? 1)
        }
        lastTicks = ticks
        durations[ticks] = max(1, durationTicks)
        videoEnd = start! + MediaTime(value: ticks + max(1, durationTicks), timeBase: tb)

        let f = frame.pointer
        f.pointee.format = layout.format.avPixelFormat.rawValue
        f.pointee.width = Int32(layout.size.width)
        f.pointee.height = Int32(layout.size.height)
        for (index, plane) in layout.planes.enumerated() {
            f.setPlane(index, (buffer.data + plane.offset).assumingMemoryBound(to: UInt8.self), lineSize: Int32(plane.rowBytes))
        }
        guard let ref = buffer.avBufferRef() else {
            throw AVError(call: "av_buffer_create", code: averrorENOMEM, context: outputPath)
        }
        f.setBuffer(0, ref)
        f.pointee.pts = ticks
        f.pointee.pkt_duration = durationTicks
        f.pointee.colorspace = encoder.pointee.colorspace
        f.pointee.color_range = encoder.pointee.color_range
        f.pointee.color_primaries = encoder.pointee.color_primaries
        f.pointee.color_trc = encoder.pointee.color_trc
        // The encoder holds its own reference (or is done with the data) either way.
        do { try videoSession.send(frame: f) } catch { av_frame_unref(f); throw error }
        av_frame_unref(f)
        videoFramesWritten += 1
        try drainVideo()
        if let videoEnd, !pendingPCM.isEmpty { try feedPCM(before: videoEnd) }
        return true
    }

    /// The send/receive loop over the video encoder.
    private var videoSession: CodecSession { CodecSession(context: encoder, label: outputPath, activity: "encode video") }

    private func drainVideo() throws {
        try videoSession.drainPackets(into: packet.pointer) { pkt in
            if pkt.pointee.duration <= 0 {
                pkt.pointee.duration = durations.removeValue(forKey: pkt.pointee.pts) ?? lastDurationTicks
            } else {
                durations.removeValue(forKey: pkt.pointee.pts)
            }
            pkt.pointee.stream_index = videoStream.pointee.index
            av_packet_rescale_ts(pkt, encoderTimeBase, videoStream.pointee.time_base)
            if try mux(pkt, what: "cannot write video") { videoPacketsMuxed += 1 }
        }
    }

    /// Every packet reaches the file through here: it is muxed only while the file stays within
    /// `byteBudget` (see `budgetReached`).
    /// A call into the muxer that may write (header, packets, trailer, the final flush): with SIGPIPE
    /// blocked on this thread, so a FIFO or `pipe:N` whose reader went away fails the write with EPIPE
    /// instead of ending the process, whose handling of SIGPIPE is left as it is.
    private static func muxing(_ call: () -> Int32) -> Int32 { withoutSIGPIPE(call) }

    private func mux(_ pkt: UnsafeMutablePointer<AVPacket>, what: String) throws -> Bool {
        guard !budgetReached else { return false }
        let cost = Int64(pkt.pointee.size) + overhead(pkt.pointee.size)
        if let byteBudget, projectedBytes + cost > byteBudget {
            budgetReached = true
            return false
        }
        muxedBytes += cost
        if destination.isNetwork {
            deadline.arm(seconds: Self.networkTimeout)
            try Self.checkNetwork(Self.muxing { av_interleaved_write_frame(format, pkt) }, "av_interleaved_write_frame", outputPath)
        } else {
            let code = Self.muxing { av_interleaved_write_frame(format, pkt) }
            if let refusal = playlistLedger?.refusal(code, playlist: outputPath) { throw refusal }
            try check(code, "av_interleaved_write_frame", outputPath, what: what)
        }
        return true
    }

    /// A network call's failure in words a user can act on: a refused connection, a server that did not
    /// answer within `networkTimeout` (the interrupt callback's AVERROR_EXIT), a refused publish.
    private static func checkNetwork(_ code: Int32, _ call: String, _ url: String, waited: Double = networkTimeout) throws {
        guard code < 0 else { return }
        if code == prism_averror_exit() {
            throw AVError(waited == listenTimeout ? "no reader connected within \(Int(waited)) s"
                          : "no answer within \(Int(waited)) s (is the server up and reading?)", context: url, call: call)
        }
        let what: String
        switch call {
        case "avio_open2": what = "cannot connect"
        case "avformat_write_header": what = "the server refused the stream"
        default: what = "the stream failed"
        }
        throw AVError(call: call, code: code, context: url, what: what)
    }

    // MARK: audio

    /// Passes one audio packet of the stream given at init: copied into the container, or transcoded
    /// to AAC. Packets that end before the first video frame are dropped; until the first video frame
    /// arrives, packets are held.
    package func writeAudio(_ audioPacket: AudioPacket) throws {
        guard state == .open else { throw InvalidRequest("\(outputPath): writer is already \(state == .finished ? "finished" : "aborted")") }
        guard audioInput != nil, audioPacket.stream === audioInput else {
            throw InvalidRequest("\(outputPath): audio packet from a stream the writer was not set up for")
        }
        guard let start else {
            pendingAudio.append(audioPacket)
            return
        }
        try writeAudio(audioPacket, start: start)
    }

    private func flushPendingAudio() throws {
        guard let start, !pendingAudio.isEmpty else { return }
        let pending = pendingAudio
        pendingAudio.removeAll()
        for audioPacket in pending { try writeAudio(audioPacket, start: start) }
    }

    private func writeAudio(_ audioPacket: AudioPacket, start: MediaTime) throws {
        guard let audioStream, let audioInput else { return }
        let pkt = packet.pointer
        try check(av_packet_ref(pkt, audioPacket.packet), "av_packet_ref", outputPath)
        defer { av_packet_unref(pkt) }
        let tb = audioInput.timeBase
        let startTicks = start.ticks(in: tb)
        if pkt.pointee.pts == noPTS && pkt.pointee.dts != noPTS { pkt.pointee.pts = pkt.pointee.dts }
        if let transcoder {
            // The decoder works on the source's time line; the transcoder applies `start` to its output.
            try transcoder.process(pkt, start: start) { encoded in try self.muxTranscodedAudio(encoded, stream: audioStream, transcoder: transcoder) }
            return
        }
        guard pkt.pointee.pts != noPTS else { return }
        if pkt.pointee.pts + max(0, pkt.pointee.duration) <= startTicks { return }
        pkt.pointee.pts -= startTicks
        if pkt.pointee.dts != noPTS { pkt.pointee.dts -= startTicks }
        if pkt.pointee.pts < 0 && !allowsNegativeTimestamps { return }
        pkt.pointee.stream_index = audioStream.pointee.index
        pkt.pointee.pos = -1
        av_packet_rescale_ts(pkt, tb.av, audioStream.pointee.time_base)
        if try mux(pkt, what: "cannot write audio") { audioPacketsWritten += 1 }
    }

    /// Passes raw PCM (the format given as `pcm:` at init): `bytes` holds whole interleaved S16 frames
    /// whose first was captured at `pts`, on the video's time line (the time line of `writeVideo`'s pts).
    /// The samples are copied; they are encoded once the video has reached them (see the type's notes).
    package func writeAudio(pcm bytes: UnsafeRawBufferPointer, pts: MediaTime) throws {
        guard state == .open else { throw InvalidRequest("\(outputPath): writer is already \(state == .finished ? "finished" : "aborted")") }
        guard let pcmInput else { throw InvalidRequest("\(outputPath): raw audio passed to a writer not set up for it") }
        guard bytes.count % pcmInput.bytesPerFrame == 0 else {
            throw InvalidRequest("\(outputPath): raw audio of \(bytes.count) bytes is not whole \(pcmInput) frames")
        }
        guard !bytes.isEmpty else { return }
        pendingPCM.append((Array(bytes), pts))
        if let videoEnd { try feedPCM(before: videoEnd) }
    }

    /// Encodes the pending PCM chunks that start before `limit` (all of them when nil).
    private func feedPCM(before limit: MediaTime?) throws {
        guard let start, let pcmInput, let transcoder, let audioStream else { return }
        var fed = 0
        for chunk in pendingPCM {
            if let limit, chunk.pts >= limit { break }
            fed += 1
            var ticks = chunk.pts.ticks(in: Rational(1, Int32(pcmInput.sampleRate)))
            if let expected = pcmExpected {
                if ticks - expected > Int64(pcmInput.sampleRate / 20) {
                    // Samples were lost (an overrun): silence keeps what follows in sync.
                    try sendPCM([UInt8](repeating: 0, count: Int(ticks - expected) * pcmInput.bytesPerFrame), ticks: expected,
                                start: start, transcoder: transcoder, stream: audioStream)
                } else {
                    ticks = expected // contiguous: the stamps' jitter is ignored
                }
            }
            try sendPCM(chunk.bytes, ticks: ticks, start: start, transcoder: transcoder, stream: audioStream)
        }
        pendingPCM.removeFirst(fed)
    }

    private func sendPCM(_ bytes: [UInt8], ticks: Int64, start: MediaTime, transcoder: AudioTranscoder,
                         stream: UnsafeMutablePointer<AVStream>) throws {
        guard let pcmInput else { return }
        let pkt = packet.pointer
        try check(av_new_packet(pkt, Int32(bytes.count)), "av_new_packet", outputPath)
        defer { av_packet_unref(pkt) }
        bytes.withUnsafeBytes { pkt.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: bytes.count) }
        let frames = Int64(bytes.count / pcmInput.bytesPerFrame)
        pkt.pointee.pts = ticks
        pkt.pointee.dts = ticks
        pkt.pointee.duration = frames
        pcmExpected = ticks + frames
        try transcoder.process(pkt, start: start) { encoded in try self.muxTranscodedAudio(encoded, stream: stream, transcoder: transcoder) }
    }

    private func muxTranscodedAudio(_ encoded: UnsafeMutablePointer<AVPacket>, stream: UnsafeMutablePointer<AVStream>,
                                    transcoder: AudioTranscoder) throws {
        encoded.pointee.stream_index = stream.pointee.index
        av_packet_rescale_ts(encoded, transcoder.encoder.pointee.time_base, stream.pointee.time_base)
        if try mux(encoded, what: "cannot write audio") { audioPacketsWritten += 1 }
    }

    // MARK: end

    /// Flushes the encoders (`avcodec_send_frame(NULL)`), writes the trailer (`av_write_trailer`), closes
    /// the file and renames it over the target. On error the temporary is deleted and the target untouched.
    package func finish() throws {
        guard state == .open else { throw InvalidRequest("\(outputPath): writer is already \(state == .finished ? "finished" : "aborted")") }
        do {
            // An empty movie is a failure, not a result: the input gave nothing and any existing file stays.
            guard videoFramesWritten > 0 else {
                throw AVError("no frames to write (the input had none); nothing was written", context: outputPath)
            }
            if start == nil, let first = pendingAudio.compactMap(\.pts).min() { start = first }
            if start == nil, let first = pendingPCM.first?.pts { start = first }
            try flushPendingAudio()
            if pcmInput != nil, let transcoder, let start {
                if let videoEnd {
                    transcoder.endPTS = (videoEnd - start).ticks(in: Rational(1, transcoder.encoder.pointee.sample_rate))
                }
                try feedPCM(before: nil)
            }
            try videoSession.send(frame: nil)
            try drainVideo()
            if let transcoder, let audioStream, let start {
                try transcoder.finish(start: start) { encoded in
                    try self.muxTranscodedAudio(encoded, stream: audioStream, transcoder: transcoder)
                }
            }
            guard videoPacketsMuxed > 0 else {
                throw InvalidRequest("\(outputPath): the size limit or free-space floor leaves no room for the first encoded "
                                 + "frame (\(byteBudget ?? 0) bytes); nothing was written")
            }
            if destination.isNetwork { deadline.arm(seconds: Self.networkTimeout) }
            let trailer = Self.muxing { av_write_trailer(format) }
            if let refusal = playlistLedger?.refusal(trailer, playlist: outputPath) { throw refusal }
            try check(trailer, "av_write_trailer", outputPath, what: "cannot finish the file")
            if ioOpen {
                // An SRT receiver holds each packet for its latency (120 ms by default) before it plays it, and
                // drops what it holds when the connection closes: the stream's last frames need that long.
                if destination.kind == .network(scheme: "srt") { usleep(500_000) }
                try check(Self.muxing { avio_closep(&format.pointee.pb) }, "avio_closep", outputPath, what: "cannot close the file")
                ioOpen = false
            }
            if let temporaryPath {
                guard placeFinished(temporaryPath) else { throw SystemError("rename", code: errno, context: outputPath) }
                PartialOutputs.unregister(temporaryPath)
            }
            state = .finished
        } catch {
            abort()
            throw error
        }
    }

    /// After a failure mid-recording (a full disk, a camera that stopped): finishes what can still be
    /// finished and keeps the file when it plays — a live recording keeps what it recorded. A file that
    /// would not play without its trailer (a non-fragmented MP4 whose trailer failed) is deleted as by
    /// `abort`. Returns whether the file was kept at `outputPath`.
    @discardableResult
    package func salvage() -> Bool {
        guard state == .open else { return state == .finished }
        guard videoFramesWritten > 0 else { abort(); return false }
        // Flush what the encoders hold and write the trailer; any of it may fail again (the disk is full).
        _ = try? flushPendingAudio()
        if avcodec_send_frame(encoder, nil) >= 0 { _ = try? drainVideo() }
        if let transcoder, let audioStream, let start {
            _ = try? transcoder.finish(start: start) { encoded in
                try self.muxTranscodedAudio(encoded, stream: audioStream, transcoder: transcoder)
            }
        }
        if destination.isNetwork { deadline.arm(seconds: Self.networkTimeout) }
        let trailerWritten = Self.muxing { av_write_trailer(format) } >= 0
        guard trailerWritten || keepsWithoutTrailer else { abort(); return false }
        if ioOpen {
            _ = Self.muxing { avio_closep(&format.pointee.pb) }
            ioOpen = false
        }
        // A fragment cut off mid-write would not decode (the trailer may "succeed" on an I/O error that
        // is only reported later): keep the file up to the last whole fragment.
        if isFragmentedMP4, let path = temporaryPath,
           FragmentedMP4.truncateToLastCompleteFragment(path: path) == nil {
            abort()
            return false
        }
        if let temporaryPath {
            guard placeFinished(temporaryPath) else { abort(); return false }
            PartialOutputs.unregister(temporaryPath)
        }
        state = .finished
        return true
    }

    /// Where the finished movie is (`outputPath`'s target, or for a new file only the name it got).
    package var writtenPath: String { finalPath }

    /// Puts the finished temporary at `finalPath` (`OutputTarget.placeFinished`), which says where it went.
    private func placeFinished(_ temporary: String) -> Bool {
        guard let placed = OutputTarget.placeFinished(temporary, at: finalPath, newFileOnly: newFileOnly) else { return false }
        finalPath = placed
        return true
    }

    /// Stops writing and deletes the temporary file; an existing target is left as it was.
    package func abort() {
        guard state == .open else { return }
        state = .aborted
        pendingAudio.removeAll()
        pendingPCM.removeAll()
        if ioOpen {
            _ = Self.muxing { avio_closep(&format.pointee.pb) }
            ioOpen = false
        }
        if let temporaryPath {
            unlink(temporaryPath)
            PartialOutputs.unregister(temporaryPath)
        }
        // A playlist is written in place: what this run wrote of it goes (its list says what).
        if let playlistLedger { playlistFiles?.removeWritten(playlistLedger, playlist: headerWritten) }
    }
}
