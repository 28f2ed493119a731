import CFFmpeg
import PrismCore

/// Decodes a movie's audio stream to float PCM for analysis (audio-reactive filters): libavcodec's
/// decoder, then libswresample to planar float at the stream's own rate, mono kept mono and everything
/// else mixed to stereo. Owns its decoder, resampler and frame; frees them in deinit. Used from one
/// thread (the engine's source thread).
package final class AudioPCMDecoder {
    package let sampleRate: Int
    /// 1 or 2.
    package let channels: Int
    private let decoder: UnsafeMutablePointer<AVCodecContext>
    private let timeBase: Rational
    private var outputLayout = AVChannelLayout()
    private let resampler = FloatResampler()
    private let decoded = OwnedFrame()
    private let label: String
    /// Where the packets the decoder rejects are counted (or, under `--strict-decode`, fail the run).
    private let stream: AudioStreamInfo

    package init(stream: AudioStreamInfo, label: String) throws(AVError) {
        self.label = label
        self.stream = stream
        guard let codec = avcodec_find_decoder(stream.codecID) else {
            throw AVError("no decoder for audio codec \(stream.codecName)", context: label, call: "avcodec_find_decoder")
        }
        guard let decoder = avcodec_alloc_context3(codec) else {
            throw AVError(call: "avcodec_alloc_context3", code: averrorENOMEM, context: label)
        }
        self.decoder = decoder
        timeBase = stream.timeBase
        sampleRate = stream.sampleRate
        channels = stream.channelCount >= 2 ? 2 : 1
        av_channel_layout_default(&outputLayout, Int32(channels))
        // Every stored property is set: a throw from here on runs deinit.
        try check(avcodec_parameters_to_context(decoder, stream.parameters), "avcodec_parameters_to_context", label)
        decoder.pointee.pkt_timebase = stream.timeBase.av
        try check(avcodec_open2(decoder, codec, nil), "avcodec_open2", label, what: "cannot open audio decoder")
    }

    deinit {
        var d: UnsafeMutablePointer<AVCodecContext>? = decoder
        avcodec_free_context(&d)
        av_channel_layout_uninit(&outputLayout)
    }

    /// Decodes `packet` (nil: flush at the end of the stream) and hands each decoded frame's samples to
    /// `body`: the frame's presentation time (nil when the stream gave none) and one array per channel. A
    /// packet the decoder rejects is skipped and counted (`DecodeDamage`), as FFmpeg skips it.
    package func decode(_ packet: AudioPacket?, _ body: (MediaTime?, [[Float]]) throws -> Void) throws {
        let session = CodecSession(context: decoder, label: label, activity: "decode audio")
        do {
            try session.send(packet: packet?.packet)
        } catch {
            try stream.damage.skip(error, stream: stream.name, at: packet?.pts)
            return
        }
        while true {
            let received: CodecSession.Received
            do { received = try session.receive(into: decoded.pointer) } catch {
                try stream.damage.skip(error, stream: stream.name, at: packet?.pts)
                return
            }
            guard received == .frame else { return }
            let frame = decoded.pointer
            defer { av_frame_unref(frame) }
            let count = frame.pointee.nb_samples
            guard count > 0 else { continue }
            // Same rate out as in: the analysis runs at the stream's rate (AudioWindow carries it).
            try resampler.prepare(for: frame, layout: &outputLayout, rate: nil, label: label, what: "cannot convert audio to float")
            let stamp = frame.pointee.best_effort_timestamp != noPTS ? frame.pointee.best_effort_timestamp : frame.pointee.pts
            let time = stamp == noPTS ? nil : MediaTime(value: stamp, timeBase: timeBase)
            var planes = [[Float]](repeating: [Float](repeating: 0, count: Int(count)), count: channels)
            let produced = try convert(frame, count: count, into: &planes)
            if produced < Int(count) { planes = planes.map { Array($0.prefix(produced)) } }
            if produced > 0 { try body(time, planes) }
        }
    }

    /// Converts `count` samples of `frame` into `planes` (planar float); returns how many came out.
    private func convert(_ frame: UnsafeMutablePointer<AVFrame>, count: Int32, into planes: inout [[Float]]) throws(AVError) -> Int {
        let capacity = Int(count)
        var produced: Int32 = 0
        // Point swr at each channel's array in turn (at most two).
        let resampler = self.resampler.context
        let input = frame.pointee.extended_data
        func run(_ outputs: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int32 {
            input!.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) {
                swr_convert(resampler, outputs, Int32(capacity), $0, count)
            }
        }
        if channels == 1 {
            produced = planes[0].withUnsafeMutableBytes { first in
                var outputs: [UnsafeMutablePointer<UInt8>?] = [first.baseAddress!.assumingMemoryBound(to: UInt8.self)]
                return run(&outputs)
            }
        } else {
            var left = planes[0], right = planes[1]
            produced = left.withUnsafeMutableBytes { first in
                right.withUnsafeMutableBytes { second in
                    var outputs: [UnsafeMutablePointer<UInt8>?] = [first.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                                   second.baseAddress!.assumingMemoryBound(to: UInt8.self)]
                    return run(&outputs)
                }
            }
            planes = [left, right]
        }
        try check(produced, "swr_convert", label, what: "cannot convert audio to float")
        return Int(produced)
    }
}
