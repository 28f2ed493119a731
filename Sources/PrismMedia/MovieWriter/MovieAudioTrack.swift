import CFFmpeg
import PrismCore

/// The audio of a `MovieWriter`: a source's packets copied into the container when it takes their codec,
/// otherwise (and raw PCM always) encoded as AAC by its `AudioTranscoder`, which it owns. Holds what
/// arrives before the video's first frame, and PCM until the video has reached it (see `MovieWriter`).
final class MovieAudioTrack {
    /// Copied, or encoded as AAC.
    let mode: MovieWriter.AudioMode
    /// The source stream whose packets it takes; nil for raw PCM.
    let input: AudioStreamInfo?
    /// The raw PCM it takes, when set up for it.
    let pcm: PCMFormat?
    private let muxer: MovieMuxer
    private let stream: UnsafeMutablePointer<AVStream>
    private let transcoder: AudioTranscoder?
    private let packet = OwnedPacket()
    private var pendingPackets: [AudioPacket] = []
    private var pendingPCM: [(bytes: [UInt8], pts: MediaTime)] = []
    /// The input sample (in 1/rate on the video's time line) that follows what was passed to the transcoder.
    private var pcmExpected: Int64?

    /// Adds the audio stream to `muxer`'s container: a source stream's packets, or raw PCM.
    init(_ source: AudioTranscoder.Input, bitrate: Int, muxer: MovieMuxer) throws {
        let path = muxer.outputPath
        self.muxer = muxer
        stream = try muxer.addStream()
        switch source {
        case .pcm(let format):
            input = nil
            pcm = format
            mode = .transcode
        case .stream(let audio):
            input = audio
            pcm = nil
            mode = avformat_query_codec(muxer.outputFormat, audio.codecID, FF_COMPLIANCE_NORMAL) == 1 ? .copy : .transcode
        }
        if mode == .copy, let audio = input {
            transcoder = nil
            try check(avcodec_parameters_copy(stream.pointee.codecpar, audio.parameters), "avcodec_parameters_copy", path)
            stream.pointee.codecpar.pointee.codec_tag = 0
            stream.pointee.time_base = audio.timeBase.av
        } else {
            let transcoder = try AudioTranscoder(input: source, output: muxer.context, bitrate: bitrate, label: path)
            self.transcoder = transcoder
            try check(avcodec_parameters_from_context(stream.pointee.codecpar, transcoder.encoder),
                      "avcodec_parameters_from_context", path)
            stream.pointee.time_base = transcoder.encoder.pointee.time_base
        }
    }

    // MARK: packets

    /// Passes one packet of `input`: held until the video's first frame gives `start`, then copied or
    /// transcoded. Packets that end before `start` are dropped.
    func write(_ audioPacket: AudioPacket, start: MediaTime?) throws {
        guard let start else {
            pendingPackets.append(audioPacket)
            return
        }
        try write(audioPacket, start: start)
    }

    /// Writes the packets held until the video's first frame.
    func flushPendingPackets(start: MediaTime) throws {
        guard !pendingPackets.isEmpty else { return }
        let pending = pendingPackets
        pendingPackets.removeAll()
        for audioPacket in pending { try write(audioPacket, start: start) }
    }

    private func write(_ audioPacket: AudioPacket, start: MediaTime) throws {
        guard let input else { return }
        let pkt = packet.pointer
        try check(av_packet_ref(pkt, audioPacket.packet), "av_packet_ref", muxer.outputPath)
        defer { av_packet_unref(pkt) }
        let tb = input.timeBase
        let startTicks = start.ticks(in: tb)
        if pkt.pointee.pts == noPTS && pkt.pointee.dts != noPTS { pkt.pointee.pts = pkt.pointee.dts }
        if let transcoder {
            // The decoder works on the source's time line; the transcoder applies `start` to its output.
            try transcoder.process(pkt, start: start) { encoded in try self.muxTranscoded(encoded, transcoder: transcoder) }
            return
        }
        guard pkt.pointee.pts != noPTS else { return }
        if pkt.pointee.pts + max(0, pkt.pointee.duration) <= startTicks { return }
        pkt.pointee.pts -= startTicks
        if pkt.pointee.dts != noPTS { pkt.pointee.dts -= startTicks }
        if pkt.pointee.pts < 0 && !muxer.allowsNegativeTimestamps { return }
        pkt.pointee.stream_index = stream.pointee.index
        pkt.pointee.pos = -1
        av_packet_rescale_ts(pkt, tb.av, stream.pointee.time_base)
        _ = try muxer.write(pkt, what: "cannot write audio")
    }

    // MARK: PCM

    /// Holds `bytes` of `pcm` frames captured at `pts` (on the video's time line) until the video reaches them.
    func hold(pcm bytes: UnsafeRawBufferPointer, pts: MediaTime) {
        pendingPCM.append((Array(bytes), pts))
    }

    /// Whether PCM is held back.
    var holdsPCM: Bool { !pendingPCM.isEmpty }

    /// Encodes the held PCM chunks that start before `limit` (all of them when nil).
    func feedPCM(before limit: MediaTime?, start: MediaTime?) throws {
        guard let start, let pcm, let transcoder else { return }
        var fed = 0
        for chunk in pendingPCM {
            if let limit, chunk.pts >= limit { break }
            fed += 1
            var ticks = chunk.pts.ticks(in: Rational(1, Int32(pcm.sampleRate)))
            if let expected = pcmExpected {
                if ticks - expected > Int64(pcm.sampleRate / 20) {
                    // Samples were lost (an overrun): silence keeps what follows in sync.
                    try sendPCM([UInt8](repeating: 0, count: Int(ticks - expected) * pcm.bytesPerFrame), ticks: expected,
                                start: start, pcm: pcm, transcoder: transcoder)
                } else {
                    ticks = expected // contiguous: the stamps' jitter is ignored
                }
            }
            try sendPCM(chunk.bytes, ticks: ticks, start: start, pcm: pcm, transcoder: transcoder)
        }
        pendingPCM.removeFirst(fed)
    }

    /// Encodes all held PCM, cut at `videoEnd` so the audio ends with the video.
    func finishPCM(start: MediaTime, videoEnd: MediaTime?) throws {
        guard pcm != nil, let transcoder else { return }
        if let videoEnd {
            transcoder.endPTS = (videoEnd - start).ticks(in: Rational(1, transcoder.encoder.pointee.sample_rate))
        }
        try feedPCM(before: nil, start: start)
    }

    private func sendPCM(_ bytes: [UInt8], ticks: Int64, start: MediaTime, pcm: PCMFormat, transcoder: AudioTranscoder) throws {
        let pkt = packet.pointer
        try check(av_new_packet(pkt, Int32(bytes.count)), "av_new_packet", muxer.outputPath)
        defer { av_packet_unref(pkt) }
        bytes.withUnsafeBytes { pkt.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: bytes.count) }
        let frames = Int64(bytes.count / pcm.bytesPerFrame)
        pkt.pointee.pts = ticks
        pkt.pointee.dts = ticks
        pkt.pointee.duration = frames
        pcmExpected = ticks + frames
        try transcoder.process(pkt, start: start) { encoded in try self.muxTranscoded(encoded, transcoder: transcoder) }
    }

    // MARK: end

    /// Flushes the AAC encoder (nothing to do when copying).
    func finishEncoding(start: MediaTime) throws {
        guard let transcoder else { return }
        try transcoder.finish(start: start) { encoded in try self.muxTranscoded(encoded, transcoder: transcoder) }
    }

    /// Drops whatever is held (the movie was aborted).
    func discardPending() {
        pendingPackets.removeAll()
        pendingPCM.removeAll()
    }

    private func muxTranscoded(_ encoded: UnsafeMutablePointer<AVPacket>, transcoder: AudioTranscoder) throws {
        encoded.pointee.stream_index = stream.pointee.index
        av_packet_rescale_ts(encoded, transcoder.encoder.pointee.time_base, stream.pointee.time_base)
        _ = try muxer.write(encoded, what: "cannot write audio")
    }
}
