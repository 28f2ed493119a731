import CFFmpeg
import PrismCore

/// An audio stream's parameters (an owned copy of its `AVCodecParameters`, freed with
/// `avcodec_parameters_free`), so a writer can copy or transcode its packets.
public final class AudioStreamInfo: Sendable {
    /// C memory, read-only after init (FFmpeg copies from it), freed in deinit: the one field not checked.
    nonisolated(unsafe) let parameters: UnsafeMutablePointer<AVCodecParameters>
    /// The time base the stream's packet timestamps count in.
    public let timeBase: Rational
    /// libavcodec's name of the codec, e.g. "aac", "pcm_s16le".
    public let codecName: String
    /// Samples per second per channel, in Hz.
    public let sampleRate: Int
    /// Number of audio channels.
    public let channelCount: Int
    /// The stream as damage reports name it ("audio stream 1 (ac3)").
    package let name: StreamName
    /// Where every decoder of this stream (each output's transcoder, the analysis decoder) counts the
    /// packets it skips, or fails under `--strict-decode`.
    package let damage: DecodeDamage

    /// Copies `source` (`avcodec_parameters_copy`) of stream `index`.
    init(copying source: UnsafePointer<AVCodecParameters>, timeBase: Rational, index: Int, damage: DecodeDamage) throws(AVError) {
        guard let parameters = avcodec_parameters_alloc() else {
            throw AVError(call: "avcodec_parameters_alloc", code: averrorENOMEM)
        }
        self.parameters = parameters
        self.timeBase = timeBase
        self.damage = damage
        codecName = cString(avcodec_get_name(source.pointee.codec_id))
        name = StreamName(index: index, kind: "audio", codec: codecName)
        sampleRate = Int(source.pointee.sample_rate)
        channelCount = Int(source.pointee.ch_layout.nb_channels)
        try check(avcodec_parameters_copy(parameters, source), "avcodec_parameters_copy")
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecParameters>? = parameters
        avcodec_parameters_free(&pointer)
    }

    var codecID: AVCodecID { parameters.pointee.codec_id }
}

/// One compressed audio packet passed through from a movie, untouched. Owns its `AVPacket`
/// (`av_packet_free` in deinit).
public final class AudioPacket: Sendable {
    /// C memory, read-only after init (writers reference or clone it, never change it), freed in deinit: the
    /// one field not checked.
    nonisolated(unsafe) let packet: UnsafeMutablePointer<AVPacket>
    /// The stream the packet belongs to.
    public let stream: AudioStreamInfo
    /// Presentation time, nil when the container gave none.
    public let pts: MediaTime?
    /// How long the packet plays, nil when the container gave none.
    public let duration: MediaTime?
    /// The time base of the packet's own timestamps (its stream's).
    public var timeBase: Rational { stream.timeBase }
    /// Size of the compressed payload in bytes.
    public var byteCount: Int { Int(packet.pointee.size) }

    /// Takes ownership of `packet`.
    init(adopting packet: UnsafeMutablePointer<AVPacket>, stream: AudioStreamInfo) {
        self.packet = packet
        self.stream = stream
        let tb = stream.timeBase
        pts = packet.pointee.pts == noPTS ? nil : MediaTime(value: packet.pointee.pts, timeBase: tb)
        duration = packet.pointee.duration > 0 ? MediaTime(value: packet.pointee.duration, timeBase: tb) : nil
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&pointer)
    }

    /// A copy (`av_packet_clone`, sharing the data) with its timestamps moved by `offset`: a looping
    /// clip's later passes.
    public func shifted(by offset: MediaTime) throws(AVError) -> AudioPacket {
        guard let copy = av_packet_clone(packet) else { throw AVError(call: "av_packet_clone", code: averrorENOMEM) }
        let ticks = offset.ticks(in: stream.timeBase)
        if copy.pointee.pts != noPTS { copy.pointee.pts += ticks }
        if copy.pointee.dts != noPTS { copy.pointee.dts += ticks }
        return AudioPacket(adopting: copy, stream: stream)
    }
}
