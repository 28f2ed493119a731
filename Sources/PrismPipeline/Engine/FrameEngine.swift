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
/// A graph that needs a side input the run lacks is refused in `init`: audio inputs without sound,
/// face filters without a `SideInput` that `suppliesFaceRegions`.
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
        // A graph that reads an input the run lacks: one line naming it, before anything is written.
        if graph.highestInputIndex > tracks.count {
            let count = tracks.count + 1
            throw InvalidRequest("the graph reads input [\(graph.highestInputIndex)], but the run has \(count) input\(count == 1 ? "" : "s")")
        }
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
        let suppliesAudio = sideInputs.contains { $0.suppliesAudio }
        let suppliesFaces = sideInputs.contains { $0.suppliesFaceRegions }
        // A graph that draws faces with nothing to find them: refused, never run with no faces.
        if !suppliesFaces, let error = graph.facesUnavailableError(FramePath.noFacesReason) { throw error }
        let suppliesSegmentation = sideInputs.contains { $0.suppliesSegmentation }
        if !suppliesSegmentation, let error = graph.segmentationUnavailableError() { throw error }
        let audioFeed = suppliesAudio ? nil
            : try AudioFeed.make(for: graph, source: info, analysisAudio: (source as? LoopingSource)?.analysisAudio,
                                 capture: audioCapture, always: configuration.analyzesAudio)
        self.audioFeed = audioFeed
        let strategy = configuration.readback ?? ReadbackStrategy.preferred(for: gpu.info)
        let registry = self.registry
        let notes = self.notes
        let pendingSwitch = self.pendingSwitch
        let (bound, size, labels) = try gpu.perform { () throws -> (GPUBound<FramePath>, Size, [String]) in
            let stage = FramePath(gpuInfo: gpu.info, graph: graph, source: info, strategy: strategy,
                                 compileOptions: configuration.compileOptions,
                                 sizePolicy: configuration.sizeChange, timing: configuration.timing,
                                 frameRate: configuration.constantRate,
                                 audio: configuration.copyAudio && audioCapture == nil ? (audioTrack?.info.audio ?? info.audio) : nil,
                                 pcm: audioCapture?.format, registry: registry)
            stage.events = { event in
                notes.withLock { $0.append(event.description) }
                events?(event)
            }
            stage.keepsOutputOnFailure = configuration.keepsOutputOnFailure
            stage.outputColor = configuration.outputColor
            stage.feedsAudio = audioFeed != nil || suppliesAudio
            stage.findsFaces = suppliesFaces
            stage.segments = suppliesSegmentation
            stage.requestCameraSwitch = { path in pendingSwitch.withLock { $0 = path } }
            stage.taps = taps
            stage.sideInputs = sideInputs
            for track in tracks { stage.inputSizes[track.index] = track.info.size }
            do {
                for sink in sinks { _ = try stage.attach(sink) }
            } catch {
                // Sinks opened before the failing one leave nothing behind.
                for outlet in registry.all { try? outlet.close(failed: true) }
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
        guard capture == nil else {
            throw InvalidRequest("\(Setting.audioFrom) and \(Setting.audio) both give the run's sound; choose one")
        }
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
        // A live source's frame limit is counted where frames can no longer be dropped: on the GPU thread.
        let gpuFrameLimit = live ? configuration.frameLimit : nil
        let sourceConfiguration = { () -> EngineConfiguration in
            var limited = configuration
            if live { limited.frameLimit = nil }
            return limited
        }()
        // Inputs that read ahead need the source that far ahead of the GPU (they are asked for by files, whose
        // frames are never dropped).
        let lookAheads = self.lookAheads
        let frames = BoundedQueue<TimedFrame>(capacity: max(configuration.frameQueueCapacity, (lookAheads.map(\.lookAhead).max() ?? 0) + 1),
                                              overflow: live ? .dropOldest : .block)
        let failure = FirstError()
        let started = StageTimes.now()
        let registry = self.registry
        let stage = self.stage
        let gpu = self.gpu
        let outlets = registry.all
        /// Sound goes to every open sink that takes audio, including those attached while running (a take).
        @Sendable func sendAudio(_ item: SinkItem) {
            for outlet in registry.all where outlet.acceptsAudio && outlet.isOpen { _ = outlet.queue.push(item) }
        }
        let origin = AudioOrigin()
        let expected = configuration.frameLimit ?? sourceInfo.estimatedFrameCount
        let mediaDuration = sourceInfo.duration?.seconds
        // A network input's reconnections and gaps, for progress reports and the report (read from any thread).
        let networkCounters = (source.value as? NetworkSource)?.counters

        @Sendable func fail(_ error: any Error) {
            failure.record(error)
            frames.cancel()
            // Not through the GPU thread: it may be the one waiting for a buffer.
            for outlet in registry.all { outlet.cancel() }
        }

        // Output threads: the first output sink reports progress; sinks attached later start the same way.
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
            outlet.start(audioOrigin: origin, onFrame: report, stopRun: { stop.stop($0) }, fail: fail)
        }
        // A lost stream that holds the run while it reconnects stops waiting when the run is stopped or fails.
        for outlet in outlets {
            (outlet.sink.value as? MovieSink)?.cancellation = { stop.stopReason == .interrupted || failure.hasError }
        }
        for outlet in outlets { launch(outlet) }
        try gpu.perform { stage.value.launch = launch }

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

        // Source thread.
        let sourceTimes = Locked(StageTimes())
        let framesRead = Atomic<Int>(0)
        let inputSpan = Mutex<MediaTime?>(nil)
        let limitReached = Locked<StopReason?>(nil)
        let source = self.source
        let pendingSwitch = self.pendingSwitch
        let eventHandler = self.eventHandler
        let notes = self.notes
        let audioTrack = self.audioTrack
        let readSource: @Sendable () -> Void = {
            // A network input's blocking reads end when the run stops or fails (never a wait on a silent
            // network), and its losses and reconnections become notes.
            if let network = source.value as? NetworkSource {
                network.cancellation = { stop.isStopped || failure.hasError }
                network.onEvent = { line in
                    let event = EngineEvent.networkInput(line)
                    notes.withLock { $0.append(event.description) }
                    eventHandler?(event)
                }
            }
            var loop: SourceLoop
            do {
                loop = try SourceLoop(source: source.value, configuration: sourceConfiguration, origin: origin,
                                      recordingSince: recordingSince)
            } catch {
                fail(error)
                return
            }
            // A movie's sound for audio-reactive filters: frames wait here until their window is decoded.
            var sound = audioFeed?.trackTimeline()
            var queued = 0
            // Frames are numbered as the GPU thread will number them: in the order they are queued.
            func push(_ ready: [TimedFrame]) throws -> Bool {
                for frame in ready {
                    for reader in lookAheads { try reader.read(frame, index: queued) }
                    queued += 1
                    guard frames.push(frame) else { return false }
                }
                return true
            }
            do {
                reading: while !stop.isStopped, !failure.hasError {
                    // A microphone that failed ends the take where it failed.
                    if let error = capture?.error { throw error }
                    if let path = pendingSwitch.take(replacingWith: nil),
                       let event = loop.switchCamera(to: path) {
                        notes.withLock { $0.append(event.description) }
                        eventHandler?(event)
                    }
                    guard let step = try loop.next() else { break }
                    switch step {
                    case .frames(let timed):
                        if sound != nil {
                            guard try push(sound!.hold(timed)) else { break reading }
                        } else {
                            guard try push(timed) else { break reading }
                        }
                        if loop.isDone { break reading }
                    case .audio(let packet):
                        if sound != nil { guard try push(try sound!.decode(packet)) else { break reading } }
                        // Another input's sound is the run's (`audioInput`): this one's is not sent.
                        guard configuration.copyAudio, recordingSince == nil, audioTrack == nil else { continue }
                        sendAudio(.audio(packet))
                    }
                }
                if !stop.isStopped, !failure.hasError {
                    let last = loop.finish()
                    if sound != nil {
                        var pushing = try push(sound!.hold(last))
                        // Frames still waiting for their sound: read on for audio only (a limit ended the frames).
                        tail: while pushing, sound!.isHolding, !stop.isStopped, !failure.hasError, let step = try loop.next() {
                            guard case .audio(let packet) = step else { continue tail }
                            pushing = try push(try sound!.decode(packet))
                        }
                        if pushing { _ = try push(try sound!.finish()) }
                    } else {
                        _ = try push(last)
                    }
                }
            } catch {
                fail(error)
            }
            sourceTimes.withLock { $0 = loop.times }
            let reached = loop.limitReached
            limitReached.withLock { $0 = reached }
            framesRead.store(loop.emitted, ordering: .relaxed)
            let span = loop.sourceSpan.map { $0.last - $0.first }
            inputSpan.withLock { $0 = span }
        }
        let sourceThread = WorkerThread {
            readSource()
            for reader in lookAheads { reader.inputEnded() }
            frames.close()
        }

        // The GPU thread: one job per frame, posted from here; between two frames it is free for other
        // work (what `schedule` posts, a preview's snapshot, a GL object's deletion). At most two frames
        // are posted and not yet done: the next one waits in the thread's queue while one renders (no
        // wake-up between frames), and the source's queue, not the thread's, holds the rest (live sources
        // drop their oldest frames there).
        let inFlight = DispatchSemaphore(value: 2)
        let running = Atomic<Bool>(true)
        let post: @Sendable (@escaping @Sendable (EngineControl) throws -> Void) -> Void = { work in
            gpu.thread.async {
                // Work posted after the last frame's job finds the run over and is dropped, as before the run.
                guard running.load(ordering: .acquiring), !failure.hasError else { return }
                do { try work(EngineControl(stage: stage.value)) } catch { fail(error) }
            }
        }
        let waiting = scheduled.withLock { state -> [@Sendable (EngineControl) throws -> Void] in
            guard case .beforeRun(let waiting) = state else { return [] }
            state = .running(post)
            return waiting
        }
        for work in waiting { post(work) }
        let tracks = self.tracks
        for track in tracks { track.start() }
        var first: MediaTime?
        let rate = configuration.constantRate ?? sourceInfo.frameRate ?? Rational(30, 1)
        let frameStep = MediaTime(value: Int64(rate.den), timescale: Int32(clamping: rate.num))
        var previousTime = 0.0
        var index = 0
        let liveSound = audioFeed?.isLive == true ? audioFeed?.ring : nil
        do {
            while !failure.hasError, var timed = frames.pop() {
                if let liveSound, timed.audio == nil { timed.audio = AudioFeed.liveWindow(liveSound, for: timed, origin: origin) }
                let origin = first ?? timed.pts
                first = origin
                let time = (timed.pts - origin).seconds
                // The other inputs at this frame's time: matched by timestamp, or their newest frame if live.
                var shown: [Int: InputFrame] = [:]
                var inputEnded = false
                for track in tracks {
                    let (picked, ended) = try track.frame(at: timed.pts - origin)
                    if ended, track.input.end == .stop { inputEnded = true }
                    shown[track.index] = picked
                }
                if inputEnded {
                    // `--end stop`: the run ends as if the first input had; the source stops reading.
                    stop.stop(.endOfInput)
                    frames.cancel()
                    break
                }
                // Another input's sound, up to this frame's end: it ends with the run's frames.
                if let audioTrack, configuration.copyAudio {
                    let end = timed.pts - origin + (timed.duration ?? frameStep)
                    for packet in try audioTrack.sound(before: end, origin: origin) { sendAudio(.audio(packet)) }
                }
                let extras = ThreadOwned(shown)
                let (frame, frameIndex, delta) = (timed, index, time - previousTime)
                inFlight.wait()
                let posted = gpu.thread.async {
                    defer { inFlight.signal() }
                    guard !failure.hasError else { return }
                    do {
                        let stage = stage.value
                        try stage.process(frame, index: frameIndex, time: time, timeDelta: delta, inputs: extras.value,
                                          control: EngineControl(stage: stage))
                    } catch {
                        fail(error)
                    }
                }
                if !posted {
                    inFlight.signal()
                    throw InvalidRequest("the GPU thread stopped during the run")
                }
                previousTime = time
                index += 1
                if let limit = gpuFrameLimit, index >= limit {
                    stop.stop(.frameLimit)
                    break
                }
            }
            try gpu.perform {
                running.store(false, ordering: .releasing)
                if !failure.hasError { try stage.value.finish() }
            }
        } catch {
            fail(error)
            try? gpu.perform { running.store(false, ordering: .releasing) }
        }
        scheduled.withLock { $0 = .ended }
        for track in tracks { track.finish() }
        for track in tracks where track.dropped > 0 {
            notes.withLock { $0.append("input \(track.index): \(track.dropped) frame(s) dropped (a live input shows its newest frame)") }
        }
        for outlet in registry.all { outlet.queue.close() }
        sourceThread.join()
        // Frames the GPU never took (a limit reached, a failure) go back to the source now, while it is
        // alive: a camera's frames are its mapped buffers, queued again when released.
        frames.cancel()
        for outlet in registry.all { outlet.join() }
        capture?.stop()
        if let capture {

            if capture.overruns > 0 {
                notes.withLock { $0.append("audio: \(capture.overruns) overrun(s), samples lost (filled with silence)") }
            }
        }
        if let error = failure.error {
            var kept: [String] = []
            for outlet in registry.all { if let path = try? outlet.close(failed: true) { kept.append(path) } }
            throw kept.isEmpty ? error : RecordingKeptError(underlying: error, kept: kept)
        }
        var finishTimes = StageTimes()
        let t0 = StageTimes.now()
        do {
            for outlet in registry.all { try outlet.close(failed: false) }
        } catch {
            // An output that cannot be finished (no frame came) says what the input's damage cost it.
            let damage = inputDamage.flatMap(\.lines)
            throw damage.isEmpty ? error : DamagedInputError(underlying: error, damage: damage)
        }
        finishTimes.add(.encode, nanoseconds: StageTimes.now() - t0, count: 0)

        var report = RunReport()
        report.renderer = gpuInfo.description
        report.framesIn = framesRead.load(ordering: .relaxed)
        report.inputSpan = inputSpan.withLock { $0 }
        // What the output holds: a size limit may have left out the frames the encoder still held.
        report.framesOut = progressOutlet.map { $0.sink.value.framesInOutput ?? $0.framesWritten } ?? 0
        report.framesDropped = frames.dropped
        // Per output: what a sink says of itself (a stream that fell behind, was lost; a virtual camera's drops).
        for outlet in registry.all {
            let lines = outlet.notes
            notes.withLock { $0 += lines }
        }
        // Damaged packets skipped and counted (FFmpeg's default), and where a truncated input ended.
        report.damage = source.value.decodeDamage?.summary
        if report.damage?.isEmpty == true { report.damage = nil }
        report.warnings = inputDamage.flatMap(\.lines)
        report.network = networkCounters?.statistics
        if let network = report.network, network.reconnects > 0 || network.gaps > 0, let source = source.value as? NetworkSource {
            notes.withLock { $0.append("\(source.label): \(network.summary)") }
        }
        if let camera = source.value as? CameraSource, camera.framesDroppedByDevice > 0 {
            notes.withLock { $0.append("the camera dropped \(camera.framesDroppedByDevice) frame(s) while every buffer was in use") }
        }
        report.notes = notes.withLock { $0 }
        report.wallSeconds = Double(StageTimes.now() - started) / 1e9
        report.stages.merge(sourceTimes.withLock { $0 })
        let gpuFigures = try gpu.perform { () -> (times: StageTimes, passes: [String], timing: String, medians: [Double]) in
            let stage = stage.value
            return (stage.times, stage.renderer?.passLabels ?? [],
                    stage.timer?.method.rawValue ?? "CPU submit time", stage.timer?.medianMilliseconds() ?? [])
        }
        report.stages.merge(gpuFigures.times)
        var encode = finishTimes
        if let progressOutlet {
            encode.add(.encode, nanoseconds: progressOutlet.busyNanoseconds, count: progressOutlet.framesWritten)
        }
        report.stages.merge(encode)
        report.interrupted = stop.stopReason == .interrupted
        report.stopReason = stop.stopReason ?? limitReached.withLock { $0 } ?? .endOfInput
        // A limit met only while the encoder was flushed at the end: the output stopped there, not at the input's end.
        if let outlet = progressOutlet, let kept = outlet.sink.value.framesInOutput, kept < outlet.framesWritten,
           [.endOfInput, .frameLimit, .durationLimit].contains(report.stopReason) {
            report.stopReason = outlet.sink.value.stopReason
        }
        report.poolAllocated = bufferPool.allocated
        report.poolCapacity = progressOutlet?.bufferCount ?? 0
        report.passLabels = gpuFigures.passes
        report.filterTiming = gpuFigures.timing
        report.passMilliseconds = gpuFigures.medians
        var last = RunProgress(frames: report.framesOut, expectedFrames: expected, elapsed: report.wallSeconds,
                               mediaSeconds: nil, mediaDuration: nil, finished: true)
        last.bytes = progressOutlet?.sink.value.bytesWritten
        last.dropped = report.framesDropped
        last.network = report.network
        last.stopReason = report.stopReason
        progress?(last)
        return report
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

/// What becomes of work given to `FrameEngine.schedule`.
private enum ScheduledWork: Sendable {
    /// Kept for the start of the run.
    case beforeRun([@Sendable (EngineControl) throws -> Void])
    /// Posted to the GPU thread, where it runs between two frames.
    case running(@Sendable (@escaping @Sendable (EngineControl) throws -> Void) -> Void)
    /// The run is over: dropped.
    case ended
}
