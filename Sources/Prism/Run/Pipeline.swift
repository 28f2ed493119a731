import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia

/// A request to stop a run early (Ctrl-C, SIGTERM, the preview's stop button). The run finishes the
/// frames already read and closes its output properly.
public final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    public init() {}
    public func stop() { lock.withLock { stopped = true } }
    public var isStopped: Bool { lock.withLock { stopped } }
}

/// One `prism run`: source → GPU (upload, filter graph, pack, readback) → encoder and muxer, on three
/// threads joined by bounded queues, so decoding, GPU work and encoding overlap.
///
/// Everything that can fail because of the user's input (the source, the GPU, the graph, the output
/// path, the codec) fails in `init`, before the first frame; `run` then only meets errors in the data.
public final class Pipeline: @unchecked Sendable {
    public let options: RunOptions
    public let sourceInfo: SourceInfo
    public let gpuInfo: GPUInfo
    public let outputSize: Size
    public let passLabels: [String]
    private let source: MediaSource
    private let gpu: GPUContext
    private let gpuState: GPUState
    private let pool: FrameBufferPool
    private let sink: Sink
    private let readbackStrategy: ReadbackStrategy
    /// A camera switch asked for and not yet made (made by the source thread between two frames).
    private let pendingCameraSwitch = LockedBox<String?>(nil)
    /// --fps on a movie or raw input: the constant rate frames are dropped or repeated to.
    private let conversionRate: Rational?
    /// `--audio`: the ALSA capture recorded into the movie.
    private let audio: AudioCaptureSource?

    private enum Sink {
        case movie(MovieWriter)
        case raw(RawVideoSink)
        case discard
    }

    /// What crosses from the source and GPU threads to the output thread.
    private enum Output {
        case video(PooledFrameBuffer, pts: MediaTime, duration: MediaTime?)
        case audio(AudioPacket)
        /// Captured sound, stamped on CLOCK_MONOTONIC.
        case pcm(AudioChunk)
    }

    /// GL objects of the run; created and destroyed on the GPU thread only.
    private final class GPUState: @unchecked Sendable {
        var renderer: GraphRenderer?
        var uploader: FrameUploader?
        var readback: FrameReadback<ReadbackTag>?
        var timer: PassTimer?
        /// What a recompile needs: the graph, its sink and options, and the size the output must keep.
        var graph: FilterGraph?
        var sinkFormat = PixelFormat.rgba
        var compileOptions = CompileOptions()
        var outputSize = Size(width: 0, height: 0)

        /// A renderer for frames of another format or size (a camera switched to a device that delivers
        /// another size), with the same output: when the graph's output follows the input size, a final
        /// scale to the run's output size is appended first. The sinks and readback stay as they are.
        func recompile(for format: PixelFormat, size: Size) throws -> GraphRenderer {
            guard let graph, let old = renderer else { throw UsageError("recompile before the first compile") }
            var candidate = try GraphRenderer(graph: graph, sourceFormat: format, sourceSize: size, sinks: [sinkFormat],
                                              options: compileOptions)
            if candidate.sinkLayouts[0] != old.sinkLayouts[0] {
                try Pipeline.appendScale(to: graph, size: outputSize)
                candidate = try GraphRenderer(graph: graph, sourceFormat: format, sourceSize: size, sinks: [sinkFormat],
                                              options: compileOptions)
            }
            guard candidate.sinkLayouts[0] == old.sinkLayouts[0] else {
                throw UsageError("input changed to \(format.rawValue) \(size): the graph's output no longer matches the output")
            }
            // Per-pass timings only go on while the passes are the same.
            if let timer, candidate.passCount == old.passCount { candidate.timer = timer } else { timer = nil }
            renderer = candidate
            return candidate
        }
    }

    private struct ReadbackTag {
        let buffer: PooledFrameBuffer
        let pts: MediaTime
        let duration: MediaTime?
    }

    public init(options: RunOptions, graph: FilterGraph, gpu: GPUContext? = nil) throws {
        self.options = options
        if options.audioDevice != nil {
            switch options.input {
            case .pattern, .camera: break
            case .movie, .standardInput:
                throw UsageError("--audio records alongside the camera or the pattern, not a movie or raw input "
                                 + "(their time line is not the clock's)")
            }
            guard case .movie = options.output else { throw UsageError("--audio needs a movie output (-o FILE)") }
        }
        // 1. The source.
        let source: MediaSource
        switch options.input {
        case .pattern:
            let rate = options.frameRate ?? Rational(30, 1)
            let frames = options.frameLimit
                ?? (options.durationLimit == nil ? RunOptions.defaultPatternSeconds * Int(rate.doubleValue.rounded()) : nil)
            source = try TestPatternSource(size: options.size ?? Size(width: 1280, height: 720), frameRate: rate,
                                           frameCount: frames)
        case .movie(let path):
            source = try MovieSource(url: path)
        case .standardInput(let format):
            source = RawVideoSource(fileDescriptor: 0, format: format)
        case .camera(let path):
            // --size and --fps are asked of the camera; it reports what it chose.
            source = try CameraSource(path: path, configuration: .init(size: options.size, frameRate: options.frameRate))
        }
        self.source = source
        sourceInfo = source.info
        switch options.input {
        case .pattern, .camera: conversionRate = nil
        case .movie, .standardInput: conversionRate = options.frameRate
        }
        // 2. The GPU and the compiled graph.
        let gpu = try gpu ?? GPUContext(options: options.gpu)
        self.gpu = gpu
        gpuInfo = gpu.info
        let strategy = options.readback ?? ReadbackStrategy.preferred(for: gpu.info)
        readbackStrategy = strategy
        if case .movie = options.input, let size = options.size {
            try Pipeline.appendScale(to: graph, size: size)
        } else if case .standardInput = options.input, let size = options.size {
            try Pipeline.appendScale(to: graph, size: size)
        } else if case .camera = options.input, let size = options.size, size != sourceInfo.size {
            // The camera has no such size and gave its closest: the output keeps the size asked for.
            try Pipeline.appendScale(to: graph, size: size)
        }
        let sinkFormat: PixelFormat
        switch options.output {
        case .movie: sinkFormat = options.encoder.pixelFormat
        case .standardOutput(let format), .discard(let format): sinkFormat = format
        }
        let state = GPUState()
        let info = sourceInfo
        let compileOptions = CompileOptions(fuse: options.fuse)
        let wantsTimer = options.stats
        let layout = try gpu.perform { () throws -> PackedFrameLayout in
            let renderer = try GraphRenderer(graph: graph, sourceFormat: info.pixelFormat, sourceSize: info.size,
                                             sinks: [sinkFormat], options: compileOptions)
            state.renderer = renderer
            state.graph = graph
            state.sinkFormat = sinkFormat
            state.compileOptions = compileOptions
            state.outputSize = renderer.sinkLayouts[0].size
            state.uploader = FrameUploader()
            state.readback = try FrameReadback(strategy: strategy, layout: renderer.sinkLayouts[0])
            if wantsTimer {
                // llvmpipe's timer queries only agree with the wall clock when frames do not overlap (the
                // benchmark checks this); in a running pipeline they do, so software renderers are fenced.
                let timer = PassTimer(passCount: renderer.passCount, preferQueries: !gpu.info.isSoftware,
                                      extensions: gpu.info.extensions)
                renderer.timer = timer
                state.timer = timer
            }
            return renderer.sinkLayouts[0]
        }
        gpuState = state
        outputSize = layout.size
        passLabels = try gpu.perform { state.renderer?.passLabels ?? [] }
        // 3. The output: opened (and its path checked) before any frame is processed.
        let outputColorSpace = info.pixelFormat.isYUV
            ? info.colorSpace : YUVColorSpace(matrix: .defaultFor(layout.size), range: .limited)
        // The audio capture is opened before the output file, so a bad device leaves no file behind.
        if let device = options.audioDevice {
            audio = try AudioCaptureSource(device: device)
        } else {
            audio = nil
        }
        switch options.output {
        case .movie(let path):
            var video = VideoStreamConfig(source: info, size: layout.size, colorSpace: outputColorSpace)
            if let rate = conversionRate { video.frameRate = rate }
            sink = .movie(try MovieWriter(path: path, video: video, settings: options.encoder,
                                          audio: audio == nil ? info.audio : nil, pcm: audio?.format))
        case .standardOutput(let format):
            sink = .raw(RawVideoSink(fileDescriptor: 1, format: format))
        case .discard:
            sink = .discard
        }
        // Readback ring + frames in the output queue + what an encoder may hold (frame threads).
        pool = FrameBufferPool(layout: layout, capacity: 16)
    }

    deinit { close() }

    /// Buffers the readback pool has allocated so far (flat once the pipeline is warm).
    public var poolAllocatedCount: Int { pool.allocatedCount }

    /// Releases the GL objects on their thread. The GPU context stays open if the caller gave it.
    public func close() {
        let state = gpuState
        try? gpu.perform {
            state.readback = nil
            state.timer = nil
            state.renderer = nil
            state.uploader = nil
        }
    }

    /// Asks for a switch to another camera, made between two frames by the source thread; the run goes
    /// on with the same output (a different frame size from the new camera makes the GPU thread recompile
    /// the graph for it, keeping the output size). A camera that cannot be opened leaves the current one
    /// running; either way the outcome is one of the report's notes. Ignored for inputs other than cameras.
    public func switchCamera(to path: String) {
        pendingCameraSwitch.value = path
    }

    /// The graph's output size for a source, and the scale step --size adds for inputs whose size is their own.
    fileprivate static func appendScale(to graph: FilterGraph, size: Size) throws {
        guard let scale = BuiltinFilters.named("scale") else {
            throw UsageError("--size needs the scale filter, which this build lacks")
        }
        let (kernel, values) = try scale.instantiate(["size": .size(size)])
        try graph.append("scale", kernel: kernel, parameters: values)
    }

    /// Runs to the end of the input, the frame or duration limit, or `stop`. On an error the output is
    /// removed (a movie) and the error rethrown; on a stop the output is finished and playable.
    public func run(stop: StopSignal = StopSignal(), progress: ((RunProgress) -> Void)? = nil) throws -> RunReport {
        let live = sourceInfo.isLive
        let frames = BoundedQueue<TimedFrame>(capacity: 4, overflow: live ? .dropOldest : .block)
        let outputs = BoundedQueue<Output>(capacity: 32)
        let failure = FirstError()
        let pool = self.pool
        let started = StageTimes.now()
        var report = RunReport()
        report.renderer = gpuInfo.description
        report.poolCapacity = pool.capacity

        @Sendable func fail(_ error: Error) {
            failure.record(error)
            frames.cancel()
            outputs.cancel()
            pool.cancel()
        }

        // Source thread: decode, enforce limits, pass audio straight to the output.
        let sourceDone = DispatchSemaphore(value: 0)
        let sourceStats = LockedBox(StageTimes())
        let framesRead = LockedBox(0)
        let source = UncheckedSource(source: self.source)
        let frameLimit = options.frameLimit
        let durationLimit = options.durationLimit
        let conversion = conversionRate
        let pendingSwitch = pendingCameraSwitch
        let scheduledSwitch = options.cameraSwitch
        let notes = LockedBox<[String]>([])
        // --audio: capture times (CLOCK_MONOTONIC, µs) minus `origin` are on the video's time line. The
        // camera's origin is its first frame's stamp. The pattern's time stamps are synthetic: its origin
        // is the clock when its first frame is made, and its frames are paced to the clock from there,
        // so frame N is made at origin + N / rate, as a camera would deliver it.
        let origin = LockedBox<Int64?>(nil)
        let paced = audio != nil && options.input == .pattern
        let recordsAudio = audio != nil
        if let audio {
            audio.start { chunk in outputs.push(.pcm(chunk)) }
        }
        Thread.detachNewThread {
            defer { frames.close(); sourceDone.signal() }
            var times = StageTimes()
            var limiter = FrameTimer(frameLimit: frameLimit, durationLimit: durationLimit, rate: conversion)
            do {
                reading: while !stop.isStopped, !failure.hasError {
                    if let path = pendingSwitch.take(), let camera = source.source as? CameraSource {
                        do {
                            let change = try camera.switchDevice(to: path)
                            notes.update { $0.append(change.description) }
                        } catch {
                            notes.update { $0.append("camera switch failed, \(camera.path) kept: \(error)") }
                        }
                    }
                    let t0 = StageTimes.now()
                    guard let event = try source.source.next() else { break }
                    switch event {
                    case .video(let frame):
                        times.add(.decode, since: t0)
                        if recordsAudio {
                            let ptsMicroseconds = frame.pts.ticks(in: Rational(1, 1_000_000))
                            if paced {
                                if origin.value == nil { origin.value = monotonicMicroseconds() - ptsMicroseconds }
                                let wait = origin.value! + ptsMicroseconds - monotonicMicroseconds()
                                if wait > 0 { usleep(UInt32(min(wait, 1_000_000))) }
                            } else if origin.value == nil, let camera = source.source as? CameraSource {
                                origin.value = camera.originMonotonicMicroseconds
                            }
                        }
                        for timed in limiter.admit(frame) {
                            guard frames.push(timed) else { break reading }
                        }
                        if limiter.isDone { break reading }
                        if let scheduled = scheduledSwitch, limiter.emitted == scheduled.afterFrames {
                            pendingSwitch.value = scheduled.path
                        }
                    case .audio(let packet):
                        if !outputs.push(.audio(packet)) { break reading }
                    }
                }
                if !stop.isStopped, !failure.hasError {
                    for timed in limiter.finish() {
                        guard frames.push(timed) else { break }
                    }
                }
            } catch {
                fail(error)
            }
            sourceStats.value = times
            framesRead.value = limiter.emitted
        }

        // GPU thread: upload, filter, pack, read back into pooled buffers.
        let gpuDone = DispatchSemaphore(value: 0)
        let gpuStats = LockedBox(StageTimes())
        let state = gpuState
        let gpu = self.gpu
        let timedByTimer = options.stats
        Thread.detachNewThread {
            defer { outputs.close(); gpuDone.signal() }
            do {
                try gpu.perform {
                    var times = StageTimes()
                    guard var renderer = state.renderer, let uploader = state.uploader, let readback = state.readback else { return }
                    var firstPTS: MediaTime?
                    var previousTime = 0.0
                    var index = 0
                    func deliver(_ tags: [ReadbackTag]) {
                        for tag in tags { outputs.push(.video(tag.buffer, pts: tag.pts, duration: tag.duration)) }
                    }
                    while let timed = frames.pop() {
                        let frame = timed.frame
                        if frame.format != renderer.sourceFormat || frame.size != renderer.sourceSize {
                            renderer = try state.recompile(for: frame.format, size: frame.size)
                            notes.update { $0.append("input is now \(frame.format.rawValue) \(frame.size): graph recompiled, "
                                               + "output stays \(renderer.sinkLayouts[0].size)") }
                        }
                        let first = firstPTS ?? timed.pts
                        firstPTS = first
                        var t0 = StageTimes.now()
                        let uploaded = try uploader.upload(CPUFramePlanes(format: frame.format, size: frame.size,
                                                                          colorSpace: frame.colorSpace, planes: frame.planes))
                        times.add(.upload, since: t0)
                        t0 = StageTimes.now()
                        let time = (timed.pts - first).seconds
                        try renderer.render(uploaded, context: FrameContext(time: time, timeDelta: time - previousTime,
                                                                            frameIndex: index))
                        if !timedByTimer { times.add(.filter, since: t0) }
                        previousTime = time
                        index += 1
                        let buffer = try pool.acquire(timeout: 30)
                        t0 = StageTimes.now()
                        try readback.submit(renderer.sinkTarget(), into: buffer.data,
                                            tag: ReadbackTag(buffer: buffer, pts: timed.pts, duration: timed.duration)) { tag in
                            outputs.push(.video(tag.buffer, pts: tag.pts, duration: tag.duration))
                        }
                        times.add(.readback, since: t0)
                    }
                    let t0 = StageTimes.now()
                    deliver(try readback.drain())
                    times.add(.readback, nanoseconds: StageTimes.now() - t0, count: 0)
                    if let timer = state.timer {
                        timer.finish()
                        let total = timer.samples.reduce(UInt64(0)) { $0 + $1.reduce(0, +) }
                        times.add(.filter, nanoseconds: total, count: timer.samples.first?.count ?? 0)
                    }
                    gpuStats.value = times
                }
            } catch {
                fail(error)
            }
        }

        // This thread: encode and mux (or write raw frames), report progress.
        var encodeTimes = StageTimes()
        var written = 0
        var lastProgress = started
        let expected = options.frameLimit ?? sourceInfo.estimatedFrameCount
        var heldAudio: [AudioChunk] = [] // captured before the video's origin was known
        func writeCaptured(_ chunk: AudioChunk, origin: Int64, to writer: MovieWriter) throws {
            let pts = MediaTime(value: chunk.captureTime - origin, timescale: 1_000_000)
            try chunk.samples.withUnsafeBytes { try writer.writeAudio(pcm: $0, pts: pts) }
        }
        do {
            while let output = outputs.pop() {
                switch output {
                case .video(let buffer, let pts, let duration):
                    let t0 = StageTimes.now()
                    switch sink {
                    case .movie(let writer):
                        if try writer.writeVideo(buffer, pts: pts, duration: duration) { written += 1 }
                    case .raw(let raw):
                        if try !raw.write(buffer) { stop.stop() } else { written += 1 }
                    case .discard:
                        written += 1
                    }
                    encodeTimes.add(.encode, since: t0)
                    let now = StageTimes.now()
                    if let progress, now - lastProgress > 250_000_000 {
                        lastProgress = now
                        progress(RunProgress(frames: written, expectedFrames: expected,
                                             elapsed: Double(now - started) / 1e9,
                                             mediaSeconds: pts.seconds, mediaDuration: sourceInfo.duration?.seconds))
                    }
                case .audio(let packet):
                    if case .movie(let writer) = sink { try writer.writeAudio(packet) }
                case .pcm(let chunk):
                    guard case .movie(let writer) = sink else { break }
                    if let origin = origin.value {
                        for held in heldAudio { try writeCaptured(held, origin: origin, to: writer) }
                        heldAudio.removeAll()
                        try writeCaptured(chunk, origin: origin, to: writer)
                    } else {
                        heldAudio.append(chunk)
                    }
                }
            }
        } catch {
            fail(error)
        }
        sourceDone.wait()
        gpuDone.wait()
        audio?.stop()
        if let audio {
            if let error = audio.error { notes.update { $0.append("audio capture stopped early: \(error)") } }
            if audio.overruns > 0 { notes.update { $0.append("audio: \(audio.overruns) overrun(s), samples lost (filled with silence)") } }
        }
        if let error = failure.error {
            if case .movie(let writer) = sink { writer.abort() }
            throw error
        }
        let t0 = StageTimes.now()
        if case .movie(let writer) = sink { try writer.finish() }
        encodeTimes.add(.encode, nanoseconds: StageTimes.now() - t0, count: 0)

        report.framesIn = framesRead.value
        report.framesOut = written
        report.framesDropped = frames.dropped
        if let camera = self.source as? CameraSource, camera.framesDroppedByDevice > 0 {
            notes.update { $0.append("the camera dropped \(camera.framesDroppedByDevice) frame(s) while every buffer was in use") }
        }
        report.notes = notes.value
        report.wallSeconds = Double(StageTimes.now() - started) / 1e9
        report.stages.merge(sourceStats.value)
        report.stages.merge(gpuStats.value)
        report.stages.merge(encodeTimes)
        report.interrupted = stop.isStopped
        report.poolAllocated = pool.allocatedCount
        report.passLabels = passLabels
        report.filterTiming = timedByTimer ? (try gpu.perform { state.timer?.method.rawValue } ?? "") : "CPU submit time"
        if timedByTimer, let medians = try gpu.perform({ state.timer?.medianMilliseconds() }) { report.passMilliseconds = medians }
        progress?(RunProgress(frames: written, expectedFrames: expected, elapsed: report.wallSeconds,
                              mediaSeconds: nil, mediaDuration: nil, finished: true))
        return report
    }
}

/// A frame on its way to the GPU with the time it will have in the output.
struct TimedFrame: @unchecked Sendable {
    let frame: VideoFrame
    let pts: MediaTime
    let duration: MediaTime?
}

/// Applies --frames and --duration, and --fps conversion (dropping or repeating frames onto a constant
/// rate, each output frame showing the latest input frame at or before its time).
struct FrameTimer {
    let frameLimit: Int?
    let durationLimit: MediaTime?
    let rate: Rational?
    private(set) var emitted = 0
    private(set) var isDone = false
    private var first: MediaTime?
    private var pending: VideoFrame?
    private var nextIndex: Int64 = 0

    init(frameLimit: Int?, durationLimit: MediaTime?, rate: Rational?) {
        self.frameLimit = frameLimit
        self.durationLimit = durationLimit
        self.rate = rate
    }

    /// Output time of converted frame `index`.
    private func outputTime(_ index: Int64, rate: Rational) -> MediaTime {
        first! + MediaTime(value: index * Int64(rate.den), timescale: rate.num)
    }

    private mutating func emit(_ frame: VideoFrame, pts: MediaTime, duration: MediaTime?) -> TimedFrame? {
        if let limit = frameLimit, emitted >= limit { isDone = true; return nil }
        if let limit = durationLimit, let first, pts - first >= limit { isDone = true; return nil }
        emitted += 1
        return TimedFrame(frame: frame, pts: pts, duration: duration)
    }

    /// The frames to send on for a new input frame.
    mutating func admit(_ frame: VideoFrame) -> [TimedFrame] {
        if first == nil { first = frame.pts }
        guard let rate else { return emit(frame, pts: frame.pts, duration: frame.duration).map { [$0] } ?? [] }
        var out: [TimedFrame] = []
        if let held = pending {
            let step = MediaTime(value: Int64(rate.den), timescale: rate.num)
            while outputTime(nextIndex, rate: rate) < frame.pts, !isDone {
                if let timed = emit(held, pts: outputTime(nextIndex, rate: rate), duration: step) { out.append(timed) }
                nextIndex += 1
            }
        }
        pending = frame
        return out
    }

    /// At the end of the input: the held frame for the output times its display covers.
    mutating func finish() -> [TimedFrame] {
        guard let rate, let held = pending, !isDone else { return [] }
        let step = MediaTime(value: Int64(rate.den), timescale: rate.num)
        let end = held.pts + (held.duration ?? step)
        var out: [TimedFrame] = []
        // Every output time the last frame covers (at least one output frame for a one-frame input).
        while !isDone && (outputTime(nextIndex, rate: rate) < end || emitted == 0) {
            if let timed = emit(held, pts: outputTime(nextIndex, rate: rate), duration: step) { out.append(timed) }
            nextIndex += 1
        }
        return out
    }
}

/// A progress snapshot for the live status line.
public struct RunProgress: Sendable {
    public var frames: Int
    public var expectedFrames: Int?
    public var elapsed: Double
    public var mediaSeconds: Double?
    public var mediaDuration: Double?
    public var finished = false

    public var fps: Double { elapsed > 0 ? Double(frames) / elapsed : 0 }
    /// Media seconds per wall second.
    public var speed: Double? { mediaSeconds.map { elapsed > 0 ? $0 / elapsed : 0 } }

    public var line: String {
        var parts = ["frame \(frames)" + (expectedFrames.map { "/\($0)" } ?? "")]
        parts.append(String(format: "%.1f fps", fps))
        if let speed { parts.append(String(format: "%.2fx", speed)) }
        if !finished, let expected = expectedFrames, frames > 0, expected > frames {
            let remaining = Double(expected - frames) / max(fps, 0.001)
            parts.append("eta " + MediaTime(value: Int64(remaining * 1000), timescale: 1000).clockDescription)
        }
        return parts.joined(separator: "  ")
    }
}

/// Sources are used from one thread at a time; the run hands its source to the source thread and
/// does not touch it again until that thread has finished.
private struct UncheckedSource: @unchecked Sendable {
    let source: MediaSource
}

/// The first error any pipeline thread met.
final class FirstError: @unchecked Sendable {
    private let lock = NSLock()
    private var first: Error?
    func record(_ error: Error) { lock.withLock { if first == nil { first = error } } }
    var error: Error? { lock.withLock { first } }
    var hasError: Bool { error != nil }
}

/// A value handed between threads under a lock.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension LockedBox {
    /// Changes the value under the lock.
    func update(_ body: (inout Value) -> Void) {
        lock.withLock { body(&stored) }
    }

    /// The value, leaving nil in its place.
    func take<Wrapped>() -> Wrapped? where Value == Wrapped? {
        lock.withLock {
            defer { stored = nil }
            return stored
        }
    }
}
