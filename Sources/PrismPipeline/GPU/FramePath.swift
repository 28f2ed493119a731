import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import Synchronization

/// What the engine does when the input changes format or size mid-run (a camera switch).
public enum SizeChangePolicy: Sendable {
    /// The output keeps its size: a final scale is appended to the graph (a movie cannot change size).
    case keepOutputSize
    /// The output follows the input: sinks are told the new layout (`FrameSink.reopen`) and a graph that
    /// no longer compiles falls back to the unfiltered input (the shader preview).
    case followInput
}

/// How the filter passes are timed.
public enum PassTiming: Sendable {
    case off
    /// Per-pass GPU time (`PassTimer`): timer queries where the driver has them and `preferQueries`,
    /// else fenced CPU timing.
    case perPass(preferQueries: Bool)
}

/// One sink's readback channel: its buffer pool and readback ring, in its layout. Lives on the GPU thread.
final class ReadbackChannel {
    let outlet: SinkOutlet
    private(set) var layout: PackedFrameLayout
    private(set) var pool: FrameBufferPool
    private(set) var readback: FrameReadback<ProcessedFrame>
    private let strategy: ReadbackStrategy

    init(outlet: SinkOutlet, layout: PackedFrameLayout, strategy: ReadbackStrategy) throws {
        self.outlet = outlet
        self.layout = layout
        self.strategy = strategy
        pool = FrameBufferPool(layout: layout, capacity: outlet.bufferCount)
        readback = try FrameReadback(strategy: strategy, layout: layout)
        outlet.use(pool)
    }

    /// Starts reading `target` back into a pooled buffer; complete frames go to the sink's queue. A sink
    /// that takes the newest frames is skipped when it has no free buffer; one that takes every frame
    /// holds the engine back until it has.
    func submit(_ target: RenderTarget, pts: MediaTime, duration: MediaTime?, index: Int) throws {
        let buffer: PooledFrameBuffer
        switch outlet.delivery {
        case .everyFrame:
            buffer = try pool.acquire(timeout: 30)
        case .newest:
            guard let free = pool.tryAcquire() else { outlet.countSkipped(); return }
            buffer = free
        }
        let frame = ProcessedFrame(buffer: buffer, pts: pts, duration: duration, index: index)
        try readback.submit(target, into: buffer.data, tag: frame) { done in outlet.queue.push(.video(done)) }
    }

    /// Delivers every frame still being read back.
    func drain() throws {
        for frame in try readback.drain() { outlet.queue.push(.video(frame)) }
    }

    /// Continues in another layout (the output changed size): what was in flight is delivered first.
    func change(to layout: PackedFrameLayout) throws {
        guard layout != self.layout else { return }
        try drain()
        self.layout = layout
        pool = FrameBufferPool(layout: layout, capacity: outlet.bufferCount)
        readback = try FrameReadback(strategy: strategy, layout: layout)
        outlet.use(pool)
    }

}

/// The one GPU frame path: the uploader, the renderers (the graph for the output sinks, an empty one for
/// the input sinks), a readback channel (pool + readback ring) per sink, the pass timer; per frame upload →
/// side inputs → graph → readback into each sink's buffers → taps, and the changes asked for between frames.
/// The engine runs `process` as one GPU-thread job per frame; nothing else in Prism hand-rolls this loop
/// (stills, the bench and face-bench are engine runs). Every GL object of a run is owned here.
final class FramePath {
    /// What a frame path is made with: the run's choices, complete before the path exists and fixed for its
    /// life (the graph and the input sizes are where it starts).
    struct Setup {
        /// What the context is (not the context: the stage lives and dies on the context's own thread, which
        /// must never hold the last reference to its context).
        var gpuInfo: GPUInfo
        var graph: FilterGraph
        var source: SourceInfo
        var strategy: ReadbackStrategy
        var compileOptions: CompileOptions
        var sizePolicy: SizeChangePolicy
        var timing: PassTiming
        /// What sinks are told besides the layout.
        var frameRate: Rational?
        var audio: AudioStreamInfo?
        var pcm: PCMFormat?
        /// A live run keeps what its sinks recorded when it fails.
        var keepsOutputOnFailure: Bool
        /// The colour the graph converts the output to (`EngineConfiguration.outputColor`); nil: the source's.
        var outputColor: VideoColor?
        /// What the run supplies besides the frames: its side inputs' data, and sound when the engine decodes
        /// it for audio-reactive filters (`TimedFrame.audio` is set). Graphs that read no more may be set.
        var sideData: SideData
        var taps: [any FrameTap]
        var sideInputs: [any SideInput]
        /// The sizes of the inputs besides the first, by index.
        var inputSizes: [Int: Size]
        var events: (@Sendable (EngineEvent) -> Void)?
        var requestCameraSwitch: (@Sendable (String) -> Void)?
    }

    /// What the path was made with; `graph`, `source`, `taps` and `inputSizes` below are what they are now.
    private(set) var setup: Setup
    static var noSoundReason: String {
        "this run decodes no sound (the input has no audio track and no \(Setting.audio) was given, "
            + "or the graph it started with had no audio inputs)"
    }
    private(set) var graph: FilterGraph
    /// The graph for the sinks at the output; nil while there are none.
    private(set) var renderer: GraphRenderer?
    /// An empty graph for the sinks that see the input; nil while there are none.
    private var inputRenderer: GraphRenderer?
    private(set) var outputs: [ReadbackChannel] = []
    private var inputs: [ReadbackChannel] = []
    private let uploader = FrameUploader()
    /// The sizes of the inputs besides the first, by index (`GraphInputSlot.size` is set from them before
    /// each compile).
    private var inputSizes: [Int: Size]
    /// Each other input's conversion to R'G'B' (its own uploader and an empty graph into an RGBA target), by index.
    private var inputStages: [Int: InputStage] = [:]
    private(set) var timer: PassTimer?
    private var taps: [any FrameTap]
    private var sourceColorSpace: YUVColorSpace
    /// The source as it is now, what the graph is compiled for (a camera switch changes its size and format).
    private var source: SourceInfo
    /// `.keepOutputSize`: the size every output keeps.
    private var keptOutputSize: Size?
    /// Starts a sink's output thread; set while the engine runs, so sinks attached then start at once.
    var launch: ((SinkOutlet) -> Void)?
    /// Outlets a running engine must wait for (the run's thread joins them).
    let registry: OutletRegistry
    var times = StageTimes()

    init(_ setup: Setup, registry: OutletRegistry) {
        self.setup = setup
        graph = setup.graph
        source = setup.source
        taps = setup.taps
        inputSizes = setup.inputSizes
        self.registry = registry
        sourceColorSpace = setup.source.colorSpace
    }

    // MARK: Compiling

    private var outputFormats: [PixelFormat] { outputs.map(\.outlet.pixelFormat) }

    private func compile(_ graph: FilterGraph, formats: [PixelFormat]) throws -> GraphRenderer? {
        guard !formats.isEmpty else { return nil }
        try graph.setInputSizes(inputSizes)
        return try GraphRenderer(graph: graph, sourceFormat: source.pixelFormat, sourceSize: source.size, sinks: formats,
                                 options: setup.compileOptions)
    }

    /// What a sink at `point` is told: the packing's Y'CbCr and the colour it is tagged with (the output's
    /// conversion, when the graph converts; the source's otherwise).
    private func stream(_ layout: PackedFrameLayout, at point: SinkPoint) -> SinkStream {
        var color = source.color
        color.space = YUVColorSpace.packing(sourceFormat: source.pixelFormat, sourceColorSpace: sourceColorSpace,
                                            outputSize: layout.size)
        if case .output = point, let outputColor = setup.outputColor { color = outputColor }
        return SinkStream(layout: layout, color: color, source: source, frameRate: setup.frameRate, audio: setup.audio, pcm: setup.pcm)
    }

    /// Moves each channel to its layout in `renderer` and tells its sink (later frames have the new layout).
    private func relayout(_ channels: [ReadbackChannel], for renderer: GraphRenderer?) throws {
        for (index, channel) in channels.enumerated() {
            guard let layout = renderer?.sinkLayouts[index], layout != channel.layout else { continue }
            try channel.change(to: layout)
            channel.outlet.queue.push(.reopen(stream(layout, at: channel.outlet.point)))
        }
    }

    /// The empty graph the sinks at the input read from, for their formats (nil while there are none).
    private func compileInputRenderer(adding format: PixelFormat? = nil) throws -> GraphRenderer? {
        try compile(FilterGraph(), formats: inputs.map(\.outlet.pixelFormat) + (format.map { [$0] } ?? []))
    }

    /// Installs a renderer (and a timer for its passes) and moves each output channel to its layout.
    private func install(_ candidate: GraphRenderer?, graph: FilterGraph) throws {
        try relayout(outputs, for: candidate)
        self.graph = graph
        renderer = candidate
        if case .perPass = setup.timing, let candidate {
            if timer?.passCount == candidate.passCount { candidate.timer = timer } else { restartTimer() }
        } else {
            timer = nil
        }
    }

    /// A new timer for the renderer's passes (under `.perPass` timing), counting from the next frame.
    func restartTimer() {
        guard let renderer, case .perPass(let preferQueries) = setup.timing else { return }
        timer = PassTimer(passCount: renderer.passCount, preferQueries: preferQueries, extensions: setup.gpuInfo.extensions)
        renderer.timer = timer
    }

    /// Adds a sink (before the run, or between frames); opens it with its stream. Returns its outlet.
    func attach(_ sink: any FrameSink) throws -> SinkOutlet {
        let outlet = SinkOutlet(sink, keepOnFailure: setup.keepsOutputOnFailure)
        switch outlet.point {
        case .output:
            let candidate = try compile(graph, formats: outputFormats + [outlet.pixelFormat])!
            let layout = candidate.sinkLayouts.last!
            if keptOutputSize == nil, setup.sizePolicy == .keepOutputSize { keptOutputSize = layout.size }
            try sink.open(stream(layout, at: .output))
            outputs.append(try ReadbackChannel(outlet: outlet, layout: layout, strategy: setup.strategy))
            try install(candidate, graph: graph)
        case .input:
            let candidate = try compileInputRenderer(adding: outlet.pixelFormat)!
            let layout = candidate.sinkLayouts.last!
            try sink.open(stream(layout, at: .input))
            inputs.append(try ReadbackChannel(outlet: outlet, layout: layout, strategy: setup.strategy))
            inputRenderer = candidate
        }
        registry.add(outlet)
        launch?(outlet)
        return outlet
    }

    func outlet(of sink: any FrameSink) -> SinkOutlet? {
        (outputs + inputs).first { $0.outlet.sink.value === sink }?.outlet
    }

    /// Removes a sink between frames: its frames in flight are delivered, then its own thread finishes it
    /// and it leaves the graph as a sink that finished itself does.
    func detach(_ sink: any FrameSink) throws {
        guard let channel = (outputs + inputs).first(where: { $0.outlet.sink.value === sink }) else { return }
        try channel.drain()
        channel.outlet.finishItself()
        try dropClosedOutlets()
    }

    /// Replaces the graph between frames; on failure the current one keeps running.
    func setGraph(_ graph: FilterGraph) throws {
        // A graph that reads side data the run lacks (sound, faces, the mask): refused, never fed nothing.
        if let error = graph.missingSideDataError(supplied: setup.sideData, noSound: Self.noSoundReason) { throw error }
        try install(try compile(graph, formats: outputFormats), graph: graph)
    }

    /// Compiles the current graph again (a parameter that changes code or sizes, see `GraphRenderer.isStale`).
    func recompile() throws { try setGraph(graph) }

    /// Sinks that finished themselves (they could not follow a size change) leave the graph.
    private func dropClosedOutlets() throws {
        let closed = outputs.filter { !$0.outlet.isOpen }
        if !closed.isEmpty {
            outputs.removeAll { !$0.outlet.isOpen }
            try install(try compile(graph, formats: outputFormats), graph: graph)
        }
        if inputs.contains(where: { !$0.outlet.isOpen }) {
            inputs.removeAll { !$0.outlet.isOpen }
            inputRenderer = try compileInputRenderer()
        }
    }

    /// The input changed format or size: recompile for it, by the size policy.
    private func adapt(to format: PixelFormat, size: Size) throws {
        let oldSize = renderer?.outputSize ?? source.size
        // The old renderers cannot draw frames of the new size: their targets go back to the context's
        // pool first, so the new ones take those that fit.
        (renderer, inputRenderer) = (nil, nil)
        source.pixelFormat = format
        source.size = size
        switch setup.sizePolicy {
        case .keepOutputSize:
            var candidate = try compile(graph, formats: outputFormats)
            let wanted = outputs.map(\.layout)
            if candidate != nil, candidate?.sinkLayouts != wanted, let keptOutputSize {
                try graph.appendScale(to: keptOutputSize)
                candidate = nil  // its targets go back to the pool for the graph with the scale
                candidate = try compile(graph, formats: outputFormats)
            }
            guard candidate?.sinkLayouts ?? [] == wanted else {
                throw InvalidRequest("input changed to \(format.rawValue) \(size): the graph's output no longer matches the output")
            }
            try install(candidate, graph: graph)
        case .followInput:
            do {
                try install(try compile(graph, formats: outputFormats), graph: graph)
            } catch {
                setup.events?(.graphFallback(error: "\(error)"))
                try install(try compile(FilterGraph(), formats: outputFormats), graph: FilterGraph())
            }
        }
        inputRenderer = try compileInputRenderer()
        try relayout(inputs, for: inputRenderer)
        setup.events?(.inputChanged(format: format, size: size, outputFrom: oldSize, outputTo: renderer?.outputSize ?? size))
    }

    // MARK: Other inputs

    /// One other input's way onto the GPU: its frames are uploaded and converted to R'G'B'A by an empty
    /// graph, once per new frame (a held or repeated frame is not uploaded again).
    private final class InputStage {
        let uploader = FrameUploader()
        let renderer: GraphRenderer
        let format: PixelFormat
        let size: Size
        /// The frame the target holds (kept, so a new frame is never taken for it).
        var current: VideoFrame?

        init(format: PixelFormat, size: Size, options: CompileOptions) throws {
            self.format = format
            self.size = size
            var options = options
            options.outputColorSpace = nil
            renderer = try GraphRenderer(graph: FilterGraph(), sourceFormat: format, sourceSize: size, sinks: [.rgba],
                                         options: options)
        }
    }

    /// Hangs each other input's frame for this output frame on the graph's slots; a new size recompiles the
    /// graph first (between frames, as a new format of the first input does).
    private func present(_ shown: [Int: InputFrame]) throws {
        let slots = graph.inputSlots
        guard !slots.isEmpty else { return }
        var resized = false
        for (index, picked) in shown {
            if case .frame(let frame) = picked, inputSizes[index] != frame.size {
                inputSizes[index] = frame.size
                resized = true
            }
        }
        if resized { try recompile() }
        for slot in graph.inputSlots {
            guard case .frame(let frame)? = shown[slot.index] else {
                slot.shown = false
                continue
            }
            var stage = inputStages[slot.index]
            if stage == nil || stage!.format != frame.format || stage!.size != frame.size {
                stage = nil
                inputStages[slot.index] = nil
                stage = try InputStage(format: frame.format, size: frame.size, options: setup.compileOptions)
                inputStages[slot.index] = stage
            }
            let converter = stage!
            if converter.current !== frame {
                let uploaded = try converter.uploader.upload(CPUFramePlanes(format: frame.format, size: frame.size,
                                                                            colorSpace: frame.colorSpace, planes: frame.planes))
                try converter.renderer.render(uploaded, context: FrameContext())
                converter.current = frame
            }
            slot.texture = converter.renderer.sinkTarget(0).texture
            slot.shown = true
        }
    }

    // MARK: Frames

    /// One frame: upload, side inputs, the graph, readback for each sink that wants it, taps.
    func process(_ timed: TimedFrame, index: Int, time: Double, timeDelta: Double, inputs shown: [Int: InputFrame] = [:],
                 control: EngineControl) throws {
        let frame = timed.frame
        try dropClosedOutlets()
        if frame.format != source.pixelFormat || frame.size != source.size { try adapt(to: frame.format, size: frame.size) }
        try present(shown)
        sourceColorSpace = frame.colorSpace
        var t0 = StageTimes.now()
        let uploaded = try uploader.upload(CPUFramePlanes(format: frame.format, size: frame.size,
                                                          colorSpace: frame.colorSpace, planes: frame.planes))
        times.add(.upload, since: t0)
        var context = FrameContext(time: time, timeDelta: timeDelta, frameIndex: index, audio: timed.audio)
        context.frameRate = (setup.frameRate ?? source.frameRate)?.doubleValue ?? 0  // ShaderToy's iFrameRate
        for input in setup.sideInputs { try input.apply(to: &context, frame: timed, uploaded: uploaded, index: index) }
        // Blocks and blurs sized to the faces: a new size is a new graph, compiled before this frame is drawn.
        if setup.sideData.contains(.faceRegions), try graph.fitFaceSizedEffects(to: context.regions, frameSize: uploaded.size) { try recompile() }
        if let renderer {
            t0 = StageTimes.now()
            try renderer.render(uploaded, context: context)
            if timer == nil { times.add(.filter, since: t0) }
            t0 = StageTimes.now()
            for (sink, channel) in outputs.enumerated() where channel.outlet.wants(frameIndex: index) {
                try channel.submit(renderer.sinkTarget(sink), pts: timed.pts, duration: timed.duration, index: index)
            }
            times.add(.readback, since: t0)
        }
        if let inputRenderer, inputs.contains(where: { $0.outlet.wants(frameIndex: index) }) {
            try inputRenderer.render(uploaded, context: context)
            for (sink, channel) in inputs.enumerated() where channel.outlet.wants(frameIndex: index) {
                try channel.submit(inputRenderer.sinkTarget(sink), pts: timed.pts, duration: timed.duration, index: index)
            }
        }
        if !taps.isEmpty {
            let rendered = RenderedFrame(uploaded: uploaded, renderer: renderer, pts: timed.pts, index: index, context: context)
            for tap in taps { try tap.rendered(rendered, control: control) }
        }
    }

    /// At the end: every frame in flight is delivered, the taps finish, the timer's totals are counted.
    func finish() throws {
        let t0 = StageTimes.now()
        for channel in outputs + inputs { try channel.drain() }
        times.add(.readback, nanoseconds: StageTimes.now() - t0, count: 0)
        for tap in taps { try tap.finish() }
        for input in setup.sideInputs { try input.finish() }
        if let timer {
            timer.finish()
            let total = timer.samples.reduce(UInt64(0)) { $0 + $1.reduce(0, +) }
            times.add(.filter, nanoseconds: total, count: timer.samples.first?.count ?? 0)
        }
    }

    /// Releases every GL object of the run, on this thread.
    func release() {
        renderer?.timer = nil
        renderer = nil
        inputRenderer = nil
        inputStages.removeAll()
        for slot in graph.inputSlots { slot.texture = nil }
        timer = nil
        outputs.removeAll()
        inputs.removeAll()
        taps.removeAll()
        // The graph and the taps it started with go here too, not wherever the path is dropped.
        setup.graph = graph
        setup.taps = []
    }

}

/// Every outlet of a run, for the run's thread to join at the end (sinks attached while running too).
final class OutletRegistry: Sendable {
    private let outlets = Mutex<[SinkOutlet]>([])
    func add(_ outlet: SinkOutlet) { outlets.withLock { $0.append(outlet) } }
    var all: [SinkOutlet] { outlets.withLock { $0 } }
}

extension FilterGraph {
    /// Appends a final `scale` to `size` (the output keeps a size its input does not have).
    public func appendScale(to size: Size) throws {
        // mpv hooks take the run's output size as their OUTPUT (Anime4K's upscalers run only when it is
        // larger than their input) and end resized to it: no scale after them is needed.
        for node in nodes { (node.kernel as? OutputSizing)?.requestedOutputSize = size }
        if case .node(let id) = output, nodes[id.index].kernel is OutputSizing { return }
        guard let scale = BuiltinFilters.named("scale") else { throw InvalidRequest("this build lacks the scale filter") }
        let (kernel, values) = try scale.instantiate(["size": .size(size)])
        try append("scale", kernel: kernel, parameters: values)
    }
}
