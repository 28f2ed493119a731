import Foundation
import PrismCore
import PrismKit
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline
import PrismVision

/// `prism dev` on the engine: the shader's graph on a looping, clock-paced source, with preview sinks
/// for the output and the input, a recording sink attached and detached from the page, a stats tap, and
/// hot reload — all applied by the engine between frames on its GPU thread.
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
        let gpu = try gpu ?? GPUContext(options: options.gpu)
        self.gpu = gpu
        let source = try SourceSpec(input: options.input, size: options.patternSize, frameRate: options.frameRate,
                                    loop: true).open()
        let state = self.state
        let quiet = options.quiet
        // The preview is SDR: HDR input is tone mapped in front of the shader, as `run` does for an SDR output.
        var colorOptions = Session.Options()
        colorOptions.dynamicRange = .sdr
        let colorPlan = try ColorPlan(source: source.info, graph: FilterGraph(), options: colorOptions)
        let controller = try gpu.perform { GPUBound(DevController(options: options, state: state), on: gpu) }
        self.controller = controller
        let effects = DevEffects(options: options, state: state, controller: controller)
        control = ControlPlane(graphText: options.graphText, effects: effects)
        let assembly = DevEffects.assembly(options: options, sourceFilters: colorPlan.filters)
        let (graph, nodes) = try gpu.perform { controller.value.initialGraph(assembly) }
        var configuration = EngineConfiguration()
        configuration.sizeChange = .followInput
        configuration.timing = .perPass(preferQueries: true)
        configuration.pacedToClock = true
        configuration.dropLateFrames = true
        configuration.frameQueueCapacity = 2
        configuration.copyAudio = false
        // The clip's sound or the microphone's is analysed from the start, so a shader that gains an audio
        // input while being edited gets sound at once.
        configuration.analyzesAudio = true
        configuration.outputColor = colorPlan.outputColor
        // Faces, when the shader's graph draws them or a face flag asks: live, so frames never wait for the
        // detector (a graph that starts drawing faces after a reload gets them only with a face flag).
        let faces = try options.faces.makeSideInput(for: graph, live: true)
        let segmentation = try options.segmentation.makeSideInput(for: graph, live: true, gpu: gpu)
        // The microphone runs with the preview; recordings take its sound from the moment they start.
        let capture = try options.audioDevice.map { try AudioCaptureSource(device: $0) }
        let mouse = DevMouse()
        self.mouse = mouse
        let output = PreviewSink(view: .output, hub: hub, maxWidth: options.previewMaxWidth, bufferCount: 8)
        let input = PreviewSink(view: .input, hub: hub, maxWidth: options.previewMaxWidth, bufferCount: 6)
        engine = try FrameEngine(source: source, graph: graph, sinks: [output, input], configuration: configuration,
                                 gpu: gpu, audioCapture: capture, taps: [DevStatsTap(state: state, output: output, controller: controller), control.tap],
                                 sideInputs: (faces.map { [FaceRegions($0)] } ?? []) + (segmentation.map { [$0] } ?? []) + [mouse],
                                 inputs: try options.extraInputs.enumerated().map { try InputTrack(index: $0.offset + 1, input: $0.element) },
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
