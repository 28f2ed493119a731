import PrismCore
import PrismMedia

/// What a sink learns before its first frame (and again if the engine's output changes size).
public struct SinkStream: Sendable {
    /// How each frame's bytes are laid out (the sink's pixel format at the output size).
    public let layout: PackedFrameLayout
    /// The colour the frames are in: the Y'CbCr they are packed in (for RGB layouts: what the source was),
    /// primaries, transfer and HDR metadata (what a movie is tagged with).
    public let color: VideoColor
    public var colorSpace: YUVColorSpace { color.space }
    /// The source the frames come from.
    public let source: SourceInfo
    /// The constant rate frames are converted to, when the run converts.
    public let frameRate: Rational?
    /// The source's compressed audio, when sinks that take audio should copy it.
    public let audio: AudioStreamInfo?
    /// The captured sound's format, when the engine records a microphone.
    public let pcm: PCMFormat?
}

/// A processed frame, packed in the sink's layout in a pooled buffer (back to its pool when released).
public struct ProcessedFrame: Sendable {
    /// The packed frame; the buffer returns to its pool when the last reference goes.
    public let buffer: PooledFrameBuffer
    /// Presentation time on the source's time line (at a constant rate, the converted frame's time).
    public let pts: MediaTime
    /// How long the frame shows, when known.
    public let duration: MediaTime?
    /// The frame's position in the run (0 for the first frame rendered).
    public let index: Int
}

/// Where a sink sees the frames.
public enum SinkPoint: Sendable {
    /// After the filter graph (what `run` writes).
    case output
    /// The input as it came, unfiltered (the preview's "input" view).
    case input
}

/// How frames reach a sink.
public enum SinkDelivery: Sendable {
    /// Every frame, in order; a slow sink holds the engine back (files, pipes).
    case everyFrame
    /// The newest frames it can keep up with; frames it has no room for are skipped and counted
    /// (previews: the engine never waits for them).
    case newest
}

/// A consumer of packed frames: a movie writer, a raw pipe, a preview, a user's callback.
///
/// The engine calls `open` before the first frame (on the thread that starts it), then every other
/// method on the sink's own output thread, one call at a time: a sink needs no locks of its own.
public protocol FrameSink: AnyObject {
    /// The packed pixel format the sink takes.
    var pixelFormat: PixelFormat { get }
    /// Whether the sink sees the graph's output or the unfiltered input.
    var point: SinkPoint { get }
    /// Every frame in order (back-pressure), or only the newest it keeps up with.
    var delivery: SinkDelivery { get }
    /// Pooled buffers for the sink's frames in flight (readback ring + queue + what the sink holds).
    var bufferCount: Int { get }
    /// Whether the engine sends the source's audio (and captured sound) here.
    var acceptsAudio: Bool { get }
    /// Whether the sink wants frame `index`. Asked on the GPU thread while the sink's own thread may be
    /// busy, so it may only read thread-safe state; keep it cheap. Frames it does not want are not read
    /// back for it.
    func wants(frameIndex: Int) -> Bool

    /// Called once before the first frame, on the thread that starts the run: open files, size buffers. Throwing fails the run before it starts.
    func open(_ stream: SinkStream) throws
    /// Returns false when the sink takes no more frames (a closed pipe, a size limit): the run then stops
    /// cleanly, for `stopReason`.
    func write(_ frame: ProcessedFrame) throws -> Bool
    /// Why the sink refused more frames (after `write` returned false).
    var stopReason: StopReason { get }
    /// Bytes written so far, for progress (nil when the sink does not count them).
    var bytesWritten: Int64? { get }
    /// After `finish`: the frames the output really holds, when a limit left some it was given out
    /// (nil: every frame written is in it). The run's report counts these.
    var framesInOutput: Int? { get }
    /// A compressed packet of the source's audio, untouched (only when `acceptsAudio`).
    func write(audio packet: AudioPacket) throws
    /// Captured sound, already on the video's time line.
    func write(pcm chunk: AudioChunk, pts: MediaTime) throws
    /// The output changed size (an engine that follows its input, after a camera switch). Return false
    /// when the sink cannot follow (a movie cannot change size): the engine then finishes it.
    func reopen(_ stream: SinkStream) throws -> Bool
    /// The last frame was written: finish the output (a playable file).
    func finish() throws
    /// The run failed: leave nothing half-written.
    func abort()
    /// A live run failed (`EngineConfiguration.keepsOutputOnFailure`): keep what was recorded if it can
    /// be made whole. Returns where it is, or nil when nothing was kept (the default: `abort`).
    func salvage() -> String?
    /// After `finish`: what the run's report says of this sink beyond its frame count, one line each (a
    /// stream lost and reconnected, what a virtual camera delivered). `skipped`: the frames the engine
    /// skipped for it (a sink that takes the newest frames fell behind).
    func notes(skipped: Int) -> [String]
}

extension FrameSink {
    /// By default a sink sees the graph's output.
    public var point: SinkPoint { .output }
    /// By default a sink gets every frame, in order.
    public var delivery: SinkDelivery { .everyFrame }
    /// By default 16 buffers for a sink that gets every frame, 6 for one that takes the newest.
    public var bufferCount: Int { delivery == .everyFrame ? 16 : 6 }
    /// By default a sink takes no audio.
    public var acceptsAudio: Bool { false }
    /// By default a sink wants every frame.
    public func wants(frameIndex: Int) -> Bool { true }
    /// By default a refusal means the reader went away.
    public var stopReason: StopReason { .outputClosed }
    /// By default a sink counts no bytes.
    public var bytesWritten: Int64? { nil }
    /// By default every frame written is in the output.
    public var framesInOutput: Int? { nil }
    /// By default there is nothing to open.
    public func open(_ stream: SinkStream) throws {}
    /// By default compressed audio is ignored.
    public func write(audio packet: AudioPacket) throws {}
    /// By default captured sound is ignored.
    public func write(pcm chunk: AudioChunk, pts: MediaTime) throws {}
    /// By default a sink follows a new size and keeps going.
    public func reopen(_ stream: SinkStream) throws -> Bool { true }
    /// By default nothing to finish.
    public func finish() throws {}
    /// By default nothing to clean up.
    public func abort() {}
    /// By default nothing is kept: the sink is aborted and nil returned.
    public func salvage() -> String? { abort(); return nil }
    /// By default a sink adds no note.
    public func notes(skipped: Int) -> [String] { [] }
}
