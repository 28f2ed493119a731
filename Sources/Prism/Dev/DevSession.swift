import Foundation
import PrismCore
import PrismKit
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline
import PrismVision

/// `prism dev` on a `Session` (a preview: looping, clock-paced, late frames dropped): the shader's graph
/// with preview sinks for the output and the input, a recording sink attached and detached from the page,
/// a stats tap, the page's pointer as a side input, and hot reload through the control plane — all applied
/// by the engine between frames on its GPU thread.
///
/// Camera switch (`POST /camera`): the engine switches devices between two frames. When the new camera
/// delivers another size the graph is compiled for it and the previews follow (`SizeChangePolicy
/// .followInput`); a recording cannot change size in its file, so it is finished (playable) with a note
/// in `/state` (`recording.note`) and on stderr; a switch that keeps the size keeps recording.
final class DevSession: Sendable {
    let options: DevOptions
    let hub = PreviewHub()
    let state = DevState()
    let stop = StopSignal()
    /// The page's commands (`/param`, `/record`, `/camera`) and the shader's reloads: the control plane of
    /// `prism run --control`, with `DevEffects`.
    let control: ControlPlane
    /// The page's pointer, ShaderToy's `iMouse` (a side input).
    let mouse: DevMouse
    private let gpu: GPUContext
    private let engine: FrameEngine
    /// The GPU thread's side of the session: the recording, errors on the page.
    private let controller: GPUBound<DevController>

    init(options: DevOptions, gpu: GPUContext? = nil) throws {
        self.options = options
        let gpu = try gpu ?? GPUContext(options: options.session.gpu)
        self.gpu = gpu
        let state = self.state
        let quiet = options.quiet
        let controller = try gpu.perform { GPUBound(DevController(options: options, state: state), on: gpu) }
        self.controller = controller
        let effects = DevEffects(options: options, state: state, controller: controller)
        control = ControlPlane(graphText: options.graphText, effects: effects)
        let bind = DevEffects.bind(options: options)
        let userGraph = try gpu.perform { controller.value.initialGraph(bind: bind) }
        // `--size` and `--fps` are the pattern's and what a camera is asked for; other inputs keep theirs.
        var settings = options.session
        switch options.input {
        case .pattern, .camera:
            settings.size = options.patternSize
            settings.frameRate = options.frameRate
        case .movie, .standardInput, .frames: break
        }
        let session = try Session(input: options.input, graph: userGraph, options: settings, gpu: gpu)
        let assembly = DevEffects.assembly(options: options, framing: session.framing)
        let nodes = 0..<session.graph.nodes.count
        let mouse = DevMouse()
        self.mouse = mouse
        let output = PreviewSink(view: .output, hub: hub, maxWidth: options.previewMaxWidth, bufferCount: 8)
        let input = PreviewSink(view: .input, hub: hub, maxWidth: options.previewMaxWidth, bufferCount: 6)
        engine = try session.engine(sinks: [output, input], taps: [DevStatsTap(state: state, output: output, controller: controller), control.tap],
                                    sideInputs: [mouse],
                                    events: { event in DevSession.handle(event, state: state, controller: controller, quiet: quiet) })
        control.start(engine: engine, nodes: nodes, assembly: assembly)
        let info = engine.sourceInfo
        let rendererName = gpu.info.renderer + (gpu.info.isSoftware ? " (software)" : "")
        let outputSize = engine.outputSize
        state.update {
            $0.input = info.summary
            $0.renderer = rendererName
            $0.shader = options.shaderPath
            $0.outputSize = outputSize
        }
        if case .camera(let path) = options.input {
            state.update { $0.cameraDevice = path }
            effects.refreshCameras()
        }
    }

    var gpuInfo: GPUInfo { engine.gpuInfo }
    var sourceInfo: SourceInfo { engine.sourceInfo }

    /// Runs until `stop`; returns when the engine has finished (a recording in progress is finished too).
    func run() throws {
        // Watch the shader's files; a burst of saves becomes one reload.
        try control.watch(otherwise: [options.shaderPath])
        defer { control.finish() }
        defer { hub.close() }
        _ = try engine.run(stop: stop)
        state.update {
            $0.recordingPath = nil
            $0.recordingAsked = nil
        }
    }

    /// What the engine reports, on the page and on stderr.
    private static func handle(_ event: EngineEvent, state: DevState, controller: GPUBound<DevController>, quiet: Bool) {
        switch event {
        case .cameraSwitched(let change, let summary):
            state.update {
                $0.cameraDevice = change.to
                $0.input = summary
                if $0.cameraPending == change.to { $0.cameraPending = nil }
            }
            if !quiet { PrismCommandLine.info("prism: \(change)") }
        case .cameraSwitchFailed(let path, _, _):
            state.update {
                $0.cameraError = event.description
                if $0.cameraPending == path { $0.cameraPending = nil }
            }
            if !quiet { PrismCommandLine.info("prism: \(event.description)") }
        case .inputChanged(_, _, _, let outputSize):
            state.update { $0.outputSize = outputSize }
            if !quiet { PrismCommandLine.info("prism: \(event.description)") }
        case .graphFallback(let error):
            // Called on the GPU thread, where the controller lives.
            controller.value.report(text: error)
        case .networkInput:
            if !quiet { PrismCommandLine.info("prism: \(event.description)") }
        }
    }
}
