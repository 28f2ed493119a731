import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline
import PrismVision
import Synchronization

/// One run of a filter graph over one input, with the policies `prism run` applies: the input turned
/// upright by its display matrix (and mirrored when asked), the output scaled to `size`, an odd size
/// cropped for a codec that needs even sides, faces found for a graph that draws them, a microphone
/// recorded beside a live source.
///
///     let session = try Session(input: .movie("in.mp4"), graph: "face-pixellate")
///     try session.write(to: "out.mp4")                       // or:
///     for try await frame in try session.frames() { … }      // every frame as RGBA bytes
///
/// Everything that can fail because of the input (a missing file, a bad graph, a bad face model) fails in
/// `init` or in the call that starts the run, before the first frame. A session runs once.
public final class Session {
    /// What the session was asked to do beyond the input and the graph.
    public struct Options: Sendable {
        /// The pattern's size, the size asked of a camera (kept by a final scale if the camera gives
        /// another), or a final scale for movies and raw input. Nil: the input's size.
        public var size: Size?
        /// The pattern's rate, the rate asked of a camera, or the constant rate a movie or raw input is
        /// converted to. Nil: the input's own timing.
        public var frameRate: Rational?
        /// Stop after this many frames.
        public var frameLimit: Int?
        /// Stop after this much input time.
        public var durationLimit: MediaTime?
        /// The built-in pattern's length when no limit bounds it; nil: it runs until stopped.
        public var patternSeconds: Int? = 10
        /// Turn a movie upright by its display matrix (false: frames as stored).
        public var autorotate = true
        /// Swap left and right (a front-facing camera shown as a mirror shows it).
        public var mirror = false
        /// Fail at a damaged packet, or a movie that cannot be read to its end, instead of skipping and
        /// counting it as FFmpeg's command line does (the report's `damage` and notes say what was skipped).
        public var strictDecoding = false
        /// How faces are found when the graph draws them (or a face setting asks for them).
        public var faces = FaceSettings()
        /// The input is one still picture (`prism render`, `prism_render`): faces are looked for down to the
        /// detector's own smallest size, as a photograph's small faces need, not from `--face-min-size`'s default.
        public var stillImage = false
        /// The segmentation model whose mask `background-blur`, `background-replace` and `segment-mask` draw.
        public var segmentation = SegmentationSettings()
        /// Record from this ALSA capture PCM into the movie, on the video's time line (the camera or the
        /// pattern only: a movie's time line is not the clock's).
        public var audioDevice: String?
        /// Pace the input to the wall clock: the pattern, a movie or raw input released at their timestamps
        /// (FFmpeg's `-re`), so they behave as live sources (a camera is paced by itself).
        public var pacedToClock = false
        /// A movie file starts again at its end, its timestamps going on, and so do the other inputs that are
        /// files (`prism dev`'s clip); a stream or a pipe, which cannot start again, runs to its end.
        public var loops = false
        /// The frames are watched as they are made rather than kept (`prism dev`'s preview): paced to the
        /// clock, late frames dropped and at most two queued, the output following the input's size, every
        /// pass timed, the sound analysed from the start (for a graph that gains an audio input later) and
        /// never copied; faces and masks are never waited for, and the microphone goes with any input.
        public var preview = false
        /// The movie encoder (`write(to:)` and `.movie` outputs).
        public var encoder = VideoEncoderSettings()
        /// Limits that end a recording cleanly (size, free disk space).
        public var limits = RecordingLimits()
        /// Which GPU, when the session makes its own context.
        public var gpu = GPUOptions()
        /// How frames come back from the GPU; nil: the engine's choice for the driver.
        public var readback: ReadbackStrategy?
        /// Fuse per-pixel filters into one pass.
        public var fuse = true
        /// Allow the Y'CbCr-native route for graphs that support it (false: everything through R'G'B').
        public var yuvRoute = true
        /// Time every pass (the report's `passMilliseconds`).
        public var timesPasses = false
        /// What a movie's colour is taken for instead of its tags (`--input-color`).
        public var inputColor: ColorOverride?
        /// A network input's timeouts, reconnection and protocol options (`--input-timeout`, `--reconnect`…).
        public var network = NetworkInputOptions()
        /// Whether HDR and deep input stay so in the output (see `DynamicRange`).
        public var dynamicRange = DynamicRange.auto
        /// The tone curve for HDR into an SDR output; nil: none (the signal is written as it is, tagged so).
        public var toneCurve: ColorConversion.Curve? = .bt2390
        /// An HDR output's transfer when it is to differ from the input's (PQ ↔ HLG).
        public var outputTransfer: TransferFunction?
        /// How a network output that lost its server connects again before it is given up (alone when there
        /// are other outputs; the run fails when it was the only one): the network inputs' policy and defaults.
        public var outputReconnect = ReconnectPolicy()
        /// Told at once what happens to an output while the run goes on (a stream lost, reconnected, given up).
        public var messages: (@Sendable (String) -> Void)?
        /// Whether the output can carry HDR and 10 bits; nil: the encoder says (HEVC, ProRes, FFV1 can). Raw
        /// frames can in a 10-bit format, stills never.
        public var outputIsDeep: Bool?

        /// The inputs besides the first (`prism run A B`, `--input NAME=…`): `[1]`, `[2]`… (or their names) in
        /// the graph, matched to the first input's frames by timestamp (files) or newest-wins (live inputs);
        /// see `InputTrack`. Their sound is used only when one is chosen by `audioInput`. Opened by `init`.
        public var inputs: [ExtraInput] = []
        /// Whose sound the outputs carry (`--audio-from`): 0 the first input's, N the input `[N]` of `inputs`
        /// (a file with sound, placed on the run's clock by its offset; not with `audioDevice`). No mixing;
        /// audio-reactive filters hear the first input. See `EngineConfiguration.audioInput`, which checks the
        /// input is there and can give sound.
        public var audioInput = 0

        /// `prism run`'s defaults: the input's size and timing, upright, H.264, no limits.
        public init() {}
    }

    /// What the session was asked to do (the encoder's depth as the input's colour decided it).
    public private(set) var options: Options
    /// The input as opened: size, rate, orientation, audio.
    public let sourceInfo: SourceInfo
    /// The graph as it runs: the user's graph behind the orientation remaps, with any final scale or crop.
    public let graph: FilterGraph
    /// The GPU the session renders on (its own, or the one given to `init`).
    public let gpu: GPUContext
    /// What the session did to the input or output that was not spelled out, one line each: a movie
    /// turned upright, an odd size cropped for the codec, a rate the camera lacks.
    public private(set) var notes: [String] = []
    /// The faces found per frame, once a run whose graph needs them has started.
    package private(set) var faces: FaceSideInput?
    /// The segmentation side input, once a run with a segmentation model has started.
    package private(set) var segmentation: SegmentationSideInput?
    /// Recordings a killed earlier run of the same movie left, recovered next to it (once the run is made).
    public private(set) var recoveredLeftovers: [OutputTarget.Recovered] = []
    /// How `graph` was made of the user's graph, so a graph swapped in while running is made the same way.
    package let framing: GraphFraming

    private let input: InputSpec
    /// The colour the graph converts the output to (`ColorPlan`); nil: the source's.
    private let convertedColor: VideoColor?
    /// The graph has linear light between passes (`ColorPlan.linearLight`).
    private let linearLight: Bool

    /// The colour the output is written in and tagged with: the conversion's (tone mapping, PQ ↔ HLG), or the
    /// source's (an RGB source's frames are packed in the usual Y'CbCr for the size).
    public var outputColor: VideoColor {
        if let convertedColor { return convertedColor }
        var color = sourceInfo.color
        color.space = YUVColorSpace.packing(sourceFormat: sourceInfo.pixelFormat, sourceColorSpace: color.space,
                                            outputSize: sourceInfo.size)
        color.guessed = []
        return color
    }
    /// Taken by the one run.
    private var source: MediaSource?
    /// The inputs besides the first, opened; taken by the one run.
    private var tracks: ThreadOwned<[InputTrack]>

    /// A graph in Prism's text form (`invert, mono`, `chrome, pixellate(12)`, `my-look.fs(amount=0.3)`),
    /// bound with `Session.binder()` (built-ins, ISF and ShaderToy files, their images).
    public convenience init(input: InputSpec, graph: String, options: Options = Options(), gpu: GPUContext? = nil) throws {
        try self.init(input: input, graph: try Session.binder(inputs: [nil] + options.inputs.map(\.name)).bind(graph),
                      options: options, gpu: gpu)
    }

    /// Opens the input now (a missing file or camera fails here) and places the orientation remaps and
    /// the final scale in front of/behind `graph`. `graph`'s kernels move into the session.
    public convenience init(input: InputSpec, graph userGraph: FilterGraph, options: Options = Options(), gpu: GPUContext? = nil) throws {
        try self.init(input: input, opened: nil, graph: userGraph, options: options, gpu: gpu)
    }

    /// - Parameter opened: the input already opened (a still picture's frame); nil: opened here as `input` says.
    init(input: InputSpec, opened: MediaSource?, graph userGraph: FilterGraph, options: Options, gpu: GPUContext?) throws {
        self.options = options
        self.input = input
        if options.audioDevice != nil, options.audioInput != 0 {
            throw InvalidRequest("\(Setting.audioFrom) and \(Setting.audio) both give the run's sound; choose one")
        }
        if options.audioDevice != nil, !options.preview {
            switch input {
            case .pattern, .camera: break
            case .movie, .standardInput, .frames:
                throw InvalidRequest("\(Setting.audio) records alongside the camera or the pattern, not a movie or raw input "
                                 + "(their time line is not the clock's)")
            }
        }
        let source = try opened ?? Self.sourceSpec(input: input, options: options).open()
        notes += source.info.notes
        // The other inputs open now too: one that cannot be opened fails here, before any output exists.
        tracks = ThreadOwned(try options.inputs.enumerated().map { index, input in
            var input = input
            if options.loops { input.spec.loop = Self.canStartAgain(input.spec.input) }
            return try InputTrack(index: index + 1, input: input)
        })
        // The other inputs' sizes before anything sizes the graph (a crop for the codec, a check between inputs).
        try userGraph.setInputSizes(Dictionary(uniqueKeysWithValues: tracks.value.map { ($0.index, $0.info.size) }))
        // Upright and mirrored before the graph, so every filter sees the picture as it is meant to be seen.
        var orientation = InputOrientation(mirrored: options.mirror)
        if options.autorotate, !source.info.orientation.isUpright {
            orientation.rotation = DisplayOrientation(clockwiseDegrees: source.info.orientation.clockwiseDegrees)
            orientation.mirrored = source.info.orientation.mirrored != options.mirror
            notes.append("input is \(source.info.orientation) for display: turned upright (\(Setting.noAutorotate) keeps it as stored)")
        }
        if options.autorotate, let degrees = source.info.unsupportedRotation {
            notes.append(String(format: "warning: the display matrix turns the picture by %.0f°, not a quarter turn: kept as stored", degrees))
        }
        // Colour: HDR into SDR is tone mapped by a `tonemap` in front of everything (orientation included).
        let colorPlan = try ColorPlan(source: source.info, graph: userGraph, options: options)
        notes += colorPlan.notes
        self.options.encoder.bitDepth = colorPlan.bitDepth
        convertedColor = colorPlan.outputColor
        linearLight = colorPlan.linearLight
        let graph = try userGraph.readingSource(through: colorPlan.filters + orientation.filters)
        framing = GraphFraming(orientation: orientation.filters, source: source.info, options: options,
                               outputColor: colorPlan.outputColor, bitDepth: colorPlan.bitDepth,
                               linearLight: colorPlan.linearLight,
                               userNodeOffset: orientation.filters.count + colorPlan.filters.count)
        if case .camera = input, let asked = options.frameRate, let given = source.info.frameRate,
           abs(asked.doubleValue - given.doubleValue) > 0.01 {
            notes.append("the camera cannot give \(asked) fps; it runs at \(given) fps, the closest it offers")
        }
        // The pattern and cameras are asked for the size; other inputs, and a camera that could not give
        // it, get a final scale.
        if let size = options.size {
            switch input {
            case .pattern: break
            // A preview follows the size the camera gives.
            case .camera: if size != source.info.size, !options.preview { try graph.appendScale(to: size) }
            case .movie, .standardInput, .frames: try graph.appendScale(to: size)
            }
        }
        self.graph = graph
        self.source = source
        self.sourceInfo = source.info
        self.gpu = try gpu ?? GPUContext(options: options.gpu)
    }

    /// The graph binder sessions and `prism` use: the built-in filters, shader files, and the images an
    /// ISF file imports (PNG, JPEG, PPM… read by libavcodec; a FIFO or device is refused, never read).
    /// `inputs`: the run's inputs (each name or nil, the first input first), which `[0]`…`[N-1]` and the
    /// names read.
    public static func binder(inputs: [String?] = [nil]) -> GraphBinder {
        var binder = GraphBinder(imageLoader: { path in
            try RegularFile.check(path, what: "an image file")
            let image = try ImageFile.read(path: path)
            return (image.size, image.pixels)
        })
        binder.inputs = inputs.isEmpty ? [nil] : inputs
        return binder
    }

    // MARK: Runs

    /// Writes the frames to `path` (a movie, or a photo of the first frame for .png/.jpg) and returns
    /// what the run did. On an error the output is removed (a live recording keeps what it recorded).
    @discardableResult
    public func write(to path: String, stop: StopSignal = StopSignal()) throws -> RunReport {
        try write(to: .file(path), stop: stop)
    }

    /// Writes the frames to `output` and returns what the run did.
    @discardableResult
    public func write(to output: OutputSpec, stop: StopSignal = StopSignal(),
                      progress: (@Sendable (RunProgress) -> Void)? = nil) throws -> RunReport {
        try engine(outputs: [SessionOutput(output)]).run(stop: stop, progress: progress)
    }

    /// Every frame after the graph, packed in `format` and copied into memory the caller keeps, in order.
    /// The run starts now (its errors are thrown here or from the iteration) on threads of its own, and
    /// stays at most `buffered` frames ahead of the consumer; ending the iteration early stops it.
    public func frames(format: PixelFormat = .rgba, buffered: Int = 2) throws -> FrameSequence {
        let channel = RunChannel<Frame>(slots: max(1, buffered))
        let sink = CallbackSink(format: format) { frame, stream in
            channel.send(Frame(index: frame.index, pts: frame.pts, layout: stream.layout,
                               bytes: [UInt8](UnsafeRawBufferPointer(start: frame.buffer.data, count: stream.layout.byteCount))))
        }
        let engine = try engine(sinks: [sink])
        return FrameSequence(channel: channel, engine: engine)
    }

    /// The engine for a run into `outputs`, for a caller that drives it (taps, `schedule`, `switchCamera`):
    /// every output gets every frame, except that a network output beside others (or behind a live input)
    /// takes only the frames it keeps up with, so a slow link never holds back the recording, and may be
    /// lost and reconnected, or given up, alone.
    /// The first output drives progress and the report's frame count.
    public func engine(outputs: [SessionOutput], taps: [any FrameTap] = [], sideInputs: [any SideInput] = []) throws -> FrameEngine {
        guard !outputs.isEmpty else { throw InvalidRequest("a run needs an output") }
        // Each movie's place and container, found once (a bad extension, scheme or format fails here).
        var outputs = outputs
        for index in outputs.indices { try outputs[index].resolve() }
        try checkPlaylistNames(outputs)
        let movies = outputs.compactMap { output -> String? in if case .movie(let path) = output.spec { return path } else { return nil } }
        if outputs.count > 1, outputs.contains(where: { if case .still = $0.spec { return true } else { return false } }) {
            throw InvalidRequest("a still (.png/.jpg) is one frame: write it in a run of its own, not beside other outputs")
        }
        if options.audioDevice != nil, graph.audioInputs.isEmpty, movies.isEmpty {
            // The microphone is recorded into a movie; with another output it may only feed audio-reactive shaders.
            throw InvalidRequest("\(Setting.audio) needs a movie output (\(Setting.output) FILE), or a filter with audio inputs to feed")
        }
        if !movies.isEmpty { try cropForMovies() }
        // Every output's folder before any output is opened: a playlist or a still that could only fail
        // late fails now, before a stream beside it has connected.
        for output in outputs {
            switch output.spec {
            case .movie(let path):
                switch try output.movieDestination(path).kind {
                case .file, .playlist: try OutputPlace.check(path)
                case .stream, .network: break
                }
            case .still(let path): try OutputPlace.check(path)
            case .standardOutput, .discard, .virtualCamera: break
            }
        }
        var sinks: [any FrameSink] = []
        for output in outputs {
            switch output.spec {
            case .movie(let path): sinks.append(try movieSink(path, output, among: outputs.count))
            case .still(let path): sinks.append(try StillImageSink(path: path))
            case .standardOutput(let format): sinks.append(RawSink(fileDescriptor: 1, format: format))
            case .discard(let format): sinks.append(DiscardSink(format: format))
            case .virtualCamera(let path): sinks.append(try VirtualCameraSink(path: path))
            }
        }
        var configuration = configuration
        // A stream plays in real time: a file (or the pattern, raw input) sent to one is read at its own pace,
        // as FFmpeg's -re reads it, so the stream is not given frames faster than it plays; the frames are
        // only held back, never dropped, so the other outputs still get every one.
        if !configuration.pacedToClock, !isLive, !input.isCamera, !input.isNetwork, let stream = Self.firstStream(in: outputs) {
            configuration.pacedToClock = true
            configuration.dropLateFrames = false
            notes.append("\(NetworkURL.redacted(stream)) plays in real time: the input is read at its own pace (as with "
                         + "\(Setting.realtime), FFmpeg's -re), and no frame is dropped for it")
        }
        // A still is one frame: the first, unless the frame limit picks a later one.
        if case .still = outputs[0].spec, options.frameLimit == nil { configuration.frameLimit = 1 }
        let engine = try makeEngine(sinks: sinks, configuration: configuration, taps: taps, sideInputs: sideInputs)
        recoveredLeftovers = sinks.compactMap { $0 as? MovieSink }.flatMap(\.recoveredLeftovers)
        return engine
    }

    /// The first network stream (its URL) among `outputs`, if any.
    private static func firstStream(in outputs: [SessionOutput]) -> String? {
        for output in outputs {
            if case .movie(let path) = output.spec, output.destination?.isNetwork == true { return path }
        }
        return nil
    }

    /// No file the run reads or writes elsewhere may have the name of a playlist's segment: the playlist
    /// would write over it (and its next run, which deletes what its earlier run wrote, would delete it).
    private func checkPlaylistNames(_ outputs: [SessionOutput]) throws {
        var others: [(what: String, path: String)] = []
        if case .movie(let path) = input { others.append(("the input", path)) }
        for (index, extra) in options.inputs.enumerated() {
            if case .movie(let path) = extra.spec.input { others.append(("the input [\(index + 1)]", path)) }
        }
        for output in outputs {
            if case .movie(let path) = output.spec { others.append(("\(Setting.output)", path)) }
            if case .still(let path) = output.spec { others.append(("\(Setting.output)", path)) }
        }
        if let path = options.faces.sidecarIn { others.append(("\(Setting.facesIn)", path)) }
        if let path = options.faces.sidecarOut { others.append(("\(Setting.facesOut)", path)) }
        for output in outputs where output.isPlaylist {
            guard case .movie(let path) = output.spec else { continue }
            let destination = try output.movieDestination(path)
            for other in others { try destination.checkSegmentNames(against: other.path, as: other.what) }
        }
    }

    /// A movie output's sink: its container resolved now (a bad extension, scheme or format fails before
    /// any frame), its encoder (a stream's defaults: keyframes every 2 s, no B-frames), and for a network
    /// output its policy when the link is slow or lost.
    private func movieSink(_ path: String, _ output: SessionOutput, among count: Int) throws -> MovieSink {
        let destination = try output.movieDestination(path)
        var encoder = output.encoder ?? options.encoder
        // The graph has one output colour: every movie is written at the depth the colour plan chose.
        encoder.bitDepth = options.encoder.bitDepth
        if encoder.bitDepth > 8, !encoder.canBeDeep {
            throw InvalidRequest("\(path): \(encoder.codec.rawValue) is 8-bit SDR, and this run keeps HDR/10 bits for its outputs; "
                             + "give it \(Setting.codec) hevc, av1, prores or ffv1, or the run \(Setting.dynamicRange) sdr")
        }
        if case .playlist = destination.kind, encoder.keyframeSeconds == nil, encoder.gopSize == nil {
            // Segments are cut at keyframes: shorter segments need them as often.
            encoder.keyframeSeconds = min(2, output.playlist.segmentSeconds)
        }
        if destination.isStreaming { encoder = encoder.streaming(network: destination.isNetwork) }
        var limits = RecordingLimits()
        if destination.kind == .file {
            limits = options.limits
            if let floor = limits.minFreeBytes, let free = RecordingLimits.freeBytes(near: path), free <= floor {
                throw InvalidRequest("\(Setting.minFree) \(ByteCount.text(floor)): \(path)'s disk has only \(ByteCount.text(free)) free")
            }
        }
        // A network output never holds back the others or a live input: it takes the frames it keeps up with.
        let keepsUp = destination.isNetwork && (count > 1 || isLive)
        let policy: MovieSink.FailurePolicy = destination.isNetwork
            ? .reconnects(options.outputReconnect, alone: count > 1) : .failsRun
        return MovieSink(path: path, settings: encoder, limits: limits, live: isLive && destination.kind == .file,
                         destination: destination, playlist: output.playlist, delivery: keepsUp ? .newest : .everyFrame,
                         failurePolicy: policy, say: options.messages)
    }

    /// The engine for a run into `sinks` (none: sinks attached while it runs, as `prism record`'s takes).
    /// - Parameter makesMovies: the sinks are or will be movies, whose codecs need even sides.
    /// - Parameter events: told what happens during the run (camera switches, recompiles), from any thread.
    public func engine(sinks: [any FrameSink], makesMovies: Bool = false, taps: [any FrameTap] = [],
                       sideInputs: [any SideInput] = [], events: (@Sendable (EngineEvent) -> Void)? = nil) throws -> FrameEngine {
        if makesMovies { try cropForMovies() }
        return try makeEngine(sinks: sinks, configuration: configuration, taps: taps, sideInputs: sideInputs, events: events)
    }

    // MARK: Policies

    /// A camera, a microphone or a live network stream is a live recording: it keeps what it recorded when
    /// the run fails, and its movie is written so that even a killed process leaves a playable file.
    public var isLive: Bool { inputIsLive || options.audioDevice != nil }

    /// A camera or a live network stream: frames never wait for the face detector or the segmentation model.
    private var inputIsLive: Bool { input.isCamera || (input.isNetwork && sourceInfo.isLive) }

    /// The source the options describe: the pattern (`patternSeconds` unless bounded), a movie, raw input
    /// or a camera.
    static func sourceSpec(input: InputSpec, options: Options) -> SourceSpec {
        var spec = SourceSpec(input: input, size: options.size, frameRate: options.frameRate)
        spec.colorOverride = options.inputColor
        spec.network = options.network
        spec.strictDecoding = options.strictDecoding
        spec.loop = options.loops && canStartAgain(input)
        if input == .pattern {
            let rate = options.frameRate ?? SourceSpec.defaultRate
            // Paced, the pattern is live: it runs on until the frame limit has reached the GPU.
            if options.pacesPattern(input) {
                spec.patternFrames = options.frameLimit == nil && options.durationLimit == nil
                    ? options.patternSeconds.map { $0 * Int(rate.doubleValue.rounded()) } : nil
            } else if let frames = options.frameLimit {
                spec.patternFrames = frames
            } else if options.durationLimit == nil, let seconds = options.patternSeconds {
                spec.patternFrames = seconds * Int(rate.doubleValue.rounded())
            }
        }
        return spec
    }

    /// A movie file can be opened again at its end; a network stream, a pipe or a FIFO cannot.
    private static func canStartAgain(_ input: InputSpec) -> Bool {
        guard case .movie(let path) = input, !input.isNetwork, !path.hasPrefix("pipe:") else { return false }
        var info = stat()
        return stat(path, &info) != 0 || info.st_mode & S_IFMT != S_IFIFO
    }

    /// Movies in H.264/HEVC (4:2:0) and ProRes (4:2:2) need even sides: an odd last column or row is cropped.
    private func cropForMovies() throws {
        if let crop = try graph.cropToEvenSize(forSource: sourceInfo.size, format: options.encoder.pixelFormat) {
            notes.append("\(options.encoder.codec.rawValue) needs an even frame size: \(crop.from) cropped to \(crop.to)")
        }
    }

    private var configuration: EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.readback = options.readback
        configuration.fuse = options.fuse
        configuration.yuvRoute = options.yuvRoute
        configuration.sizeChange = .keepOutputSize
        configuration.audioInput = options.audioInput
        // llvmpipe's timer queries only agree with the wall clock when frames do not overlap (the
        // benchmark checks this); in a running engine they do, so software renderers are fenced.
        configuration.timing = options.timesPasses ? .perPass(preferQueries: !gpu.info.isSoftware) : .off
        // A live source's frame limit counts the frames that reach the GPU, so all of them are written:
        // the live queue may drop late frames before it.
        configuration.frameLimit = options.frameLimit
        configuration.durationLimit = options.durationLimit
        switch input {
        case .pattern, .camera: break
        case .movie, .standardInput, .frames: configuration.constantRate = options.frameRate
        }
        // The pattern's synthetic time line meets a microphone's clock by being paced to it.
        configuration.pacedToClock = options.pacesPattern(input) || (options.pacedToClock && !input.isCamera)
        configuration.keepsOutputOnFailure = isLive
        configuration.outputColor = convertedColor
        // A deep output keeps its bits between passes too (half floats hold 11 bits, 16-bit output needs floats),
        // and linear light its values above SDR white.
        let depth = options.encoder.pixelFormat.bitDepth
        if depth > 10 { configuration.compileOptions.intermediateFormat = .rgba32f }
        else if depth > 8 || linearLight { configuration.compileOptions.intermediateFormat = .rgba16f }
        configuration.compileOptions.clampsSteps = !linearLight
        if options.preview {
            configuration.sizeChange = .followInput
            configuration.timing = .perPass(preferQueries: true)
            configuration.pacedToClock = true
            configuration.dropLateFrames = true
            configuration.frameQueueCapacity = 2
            configuration.copyAudio = false
            configuration.analyzesAudio = true
        }
        return configuration
    }

    /// How many engines sessions have made in this process: every front end (`run`, `render`, `record`,
    /// `batch`, `dev`) builds through `makeEngine`, which a test checks by this count.
    package static let enginesMade = Atomic<Int>(0)

    /// Every run's engine is made here, with the side inputs the options ask for (faces, the segmentation
    /// mask) before the caller's.
    private func makeEngine(sinks: [any FrameSink], configuration: EngineConfiguration, taps: [any FrameTap],
                            sideInputs: [any SideInput], events: (@Sendable (EngineEvent) -> Void)? = nil) throws -> FrameEngine {
        guard let source else { throw InvalidRequest("this session has already run; make a new one for another run") }
        // The microphone is opened before the output file, so a bad device leaves no file behind.
        let capture = try options.audioDevice.map { try AudioCaptureSource(device: $0) }
        // Faces: the model or sidecar is checked now, before any frame. A camera never waits for the
        // detector; files and pipes detect every Nth frame and wait for it, so their output is repeatable.
        let live = inputIsLive || options.preview
        let faces = try options.faces.makeSideInput(for: graph, live: live, still: options.stillImage)
        // Segmentation: the model is loaded now; live sources never wait for it, files do (deterministic).
        let segmentation = try options.segmentation.makeSideInput(for: graph, live: live, gpu: gpu)
        let engine = try FrameEngine(source: source, graph: graph, sinks: sinks, configuration: configuration, gpu: gpu,
                                     audioCapture: capture, taps: taps,
                                     sideInputs: (faces.map { [FaceRegions($0)] } ?? []) + (segmentation.map { [$0] } ?? []) + sideInputs,
                                     inputs: tracks.value, events: events)
        Self.enginesMade.add(1, ordering: .relaxed)
        self.source = nil
        self.faces = faces
        self.segmentation = segmentation
        return engine
    }
}

extension Session.Options {
    /// These options for a run into `outputs`: the colour plan is made for the first output's own encoder,
    /// if one has its own (each keeps it, `SessionOutput.encoder`), and for what the first output can carry.
    public func writing(to outputs: [SessionOutput]) -> Session.Options {
        var options = self
        options.encoder = outputs.lazy.compactMap(\.encoder).first ?? encoder
        options.outputIsDeep = outputs.first?.spec.isDeep
        return options
    }

    /// The pattern meets a microphone's clock by being paced to it, which makes it a live source.
    func pacesPattern(_ input: InputSpec) -> Bool { input == .pattern && (pacedToClock || audioDevice != nil) }
}
