import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline
import PrismVision

/// `prism run` on the engine: the source, the one output and the policies `RunOptions` asks for.
/// Everything that can fail because of the user's input fails in `init`, before the first frame.
public final class RunJob: Sendable {
    public let options: RunOptions
    public let engine: FrameEngine
    /// Recordings a killed earlier run of the same output left, recovered next to it.
    public let recoveredLeftovers: [OutputTarget.Recovered]
    /// Faces found per frame (a side input of the graph), when the graph draws them or a face flag asks.
    private let faces: FaceSideInput?
    /// What the job did to the input or output that the user did not spell out, one line each (said once,
    /// before the run): a movie turned upright, an odd size cropped for the codec, a rate the camera lacks.
    public let notes: [String]

    /// - Parameters:
    ///   - sinks: what the frames go to instead of `options.output` (`prism record` starts with none and
    ///     attaches a movie per take).
    ///   - taps: more taps on the engine (the take controller).
    public init(options: RunOptions, graph userGraph: FilterGraph, gpu: GPUContext? = nil,
                sinks customSinks: [any FrameSink]? = nil, taps extraTaps: [any FrameTap] = [],
                pacePattern: Bool = false) throws {
        self.options = options
        if options.audioDevice != nil {
            switch options.input {
            case .pattern, .camera: break
            case .movie, .standardInput:
                throw UsageError("--audio records alongside the camera or the pattern, not a movie or raw input "
                                 + "(their time line is not the clock's)")
            }
            // The microphone is recorded into a movie; with another output it may only feed audio-reactive shaders.
            if case .movie = options.output {} else if userGraph.audioInputs.isEmpty {
                throw UsageError("--audio needs a movie output (-o FILE), or a filter with audio inputs to feed")
            }
        }
        if let floor = options.limits.minFreeBytes, case .movie(let path) = options.output,
           let free = RecordingLimits.freeBytes(near: path), free <= floor {
            throw UsageError("--min-free \(ByteCount.text(floor)): \(path)'s disk has only \(ByteCount.text(free)) free")
        }
        // Takes (custom sinks) run until stopped: the pattern is endless then.
        let source = try Self.sourceSpec(options, endless: customSinks != nil).open()
        var notes: [String] = []
        // Upright and mirrored before the graph, so every filter sees the picture as it is meant to be seen.
        var orientation = InputOrientation(mirrored: options.mirror)
        if options.autorotate, !source.info.orientation.isUpright {
            orientation.rotation = DisplayOrientation(clockwiseDegrees: source.info.orientation.clockwiseDegrees)
            orientation.mirrored = source.info.orientation.mirrored != options.mirror
            notes.append("input is \(source.info.orientation) for display: turned upright (--no-autorotate keeps it as stored)")
        }
        if options.autorotate, let degrees = source.info.unsupportedRotation {
            notes.append(String(format: "warning: the display matrix turns the picture by %.0f°, not a quarter turn: kept as stored", degrees))
        }
        let graph = try userGraph.readingSource(through: orientation)
        if case .camera = options.input, let asked = options.frameRate, let given = source.info.frameRate,
           abs(asked.doubleValue - given.doubleValue) > 0.01 {
            notes.append("the camera cannot give \(asked) fps; it runs at \(given) fps, the closest it offers")
        }
        // --size: the pattern and cameras are asked for it; other inputs, and a camera that could not give
        // it, get a final scale.
        if let size = options.size {
            switch options.input {
            case .pattern: break
            case .camera: if size != source.info.size { try graph.appendScale(to: size) }
            case .movie, .standardInput: try graph.appendScale(to: size)
            }
        }
        var configuration = EngineConfiguration()
        configuration.readback = options.readback
        configuration.fuse = options.fuse
        configuration.yuvRoute = options.yuvRoute
        configuration.sizeChange = .keepOutputSize
        configuration.timing = options.stats ? .perPass(preferQueries: false) : .off
        // A live source's --frames (a camera; the pattern paced beside a microphone) counts the frames
        // that reach the GPU, so all of them are written: the live queue may drop late frames before it.
        configuration.frameLimit = options.frameLimit
        // A still is one frame: the first, unless --frames picks a later one.
        if case .still = options.output, options.frameLimit == nil { configuration.frameLimit = 1 }
        configuration.durationLimit = options.durationLimit
        switch options.input {
        case .pattern, .camera: break
        case .movie, .standardInput: configuration.constantRate = options.frameRate
        }
        // The pattern's synthetic time line meets a microphone's clock by being paced to it.
        configuration.pacedToClock = pacePattern || Self.pacesPattern(options)
        // A camera or a microphone is a live recording: it keeps what it recorded when the run fails, and
        // its movie is written so that even a killed process leaves a playable file.
        let live = options.input.isCamera || options.audioDevice != nil
        configuration.keepsOutputOnFailure = live
        // The microphone is opened before the output file, so a bad device leaves no file behind.
        let capture = try options.audioDevice.map { try AudioCaptureSource(device: $0) }
        let gpu = try gpu ?? GPUContext(options: options.gpu)
        // llvmpipe's timer queries only agree with the wall clock when frames do not overlap (the
        // benchmark checks this); in a running engine they do, so software renderers are fenced.
        if options.stats { configuration.timing = .perPass(preferQueries: !gpu.info.isSoftware) }
        // Movies (the output, or `record`'s takes) in H.264/HEVC (4:2:0) and ProRes (4:2:2) need even sides:
        // an odd last column or row is cropped.
        var makesMovies = customSinks != nil
        if case .movie = options.output { makesMovies = true }
        if makesMovies, let crop = try graph.cropToEvenSize(forSource: source.info.size, format: options.encoder.pixelFormat) {
            notes.append("\(options.encoder.codec.rawValue) needs an even frame size: \(crop.from) cropped to \(crop.to)")
        }
        let sinks: [any FrameSink]
        if let customSinks {
            sinks = customSinks
        } else {
            switch options.output {
            case .movie(let path): sinks = [MovieSink(path: path, settings: options.encoder, limits: options.limits, live: live)]
            case .still(let path): sinks = [try StillImageSink(path: path)]
            case .standardOutput(let format): sinks = [RawSink(fileDescriptor: 1, format: format)]
            case .discard(let format): sinks = [DiscardSink(format: format)]
            }
        }
        self.notes = notes
        var taps = extraTaps
        // Faces: the model or sidecar is checked now, before any frame. A camera never waits for the
        // detector; files and pipes detect every Nth frame and wait for it, so their output is repeatable.
        let faces = try options.faces.makeSideInput(for: graph, live: options.input.isCamera)
        self.faces = faces
        if let scheduled = options.cameraSwitch { taps.append(ScheduledCameraSwitch(afterFrames: scheduled.afterFrames, path: scheduled.path)) }
        engine = try FrameEngine(source: source, graph: graph, sinks: sinks,
                                 configuration: configuration, gpu: gpu,
                                 audioCapture: capture, taps: taps, sideInputs: faces.map { [FaceRegions($0)] } ?? [])
        recoveredLeftovers = sinks.compactMap { $0 as? MovieSink }.flatMap(\.recoveredLeftovers)
    }

    /// The source `RunOptions` describes: the pattern (10 s unless bounded), a movie, raw stdin or a camera.
    static func sourceSpec(_ options: RunOptions, endless: Bool = false) -> SourceSpec {
        var spec = SourceSpec(input: options.input, size: options.size, frameRate: options.frameRate)
        if options.input == .pattern, !endless || options.frameLimit != nil {
            let rate = options.frameRate ?? SourceSpec.defaultRate
            // Paced, the pattern is live: it runs on until --frames have reached the GPU.
            let frames = pacesPattern(options) ? nil : options.frameLimit
            spec.patternFrames = frames ?? (options.durationLimit == nil && options.frameLimit == nil
                                            ? RunOptions.defaultPatternSeconds * Int(rate.doubleValue.rounded()) : nil)
        }
        return spec
    }

    /// The pattern meets a microphone's clock by being paced to it, which makes it a live source.
    static func pacesPattern(_ options: RunOptions) -> Bool { options.audioDevice != nil && options.input == .pattern }

    /// What the face detector cost, when faces were found.
    public var faceStatistics: FaceDetectorStatistics? { faces?.statistics }

    public var sourceInfo: SourceInfo { engine.sourceInfo }
    public var gpuInfo: GPUInfo { engine.gpuInfo }
    public var outputSize: Size { engine.outputSize }
    public var passLabels: [String] { engine.passLabels }

    /// Runs to the end of the input, a limit, or `stop`. On an error the output is removed (a movie) and
    /// the error rethrown; on a stop the output is finished and playable.
    public func run(stop: StopSignal = StopSignal(), progress: (@Sendable (RunProgress) -> Void)? = nil) throws -> RunReport {
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
