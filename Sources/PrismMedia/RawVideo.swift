import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// The description of raw frames on a pipe: `WxH:PIXFMT:RATE`, e.g. `1280x720:yuv420p:30` or
/// `640x480:rgba:30000/1001`. Frames are tightly packed planes (`PixelFormat.frameBytes(for:)` each).
public struct RawVideoFormat: Hashable, Sendable, CustomStringConvertible {
    /// Frame size in pixels.
    public var size: Size
    /// The pixel format of each tightly packed frame.
    public var pixelFormat: PixelFormat
    /// Frames per second.
    public var frameRate: Rational

    /// Raw frames of `size` and `pixelFormat` at `frameRate` (not validated: see `init(parsing:)`).
    public init(size: Size, pixelFormat: PixelFormat, frameRate: Rational) {
        self.size = size
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
    }

    /// Parses `WxH:PIXFMT:RATE`; each bad part gets its own message.
    public init(parsing input: String) throws(InvalidRequest) {
        // Messages quote the text: control characters are escaped so an error stays one line.
        let text = input.unicodeScalars.contains { $0.properties.generalCategory == .control }
            ? String(input.debugDescription.dropFirst().dropLast()) : input
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else {
            throw InvalidRequest("raw video format '\(text)': expected WxH:PIXFMT:RATE, e.g. 1280x720:yuv420p:30")
        }
        guard let size = Size(parsing: parts[0]) else {
            throw InvalidRequest("raw video format '\(text)': bad size '\(parts[0])' (expected WxH, e.g. 1280x720)")
        }
        guard let format = PixelFormat(name: parts[1]) else {
            let known = PixelFormat.allCases.map(\.rawValue).joined(separator: ", ")
            throw InvalidRequest("raw video format '\(text)': unknown pixel format '\(parts[1])' (supported: \(known))")
        }
        guard let rate = Rational(frameRate: parts[2]) else {
            throw InvalidRequest("raw video format '\(text)': bad frame rate '\(parts[2])' (from 0.001 to 1000, e.g. 30, 29.97 or 30000/1001)")
        }
        if format == .yuyv422 && size.width % 2 != 0 {
            throw InvalidRequest("raw video format '\(text)': yuyv422 needs an even width")
        }
        self.init(size: size, pixelFormat: format, frameRate: rate)
    }

    /// Bytes of one frame.
    public var frameBytes: Int { pixelFormat.frameBytes(for: size) }
    public var description: String { "\(size):\(pixelFormat.rawValue):\(frameRate)" }
}

/// Raw frames read from a file descriptor (usually stdin, fd 0), described by a `RawVideoFormat`.
/// A clean end of file between frames ends the stream; a short last frame is an error. Timestamps count
/// frames in the time base 1/rate. The descriptor is not closed. Use from one thread at a time.
package final class RawVideoSource: MediaSource {
    package let info: SourceInfo
    package let format: RawVideoFormat
    private let fd: Int32
    private let recycler: FrameMemoryRecycler
    private var index: Int64 = 0
    private var ended = false

    package init(fileDescriptor: Int32, format: RawVideoFormat) {
        self.fd = fileDescriptor
        self.format = format
        recycler = FrameMemoryRecycler(byteCount: format.frameBytes)
        let timeBase = Rational(format.frameRate.den, format.frameRate.num)
        info = SourceInfo(size: format.size, pixelFormat: format.pixelFormat, frameRate: format.frameRate,
                          timeBase: timeBase, duration: nil, estimatedFrameCount: nil, isLive: false,
                          audio: nil, colorSpace: nil, summary: "raw \(format) from fd \(fileDescriptor)")
    }

    /// Reads one frame (`read(2)`, retried on EINTR).
    package func next() throws -> SourceEvent? {
        if ended { return nil }
        let count = format.frameBytes
        let memory = recycler.take()
        var filled = 0
        while filled < count {
            let result = retryingEINTR { read(fd, memory + filled, count - filled) }
            if result < 0 {
                let code = errno
                recycler.give(memory)
                throw SystemError("read", code: code, context: "raw video input")
            }
            if result == 0 { break }
            filled += result
        }
        if filled < count {
            recycler.give(memory)
            ended = true
            if filled == 0 { return nil }
            throw AVError("raw video input: last frame is short: \(filled) of \(count) bytes (is the format \(format) right?)")
        }
        let timeBase = info.timeBase
        let frame = VideoFrame(packedMemory: memory, recycler: recycler, format: format.pixelFormat, size: format.size,
                               colorSpace: info.colorSpace, pts: MediaTime(value: index, timeBase: timeBase),
                               duration: MediaTime(value: 1, timeBase: timeBase))
        index += 1
        return .video(frame)
    }
}

/// Writes tightly packed raw frames to a file descriptor (usually stdout, fd 1).
///
/// Frames come from pooled buffers laid out per `PackedFrameLayout` (their rows are copied into one
/// staging buffer and written with one `write(2)` loop) or from `VideoFrame`s. When the reader goes away
/// (EPIPE) the sink reports `isClosed` and `write` returns false: a clean end, not a crash. The writes run
/// with SIGPIPE blocked on the writing thread (`withoutSIGPIPE`), so a closed pipe is EPIPE whatever the
/// process does with SIGPIPE, which the sink leaves alone. The descriptor is not closed. Use from one
/// thread at a time.
package final class RawVideoSink {
    package let format: PixelFormat
    private let fd: Int32
    private var staging: UnsafeMutableRawPointer?
    private var stagingBytes = 0
    /// Linux's IOV_MAX (not exported to Swift): the most pieces one writev takes.
    static let maxPiecesPerCall = 1024
    /// The pieces of the frame being written (kept to avoid allocating per frame).
    private var pieces: [iovec] = []
    package private(set) var isClosed = false
    package private(set) var framesWritten = 0

    package init(fileDescriptor: Int32, format: PixelFormat) {
        self.fd = fileDescriptor
        self.format = format
    }

    deinit { staging?.deallocate() }

    private func stagingBuffer(_ bytes: Int) -> UnsafeMutableRawPointer {
        if let staging, stagingBytes >= bytes { return staging }
        staging?.deallocate()
        staging = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        stagingBytes = bytes
        return staging!
    }

    /// Writes one frame from a pooled buffer (its layout's format must be this sink's).
    /// Returns false once the reader has gone (EPIPE); throws on other write errors.
    @discardableResult
    package func write(_ buffer: PooledFrameBuffer) throws -> Bool {
        let layout = buffer.layout
        guard layout.format == format else {
            throw InvalidRequest("raw output: buffer is \(layout.format.rawValue), sink writes \(format.rawValue)")
        }
        if isClosed { return false }
        // Straight from the pooled buffer, gathered by writev (no copy of the frame in user space): a plane
        // without row padding is one piece, a padded one (yuv420p's chroma, side by side) a piece per row.
        pieces.removeAll(keepingCapacity: true)
        for plane in layout.planes {
            let base = UnsafeRawPointer(buffer.data + plane.offset)
            if plane.rowBytes == plane.usedRowBytes {
                pieces.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: plane.usedRowBytes * plane.rows))
            } else {
                for row in 0..<plane.rows {
                    pieces.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: base + row * plane.rowBytes),
                                        iov_len: plane.usedRowBytes))
                }
            }
        }
        return try writeAll(&pieces)
    }

    /// Writes one decoded frame (its format must be this sink's).
    @discardableResult
    package func write(_ frame: VideoFrame) throws -> Bool {
        guard frame.format == format else {
            throw InvalidRequest("raw output: frame is \(frame.format.rawValue), sink writes \(format.rawValue)")
        }
        if isClosed { return false }
        let bytes = format.frameBytes(for: frame.size)
        let out = stagingBuffer(bytes)
        frame.copyPacked(into: out)
        pieces.removeAll(keepingCapacity: true)
        pieces.append(iovec(iov_base: out, iov_len: bytes))
        return try writeAll(&pieces)
    }

    /// Writes `vectors` in order as one frame (writev, at most IOV_MAX pieces a call, resumed after short
    /// writes; the pieces are used up).
    private func writeAll(_ vectors: inout [iovec]) throws -> Bool {
        try withoutSIGPIPE { try writePieces(&vectors) }
    }

    private func writePieces(_ vectors: inout [iovec]) throws -> Bool {
        var first = 0
        while first < vectors.count {
            let result = retryingEINTR {
                vectors.withUnsafeBufferPointer {
                    Glibc.writev(fd, $0.baseAddress! + first, Int32(min(vectors.count - first, Self.maxPiecesPerCall)))
                }
            }
            if result < 0 {
                if errno == EPIPE { isClosed = true; return false }
                throw SystemError("write", code: errno, context: "raw video output")
            }
            Self.skip(result, of: &vectors, first: &first)
        }
        framesWritten += 1
        return true
    }

    /// After a write of `count` bytes from `vectors[first...]`: moves `first` past the pieces that went out
    /// whole and the next one's start past what went out of it.
    static func skip(_ count: Int, of vectors: inout [iovec], first: inout Int) {
        var left = count
        while first < vectors.count, left >= vectors[first].iov_len {
            left -= vectors[first].iov_len
            first += 1
        }
        if left > 0 {
            vectors[first].iov_base += left
            vectors[first].iov_len -= left
        }
    }
}
