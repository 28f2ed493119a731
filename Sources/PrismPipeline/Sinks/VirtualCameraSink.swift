import PrismCore
import PrismMedia

/// Feeds the processed frames to a V4L2 output device — v4l2loopback's virtual camera — so browsers,
/// call apps and OBS capture the filtered picture as if it were a webcam.
///
/// A live output: it takes the newest frames (`delivery = .newest`; the engine never waits for it) and
/// writes each with one non-blocking `write(2)`. A frame the device cannot take now (EAGAIN: nobody reads
/// and its buffers are full) is dropped and counted, never waited for, and never fails the run; only an
/// error that will not pass (the device went away) does.
///
/// The device is opened and checked in `init` (before the run opens anything else, so naming a camera by
/// mistake is one line and leaves nothing behind); the format is the first of YUYV, NV12, YU12, RGB24,
/// BGR24 it offers, set with the run's size and colour tags in `open`.
public final class VirtualCameraSink: FrameSink {
    /// The device path, e.g. /dev/video10.
    public let path: String
    private let device: V4L2OutputDevice
    private let format: VirtualCameraFormat
    /// The driver's row pitch and frame size, from VIDIOC_S_FMT.
    private var bytesPerLine = 0
    private var imageBytes = 0
    private var frameSize: Size?
    /// The frame in the device's layout, reused for every frame.
    private var staging: UnsafeMutableRawPointer?
    private var stagingBytes = 0
    /// Frames the device took.
    public private(set) var framesWritten = 0
    /// Frames the device could not take when they came (EAGAIN and the like), dropped.
    public private(set) var framesRefused = 0

    /// Opens `path` and chooses the format; throws a one-line error for a device that is not a V4L2 output
    /// device (a camera), cannot be opened, or offers no format Prism writes.
    public init(path: String) throws {
        self.path = path
        device = try V4L2OutputDevice(path: path)
        format = try device.preferredFormat()
    }

    deinit { staging?.deallocate() }

    /// The layout the GPU packs (see `VirtualCameraFormat.packedFormat`).
    public var pixelFormat: PixelFormat { format.packedFormat }
    /// The engine never waits for a virtual camera.
    public var delivery: SinkDelivery { .newest }


    /// Follows a new output size (a camera switch): the device is set to it between frames. A device that
    /// cannot change (a reader holds its format) is finished instead, and the other outputs go on.
    public func reopen(_ stream: SinkStream) throws -> Bool {
        do {
            try open(stream)
            return true
        } catch {
            return false
        }
    }

    /// Sets the device's format for the stream (VIDIOC_S_FMT, with its colour tags) and tells it the rate.
    public func open(_ stream: SinkStream) throws {
        let size = stream.layout.size
        let chosen = try device.configure(format, size: size, color: stream.color)
        // A driver may pad rows and say so; one that says nothing gets the tight layout.
        bytesPerLine = max(Int(chosen.bytesperline), format.minimumBytesPerLine(width: size.width))
        imageBytes = max(Int(chosen.sizeimage), format.imageBytes(bytesPerLine: bytesPerLine, height: size.height))
        frameSize = size
        if let rate = stream.frameRate ?? stream.source.frameRate { device.announce(frameRate: rate) }
        if stagingBytes < imageBytes {
            staging?.deallocate()
            staging = UnsafeMutableRawPointer.allocate(byteCount: imageBytes, alignment: 64)
            stagingBytes = imageBytes
        }
        // Padding (row ends, the tail of sizeimage) is zero once, then left alone.
        staging!.initializeMemory(as: UInt8.self, repeating: 0, count: imageBytes)
    }

    /// Repacks the frame into the device's layout and writes it; a frame the device cannot take now is
    /// counted and dropped. Always true: a virtual camera never ends the run by itself.
    public func write(_ frame: ProcessedFrame) throws -> Bool {
        guard let staging, frame.buffer.layout.size == frameSize else { return true }
        format.pack(frame.buffer, into: staging, bytesPerLine: bytesPerLine)
        switch try device.write(staging, count: imageBytes) {
        case .written: framesWritten += 1
        case .busy: framesRefused += 1
        }
        return true
    }

    /// What the device received: the run's frame count is the frames it took.
    public var framesInOutput: Int? { framesWritten }

    /// "virtual camera /dev/video10: YUYV 1280x720 (2560 bytes a line), 300 frames written, 2 dropped".
    public func notes(skipped: Int) -> [String] {
        let size = frameSize.map { " \($0.width)x\($0.height) (\(bytesPerLine) bytes a line)" } ?? ""
        return ["virtual camera \(path): \(format.fourcc)\(size), \(framesWritten) frames written, "
            + "\(skipped + framesRefused) dropped"]
    }
}
