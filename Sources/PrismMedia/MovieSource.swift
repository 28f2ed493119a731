import CFFmpeg
import PrismCore

/// Anything libavformat can open (a path or a URL): the first video stream decoded with frame threads,
/// the first audio stream's packets passed through untouched.
///
/// Video timestamps are the decoder's `best_effort_timestamp` in the stream's time base, so variable
/// frame rate survives. Damage goes as FFmpeg's command line lets it go (`DecodeDamage`): a packet the
/// decoder rejects is skipped and counted, a read that fails after the first packet ends the input there
/// (a truncated file keeps what decoded); under `--strict-decode` either throws an `AVError` naming the file.
/// Use from one thread at a time.
package final class MovieSource: MediaSource {
    package let url: String
    package private(set) var info: SourceInfo
    /// What the decoders skipped (every decoder of this input's streams counts there).
    package let damage: DecodeDamage
    package var decodeDamage: DecodeDamage? { damage }

    private let input: InputFile
    private let decoder: StreamDecoder
    private let videoIndex: Int
    private let audioIndex: Int?
    private let audioStream: AudioStreamInfo?
    private let packet = OwnedPacket()
    private let ingest: FrameIngest
    /// `--input-color`: fields that replace the stream's tags, on the stream and on every frame.
    private let colorOverride: ColorOverride?
    /// Decoded at open to read an HDR stream's metadata from its first frame, handed out first.
    private var peeked: [SourceEvent] = []
    /// The next frame's HDR side data is the stream's (read into `info.color`).
    private var readsFrameMetadata = false
    private let frameDuration: MediaTime?
    private var lastPTS: MediaTime?
    private var lastDuration: MediaTime?
    /// The video stream as damage reports name it.
    private let videoName: StreamName
    /// The last video packet sent to the decoder: where a frame-threaded decoder's late error is placed.
    private var lastVideoPacketTime: MediaTime?
    /// The last packet read, of any stream, on its stream's time line (where an early end is placed).
    private var lastPacketTime: MediaTime?
    /// A read error ends the input (a file); false: it is thrown (a network session, which reconnects).
    private let readErrorEndsInput: Bool
    /// A network session's read error after its first packet: the decoder is drained (the frames it holds
    /// came before the loss, as FFmpeg keeps them) and the input ends; the session's owner reads why here.
    package private(set) var readFailure: AVError?
    private var inputEnded = false
    private var finished = false

    /// Opens `url` (`avformat_open_input`, `avformat_find_stream_info`, `avcodec_open2`).
    /// Throws when it cannot be opened, is not a movie, or has no video stream.
    ///
    /// A numbered image pattern (`img%03d.png`, see `ImageSequence`) is read by libavformat's image2
    /// demuxer with its `framerate` set to `imageRate`, so frame n is at n / imageRate exactly.
    ///
    /// A network input (`NetworkSource`) passes its protocol options, the interrupt callback that puts a
    /// deadline on every blocking call, and the label its messages use (the URL without a password); its
    /// read errors are thrown (a lost stream is reconnected), a file's end the input early.
    ///
    /// `damage`: where skipped packets are counted, and whether they fail the run (nil: a log of its own
    /// that skips them). `watchdog`, `connected`: see `InputFile`.
    package init(url path: String, imageRate: Rational = Rational(30, 1), colorOverride: ColorOverride? = nil,
                 protocolOptions: [String: String] = [:], interrupt: AVIOInterruptCB? = nil, label: String? = nil,
                 damage: DecodeDamage? = nil, watchdog: IOWatchdog? = nil, connected: (() -> Void)? = nil) throws {
        let url = label ?? path
        self.url = url
        self.colorOverride = colorOverride
        let damage = damage ?? DecodeDamage(input: url)
        self.damage = damage
        readErrorEndsInput = interrupt == nil
        if interrupt == nil, ImageSequence.isPattern(path) {
            input = try InputFile(url: path, format: "image2",
                                  options: ["framerate": "\(imageRate.num)/\(imageRate.den)", "pattern_type": "sequence"])
        } else {
            input = try InputFile(url: path, options: protocolOptions, interrupt: interrupt, label: url, watchdog: watchdog,
                                  connected: connected)
        }
        guard let videoIndex = input.firstStream(of: AVMEDIA_TYPE_VIDEO) else {
            throw AVError("no video stream", context: url)
        }
        self.videoIndex = videoIndex
        audioIndex = input.firstStream(of: AVMEDIA_TYPE_AUDIO)
        for index in 0..<input.streamCount where index != videoIndex && index != audioIndex {
            input.stream(index).pointee.discard = AVDISCARD_ALL
        }
        decoder = try StreamDecoder(input: input, streamIndex: videoIndex, frameThreads: true)
        ingest = FrameIngest(label: url)

        let stream = input.stream(videoIndex)
        let parameters = stream.pointee.codecpar.pointee
        videoName = StreamName(index: videoIndex, kind: "video", codec: cString(avcodec_get_name(parameters.codec_id)))
        let timeBase = Rational(stream.pointee.time_base)
        let size = Size(width: Int(parameters.width), height: Int(parameters.height))
        guard size.width > 0, size.height > 0 else { throw AVError("video stream has no frame size", context: url) }
        let rawFormat = AVPixelFormat(parameters.format)
        let avg = stream.pointee.avg_frame_rate, real = stream.pointee.r_frame_rate
        let frameRate: Rational? = (avg.num > 0 && avg.den > 0) ? Rational(avg)
            : (real.num > 0 && real.den > 0 ? Rational(real) : nil)
        frameDuration = frameRate.map { MediaTime(value: Int64($0.den), timescale: $0.num) }

        var duration: MediaTime? = nil
        if stream.pointee.duration != noPTS && stream.pointee.duration > 0 {
            duration = MediaTime(value: stream.pointee.duration, timeBase: timeBase)
        } else {
            duration = input.duration
        }
        var frameCount: Int? = stream.pointee.nb_frames > 0 ? Int(stream.pointee.nb_frames) : nil
        if frameCount == nil, let duration, let frameRate {
            frameCount = Int((Int128(duration.value) * Int128(frameRate.num)) / (Int128(duration.timescale) * Int128(frameRate.den)))
        }
        var audio: AudioStreamInfo? = nil
        if let audioIndex {
            let audioStream = input.stream(audioIndex)
            audio = try AudioStreamInfo(copying: audioStream.pointee.codecpar, timeBase: Rational(audioStream.pointee.time_base),
                                        index: audioIndex, damage: damage)
        }
        audioStream = audio
        let scheme = path.range(of: "://").map { String(path[..<$0.lowerBound]) }
        // Network streams run in real time; files, pipes (`pipe:0`, `pipe://0`, /dev/stdin, FIFOs) and
        // image sequences wait for the reader: back-pressure, never dropped frames.
        let isLive = input.duration == nil && scheme != nil && scheme != "file" && scheme != "pipe"
        let format = PixelFormat.ingest(rawFormat)
        var color = try VideoColor.from(space: parameters.color_space, range: parameters.color_range,
                                        primaries: parameters.color_primaries, transfer: parameters.color_trc,
                                        chroma: parameters.chroma_location, format: rawFormat, size: size, context: url)
        var sideSize = 0
        color.readHDRMetadata(mastering: av_stream_get_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &sideSize).map(UnsafeRawPointer.init),
                              lightLevel: av_stream_get_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &sideSize).map(UnsafeRawPointer.init))
        var summary = "\(url): \(cString(avcodec_get_name(parameters.codec_id))) \(size) \(pixelFormatName(rawFormat))"
        if rawFormat != format.avPixelFormat { summary += " (as \(format.rawValue))" }
        if let frameRate { summary += " \(frameRate) fps" }
        if let audio { summary += ", \(audio.codecName) audio \(audio.sampleRate) Hz \(audio.channelCount) ch" }
        let (orientation, oddAngle) = Self.displayOrientation(stream)
        if !orientation.isUpright { summary += ", \(orientation)" }
        var info = SourceInfo(size: size, pixelFormat: format, frameRate: frameRate, timeBase: timeBase,
                              duration: duration, estimatedFrameCount: frameCount, isLive: isLive, audio: audio,
                              summary: summary)
        info.color = color
        info.orientation = orientation
        info.frameCountFromHeader = stream.pointee.nb_frames > 0
        info.unsupportedRotation = oddAngle
        self.info = info
        // HEVC and AV1 carry HDR10's metadata in the stream itself (SEI, OBUs), not the container: the first
        // frame has it, and tone mapping needs its peak before the run starts.
        if color.isHDR && color.mastering == nil && color.lightLevel == nil {
            readsFrameMetadata = true
            while readsFrameMetadata, let event = try decodeNext() { peeked.append(event) }
            readsFrameMetadata = false
        }
        // Metadata no display or picture can have (MaxCLL 65535) is dropped, said, and never refuses the file.
        self.info.notes += self.info.color.dropImplausibleHDRMetadata().map { "\(url): \($0)" }
        if let colorOverride { self.info.color = colorOverride.applied(to: self.info.color) }
    }

    /// The stream's display matrix (`AV_PKT_DATA_DISPLAYMATRIX`, what phones write for a camera held
    /// upright) as a turn and a mirror, read as FFmpeg's own autorotation reads it (`DisplayOrientation.from`).
    static func displayOrientation(_ stream: UnsafeMutablePointer<AVStream>) -> (orientation: DisplayOrientation, unsupportedDegrees: Double?) {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size),
              size >= 9 * MemoryLayout<Int32>.size else { return (.upright, nil) }
        return DisplayOrientation.from(displayMatrix: UnsafeRawPointer(data).assumingMemoryBound(to: Int32.self))
    }

    /// Reads (`av_read_frame`) and decodes (`avcodec_send_packet` / `avcodec_receive_frame`) until a
    /// video frame or an audio packet is ready; nil at the end.
    package func next() throws -> SourceEvent? {
        if !peeked.isEmpty { return peeked.removeFirst() }
        return try decodeNext()
    }

    private func decodeNext() throws -> SourceEvent? {
        if finished { return nil }
        while true {
            // Drain what the decoder has first.
            guard let frame = av_frame_alloc() else { throw AVError(call: "av_frame_alloc", code: averrorENOMEM, context: url) }
            var owned: UnsafeMutablePointer<AVFrame>? = frame
            let state: StreamDecoder.Receive
            do {
                state = try decoder.receive(into: frame)
            } catch {
                av_frame_free(&owned)
                // A frame-threaded decoder reports a damaged packet when its frame was due: skipped, as sent.
                try damage.skip(error, stream: videoName, at: lastVideoPacketTime, near: true)
                continue
            }
            switch state {
            case .frame:
                return .video(try makeVideoFrame(frame))
            case .finished:
                av_frame_free(&owned)
                finished = true
                return nil
            case .needsInput:
                av_frame_free(&owned)
            }
            if inputEnded {
                // The decoder asked for input after the flush: nothing more will come.
                finished = true
                return nil
            }
            let pkt = packet.pointer
            if try !read(into: pkt) {
                inputEnded = true
                // A frame-threaded decoder may answer the flush with an earlier packet's damage.
                do { try decoder.send(nil) } catch { try damage.skip(error, stream: videoName, at: lastVideoPacketTime, near: true) }
                continue
            }
            let index = Int(pkt.pointee.stream_index)
            let time = Self.time(of: pkt, in: input.stream(index))
            if time != nil { lastPacketTime = time }
            if index == videoIndex {
                defer { av_packet_unref(pkt) }
                lastVideoPacketTime = time ?? lastVideoPacketTime
                do { try decoder.send(pkt) } catch { try damage.skip(error, stream: videoName, at: time) }
            } else if index == audioIndex, let audioStream {
                guard let moved = av_packet_alloc() else {
                    av_packet_unref(pkt)
                    throw AVError(call: "av_packet_alloc", code: averrorENOMEM, context: url)
                }
                av_packet_move_ref(moved, pkt)
                return .audio(AudioPacket(adopting: moved, stream: audioStream))
            } else {
                av_packet_unref(pkt)
            }
        }
    }

    /// `av_read_frame`; false at the end. A file that cannot be read on once it has begun (the tail of a
    /// truncated file: a packet beyond its end) ends there, as FFmpeg's command line ends an input at a
    /// read error; before the first packet, or under `--strict-decode`, the error is thrown.
    private func read(into pkt: UnsafeMutablePointer<AVPacket>) throws(AVError) -> Bool {
        do {
            return try input.read(into: pkt)
        } catch {
            if !readErrorEndsInput, lastPacketTime != nil {
                readFailure = error
                return false
            }
            guard readErrorEndsInput, lastPacketTime != nil || lastPTS != nil else { throw error }
            try damage.endEarly(error, after: lastPacketTime, duration: info.duration)
            return false
        }
    }

    /// A packet's presentation (else decoding) time on its stream's time line; nil when it has neither.
    private static func time(of pkt: UnsafeMutablePointer<AVPacket>, in stream: UnsafeMutablePointer<AVStream>) -> MediaTime? {
        let stamp = pkt.pointee.pts != noPTS ? pkt.pointee.pts : pkt.pointee.dts
        return stamp == noPTS ? nil : MediaTime(value: stamp, timeBase: Rational(stream.pointee.time_base))
    }

    private func makeVideoFrame(_ frame: UnsafeMutablePointer<AVFrame>) throws(AVError) -> VideoFrame {
        let timeBase = decoder.timeBase
        var duration: MediaTime? = frame.pointee.pkt_duration > 0
            ? MediaTime(value: frame.pointee.pkt_duration, timeBase: timeBase) : frameDuration
        let pts: MediaTime
        if frame.pointee.best_effort_timestamp != noPTS {
            pts = MediaTime(value: frame.pointee.best_effort_timestamp, timeBase: timeBase)
        } else if let lastPTS {
            pts = lastPTS + (lastDuration ?? frameDuration ?? MediaTime(value: 1, timeBase: timeBase))
        } else {
            pts = MediaTime(value: 0, timeBase: timeBase)
        }
        if duration == nil { duration = lastDuration }
        lastPTS = pts
        lastDuration = duration
        if frame.pointee.flags & 1 != 0 || frame.pointee.decode_error_flags != 0 { damage.concealed() } // AV_FRAME_FLAG_CORRUPT
        var colorSpace = YUVColorSpace.from(space: frame.pointee.colorspace, range: frame.pointee.color_range,
                                            format: AVPixelFormat(frame.pointee.format), fallback: info.colorSpace)
        if let colorOverride { colorSpace = colorOverride.applied(to: colorSpace) }
        if readsFrameMetadata {
            info.color.readHDRMetadata(mastering: av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA).map { UnsafeRawPointer($0.pointee.data) },
                                       lightLevel: av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL).map { UnsafeRawPointer($0.pointee.data) })
            readsFrameMetadata = false
        }
        return try ingest.makeFrame(frame, colorSpace: colorSpace, pts: pts, duration: duration)
    }
}
