import CFFmpeg
import PrismCore

/// libavcodec's send/receive protocol for one opened codec context, written once for every encoder and
/// decoder in PrismMedia (movie video and audio, still images, demuxed streams): which return codes mean
/// "wants more input" or "drained", how a flush starts, and one wording for errors ("<label>: cannot
/// <activity>: <FFmpeg's message> (<call>)"). It does not own the context; its owner frees it.
struct CodecSession {
    let context: UnsafeMutablePointer<AVCodecContext>
    /// What errors name: a path, or "in.mp4: stream 0 (h264)".
    let label: String
    /// What the codec does, for errors: "encode video", "decode audio".
    let activity: String

    // MARK: encoding

    /// `avcodec_send_frame`; nil starts the flush (sending nil to a flushed encoder is not an error).
    func send(frame: UnsafeMutablePointer<AVFrame>?) throws(AVError) {
        let result = avcodec_send_frame(context, frame)
        if result < 0 && !(frame == nil && result == averrorEOF) {
            throw AVError(call: "avcodec_send_frame", code: result, context: label, what: "cannot \(activity)")
        }
    }

    /// `avcodec_receive_packet` until the encoder wants more input (EAGAIN) or is drained (EOF); each packet
    /// is handed to `body`, then unreferenced.
    func drainPackets(into packet: UnsafeMutablePointer<AVPacket>, _ body: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        while true {
            let result = avcodec_receive_packet(context, packet)
            if result == averrorEAGAIN || result == averrorEOF { return }
            try check(result, "avcodec_receive_packet", label, what: "cannot \(activity)")
            defer { av_packet_unref(packet) }
            try body(packet)
        }
    }

    // MARK: decoding

    /// `avcodec_send_packet`; nil flushes. A full decoder (EAGAIN: drain it first) or a flushed one (EOF)
    /// is not an error here; corrupt data is, reported rather than concealed silently.
    func send(packet: UnsafeMutablePointer<AVPacket>?) throws(AVError) {
        let result = avcodec_send_packet(context, packet)
        if result < 0 && result != averrorEOF && result != averrorEAGAIN {
            throw AVError(call: "avcodec_send_packet", code: result, context: label, what: "cannot \(activity)")
        }
    }

    enum Received { case frame, needsInput, finished }

    /// `avcodec_receive_frame` into `frame`: a frame, a request for input (EAGAIN) or the end (EOF).
    func receive(into frame: UnsafeMutablePointer<AVFrame>) throws(AVError) -> Received {
        let result = avcodec_receive_frame(context, frame)
        if result >= 0 { return .frame }
        if result == averrorEAGAIN { return .needsInput }
        if result == averrorEOF { return .finished }
        throw AVError(call: "avcodec_receive_frame", code: result, context: label, what: "cannot \(activity)")
    }
}
