import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia

/// The live loop of `prism dev`: source → upload → the shader's graph → RGBA readback → preview (and
/// recording), at the source's rate, with hot reload between frames.
///
/// Threads: the source thread paces frames into a two-slot queue that drops the oldest; the GPU thread
/// (`GPUContext.perform`) renders each frame, first applying what the server and the file watcher asked
/// for (reload, parameter changes, record start/stop); a preview thread turns read-back frames into JPEGs
/// for the streams; a recording thread encodes. Nothing the preview clients do can block the GPU thread:
/// preview buffers come from a pool with `tryAcquire` (a frame without a free buffer is not previewed).
///
/// Camera switch (`POST /camera`): the source thread switches devices between two frames without stopping
/// the loop. When the new camera delivers another format or size, the GPU thread recompiles the graph (and
/// the input view) for it before rendering its first frame; the preview then follows the new size. A
/// recording in progress cannot change size in its file, so a switch that changes the output size ends it
/// (the file is finished and playable) with a note in `/state` (`recording.note`) and on stderr; a switch
/// that keeps the size keeps recording.
final class DevSession: @unchecked Sendable {
    enum Command {
        case reload
        case setParameter(node: Int, name: String, value: ParameterValue)
        case startRecording(path: String)
        case stopRecording
    }

    let options: DevOptions
    let hub = PreviewHub()
    let state = DevState()
    let stop = StopSignal()
    private let gpu: GPUContext
    private let source: LiveSource
    private let commandLock = NSLock()
    private var pendingCommands: [Command] = []
    private var watcher: FileWatcher?
    /// Parameters the user set (node index, name): these are carried over reloads.
    private let userSet = LockedBox(Set<String>())
    /// A camera switch asked for and not yet made (made by the source thread between two frames).
    private let pendingCameraSwitch = LockedBox<String?>(nil)

    init(options: DevOptions, gpu: GPUContext? = nil) throws {
        self.options = options
        source = try LiveSource(input: options.input, patternSize: options.patternSize, frameRate: options.frameRate)
        self.gpu = try gpu ?? GPUContext(options: options.gpu)
        let info = source.info
        let rendererName = self.gpu.info.renderer + (self.gpu.info.isSoftware ? " (software)" : "")
        state.update {
            $0.input = info.summary
            $0.renderer = rendererName
            $0.shader = options.shaderPath
        }
        if let camera = source.cameraPath {
            state.update { $0.cameraDevice = camera }
            _ = refreshCameras()
        }
    }

    /// Lists the cameras again (`CameraSource.list()`: the capture nodes that can stream, plus the one in
    /// use, which a busy driver may report as unusable) and publishes them in the state.
    @discardableResult
    func refreshCameras() -> [DevCamera] {
        let current = state.read().cameraDevice
        var cameras = CameraSource.list().filter { $0.problem == nil || $0.path == current }
            .map { DevCamera(path: $0.path, card: $0.card) }
        if let current, !cameras.contains(where: { $0.path == current }) {
            cameras.insert(DevCamera(path: current, card: ""), at: 0)
        }
        state.update { $0.cameras = cameras }
        return cameras
    }

    /// Asks the source thread to switch to another camera before its next frame.
    func requestCameraSwitch(to path: String) {
        state.update {
            $0.cameraPending = path
            $0.cameraError = nil
        }
        pendingCameraSwitch.value = path
    }

    var gpuInfo: GPUInfo { gpu.info }
    var sourceInfo: SourceInfo { source.info }

    /// Queues work for the GPU thread; it runs before the next frame.
    func send(_ command: Command) {
        if case .setParameter(let node, let name, _) = command { userSet.value.insert("\(node).\(name)") }
        commandLock.withLock { pendingCommands.append(command) }
    }

    private func takeCommands() -> [Command] {
        commandLock.withLock {
            defer { pendingCommands.removeAll() }
            return pendingCommands
        }
    }

    /// The files a graph text reads: file filters, `file=` arguments, and each shader's includes and images.
    static func watchedFiles(for text: String) -> [String] {
        guard let ast = try? GraphParser.parse(text) else { return [] }
        var files: [String] = []
        for (_, element) in ast.elements {
            if element.kind == .file { files.append(element.name) }
            if let file = element.argument("file")?.value.textValue { files.append(file) }
        }
        var result: [String] = []
        for file in files {
            result.append(file)
            let lower = file.lowercased()
            if [".fs", ".frag", ".glsl", ".isf"].contains(where: { lower.hasSuffix($0) }),
               let shader = try? UserShader.load(path: file) {
                result += shader.watchedFiles
            }
        }
        var seen = Set<String>()
        return result.filter { seen.insert(FileWatcher.normalise($0)).inserted }
    }

    /// Runs until `stop`; returns when every thread has finished.
    func run() throws {
        let frames = BoundedQueue<LiveFrame>(capacity: 2, overflow: .dropOldest)
        let previews = BoundedQueue<(PreviewView, PooledFrameBuffer)>(capacity: 2, overflow: .dropOldest)
        let failure = FirstError()
        let stop = self.stop
        @Sendable func fail(_ error: Error) {
            failure.record(error)
            stop.stop()
            frames.cancel()
        }

        // Watch the shader's files; a burst of saves becomes one reload.
        var watched = Self.watchedFiles(for: options.graphText)
        if watched.isEmpty { watched = [options.shaderPath] }
        state.update { $0.watched = watched }
        watcher = try FileWatcher(files: watched) { [weak self] _ in self?.send(.reload) }
        defer { watcher?.stop() }

        // Source thread: paced to the source's timestamps (the pattern and files alike).
        let sourceDone = DispatchSemaphore(value: 0)
        let live = UncheckedLiveSource(source: source)
        let pendingSwitch = pendingCameraSwitch
        let state = self.state
        let quiet = options.quiet
        Thread.detachNewThread {
            defer { frames.close(); sourceDone.signal() }
            let started = DispatchTime.now().uptimeNanoseconds
            var first: MediaTime?
            do {
                while !stop.isStopped {
                    if let path = pendingSwitch.take() {
                        let from = live.source.cameraPath ?? "?"
                        do {
                            let (change, summary) = try live.source.switchCamera(to: path)
                            state.update {
                                $0.cameraDevice = change.to
                                $0.input = summary
                                if $0.cameraPending == path { $0.cameraPending = nil }
                            }
                            if !quiet { PrismCommandLine.info("prism: \(change)") }
                        } catch {
                            let text = "camera switch to \(path) failed, \(from) kept: \(error)"
                            state.update {
                                $0.cameraError = text
                                if $0.cameraPending == path { $0.cameraPending = nil }
                            }
                            if !quiet { PrismCommandLine.info("prism: \(text)") }
                        }
                    }
                    guard let frame = try live.source.next() else { break }
                    let origin = first ?? frame.pts
                    first = origin
                    let due = started + UInt64(max(0, (frame.pts - origin).seconds) * 1e9)
                    let now = DispatchTime.now().uptimeNanoseconds
                    if due > now { usleep(UInt32(min(1_000_000, (due - now) / 1000))) }
                    if !frames.push(frame) { break }
                }
            } catch {
                fail(error)
            }
        }

        // Preview thread: the newest frame per view; JPEG only while someone watches that stream.
        let previewDone = DispatchSemaphore(value: 0)
        let hub = self.hub
        let maxWidth = options.previewMaxWidth
        Thread.detachNewThread {
            defer { previewDone.signal() }
            while let (view, buffer) = previews.pop() {
                hub.setLatest(buffer, for: view)
                guard hub.subscriberCount(view) > 0 else { continue }
                let image = PreviewHub.image(from: buffer, maxWidth: maxWidth)
                if let jpeg = try? ImageFile.encode(image, kind: .jpeg, jpegQuality: 80, label: "preview") {
                    hub.publishJPEG(jpeg, for: view)
                }
            }
        }

        // GPU thread.
        let gpuDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            defer { previews.close(); gpuDone.signal() }
            do {
                try gpu.perform { try gpuLoop(frames: frames, previews: previews) }
            } catch {
                fail(error)
            }
        }

        while !stop.isStopped { usleep(50_000) }
        frames.cancel()
        sourceDone.wait()
        gpuDone.wait()
        previewDone.wait()
        hub.close()
        if let error = failure.error { throw error }
    }

    // MARK: GPU thread

    /// One way out of the GPU: a readback into pooled buffers of one layout.
    private final class SinkChannel {
        let layout: PackedFrameLayout
        let pool: FrameBufferPool
        let readback: FrameReadback<PooledFrameBuffer>
        init(layout: PackedFrameLayout, strategy: ReadbackStrategy, capacity: Int) throws {
            self.layout = layout
            pool = FrameBufferPool(layout: layout, capacity: capacity)
            readback = try FrameReadback(strategy: strategy, layout: layout)
        }
        /// Reads `target` back if a buffer is free; returns the buffers that are complete.
        func submit(_ target: RenderTarget, blocking: Bool = false) throws -> (done: [PooledFrameBuffer], skipped: Bool) {
            guard let buffer = blocking ? try pool.acquire(timeout: 5) : pool.tryAcquire() else { return ([], true) }
            return (try readback.submit(target, into: buffer.data, tag: buffer), false)
        }
    }

    /// The recording in progress: its own sink of the renderer, a queue and an encoding thread.
    private final class Recording: @unchecked Sendable {
        let path: String
        let channel: SinkChannel
        let queue = BoundedQueue<(PooledFrameBuffer, MediaTime)>(capacity: 8, overflow: .dropOldest)
        let done = DispatchSemaphore(value: 0)

        init(path: String, channel: SinkChannel, writer: MovieWriter, state: DevState) {
            self.path = path
            self.channel = channel
            let queue = self.queue
            let done = self.done
            let box = UncheckedWriter(writer: writer)
            Thread.detachNewThread {
                defer { done.signal() }
                var error: Error?
                while let (buffer, pts) = queue.pop() {
                    do {
                        try box.writer.writeVideo(buffer, pts: pts)
                        state.update { $0.recordingFrames += 1 }
                    } catch let failure {
                        error = failure
                        queue.cancel()
                    }
                }
                if error == nil {
                    do { try box.writer.finish() } catch let failure { error = failure }
                } else {
                    box.writer.abort()
                }
                let dropped = queue.dropped
                state.update {
                    $0.recordingDropped = dropped
                    if let error { $0.recordingError = "\(error)" } else { $0.lastRecording = path }
                }
            }
        }

        func finish() {
            queue.close()
            done.wait()
        }
    }

    private struct Current {
        var graph: FilterGraph
        var renderer: GraphRenderer
    }

    private func gpuLoop(frames: BoundedQueue<LiveFrame>, previews: BoundedQueue<(PreviewView, PooledFrameBuffer)>) throws {
        let info = source.info
        let strategy = ReadbackStrategy.preferred(for: gpu.info)
        let compileOptions = CompileOptions()
        let binder = PrismGraphs.binder()
        let text = options.graphText
        var recording: Recording?
        // What the graph is compiled for; a camera switch may change it.
        var sourceFormat = info.pixelFormat
        var sourceSize = info.size
        let encoder = VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 20)

        func sinks() -> [PixelFormat] { recording == nil ? [.rgba] : [.rgba, encoder.pixelFormat] }
        func build(_ graph: FilterGraph, sinks: [PixelFormat]) throws -> GraphRenderer {
            try GraphRenderer(graph: graph, sourceFormat: sourceFormat, sourceSize: sourceSize, sinks: sinks,
                              options: compileOptions)
        }
        func publishParameters(_ graph: FilterGraph) {
            let nodes = graph.nodes.compactMap { node in
                node.parameters.map { DevNodeParameters(node: node.id.index, filter: node.name, values: $0) }
            }
            state.update { $0.parameters = nodes }
        }
        func report(_ error: Error) -> DevDiagnostic {
            let files = state.read().watched
            let diagnostic = DevDiagnostic.from("\(error)", files: files, fallbackFile: options.shaderPath)
            state.update {
                $0.error = diagnostic
                $0.failedReloads += 1
            }
            if !options.quiet { PrismCommandLine.info("prism: reload failed: \(diagnostic.text) (last good shader kept)") }
            return diagnostic
        }

        // The first program: the shader, or the unfiltered input while it does not compile yet.
        var current: Current
        do {
            let graph = try binder.bind(text)
            current = Current(graph: graph, renderer: try build(graph, sinks: [.rgba]))
        } catch {
            _ = report(error)
            state.update { $0.failedReloads = 0 }
            let graph = FilterGraph()
            current = Current(graph: graph, renderer: try build(graph, sinks: [.rgba]))
        }
        publishParameters(current.graph)
        let uploader = FrameUploader()
        var output = try SinkChannel(layout: current.renderer.sinkLayouts[0], strategy: strategy, capacity: 8)
        var inputRenderer = try build(FilterGraph(), sinks: [.rgba])
        var input = try SinkChannel(layout: inputRenderer.sinkLayouts[0], strategy: strategy, capacity: 6)
        var timer = PassTimer(passCount: current.renderer.passCount, extensions: gpu.info.extensions)
        current.renderer.timer = timer
        state.update {
            $0.outputSize = current.renderer.outputSize
            $0.timing = timer.method.rawValue
        }

        /// Carries the user's parameter values from `old` to `new` where names and types match.
        func carry(from old: FilterGraph, to new: FilterGraph) {
            let chosen = userSet.value
            for node in new.nodes {
                guard let values = node.parameters else { continue }
                let match = old.nodes.indices.contains(node.id.index) && old.nodes[node.id.index].name == node.name
                    ? old.nodes[node.id.index] : old.nodes.first { $0.name == node.name }
                guard let match, let oldValues = match.parameters else { continue }
                for spec in values.specs where chosen.contains("\(match.id.index).\(spec.name)") {
                    guard let oldSpec = oldValues.specs.first(where: { $0.name == spec.name }),
                          DevParameters.sameType(oldSpec.kind, spec.kind), let value = oldValues[spec.name] else { continue }
                    try? new.setParameter(node.id, spec.name, value)
                }
            }
        }

        func swap(to graph: FilterGraph, renderer: GraphRenderer) throws {
            for buffer in try output.readback.drain() { previews.push((.output, buffer)) }
            if renderer.sinkLayouts[0] != output.layout {
                output = try SinkChannel(layout: renderer.sinkLayouts[0], strategy: strategy, capacity: 8)
            }
            current = Current(graph: graph, renderer: renderer)
            timer = PassTimer(passCount: renderer.passCount, extensions: gpu.info.extensions)
            renderer.timer = timer
            state.update { $0.outputSize = renderer.outputSize }
        }

        /// Ends the recording: its last frames are read back and queued, the file is finished off the GPU
        /// thread, and the renderer loses its encoder sink.
        func endRecording(note: String? = nil) throws {
            guard let active = recording else { return }
            for buffer in try active.channel.readback.drain() where !recordingPTS.isEmpty {
                active.queue.push((buffer, recordingPTS.removeFirst()))
            }
            recordingPTS.removeAll()
            recording = nil
            let renderer = try build(current.graph, sinks: [.rgba])
            try swap(to: current.graph, renderer: renderer)
            let state = self.state
            if let note {
                state.update { $0.recordingNote = note }
                if !options.quiet { PrismCommandLine.info("prism: \(note)") }
            }
            Thread.detachNewThread {
                active.finish()
                state.update {
                    $0.recordingPath = nil
                    $0.recordingStarted = nil
                }
            }
        }

        /// The input changed format or size (a camera switch): recompiles the graph and the input view for
        /// it. A recording whose size would change is ended; the graph falls back to the unfiltered input
        /// when it does not compile for the new size.
        func adapt(to format: PixelFormat, size: Size) throws {
            let oldSize = current.renderer.outputSize
            sourceFormat = format
            sourceSize = size
            if let active = recording {
                let candidate = try? build(current.graph, sinks: [.rgba, encoder.pixelFormat])
                if candidate?.sinkLayouts[1] != active.channel.layout {
                    try endRecording(note: "recording stopped: the camera now delivers \(size) and the recording is "
                                     + "\(active.channel.layout.size); saved \(active.path)")
                }
            }
            do {
                try swap(to: current.graph, renderer: try build(current.graph, sinks: sinks()))
            } catch {
                _ = report(error)
                let graph = FilterGraph()
                try swap(to: graph, renderer: try build(graph, sinks: sinks()))
                publishParameters(graph)
            }
            for buffer in try input.readback.drain() { previews.push((.input, buffer)) }
            inputRenderer = try build(FilterGraph(), sinks: [.rgba])
            if inputRenderer.sinkLayouts[0] != input.layout {
                input = try SinkChannel(layout: inputRenderer.sinkLayouts[0], strategy: strategy, capacity: 6)
            }
            if !options.quiet {
                PrismCommandLine.info("prism: input is now \(format.rawValue) \(size): graph recompiled, "
                                      + "output \(oldSize) → \(current.renderer.outputSize)")
            }
        }

        var first: MediaTime?
        var previousTime = 0.0
        var index = 0
        var fpsWindow: (start: UInt64, frames: Int) = (DispatchTime.now().uptimeNanoseconds, 0)
        while let frame = frames.pop() {
            let origin = first ?? frame.pts
            first = origin
            if frame.frame.format != sourceFormat || frame.frame.size != sourceSize {
                try adapt(to: frame.frame.format, size: frame.frame.size)
            }
            let uploaded = try uploader.upload(CPUFramePlanes(format: frame.frame.format, size: frame.frame.size,
                                                              colorSpace: frame.frame.colorSpace, planes: frame.frame.planes))
            // Between frames: what the watcher and the server asked for.
            for command in takeCommands() {
                switch command {
                case .reload:
                    let watchedBefore = state.read().watched
                    let files = Self.watchedFiles(for: text)
                    let union = Array(Set(files).union(watchedBefore.filter { FileManager.default.fileExists(atPath: $0) }))
                    try? watcher?.update(files: files.isEmpty ? watchedBefore : union)
                    state.update { $0.watched = files.isEmpty ? watchedBefore : files }
                    do {
                        let graph = try binder.bind(text)
                        carry(from: current.graph, to: graph)
                        let renderer = try build(graph, sinks: sinks())
                        try swap(to: graph, renderer: renderer)
                        publishParameters(graph)
                        state.update {
                            $0.error = nil
                            $0.reloads += 1
                        }
                        if !options.quiet { PrismCommandLine.info("prism: reloaded \(options.shaderPath)") }
                    } catch {
                        _ = report(error)
                    }
                case .setParameter(let node, let name, let value):
                    guard current.graph.nodes.indices.contains(node) else { continue }
                    try? current.graph.setParameter(current.graph.nodes[node].id, name, value)
                    // A value that changes code or sizes (a blur radius, a pixellate scale) needs a new
                    // compile; the old renderer keeps running if that fails.
                    if current.renderer.isStale {
                        do {
                            let renderer = try build(current.graph, sinks: sinks())
                            try swap(to: current.graph, renderer: renderer)
                        } catch {
                            _ = report(error)
                        }
                    }
                    publishParameters(current.graph)
                case .startRecording(let path):
                    guard recording == nil else { continue }
                    do {
                        let renderer = try build(current.graph, sinks: [.rgba, encoder.pixelFormat])
                        let layout = renderer.sinkLayouts[1]
                        let video = VideoStreamConfig(size: layout.size, timeBase: info.timeBase, frameRate: info.frameRate,
                                                      colorSpace: renderer.outputColorSpace(for: uploaded))
                        let writer = try MovieWriter(path: path, video: video, settings: encoder)
                        let channel = try SinkChannel(layout: layout, strategy: strategy, capacity: 12)
                        recording = Recording(path: path, channel: channel, writer: writer, state: state)
                        recordingPTS.removeAll()
                        try swap(to: current.graph, renderer: renderer)
                        state.update {
                            $0.recordingPath = path
                            $0.recordingStarted = Date()
                            $0.recordingFrames = 0
                            $0.recordingDropped = 0
                            $0.recordingError = nil
                            $0.recordingNote = nil
                        }
                    } catch {
                        state.update { $0.recordingError = "\(error)" }
                    }
                case .stopRecording:
                    try endRecording()
                }
            }
            // The frame.
            let time = (frame.pts - origin).seconds
            try current.renderer.render(uploaded, context: FrameContext(time: time, timeDelta: time - previousTime, frameIndex: index))
            previousTime = time
            let (done, skipped) = try output.submit(current.renderer.sinkTarget(0))
            for buffer in done { previews.push((.output, buffer)) }
            if let recording {
                let (buffers, lost) = try recording.channel.submit(current.renderer.sinkTarget(1))
                // Buffers come back in submission order; timestamps travel in a FIFO beside them.
                recordingPTS.append(frame.pts)
                if lost { recordingPTS.removeLast() }
                for buffer in buffers { recording.queue.push((buffer, recordingPTS.removeFirst())) }
            }
            if hub.subscriberCount(.input) > 0 || index % 15 == 0 {
                try inputRenderer.render(uploaded, context: FrameContext(time: time, frameIndex: index))
                for buffer in try input.submit(inputRenderer.sinkTarget(0)).done { previews.push((.input, buffer)) }
            }
            index += 1
            // Stats: fps over about a second, median pass times over the last 30 frames.
            fpsWindow.frames += 1
            let now = DispatchTime.now().uptimeNanoseconds
            let elapsed = Double(now - fpsWindow.start) / 1e9
            state.update {
                $0.frames += 1
                if skipped { $0.previewDropped += 1 }
                if elapsed >= 1 { $0.fps = Double(fpsWindow.frames) / elapsed }
            }
            if elapsed >= 1 { fpsWindow = (now, 0) }
            if index % 30 == 0 {
                timer.finish()
                let medians = timer.medianMilliseconds()
                let labels = current.renderer.passLabels
                state.update { $0.passes = zip(labels, medians).map { ($0, $1) } }
                timer = PassTimer(passCount: current.renderer.passCount, extensions: gpu.info.extensions)
                current.renderer.timer = timer
            }
        }
        // Shutting down: finish a recording so the file is playable.
        if let active = recording {
            for buffer in try active.channel.readback.drain() where !recordingPTS.isEmpty {
                active.queue.push((buffer, recordingPTS.removeFirst()))
            }
            active.finish()
            state.update { $0.recordingPath = nil }
        }
        current.renderer.timer = nil
    }

    private var recordingPTS: [MediaTime] = []
}

private struct UncheckedLiveSource: @unchecked Sendable {
    let source: LiveSource
}

private struct UncheckedWriter: @unchecked Sendable {
    let writer: MovieWriter
}
