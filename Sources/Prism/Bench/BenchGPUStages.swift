import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline

/// The GPU-stage rows: upload per pixel format, the conversions, the graph's passes, readback both ways and the
/// GPU thread's whole frame, each through the engine's own classes; and the checks that its frames are right.
extension BenchRunner {
    struct GPUStages {
        var rows: [BenchRow] = []
        var verifications: [BenchVerification] = []
        var passLabels: [String] = []
        var timerMethod = ""
        var timerNote = ""
        /// The GPU's output for each check frame of the clip (tight yuv420p), for the end-to-end check.
        var expectedOutputs: [Int: [UInt8]] = [:]
    }

    /// What the GPU-stage timings and checks give the graph: one stand-in face in the middle, so graphs that
    /// draw faces do their masked work (the end-to-end runs use the detector on the clip).
    static func stageContext(_ index: Int = 0) -> FrameContext {
        FrameContext(frameIndex: index, regions: [.init(center: SIMD2(0.5, 0.45), radius: 0.12)])
    }

    /// The one stand-in face of `stageContext` as the engine's face side input (GPU-stage rows and checks).
    final class StandInFace: SideInput {
        var supplies: SideData { .faceRegions }
        func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
            context.regions = BenchRunner.stageContext(index).regions
        }
    }

    private static func syntheticPlanes(format: PixelFormat, size: Size) -> [[UInt8]] {
        format.planes.enumerated().map { index, plane in
            let count = plane.minimumRowBytes(for: size.width) * plane.height(for: size.height)
            var bytes = [UInt8](repeating: 0, count: count)
            for i in 0..<count {
                let value = UInt8(truncatingIfNeeded: (i &* 7) ^ (i >> 9) &+ index &* 64)
                // 10-bit samples: keep the high byte within 0...3.
                bytes[i] = format.bitDepth > 8 && i % 2 == 1 ? value & 3 : value
            }
            return bytes
        }
    }

    /// Splits a tightly packed frame into its planes' (pointer, row bytes) for an upload.
    private static func withPlanes<T>(_ planes: [[UInt8]], format: PixelFormat, size: Size,
                                      _ body: ([(base: UnsafeRawPointer, rowBytes: Int)]) throws -> T) rethrows -> T {
        var pointers: [(base: UnsafeRawPointer, rowBytes: Int)] = []
        var storage: [UnsafeMutableRawPointer] = []
        defer { for pointer in storage { pointer.deallocate() } }
        for (index, plane) in planes.enumerated() {
            let memory = UnsafeMutableRawPointer.allocate(byteCount: max(plane.count, 1), alignment: 64)
            plane.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: plane.count) }
            storage.append(memory)
            pointers.append((UnsafeRawPointer(memory), format.planes[index].minimumRowBytes(for: size.width)))
        }
        return try body(pointers)
    }

    /// A frame owning a copy of tightly packed planes (the layout `VideoFrame.packedBytes` gives).
    private static func frame(_ planes: [[UInt8]], format: PixelFormat, size: Size, colorSpace: YUVColorSpace) -> VideoFrame {
        let frame = VideoFrame(format: format, size: size, colorSpace: colorSpace, pts: .zero)
        let bytes = planes.flatMap { $0 }
        precondition(bytes.count == format.frameBytes(for: size), "tight \(format.rawValue) planes of \(size) expected")
        // The frame owns its freshly allocated, tightly packed memory; nothing else sees it yet.
        bytes.withUnsafeBytes { UnsafeMutableRawPointer(mutating: frame.planes[0].base).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        return frame
    }

    private static func split420(_ bytes: [UInt8], size: Size) -> [[UInt8]] {
        let luma = size.width * size.height, chroma = ((size.width + 1) / 2) * ((size.height + 1) / 2)
        return [Array(bytes[0..<luma]), Array(bytes[luma..<(luma + chroma)]), Array(bytes[(luma + chroma)...])]
    }

    /// A packed readback buffer (yuv420p or nv12) → tightly packed yuv420p, what the checks compare.
    static func unpack(_ buffer: UnsafeRawPointer, layout: PackedFrameLayout) -> [UInt8] {
        var planes: [[UInt8]] = []
        for plane in layout.planes {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(plane.rows * plane.usedRowBytes)
            for row in 0..<plane.rows {
                let start = buffer + plane.offset + row * plane.rowBytes
                bytes.append(contentsOf: UnsafeRawBufferPointer(start: start, count: plane.usedRowBytes))
            }
            planes.append(bytes)
        }
        if layout.format == .nv12, planes.count == 2 {
            let interleaved = planes[1]
            var cb = [UInt8](), cr = [UInt8]()
            cb.reserveCapacity(interleaved.count / 2)
            cr.reserveCapacity(interleaved.count / 2)
            for index in stride(from: 0, to: interleaved.count - 1, by: 2) {
                cb.append(interleaved[index])
                cr.append(interleaved[index + 1])
            }
            planes = [planes[0], cb, cr]
        }
        return planes.flatMap { $0 }
    }

    /// One engine run of in-memory frames (no decoder in the figures) through `graph` into `sinks`, as
    /// `prism run` runs it; the figures are read from its report. Graphs that draw faces get the one
    /// stand-in face of `stageContext`.
    private func engineRun(_ frames: [VideoFrame], count: Int? = nil, graph: FilterGraph, sinks: [any FrameSink],
                           readback: ReadbackStrategy? = nil, timing: PassTiming = .off) throws -> RunReport {
        var configuration = EngineConfiguration()
        configuration.readback = readback
        configuration.timing = timing
        configuration.fuse = options.fuse
        configuration.yuvRoute = options.yuvRoute
        configuration.copyAudio = false
        let source = try FrameListSource(frames: frames, count: count, frameRate: Rational(30, 1))
        let engine = try FrameEngine(source: source, graph: graph, sinks: sinks, configuration: configuration,
                                     gpu: context, sideInputs: graph.requiredSideData.contains(.faceRegions) ? [StandInFace()] : [])
        return try engine.run()
    }

    /// `runs` engine runs of `framesPerRun` frames; one sample per run (its mean per frame, by `metric`).
    private func engineSamples(_ frames: [VideoFrame], graph: FilterGraph, sink: @autoclosure () -> any FrameSink,
                               readback: ReadbackStrategy? = nil, timing: PassTiming = .off,
                               _ metric: (RunReport) -> [Double]) throws -> (samples: [[Double]], last: RunReport) {
        var samples: [[Double]] = []
        var last = RunReport()
        // The first run is the warm-up (programs compiled by the driver, pools filled).
        for run in 0...microRuns {
            last = try engineRun(frames, count: framesPerRun, graph: graph, sinks: [sink()], readback: readback, timing: timing)
            guard last.framesOut == framesPerRun else {
                throw BenchError("an engine run wrote \(last.framesOut) of \(framesPerRun) frames")
            }
            if run > 0 { samples.append(metric(last)) }
        }
        return (samples, last)
    }

    /// Engine runs per micro row (each one sample), and their length.
    private var microRuns: Int { max(2, min(options.samples / 4, 5)) }
    private var framesPerRun: Int { options.warmup + options.samples }

    /// Frames packed by `graph` into `format`, read back through the engine (tight bytes per frame, in order).
    func packed(_ frames: [VideoFrame], graph: FilterGraph, format: PixelFormat,
                        readback: ReadbackStrategy? = nil, unpacking: Bool = false) throws -> [[UInt8]] {
        let collected = Locked<[[UInt8]]>([])
        let sink = CallbackSink(format: format) { frame, _ in
            let layout = frame.buffer.layout
            let bytes = unpacking ? Self.unpack(frame.buffer.data, layout: layout)
                : Array(UnsafeRawBufferPointer(start: frame.buffer.data, count: layout.byteCount))
            collected.withLock { $0.append(bytes) }
            return true
        }
        _ = try engineRun(frames, graph: graph, sinks: [sink], readback: readback)
        return collected.withLock { $0 }
    }

    func measureGPU(size: Size, clip: Clip) throws -> GPUStages {
        let graph = try PrismGraphs.binder().bind(options.filter)
        let identity = try PrismGraphs.binder().bind("")
        let reference = BenchReference.make(for: try PrismGraphs.binder().bind(options.filter))
        let sinkFormat = VideoEncoderSettings(codec: .h264).pixelFormat
        let colorSpace = clip.colorSpace
        var result = GPUStages()
        result.rows += try measureUploads(size: size, colorSpace: colorSpace)

        // The real frames: the clip's check frames, in memory.
        let clipFrames = clip.checkFrames.map {
            Self.frame(Self.split420($0.bytes, size: size), format: .yuv420p, size: size, colorSpace: colorSpace)
        }
        result.rows += try measureConversions(clipFrames, size: size, colorSpace: colorSpace, identity: identity)
        try measurePasses(clipFrames, graph: graph, sinkFormat: sinkFormat, into: &result)
        result.rows += try measureReadbacks(clipFrames, graph: graph, size: size, sinkFormat: sinkFormat)
        result.rows.append(try measureGPUFrame(clipFrames, graph: graph, sinkFormat: sinkFormat))
        try check(clipFrames, of: clip, graph: graph, identity: identity, reference: reference, sinkFormat: sinkFormat,
                  into: &result)
        // Mark the rows whose work the checks cover.
        let graphChecked = result.verifications.filter { $0.what.hasPrefix("graph") }.allSatisfy(\.passed)
        let conversionChecked = result.verifications.filter { $0.what.contains("round trip") }.allSatisfy(\.passed)
        for index in result.rows.indices {
            switch result.rows[index].stage {
            case "filter", "readback":
                result.rows[index].check = graphChecked ? "verified" : "FAILED"
            case "convert":
                result.rows[index].check = conversionChecked ? "verified" : "FAILED"
            default:
                break
            }
        }
        return result
    }

    private var runsNote: String { "\(microRuns) engine runs of \(framesPerRun) frames after a warm-up run, one sample per run" }

    /// Upload per input pixel format: the one row that drives the frame path's uploader directly, so the
    /// source can be evicted from the CPU caches before each sample (an engine run cannot).
    private func measureUploads(size: Size, colorSpace: YUVColorSpace) throws -> [BenchRow] {
        let warmup = options.warmup, samples = options.samples
        var rows: [BenchRow] = []
        try context.perform {
            let uploader = FrameUploader()
            let evictionBytes = 64 << 20
            let eviction = UnsafeMutableRawPointer.allocate(byteCount: evictionBytes, alignment: 64)
            defer { eviction.deallocate() }
            for format in [PixelFormat.yuv420p, .nv12, .yuyv422, .rgba, .yuv420p10le] {
                let planes = Self.syntheticPlanes(format: format, size: size)
                let values = try Self.withPlanes(planes, format: format, size: size) { pointers in
                    var values: [Double] = []
                    for iteration in 0..<(warmup + samples) {
                        memset(eviction, Int32(iteration & 0xFF), evictionBytes)
                        self.context.finish()
                        let t0 = benchNow()
                        _ = try uploader.upload(CPUFramePlanes(format: format, size: size, colorSpace: colorSpace, planes: pointers))
                        self.context.finish()
                        if iteration >= warmup { values.append(benchMilliseconds(since: t0)) }
                    }
                    return values
                }
                let megabytes = Double(planes.reduce(0) { $0 + $1.count }) / 1e6
                var row = BenchRow(id: "upload.\(format.rawValue)", stage: "upload", label: "upload \(format.rawValue)",
                                   prism: try self.figure(values, "upload \(format.rawValue)"), comparison: "")
                row.note = String(format: "%.2f MB per frame, FrameUploader (ring of 3), fenced with glFinish; source evicted from the CPU caches before each sample", megabytes)
                rows.append(row)
            }
        }
        return rows
    }

    /// YUV ↔ RGB conversions (a graph without filters: the source conversion and the pack), timed per pass.
    private func measureConversions(_ clipFrames: [VideoFrame], size: Size, colorSpace: YUVColorSpace,
                                    identity: FilterGraph) throws -> [BenchRow] {
        var rows: [BenchRow] = []
        for (from, to) in [(PixelFormat.yuv420p, PixelFormat.rgba), (.rgba, .yuv420p), (.yuv420p, .yuv420p), (.yuv420p, .nv12)] {
            let frames = from == .yuv420p ? clipFrames
                : [Self.frame(Self.syntheticPlanes(format: from, size: size), format: from, size: size, colorSpace: colorSpace)]
            let (values, last) = try engineSamples(frames, graph: identity, sink: DiscardSink(format: to),
                                                   timing: .perPass(preferQueries: false)) { [$0.stages.millisecondsPerFrame(.filter)] }
            var row = BenchRow(id: "convert.\(from.rawValue)-\(to.rawValue)", stage: "convert",
                               label: "convert \(from.rawValue) → \(to.rawValue)",
                               prism: try figure(values.map { $0[0] }, "convert"), comparison: "")
            row.note = "\(last.passLabels.count) pass(es): \(last.passLabels.joined(separator: ", ")); \(last.filterTiming) (--stats); \(runsNote)"
            rows.append(row)
        }
        return rows
    }

    /// The graph, as the engine runs it for an h264 output (yuv420p in, packed as libx264 takes it), its
    /// passes timed by the engine's PassTimer (timer queries where the driver has them, else fenced).
    private func measurePasses(_ clipFrames: [VideoFrame], graph: FilterGraph, sinkFormat: PixelFormat,
                               into result: inout GPUStages) throws {
        let queries = context.info.extensions.contains("GL_EXT_disjoint_timer_query")
        let (passValues, timed) = try engineSamples(clipFrames, graph: graph, sink: DiscardSink(format: sinkFormat),
                                                    timing: .perPass(preferQueries: queries)) {
            [$0.stages.millisecondsPerFrame(.filter)] + $0.passMilliseconds
        }
        result.passLabels = timed.passLabels
        result.timerMethod = timed.filterTiming
        result.timerNote = "the engine's PassTimer, as `prism run --stats` times passes"
            + (queries ? "" : " (no GL_EXT_disjoint_timer_query: fenced CPU timing)")
        for (index, label) in timed.passLabels.enumerated() {
            var row = BenchRow(id: "pass.\(index + 1)", stage: "filter",
                               label: "pass \(index + 1)/\(timed.passLabels.count): \(label)",
                               prism: try figure(passValues.compactMap { $0.count > index + 1 ? $0[index + 1] : nil }, "pass \(label)"),
                               comparison: "")
            row.note = "\(timed.filterTiming): the run's median for the pass; \(runsNote)"
            result.rows.append(row)
        }
        var total = BenchRow(id: "graph.total", stage: "filter",
                             label: "graph, all \(timed.passLabels.count) passes", prism: try figure(passValues.map { $0[0] }, "graph"),
                             comparison: "")
        total.note = "the engine's filter stage per frame with every pass timed (\(timed.filterTiming)); source conversion and \(sinkFormat.rawValue) pack fused in; \(runsNote)"
        result.rows.append(total)
    }

    /// Readback: the engine's readback stage with each strategy, nothing else timed.
    private func measureReadbacks(_ clipFrames: [VideoFrame], graph: FilterGraph, size: Size,
                                  sinkFormat: PixelFormat) throws -> [BenchRow] {
        let preferred = ReadbackStrategy.preferred(for: context.info)
        let bytes = PackedFrameLayout(format: sinkFormat, size: size)?.byteCount ?? 0
        var rows: [BenchRow] = []
        for strategy in [ReadbackStrategy.sync, .pbo] {
            let (values, _) = try engineSamples(clipFrames, graph: graph, sink: DiscardSink(format: sinkFormat), readback: strategy) {
                [$0.stages.millisecondsPerFrame(.readback)]
            }
            var row = BenchRow(id: "readback.\(strategy.rawValue)", stage: "readback",
                               label: strategy == .sync ? "readback sync (glReadPixels)" : "readback PBO ring (3)",
                               prism: try figure(values.map { $0[0] }, "readback"), comparison: "")
            row.note = String(format: "%.2f MB packed %@; the engine's readback stage per frame (", Double(bytes) / 1e6, sinkFormat.rawValue)
                + (strategy == .sync ? "glReadPixels waits for the frame's passes" : "a PBO read starts, an earlier one is mapped")
                + "); \(runsNote)" + (strategy == preferred ? "; the engine's choice here" : "")
            rows.append(row)
        }
        return rows
    }

    /// The GPU thread's whole cost per frame, as `prism run` spends it: upload + passes + readback from
    /// the run's report, the engine's readback choice, no fence (frames overlap as they do in a run).
    private func measureGPUFrame(_ clipFrames: [VideoFrame], graph: FilterGraph, sinkFormat: PixelFormat) throws -> BenchRow {
        let preferred = ReadbackStrategy.preferred(for: context.info)
        let (frameValues, frameRun) = try engineSamples(clipFrames, graph: graph, sink: DiscardSink(format: sinkFormat)) { report in
            [report.stages.millisecondsPerFrame(.upload) + report.stages.millisecondsPerFrame(.filter)
                + report.stages.millisecondsPerFrame(.readback)]
        }
        var row = BenchRow(id: "gpu.frame", stage: "filter",
                           label: "GPU per frame: upload + \(frameRun.passLabels.count) passes + readback",
                           prism: try figure(frameValues.map { $0[0] }, "GPU frame"), comparison: "")
        row.note = "the engine's GPU thread per frame (upload + filter + readback stages of the run's report, \(preferred.rawValue) readback, no glFinish); \(runsNote)"
        return row
    }

    /// Checks: the clip's frames through the graph, read back both ways by the engine, against the CPU reference;
    /// and the conversions alone, yuv420p → RGB → yuv420p, against the input.
    private func check(_ clipFrames: [VideoFrame], of clip: Clip, graph: FilterGraph, identity: FilterGraph,
                       reference: Result<BenchReference, BenchError>, sinkFormat: PixelFormat,
                       into result: inout GPUStages) throws {
        let size = clip.size, checkFrames = clip.checkFrames
        let sync = try packed(clipFrames, graph: graph, format: sinkFormat, readback: .sync, unpacking: true)
        let pbo = try packed(clipFrames, graph: graph, format: sinkFormat, readback: .pbo, unpacking: true)
        let roundTrips = try packed(clipFrames, graph: identity, format: .yuv420p, readback: .sync, unpacking: true)
        let identityStaysInYUV = try context.perform {
            try GraphRenderer(graph: identity, sourceFormat: .yuv420p, sourceSize: size, sinks: [.yuv420p],
                              options: CompileOptions(yuvRoute: options.yuvRoute)).staysInYUV
        }
        let staysInYUV = try context.perform {
            try GraphRenderer(graph: graph, sourceFormat: .yuv420p, sourceSize: size, sinks: [sinkFormat],
                              options: CompileOptions(fuse: options.fuse, yuvRoute: options.yuvRoute)).staysInYUV
        }
        guard sync.count == checkFrames.count, pbo.count == checkFrames.count, roundTrips.count == checkFrames.count else {
            throw BenchError("the check runs gave \(sync.count), \(pbo.count), \(roundTrips.count) of \(checkFrames.count) frames")
        }
        let again = { if case .failure = reference { return true } else { return false } }() ? try packed(clipFrames, graph: graph, format: sinkFormat, readback: .sync, unpacking: true) : []
        for (offset, check) in checkFrames.enumerated() {
            let output = sync[offset]
            result.expectedOutputs[check.index] = output
            if output != pbo[offset] {
                result.verifications.append(BenchVerification(
                    what: "graph on clip frame \(check.index)", against: "PBO readback",
                    comparison: BenchComparison(output, pbo[offset], size: size),
                    checksum: fnv1aHex(output), passed: false, detail: "sync and PBO readbacks of the same frame differ"))
                continue
            }
            result.verifications.append(verifyGraph(output, frame: check, size: size, colorSpace: clip.colorSpace,
                                                    graph: graph, reference: reference, staysInYUV: staysInYUV,
                                                    again: again.isEmpty ? nil : again[offset]))
            // The conversions alone: yuv420p → RGB → yuv420p must give the frame back.
            let roundTrip = roundTrips[offset]
            let expected = BenchReference.identity.apply(yuv420p: check.bytes, size: size, colorSpace: clip.colorSpace,
                                                           keepsYUV: identityStaysInYUV)
            let comparison = BenchComparison(roundTrip, expected, size: size)
            let passed = comparison.lumaPSNR >= 50 && comparison.chromaPSNR >= 50
            result.verifications.append(BenchVerification(
                what: identityStaysInYUV ? "yuv420p → yuv420p round trip (Y'CbCr kept), frame \(check.index)"
                    : "yuv420p → RGB → yuv420p round trip, frame \(check.index)",
                against: identityStaysInYUV ? "the input planes"
                    : "CPU reference of the conversions (chroma up- then down-sampled)",
                comparison: comparison, checksum: fnv1aHex(roundTrip), passed: passed, detail: comparison.summary))
        }
    }

    /// The graph's output for one check frame against the CPU reference, or without one, against the input
    /// (and `again`, a second run's output: it must be deterministic).
    private func verifyGraph(_ output: [UInt8], frame check: (index: Int, bytes: [UInt8]), size: Size,
                             colorSpace: YUVColorSpace, graph: FilterGraph,
                             reference: Result<BenchReference, BenchError>, staysInYUV: Bool,
                             again: [UInt8]?) -> BenchVerification {
        let checksum = fnv1aHex(output)
        let what = "graph on clip frame \(check.index)"
        switch reference {
        case .success(let reference):
            let expected = reference.apply(yuv420p: check.bytes, size: size, colorSpace: colorSpace,
                                           keepsYUV: staysInYUV, regions: Self.stageContext(check.index).regions)
            let comparison = BenchComparison(output, expected, size: size)
            let passed = comparison.lumaPSNR >= 40 && comparison.chromaPSNR >= 40
            return BenchVerification(
                what: what, against: "CPU reference of the graph", comparison: comparison, checksum: checksum,
                passed: passed, detail: comparison.summary + "; sync = PBO"
                    + (passed ? "" : " — below 40 dB: the GPU output is not the graph's"))
        case .failure(let why):
            // No CPU reference: at least the graph must change the frame, deterministically.
            let unchanged = BenchComparison(output, check.bytes, size: size)
            let passed = again == output && (graph.nodes.isEmpty || unchanged.lumaPSNR < 60 || unchanged.chromaPSNR < 60)
            return BenchVerification(
                what: what, against: "input (\(why.message))", comparison: unchanged, checksum: checksum,
                passed: passed, detail: passed ? "deterministic, sync = PBO, differs from the input (no CPU reference)"
                    : "output unchanged or not deterministic")
        }
    }
}
