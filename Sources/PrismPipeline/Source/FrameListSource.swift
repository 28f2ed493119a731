import PrismCore
import PrismMedia

/// Frames held in memory as an engine source: one still image (`prism render`, a photo's faces), or
/// frames decoded or made up front and played `count` times over (the benchmarks, which must not time a
/// decoder). Frame `i` is `frames[i % frames.count]` at `i` frame steps.
package final class FrameListSource: MediaSource {
    package let info: SourceInfo
    private let frames: [VideoFrame]
    private let count: Int
    private var index = 0

    /// - Parameters:
    ///   - frames: all of one format and size.
    ///   - count: frames to give (default: each once).
    ///   - frameRate: the rate the frames are stamped at; nil (a still) stamps them 1/1000 s apart and
    ///     declares no rate, so `FrameContext.frameRate` is 0 as for any rate-less input.
    package init(frames: [VideoFrame], count: Int? = nil, frameRate: Rational? = nil, summary: String? = nil) throws {
        guard let first = frames.first else { throw InvalidRequest("a frame list needs at least one frame") }
        guard frames.allSatisfy({ $0.format == first.format && $0.size == first.size }) else {
            throw InvalidRequest("a frame list's frames must share one format and size")
        }
        self.frames = frames
        self.count = count ?? frames.count
        let timeBase = frameRate.map { Rational($0.den, $0.num) } ?? Rational(1, 1000)
        info = SourceInfo(size: first.size, pixelFormat: first.format, frameRate: frameRate, timeBase: timeBase,
                          duration: nil, estimatedFrameCount: self.count, isLive: false, colorSpace: first.colorSpace,
                          summary: summary ?? "\(self.count) frame(s) of \(first.size) \(first.format.rawValue) from memory")
    }

    /// One still image as a one-frame source (full-range, the size's default matrix: what a photo is).
    package convenience init(image: RGBAImage, count: Int = 1) throws {
        let frame = VideoFrame(format: .rgba, size: image.size,
                               colorSpace: YUVColorSpace(matrix: .defaultFor(image.size), range: .full), pts: .zero)
        image.pixels.withUnsafeBytes { pixels in
            // The frame owns its freshly allocated, tightly packed plane; nothing else sees it yet.
            UnsafeMutableRawPointer(mutating: frame.planes[0].base).copyMemory(from: pixels.baseAddress!, byteCount: pixels.count)
        }
        try self.init(frames: [frame], count: count, summary: "still image \(image.size)")
    }

    package func next() throws -> SourceEvent? {
        guard index < count else { return nil }
        defer { index += 1 }
        let frame = frames[index % frames.count]
        let step = MediaTime(value: 1, timeBase: info.timeBase)
        if index == 0 && frame.pts == .zero { return .video(frame) }
        return .video(frame.retimed(pts: MediaTime(value: Int64(index), timeBase: info.timeBase), duration: step))
    }
}
