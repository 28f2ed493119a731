import CFFmpeg
import PrismCore

/// An opened input (`avformat_open_input` + `avformat_find_stream_info`), closed with
/// `avformat_close_input` in deinit.
final class InputFile {
    let url: String
    let context: UnsafeMutablePointer<AVFormatContext>
    /// A FIFO input's descriptor, read as `pipe:FD` (`FIFOInput`); closed after the context.
    private let fifo: Int32?
    /// The network input's deadline, which watches this context's reads until it is closed.
    private let watchdog: IOWatchdog?

    /// Opens `url`. Errors name the file: "in.mp4: cannot open: Invalid data found when processing input".
    /// `options`: the demuxer's and protocol's private options (e.g. image2's `framerate`, `rtsp_transport`).
    /// `interrupt`: asked during every blocking call (a network input's deadline, `IOWatchdog`); it is
    /// copied into the context, so what its `opaque` points to must outlive this input. `label`: the name
    /// errors give instead of `url` (a network URL without its password). `connected`: called when
    /// `avformat_open_input` has returned (a network input is connected and its first data came), before the
    /// streams are probed — where a deadline for the connection gives way to one for the probe. `watchdog`:
    /// told the context while it lives (its reads' progress moves the deadline on).
    init(url: String, format: String? = nil, options: [String: String] = [:], interrupt: AVIOInterruptCB? = nil,
         label givenLabel: String? = nil, watchdog: IOWatchdog? = nil, connected: (() -> Void)? = nil) throws(AVError) {
        let label = givenLabel ?? url
        self.url = label
        // A FIFO is waited on where a stop can end the wait, then read through its descriptor.
        let fifo = try FIFOInput.openForReading(MovieDestination.localPath(of: url) ?? url, label: label)
        self.fifo = fifo
        let url = fifo.map { "pipe:\($0)" } ?? url
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        if let interrupt {
            // The callback must be in place before `avformat_open_input` connects; the context is freed by
            // `avformat_open_input` itself when that fails.
            guard let allocated = avformat_alloc_context() else {
                if let fifo { close(fifo) }
                throw AVError(call: "avformat_alloc_context", code: averrorENOMEM, context: label)
            }
            allocated.pointee.interrupt_callback = interrupt
            ctx = allocated
            watchdog?.watch(allocated)
        }
        self.watchdog = watchdog
        let inputFormat = format.flatMap { av_find_input_format($0) }
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        let opened = avformat_open_input(&ctx, url, inputFormat, &dictionary)
        // A failed open has freed the context.
        if opened < 0 || ctx == nil { watchdog?.watch(nil) }
        if opened < 0 || ctx == nil, let fifo { close(fifo) }
        try check(opened, "avformat_open_input", label, what: "cannot open")
        guard let ctx else { throw AVError("cannot open", context: label, call: "avformat_open_input") }
        context = ctx
        connected?()
        // Fully initialised: a throw from here on runs deinit, which closes the input.
        try check(avformat_find_stream_info(ctx, nil), "avformat_find_stream_info", label,
                  what: "cannot read stream information")
    }

    deinit {
        watchdog?.watch(nil)
        var pointer: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&pointer)
        if let fifo { close(fifo) }
    }

    var streamCount: Int { Int(context.pointee.nb_streams) }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { context.pointee.streams[index]! }

    /// Index of the first stream of `type`, nil when there is none.
    func firstStream(of type: AVMediaType) -> Int? {
        (0..<streamCount).first { stream($0).pointee.codecpar.pointee.codec_type == type }
    }

    /// The container's duration (`AVFormatContext.duration`, in AV_TIME_BASE units), when known.
    var duration: MediaTime? {
        let value = context.pointee.duration
        guard value != noPTS, value > 0 else { return nil }
        return MediaTime(value: value, timescale: Int32(AV_TIME_BASE))
    }

    /// `av_read_frame` into `packet`; false at end of file. Retries EAGAIN (non-blocking inputs).
    func read(into packet: UnsafeMutablePointer<AVPacket>) throws(AVError) -> Bool {
        while true {
            let result = av_read_frame(context, packet)
            if result >= 0 { return true }
            if result == averrorEOF { return false }
            if result == averrorEAGAIN { usleep(1000); continue }
            throw AVError(call: "av_read_frame", code: result, context: url, what: "cannot read")
        }
    }
}

/// A decoder for one stream (`avcodec_alloc_context3` + `avcodec_parameters_to_context` +
/// `avcodec_open2`), freed with `avcodec_free_context`.
final class StreamDecoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    let streamIndex: Int
    let timeBase: Rational
    let label: String
    /// The send/receive loop over `context`.
    let session: CodecSession

    /// `frameThreads`: decode several frames at once (`FF_THREAD_FRAME`, `thread_count` 0 = auto).
    init(input: InputFile, streamIndex: Int, frameThreads: Bool) throws(AVError) {
        let stream = input.stream(streamIndex)
        let parameters = stream.pointee.codecpar!
        let codecName = cString(avcodec_get_name(parameters.pointee.codec_id))
        label = "\(input.url): stream \(streamIndex) (\(codecName))"
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw AVError("no decoder for \(codecName)", context: input.url, call: "avcodec_find_decoder")
        }
        guard let ctx = avcodec_alloc_context3(codec) else {
            throw AVError(call: "avcodec_alloc_context3", code: averrorENOMEM, context: label)
        }
        context = ctx
        session = CodecSession(context: ctx, label: label, activity: "decode")
        self.streamIndex = streamIndex
        timeBase = Rational(stream.pointee.time_base)
        // Fully initialised: a throw from here on runs deinit, which frees the context.
        try check(avcodec_parameters_to_context(ctx, parameters), "avcodec_parameters_to_context", label)
        ctx.pointee.pkt_timebase = stream.pointee.time_base
        if frameThreads {
            ctx.pointee.thread_count = 0
            ctx.pointee.thread_type = FF_THREAD_FRAME
        }
        try check(avcodec_open2(ctx, codec, nil), "avcodec_open2", label, what: "cannot open decoder")
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&pointer)
    }

    /// `avcodec_send_packet` (`CodecSession.send(packet:)`); nil flushes.
    func send(_ packet: UnsafeMutablePointer<AVPacket>?) throws(AVError) { try session.send(packet: packet) }

    typealias Receive = CodecSession.Received

    /// `avcodec_receive_frame` into `frame` (`CodecSession.receive(into:)`).
    func receive(into frame: UnsafeMutablePointer<AVFrame>) throws(AVError) -> Receive { try session.receive(into: frame) }

    /// Decodes the stream from the start of `input` into `frame`, one frame at a time, until `body` makes
    /// something of one (a frame it returns nil for is dropped); nil when the stream ends first.
    func firstResult<T>(from input: InputFile, into frame: UnsafeMutablePointer<AVFrame>, _ body: () throws -> T?) throws -> T? {
        let packet = OwnedPacket()
        var flushed = false
        while true {
            switch try receive(into: frame) {
            case .frame:
                if let result = try body() { return result }
                av_frame_unref(frame)
                continue
            case .finished:
                return nil
            case .needsInput:
                if flushed { return nil }
            }
            if try input.read(into: packet.pointer) {
                defer { av_packet_unref(packet.pointer) }
                if Int(packet.pointer.pointee.stream_index) == streamIndex { try send(packet.pointer) }
            } else {
                try send(nil)
                flushed = true
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
