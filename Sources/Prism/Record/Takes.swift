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

    /// The next free path, stamped with `date` (local time, as people read their clocks).
    func next(at date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let stem = prefix + "-" + formatter.string(from: date)
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
final class TakeSink: FrameSink {
    struct Events: Sendable {
        var framesWritten: @Sendable (Int) -> Void = { _ in }
        /// Finished and playable: the path, frames and bytes.
        var finished: @Sendable (String, Int, Int64) -> Void = { _, _, _ in }
        /// Ended because the input changed size (the note says so), finished and playable.
        var ended: @Sendable (String) -> Void = { _ in }
        var failed: @Sendable (String) -> Void = { _ in }
    }

    let movie: MovieSink
    private let events: Events
    let delivery: SinkDelivery
    let bufferCount: Int
    /// Set (on its own thread) when the take finished itself; read on the GPU thread.
    private let endedFlag = Locked(false)

    init(path: String, settings: VideoEncoderSettings, limits: RecordingLimits = RecordingLimits(),
         delivery: SinkDelivery = .everyFrame, bufferCount: Int = 16, events: Events) {
        movie = MovieSink(path: path, settings: settings, limits: limits, live: true)
        self.events = events
        self.delivery = delivery
        self.bufferCount = bufferCount
    }

    var path: String { movie.path }
    var ended: Bool { endedFlag.withLock { $0 } }
    var pixelFormat: PixelFormat { movie.pixelFormat }
    var acceptsAudio: Bool { true }
    var bytesWritten: Int64? { movie.bytesWritten }
    var stopReason: StopReason { movie.stopReason }

    func open(_ stream: SinkStream) throws { try movie.open(stream) }

    func write(_ frame: ProcessedFrame) throws -> Bool {
        let more = try movie.write(frame)
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
            events.finished(movie.path, movie.framesWritten, movie.bytesWritten ?? 0)
        } catch {
            events.failed("\(error)")
            throw error
        }
    }

    func abort() { movie.abort() }

    func salvage() -> String? {
        let kept = movie.salvage()
        if let kept { events.finished(kept, movie.framesWritten, movie.bytesWritten ?? 0) }
        return kept
    }
}
