import Foundation
import PrismCore
import PrismKit
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline

/// The GPU thread's side of `prism dev` beside the control plane: the recording the page starts and stops,
/// and errors shown on the page. Lives on the engine's GPU thread (held in a `GPUBound`).
final class DevController {
    let options: DevOptions
    let state: DevState
    private var recording: TakeSink?
    private let encoder = VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 20)

    init(options: DevOptions, state: DevState) {
        self.options = options
        self.state = state
    }

    /// The shader's graph, or the unfiltered input while it does not compile yet.
    func initialGraph(bind: (String) throws -> FilterGraph) -> FilterGraph {
        do {
            return try bind(options.graphText)
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
