import Foundation
import PrismCore
import PrismMedia

/// Encodes frames into a movie file (`MovieWriter`: temporary name, renamed when finished), with the
/// source's audio copied or the captured sound encoded as AAC.
public final class MovieSink: FrameSink {
    public let path: String
    public let settings: VideoEncoderSettings
    public private(set) var writer: MovieWriter?
    /// Video frames the encoder took.
    public private(set) var framesWritten = 0

    public init(path: String, settings: VideoEncoderSettings) {
        self.path = path
        self.settings = settings
    }

    public var pixelFormat: PixelFormat { settings.pixelFormat }
    public var acceptsAudio: Bool { true }

    public func open(_ stream: SinkStream) throws {
        var video = VideoStreamConfig(source: stream.source, size: stream.layout.size, colorSpace: stream.colorSpace)
        if let rate = stream.frameRate { video.frameRate = rate }
        writer = try MovieWriter(path: path, video: video, settings: settings,
                                 audio: stream.pcm == nil ? stream.audio : nil, pcm: stream.pcm)
    }

    public func write(_ frame: ProcessedFrame) throws -> Bool {
        if try writer?.writeVideo(frame.buffer, pts: frame.pts, duration: frame.duration) == true { framesWritten += 1 }
        return true
    }

    public func write(audio packet: AudioPacket) throws { try writer?.writeAudio(packet) }

    public func write(pcm chunk: AudioChunk, pts: MediaTime) throws {
        try chunk.samples.withUnsafeBytes { try writer?.writeAudio(pcm: $0, pts: pts) }
    }

    /// A movie keeps its size: it cannot follow the input to another one.
    public func reopen(_ stream: SinkStream) throws -> Bool { stream.layout.size == writer?.video.size }

    public func finish() throws { try writer?.finish() }
    public func abort() { writer?.abort() }
}

/// Writes packed frames to a file descriptor, one after the other (`-o -`: raw frames on stdout).
public final class RawSink: FrameSink {
    public let pixelFormat: PixelFormat
    private let output: RawVideoSink

    public init(fileDescriptor: Int32, format: PixelFormat) {
        pixelFormat = format
        output = RawVideoSink(fileDescriptor: fileDescriptor, format: format)
    }

    public func open(_ stream: SinkStream) throws {}
    /// False once the reader has gone (EPIPE): the run ends cleanly.
    public func write(_ frame: ProcessedFrame) throws -> Bool { try output.write(frame.buffer) }
}

/// Reads every frame back and drops it: the whole GPU path without an output (what benchmarks compare
/// with FFmpeg's `-f null`).
public final class DiscardSink: FrameSink {
    public let pixelFormat: PixelFormat
    public init(format: PixelFormat) { pixelFormat = format }
    public func open(_ stream: SinkStream) throws {}
    public func write(_ frame: ProcessedFrame) throws -> Bool { true }
}

/// Hands each processed frame to a closure (on the sink's own thread): how a program built on the engine
/// receives frames as CPU memory. The buffer goes back to the pool when the closure lets go of it.
public final class CallbackSink: FrameSink {
    public let pixelFormat: PixelFormat
    public let point: SinkPoint
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

    public func open(_ stream: SinkStream) throws { self.stream = stream }
    public func reopen(_ stream: SinkStream) throws -> Bool { self.stream = stream; return true }
    public func write(_ frame: ProcessedFrame) throws -> Bool { try body(frame, stream!) }
}
