import CFFmpeg
import PrismCore

/// What `MediaInspector.inspect` found by decoding a file completely.
public struct MediaReport: Sendable {
    /// One stream of the file, as the container describes it.
    public struct Stream: Sendable {
        /// The stream's index in the container.
        public var index: Int
        /// "video", "audio", "subtitle", "data", … (`av_get_media_type_string`).
        public var type: String
        /// libavcodec's codec name (`avcodec_get_name`), e.g. "h264", "aac".
        public var codecName: String
        /// The time base the stream's timestamps count in.
        public var timeBase: Rational
    }

    /// Every stream of the file, in container order.
    public var streams: [Stream]
    /// libavformat's name for the container, e.g. "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm".
    public var formatName: String
    /// Decoded frames of the first video stream.
    public var videoFrameCount: Int
    /// Each decoded video frame's `best_effort_timestamp`, in decoding output (display) order.
    public var videoPTS: [MediaTime]
    /// The container's duration (`AVFormatContext.duration`).
    public var duration: MediaTime?
    /// The video stream's own duration (`AVStream.duration`), when the container stores it.
    public var videoStreamDuration: MediaTime?
    /// Frame size of the first video stream in pixels.
    public var size: Size
    /// libavutil's name of the decoded pixel format, e.g. "yuv420p", "bgra".
    public var pixelFormat: String
    /// The video's colour tags as Prism reads them.
    public var colorSpace: YUVColorSpace
    /// Timestamp of the first decoded audio frame.
    public var firstAudioPTS: MediaTime?
    /// Decoded audio samples (per channel).
    public var audioSampleCount: Int
    /// Sample rate of the first audio stream in Hz; nil without audio.
    public var audioSampleRate: Int?
    /// libavcodec's name of the first audio stream's codec, e.g. "aac"; nil without audio.
    public var audioCodecName: String?
    /// Largest absolute sample of the first channel (float or S16 decoders; full scale 1).
    public var audioPeak: Double = 0
    /// Sign changes of the first channel (float or S16 decoders): about 2 × frequency × seconds for a tone.
    public var audioZeroCrossings: Int = 0
}

/// Decodes files again to check what was written (tests, benchmarks): streams, frame count, per-frame
/// timestamps, durations, audio start and sample count, and individual frames as RGBA or raw planes.
public enum MediaInspector {
    /// The video packets `path` holds, read without decoding: what a salvaged recording really kept.
    public static func videoPacketCount(_ path: String) throws -> Int {
        let input = try InputFile(url: path)
        guard let index = input.firstStream(of: AVMEDIA_TYPE_VIDEO) else { throw AVError("no video stream", context: path) }
        let packet = OwnedPacket()
        var count = 0
        while try input.read(into: packet.pointer) {
            if Int(packet.pointer.pointee.stream_index) == index { count += 1 }
            av_packet_unref(packet.pointer)
        }
        return count
    }

    /// Decodes every video and audio frame of the first video and audio streams of `path`; throws when it cannot be opened, has no video stream or fails to decode.
    public static func inspect(_ path: String) throws -> MediaReport {
        let input = try InputFile(url: path)
        var streams: [MediaReport.Stream] = []
        for index in 0..<input.streamCount {
            let stream = input.stream(index)
            let parameters = stream.pointee.codecpar.pointee
            streams.append(MediaReport.Stream(index: index, type: cString(av_get_media_type_string(parameters.codec_type)),
                                              codecName: cString(avcodec_get_name(parameters.codec_id)),
                                              timeBase: Rational(stream.pointee.time_base)))
        }
        guard let videoIndex = input.firstStream(of: AVMEDIA_TYPE_VIDEO) else { throw AVError("no video stream", context: path) }
        let audioIndex = input.firstStream(of: AVMEDIA_TYPE_AUDIO)
        let video = try StreamDecoder(input: input, streamIndex: videoIndex, frameThreads: true)
        let audio = try audioIndex.map { index throws(AVError) in try StreamDecoder(input: input, streamIndex: index, frameThreads: false) }
        let videoStream = input.stream(videoIndex)
        let parameters = videoStream.pointee.codecpar.pointee
        var report = MediaReport(
            streams: streams, formatName: cString(input.context.pointee.iformat.pointee.name), videoFrameCount: 0,
            videoPTS: [], duration: input.duration,
            videoStreamDuration: videoStream.pointee.duration > 0 && videoStream.pointee.duration != noPTS
                ? MediaTime(value: videoStream.pointee.duration, timeBase: video.timeBase) : nil,
            size: Size(width: Int(parameters.width), height: Int(parameters.height)),
            pixelFormat: pixelFormatName(AVPixelFormat(parameters.format)),
            colorSpace: YUVColorSpace.from(space: parameters.color_space, range: parameters.color_range,
                                           format: AVPixelFormat(parameters.format),
                                           size: Size(width: Int(parameters.width), height: Int(parameters.height))),
            firstAudioPTS: nil, audioSampleCount: 0,
            audioSampleRate: audioIndex.map { Int(input.stream($0).pointee.codecpar.pointee.sample_rate) },
            audioCodecName: audioIndex.map { cString(avcodec_get_name(input.stream($0).pointee.codecpar.pointee.codec_id)) })

        let packet = OwnedPacket()
        let frame = OwnedFrame()
        var lastSign = 0
        func measure(_ f: AVFrame) {
            guard let data = f.data.0 else { return }
            let format = AVSampleFormat(f.format)
            let step: Int
            switch format {
            case AV_SAMPLE_FMT_FLTP, AV_SAMPLE_FMT_S16P: step = 1
            case AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_S16: step = Int(f.ch_layout.nb_channels)
            default: return
            }
            for i in 0..<Int(f.nb_samples) {
                let value = format == AV_SAMPLE_FMT_FLTP || format == AV_SAMPLE_FMT_FLT
                    ? Double(UnsafeRawPointer(data).load(fromByteOffset: i * step * 4, as: Float.self))
                    : Double(UnsafeRawPointer(data).load(fromByteOffset: i * step * 2, as: Int16.self)) / 32768
                report.audioPeak = max(report.audioPeak, abs(value))
                let sign = value > 0.01 ? 1 : (value < -0.01 ? -1 : 0)
                if sign != 0 {
                    if lastSign != 0 && sign != lastSign { report.audioZeroCrossings += 1 }
                    lastSign = sign
                }
            }
        }
        func drain(_ decoder: StreamDecoder) throws {
            while try decoder.receive(into: frame.pointer) == .frame {
                defer { av_frame_unref(frame.pointer) }
                let f = frame.pointer.pointee
                let stamp = f.best_effort_timestamp != noPTS ? f.best_effort_timestamp : f.pts
                if decoder === video {
                    report.videoFrameCount += 1
                    if stamp != noPTS { report.videoPTS.append(MediaTime(value: stamp, timeBase: decoder.timeBase)) }
                } else {
                    if report.firstAudioPTS == nil, stamp != noPTS {
                        report.firstAudioPTS = MediaTime(value: stamp, timeBase: decoder.timeBase)
                    }
                    report.audioSampleCount += Int(f.nb_samples)
                    measure(f)
                }
            }
        }
        while try input.read(into: packet.pointer) {
            defer { av_packet_unref(packet.pointer) }
            let index = Int(packet.pointer.pointee.stream_index)
            if index == videoIndex {
                try video.send(packet.pointer)
                try drain(video)
            } else if index == audioIndex, let audio {
                try audio.send(packet.pointer)
                try drain(audio)
            }
        }
        try video.send(nil)
        try drain(video)
        if let audio {
            try audio.send(nil)
            try drain(audio)
        }
        return report
    }

    /// Decoded video frame `index` (display order) converted to RGBA with swscale, honouring the stream's
    /// colour tags (matrix and range; untagged follows `ColorMatrix.defaultFor`, limited).
    public static func frameRGBA(_ path: String, index: Int) throws -> RGBAImage {
        try withFrame(path, index: index) { frame, _ in
            try ImageFile.toRGBA(frame, isJPEG: false, label: path)
        }
    }

    /// Decoded video frame `index` as its raw planes, tightly packed (rows without padding), in the
    /// decoder's own pixel format (named in the result).
    public static func framePlanes(_ path: String, index: Int) throws -> (pixelFormat: String, size: Size, planes: [[UInt8]]) {
        try withFrame(path, index: index) { frame, label in
            let format = AVPixelFormat(frame.pointee.format)
            let width = frame.pointee.width, height = frame.pointee.height
            var lineSizes: [Int32] = [0, 0, 0, 0]
            try check(av_image_fill_linesizes(&lineSizes, format, width), "av_image_fill_linesizes", label)
            var pitches = lineSizes.map { Int($0) }
            var sizes: [Int] = [0, 0, 0, 0]
            try check(av_image_fill_plane_sizes(&sizes, format, height, &pitches), "av_image_fill_plane_sizes", label)
            var planes: [[UInt8]] = []
            for plane in 0..<4 where sizes[plane] > 0 {
                let rows = sizes[plane] / pitches[plane]
                let (data, lineSize) = frame.plane(plane)
                var bytes = [UInt8](repeating: 0, count: sizes[plane])
                bytes.withUnsafeMutableBytes {
                    copyRows(from: data!, rowBytes: Int(lineSize), to: $0.baseAddress!, rowBytes: pitches[plane],
                             usedRowBytes: pitches[plane], rows: rows)
                }
                planes.append(bytes)
            }
            return (pixelFormatName(format), Size(width: Int(width), height: Int(height)), planes)
        }
    }

    private static func withFrame<T>(_ path: String, index wanted: Int,
                                     _ body: (UnsafeMutablePointer<AVFrame>, String) throws -> T) throws -> T {
        let input = try InputFile(url: path)
        guard let videoIndex = input.firstStream(of: AVMEDIA_TYPE_VIDEO) else { throw AVError("no video stream", context: path) }
        let decoder = try StreamDecoder(input: input, streamIndex: videoIndex, frameThreads: false)
        let frame = OwnedFrame()
        var seen = 0
        let result = try decoder.firstResult(from: input, into: frame.pointer) { () throws -> T? in
            // Untagged frames take the stream's tags.
            let parameters = decoder.context.pointee
            if frame.pointer.pointee.colorspace == AVCOL_SPC_UNSPECIFIED { frame.pointer.pointee.colorspace = parameters.colorspace }
            if frame.pointer.pointee.color_range == AVCOL_RANGE_UNSPECIFIED { frame.pointer.pointee.color_range = parameters.color_range }
            if seen == wanted { return try body(frame.pointer, path) }
            seen += 1
            return nil
        }
        guard let result else { throw AVError("has \(seen) frames, no frame \(wanted)", context: path) }
        return result
    }
}
