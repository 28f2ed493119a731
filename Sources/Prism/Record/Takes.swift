import Foundation
import PrismCore
import PrismMedia
import PrismPipeline

/// Names for takes in a directory: `PREFIX-YYYYMMDD-HHMMSS.EXT`, then `-2`, `-3`… for more takes in the
/// same second, never the name of a file that exists or of a take this process already named.
final class TakeNames: Sendable {
    let directory: String
    let prefix: String
    let fileExtension: String
    private let used = Locked(Set<String>())

    init(directory: String, prefix: String, fileExtension: String = "mp4") {
        self.directory = directory
        self.prefix = prefix
        self.fileExtension = fileExtension
    }

    /// `YYYYMMDD-HHMMSS` in local time, as people read their clocks (takes, the dev page's snapshots).
    static func stamp(_ date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return formatter.string(from: date)
    }

    /// The next free path, stamped with `date`.
    func next(at date: Date = Date()) -> String {
        let stem = prefix + "-" + Self.stamp(date)
        return used.withLock { used in
            var candidate = stem
            var counter = 1
            while used.contains(candidate)
                    || FileManager.default.fileExists(atPath: path(candidate))
                    || FileManager.default.fileExists(atPath: directory + "/.\(candidate).\(fileExtension)") {
                counter += 1
                candidate = stem + "-\(counter)"
            }
            used.insert(candidate)
            return path(candidate)
        }
    }

    private func path(_ stem: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent(stem + "." + fileExtension).path
    }
}

/// One take: a live movie (fragmented, kept on failure) that says when it is finished, could not follow
/// the input to another size, or failed. `prism record` and `prism dev` record through it.
///
/// With a segment size the take rolls over by itself: the movie's byte budget is the segment size, and
/// the frame whose packet would pass it becomes the first frame of the next movie (the live encoder gives
/// each frame's packet back at once, so that packet is exactly this frame's). No frame is lost between
/// segments and none ends over the size, whatever the content.
final class TakeSink: FrameSink {
    struct Events: Sendable {
        var framesWritten: @Sendable (Int) -> Void = { _ in }
        /// A segment began (after the first): its path.
        var began: @Sendable (String) -> Void = { _ in }
        /// Finished and playable: the path, frames and bytes.
        var finished: @Sendable (String, Int, Int64) -> Void = { _, _, _ in }
        /// Ended because the input changed size (the note says so), finished and playable.
        var ended: @Sendable (String) -> Void = { _ in }
        var failed: @Sendable (String) -> Void = { _ in }
    }

    /// Rolling over by size: the segment's bytes and where the next segment goes.
    struct Segments: Sendable {
        var bytes: Int64
        var names: TakeNames
    }

    /// The movie being written; replaced (on the output thread) when a segment is full.
    private(set) var movie: MovieSink
    private let settings: VideoEncoderSettings
    private let limits: RecordingLimits
    private let segments: Segments?
    private var stream: SinkStream?
    private let events: Events
    let delivery: SinkDelivery
    let bufferCount: Int
    /// Set (on its own thread) when the take finished itself; read on the GPU thread.
    private let endedFlag = Locked(false)

    init(path: String, settings: VideoEncoderSettings, limits: RecordingLimits = RecordingLimits(), segments: Segments? = nil,
         delivery: SinkDelivery = .everyFrame, bufferCount: Int = 16, events: Events) {
        self.settings = settings
        self.limits = limits
        self.segments = segments
        movie = Self.movie(path: path, settings: settings, limits: limits, segments: segments)
        self.events = events
        self.delivery = delivery
        self.bufferCount = bufferCount
    }

    /// A segment's movie: the segment size is its size limit unless `--max-size` is smaller.
    private static func movie(path: String, settings: VideoEncoderSettings, limits: RecordingLimits, segments: Segments?) -> MovieSink {
        var limits = limits
        if let bytes = segments?.bytes { limits.maxBytes = min(bytes, limits.maxBytes ?? bytes) }
        // Its name was chosen free; nothing that appears there while it records is followed or replaced.
        return MovieSink(path: path, settings: settings, limits: limits, live: true, newFileOnly: true)
    }

    /// Whether the movie stopped at the segment's size rather than at `--max-size` or the disk's floor.
    private var segmentFull: Bool {
        guard let segments, movie.stopReason == .sizeLimit else { return false }
        return limits.maxBytes.map { segments.bytes < $0 } ?? true
    }

    var path: String { movie.path }
    var ended: Bool { endedFlag.withLock { $0 } }
    var pixelFormat: PixelFormat { movie.pixelFormat }
    var acceptsAudio: Bool { true }
    var bytesWritten: Int64? { movie.bytesWritten }
    var stopReason: StopReason { movie.stopReason }

    func open(_ stream: SinkStream) throws {
        self.stream = stream
        try movie.open(stream)
    }

    func write(_ frame: ProcessedFrame) throws -> Bool {
        var more = try movie.write(frame)
        if !more, segmentFull, let segments, let stream {
            // The refused frame opens the next segment.
            try finish()
            movie = Self.movie(path: segments.names.next(), settings: settings, limits: limits, segments: segments)
            try movie.open(stream)
            events.began(movie.path)
            more = try movie.write(frame)
            if !more, segmentFull {
                throw UsageError("--segment-size \(ByteCount.text(segments.bytes)) is smaller than one frame of this take")
            }
        }
        events.framesWritten(movie.framesWritten)
        return more
    }

    func write(audio packet: AudioPacket) throws { try movie.write(audio: packet) }
    func write(pcm chunk: AudioChunk, pts: MediaTime) throws { try movie.write(pcm: chunk, pts: pts) }

    func reopen(_ stream: SinkStream) throws -> Bool {
        guard try !movie.reopen(stream) else { return true }
        let recorded = movie.writer?.video.size.description ?? "?"
        events.ended("recording stopped: the camera now delivers \(stream.source.size) and the recording is "
                     + "\(recorded); saved \(movie.path)")
        endedFlag.withLock { $0 = true }
        return false
    }

    func finish() throws {
        do {
            try movie.finish()
            events.finished(movie.writtenPath, movie.framesInOutput ?? movie.framesWritten, movie.bytesWritten ?? 0)
        } catch {
            events.failed("\(error)")
            throw error
        }
    }

    func abort() { movie.abort() }

    func salvage() -> String? {
        let kept = movie.salvage()
        if let kept { events.finished(kept, movie.framesInOutput ?? movie.framesWritten, movie.bytesWritten ?? 0) }
        return kept
    }
}
