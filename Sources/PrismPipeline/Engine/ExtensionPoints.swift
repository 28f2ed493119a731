import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia

/// Per-frame data the graph reads, given before the frame renders (face regions, a sidecar, a value
/// from a control page). Called on the GPU thread after the upload, so an input can derive its data from
/// the frame on the GPU (the detector's small luma image); it may wait for its data (a file run that must
/// be deterministic) or use the newest it has (a live run that must not stall).
public protocol SideInput: AnyObject {
    /// Sets this input's part of `context` for frame `index`, on the GPU thread after `uploaded` holds the frame; throwing fails the run.
    func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws
    /// The run ended without an error (on the GPU thread): commit what the input wrote (a sidecar).
    func finish() throws
    /// The side data the input sets in `FrameContext` (regions from a face detector or sidecar, a segmentation
    /// model's mask, sound: the engine then decodes none for the graph). A graph that reads side data that no
    /// input of the run supplies is refused by the engine.
    var supplies: SideData { get }
    /// Its part that sees frames on the source thread before the GPU does, if it has one.
    var lookAheadInput: (any LookAheadInput)? { get }
}

extension SideInput {
    /// Nothing to commit by default.
    public func finish() throws {}
    /// By default an input supplies no side data.
    public var supplies: SideData { [] }
    /// By default an input does not look ahead.
    public var lookAheadInput: (any LookAheadInput)? { nil }
}

/// A side input that sees each frame before the GPU does: on the source thread, as the frame is read and
/// before it is queued (a file's face detector, which reads ahead so that a frame between two detections is
/// drawn with both). Meant for inputs that are not live: frames a live run drops were still read.
public protocol LookAheadInput: AnyObject, Sendable {
    /// How many frames the source must be able to read ahead of the GPU (the engine's frame queue holds at
    /// least this many); 0: the input does not look ahead in this run.
    var lookAhead: Int { get }
    /// Frame `index` of the run, on the source thread, before it is queued for the GPU; throwing fails the run.
    func read(_ frame: TimedFrame, index: Int) throws
    /// The source has read its last frame, stopped or failed: no frame will follow (the GPU thread must not
    /// wait for one).
    func inputEnded()
}

/// A frame as the GPU has it after the graph ran: for taps, on the GPU thread, during the call only.
public struct RenderedFrame {
    /// The input frame's planes on the GPU.
    public let uploaded: UploadedFrame
    /// The graph that rendered it (nil while no sink takes the output).
    package let renderer: GraphRenderer?
    /// The frame's presentation time in the output.
    public let pts: MediaTime
    /// 0-based position of the frame in the run.
    public let index: Int
    /// The per-frame values the graph rendered with (time, regions, sound).
    public let context: FrameContext
}

/// Observes every rendered frame on the GPU thread (the detector's small luma image, per-pass timings,
/// a still). Keep it short: the next frame waits for it.
public protocol FrameTap: AnyObject {
    /// Called on the GPU thread after each frame rendered; `frame` and `control` are valid only during the call.
    func rendered(_ frame: RenderedFrame, control: EngineControl) throws
    /// The run is ending (on the GPU thread): deliver what is in flight.
    func finish() throws
}

extension FrameTap {
    /// Nothing in flight by default.
    public func finish() throws {}
}

/// Something that happened during a run that a front end may want to show.
public enum EngineEvent: Sendable {
    /// The camera was replaced between frames; `summary` describes the new source.
    case cameraSwitched(CameraSwitch, summary: String)
    /// The camera at `path` could not be opened; the one at `kept` goes on running.
    case cameraSwitchFailed(path: String, kept: String, error: String)
    /// The input changed format or size and the graph was compiled again.
    case inputChanged(format: PixelFormat, size: Size, outputFrom: Size, outputTo: Size)
    /// `.followInput`: the graph did not compile for the new input; the unfiltered input runs instead.
    case graphFallback(error: String)
    /// A network input was lost, reconnected, gave up, or its timestamps jumped (`NetworkSource`): one line.
    case networkInput(String)

    /// One line for a log or a run's notes.
    public var description: String {
        switch self {
        case .cameraSwitched(let change, _): return change.description
        case .cameraSwitchFailed(let path, let kept, let error): return "camera switch to \(path) failed, \(kept) kept: \(error)"
        case .inputChanged(let format, let size, let from, let to):
            return "input is now \(format.rawValue) \(size): graph recompiled, "
                + (from == to ? "output stays \(to)" : "output \(from) → \(to)")
        case .graphFallback(let error): return "the graph does not compile for the new input (\(error)); showing the input"
        case .networkInput(let line): return line
        }
    }
}

/// What code running between frames on the GPU thread may change: the graph, the sinks, the timings.
/// Handed to `FrameEngine.schedule` closures and to taps; valid only during that call.
public final class EngineControl {
    private let stage: FramePath

    init(stage: FramePath) { self.stage = stage }

    /// What the engine's GPU context runs on.
    public var gpuInfo: GPUInfo { stage.setup.gpuInfo }
    /// The graph running now.
    public var graph: FilterGraph { stage.graph }
    /// Its compiled form (pass labels, output size, `isStale`); nil while no sink takes the output.
    package var renderer: GraphRenderer? { stage.renderer }

    /// Runs `graph` from the next frame on; throws (keeping the current graph) when it does not compile.
    public func setGraph(_ graph: FilterGraph) throws { try stage.setGraph(graph) }
    /// Compiles the current graph again, after a parameter change that made the renderer stale.
    public func recompile() throws { try stage.recompile() }
    /// Adds a sink from the next frame on, opening it now.
    public func attach(_ sink: any FrameSink) throws { _ = try stage.attach(sink) }
    /// Removes a sink: its frames in flight are delivered, then it is finished on its own thread.
    public func detach(_ sink: any FrameSink) throws { try stage.detach(sink) }

    /// Switches cameras between two frames (`FrameEngine.switchCamera`).
    public func switchCamera(to path: String) { stage.setup.requestCameraSwitch?(path) }

    /// Frames skipped for a sink that takes the newest frames (no free buffer, or overtaken in its queue).
    public func skippedFrames(of sink: any FrameSink) -> Int { stage.outlet(of: sink)?.skipped ?? 0 }

    /// How passes are timed ("" when timing is off).
    public var timingMethod: String { stage.timer?.method.rawValue ?? "" }
    /// Median milliseconds per pass since the last reset; `reset` starts a new window.
    public func passMilliseconds(reset: Bool) -> [Double] {
        guard let timer = stage.timer else { return [] }
        timer.finish()
        let medians = timer.medianMilliseconds()
        if reset { stage.restartTimer() }
        return medians
    }
}
