import CFFmpeg
import Foundation
import PrismCore

/// An 8-bit RGBA image in memory: rows of `size.width * 4` bytes, no padding, straight alpha.
public struct RGBAImage: Hashable, Sendable {
    /// Width and height in pixels.
    public var size: Size
    /// RGBA bytes, top row first: `size.width * size.height * 4` of them.
    public var pixels: [UInt8]

    /// Wraps `pixels`, which must be exactly width × height × 4 bytes (a precondition).
    public init(size: Size, pixels: [UInt8]) {
        precondition(pixels.count == size.width * size.height * 4, "RGBA image needs width*height*4 bytes")
        self.size = size
        self.pixels = pixels
    }

    /// The four bytes of pixel (x, y).
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let i = (y * size.width + x) * 4
        return (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }
}

/// Still images read and written with libavformat / libavcodec (no other image library): PNG and JPEG
/// both ways; anything FFmpeg's image demuxers recognise by extension (PPM, PAM, BMP, TIFF, …) read.
public enum ImageFile {
    /// The formats `ImageFile` can write.
    public enum Kind: Sendable { case png, jpeg }

    /// The kind the file name's extension asks for (.png, .jpg, .jpeg), nil for others.
    public static func kind(forPath path: String) -> Kind? {
        switch (path as NSString).pathExtension.lowercased() {
        case "png": return .png
        case "jpg", "jpeg": return .jpeg
        default: return nil
        }
    }

    /// Reads the first picture of `path` (`avformat_open_input` with the image demuxers,
    /// `avcodec_send_packet` / `avcodec_receive_frame`) and converts it to RGBA with swscale, honouring
    /// its colour tags (untagged JPEG is BT.601 full range, as JFIF says).
    public static func read(path: String) throws -> RGBAImage {
        let input = try InputFile(url: path)
        guard let index = input.firstStream(of: AVMEDIA_TYPE_VIDEO) else {
            throw AVError("not an image", context: path)
        }
        let decoder = try StreamDecoder(input: input, streamIndex: index, frameThreads: false)
        let frame = OwnedFrame()
        let image = try decoder.firstResult(from: input, into: frame.pointer) {
            try toRGBA(frame.pointer, isJPEG: decoder.context.pointee.codec_id == AV_CODEC_ID_MJPEG, label: path)
        }
        guard let image else { throw AVError("no picture in the file", context: path) }
        return image
    }

    static func toRGBA(_ frame: UnsafeMutablePointer<AVFrame>, isJPEG: Bool, label: String) throws -> RGBAImage {
        let size = Size(width: Int(frame.pointee.width), height: Int(frame.pointee.height))
        let sourceFormat = AVPixelFormat(frame.pointee.format)
        var color = YUVColorSpace.from(space: frame.pointee.colorspace, range: frame.pointee.color_range,
                                       format: sourceFormat, size: size)
        if isJPEG && frame.pointee.colorspace == AVCOL_SPC_UNSPECIFIED { color.matrix = .bt601 }
        if isJPEG && frame.pointee.color_range == AVCOL_RANGE_UNSPECIFIED { color.range = .full }
        var pixels = [UInt8](repeating: 0, count: size.pixelCount * 4)
        let planes = framePlanes(frame)
        try pixels.withUnsafeMutableBufferPointer { out throws(AVError) in
            try Scaler(accurate: true).scale(
                src: planes.data.map { UnsafePointer($0) }, srcStrides: planes.lines, srcFormat: sourceFormat,
                srcSize: size, srcColor: color, dst: [out.baseAddress!], dstStrides: [Int32(size.width * 4)],
                dstFormat: AV_PIX_FMT_RGBA, dstSize: size, dstColor: color, context: label)
        }
        return RGBAImage(size: size, pixels: pixels)
    }

    /// Writes `image` as PNG or JPEG, chosen by `path`'s extension. `jpegQuality` 1 (worst) … 100 (best)
    /// maps onto the mjpeg encoder's quantiser scale. Encoded with the png / mjpeg encoders
    /// (`avcodec_send_frame` / `avcodec_receive_packet`), written to a temporary file next to `path` and
    /// renamed over it only when complete (a symlink's target is written, a FIFO or device in place:
    /// see `OutputTarget`).
    /// - Parameter replacing: false for a new file only (a snapshot): nothing at `path` is followed or
    ///   replaced, whatever appeared there since the name was checked (see `writeNew`).
    public static func write(_ image: RGBAImage, to path: String, jpegQuality: Int = 90, replacing: Bool = true) throws {
        guard let kind = kind(forPath: path) else {
            throw InvalidRequest("\(path): unknown image extension (use .png, .jpg or .jpeg)")
        }
        guard (1...100).contains(jpegQuality) else {
            throw InvalidRequest("JPEG quality \(jpegQuality) is out of range (1-100)")
        }
        guard replacing else {
            return try writeNew(try encode(image, kind: kind, jpegQuality: jpegQuality, label: path), to: path)
        }
        let target = try OutputTarget(path: path)
        let data = try encode(image, kind: kind, jpegQuality: jpegQuality, label: path)
        if target.isStream {
            // A FIFO or a device: written in place, never replaced by a regular file.
            let fd = open(target.path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw SystemError("open", code: errno, context: path) }
            var failure = writeAll(data, to: fd, label: path)
            if close(fd) != 0 && failure == nil { failure = SystemError("close", code: errno, context: path) }
            if let failure { throw failure }
            return
        }
        target.removeStaleTemporaries()
        let temporary = target.makeTemporaryPath()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("open", code: errno, context: path) }
        PartialOutputs.register(temporary)
        defer { PartialOutputs.unregister(temporary) }
        var failure = writeAll(data, to: fd, label: path)
        if close(fd) != 0 && failure == nil { failure = SystemError("close", code: errno, context: path) }
        // A symlink's target is replaced; the link stays.
        if failure == nil && rename(temporary, target.path) != 0 { failure = SystemError("rename", code: errno, context: path) }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }

    /// Writes `data` as a new file at `path`, at the moment of writing: a temporary beside it (`O_EXCL`,
    /// `O_NOFOLLOW`) linked to `path` when complete. `link` fails on any name that exists, a symlink made
    /// since the name was checked included, so nothing is written through a link or over a file.
    private static func writeNew(_ data: [UInt8], to path: String) throws {
        let temporary = OutputTarget.temporaryPath(beside: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("open", code: errno, context: path) }
        PartialOutputs.register(temporary)
        defer {
            unlink(temporary)
            PartialOutputs.unregister(temporary)
        }
        var failure = writeAll(data, to: fd, label: path)
        if close(fd) != 0 && failure == nil { failure = SystemError("close", code: errno, context: path) }
        if let failure { throw failure }
        guard link(temporary, path) == 0 else {
            if errno == EEXIST { throw InvalidRequest("\(path) exists now (made since it was asked for); it is never replaced") }
            throw SystemError("link", code: errno, context: path)
        }
    }

    /// Writes all of `data` to `fd`, retrying short writes and EINTR; the error, if any.
    private static func writeAll(_ data: [UInt8], to fd: Int32, label: String) -> SystemError? {
        data.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let result = retryingEINTR { Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written) }
                if result < 0 {
                    return SystemError("write", code: errno, context: label)
                }
                written += result
            }
            return nil
        }
    }

    /// The encoded file's bytes.
    public static func encode(_ image: RGBAImage, kind: Kind, jpegQuality: Int = 90, label: String = "image") throws -> [UInt8] {
        let codecID = kind == .png ? AV_CODEC_ID_PNG : AV_CODEC_ID_MJPEG
        guard let codec = avcodec_find_encoder(codecID) else {
            throw AVError("this FFmpeg has no \(kind == .png ? "PNG" : "JPEG") encoder", context: label)
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw AVError(call: "avcodec_alloc_context3", code: averrorENOMEM, context: label)
        }
        var ctx: UnsafeMutablePointer<AVCodecContext>? = context
        defer { avcodec_free_context(&ctx) }
        let size = image.size
        let pixelFormat = kind == .png ? AV_PIX_FMT_RGBA : AV_PIX_FMT_YUVJ420P
        context.pointee.width = Int32(size.width)
        context.pointee.height = Int32(size.height)
        context.pointee.pix_fmt = pixelFormat
        context.pointee.time_base = AVRational(num: 1, den: 25)
        let jfif = YUVColorSpace(matrix: .bt601, range: .full)
        var lambda: Int32 = 0
        if kind == .jpeg {
            let qscale = 2 + (100 - jpegQuality) * 29 / 99
            lambda = Int32(qscale) * FF_QP2LAMBDA
            context.pointee.flags |= AV_CODEC_FLAG_QSCALE
            context.pointee.global_quality = lambda
            context.pointee.color_range = AVCOL_RANGE_JPEG
            context.pointee.colorspace = AVCOL_SPC_BT470BG
        }
        try check(avcodec_open2(context, codec, nil), "avcodec_open2", label, what: "cannot open the image encoder")

        let frame = OwnedFrame()
        let f = frame.pointer
        f.pointee.format = pixelFormat.rawValue
        f.pointee.width = Int32(size.width)
        f.pointee.height = Int32(size.height)
        try check(av_frame_get_buffer(f, 0), "av_frame_get_buffer", label)
        try image.pixels.withUnsafeBufferPointer { input throws(AVError) in
            if kind == .png {
                let (data, lineSize) = f.plane(0)
                copyRows(from: input.baseAddress!, rowBytes: size.width * 4, to: data!, rowBytes: Int(lineSize),
                         usedRowBytes: size.width * 4, rows: size.height)
            } else {
                f.pointee.quality = lambda
                f.pointee.color_range = AVCOL_RANGE_JPEG
                f.pointee.colorspace = AVCOL_SPC_BT470BG
                let planes = framePlanes(f)
                try Scaler(accurate: true).scale(
                    src: [input.baseAddress!], srcStrides: [Int32(size.width * 4)], srcFormat: AV_PIX_FMT_RGBA,
                    srcSize: size, srcColor: jfif, dst: planes.data, dstStrides: planes.lines,
                    dstFormat: AV_PIX_FMT_YUVJ420P, dstSize: size, dstColor: jfif, context: label)
            }
        }
        let session = CodecSession(context: context, label: label, activity: "encode the image")
        try session.send(frame: f)
        try session.send(frame: nil)
        let packet = OwnedPacket()
        var bytes: [UInt8] = []
        try session.drainPackets(into: packet.pointer) { encoded in
            bytes.append(contentsOf: UnsafeBufferPointer(start: encoded.pointee.data, count: Int(encoded.pointee.size)))
        }
        guard !bytes.isEmpty else { throw AVError("the encoder produced no data", context: label) }
        return bytes
    }
}
