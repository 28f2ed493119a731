import CFFmpeg
import PrismCore

/// Decodes an input audio stream, resamples it (libswresample) to the AAC encoder's planar float
/// format, queues the samples in an `AVAudioFifo` to cut them into the encoder's 1024-sample frames,
/// and encodes AAC. Owns its decoder, resampler, FIFO, frames and encoder; frees them in deinit.
/// Output timestamps count samples from the writer's start time.
///
/// The input is a stream of a movie (its packets), or raw S16 interleaved PCM (`PCMFormat`, e.g. from
/// `AudioCaptureSource`), which goes through libavcodec's pcm_s16le decoder like any other codec.
final class AudioTranscoder {
    enum Input {
        case stream(AudioStreamInfo)
        case pcm(PCMFormat)
    }
    let encoder: UnsafeMutablePointer<AVCodecContext>
    private let decoder: UnsafeMutablePointer<AVCodecContext>
    private let inputTimeBase: Rational
    private let resampler = FloatResampler()
    private let fifo: OpaquePointer
    private let decoded = OwnedFrame()
    private let encoderFrame = OwnedFrame()
    private let encoded = OwnedPacket()
    private var converted: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>
    private var convertedCapacity = 0
    private let channels: Int32
    private let sampleRate: Int32
    private var frameSize: Int32 = 1024
    /// A movie's stream: its packets the decoder rejects are skipped and counted there (nil for PCM,
    /// which is never damaged).
    private let stream: AudioStreamInfo?
    /// Next output sample's timestamp (in 1/sampleRate); nil until the first kept samples.
    private(set) var nextPTS: Int64?
    /// Output samples are cut at this timestamp (in 1/sampleRate): a raw capture ends with the video.
    var endPTS: Int64?
    private let label: String

    /// `output` flags decide whether the encoder writes a global header.
    convenience init(input: AudioStreamInfo, output: UnsafeMutablePointer<AVFormatContext>, bitrate: Int, label: String) throws(AVError) {
        try self.init(input: .stream(input), output: output, bitrate: bitrate, label: label)
    }

    init(input source: Input, output: UnsafeMutablePointer<AVFormatContext>, bitrate: Int, label: String) throws(AVError) {
        self.label = label
        let codecID: AVCodecID, codecName: String, inputChannels: Int, inputRate: Int
        switch source {
        case .stream(let input):
            (codecID, codecName, inputChannels, inputRate) = (input.codecID, input.codecName, input.channelCount, input.sampleRate)
            inputTimeBase = input.timeBase
            stream = input
        case .pcm(let pcm):
            (codecID, codecName, inputChannels, inputRate) = (AV_CODEC_ID_PCM_S16LE, "pcm_s16le", pcm.channels, pcm.sampleRate)
            inputTimeBase = Rational(1, Int32(pcm.sampleRate))
            stream = nil
        }
        guard let decoderCodec = avcodec_find_decoder(codecID) else {
            throw AVError("no decoder for audio codec \(codecName)", context: label, call: "avcodec_find_decoder")
        }
        guard let encoderCodec = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw AVError("this FFmpeg has no AAC encoder", context: label, call: "avcodec_find_encoder")
        }
        // Mono stays mono; everything else is mixed to stereo.
        let channelCount: Int32 = inputChannels >= 2 ? 2 : 1
        // The AAC encoder's rates: keep the input's when supported, else 48 kHz.
        var rate: Int32 = 48000
        if let rates = encoderCodec.pointee.supported_samplerates {
            var index = 0
            while rates[index] != 0 {
                if rates[index] == Int32(inputRate) { rate = rates[index] }
                index += 1
            }
        }
        guard let decoder = avcodec_alloc_context3(decoderCodec), let encoder = avcodec_alloc_context3(encoderCodec),
              let fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, channelCount, 4096) else {
            throw AVError(call: "avcodec_alloc_context3", code: averrorENOMEM, context: label)
        }
        self.decoder = decoder
        self.encoder = encoder
        self.fifo = fifo
        channels = channelCount
        sampleRate = rate
        converted = .allocate(capacity: Int(channels))
        converted.initialize(repeating: nil, count: Int(channels))
        // Every stored property is set: a throw from here on runs deinit, which frees all of the above.

        switch source {
        case .stream(let input):
            try check(avcodec_parameters_to_context(decoder, input.parameters), "avcodec_parameters_to_context", label)
        case .pcm(let pcm):
            decoder.pointee.sample_rate = Int32(pcm.sampleRate)
            decoder.pointee.sample_fmt = AV_SAMPLE_FMT_S16
            av_channel_layout_default(&decoder.pointee.ch_layout, Int32(pcm.channels))
        }
        decoder.pointee.pkt_timebase = inputTimeBase.av
        try check(avcodec_open2(decoder, decoderCodec, nil), "avcodec_open2", label, what: "cannot open audio decoder")

        encoder.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        encoder.pointee.sample_rate = rate
        av_channel_layout_default(&encoder.pointee.ch_layout, channels)
        encoder.pointee.bit_rate = Int64(bitrate)
        encoder.pointee.time_base = AVRational(num: 1, den: rate)
        if output.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            encoder.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        try check(avcodec_open2(encoder, encoderCodec, nil), "avcodec_open2", label, what: "cannot open AAC encoder")
        frameSize = encoder.pointee.frame_size > 0 ? encoder.pointee.frame_size : 1024

        let frame = encoderFrame.pointer
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = rate
        frame.pointee.nb_samples = frameSize
        try check(av_channel_layout_copy(&frame.pointee.ch_layout, &encoder.pointee.ch_layout), "av_channel_layout_copy", label)
        try check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer", label)
    }

    deinit {
        var d: UnsafeMutablePointer<AVCodecContext>? = decoder
        avcodec_free_context(&d)
        var e: UnsafeMutablePointer<AVCodecContext>? = encoder
        avcodec_free_context(&e)
        av_audio_fifo_free(fifo)
        if convertedCapacity > 0 { av_freep(converted) }
        converted.deallocate()
    }

    /// Decodes `packet` (pts already in the input time base), drops samples before `start`, and hands
    /// every encoded packet to `write` (timestamps in 1/sampleRate, counted from `start`). A packet the
    /// decoder rejects is skipped and counted (`DecodeDamage`; thrown under `--strict-decode`): the sound
    /// goes on after it, as FFmpeg's does.
    func process(_ packet: UnsafeMutablePointer<AVPacket>?, start: MediaTime,
                 write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        let time = packet.flatMap { $0.pointee.pts == noPTS ? nil : MediaTime(value: $0.pointee.pts, timeBase: inputTimeBase) }
        do {
            try decoderSession.send(packet: packet)
        } catch {
            try skipDamaged(error, at: time)
            return
        }
        while true {
            let received: CodecSession.Received
            do { received = try decoderSession.receive(into: decoded.pointer) } catch {
                try skipDamaged(error, at: time)
                return
            }
            guard received == .frame else { return }
            defer { av_frame_unref(decoded.pointer) }
            try append(decoded.pointer, start: start)
            try encodeFullFrames(write: write)
        }
    }

    /// A damaged packet of a movie's stream: counted there (or thrown under `--strict-decode`).
    private func skipDamaged(_ error: AVError, at time: MediaTime?) throws(AVError) {
        guard let stream else { throw error }
        try stream.damage.skip(error, stream: stream.name, at: time)
    }

    /// Flushes decoder, resampler, FIFO (a short last frame) and encoder.
    func finish(start: MediaTime, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        try process(nil, start: start, write: write)
        if resampler.context != nil && nextPTS != nil {
            try convertAndQueue(input: nil, count: 0)
        }
        try encodeFullFrames(write: write)
        if av_audio_fifo_size(fifo) > 0 { try encodeFrame(samples: av_audio_fifo_size(fifo), write: write) }
        try encoderSession.send(frame: nil)
        try drainEncoder(write: write)
    }

    private func append(_ frame: UnsafeMutablePointer<AVFrame>, start: MediaTime) throws {
        let count = frame.pointee.nb_samples
        guard count > 0 else { return }
        try resampler.prepare(for: frame, layout: &encoder.pointee.ch_layout, rate: sampleRate, label: label, what: "cannot resample audio")
        if nextPTS == nil {
            // Place the first kept sample on the output time line; skip what lies before `start`.
            let framePTS = frame.pointee.best_effort_timestamp != noPTS ? frame.pointee.best_effort_timestamp
                : (frame.pointee.pts != noPTS ? frame.pointee.pts : 0)
            let offset = (MediaTime(value: framePTS, timeBase: inputTimeBase) - start).ticks(in: Rational(1, sampleRate))
            let length = Int64(count) * Int64(sampleRate) / Int64(frame.pointee.sample_rate)
            if offset + length <= 0 { return } // entirely before the start
            let queued = av_audio_fifo_size(fifo)
            try convertAndQueue(input: frame, count: count)
            if offset < 0 {
                let drop = Int32(min(Int64(av_audio_fifo_size(fifo) - queued), -offset))
                av_audio_fifo_drain(fifo, drop)
            }
            nextPTS = max(0, offset)
        } else {
            try convertAndQueue(input: frame, count: count)
        }
    }

    /// Resamples `count` input samples (nil: flush the resampler) and appends them to the FIFO.
    private func convertAndQueue(input: UnsafeMutablePointer<AVFrame>?, count: Int32) throws {
        let capacity = swr_get_out_samples(resampler.context, count)
        guard capacity > 0 else { return }
        if capacity > convertedCapacity {
            if convertedCapacity > 0 { av_freep(converted) }
            try check(av_samples_alloc(converted, nil, channels, capacity, AV_SAMPLE_FMT_FLTP, 0), "av_samples_alloc", label)
            convertedCapacity = Int(capacity)
        }
        let produced: Int32
        if let input {
            produced = input.pointee.extended_data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) {
                swr_convert(resampler.context, converted, capacity, $0, count)
            }
        } else {
            produced = swr_convert(resampler.context, converted, capacity, nil, 0)
        }
        try check(produced, "swr_convert", label, what: "cannot resample audio")
        if produced > 0 {
            let written = converted.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: Int(channels)) {
                av_audio_fifo_write(fifo, $0, produced)
            }
            try check(written, "av_audio_fifo_write", label)
        }
    }

    private func encodeFullFrames(write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        while av_audio_fifo_size(fifo) >= frameSize {
            try encodeFrame(samples: frameSize, write: write)
        }
    }

    private func encodeFrame(samples requested: Int32, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        if let endPTS {
            let room = endPTS - (nextPTS ?? 0)
            if room < Int64(requested) {
                // Up to the end, then what is queued beyond it is dropped.
                if room > 0 { try encodeQueued(samples: Int32(room), write: write) }
                av_audio_fifo_drain(fifo, av_audio_fifo_size(fifo))
                return
            }
        }
        try encodeQueued(samples: requested, write: write)
    }

    private func encodeQueued(samples: Int32, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        let frame = encoderFrame.pointer
        try check(av_frame_make_writable(frame), "av_frame_make_writable", label)
        frame.pointee.nb_samples = samples
        let read = frame.pointee.extended_data.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: Int(channels)) {
            av_audio_fifo_read(fifo, $0, samples)
        }
        try check(read, "av_audio_fifo_read", label)
        frame.pointee.pts = nextPTS ?? 0
        nextPTS = (nextPTS ?? 0) + Int64(samples)
        try encoderSession.send(frame: frame)
        try drainEncoder(write: write)
    }

    private func drainEncoder(write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        try encoderSession.drainPackets(into: encoded.pointer, write)
    }

    /// The send/receive loops over the decoder and the AAC encoder.
    private var decoderSession: CodecSession { CodecSession(context: decoder, label: label, activity: "decode audio") }
    private var encoderSession: CodecSession { CodecSession(context: encoder, label: label, activity: "encode audio") }
}
