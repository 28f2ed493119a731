import PrismCore

/// Frames a program hands to a run one by one (the C library, the GStreamer element, numpy arrays from
/// Python): a bounded queue between the caller's thread and the run's source thread.
///
/// `push` copies the frame and blocks while `capacity` frames wait, so a fast producer is held back as a
/// file is (frames are never dropped); `finish` ends the input. When the run ends first (an error, a frame
/// limit, the consumer gone) the feed is closed: a blocked `push` returns false and later ones do too.
/// Any thread may push, one at a time; `finish` and `close` may come from any thread.
public final class FrameFeed: Sendable {
    /// The frames' size, pixel format and nominal rate.
    public let format: RawVideoFormat
    /// The matrix and range of Y'CbCr frames; nil: limited range with the size's usual matrix (what a
    /// movie without tags is taken for).
    public let colorSpace: YUVColorSpace?
    /// What the timestamps given to `push` count (1/rate unless told otherwise).
    public let timeBase: Rational

    private struct State {
        var frames: [VideoFrame] = []
        var finished = false
        var closed = false
        var nextIndex: Int64 = 0
        var lastPTS: MediaTime?
    }
    private let state = Monitor(State())
    private let capacity: Int
    private let recycler: FrameMemoryRecycler

    /// A feed of `format` frames. `timeBase` nil: 1/rate, so frame N's timestamp is N.
    public init(format: RawVideoFormat, colorSpace: YUVColorSpace? = nil, timeBase: Rational? = nil,
                capacity: Int = 3) throws(InvalidRequest) {
        guard format.size.width > 0, format.size.height > 0 else { throw InvalidRequest("pushed frames need a size, not \(format.size)") }
        guard format.frameRate.num > 0, format.frameRate.den > 0 else {
            throw InvalidRequest("pushed frames need a positive frame rate, not \(format.frameRate)")
        }
        if let timeBase, timeBase.num <= 0 || timeBase.den <= 0 {
            throw InvalidRequest("pushed frames need a positive time base, not \(timeBase)")
        }
        if format.pixelFormat == .yuyv422 && format.size.width % 2 != 0 { throw InvalidRequest("yuyv422 frames need an even width") }
        self.format = format
        self.colorSpace = colorSpace
        self.timeBase = timeBase ?? Rational(format.frameRate.den, format.frameRate.num)
        self.capacity = max(1, capacity)
        recycler = FrameMemoryRecycler(byteCount: format.frameBytes, maximumRetained: self.capacity + 2)
    }

    /// One plane of a frame to push: its first byte and the bytes from one row to the next (at least the
    /// plane's packed row).
    public typealias Plane = (base: UnsafeRawPointer, rowBytes: Int)

    /// Copies one frame (`planes` in `format.pixelFormat.planes` order) into the feed, waiting while it is
    /// full. `pts` and `duration` count `timeBase`; `pts` nil: the frame after the last at the rate.
    /// Returns false once the run has ended (the frame is dropped). Throws for planes that do not fit the
    /// format, a timestamp not after the last one, or a push after `finish`.
    @discardableResult
    public func push(planes: [Plane], pts: Int64?, duration: Int64? = nil) throws(InvalidRequest) -> Bool {
        let layout = format.pixelFormat.planes
        guard planes.count == layout.count else {
            throw InvalidRequest("\(format.pixelFormat.rawValue) frames have \(layout.count) plane(s), not \(planes.count)")
        }
        for (index, plane) in planes.enumerated() where plane.rowBytes < layout[index].minimumRowBytes(for: format.size.width) {
            throw InvalidRequest("plane \(index): \(plane.rowBytes) bytes per row, less than the \(layout[index].minimumRowBytes(for: format.size.width)) "
                             + "a \(format.size.width)-pixel \(format.pixelFormat.rawValue) row needs")
        }
        if let duration, duration <= 0 { throw InvalidRequest("a frame's duration must be positive, not \(duration)") }
        let memory = recycler.take()
        var offset = 0
        for (index, plane) in planes.enumerated() {
            let used = layout[index].minimumRowBytes(for: format.size.width)
            let rows = layout[index].height(for: format.size.height)
            copyRows(from: plane.base, rowBytes: plane.rowBytes, to: memory + offset, rowBytes: used, usedRowBytes: used, rows: rows)
            offset += used * rows
        }
        let timeBase = timeBase
        let full = capacity
        let (frame, error): (VideoFrame?, InvalidRequest?) = state.wait(until: { $0.frames.count < full || $0.closed || $0.finished }) { state, _ in
            if state.closed { return (nil, nil) }
            if state.finished { return (nil, InvalidRequest("a frame was pushed after the end of the input")) }
            let time = MediaTime(value: pts ?? state.nextIndex, timeBase: timeBase)
            if let last = state.lastPTS, time <= last {
                return (nil, InvalidRequest("frame timestamps must increase: \(time.seconds) s after \(last.seconds) s"))
            }
            let frame = VideoFrame(packedMemory: memory, recycler: recycler, format: format.pixelFormat, size: format.size,
                                   colorSpace: colorSpace ?? Self.defaultColorSpace(format.size),
                                   pts: time, duration: duration.map { MediaTime(value: $0, timeBase: timeBase) })
            state.frames.append(frame)
            state.lastPTS = time
            state.nextIndex = (pts ?? state.nextIndex) + 1
            return (frame, nil)
        }
        if frame == nil { recycler.give(memory) }
        if let error { throw error }
        return frame != nil
    }

    /// The end of the input: the run gets the frames still waiting, then ends. Pushing afterwards throws.
    public func finish() { state.withLock { $0.finished = true } }

    /// The run's end (or no run at all): waiting frames are dropped and pushes return false from now on.
    public func close() { state.withLock { $0.closed = true; $0.frames.removeAll() } }

    /// The next frame, waiting for one; nil after `finish` once the waiting frames are taken, or once closed.
    func take() -> VideoFrame? {
        state.wait(until: { !$0.frames.isEmpty || $0.finished || $0.closed }) { state, _ in
            state.closed || state.frames.isEmpty ? nil : state.frames.removeFirst()
        }
    }

    static func defaultColorSpace(_ size: Size) -> YUVColorSpace { YUVColorSpace(matrix: .defaultFor(size), range: .limited) }
}

/// A `FrameFeed` as a run's source: not live (the producer waits, nothing is dropped). Closing the feed
/// when the source goes (the run ended, or never started) wakes a producer blocked in `push`.
package final class FrameFeedSource: MediaSource {
    package let info: SourceInfo
    private let feed: FrameFeed

    package init(feed: FrameFeed) {
        self.feed = feed
        let format = feed.format
        info = SourceInfo(size: format.size, pixelFormat: format.pixelFormat, frameRate: format.frameRate,
                          timeBase: feed.timeBase, duration: nil, estimatedFrameCount: nil, isLive: false,
                          colorSpace: feed.colorSpace ?? FrameFeed.defaultColorSpace(format.size),
                          summary: "pushed frames, \(format)")
    }

    deinit { feed.close() }

    package func next() throws -> SourceEvent? { feed.take().map { .video($0) } }
}

extension FrameFeed: Equatable {
    /// The same feed (a feed is a channel, not a value).
    public static func == (lhs: FrameFeed, rhs: FrameFeed) -> Bool { lhs === rhs }
}
