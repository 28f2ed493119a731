import Foundation
import PrismCore
import PrismKit
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline

/// The GPU thread's side of `prism dev`: reloads, parameter changes and recordings, applied between
/// frames through `EngineControl`. Lives on the engine's GPU thread (held in a `GPUBound`).
final class DevController {
    let options: DevOptions
    let state: DevState
    private let binder: GraphBinder
    private let userSet: Locked<Set<String>>
    private var recording: TakeSink?
    private let encoder = VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 20)

    /// Built-ins in front of every graph: the input's colour conversion (HDR tone mapped for the SDR preview).
    private let sourceFilters: [(name: String, parameters: [String: ParameterValue])]

    init(options: DevOptions, state: DevState, userSet: Locked<Set<String>>,
         sourceFilters: [(name: String, parameters: [String: ParameterValue])] = []) {
        self.options = options
        binder = Session.binder(inputs: [nil] + options.extraInputs.map(\.name))
        self.sourceFilters = sourceFilters
        self.state = state
        self.userSet = userSet
    }

    /// The graph text bound, ending at `--output-size` when one was asked for.
    private func bindGraph() throws -> FilterGraph {
        let graph = try binder.bind(options.graphText).readingSource(through: sourceFilters)
        if let size = options.outputSize { try graph.appendScale(to: size) }
        return graph
    }

    /// The shader's graph, or the unfiltered input while it does not compile yet.
    func initialGraph() -> FilterGraph {
        do {
            let graph = try bindGraph()
            publishParameters(graph)
            return graph
        } catch {
            report(error)
            state.update { $0.failedReloads = 0 }
            return FilterGraph()
        }
    }

    /// A compile error, on the page (at the author's file and line, from the error's diagnostics) and on
    /// stderr; the last good shader runs on.
    func report(_ error: any Error) {
        show(DevDiagnostic.from(error, fallbackFile: options.shaderPath))
    }

    /// A failure known only as text (the engine's fallback event).
    func report(text: String) {
        show(DevDiagnostic.from(text: text, fallbackFile: options.shaderPath))
    }

    private func show(_ diagnostic: DevDiagnostic) {
        state.update {
            $0.error = diagnostic
            $0.failedReloads += 1
        }
        if !options.quiet { PrismCommandLine.info("prism: reload failed: \(diagnostic.text) (last good shader kept)") }
    }

    private func publishParameters(_ graph: FilterGraph) {
        let nodes = graph.nodes.compactMap { node in
            node.parameters.map { DevNodeParameters(node: node.id.index, filter: node.name, values: $0) }
        }
        state.update { $0.parameters = nodes }
    }

    /// The shader's files changed: bind the graph again, carry the user's values over, swap it in.
    func reload(_ control: EngineControl, watcher: Locked<FileWatcher?>) {
        let watchedBefore = state.read().watched
        let files = DevSession.watchedFiles(for: options.graphText)
        let union = Array(Set(files).union(watchedBefore.filter { FileManager.default.fileExists(atPath: $0) }))
        watcher.withLock { try? $0?.update(files: files.isEmpty ? watchedBefore : union) }
        state.update { $0.watched = files.isEmpty ? watchedBefore : files }
        do {
            let graph = try bindGraph()
            carry(from: control.graph, to: graph)
            try control.setGraph(graph)
            publishParameters(graph)
            state.update {
                $0.error = nil
                $0.reloads += 1
            }
            if !options.quiet { PrismCommandLine.info("prism: reloaded \(options.shaderPath)") }
        } catch {
            report(error)
        }
    }

    /// Carries the user's parameter values from `old` to `new` where names and types match.
    private func carry(from old: FilterGraph, to new: FilterGraph) {
        let chosen = userSet.withLock { $0 }
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

    /// A value from the page. One that changes code or sizes (a blur radius, a pixellate scale) needs a
    /// new compile; if that fails the old value comes back and the old program keeps running.
    func setParameter(_ control: EngineControl, node: Int, name: String, value: ParameterValue) {
        let graph = control.graph
        guard graph.nodes.indices.contains(node) else { return }
        let id = graph.nodes[node].id, old = graph.nodes[node].parameters?[name]
        try? graph.setParameter(id, name, value)
        if control.renderer?.isStale == true {
            do {
                try control.recompile()
            } catch {
                report(error)
                if let old { try? graph.setParameter(id, name, old) }
            }
        }
        publishParameters(graph)
    }

    func startRecording(_ control: EngineControl, path: String) {
        // Begun (its path is `recordingPath` now) or refused: no longer only asked for.
        defer { state.update { if $0.recordingAsked == path { $0.recordingAsked = nil } } }
        guard recording == nil else { return }
        // The preview never waits for the recording: it takes the frames it can (dropped ones are counted).
        let sink = TakeSink(path: path, settings: encoder, delivery: .newest, bufferCount: 12,
                            events: Self.recordingEvents(state: state, quiet: options.quiet))
        do {
            try control.attach(sink)
            recording = sink
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
    }

    /// A recording's progress and end, on the page and on stderr.
    private static func recordingEvents(state: DevState, quiet: Bool) -> TakeSink.Events {
        TakeSink.Events(
            framesWritten: { frames in state.update { $0.recordingFrames = frames } },
            finished: { path, _, _ in
                state.update {
                    $0.lastRecording = path
                    $0.recordingPath = nil
                    $0.recordingStarted = nil
                }
            },
            ended: { note in
                state.update { $0.recordingNote = note }
                if !quiet { PrismCommandLine.info("prism: \(note)") }
            },
            failed: { error in
                state.update {
                    $0.recordingError = error
                    $0.recordingPath = nil
                }
            })
    }

    /// Ends the recording: its last frames are delivered and the file is finished on its own thread.
    func stopRecording(_ control: EngineControl) throws {
        guard let active = recording else { return }
        recording = nil
        try control.detach(active)
    }

    /// Frames the recording could not take in time (the preview never waits for it).
    func recordingDropped(_ control: EngineControl) -> Int? {
        recording.map { control.skippedFrames(of: $0) }
    }

    /// A recording that ended by itself (it could not follow a size change) is gone.
    func forgetEndedRecording() {
        if recording?.ended == true { recording = nil }
    }
}

/// A preview view's sink: keeps the newest RGBA frame (snapshots) and encodes a JPEG while someone
/// watches the stream.
final class PreviewSink: FrameSink {
    let view: PreviewView
    private let hub: PreviewHub
    private let maxWidth: Int
    let bufferCount: Int

    init(view: PreviewView, hub: PreviewHub, maxWidth: Int, bufferCount: Int) {
        self.view = view
        self.hub = hub
        self.maxWidth = maxWidth
        self.bufferCount = bufferCount
    }

    var pixelFormat: PixelFormat { .rgba }
    var point: SinkPoint { view == .input ? .input : .output }
    var delivery: SinkDelivery { .newest }

    /// The input view is rendered while someone watches it, and every 15th frame for snapshots.
    func wants(frameIndex: Int) -> Bool { view == .output || hub.subscriberCount(.input) > 0 || frameIndex % 15 == 0 }

    func open(_ stream: SinkStream) throws {}

    func write(_ frame: ProcessedFrame) throws -> Bool {
        hub.setLatest(frame.buffer, for: view)
        guard hub.subscriberCount(view) > 0 else { return true }
        let image = frame.buffer.rgbaImage(maxWidth: maxWidth)
        if let jpeg = try? ImageFile.encode(image, kind: .jpeg, jpegQuality: 80, label: "preview") {
            hub.publishJPEG(jpeg, for: view)
        }
        return true
    }
}

/// Per-frame figures for the page: frames, fps over about a second, preview frames skipped, and the
/// median pass times over the last 30 frames.
final class DevStatsTap: FrameTap {
    private let state: DevState
    private let output: PreviewSink
    private let controller: GPUBound<DevController>
    private var window = (start: DispatchTime.now().uptimeNanoseconds, frames: 0)

    init(state: DevState, output: PreviewSink, controller: GPUBound<DevController>) {
        self.state = state
        self.output = output
        self.controller = controller
    }

    func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
        let dev = controller.value
        dev.forgetEndedRecording()
        window.frames += 1
        let now = DispatchTime.now().uptimeNanoseconds
        let elapsed = Double(now - window.start) / 1e9
        let skipped = control.skippedFrames(of: output)
        let recordingDropped = dev.recordingDropped(control)
        let frames = window.frames
        let method = control.timingMethod
        state.update {
            $0.frames += 1
            $0.previewDropped = skipped
            if let recordingDropped { $0.recordingDropped = recordingDropped }
            if elapsed >= 1 { $0.fps = Double(frames) / elapsed }
            $0.timing = method
        }
        if elapsed >= 1 { window = (now, 0) }
        if (frame.index + 1) % 30 == 0, let labels = control.renderer?.passLabels {
            let medians = control.passMilliseconds(reset: true)
            state.update { $0.passes = zip(labels, medians).map { ($0, $1) } }
        }
    }
}
