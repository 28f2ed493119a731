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

