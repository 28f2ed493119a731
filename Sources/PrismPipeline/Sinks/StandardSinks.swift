import Foundation
import PrismCore
import PrismMedia
import Synchronization

/// Limits that end a recording cleanly (AVCaptureMovieFileOutput's `maxRecordedFileSize` and
/// `minFreeDiskSpaceLimit`); `--duration` is the engine's.
public struct RecordingLimits: Sendable {
    /// Stop before the movie grows past this many bytes.
    public var maxBytes: Int64?
    /// Stop when the output's file system has no more than this many bytes free.
    public var minFreeBytes: Int64?

    /// Limits; nil leaves that limit off.
    public init(maxBytes: Int64? = nil, minFreeBytes: Int64? = nil) {
        self.maxBytes = maxBytes
        self.minFreeBytes = minFreeBytes
    }

    /// Bytes free to unprivileged writers on the file system holding `path` (`statvfs`); nil if unknown.
    public static func freeBytes(near path: String) -> Int64? {
        var directory = (path as NSString).deletingLastPathComponent
        if directory.isEmpty { directory = "." }
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}

/// Encodes frames into a movie (`MovieWriter`): a file (temporary name, renamed when finished), a pipe, a
/// network stream or an HLS/DASH playlist, with the source's audio copied or the captured sound encoded as AAC.
///
/// A network output may lose its server mid-run. Its `FailurePolicy` says what then: fail the run, or
/// reconnect with back-off (a new stream started on the next frame after it connects) and, when that does
/// not work within the policy's time, give up — alone, while the other outputs go on, or failing the run
/// when it was the only one. Meanwhile a stream that takes the newest frames skips them (counted); the only
/// output of a run that waits for its outputs (a file's frames) holds the run until it is back, so nothing
/// is lost. A run that ends while its only output is still down fails: nothing it could say would be true.
public final class MovieSink: FrameSink {
    /// What becomes of the run when this output fails after it started.
    public enum FailurePolicy: Sendable, Equatable {
        /// The run fails (files: nothing is left; live: what was recorded is kept).
        case failsRun
        /// Reconnect as `policy` says (the network inputs' back-off: 0.5 s, then twice as long each time, at
        /// most 8 s apart, for 30 s); then give up: `alone` drops this output while the others go on,
        /// otherwise the run fails.
        case reconnects(ReconnectPolicy, alone: Bool)
    }

    /// The movie's final path or URL; a file appears there when it is finished.
    public let path: String
    /// The video encoder and its options.
    public let settings: VideoEncoderSettings
    /// Size and free-space limits that end the recording cleanly.
    public let limits: RecordingLimits
    /// The container and the kind of output (file, pipe, network, playlist); nil: from `path` at `open`.
    public let destination: MovieDestination?
    /// How an HLS or DASH output is cut and kept.
    public let playlist: PlaylistSettings
    /// Every frame in order, or only the newest it keeps up with (a network output beside others, so a
    /// slow link never holds them back).
    public let delivery: SinkDelivery
    public let failurePolicy: FailurePolicy
    /// The writer, from `open` on; nil before (and while a lost stream is reconnecting).
    package private(set) var writer: MovieWriter?
    /// Video frames the encoder took.
    public private(set) var framesWritten = 0
    /// Which limit stopped the movie, after `write` returned false.
    public private(set) var stopReason = StopReason.outputClosed
    /// The file's size when last seen (kept after `finish`, for the final report).
    private var lastBytes: Int64 = 0
    /// Told at once what happens to a stream (lost, reconnected, given up), besides `notes` at the end.
    private let say: (@Sendable (String) -> Void)?
    /// The stream the sink was opened for, to open a lost network stream again.
    private var stream: SinkStream?
    /// A lost stream, while it is down.
    private struct Outage {
        /// When it was lost and when the next attempt is due (CLOCK_MONOTONIC ns), the wait after that one.
        var since: UInt64
        var nextTry: UInt64
        var delay: Double
        var attempts = 0
        let error: String
        /// Frames not sent since it was lost.
        var skipped = 0
    }
    private var outage: Outage?
    /// The last outage and when it ended: a stream lost again soon after it came back (a server that takes
    /// the connection and drops it) continues that outage, its clock and back-off, instead of starting anew.
    private var lastOutage: (outage: Outage, ended: UInt64)?
    /// Asked while the run waits for a lost stream: true once the run is stopped or failed (set by the engine).
    public var cancellation: (@Sendable () -> Bool)?
    /// Given up on (its frames are no longer read back for it).
    private let abandoned = Atomic<Bool>(false)
    /// Video packets in writers before the current one (a stream that reconnected).
    private var packetsBefore = 0
    /// What was not said at once (no `say`): a stream lost, reconnected, given up.
    private var events: [String] = []

    /// The stream's events, and the frames it skipped to keep up with the others (a network output).
    public func notes(skipped: Int) -> [String] {
        events + (skipped > 0 ? ["\(path): \(skipped) frame(s) skipped to keep up (it fell behind the others)"] : [])
    }

    /// Written so a killed process or a full disk still leaves a playable file (`MovieWriter`'s `fragmented`).
    public let live: Bool
    /// A new file only (a take Prism named): never written over what is or appears at `path`
    /// (`MovieWriter`'s `newFileOnly`); `writtenPath` says where it ended up.
    public let newFileOnly: Bool

    /// A sink writing `path` with `settings`; nothing is opened until the engine calls `open`.
    public init(path: String, settings: VideoEncoderSettings, limits: RecordingLimits = RecordingLimits(),
                live: Bool = false, destination: MovieDestination? = nil, playlist: PlaylistSettings = PlaylistSettings(),
                delivery: SinkDelivery = .everyFrame, failurePolicy: FailurePolicy = .failsRun,
                newFileOnly: Bool = false, say: (@Sendable (String) -> Void)? = nil) {
        self.path = path
        self.newFileOnly = newFileOnly
        self.settings = settings
        self.limits = limits
        self.live = live
        self.destination = destination
        self.playlist = playlist
        self.delivery = delivery
        self.failurePolicy = failurePolicy
        self.say = say
    }

    /// The encoder's input format (`VideoEncoderSettings.pixelFormat`).
    public var pixelFormat: PixelFormat { settings.pixelFormat }
    /// Where the finished movie is: `path` (a symlink's target), or for a new file only the name it got.
    public var writtenPath: String { writer?.writtenPath ?? path }
    /// A movie takes the source's audio or the captured sound.
    public var acceptsAudio: Bool { true }
    /// The file's size in bytes when last seen.
    public var bytesWritten: Int64? { lastBytes }
    /// A stream given up on takes no more frames (none are read back for it).
    public func wants(frameIndex: Int) -> Bool { !abandoned.load(ordering: .relaxed) }

    /// Recordings a killed earlier run of this output left, recovered next to it (`MovieWriter`).
    public var recoveredLeftovers: [OutputTarget.Recovered] { writer?.recoveredLeftovers ?? [] }

    /// Opens the movie writer for the stream's size, colours and rate, with its audio or captured sound.
    public func open(_ stream: SinkStream) throws {
        self.stream = stream
        writer = try makeWriter(for: stream)
    }

    private func makeWriter(for stream: SinkStream) throws -> MovieWriter {
        var video = VideoStreamConfig(source: stream.source, size: stream.layout.size, color: stream.color)
        if let rate = stream.frameRate { video.frameRate = rate }
        let writer = try MovieWriter(path: path, video: video, settings: settings,
                                     audio: stream.pcm == nil ? stream.audio : nil, pcm: stream.pcm, fragmented: live,
                                     destination: destination, playlist: playlist, newFileOnly: newFileOnly)
        writer.byteBudget = limits.maxBytes
        return writer
    }

    /// Encodes the frame; false once a size or free-space limit is reached (see `stopReason`). A stream
    /// lost while sending it: the only output waits and sends it on the new stream (`holdsRunWhileDown`).
    public func write(_ frame: ProcessedFrame) throws -> Bool {
        while true {
            guard let writer = try connectedWriter() else { return true }
            if let floor = limits.minFreeBytes, framesWritten % 15 == 0 { refreshFreeSpaceBudget(writer, floor: floor) }
            do {
                if try writer.writeVideo(frame.buffer, pts: frame.pts, duration: frame.duration) { framesWritten += 1 }
            } catch {
                try lost(error)
                if holdsRunWhileDown { continue }
                outage?.skipped += 1
                return true
            }
            lastBytes = writer.bytesWritten
            return !noteBudget(writer)
        }
    }

    /// The run's only output, taking every frame: nothing to keep up with, so a lost stream holds the run
    /// until it is back (or given up) rather than skipping frames.
    private var holdsRunWhileDown: Bool {
        guard case .reconnects(_, let alone) = failurePolicy else { return false }
        return !alone && delivery == .everyFrame
    }

    /// The writer to send to: the open one, or a lost stream opened again when its next attempt is due;
    /// nil while it is down (the frame is skipped and counted). The only output waits for the attempts
    /// instead (`holdsRunWhileDown`), until the stream is back, given up, or the run stopped.
    private func connectedWriter() throws -> MovieWriter? {
        if let writer { return writer }
        guard outage != nil, !abandoned.load(ordering: .relaxed) else { return nil }
        while holdsRunWhileDown, let down = outage, cancellation?() != true {
            let now = DispatchTime.now().uptimeNanoseconds
            if now < down.nextTry {
                usleep(UInt32(min(50_000, (down.nextTry - now) / 1000)))
                continue
            }
            if let writer = try reconnect() { return writer }
        }
        guard outage != nil else { return nil }
        outage!.skipped += 1
        guard DispatchTime.now().uptimeNanoseconds >= outage!.nextTry else { return nil }
        return try reconnect()
    }

    /// One attempt to open the lost stream again: the writer, or nil (the next attempt is scheduled, or the
    /// stream given up alone); throws when it is given up and was the only output.
    private func reconnect() throws -> MovieWriter? {
        guard var down = outage, let stream else { return nil }
        do {
            let writer = try makeWriter(for: stream)
            self.writer = writer
            let now = DispatchTime.now().uptimeNanoseconds
            tell(String(format: "%@: reconnected after %.1f s (%d frame(s) not sent)", path, Double(now - down.since) / 1e9, down.skipped))
            lastOutage = (down, now)
            outage = nil
            return writer
        } catch {
            guard case .reconnects(let policy, let alone) = failurePolicy else { throw error }
            let now = DispatchTime.now().uptimeNanoseconds
            down.attempts += 1
            let elapsed = Double(now - down.since) / 1e9
            if elapsed >= policy.seconds ?? .infinity || down.attempts >= policy.attempts ?? .max {
                try giveUp(down.error, after: elapsed, alone: alone)
                return nil
            }
            down.nextTry = now + UInt64(down.delay * 1e9)
            down.delay = min(policy.maxDelay, down.delay * 2)
            outage = down
            return nil
        }
    }

    /// A write failed: a file fails the run; a stream that may reconnect starts its outage (or, lost again
    /// soon after it came back, continues the last one).
    private func lost(_ error: any Error) throws {
        guard case .reconnects(let policy, let alone) = failurePolicy else { throw error }
        writer?.abort()
        packetsBefore += writer?.videoPacketsMuxed ?? 0
        writer = nil
        guard policy.enabled, policy.seconds ?? 1 > 0 else {
            try giveUp("\(error)", after: 0, alone: alone)
            return
        }
        let now = DispatchTime.now().uptimeNanoseconds
        if let last = lastOutage, Double(now - last.ended) / 1e9 < policy.maxDelay {
            outage = last.outage
            let elapsed = Double(now - last.outage.since) / 1e9
            if elapsed >= policy.seconds ?? .infinity || last.outage.attempts >= policy.attempts ?? .max {
                try giveUp(last.outage.error, after: elapsed, alone: alone)
                return
            }
            outage!.nextTry = now + UInt64(last.outage.delay * 1e9)
            return
        }
        let meanwhile = alone ? " while the other outputs go on" : holdsRunWhileDown ? "; the run waits for it" : ""
        tell("\(error); it \(policy.summary)" + meanwhile)
        outage = Outage(since: now, nextTry: now + UInt64(policy.initialDelay * 1e9),
                        delay: min(policy.maxDelay, policy.initialDelay * 2), error: "\(error)")
    }

    private func giveUp(_ error: String, after seconds: Double, alone: Bool) throws {
        abandoned.store(true, ordering: .relaxed)
        let skipped = outage?.skipped ?? 0
        outage = nil
        guard alone else {
            throw MediaOutputError("\(path): the stream was lost and did not come back within \(Int(seconds)) s (\(error))")
        }
        tell("\(path): gave up after \(Int(seconds)) s without a connection (\(skipped) frame(s) not sent); the other outputs go on")
    }

    /// What happens to a stream is said once: at once to `say`, or else in the report's notes.
    private func tell(_ line: String) {
        if let say { say(line) } else { events.append(line) }
    }

    /// Whether the writer's budget was reached (then `stopReason` says which limit it was): the packet that
    /// did not fit, and what came after it, are not in the file, which ends within the limit.
    private func noteBudget(_ writer: MovieWriter) -> Bool {
        guard writer.budgetReached else { return false }
        stopReason = limits.maxBytes.map { writer.byteBudget == $0 } == true ? .sizeLimit : .freeSpaceLimit
        return true
    }

    /// Under `--min-free` the writer's budget is what the disk can still give above the floor: the
    /// file's bytes on disk plus the free space beyond the floor, less a margin for the file system's own
    /// blocks (allocation rounding, extents). Re-read every 15 frames (`statvfs` is cheap but not free;
    /// between reads the budget holds), so other writers on the disk are noticed too.
    private func refreshFreeSpaceBudget(_ writer: MovieWriter, floor: Int64) {
        guard let free = RecordingLimits.freeBytes(near: path) else { return }
        let margin: Int64 = 64 * 1024
        let budget = writer.bytesWritten + free - floor - margin
        writer.byteBudget = min(budget, limits.maxBytes ?? budget)
    }

    /// The frames the finished output holds (the frames given, less those a limit left out; a stream
    /// that reconnected: what every connection carried).
    public var framesInOutput: Int? {
        if let salvagedFrames { return salvagedFrames }
        guard let writer else { return packetsBefore }
        return packetsBefore + writer.videoPacketsMuxed
    }
    /// After a salvage (a full disk, a stalled camera): the frames the kept file holds, counted in it.
    private var salvagedFrames: Int?

    /// Copies the source's compressed audio packet into the movie (not while a stream is down).
    public func write(audio packet: AudioPacket) throws {
        do { try writer?.writeAudio(packet) } catch { try lost(error) }
    }

    /// Encodes captured sound at `pts` on the video's time line as AAC.
    public func write(pcm chunk: AudioChunk, pts: MediaTime) throws {
        do { try chunk.samples.withUnsafeBytes { try writer?.writeAudio(pcm: $0, pts: pts) } } catch { try lost(error) }
    }

    /// A movie keeps its size: it cannot follow the input to another one.
    public func reopen(_ stream: SinkStream) throws -> Bool { stream.layout.size == writer?.video.size }

    /// Flushes the encoder and finishes the output at `path`. The only output still down when the run
    /// ends fails it (nothing reached the server since the loss).
    public func finish() throws {
        if let down = outage {
            let line = "\(path): the stream was lost (\(down.error)) and was still down when the run ended "
                + "(\(down.skipped) frame(s) not sent)"
            guard case .reconnects(_, true) = failurePolicy else { throw MediaOutputError(line) }
            tell(line)
        }
        do {
            try writer?.finish()
        } catch let error where writer?.destination.isNetwork == true && failurePolicy != .failsRun {
            // The server went while the end was sent: what it received stands.
            tell("\(path): the stream's end was not delivered (\(error))")
        }
        // The frames the encoder still held may be what passed the limit.
        if let writer { _ = noteBudget(writer) }
        if let size = (try? FileManager.default.attributesOfItem(atPath: writtenPath))?[.size] as? Int64 { lastBytes = size }
    }

    /// Abandons the movie: the temporary file is deleted, an existing file at `path` left as it was.
    public func abort() { writer?.abort() }
    /// What was muxed is not what survived: the file was cut at its last whole fragment, so its frames and
    /// bytes are read from it.
    public func salvage() -> String? {
        guard writer?.salvage() == true else { return nil }
        guard writer?.destination.kind == .file else { return path }
        salvagedFrames = (try? MediaInspector.videoPacketCount(writtenPath)) ?? 0
        if let size = (try? FileManager.default.attributesOfItem(atPath: writtenPath))?[.size] as? Int64 { lastBytes = size }
        return writtenPath
    }
}

/// A movie output that failed in a way the run cannot go on from (a stream lost for good).
public struct MediaOutputError: PrismError {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Writes one frame as a PNG or JPEG still (by the path's extension): the last frame it was given, at its
/// own size (odd sizes too), written atomically when the run finishes.
public final class StillImageSink: FrameSink {
    /// Where the still is written; ends in .png, .jpg or .jpeg.
    public let path: String
    /// JPEG quality, 1...100 (ignored for PNG).
    public let jpegQuality: Int
    /// False: a new file only, never written through a link or over a file (`ImageFile.write(replacing:)`).
    public let replacing: Bool
    /// Where a still that cannot be written is told, instead of failing the run (a snapshot taken while it
    /// goes on); nil: `finish` throws.
    private let failed: (@Sendable (any Error) -> Void)?
    private var image: RGBAImage?

    /// A sink for `path`; throws a `InvalidRequest` unless its extension is .png, .jpg or .jpeg.
    public init(path: String, jpegQuality: Int = 90, replacing: Bool = true, failed: (@Sendable (any Error) -> Void)? = nil) throws {
        guard ImageFile.kind(forPath: path) != nil else {
            throw InvalidRequest("\(path): a still must end in .png, .jpg or .jpeg")
        }
        self.path = path
        self.jpegQuality = jpegQuality
        self.replacing = replacing
        self.failed = failed
    }

    /// Stills are made from RGBA frames (the file is written in `finish`).
    public var pixelFormat: PixelFormat { .rgba }

    /// Keeps the frame's pixels, replacing any earlier frame.
    public func write(_ frame: ProcessedFrame) throws -> Bool {
        image = frame.buffer.rgbaImage()
        return true
    }

    /// Writes the last frame given; throws when no frame came.
    public func finish() throws {
        do {
            guard let image else { throw InvalidRequest("\(path): no frame came to make the still from") }
            try ImageFile.write(image, to: path, jpegQuality: jpegQuality, replacing: replacing)
        } catch {
            guard let failed else { throw error }
            failed(error)
        }
    }
}

extension PooledFrameBuffer {
    /// The pixels of an RGBA buffer, row padding removed, box-downscaled by a whole factor so the width is
    /// at most `maxWidth` (previews).
    public func rgbaImage(maxWidth: Int? = nil) -> RGBAImage {
        let size = layout.size
        let plane = self.plane(0)
        let factor = maxWidth.map { max(1, (size.width + $0 - 1) / $0) } ?? 1
        if factor == 1 {
            var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
            pixels.withUnsafeMutableBytes { out in
                for y in 0..<size.height {
                    (out.baseAddress! + y * size.width * 4).copyMemory(from: plane.base + y * plane.rowBytes,
                                                                       byteCount: size.width * 4)
                }
            }
            return RGBAImage(size: size, pixels: pixels)
        }
        let width = size.width / factor, height = max(1, size.height / factor)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let source = plane.base.assumingMemoryBound(to: UInt8.self)
        let area = UInt32(factor * factor)
        pixels.withUnsafeMutableBufferPointer { out in
            for y in 0..<height {
                for x in 0..<width {
                    var sum = SIMD4<UInt32>(repeating: 0)
                    for dy in 0..<factor {
                        let row = source + (y * factor + dy) * plane.rowBytes + x * factor * 4
                        for dx in 0..<factor {
                            let p = row + dx * 4
                            sum &+= SIMD4(UInt32(p[0]), UInt32(p[1]), UInt32(p[2]), UInt32(p[3]))
                        }
                    }
                    let o = (y * width + x) * 4
                    out[o] = UInt8(sum.x / area)
                    out[o + 1] = UInt8(sum.y / area)
                    out[o + 2] = UInt8(sum.z / area)
                    out[o + 3] = UInt8(sum.w / area)
                }
            }
        }
        return RGBAImage(size: Size(width: width, height: height), pixels: pixels)
    }
}

/// Writes packed frames to a file descriptor, one after the other (`-o -`: raw frames on stdout).
public final class RawSink: FrameSink {
    /// The packed format written, frame after frame.
    public let pixelFormat: PixelFormat
    private let output: RawVideoSink

    /// A sink writing `format` frames to `fileDescriptor`, which it does not close; a reader that goes away ends the run
    /// cleanly (EPIPE), without SIGPIPE, and the process's handling of SIGPIPE is left as it is.
    public init(fileDescriptor: Int32, format: PixelFormat) {
        pixelFormat = format
        output = RawVideoSink(fileDescriptor: fileDescriptor, format: format)
    }

    /// False once the reader has gone (EPIPE): the run ends cleanly.
    public func write(_ frame: ProcessedFrame) throws -> Bool { try output.write(frame.buffer) }
}

/// Reads every frame back and drops it: the whole GPU path without an output (what benchmarks compare
/// with FFmpeg's `-f null`).
public final class DiscardSink: FrameSink {
    /// The packed format read back (and dropped).
    public let pixelFormat: PixelFormat
    /// A sink reading frames back as `format`.
    public init(format: PixelFormat) { pixelFormat = format }
    /// Drops the frame; always true.
    public func write(_ frame: ProcessedFrame) throws -> Bool { true }
}

/// Hands each processed frame to a closure (on the sink's own thread): how a program built on the engine
/// receives frames as CPU memory. The buffer goes back to the pool when the closure lets go of it.
public final class CallbackSink: FrameSink {
    /// The packed format the closure receives.
    public let pixelFormat: PixelFormat
    /// Whether the closure sees the graph's output or the unfiltered input.
    public let point: SinkPoint
    /// Every frame, or only the newest it keeps up with.
    public let delivery: SinkDelivery
    private let body: (ProcessedFrame, SinkStream) throws -> Bool
    private var stream: SinkStream?

    /// - Parameter body: called per frame with the stream it belongs to; return false to stop the run.
    public init(format: PixelFormat = .rgba, point: SinkPoint = .output, delivery: SinkDelivery = .everyFrame,
                _ body: @escaping (ProcessedFrame, SinkStream) throws -> Bool) {
        pixelFormat = format
        self.point = point
        self.delivery = delivery
        self.body = body
    }

    /// Keeps the stream to hand to the closure with each frame.
    public func open(_ stream: SinkStream) throws { self.stream = stream }
    /// Keeps the new stream and follows the new size.
    public func reopen(_ stream: SinkStream) throws -> Bool { self.stream = stream; return true }
    /// Calls the closure; its result decides whether the run goes on.
    public func write(_ frame: ProcessedFrame) throws -> Bool { try body(frame, stream!) }
}
