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
    enum Command: Sendable {
        case reload
        case setParameter(node: Int, name: String, value: ParameterValue)
        case startRecording(path: String)
        case stopRecording
    }

    let options: DevOptions
    let hub = PreviewHub()
    let state = DevState()
    let stop = StopSignal()
    /// Recordings' names: stamped with the time, `-2`, `-3`… within one second, never an existing file's.
    let recordingNames: TakeNames
    /// The page's pointer, ShaderToy's `iMouse` (a side input).
    let mouse: DevMouse
    private let gpu: GPUContext
    private let engine: FrameEngine
    /// The GPU thread's side of the session: the recording, reloads, parameters.
    private let controller: GPUBound<DevController>
    private let watcher = Locked<FileWatcher?>(nil)
    /// Parameters the user set ("node.name"), carried over reloads; written by the server's threads.
    private let userSet = Locked(Set<String>())

    init(options: DevOptions, gpu: GPUContext? = nil) throws {
        self.options = options
        let gpu = try gpu ?? GPUContext(options: options.gpu)
        recordingNames = TakeNames(directory: options.outputDirectory, prefix: "prism-dev")
        self.gpu = gpu
        let source = try SourceSpec(input: options.input, size: options.patternSize, frameRate: options.frameRate,
                                    loop: true).open()
        let state = self.state
        let quiet = options.quiet
        let userSet = self.userSet
        // The preview is SDR: HDR input is tone mapped in front of the shader, as `run` does for an SDR output.
        var colorOptions = Session.Options()
        colorOptions.dynamicRange = .sdr
        let colorPlan = try ColorPlan(source: source.info, graph: FilterGraph(), options: colorOptions)
        let sourceFilters = colorPlan.filters
        let controller = try gpu.perform {
            GPUBound(DevController(options: options, state: state, userSet: userSet, sourceFilters: sourceFilters), on: gpu)
        }
        self.controller = controller
        let graph = try gpu.perform { controller.value.initialGraph() }
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
                                 gpu: gpu, audioCapture: capture, taps: [DevStatsTap(state: state, output: output, controller: controller)],
                                 sideInputs: (faces.map { [FaceRegions($0)] } ?? []) + (segmentation.map { [$0] } ?? []) + [mouse],
                                 inputs: try options.extraInputs.enumerated().map { try InputTrack(index: $0.offset + 1, input: $0.element) },
                                 events: { event in DevSession.handle(event, state: state, controller: controller, quiet: quiet) })
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
            refreshCameras()
        }
    }

    var gpuInfo: GPUInfo { engine.gpuInfo }
    var sourceInfo: SourceInfo { engine.sourceInfo }

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

    /// Asks the engine to switch to another camera before its next frame.
    func requestCameraSwitch(to path: String) {
        state.update {
            $0.cameraPending = path
            $0.cameraError = nil
        }
        engine.switchCamera(to: path)
    }

    /// Queues work for the GPU thread; it runs before the next frame.
    func send(_ command: Command) {
        if case .setParameter(let node, let name, _) = command { userSet.withLock { _ = $0.insert("\(node).\(name)") } }
        let controller = self.controller
        let watcher = self.watcher
        engine.schedule { control in
            let dev = controller.value
            switch command {
            case .reload: dev.reload(control, watcher: watcher)
            case .setParameter(let node, let name, let value): dev.setParameter(control, node: node, name: name, value: value)
            case .startRecording(let path): dev.startRecording(control, path: path)
            case .stopRecording: try dev.stopRecording(control)
            }
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

    /// Runs until `stop`; returns when the engine has finished (a recording in progress is finished too).
    func run() throws {
        // Watch the shader's files; a burst of saves becomes one reload.
        var watched = Self.watchedFiles(for: options.graphText)
        if watched.isEmpty { watched = [options.shaderPath] }
        state.update { $0.watched = watched }
        let fileWatcher = try FileWatcher(files: watched) { [weak self] _ in self?.send(.reload) }
        watcher.withLock { $0 = fileWatcher }
        defer { fileWatcher.stop() }
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
