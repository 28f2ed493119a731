import CMediaShims
import CV4L2
import PrismCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The format a camera delivers, as the driver chose it (VIDIOC_S_FMT / G_FMT / S_PARM).
public struct CameraFormat: Sendable, Equatable, CustomStringConvertible {
    /// The V4L2 pixel format the driver delivers in its buffers.
    package var fourcc: FourCC
    /// The frames' format as uploaded: the fourcc's own, or what the JPEG decoder gives for MJPG.
    public var pixelFormat: PixelFormat
    /// Frame size in pixels, as the driver chose it (may differ from the size asked for).
    public var size: Size
    /// Bytes from one row of the first plane to the next (`bytesperline`); chroma planes of planar
    /// formats use half of it, NV12's interleaved CbCr plane all of it.
    public var bytesPerLine: Int
    /// Bytes of one frame (`sizeimage`).
    public var imageBytes: Int
    /// The rate the driver runs at, when it says.
    public var frameRate: Rational?
    /// The Y'CbCr matrix and range from the driver's colorspace, encoding and quantisation fields.
    public var colorSpace: YUVColorSpace

    public var description: String {
        "\(fourcc) \(size)" + (frameRate.map { " @ \($0) fps" } ?? "")
    }

    /// Motion-JPEG: each buffer holds one JPEG of `bytesused` bytes, decoded before upload
    /// (`pixelFormat` is then what the decoder gives).
    public var isCompressed: Bool { fourcc == .mjpeg }

    /// Each plane's offset in a buffer and its row pitch, in `pixelFormat.planes` order; nil when
    /// `bytesPerLine` cannot hold a row.
    func planeOffsets() -> [(offset: Int, rowBytes: Int)]? {
        guard !isCompressed else { return nil }
        let height = size.height
        switch pixelFormat {
        case .yuyv422:
            guard bytesPerLine >= size.width * 2 else { return nil }
            return [(0, bytesPerLine)]
        case .nv12:
            guard bytesPerLine >= size.width else { return nil }
            return [(0, bytesPerLine), (bytesPerLine * height, bytesPerLine)]
        case .yuv420p:
            let chroma = bytesPerLine / 2
            guard bytesPerLine >= size.width, chroma >= (size.width + 1) / 2 else { return nil }
            let chromaRows = (height + 1) / 2
            return [(0, bytesPerLine), (bytesPerLine * height, chroma), (bytesPerLine * height + chroma * chromaRows, chroma)]
        default:
            return nil
        }
    }

    /// Bytes the planes span (what a filled buffer must hold); for JPEGs, which vary, none.
    var planeBytes: Int {
        guard !isCompressed else { return 0 }
        guard let planes = planeOffsets(), let last = planes.last else { return 0 }
        let layout = pixelFormat.planes[planes.count - 1]
        return last.offset + last.rowBytes * (layout.height(for: size.height) - 1) + layout.minimumRowBytes(for: size.width)
    }
}

/// A buffer the driver filled, as VIDIOC_DQBUF returned it.
struct FilledBuffer {
    var index: Int
    var bytesUsed: Int
    /// Microseconds on CLOCK_MONOTONIC (the driver's stamp, or the dequeue time when the driver's clock is
    /// not monotonic).
    var timestamp: Int64
    var sequence: UInt32
    var corrupted: Bool
}

/// mmap streaming I/O on one device: the driver's buffers mapped into this process, queued, streaming.
///
/// Owns the mappings and the streaming state (deinit: VIDIOC_STREAMOFF, munmap each buffer, VIDIOC_REQBUFS
/// with count 0) and holds the device, whose descriptor closes after them. Frames lent out point into the
/// mappings and hold this object, so no mapping goes away under a frame: deinit runs after the last one.
/// `dequeue` is for the capturing thread; `requeue` (a frame being released) and `stop` may come from any
/// thread and are serialised by a lock, so a buffer is never queued after the stream was stopped.
final class CaptureStream: @unchecked Sendable {  // the mappings are C memory fixed after init; `streaming` serialises requeue()
    let device: V4L2Device
    let format: CameraFormat
    /// Base address and length of each mapped buffer; fixed after init.
    private let buffers: [(base: UnsafeMutableRawPointer, length: Int)]
    private let streaming = Mutex(false)

    /// VIDIOC_REQBUFS (`count` mmap buffers; the driver may give fewer or more), per buffer VIDIOC_QUERYBUF
    /// + mmap(MAP_SHARED) + VIDIOC_QBUF, then VIDIOC_STREAMON. Undoes what it did when a step fails.
    init(device: V4L2Device, format: CameraFormat, count: Int) throws(V4L2Error) {
        self.device = device
        self.format = format
        var request = v4l2_requestbuffers()
        request.count = UInt32(count)
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try device.check(prism_vidioc_reqbufs(), "VIDIOC_REQBUFS", &request, detail: "\(count) mmap buffers")
        var mapped: [(base: UnsafeMutableRawPointer, length: Int)] = []
        func undo() { Self.release(mapped, on: device) }
        guard request.count >= 2 else {
            undo()
            throw device.error("VIDIOC_REQBUFS", "the driver gave \(request.count) buffer(s); streaming needs at least 2")
        }
        for index in 0..<request.count {
            var buffer = Self.describe(index)
            if let error = Self.attempt({ () throws(V4L2Error) in
                try device.check(prism_vidioc_querybuf(), "VIDIOC_QUERYBUF", &buffer, detail: "buffer \(index)")
            }) {
                undo()
                throw error
            }
            let length = Int(buffer.length)
            guard length >= format.planeBytes else {
                undo()
                throw device.error("VIDIOC_QUERYBUF", "buffer \(index) holds \(length) bytes, a \(format) frame needs \(format.planeBytes)")
            }
            let address = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, device.fd, off_t(buffer.m.offset))
            guard let address, address != UnsafeMutableRawPointer(bitPattern: -1) else {
                let code = errno
                undo()
                throw V4L2Error(device: device.path, call: "mmap", code: code, detail: "buffer \(index), \(length) bytes")
            }
            mapped.append((address, length))
        }
        buffers = mapped
        do {
            for index in 0..<buffers.count {
                var buffer = Self.describe(UInt32(index))
                try device.check(prism_vidioc_qbuf(), "VIDIOC_QBUF", &buffer, detail: "buffer \(index)")
            }
            var type = Int32(bitPattern: V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            try device.check(prism_vidioc_streamon(), "VIDIOC_STREAMON", &type)
        } catch {
            undo()
            throw error
        }
        streaming.withLock { $0 = true }
    }

    deinit {
        stop()
        Self.release(buffers, on: device)
    }

    /// Unmaps `mapped` and hands the driver's buffers back (VIDIOC_REQBUFS of none).
    private static func release(_ mapped: [(base: UnsafeMutableRawPointer, length: Int)], on device: V4L2Device) {
        for buffer in mapped { munmap(buffer.base, buffer.length) }
        var request = v4l2_requestbuffers()
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        _ = device.call(prism_vidioc_reqbufs(), &request)
    }

    private static func attempt(_ body: () throws(V4L2Error) -> Void) -> V4L2Error? {
        do { try body(); return nil } catch { return error }
    }

    private static func describe(_ index: UInt32) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.index = index
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        return buffer
    }

    var bufferCount: Int { buffers.count }

    /// The start of buffer `index`'s mapping.
    func base(_ index: Int) -> UnsafeMutableRawPointer { buffers[index].base }
    /// The length of buffer `index`'s mapping.
    func length(_ index: Int) -> Int { buffers[index].length }

    /// Waits with `poll(POLLIN)` up to `timeout` seconds for a filled buffer, then VIDIOC_DQBUF.
    func dequeue(timeout: Double) throws(V4L2Error) -> FilledBuffer {
        let deadline = monotonicMicroseconds() + Int64(timeout * 1e6)
        while true {
            var buffer = Self.describe(0)
            let code = device.call(prism_vidioc_dqbuf(), &buffer)
            if code == 0 {
                let index = Int(buffer.index)
                guard index < buffers.count else {
                    throw device.error("VIDIOC_DQBUF", "the driver returned buffer \(index) of \(buffers.count)")
                }
                let monotonic = buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
                let stamp = monotonic
                    ? Int64(buffer.timestamp.tv_sec) * 1_000_000 + Int64(buffer.timestamp.tv_usec)
                    : monotonicMicroseconds()
                return FilledBuffer(index: index, bytesUsed: Int(buffer.bytesused), timestamp: stamp,
                                    sequence: buffer.sequence, corrupted: buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0)
            }
            guard code == EAGAIN else { throw V4L2Error(device: device.path, call: "VIDIOC_DQBUF", code: code) }
            let remaining = deadline - monotonicMicroseconds()
            guard remaining > 0 else { throw stalled(timeout) }
            var descriptor = pollfd(fd: device.fd, events: Int16(POLLIN), revents: 0)
            let ready = retryingEINTR { poll(&descriptor, 1, Int32(min(remaining / 1000 + 1, Int64(Int32.max)))) }
            if ready < 0 {
                throw V4L2Error(device: device.path, call: "poll", code: errno)
            }
            if ready == 0 { throw stalled(timeout) }
            // POLLIN: try VIDIOC_DQBUF again. POLLERR (unplugged, or stopped): DQBUF will name the problem.
        }
    }

    private func stalled(_ timeout: Double) -> V4L2Error {
        device.error("poll", "camera stopped delivering frames (none for \(timeout.formatted1) s)")
    }

    /// VIDIOC_QBUF: gives buffer `index` back to the driver, unless the stream has been stopped. A failure
    /// cannot be reported to anyone (this runs when a frame is released); the buffer is then simply lost
    /// to the driver, which copes with fewer buffers by dropping frames.
    func requeue(_ index: Int) {
        streaming.withLock { streaming in
            guard streaming else { return }
            var buffer = Self.describe(UInt32(index))
            _ = device.call(prism_vidioc_qbuf(), &buffer)
        }
    }

    /// VIDIOC_STREAMOFF (once): the driver stops filling buffers and lets go of all of them. Frames still
    /// out keep their memory until released; they are not queued again.
    func stop() {
        streaming.withLock { streaming in
            guard streaming else { return }
            streaming = false
            var type = Int32(bitPattern: V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            _ = device.call(prism_vidioc_streamoff(), &type)
        }
    }
}

/// CLOCK_MONOTONIC in microseconds: the clock V4L2 stamps buffers with, and `AudioCaptureSource` its chunks.
package func monotonicMicroseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
}

extension Double {
    fileprivate var formatted1: String {
        let tenths = Int((self * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
