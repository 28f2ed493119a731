import CMediaShims
import CV4L2
import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// The pixel formats a virtual camera is fed in, Prism's order of preference: what webcams send and
/// every consumer reads first (browsers and call apps take YUYV and NV12 from any UVC camera), then the
/// planar 4:2:0 and the 24-bit RGB layouts v4l2loopback also passes on.
///
/// The GPU packs none of the interleaved ones directly: YUYV is packed as yuv422p and interleaved here,
/// RGB24/BGR24 as RGBA/BGRA with the alpha dropped here; NV12 and YU12 are packed as they are and only
/// their rows re-spaced to the device's `bytesperline`.
package enum VirtualCameraFormat: CaseIterable, Sendable {
    case yuyv, nv12, yu12, rgb24, bgr24

    /// The V4L2 code (`V4L2_PIX_FMT_*`).
    package var fourcc: FourCC {
        switch self {
        case .yuyv: return .yuyv
        case .nv12: return .nv12
        case .yu12: return .yu12
        case .rgb24: return FourCC("RGB3")
        case .bgr24: return FourCC("BGR3")
        }
    }

    package init?(_ fourcc: FourCC) {
        guard let format = Self.allCases.first(where: { $0.fourcc == fourcc }) else { return nil }
        self = format
    }

    /// What the GPU packs for it (`PackedFrameLayout.supportedFormats`).
    package var packedFormat: PixelFormat {
        switch self {
        case .yuyv: return .yuv422p
        case .nv12: return .nv12
        case .yu12: return .yuv420p
        case .rgb24: return .rgba
        case .bgr24: return .bgra
        }
    }

    /// Whether the frames are R'G'B' (full range; no Y'CbCr matrix).
    package var isRGB: Bool { self == .rgb24 || self == .bgr24 }

    /// The least `bytesperline` for a width (of the first plane; YU12's chroma lines are half of it).
    package func minimumBytesPerLine(width: Int) -> Int {
        switch self {
        case .yuyv: return width * 2
        case .nv12, .yu12: return width
        case .rgb24, .bgr24: return width * 3
        }
    }

    /// The bytes of one frame at `bytesPerLine` (what a driver that did not say `sizeimage` expects).
    package func imageBytes(bytesPerLine: Int, height: Int) -> Int {
        switch self {
        case .yuyv, .rgb24, .bgr24: return bytesPerLine * height
        case .nv12: return bytesPerLine * height + bytesPerLine * ((height + 1) / 2)
        case .yu12: return bytesPerLine * height + 2 * (bytesPerLine / 2) * ((height + 1) / 2)
        }
    }

    /// Copies a packed frame (`packedFormat`, laid out per its `PackedFrameLayout`) into `out` in this
    /// format with rows `bytesPerLine` apart, V4L2's single-planar layout: planes one after the other, YU12's
    /// chroma lines `bytesPerLine / 2` apart. Padding bytes at the ends of rows are left as they are.
    package func pack(_ buffer: PooledFrameBuffer, into out: UnsafeMutableRawPointer, bytesPerLine: Int) {
        let layout = buffer.layout
        precondition(layout.format == packedFormat, "a \(layout.format.rawValue) frame for a \(fourcc) device")
        let width = layout.size.width, height = layout.size.height
        let output = out.assumingMemoryBound(to: UInt8.self)
        func plane(_ index: Int) -> (base: UnsafePointer<UInt8>, rowBytes: Int) {
            let plane = buffer.plane(index)
            return (UnsafePointer(plane.base.assumingMemoryBound(to: UInt8.self)), plane.rowBytes)
        }
        /// Rows of `plane` copied as they are into `rows` lines from `offset`, `line` bytes apart.
        func copyRows(_ index: Int, to offset: Int, line: Int) {
            let (base, rowBytes) = plane(index)
            let used = layout.planes[index].usedRowBytes
            for row in 0..<layout.planes[index].rows {
                (output + offset + row * line).update(from: base + row * rowBytes, count: used)
            }
        }
        switch self {
        case .nv12:
            copyRows(0, to: 0, line: bytesPerLine)
            copyRows(1, to: bytesPerLine * height, line: bytesPerLine)
        case .yu12:
            let chromaLine = bytesPerLine / 2, chromaRows = (height + 1) / 2
            copyRows(0, to: 0, line: bytesPerLine)
            copyRows(1, to: bytesPerLine * height, line: chromaLine)
            copyRows(2, to: bytesPerLine * height + chromaLine * chromaRows, line: chromaLine)
        case .yuyv:
            // Y0 Cb Y1 Cr per pair of pixels, from the three planes of 4:2:2.
            let (y, yRow) = plane(0), (cb, cbRow) = plane(1), (cr, crRow) = plane(2)
            let pairs = width / 2
            for row in 0..<height {
                let ys = y + row * yRow, us = cb + row * cbRow, vs = cr + row * crRow
                let line = output + row * bytesPerLine
                for x in 0..<pairs {
                    line[4 * x] = ys[2 * x]
                    line[4 * x + 1] = us[x]
                    line[4 * x + 2] = ys[2 * x + 1]
                    line[4 * x + 3] = vs[x]
                }
                if width % 2 == 1 {  // an odd last pixel: its pair's chroma, its own luma twice
                    line[4 * pairs] = ys[2 * pairs]
                    line[4 * pairs + 1] = us[pairs]
                    line[4 * pairs + 2] = ys[2 * pairs]
                    line[4 * pairs + 3] = vs[pairs]
                }
            }
        case .rgb24, .bgr24:
            // RGBA → RGB (BGRA → BGR): the alpha byte dropped.
            let (rgba, rowBytes) = plane(0)
            for row in 0..<height {
                let source = rgba + row * rowBytes, line = output + row * bytesPerLine
                for x in 0..<width {
                    line[3 * x] = source[4 * x]
                    line[3 * x + 1] = source[4 * x + 1]
                    line[3 * x + 2] = source[4 * x + 2]
                }
            }
        }
    }
}

/// `-o` named a V4L2 device that cannot take frames: a camera, or a node without video output.
public struct NotAnOutputDeviceError: PrismError {
    /// The device path.
    public let device: String
    /// What the device is, in words ("a capture device: video capture, streaming I/O").
    public let what: String
    public var description: String { "\(device) is not a V4L2 output device (it is \(what))" }
}

/// A V4L2 video output device opened for writing frames (v4l2loopback: a virtual camera other programs
/// capture from). Owns its `V4L2Device` (the descriptor, non-blocking); `init` checks what the device is
/// and lists what it takes, before anything else of the run is opened, so a camera named by mistake
/// fails with one line and leaves nothing behind.
package final class V4L2OutputDevice {
    package let path: String
    private let device: V4L2Device
    /// The formats the device offers for output that Prism can feed, in the device's order.
    package let offeredFormats: [VirtualCameraFormat]
    /// Every format the device lists, for the message when none is one Prism can feed.
    package let listedFormats: [FourCC]

    /// Opens `path` (O_RDWR | O_NONBLOCK), checks VIDIOC_QUERYCAP for video output and read/write I/O
    /// (`write(2)`; mmap streaming is not implemented), and lists the output formats (VIDIOC_ENUM_FMT).
    package init(path: String) throws {
        self.path = path
        let capabilities: DeviceCapabilities
        do {
            device = try V4L2Device(path: path)
            capabilities = try device.capabilities()
        } catch {
            throw error.named("virtual camera")
        }
        guard capabilities.canOutput else {
            let what = capabilities.canCapture ? "a capture device: \(capabilities.summary)"
                : "a device offering: \(capabilities.summary)"
            throw NotAnOutputDeviceError(device: path, what: what)
        }
        guard capabilities.canReadWrite else {
            throw V4L2Error(device: path, call: "VIDIOC_QUERYCAP", code: 0, subject: "virtual camera",
                            detail: "no read/write I/O, which Prism writes frames with (mmap streaming is not "
                                + "implemented; it offers: \(capabilities.summary))")
        }
        let listed: [FourCC]
        do {
            listed = try device.formats(V4L2_BUF_TYPE_VIDEO_OUTPUT).map(\.fourcc)
        } catch {
            throw error.named("virtual camera")
        }
        listedFormats = listed
        offeredFormats = listed.compactMap(VirtualCameraFormat.init)
    }

    /// The format Prism feeds: the first of its preference order (`VirtualCameraFormat.allCases`) the
    /// device offers. A device that lists no output format at all (some drivers list only once a format is
    /// set) is asked for YUYV.
    package func preferredFormat() throws(V4L2Error) -> VirtualCameraFormat {
        if listedFormats.isEmpty { return .yuyv }
        guard let format = VirtualCameraFormat.allCases.first(where: offeredFormats.contains) else {
            let names = VirtualCameraFormat.allCases.map(\.fourcc.description).joined(separator: ", ")
            throw V4L2Error(device: path, call: "VIDIOC_ENUM_FMT", code: 0, subject: "virtual camera",
                            detail: "offers no format Prism writes (it offers \(listedFormats.map(\.description).joined(separator: ", ")); "
                                + "Prism writes \(names))")
        }
        return format
    }

    /// VIDIOC_S_FMT for video output: `format` at `size`, tagged with `color` (V4L2's colorspace, ycbcr_enc,
    /// quantization, xfer_func, which consumers of a loopback device read to decode the frames). Returns
    /// the driver's answer; throws when it changed the format or the size (the run's output size is fixed
    /// by then: `--size` picks another).
    package func configure(_ format: VirtualCameraFormat, size: Size, color: VideoColor) throws(V4L2Error) -> v4l2_pix_format {
        var request = v4l2_format()
        request.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        request.fmt.pix.pixelformat = format.fourcc.rawValue
        request.fmt.pix.width = UInt32(size.width)
        request.fmt.pix.height = UInt32(size.height)
        request.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        request.fmt.pix.bytesperline = UInt32(format.minimumBytesPerLine(width: size.width))
        request.fmt.pix.sizeimage = UInt32(format.imageBytes(bytesPerLine: Int(request.fmt.pix.bytesperline), height: size.height))
        let tags = Self.colorTags(color, rgb: format.isRGB)
        request.fmt.pix.colorspace = tags.colorspace
        request.fmt.pix.ycbcr_enc = tags.encoding
        request.fmt.pix.quantization = tags.quantization
        request.fmt.pix.xfer_func = tags.transfer
        try device.check(prism_vidioc_s_fmt(), "VIDIOC_S_FMT", &request, detail: "\(format.fourcc) \(size)")
        let chosen = request.fmt.pix
        let given = Size(width: Int(chosen.width), height: Int(chosen.height))
        guard chosen.pixelformat == format.fourcc.rawValue, given == size else {
            throw V4L2Error(device: path, call: "VIDIOC_S_FMT", code: 0, subject: "virtual camera",
                            detail: "asked for \(format.fourcc) \(size), the device gives \(FourCC(rawValue: chosen.pixelformat)) \(given)"
                                + (given != size ? " (\(Setting.size) \(given.width)x\(given.height) matches it)" : ""))
        }
        return chosen
    }

    /// VIDIOC_S_PARM for video output: the rate consumers are told (v4l2loopback's `timeperframe`).
    /// Drivers that keep no rate refuse it; that is not an error.
    package func announce(frameRate rate: Rational) {
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        parameters.parm.output.timeperframe = v4l2_fract(numerator: UInt32(rate.den), denominator: UInt32(rate.num))
        _ = device.call(prism_vidioc_s_parm(), &parameters)
    }

    /// What one `write` of a frame came to.
    package enum WriteResult {
        /// The device took the frame.
        case written
        /// The device could not take it now (EAGAIN: its buffers are full, nobody reads; ENOBUFS, ENOMEM,
        /// EBUSY): the frame is dropped, the next may pass.
        case busy
    }

    /// One frame of `bytes` with one `write(2)` (EINTR retried); never blocks (the descriptor is
    /// non-blocking). Throws for errors that will not pass (the device went away, refused the size).
    package func write(_ bytes: UnsafeRawPointer, count: Int) throws(V4L2Error) -> WriteResult {
        var result: Int
        repeat { result = Glibc.write(device.fd, bytes, count) } while result < 0 && errno == EINTR
        if result >= 0 { return .written }  // a short write is the driver's choice of what it keeps
        let code = errno
        switch code {
        case EAGAIN, EWOULDBLOCK, ENOBUFS, ENOMEM, EBUSY: return .busy
        default: throw V4L2Error(device: path, call: "write", code: code, subject: "virtual camera",
                                 detail: "\(count) bytes")
        }
    }

    /// V4L2's colour tags for `color`: colorspace by the primaries (sRGB for R'G'B' frames, which are full
    /// range), the Y'CbCr matrix, the range and the transfer function.
    static func colorTags(_ color: VideoColor, rgb: Bool)
        -> (colorspace: UInt32, encoding: UInt32, quantization: UInt32, transfer: UInt32) {
        let colorspace: v4l2_colorspace
        switch color.primaries {
        case .bt709: colorspace = rgb ? V4L2_COLORSPACE_SRGB : V4L2_COLORSPACE_REC709
        case .smpte170m: colorspace = V4L2_COLORSPACE_SMPTE170M
        case .bt470bg: colorspace = V4L2_COLORSPACE_470_SYSTEM_BG
        case .bt2020: colorspace = V4L2_COLORSPACE_BT2020
        case .p3: colorspace = V4L2_COLORSPACE_DCI_P3
        }
        let encoding: v4l2_ycbcr_encoding
        switch (rgb, color.space.matrix) {
        case (true, _): encoding = V4L2_YCBCR_ENC_DEFAULT
        case (false, .bt601): encoding = V4L2_YCBCR_ENC_601
        case (false, .bt709): encoding = V4L2_YCBCR_ENC_709
        case (false, .bt2020): encoding = V4L2_YCBCR_ENC_BT2020
        }
        let quantization = rgb || color.space.range == .full ? V4L2_QUANTIZATION_FULL_RANGE : V4L2_QUANTIZATION_LIM_RANGE
        let transfer: v4l2_xfer_func
        switch color.transfer {
        case .srgb: transfer = V4L2_XFER_FUNC_SRGB
        case .pq: transfer = V4L2_XFER_FUNC_SMPTE2084
        case .linear: transfer = V4L2_XFER_FUNC_NONE
        case .hlg, .gamma22, .gamma28: transfer = V4L2_XFER_FUNC_DEFAULT  // V4L2 has no code for these
        case .bt709, .smpte170m, .bt2020_10, .bt2020_12: transfer = V4L2_XFER_FUNC_709
        }
        return (colorspace.rawValue, encoding.rawValue, quantization.rawValue, transfer.rawValue)
    }
}

extension V4L2Error {
    /// The same failure said of a device in another role (a camera's helpers name it "camera").
    func named(_ subject: String) -> V4L2Error {
        V4L2Error(device: device, call: call, code: code, subject: subject, detail: detail)
    }
}

extension DeviceCapabilities {
    var canOutput: Bool { flags & UInt32(V4L2_CAP_VIDEO_OUTPUT) != 0 }
    var canReadWrite: Bool { flags & UInt32(V4L2_CAP_READWRITE) != 0 }
}
