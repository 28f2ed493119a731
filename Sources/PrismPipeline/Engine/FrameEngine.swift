import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import Synchronization

/// How an engine runs, besides its source, graph and sinks.
public struct EngineConfiguration: Sendable {
    /// nil: the engine's choice for the driver (sync on software renderers, a PBO ring on real GPUs).
    public var readback: ReadbackStrategy?
    /// How the graph is compiled (fusion, the Y'CbCr route, intermediate format, limits).
    package var compileOptions = CompileOptions()
    /// Fuse filters into as few passes as possible (off only to measure what fusion buys).
    public var fuse: Bool {
        get { compileOptions.fuse }
        set { compileOptions.fuse = newValue }
    }
    /// See `CompileOptions.yuvRoute`.
    public var yuvRoute: Bool {
        get { compileOptions.yuvRoute }
        set { compileOptions.yuvRoute = newValue }
    }
    /// What happens when the input changes size mid-run; by default the output keeps its size.
    public var sizeChange = SizeChangePolicy.keepOutputSize
    /// Whether the filter passes are timed (for `--stats` and the preview); off by default.
    public var timing = PassTiming.off
    /// Stop after this many frames: frames read from a file or pipe; frames that reach the GPU from a live
    /// source (its queue drops the frames the engine is late for, and every frame counted is written).
    public var frameLimit: Int?
    /// Stop after this much input time.
    public var durationLimit: MediaTime?
    /// Convert to this constant rate, dropping or repeating frames (files and raw input).
    public var constantRate: Rational?
    /// Release each frame at its timestamp on the clock (a preview looping a clip; the pattern recorded
    /// beside a microphone), as a camera would deliver it.
    public var pacedToClock = false
    /// nil: live sources (cameras) drop frames the engine is too late for; files and pipes never do.
    public var dropLateFrames: Bool?
    /// Frames decoded ahead of the GPU.
    public var frameQueueCapacity = 4
    /// Copy the source's compressed audio into sinks that take audio.
    public var copyAudio = true
    /// Whose sound the sinks take (`--audio-from`): 0 the first input's, N the input `[N]` (a file with
    /// sound, placed by its offset; not with `audioCapture`). Audio-reactive filters hear the first input.
    public var audioInput = 0
    /// A live recording (a camera, a microphone) keeps what it recorded when the run fails: the sinks are
    /// salvaged (`FrameSink.salvage`) instead of aborted, and the error says where the recording is. Files
    /// and pipes leave nothing on failure.
    public var keepsOutputOnFailure = false
    /// The colour the graph converts the output to (a `tonemap` in front of it): what the sinks pack in
    /// and tag; nil: the source's.
    public var outputColor: VideoColor? {
        didSet { compileOptions.outputColorSpace = outputColor?.space }
    }
    /// Decode the input's sound for audio-reactive filters even when the first graph has no audio inputs
    /// (`prism dev`, whose shader may gain one). Otherwise sound is decoded only for a graph that needs it.
    public var analyzesAudio = false

    /// The defaults: fusion on, no limits, no rate conversion, no pass timing.
    public init() {}
}

/// The one frame engine every front end drives: a source thread → a bounded queue → the GPU thread
/// (`FramePath`: upload, side inputs, the graph, readback into each sink's pooled buffers, taps; one job
/// per frame, so other work for the thread runs between frames) → one output thread per sink.
///
/// A graph that reads side data the run lacks is refused in `init` (`FilterGraph.missingSideDataError`):
/// face filters without a `SideInput` that supplies regions, audio inputs without sound.
///
/// Policies are data (`EngineConfiguration`): live sources drop late frames and count them, files and
/// pipes get back-pressure; a format change recompiles the graph between frames; a camera switch replaces
/// the device without stopping the sinks. Everything that can fail because of the user's input (source,
/// GPU, graph, sink paths) fails in `init`, before the first frame.
///
/// ```swift
/// let gpu = try GPUContext()
/// let engine = try FrameEngine(source: SourceSpec(input: .movie("in.mp4")),
///                              graph: try GraphBinder().bind("invert, mono"),
///                              sinks: [MovieSink(path: "out.mp4", settings: VideoEncoderSettings())], gpu: gpu)
/// let report = try engine.run()
/// ```
public final class FrameEngine: Sendable {
    /// What the opened source produces, as it was when the engine was made.
    public let sourceInfo: SourceInfo
    /// The inputs besides the first, as the run's first lines describe them: `input 1 [logo]: …`.
    package var otherInputSummaries: [String] {
        tracks.map { "input \($0.index)" + ($0.input.name.map { " [\($0)]" } ?? "") + ": \($0.info.summary)" }
    }
    /// What the GPU context runs on.
    public let gpuInfo: GPUInfo
    /// The size of the graph's output (the first output sink's frames).
    public let outputSize: Size
    /// The graph's passes as first compiled.
    public let passLabels: [String]
    private let configuration: EngineConfiguration
    private let source: ThreadOwned<MediaSource>
    private let gpu: GPUContext
    private let stage: GPUBound<FramePath>
    private let registry = OutletRegistry()
    private let audioCapture: ThreadOwned<AudioCaptureSource?>
    /// Sound for audio-reactive filters (nil when no graph of the run needs it): the input's track,
    /// decoded on the source thread, or the microphone's periods.
    private let audioFeed: AudioFeed?
    private let pendingSwitch = Locked<String?>(nil)
    /// Where `schedule` sends work: kept until the run starts, then posted to the GPU thread, then dropped.
    private let scheduled = Locked(ScheduledWork.beforeRun([]))
    private let eventHandler: (@Sendable (EngineEvent) -> Void)?
    private let notes = Locked<[String]>([])
    private let hasRun = Atomic<Bool>(false)
    /// The inputs besides the first, matched to its frames (`InputTrack`).
    private let tracks: [InputTrack]
    /// The input among `tracks` whose sound the sinks take instead of the first input's (`audioInput`).
    private let audioTrack: InputTrack?
    /// Side inputs that see each frame on the source thread first (a file's face detector reading ahead).
    private let lookAheads: [any LookAheadInput]

    /// - Parameters:
    ///   - source: an opened source; the engine reads it from its own thread from now on.
    ///   - sinks: opened here, in order, before the first frame (the first output sink drives progress).
    ///   - audioCapture: a microphone recorded into the sinks that take audio, on the video's time line
    ///     (live sources only: a camera, or the pattern paced to the clock); it also feeds the graph's
    ///     audio-reactive filters (`AudioFeed`). Without one, such filters take the input's own track, and a
    ///     graph with audio inputs on an input without sound throws here.
    ///   - events: told what happens during the run (camera switches, recompiles), from any thread.
    package init(source: MediaSource, graph: FilterGraph, sinks: [any FrameSink], configuration: EngineConfiguration = .init(),
                gpu: GPUContext, audioCapture: AudioCaptureSource? = nil, taps: [any FrameTap] = [],
                sideInputs: [any SideInput] = [], inputs tracks: [InputTrack] = [],
                events: (@Sendable (EngineEvent) -> Void)? = nil) throws {
        // A graph that reads an input the run lacks is refused where its inputs are sized
        // (`FilterGraph.setInputSizes`, before anything is written).
        self.tracks = tracks
        let audioTrack = try Self.audioTrack(configuration.audioInput, among: tracks, capture: audioCapture)
        self.audioTrack = audioTrack
        // Its packets are kept for the sinks only when there are packets to copy (never piled up unread).
        if configuration.copyAudio { audioTrack?.carriesSound() }
        // A rate the frames cannot be timed by fails here, before the first frame, not on the source thread.
        if let rate = configuration.constantRate { _ = try FrameTimer.step(at: rate) }
        let info = source.info
        sourceInfo = info
        gpuInfo = gpu.info
        self.configuration = configuration
        self.source = ThreadOwned(source)
        self.gpu = gpu
        self.audioCapture = ThreadOwned(audioCapture)
        eventHandler = events
        lookAheads = sideInputs.compactMap(\.lookAheadInput).filter { $0.lookAhead > 0 }
        var sideData = sideInputs.reduce(SideData()) { $0.union($1.supplies) }
        let audioFeed = sideData.contains(.audio) ? nil
            : try AudioFeed.make(for: graph, source: info, analysisAudio: (source as? LoopingSource)?.analysisAudio,
                                 capture: audioCapture, always: configuration.analyzesAudio)
        self.audioFeed = audioFeed
        if audioFeed != nil { sideData.insert(.audio) }
        // A graph that reads what the run lacks (faces with nothing to find them, audio inputs on an input
        // without sound): refused, never run without it.
        if let error = graph.missingSideDataError(supplied: sideData, noSound: AudioFeed.noTrackReason) { throw error }
        let strategy = configuration.readback ?? ReadbackStrategy.preferred(for: gpu.info)
        let pendingSwitch = self.pendingSwitch
        let setup = FramePath.Setup(
            gpuInfo: gpu.info, graph: graph, source: info, strategy: strategy, compileOptions: configuration.compileOptions,
            sizePolicy: configuration.sizeChange, timing: configuration.timing, frameRate: configuration.constantRate,
            audio: configuration.copyAudio && audioCapture == nil ? (audioTrack?.info.audio ?? info.audio) : nil,
            pcm: audioCapture?.format, keepsOutputOnFailure: configuration.keepsOutputOnFailure,
            outputColor: configuration.outputColor, sideData: sideData, taps: taps, sideInputs: sideInputs,
            inputSizes: Dictionary(tracks.map { ($0.index, $0.info.size) }, uniquingKeysWith: { $1 }),
            events: Self.announcer(notes: notes, handler: events), requestCameraSwitch: { path in pendingSwitch.withLock { $0 = path } })
        let registry = self.registry
        let (bound, size, labels) = try gpu.perform { () throws -> (GPUBound<FramePath>, Size, [String]) in
            let stage = FramePath(setup, registry: registry)
            do {
                for sink in sinks { _ = try stage.attach(sink) }
            } catch {
                // Sinks opened before the failing one leave nothing behind.
                for outlet in registry.all { _ = try? outlet.close(failed: true) }
                stage.release()
                throw error
            }
            return (GPUBound(stage, on: gpu), stage.renderer?.outputSize ?? info.size, stage.renderer?.passLabels ?? [])
        }
        stage = bound
        outputSize = size
        passLabels = labels
    }

    /// The input whose sound the run takes (`EngineConfiguration.audioInput`), nil for the first; one line
    /// when it cannot be: no such input, a live one, one without sound, or a microphone recorded as well.
    private static func audioTrack(_ index: Int, among tracks: [InputTrack], capture: AudioCaptureSource?) throws -> InputTrack? {
        guard index != 0 else { return nil }
        guard let track = tracks.first(where: { $0.index == index }) else {
            let count = tracks.count + 1
            throw InvalidRequest("\(Setting.audioFrom) \(index): the run has \(count) input\(count == 1 ? "" : "s") ([0] to [\(count - 1)])")
        }
        let label = "input \(index)\(track.input.name.map { " (\($0))" } ?? "")"
        // The session refuses both before the microphone is opened (`Session.Options.audioInput`).
        precondition(capture == nil, "audioInput and audioCapture both give the run's sound")
        guard !track.isLive else {
            throw InvalidRequest("\(Setting.audioFrom): \(label) is live; only a file's sound can be the run's")
        }
        guard track.info.audio != nil else { throw InvalidRequest("\(Setting.audioFrom): \(label) has no sound") }
        return track
    }

    /// Opens `spec` and builds an engine on it.
    public convenience init(source spec: SourceSpec, graph: FilterGraph, sinks: [any FrameSink],
                            configuration: EngineConfiguration = .init(), gpu: GPUContext,
                            audioCapture: AudioCaptureSource? = nil, taps: [any FrameTap] = [],
                            sideInputs: [any SideInput] = [], inputs: [ExtraInput] = [],
                            events: (@Sendable (EngineEvent) -> Void)? = nil) throws {
        try self.init(source: try spec.open(), graph: graph, sinks: sinks, configuration: configuration, gpu: gpu,
                      audioCapture: audioCapture, taps: taps, sideInputs: sideInputs,
                      inputs: try inputs.enumerated().map { try InputTrack(index: $0.offset + 1, input: $0.element) },
                      events: events)
    }

    deinit {
        let stage = self.stage
        try? gpu.perform { stage.value.release() }
    }

    /// Switches to another camera between two frames; the sinks go on (see `SizeChangePolicy` for a
    /// camera of another size). The outcome is an `EngineEvent`. Ignored for inputs other than cameras.
    public func switchCamera(to path: String) {
        pendingSwitch.withLock { $0 = path }
    }

    /// Runs `work` on the GPU thread before the next frame (a new graph, a parameter, a sink to attach):
    /// a job of its own there, between two frames' jobs. Given before the run, it runs at the start, before
    /// the first frame; after the run, it is dropped. An error it throws fails the run.
    public func schedule(_ work: @escaping @Sendable (EngineControl) throws -> Void) {
        let post = scheduled.withLock { state -> (@Sendable (@escaping @Sendable (EngineControl) throws -> Void) -> Void)? in
            switch state {
            case .beforeRun(let waiting):
                state = .beforeRun(waiting + [work])
                return nil
            case .running(let post): return post
            case .ended: return nil
            }
        }
        post?(work)
    }

    /// Runs to the end of the input, a limit, or `stop`; returns when every sink is finished. On an error
    /// every sink is aborted (a movie leaves no file) and the error rethrown; on a stop they are finished.
    /// An engine runs once.
    public func run(stop: StopSignal = StopSignal(), progress: (@Sendable (RunProgress) -> Void)? = nil) throws -> RunReport {
        guard !hasRun.exchange(true, ordering: .acquiringAndReleasing) else { throw InvalidRequest("an engine runs once") }
        let configuration = self.configuration
        let live = configuration.dropLateFrames ?? (sourceInfo.isLive || configuration.pacedToClock)
        let sourceStage = SourceStage(source: source, configuration: configuration, live: live, lookAheads: lookAheads,
                                      audioFeed: audioFeed, copiesAudio: configuration.copyAudio && audioTrack == nil,
                                      pendingSwitch: pendingSwitch, announce: Self.announcer(notes: notes, handler: eventHandler))
        let frames = sourceStage.frames
        let failure = FirstError()
        let started = StageTimes.now()
        let registry = self.registry
        let signals = RunSignals(stop: stop, failure: failure) { error in
            failure.record(error)
            frames.cancel()
            // Not through the GPU thread: it may be the one waiting for a buffer.
            for outlet in registry.all { outlet.cancel() }
        }
        /// Sound goes to every open sink that takes audio, including those attached while running (a take).
        let sendAudio: @Sendable (SinkItem) -> Void = { item in
            for outlet in registry.all where outlet.acceptsAudio && outlet.isOpen { _ = outlet.queue.push(item) }
        }
        let origin = AudioOrigin()
        let expected = configuration.frameLimit ?? sourceInfo.estimatedFrameCount
        // A network input's reconnections and gaps, for progress reports and the report (read from any thread).
        let networkCounters = (source.value as? NetworkSource)?.counters
        let progressOutlet = try startOutputs(signals, frames: frames, origin: origin, started: started, expected: expected,
                                              networkCounters: networkCounters, progress: progress)

        // The microphone, if any: its sound goes to the sinks that take audio.
        let capture = audioCapture.value
        let recordingSince = capture.map { _ in monotonicMicroseconds() }
        // Sinks attached later (a take) get it from then on.
        let audioFeed = self.audioFeed
        capture?.start { chunk in
            sendAudio(.pcm(chunk))
            audioFeed?.ring.append(interleaved: chunk.samples, channels: chunk.format.channels,
                                   at: MediaTime(value: chunk.captureTime, timescale: 1_000_000))
            return !failure.hasError
        }
        let sourceThread = sourceStage.start(signals, origin: origin, recordingSince: recordingSince, capture: capture,
                                             sendAudio: sendAudio)

        let dispatcher = GPUDispatcher(gpu: gpu, stage: stage, tracks: tracks,
                                       soundTrack: configuration.copyAudio ? audioTrack : nil, signals: signals)
        dispatcher.takeScheduledWork(from: scheduled)
        let rate = configuration.constantRate ?? sourceInfo.frameRate ?? Rational(30, 1)
        // A live source's frame limit is counted where frames can no longer be dropped: on the GPU thread.
        dispatcher.dispatch(frames, frameLimit: live ? configuration.frameLimit : nil,
                            frameStep: MediaTime(value: Int64(rate.den), timescale: Int32(clamping: rate.num)),
                            audioOrigin: origin, liveSound: audioFeed?.isLive == true ? audioFeed?.ring : nil,
                            sendAudio: sendAudio)
        scheduled.withLock { $0 = .ended }
        let dropNotes = dispatcher.finishInputs()
        notes.withLock { $0 += dropNotes }
        for outlet in registry.all { outlet.queue.close() }
        sourceThread.join()
        // Frames the GPU never took (a limit reached, a failure) go back to the source now, while it is
        // alive: a camera's frames are its mapped buffers, queued again when released.
        frames.cancel()
        for outlet in registry.all { outlet.join() }
        capture?.stop()
        if let capture, capture.overruns > 0 {
            notes.withLock { $0.append("audio: \(capture.overruns) overrun(s), samples lost (filled with silence)") }
        }

        let builder = RunReportBuilder(gpu: gpu, stage: stage, source: source, registry: registry, progressOutlet: progressOutlet,
                                       notes: notes, inputDamage: { [self] in inputDamage },
                                       networkCounters: networkCounters, started: started)
        let finishTimes = try builder.finishOutputs(after: failure)
        let report = try builder.report(source: sourceStage.counts, framesDropped: frames.dropped, finishTimes: finishTimes,
                                        stop: stop, poolAllocated: bufferPool.allocated)
        progress?(builder.lastProgress(of: report, expectedFrames: expected))
        return report
    }

    /// Starts each sink's output thread (sinks attached while running start the same way); returns the
    /// output whose frames progress reports count.
    private func startOutputs(_ signals: RunSignals, frames: BoundedQueue<TimedFrame>, origin: AudioOrigin, started: UInt64,
                              expected: Int?, networkCounters: NetworkCounters?,
                              progress: (@Sendable (RunProgress) -> Void)?) throws -> SinkOutlet? {
        let outlets = registry.all
        let mediaDuration = sourceInfo.duration?.seconds
        // The first output sink reports progress.
        // (An output that takes every frame: one that may skip frames to keep up, a network stream, counts less.)
        let progressOutlet = outlets.first { $0.point == .output && $0.delivery == .everyFrame }
            ?? outlets.first { $0.point == .output }
        let throttle = ProgressThrottle(start: started)
        let launch = { @Sendable (outlet: SinkOutlet) in
            var report: (@Sendable (ProcessedFrame, Int, Int64?) -> Void)?
            if let progress, outlet === progressOutlet {
                report = { frame, written, bytes in
                    guard let elapsed = throttle.due() else { return }
                    var snapshot = RunProgress(frames: written, expectedFrames: expected, elapsed: elapsed,
                                               mediaSeconds: frame.pts.seconds, mediaDuration: mediaDuration)
                    snapshot.bytes = bytes
                    snapshot.dropped = frames.dropped
                    snapshot.network = networkCounters?.statistics
                    progress(snapshot)
                }
            }
            outlet.start(audioOrigin: origin, onFrame: report, stopRun: { signals.stop.stop($0) }, fail: signals.fail)
        }
        // A lost stream that holds the run while it reconnects stops waiting when the run is stopped or fails.
        for outlet in outlets {
            (outlet.sink.value as? MovieSink)?.cancellation = {
                signals.stop.stopReason == .interrupted || signals.failure.hasError
            }
        }
        for outlet in outlets { launch(outlet) }
        let stage = self.stage
        try gpu.perform { stage.value.launch = launch }
        return progressOutlet
    }

    /// Tells the run's notes and its event handler.
    private static func announcer(notes: Locked<[String]>, handler: (@Sendable (EngineEvent) -> Void)?)
        -> @Sendable (EngineEvent) -> Void {
        { event in
            notes.withLock { $0.append(event.description) }
            handler?(event)
        }
    }

    /// What every input's decoders skipped so far, the first input's first.
    private var inputDamage: [DamageSummary] {
        ([source.value.decodeDamage] + tracks.map(\.damage)).compactMap { $0?.summary }
    }

    /// The first output sink's buffer pool: buffers allocated so far (flat once the engine is warm) and
    /// buffers out of the pool now (in readback, queued or held by the sink). Read from any thread.
    public var bufferPool: (allocated: Int, outstanding: Int) {
        registry.all.first { $0.point == .output }?.poolCounts ?? (0, 0)
    }
}
