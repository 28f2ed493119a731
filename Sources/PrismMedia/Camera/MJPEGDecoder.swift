import CFFmpeg
import PrismCore

/// Decodes a camera's Motion-JPEG buffers, one complete JPEG each, with libavcodec's MJPEG decoder
/// (`avcodec_find_decoder(AV_CODEC_ID_MJPEG)`, freed with `avcodec_free_context`). Intra-only, so each
/// packet sent gives its picture back at once, without frame threads holding frames.
/// The decoded planes are libavcodec's own, so the camera's buffer can go back to the driver as soon
/// as `decode` returns. Use from one thread.
final class MJPEGDecoder {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let packet = OwnedPacket()
    private let ingest: FrameIngest
    private let label: String

    init(label: String) throws(AVError) {
        self.label = label
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_MJPEG) else {
            throw AVError("no MJPEG decoder in this libavcodec", context: label, call: "avcodec_find_decoder")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw AVError(call: "avcodec_alloc_context3", code: averrorENOMEM, context: label)
        }
        self.context = context
        ingest = FrameIngest(label: label)
        // Fully initialised: a throw from here on runs deinit, which frees the context.
        context.pointee.thread_count = 1
        try check(avcodec_open2(context, codec, nil), "avcodec_open2", label, what: "cannot open the MJPEG decoder")
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&pointer)
    }

    /// The pixel format a camera's JPEGs usually decode to (4:2:2, full range): what the source
    /// announces before its first frame; a camera that sends another makes the engine adapt.
    static let expectedFormat = PixelFormat.yuv422p

    /// Decodes one JPEG (`avcodec_send_packet`, `avcodec_receive_frame`) into a frame stamped `pts`.
    /// JPEG's Y'CbCr is BT.601 full range whatever the decoder's pixel format says.
    func decode(_ bytes: UnsafeRawBufferPointer, pts: MediaTime, duration: MediaTime?) throws(AVError) -> VideoFrame {
        let pkt = packet.pointer
        pkt.pointee.data = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
        pkt.pointee.size = Int32(bytes.count)
        defer {
            pkt.pointee.data = nil
            pkt.pointee.size = 0
        }
        let sent = avcodec_send_packet(context, pkt)
        try check(sent, "avcodec_send_packet", label, what: "cannot decode a JPEG frame")
        guard let frame = av_frame_alloc() else { throw AVError(call: "av_frame_alloc", code: averrorENOMEM, context: label) }
        let received = avcodec_receive_frame(context, frame)
        guard received >= 0 else {
            var owned: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&owned)
            throw AVError(call: "avcodec_receive_frame", code: received, context: label, what: "cannot decode a JPEG frame")
        }
        // Not reference counted data: the decoder copied what it needed, the packet stays ours.
        return try ingest.makeFrame(frame, colorSpace: YUVColorSpace(matrix: .bt601, range: .full), pts: pts, duration: duration)
    }
}
