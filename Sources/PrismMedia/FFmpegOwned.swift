import CFFmpeg

/// An `AVPacket` (`av_packet_alloc`), freed with `av_packet_free`.
final class OwnedPacket {
    let pointer: UnsafeMutablePointer<AVPacket>
    init() { pointer = av_packet_alloc() }
    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }
}

/// An `AVFrame` (`av_frame_alloc`), freed with `av_frame_free`.
final class OwnedFrame {
    let pointer: UnsafeMutablePointer<AVFrame>
    init() { pointer = av_frame_alloc() }
    deinit {
        var p: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&p)
    }
}

/// libswresample to planar float at a fixed output layout and rate, remade whenever the input's sample
/// format, rate or channel layout changes; frees its context in deinit.
final class FloatResampler {
    private(set) var context: OpaquePointer?
    private var input: (layout: AVChannelLayout, format: Int32, rate: Int32)?

    deinit {
        swr_free(&context)
        if input != nil { av_channel_layout_uninit(&input!.layout) }
    }

    /// Makes the context for `frame`'s samples, unless the current one takes them: out to `layout` at
    /// `rate` (nil: the frame's own rate).
    func prepare(for frame: UnsafeMutablePointer<AVFrame>, layout: UnsafeMutablePointer<AVChannelLayout>, rate: Int32?,
                 label: String, what: String) throws(AVError) {
        if let current = input, current.format == frame.pointee.format, current.rate == frame.pointee.sample_rate,
           withUnsafePointer(to: current.layout, { av_channel_layout_compare($0, &frame.pointee.ch_layout) }) == 0 {
            return
        }
        swr_free(&context)
        if input != nil { av_channel_layout_uninit(&input!.layout) }
        input = nil
        var copied = AVChannelLayout()
        try check(av_channel_layout_copy(&copied, &frame.pointee.ch_layout), "av_channel_layout_copy", label)
        input = (copied, frame.pointee.format, frame.pointee.sample_rate)
        try check(swr_alloc_set_opts2(&context, layout, AV_SAMPLE_FMT_FLTP, rate ?? frame.pointee.sample_rate,
                                      &frame.pointee.ch_layout, AVSampleFormat(frame.pointee.format),
                                      frame.pointee.sample_rate, 0, nil), "swr_alloc_set_opts2", label)
        try check(swr_init(context), "swr_init", label, what: what)
    }
}
