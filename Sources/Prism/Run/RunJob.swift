import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismMedia
import PrismPipeline
import PrismVision

/// `prism run` on a `Session`: the source, the one output and the policies `RunOptions` asks for.
/// Everything that can fail because of the user's input fails in `init`, before the first frame.
package final class RunJob: Sendable {
    package let options: RunOptions
    package let engine: FrameEngine
    /// Recordings a killed earlier run of the same output left, recovered next to it.
    package let recoveredLeftovers: [OutputTarget.Recovered]
    /// Faces found per frame (a side input of the graph), when the graph draws them or a face flag asks.
    private let faces: FaceSideInput?
    /// The segmentation model's side input, when one was given.
    private let segmentation: SegmentationWorker?
    /// What the job did to the input or output that the user did not spell out, one line each (said once,
    /// before the run): a movie turned upright, an odd size cropped for the codec, a rate the camera lacks.
    package let notes: [String]
    /// What the output is written in and tagged with (`--stats` says it).
    package let outputColor: VideoColor
    /// How the running graph frames the user's (a live control's graph swap frames its graph the same way).
    package let framing: GraphFraming

    /// - Parameters:
    ///   - sinks: what the frames go to instead of `options.output` (`prism record` starts with none and
    ///     attaches a movie per take).
    ///   - taps: more taps on the engine (the take controller).
    package init(options: RunOptions, graph userGraph: FilterGraph, gpu: GPUContext? = nil,
                sinks customSinks: [any FrameSink]? = nil, taps extraTaps: [any FrameTap] = [],
                pacePattern: Bool = false) throws {
        self.options = options
        var settings = options.session.writing(to: options.outputs)
        // Takes (custom sinks) run until stopped: the pattern is endless then.
        if customSinks != nil { settings.patternSeconds = nil }
        if pacePattern { settings.pacedToClock = true }
        let session = try Session(input: options.input, graph: userGraph, options: settings, gpu: gpu)
        var taps = extraTaps
        if let scheduled = options.cameraSwitch { taps.append(ScheduledCameraSwitch(afterFrames: scheduled.afterFrames, path: scheduled.path)) }
        if let customSinks {
            engine = try session.engine(sinks: customSinks, makesMovies: true, taps: taps)
        } else {
            engine = try session.engine(outputs: options.outputs, taps: taps)
        }
        notes = session.notes
        outputColor = session.outputColor
        framing = session.framing
        faces = session.faces
        segmentation = session.segmentation?.worker
        recoveredLeftovers = (customSinks ?? []).compactMap { $0 as? MovieSink }.flatMap(\.recoveredLeftovers)
            + session.recoveredLeftovers
    }

    /// What the face detector cost, when faces were found.
    package var faceStatistics: FaceDetectorStatistics? { faces?.statistics }

    /// How faces are found, when that is not what was asked for (the fallback cascade): said first.
    package var faceNote: String? { faces?.note }

    /// What the segmentation model cost and how old its masks were, when one ran.
    package var segmentationStatistics: SegmentationStatistics? { segmentation?.statistics }

    package var sourceInfo: SourceInfo { engine.sourceInfo }
    package var otherInputSummaries: [String] { engine.otherInputSummaries }
    package var gpuInfo: GPUInfo { engine.gpuInfo }
    package var outputSize: Size { engine.outputSize }
    package var passLabels: [String] { engine.passLabels }

    /// Runs to the end of the input, a limit, or `stop`. On an error the output is removed (a movie) and
    /// the error rethrown; on a stop the output is finished and playable.
    package func run(stop: StopSignal = StopSignal(), progress: (@Sendable (RunProgress) -> Void)? = nil) throws -> RunReport {
        try engine.run(stop: stop, progress: progress)
    }
}

/// The hidden `--switch-camera-after N:PATH`: switches cameras once N frames went through, as a UI
/// would (`FrameEngine.switchCamera`); the end-to-end test of the runtime switch.
private final class ScheduledCameraSwitch: FrameTap {
    let afterFrames: Int
    let path: String
    init(afterFrames: Int, path: String) {
        self.afterFrames = afterFrames
        self.path = path
    }
    func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
        if frame.index + 1 == afterFrames { control.switchCamera(to: path) }
    }
}
