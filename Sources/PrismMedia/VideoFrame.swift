import CFFmpeg
import PrismCore
import Synchronization

/// A decoded video frame in CPU memory.
///
/// Backed by an `AVFrame` that the frame owns (decoder output; released with `av_frame_free` in deinit),
/// by memory it owns (test pattern, raw stdin; returned to its recycler or freed in deinit), or by memory
/// lent to it (a camera's mapped buffer; handed back by a release closure in deinit).
/// Plane pointers stay valid for the frame's lifetime. Immutable once made, so it may cross threads.
package final class VideoFrame: @unchecked Sendable {  // immutable after init; its memory is released once, in deinit
    package let format: PixelFormat
    package let size: Size
    /// The matrix and range the frame's Y'CbCr samples use (ignored for RGB formats).
    package let colorSpace: YUVColorSpace
    /// Presentation time.
    package let pts: MediaTime
    /// How long the frame is shown, when known.
    package let duration: MediaTime?
    /// Each plane's first byte and the bytes from one row to the next, in `format.planes` order.
    package let planes: [(base: UnsafeRawPointer, rowBytes: Int)]

    private enum Backing {
        case avFrame(UnsafeMutablePointer<AVFrame>)
        case memory(UnsafeMutableRawPointer, FrameMemoryRecycler?)
        case lent(@Sendable () -> Void)
    }
    private let backing: Backing

    /// Takes ownership of `frame` (it is freed with `av_frame_free` when this object goes away).
    /// `frame.format` must be the libavutil twin of `format`.
    init(adopting frame: UnsafeMutablePointer<AVFrame>, format: PixelFormat, colorSpace: YUVColorSpace,
         pts: MediaTime, duration: MediaTime?) {
        self.format = format
        self.size = Size(width: Int(frame.pointee.width), height: Int(frame.pointee.height))
        self.colorSpace = colorSpace
        self.pts = pts
        self.duration = duration
        self.planes = (0..<format.planes.count).map { index in
            let plane = frame.plane(index)
            return (UnsafeRawPointer(plane.data!), Int(plane.lineSize))
        }
        backing = .avFrame(frame)
    }

    /// A frame over `memory` holding tightly packed planes (rows of `minimumRowBytes`, planes one after
    /// the other). The frame owns `memory`: it hands it back to `recycler`, or deallocates it when nil.
    init(packedMemory memory: UnsafeMutableRawPointer, recycler: FrameMemoryRecycler?, format: PixelFormat,
         size: Size, colorSpace: YUVColorSpace, pts: MediaTime, duration: MediaTime?) {
        self.format = format
        self.size = size
        self.colorSpace = colorSpace
        self.pts = pts
        self.duration = duration
        var offset = 0
        var planes: [(base: UnsafeRawPointer, rowBytes: Int)] = []
        planes.reserveCapacity(format.planes.count)
        for plane in format.planes {
            let rowBytes = plane.minimumRowBytes(for: size.width)
            planes.append((UnsafeRawPointer(memory + offset), rowBytes))
            offset += rowBytes * plane.height(for: size.height)
        }
        self.planes = planes
        backing = .memory(memory, recycler)
    }

    /// A frame over memory it does not own (a camera's mapped driver buffer): `planes` point into it and
    /// stay valid until `release` runs, once, when the frame goes away.
    init(lending planes: [(base: UnsafeRawPointer, rowBytes: Int)], format: PixelFormat, size: Size,
         colorSpace: YUVColorSpace, pts: MediaTime, duration: MediaTime?, release: @escaping @Sendable () -> Void) {
        self.format = format
        self.size = size
        self.colorSpace = colorSpace
        self.pts = pts
        self.duration = duration
        self.planes = planes
        backing = .lent(release)
    }

    /// A frame that owns newly allocated, zero-filled, tightly packed planes (see `packedBytes`).
    package convenience init(format: PixelFormat, size: Size, colorSpace: YUVColorSpace, pts: MediaTime,
                            duration: MediaTime? = nil) {
        let count = format.frameBytes(for: size)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 64)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: count)
        self.init(packedMemory: memory, recycler: nil, format: format, size: size, colorSpace: colorSpace,
                  pts: pts, duration: duration)
    }

    /// The same pixels at another time (a looped clip's frames continue its time line): the new frame
    /// keeps this one, and so its memory, alive.
    package func retimed(pts: MediaTime, duration: MediaTime? = nil) -> VideoFrame {
        VideoFrame(lending: planes, format: format, size: size, colorSpace: colorSpace, pts: pts,
                   duration: duration ?? self.duration, release: { withExtendedLifetime(self) {} })
    }

    deinit {
        switch backing {
        case .avFrame(let frame):
            var pointer: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&pointer)
        case .memory(let memory, let recycler):
            if let recycler { recycler.give(memory) } else { memory.deallocate() }
        case .lent(let release):
            release()
        }
    }

    /// Rows and used bytes per row of plane `index`.
    package func planeGeometry(_ index: Int) -> (rows: Int, usedRowBytes: Int) {
        let layout = format.planes[index]
        return (layout.height(for: size.height), layout.minimumRowBytes(for: size.width))
    }

    /// The frame's samples, tightly packed (`PixelFormat.frameBytes(for:)` bytes): what raw pipes carry.
    package func packedBytes() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: format.frameBytes(for: size))
        bytes.withUnsafeMutableBytes { copyPacked(into: $0.baseAddress!) }
        return bytes
    }

    /// Copies the samples tightly packed into `destination` (`format.frameBytes(for: size)` bytes).
    package func copyPacked(into destination: UnsafeMutableRawPointer) {
        var offset = 0
        for index in planes.indices {
            let (rows, used) = planeGeometry(index)
            copyRows(from: planes[index].base, rowBytes: planes[index].rowBytes, to: destination + offset,
                     rowBytes: used, usedRowBytes: used, rows: rows)
            offset += used * rows
        }
    }

    /// Copies the frame into a pooled buffer laid out per its `PackedFrameLayout` (which must have this
    /// frame's format and size): what the GPU would write, for paths without a GPU and for tests.
    package func copy(into buffer: PooledFrameBuffer) throws(InvalidRequest) {
        let layout = buffer.layout
        if format == .yuv420p, layout.format == .nv12, layout.size == size {
            copyRows(from: planes[0].base, rowBytes: planes[0].rowBytes, to: buffer.data,
                     rowBytes: layout.planes[0].rowBytes, usedRowBytes: size.width, rows: size.height)
            interleaveChroma(into: buffer.data + layout.planes[1].offset, rowBytes: layout.planes[1].rowBytes)
            return
        }
        guard layout.format == format, layout.size == size else {
            throw InvalidRequest("frame is \(format.rawValue) \(size), buffer is \(layout.format.rawValue) \(layout.size)")
        }
        for (index, plane) in layout.planes.enumerated() {
            copyRows(from: planes[index].base, rowBytes: planes[index].rowBytes, to: buffer.data + plane.offset,
                     rowBytes: plane.rowBytes, usedRowBytes: plane.usedRowBytes, rows: plane.rows)
        }
    }
}

extension VideoFrame {
    /// Writes a yuv420p frame's Cb and Cr planes as NV12's interleaved CbCr plane.
    fileprivate func interleaveChroma(into destination: UnsafeMutableRawPointer, rowBytes: Int) {
        let width = (size.width + 1) / 2, height = (size.height + 1) / 2
        for row in 0..<height {
            let cb = (planes[1].base + row * planes[1].rowBytes).assumingMemoryBound(to: UInt8.self)
            let cr = (planes[2].base + row * planes[2].rowBytes).assumingMemoryBound(to: UInt8.self)
            let out = (destination + row * rowBytes).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                out[2 * x] = cb[x]
                out[2 * x + 1] = cr[x]
            }
        }
    }
}

/// Copies `rows` rows of `usedRowBytes` between two pitches (one memcpy when both are tight).
func copyRows(from source: UnsafeRawPointer, rowBytes sourcePitch: Int, to destination: UnsafeMutableRawPointer,
              rowBytes destinationPitch: Int, usedRowBytes: Int, rows: Int) {
    if sourcePitch == usedRowBytes && destinationPitch == usedRowBytes {
        destination.copyMemory(from: source, byteCount: usedRowBytes * rows)
        return
    }
    for row in 0..<rows {
        (destination + row * destinationPitch).copyMemory(from: source + row * sourcePitch, byteCount: usedRowBytes)
    }
}

/// A thread-safe free list of equally sized memory blocks, so sources that fill frames they own do not
/// allocate per frame in the steady state. Keeps at most `maximumRetained` idle blocks.
final class FrameMemoryRecycler: Sendable {
    let byteCount: Int
    let maximumRetained: Int
    /// Idle blocks by address (an address is plain data: the list can sit in a `Mutex`; whoever takes one
    /// owns its memory).
    private let free = Mutex<[UInt]>([])

    init(byteCount: Int, maximumRetained: Int = 8) {
        self.byteCount = byteCount
        self.maximumRetained = maximumRetained
    }

    deinit {
        free.withLock { blocks in
            for block in blocks { UnsafeMutableRawPointer(bitPattern: block)?.deallocate() }
            blocks.removeAll()
        }
    }

    func take() -> UnsafeMutableRawPointer {
        if let block = free.withLock({ $0.popLast() }), let pointer = UnsafeMutableRawPointer(bitPattern: block) { return pointer }
        return UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
    }

    func give(_ pointer: UnsafeMutableRawPointer) {
        let kept = free.withLock { blocks -> Bool in
            guard blocks.count < maximumRetained else { return false }
            blocks.append(UInt(bitPattern: pointer))
            return true
        }
        if !kept { pointer.deallocate() }
    }
}
