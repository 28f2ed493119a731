import CV4L2
import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// Frames from a V4L2 camera (`/dev/videoN`), by mmap streaming I/O.
///
/// Opening: `open(O_RDWR | O_NONBLOCK | O_CLOEXEC)`, VIDIOC_QUERYCAP (a video capture node with streaming
/// I/O), VIDIOC_ENUM_FMT + VIDIOC_ENUM_FRAMESIZES + VIDIOC_ENUM_FRAMEINTERVALS (the format that gives the
/// asked size and rate natively: YUYV, NV12 or YU12, which Prism uploads as they are, or MJPG, which
/// most USB webcams offer alone at 720p and above and Prism decodes with libavcodec; see `chooseFormat`),
/// VIDIOC_S_FMT then VIDIOC_G_FMT (what the driver chose, which is what `format` reports), VIDIOC_S_PARM
/// (`timeperframe` = 1/rate, when the driver can set it), then `CaptureStream`'s REQBUFS / QUERYBUF / mmap /
/// QBUF / STREAMON.
///
/// `next()` polls for a filled buffer (a camera silent for `frameTimeout` seconds is an error, not a hang),
/// VIDIOC_DQBUFs it and returns a frame over the mapped buffer itself — no copy. Releasing the frame queues
/// the buffer again (VIDIOC_QBUF). Zero-copy is safe with Prism's upload: `FrameUploader` hands the planes
/// to glTexSubImage2D, which has consumed client memory when it returns, and the frame is released only
/// after that; a frame that waits in a queue simply keeps its buffer from the driver meanwhile (hence
/// `bufferCount` above the pipeline's queue depth: the driver keeps buffers to fill and drops frames only
/// when the consumer really is behind).
///
/// Motion-JPEG buffers are the exception: each is decoded (`MJPEGDecoder`, libavcodec) into the
/// decoder's own memory and queued again at once; the first is decoded while opening, so `info` names
/// the layout the JPEGs really decode to.
///
/// Timestamps are the driver's (CLOCK_MONOTONIC, microseconds) rebased to the first frame, so they keep
/// the camera's real timing; they stay on the same time line across `switchDevice`.
/// Use from one thread at a time (frames may be released on any thread).
package final class CameraSource: MediaSource {
    package struct Configuration: Sendable {
        /// The size to ask for; nil keeps the camera's current size. The closest offered size is taken.
        package var size: Size?
        /// The rate to ask for; nil keeps the camera's current rate.
        package var frameRate: Rational?
        /// Formats in order of preference; only formats Prism uploads as they are (yuyv422, nv12, yuv420p).
        package var preferredFormats: [PixelFormat] = [.yuyv422, .nv12, .yuv420p]
        /// Take Motion-JPEG (decoded on the CPU) when the camera gives the asked size or rate only that way.
        package var decodesMJPEG = true
        /// mmap buffers to request.
        package var bufferCount = 8
        /// Seconds without a frame after which `next()` reports that the camera stopped delivering.
        package var frameTimeout = 3.0

        package init(size: Size? = nil, frameRate: Rational? = nil) {
            self.size = size
            self.frameRate = frameRate
        }
    }

    /// The device frames come from now.
    package private(set) var path: String
    /// What the device told VIDIOC_QUERYCAP.
    package private(set) var card: String
    package private(set) var driver: String
    package let configuration: Configuration
    /// Frames the driver captured but Prism never saw (gaps in `v4l2_buffer.sequence`: no free buffer).
    package private(set) var framesDroppedByDevice = 0
    /// Buffers the driver flagged as corrupted (V4L2_BUF_FLAG_ERROR), skipped.
    package private(set) var corruptedFrames = 0
    private var stream: CaptureStream
    /// The first frame's timestamp (microseconds, CLOCK_MONOTONIC): time zero.
    private var origin: Int64?
    /// Time zero of the frames' timestamps: the first frame's CLOCK_MONOTONIC stamp in microseconds (nil
    /// before the first frame). A capture time on the same clock minus this is on the frames' time line.
    package var originMonotonicMicroseconds: Int64? { origin }
    private var lastPTS: Int64 = -1
    private var lastSequence: UInt32?
    /// For a Motion-JPEG stream.
    private var decoder: MJPEGDecoder?
    /// A Motion-JPEG camera's first frame, decoded at opening to learn what its JPEGs decode to (4:2:2 or
    /// 4:2:0), so `info` announces the format the frames really have; `next()` returns it first.
    private var firstFrame: VideoFrame?
    private var decodedFormat: PixelFormat?
    /// JPEGs the decoder rejected (skipped, like corrupted buffers).
    package private(set) var undecodableFrames = 0
    private var undecodableInARow = 0

    package static let timeBase = Rational(1, 1_000_000)

    package var format: CameraFormat { stream.format }

    package init(path: String, configuration: Configuration = Configuration()) throws(V4L2Error) {
        self.configuration = configuration
        let (stream, capabilities) = try Self.start(path: path, configuration: configuration)
        self.stream = stream
        self.path = path
        card = capabilities.card
        driver = capabilities.driver
        decoder = try Self.decoder(for: stream.format, path: path)
        if decoder != nil {
            do {
                if case .video(let frame)? = try next() {
                    firstFrame = frame
                    decodedFormat = frame.format
                }
            } catch let error as V4L2Error {
                throw error
            } catch {
                throw V4L2Error(device: path, call: "VIDIOC_DQBUF", code: 0, detail: "\(error)")
            }
        }
    }

    private static func decoder(for format: CameraFormat, path: String) throws(V4L2Error) -> MJPEGDecoder? {
        guard format.isCompressed else { return nil }
        do {
            return try MJPEGDecoder(label: "camera \(path)")
        } catch {
            throw V4L2Error(device: path, call: "avcodec_open2", code: 0, detail: "\(error)")
        }
    }

    package var info: SourceInfo {
        let format = stream.format
        var summary = "camera \(path) (\(card), \(driver)) \(format)"
        if format.isCompressed { summary += " (decoded on the CPU)" }
        if let asked = configuration.size, asked != format.size { summary += " (asked for \(asked))" }
        return SourceInfo(size: format.size, pixelFormat: decodedFormat ?? format.pixelFormat, frameRate: format.frameRate,
                          timeBase: Self.timeBase, duration: nil, estimatedFrameCount: nil, isLive: true, audio: nil,
                          colorSpace: format.colorSpace, summary: summary)
    }

    /// Opens, checks and configures a device, and starts streaming from it.
    private static func start(path: String, configuration: Configuration) throws(V4L2Error) -> (CaptureStream, DeviceCapabilities) {
        let device = try V4L2Device(path: path)
        let capabilities = try device.capabilities()
        guard capabilities.canCapture else {
            throw device.error("VIDIOC_QUERYCAP", "not a video capture device (it offers: \(capabilities.summary))")
        }
        guard capabilities.canStream else {
            throw device.error("VIDIOC_QUERYCAP", "no streaming I/O, which Prism needs (it offers: \(capabilities.summary))")
        }
        let format = try negotiate(device, configuration)
        let stream = try CaptureStream(device: device, format: format, count: configuration.bufferCount)
        return (stream, capabilities)
    }

    /// VIDIOC_ENUM_FMT → the preferred format; VIDIOC_ENUM_FRAMESIZES → the closest size; VIDIOC_S_FMT,
    /// VIDIOC_G_FMT; VIDIOC_G_PARM / VIDIOC_S_PARM for the rate.
    private static func negotiate(_ device: V4L2Device, _ configuration: Configuration) throws(V4L2Error) -> CameraFormat {
        let offered = try device.formats()
        var wanted = configuration.preferredFormats.compactMap { FourCC($0) }
        if configuration.decodesMJPEG { wanted.append(.mjpeg) }
        let usable = wanted.filter { fourcc in offered.contains { $0.fourcc == fourcc } }
        guard !usable.isEmpty else {
            let names = offered.isEmpty ? "none" : offered.map { $0.fourcc.description }.joined(separator: ", ")
            let takes = wanted.map(\.description).joined(separator: ", ")
            throw device.error("VIDIOC_ENUM_FMT", "offers no format Prism takes (it offers \(names); Prism takes \(takes))")
        }
        let current = try device.format()
        let currentSize = Size(width: Int(current.width), height: Int(current.height))
        let (fourcc, size) = chooseFormat(usable, size: configuration.size ?? currentSize, rate: configuration.frameRate,
                                          sizes: { device.frameSizes($0) }, rates: { device.frameRates($0, $1) })
        try device.setFormat(fourcc, size)
        // What the driver settled on, read back rather than trusted from S_FMT's answer.
        let chosen = try device.format()
        let chosenFourCC = FourCC(rawValue: chosen.pixelformat)
        let pixelFormat = chosenFourCC == .mjpeg ? MJPEGDecoder.expectedFormat : chosenFourCC.pixelFormat
        guard let pixelFormat, wanted.contains(chosenFourCC) else {
            throw device.error("VIDIOC_S_FMT", "asked for \(fourcc), the driver chose \(chosenFourCC)")
        }
        var rate = device.frameRate()
        if let asked = configuration.frameRate, rate.settable {
            rate.rate = try device.setFrameRate(asked)
        }
        var format = CameraFormat(fourcc: chosenFourCC, pixelFormat: pixelFormat,
                                  size: Size(width: Int(chosen.width), height: Int(chosen.height)),
                                  bytesPerLine: Int(chosen.bytesperline), imageBytes: Int(chosen.sizeimage),
                                  frameRate: rate.rate, colorSpace: colorSpace(of: chosen))
        if format.bytesPerLine == 0 { format.bytesPerLine = pixelFormat.planes[0].minimumRowBytes(for: format.size.width) }
        if format.isCompressed { format.colorSpace = YUVColorSpace(matrix: .bt601, range: .full) }  // JPEG's
        guard format.size.width > 0, format.size.height > 0, format.isCompressed || format.planeOffsets() != nil else {
            throw device.error("VIDIOC_G_FMT", "unusable format \(format) with \(format.bytesPerLine) bytes per line")
        }
        return format
    }

    /// The format to ask for, and its size: among `usable` (in order of preference), the one that gives the
    /// size nearest `size`, then the one that offers `rate` at that size, then the earlier in the list.
    /// So an uncompressed format wins whenever it gives what was asked, and Motion-JPEG is taken when
    /// only it has the size (or the rate: webcams give 720p YUYV at 10 fps or less, MJPG at 30).
    static func chooseFormat(_ usable: [FourCC], size: Size, rate: Rational?,
                             sizes: (FourCC) -> (sizes: [Size], isRange: Bool),
                             rates: (FourCC, Size) -> [Rational]) -> (FourCC, Size) {
        let scored = usable.enumerated().map { order, fourcc -> (fourcc: FourCC, size: Size, cost: (Int, Int, Int)) in
            let (offered, isRange) = sizes(fourcc)
            let chosen = isRange || offered.isEmpty ? size : closest(to: size, in: offered)
            let sizeCost = abs(chosen.width * chosen.height - size.width * size.height)
            var rateCost = 0
            if let rate {
                let given = rates(fourcc, chosen)
                // A driver that lists no discrete rates is not held against its format.
                if !given.isEmpty, !given.contains(where: { abs($0.doubleValue - rate.doubleValue) < 0.01 }) { rateCost = 1 }
            }
            return (fourcc, chosen, (sizeCost, rateCost, order))
        }
        let best = scored.min { $0.cost < $1.cost }!
        return (best.fourcc, best.size)
    }

    /// The offered size nearest to `target`: least difference in area, then in aspect ratio.
    static func closest(to target: Size, in sizes: [Size]) -> Size {
        func cost(_ size: Size) -> (Int, Double) {
            let area = abs(size.width * size.height - target.width * target.height)
            let aspect = abs(Double(size.width) / Double(size.height) - Double(target.width) / Double(target.height))
            return (area, aspect)
        }
        return sizes.min { cost($0) < cost($1) } ?? target
    }

    /// The Y'CbCr matrix and range the driver declares (`ycbcr_enc`, `quantization`), with V4L2's own
    /// defaults for the colour space when they are left at DEFAULT.
    static func colorSpace(of format: v4l2_pix_format) -> YUVColorSpace {
        let space = format.colorspace
        let encoding = format.ycbcr_enc
        let matrix: ColorMatrix
        switch encoding {
        case V4L2_YCBCR_ENC_709.rawValue, V4L2_YCBCR_ENC_XV709.rawValue: matrix = .bt709
        case V4L2_YCBCR_ENC_DEFAULT.rawValue:
            matrix = space == V4L2_COLORSPACE_REC709.rawValue || space == V4L2_COLORSPACE_DCI_P3.rawValue ? .bt709 : .bt601
        default: matrix = .bt601
        }
        let range: ColorRange
        switch format.quantization {
        case V4L2_QUANTIZATION_FULL_RANGE.rawValue: range = .full
        case V4L2_QUANTIZATION_LIM_RANGE.rawValue: range = .limited
        default: range = space == V4L2_COLORSPACE_JPEG.rawValue ? .full : .limited
        }
        return YUVColorSpace(matrix: matrix, range: range)
    }

    /// The next frame; never nil (a camera does not end). Throws when the camera stops delivering for
    /// `frameTimeout` seconds or a V4L2 call fails.
    package func next() throws -> SourceEvent? {
        if let frame = firstFrame {
            firstFrame = nil
            return .video(frame)
        }
        while true {
            let filled = try stream.dequeue(timeout: configuration.frameTimeout)
            let stream = self.stream
            let format = stream.format
            if let last = lastSequence, filled.sequence > last &+ 1, filled.sequence &- last < 1 << 30 {
                framesDroppedByDevice += Int(filled.sequence &- last &- 1)
            }
            lastSequence = filled.sequence
            let needed = format.planeBytes
            if filled.corrupted || (filled.bytesUsed != 0 && filled.bytesUsed < needed)
                || (format.isCompressed && filled.bytesUsed == 0) {
                corruptedFrames += 1
                stream.requeue(filled.index)
                continue
            }
            let origin = self.origin ?? filled.timestamp
            var pts = filled.timestamp - origin
            if pts <= lastPTS { pts = lastPTS + 1 }
            let duration = format.frameRate.map { MediaTime(value: Int64($0.den), timescale: $0.num) }
            if let decoder {
                // The JPEG is decoded into the decoder's own memory; the buffer goes straight back.
                let bytes = UnsafeRawBufferPointer(start: stream.base(filled.index), count: min(filled.bytesUsed, stream.length(filled.index)))
                let decoded = try? decoder.decode(bytes, pts: MediaTime(value: pts, timeBase: Self.timeBase), duration: duration)
                stream.requeue(filled.index)
                guard let decoded else {
                    undecodableFrames += 1
                    undecodableInARow += 1
                    // A camera whose every JPEG is damaged is broken, not noisy: say so rather than spin.
                    if undecodableInARow >= 30 {
                        throw V4L2Error(device: path, call: "avcodec_send_packet", code: 0,
                                        detail: "the last \(undecodableInARow) Motion-JPEG frames could not be decoded")
                    }
                    continue
                }
                undecodableInARow = 0
                self.origin = origin
                lastPTS = pts
                return .video(decoded)
            }
            self.origin = origin
            lastPTS = pts
            let base = UnsafeRawPointer(stream.base(filled.index))
            let planes = format.planeOffsets()!.map { (base: base + $0.offset, rowBytes: $0.rowBytes) }
            let index = filled.index
            let frame = VideoFrame(lending: planes, format: format.pixelFormat, size: format.size,
                                   colorSpace: format.colorSpace, pts: MediaTime(value: pts, timeBase: Self.timeBase),
                                   duration: duration, release: { stream.requeue(index) })
            return .video(frame)
        }
    }

    /// Switches to another camera between two frames, keeping the pipeline running: opens and starts
    /// `newPath` first (asking for the current size and rate), and only then stops the current device,
    /// so a device that cannot be opened leaves the current one streaming (and the error is thrown).
    /// When the new camera does not offer the current size it delivers its closest one, which the result
    /// reports (`sizeChanged`); consumers whose GPU graph is compiled for one frame size must recompile.
    /// Frames of the old device still out stay valid; its buffers, mappings and descriptor go when the
    /// last of them is released. Call from the thread that calls `next()`.
    @discardableResult
    package func switchDevice(to newPath: String) throws(V4L2Error) -> CameraSwitch {
        var wanted = configuration
        let previous = stream.format
        wanted.size = previous.size
        wanted.frameRate = previous.frameRate ?? configuration.frameRate
        let (newStream, capabilities) = try Self.start(path: newPath, configuration: wanted)
        let newDecoder = try Self.decoder(for: newStream.format, path: newPath)
        stream.stop()
        decoder = newDecoder
        decodedFormat = nil  // the new camera's JPEGs may decode to another layout: the engine adapts
        let oldPath = path
        stream = newStream
        path = newPath
        card = capabilities.card
        driver = capabilities.driver
        lastSequence = nil
        return CameraSwitch(from: oldPath, to: newPath, card: capabilities.card, previous: previous, format: newStream.format)
    }
}

/// What `CameraSource.switchDevice` did.
public struct CameraSwitch: Sendable, CustomStringConvertible {
    /// The device path captured from before the switch.
    public var from: String
    /// The device path captured from now.
    public var to: String
    /// The new camera's card name (VIDIOC_QUERYCAP).
    public var card: String
    /// The format the old camera delivered.
    public var previous: CameraFormat
    /// The format the new camera delivers.
    public var format: CameraFormat
    /// The new camera could not deliver the previous size and gives its closest instead.
    public var sizeChanged: Bool { format.size != previous.size }

    public var description: String {
        var text = "switched camera \(from) → \(to) (\(card)): \(format)"
        if sizeChanged { text += " (it has no \(previous.size); closest size taken)" }
        return text
    }
}
