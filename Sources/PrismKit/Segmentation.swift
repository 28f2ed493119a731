import Dispatch
import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismPipeline
import PrismVision
import Synchronization

/// The segmentation side input's settings (`--segment-model`, `--segment-backend`, `--segment-smoothing`): a
/// person/foreground model whose mask `segment-mask`, `background-blur` and `background-replace` draw.
public struct SegmentationSettings: Sendable, Equatable {
    /// Where the model runs. `auto`: OpenCV DNN on the CPU when the GPU is a software renderer (llvmpipe: the
    /// GPU thread is the CPU, and the mask is then made beside the frames instead of in their way), GPU
    /// passes on a real GPU (BENCHMARKS.md, "Segmentation").
    public enum Backend: String, Sendable, CaseIterable { case auto, gpu, cpu }

    /// The ONNX model: input [1,3,H,W] RGB in 0–1 (or as its metadata says), output [1,1,H,W] foreground
    /// probability (or [1,2,H,W] logits, background then foreground: CPU only). Nil: no segmentation.
    public var model: String?
    public var backend: Backend = .auto
    /// How much of each new mask is taken (the rest is the previous one's): 1 keeps no history, 0.5 (the
    /// default) halves flicker between frames at the cost of half a frame of lag on motion.
    public var smoothing: Double = 0.5
    /// The width of the picture a dynamic-size model sees; its height follows the frame's aspect, both
    /// rounded to multiples of 32 (what down-and-up-sampling nets need). A fixed-size model sees its own size.
    public var width = 256

    public init() {}

    /// The side input these settings ask for: nil when no model is given and the graph draws no mask
    /// (a graph that does is refused by the engine, naming the segmentation model setting). Loads the model now.
    package func makeSideInput(for graph: FilterGraph, live: Bool, gpu: GPUContext) throws -> SegmentationSideInput? {
        // The flag's model, else the one a mask node names (`background-blur(model=SEG.onnx)`), else the
        // installed default when the graph draws a mask.
        guard let model = try model ?? graph.segmentationModel
                ?? (graph.requiredSideData.contains(.segmentation) ? Self.installedSegmenter(for: graph) : nil) else {
            var defaults = SegmentationSettings()
            defaults.model = model
            guard self == defaults else { throw InvalidRequest("the \(Setting.segmentAny) options need a model: \(Setting.segmentModel) SEG.onnx") }
            return nil
        }
        try RegularFile.check(model, what: "a segmentation model")
        var settings = self
        settings.model = model
        return try SegmentationSideInput(settings: settings, live: live, software: gpu.info.isSoftware, gpu: gpu)
    }
}

extension SegmentationSettings {
    /// The person segmenter used when no model is named: u2netp (rembg's small U²-Net, installed by
    /// `scripts/install-deps`) from the folders `ModelLibrary` searches. Its mask is the one its main output
    /// gives; docs/models.md says why it is the default.
    public static let defaultModel = "u2netp.onnx"

    static func installedSegmenter(for graph: FilterGraph) throws -> String {
        guard let path = ModelLibrary.find(defaultModel) else {
            let message = graph.missingSideDataError(supplied: SideData.all.subtracting(.segmentation), noSound: "")?.description
                ?? "a segmentation model is needed"
            throw InvalidRequest(message + "; none is installed (scripts/install-models puts \(defaultModel) in .models/)")
        }
        return path
    }
}

/// What the segmentation side input did: masks made, their cost, and how old the masks the frames got were.
public struct SegmentationStatistics: Sendable, Equatable {
    /// `gpu` or `cpu`: where the model ran.
    public var backend = ""
    /// The picture size the model saw.
    public var inputSize: Size?
    public var masks = 0
    public var modelSeconds = 0.0
    public var lastModelSeconds = 0.0
    /// Frames given a mask, the sum and the largest age of those masks in frames (live: the model runs beside
    /// the frames, so a mask is as old as the frames that passed while it was made; files: always 0).
    public var framesServed = 0
    public var ageSum = 0
    public var maxAge = 0
    /// Live frames that went without a new model run because the model was busy.
    public var skipped = 0
    /// Frames that waited for a model run before going on (files: every frame; live with the CPU back end:
    /// none, whatever the load: the model never holds a frame back).
    public var waited = 0

    public var meanAge: Double { framesServed == 0 ? 0 : Double(ageSum) / Double(framesServed) }

    public var summary: String {
        let mean = masks == 0 ? 0 : modelSeconds / Double(masks) * 1000
        return "segmentation (\(backend), \(inputSize.map { "\($0)" } ?? "-")): \(masks) masks, "
            + String(format: "%.1f ms each, mask age %.2f frames (max %d)", mean, meanAge, maxAge)
    }
}

/// The segmentation model as the engine's side input. On the GPU thread, after each upload, the frame's small
/// RGB picture is rendered (`RGBThumbnailer`) and the model run on it: files wait for it on every frame
/// (deterministic); live sources hand it to a worker thread when that is idle and never wait, each frame
/// taking the newest mask (its age is counted). Each new mask is blended with the previous one (`smoothing`).
package final class SegmentationSideInput: SideInput {
    private let settings: SegmentationSettings
    private let live: Bool
    /// The runner's model size (fixed models) and thread (the worker owns the runner itself).
    private let fixedInputSize: Size?
    private let runsOnGPUThread: Bool
    /// Runs the model and keeps the masks; Sendable, so a job can read its statistics from any thread.
    package let worker: SegmentationWorker
    private var thumbnailer: RGBThumbnailer?

    init(settings: SegmentationSettings, live: Bool, software: Bool, gpu: GPUContext) throws {
        self.settings = settings
        self.live = live
        guard let path = settings.model else { preconditionFailure("a segmentation side input needs a model") }
        guard settings.smoothing > 0, settings.smoothing <= 1 else {
            throw InvalidRequest("\(Setting.segmentSmoothing) takes a number in (0, 1], not \(settings.smoothing)")
        }
        let wantsGPU: Bool
        switch settings.backend {
        case .gpu: wantsGPU = true
        case .cpu: wantsGPU = false
        case .auto: wantsGPU = !software
        }
        var runner: SegmentationRunner
        do {
            runner = wantsGPU ? try GPUSegmentationRunner(path: path, gpu: gpu) : try CPUSegmentationRunner(path: path)
        } catch where settings.backend == .auto {
            // The other back end may read what this one cannot (OpenCV 4.6 refuses some dynamic-size graphs).
            guard let other = try? (wantsGPU ? CPUSegmentationRunner(path: path) as SegmentationRunner
                                             : GPUSegmentationRunner(path: path, gpu: gpu)) else { throw error }
            runner = other
        }
        fixedInputSize = runner.fixedInputSize
        runsOnGPUThread = runner.needsGPUThread
        worker = SegmentationWorker(runner: runner, smoothing: Float(settings.smoothing))
    }

    package var supplies: SideData { .segmentation }

    /// Waits for a model run in progress: nothing may still be inside OpenCV when the run's objects (or the
    /// process) go away.
    package func finish() throws { worker.drain() }

    deinit { worker.drain() }

    /// The picture size the model sees for a frame of `frame`.
    func inputSize(for frame: Size) -> Size {
        if let fixed = fixedInputSize { return fixed }
        func round32(_ v: Double) -> Int { max(32, Int((v / 32).rounded()) * 32) }
        let width = round32(Double(settings.width))
        return Size(width: width, height: round32(Double(width) * Double(frame.height) / Double(max(frame.width, 1))))
    }

    package func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
        let thumbnailer = self.thumbnailer ?? RGBThumbnailer()
        self.thumbnailer = thumbnailer
        let size = inputSize(for: uploaded.size)
        // The GPU back end runs on this (the GPU) thread, in the frames' stream; the CPU one beside them when live.
        if live && !runsOnGPUThread {
            if worker.isIdle {
                worker.submit(try thumbnailer.render(uploaded, size: size), frameIndex: index)
            } else {
                worker.countSkipped()
            }
        } else {
            try worker.runNow(try thumbnailer.render(uploaded, size: size), frameIndex: index)
        }
        context.segmentation = try worker.mask(forFrame: index)
    }

    package var statistics: SegmentationStatistics { worker.statistics }
}

/// One way of running the model on an RGB thumbnail: the foreground probability per pixel, row 0 the top.
protocol SegmentationRunner: AnyObject {
    var name: String { get }
    /// The model's own input size, when fixed.
    var fixedInputSize: Size? { get }
    /// True when `run` must be called on the GPU thread (GPU passes).
    var needsGPUThread: Bool { get }
    func run(_ picture: RGBThumbnail) throws -> SegmentationMask
}

/// OpenCV DNN on the CPU (any thread; one at a time).
final class CPUSegmentationRunner: SegmentationRunner {
    let name = "cpu"
    let needsGPUThread = false
    let fixedInputSize: Size?
    private let network: DNNNetwork

    /// The graph output the mask is read from: the one the GPU passes show (the first image of the input's
    /// size), not OpenCV's last layer (for u2netp, its coarsest side output).
    let output: String

    init(path: String) throws {
        network = try DNNNetwork(path: path)
        // The input and the output, chosen as the GPU lowering chooses them (ONNX's own parser reads the file).
        let probe = try NetworkKernel(path: path, parameters: ParameterValues(specs: NetworkFilter.modelParameters, given: [:]))
        fixedInputSize = probe.image.declared
        output = probe.shownOutput
    }

    func run(_ picture: RGBThumbnail) throws -> SegmentationMask {
        let n = picture.size.pixelCount
        var x = [Float](repeating: 0, count: 3 * n)
        for i in 0..<n {
            x[i] = Float(picture.rgba[i * 4]) / 255
            x[n + i] = Float(picture.rgba[i * 4 + 1]) / 255
            x[2 * n + i] = Float(picture.rgba[i * 4 + 2]) / 255
        }
        let y = try network.forward(x, channels: 3, size: picture.size, output: output, capacity: 4 * n)
        guard y.shape[0] == 1, y.shape[1] == 1 || y.shape[1] == 2 else {
            throw InvalidRequest("\(network.path): a segmentation model gives [1,1,H,W] (or [1,2,H,W] logits), not \(y.shape)")
        }
        let m = y.size.pixelCount
        var values = [Float](repeating: 0, count: m)
        if y.shape[1] == 1 {
            for i in 0..<m { values[i] = min(max(y.values[i], 0), 1) }
        } else {
            // Two-class logits: softmax's foreground share is the sigmoid of the difference.
            for i in 0..<m { values[i] = 1 / (1 + exp(y.values[i] - y.values[m + i])) }
        }
        return SegmentationMask(size: y.size, values: values, generation: 0)
    }
}

/// The model as GPU passes (`model(file=…)`): the thumbnail uploaded, the network run, its one channel read
/// back (8 bits). On the GPU thread.
final class GPUSegmentationRunner: SegmentationRunner {
    let name = "gpu"
    let needsGPUThread = true
    let fixedInputSize: Size?
    private let graph: FilterGraph
    /// For the thumbnail size last seen (made on the GPU thread at the first run, again when the size changes):
    /// the renderer, its readback and the bytes it reads into.
    private var sized: (renderer: GraphRenderer, readback: FrameReadback<Int>, packed: [UInt8])?
    /// The last thumbnail on the GPU (its texture is reused while the size holds).
    private var uploaded: UploadedFrame?

    init(path: String, gpu: GPUContext) throws {
        let values = try ParameterValues(specs: NetworkFilter.modelParameters, given: [:])
        let kernel = try NetworkKernel(path: path, parameters: values)
        guard kernel.program.features[kernel.program.outputFeature].channels == 1,
              (try? kernel.program.outputScale(input: kernel.program.fixedInputSize ?? Size(width: 64, height: 64))) == 1 else {
            throw InvalidRequest("\(path): a segmentation model on the GPU gives one channel at the input's size ([1,1,H,W])")
        }
        graph = FilterGraph()
        try graph.append("segmentation", kernel: kernel, parameters: values)
        fixedInputSize = kernel.image.declared
    }

    func run(_ picture: RGBThumbnail) throws -> SegmentationMask {
        let size = picture.size
        if sized?.renderer.sourceSize != size {
            sized = nil
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
            let layout = renderer.sinkLayouts[0]
            sized = (renderer, try FrameReadback<Int>(strategy: .sync, layout: layout), [UInt8](repeating: 0, count: layout.byteCount))
        }
        guard case (let renderer, let readback, var packed)? = sized else { preconditionFailure("the renderer was just made") }
        defer { sized?.packed = packed }
        let uploaded = try UploadedFrame.rgba(picture.rgba, size: size, reusing: self.uploaded)
        self.uploaded = uploaded
        try renderer.render(uploaded, context: FrameContext())
        let layout = renderer.sinkLayouts[0]
        _ = try packed.withUnsafeMutableBytes { try readback.submit(renderer.sinkTarget(), into: $0.baseAddress!, tag: 0) }
        var values = [Float](repeating: 0, count: size.pixelCount)
        for y in 0..<size.height {
            for x in 0..<size.width { values[y * size.width + x] = Float(packed[y * layout.rowBytes + x * 4]) / 255 }
        }
        return SegmentationMask(size: size, values: values, generation: 0)
    }
}

/// Runs the model (now, or on its own thread), smooths the masks and hands each frame the newest one.
package final class SegmentationWorker: Sendable {
    private struct State: Sendable {
        var mask: SegmentationMask?
        var maskFrame = 0
        var busy = false
        var error: String?
        var statistics = SegmentationStatistics()
    }
    private let state = Mutex(State())
    private let runner: Mutex<SegmentationRunner>
    private let smoothing: Float
    private let queue = DispatchQueue(label: "prism.segmentation")

    init(runner: sending SegmentationRunner, smoothing: Float) {
        let name = runner.name
        self.runner = Mutex(runner)
        self.smoothing = smoothing
        state.withLock { $0.statistics.backend = name }
    }

    var isIdle: Bool { state.withLock { !$0.busy } }
    /// Returns once no model run is queued or running.
    func drain() { queue.sync {} }
    package var statistics: SegmentationStatistics { state.withLock { $0.statistics } }
    func countSkipped() { state.withLock { $0.statistics.skipped += 1 } }

    /// Runs the model on `picture` now (files, or the GPU back end) and keeps the result.
    func runNow(_ picture: RGBThumbnail, frameIndex: Int) throws {
        state.withLock { $0.statistics.waited += 1 }
        try run(picture, frameIndex: frameIndex)
    }

    /// Runs the model on `picture` on the worker thread (live); the frames go on with the previous mask.
    func submit(_ picture: RGBThumbnail, frameIndex: Int) {
        state.withLock { $0.busy = true }
        queue.async { [self] in
            do {
                try run(picture, frameIndex: frameIndex)
            } catch {
                state.withLock { $0.error = "\(error)" }
            }
            state.withLock { $0.busy = false }
        }
    }

    /// Runs the model and keeps its mask, blended with the previous one.
    private func run(_ picture: RGBThumbnail, frameIndex: Int) throws {
        let started = Date()
        let new = try runner.withLock { try $0.run(picture) }
        let seconds = Date().timeIntervalSince(started)
        state.withLock { s in
            var values = new.values
            if let previous = s.mask, previous.size == new.size, smoothing < 1 {
                for i in values.indices { values[i] = smoothing * values[i] + (1 - smoothing) * previous.values[i] }
            }
            s.mask = SegmentationMask(size: new.size, values: values, generation: (s.mask?.generation ?? 0) + 1)
            s.maskFrame = frameIndex
            s.statistics.masks += 1
            s.statistics.modelSeconds += seconds
            s.statistics.lastModelSeconds = seconds
            s.statistics.inputSize = picture.size
        }
    }

    /// The newest mask for frame `index` (nil before the first), counting its age; rethrows a worker's failure.
    func mask(forFrame index: Int) throws -> SegmentationMask? {
        try state.withLock { s in
            if let error = s.error { throw InvalidRequest("the segmentation model failed: \(error)") }
            guard let mask = s.mask else { return nil }
            let age = max(0, index - s.maskFrame)
            s.statistics.framesServed += 1
            s.statistics.ageSum += age
            s.statistics.maxAge = max(s.statistics.maxAge, age)
            return mask
        }
    }
}
