import Foundation
import PrismCore
import PrismKit
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline
import PrismVision

/// Runs the whole benchmark: per size, a clip made by Prism, the stage micro-measurements on the GPU
/// thread through the engine's own classes, the encoders, the real `Pipeline` end to end, FFmpeg on the
/// same clip, and the checks that the frames are right; then a soak run that watches memory.
final class BenchRunner {
    let options: BenchOptions
    private let log: (String) -> Void
    private let context: GPUContext
    private let directory: String
    private var failures: [String] = []
    private var ffmpeg: BenchFFmpeg?
    private var ffmpegInfo: BenchFFmpegInfo
    private var timerMethod = ""
    private var timerNote = ""
    private let loadAtStart = BenchMachine.loadAverage()

    init(options: BenchOptions, log: @escaping (String) -> Void = { _ in }) throws {
        self.options = options
        self.log = log
        // The graph must bind before anything slow happens.
        _ = try PrismGraphs.binder().bind(options.filter)
        context = try GPUContext(options: options.gpu)
        directory = NSTemporaryDirectory() + "prism-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        ffmpegInfo = BenchFFmpegInfo(requested: options.compareFFmpeg, available: false, message: "not requested (--compare ffmpeg)")
        if options.compareFFmpeg {
            if let path = BenchFFmpeg.locate(explicit: options.ffmpegPath, searchPath: options.searchPath) {
                let runner = BenchFFmpeg(path: path)
                ffmpeg = runner
                ffmpegInfo.available = true
                ffmpegInfo.path = path
                ffmpegInfo.version = runner.version()
                switch BenchFFmpeg.filterChain(for: try PrismGraphs.binder().bind(options.filter), cubeDirectory: directory) {
                case .success(let chain):
                    ffmpegInfo.filterChain = chain
                    ffmpegInfo.message = "FFmpeg CPU chain: \(chain)"
                case .failure(let error):
                    ffmpegInfo.message = "\(error.message); FFmpeg figures for decode and encode only"
                }
            } else {
                let where_ = options.ffmpegPath.map { "at \($0)" } ?? "on PATH"
                ffmpegInfo.message = "ffmpeg not found \(where_): no FFmpeg comparison (install FFmpeg, e.g. apt-get install ffmpeg)"
            }
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
        context.close()
    }

    func run() throws -> BenchResult {
        FFmpegLog.setLevel(.error)
        if options.suite { return try runSuite() }
        var sizes: [BenchSizeResult] = []
        if let clip = options.userClip { sizes.append(try measureUserJob(clip)) }
        for size in options.sizes {
            sizes.append(try measure(size: size))
        }
        log("bench: soak run for memory (\(options.soakFrames) frames)…")
        let memory = try soak()
        if !memory.flat { failures.append("memory: \(memory.verdict)") }
        for size in sizes {
            for row in size.rows where !row.prism.isPlausible || !(row.ffmpeg?.isPlausible ?? true) {
                failures.append("\(size.name) \(row.label): figure not positive and finite")
            }
        }
        var methods: [String] = []
        for size in sizes where !methods.contains(size.timerMethod) { methods.append(size.timerMethod) }
        timerMethod = methods.joined(separator: " / ")
        timerNote = sizes.map { "\($0.name): \($0.timerNote)" }.joined(separator: "; ")
        let header = BenchMachine.header(info: context.info, command: options.commandLine, loadAverage: loadAtStart,
                                         timerMethod: timerMethod,
                                         timerNote: timerNote)
        return BenchResult(header: header, graph: options.filter + (options.fuse ? "" : " (unfused: one pass per filter)")
                               + (options.yuvRoute ? "" : " (R'G'B' route only)"),
                           quick: options.quick, warmup: options.warmup,
                           samples: options.samples, ffmpeg: ffmpegInfo, sizes: sizes, memory: memory, suite: nil,
                           verified: failures.isEmpty, failures: failures)
    }

    // MARK: One size

    private func measure(size: Size) throws -> BenchSizeResult {
        let name = BenchOptions.sizeName(size)
        let frames = options.clipFrames(for: size)
        log("bench: \(name): generating a \(frames)-frame clip with Prism…")
        let clip = try makeClip(size: size, frames: frames)
        var rows: [BenchRow] = []
        var verifications: [BenchVerification] = []

        // Decode.
        log("bench: \(name): decode, GPU stages…")
        var decode = BenchRow(id: "decode", stage: "decode", label: "decode h264 (MovieSource)",
                              prism: try measureDecode(clip.path), comparison: "")
        decode.note = "MovieSource.next() over the clip after warm-up; samples are means over runs of consecutive frames"
        rows.append(decode)

        // GPU stages.
        let gpuResult = try measureGPU(size: size, clip: clip)
        rows += gpuResult.rows
        verifications += gpuResult.verifications

        // Encoders.
        log("bench: \(name): encoders…")
        rows += try measureEncoders(size: size, clip: clip)

        // End to end.
        log("bench: \(name): end to end…")
        let e2e = try measureEndToEnd(size: size, clip: clip, expected: gpuResult.expectedOutputs)
        rows += e2e.rows
        verifications += e2e.verifications

        // FFmpeg beside each comparable row.
        if let ffmpeg {
            log("bench: \(name): FFmpeg…")
            try compare(&rows, ffmpeg: ffmpeg, size: size, clip: clip)
        } else {
            for index in rows.indices { rows[index].comparison = ffmpegInfo.requested ? ffmpegInfo.message : "not requested" }
        }
        for verification in verifications where !verification.passed {
            failures.append("\(name) \(verification.what): \(verification.detail)")
        }
        try? FileManager.default.removeItem(atPath: clip.rawPath)
        return BenchSizeResult(name: name, width: size.width, height: size.height, clipFrames: frames,
                               clip: "h264 (libx264 ultrafast, crf 12) 4:2:0 in .mkv, made by Prism's test pattern",
                               passes: gpuResult.passLabels, timerMethod: gpuResult.timerMethod,
                               timerNote: gpuResult.timerNote, rows: rows,
                               verifications: verifications)
    }

    struct Clip {
        var path: String
        var rawPath: String
        var size: Size
        var frames: Int
        var colorSpace: YUVColorSpace
        /// Decoded frames of the clip used for the checks (index, tightly packed yuv420p).
        var checkFrames: [(index: Int, bytes: [UInt8])]
    }

    /// The benchmark input: Prism's test pattern encoded by Prism (x264 ultrafast, crf 12, .mkv), so
    /// Prism and FFmpeg decode the same file; with --compare ffmpeg also the raw frames, for FFmpeg's
    /// encode rows.
    private func makeClip(size: Size, frames: Int, raw wantsRaw: Bool = true) throws -> Clip {
        let path = directory + "/clip-\(size).mkv"
        let rawPath = directory + "/clip-\(size).yuv"
        // An engine run of the pattern with no filters: the movie, and with --compare ffmpeg the input's raw
        // frames (what FFmpeg's encode rows read) from a sink at the input.
        let pattern = try TestPatternSource(size: size, frameRate: Rational(30, 1), frameCount: frames)
        let colorSpace = pattern.info.colorSpace
        var sinks: [any FrameSink] = [MovieSink(path: path, settings: VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 12))]
        let raw = ffmpeg != nil && wantsRaw ? FileHandle(forWritingAtPath: { _ = FileManager.default.createFile(atPath: rawPath, contents: nil); return rawPath }()) : nil
        if let raw {
            sinks.append(CallbackSink(format: .yuv420p, point: .input) { frame, _ in
                raw.write(Data(Self.unpack(frame.buffer.data, layout: frame.buffer.layout)))
                return true
            })
        }
        var configuration = EngineConfiguration()
        configuration.copyAudio = false
        let report = try FrameEngine(source: pattern, graph: FilterGraph(), sinks: sinks, configuration: configuration, gpu: context).run()
        try raw?.close()
        guard report.framesOut == frames else { throw BenchError("the clip has \(report.framesOut) of \(frames) frames") }
        let checkIndices = Array(Set([0, frames / 2, frames - 1])).sorted()
        var checkFrames: [(Int, [UInt8])] = []
        for index in checkIndices {
            let decoded = try MediaInspector.framePlanes(path, index: index)
            guard decoded.pixelFormat == "yuv420p" else { throw BenchError("the clip decodes as \(decoded.pixelFormat), not yuv420p") }
            checkFrames.append((index, decoded.planes.flatMap { $0 }))
        }
        return Clip(path: path, rawPath: rawPath, size: size, frames: frames, colorSpace: colorSpace,
                    checkFrames: checkFrames)
    }

    private func measureDecode(_ path: String) throws -> BenchFigure {
        let source = try MovieSource(url: path)
        var samples: [Double] = []
        var index = 0
        while true {
            let t0 = benchNow()
            guard let event = try source.next() else { break }
            let ms = benchMilliseconds(since: t0)
            if case .video = event {
                if index >= options.warmup { samples.append(ms) }
                index += 1
            }
        }
        // Frame-threaded decoders hand frames over unevenly (one call waits, the next finds a frame ready):
        // each sample is the mean over a run of consecutive frames, i.e. the decoder's throughput.
        let chunk = max(1, min(8, samples.count / 4))
        let means = stride(from: 0, to: samples.count - chunk + 1, by: chunk).map {
            samples[$0..<($0 + chunk)].reduce(0, +) / Double(chunk)
        }
        return try figure(means, "decode")
    }

    private func figure(_ samples: [Double], _ what: String) throws -> BenchFigure {
        guard let figure = BenchFigure(milliseconds: samples), figure.isPlausible else {
            throw BenchError("\(what): no plausible samples (\(samples.count) taken)")
        }
        return figure
    }

    // MARK: GPU stages

    struct GPUStages {
        var rows: [BenchRow] = []
        var verifications: [BenchVerification] = []
        var passLabels: [String] = []
        var timerMethod = ""
        var timerNote = ""
        /// The GPU's output for each check frame of the clip (tight yuv420p), for the end-to-end check.
        var expectedOutputs: [Int: [UInt8]] = [:]
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
    private static func unpack(_ buffer: UnsafeRawPointer, layout: PackedFrameLayout) -> [UInt8] {
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
                                     gpu: context, sideInputs: graph.readsFaceRegions ? [StandInFace()] : [])
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
    private func packed(_ frames: [VideoFrame], graph: FilterGraph, format: PixelFormat,
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

    private func measureGPU(size: Size, clip: Clip) throws -> GPUStages {
        let graph = try PrismGraphs.binder().bind(options.filter)
        let identity = try PrismGraphs.binder().bind("")
        let warmup = options.warmup, samples = options.samples
        let reference = BenchReference.make(for: try PrismGraphs.binder().bind(options.filter))
        let checkFrames = clip.checkFrames
        let sinkFormat = VideoEncoderSettings(codec: .h264).pixelFormat
        let colorSpace = clip.colorSpace
        var result = GPUStages()

        // Upload per input pixel format: the one row that drives the frame path's uploader directly, so
        // the source can be evicted from the CPU caches before each sample (an engine run cannot).
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
                result.rows.append(row)
            }
        }

        // The real frames: the clip's check frames, in memory.
        let clipFrames = checkFrames.map { Self.frame(Self.split420($0.bytes, size: size), format: .yuv420p, size: size, colorSpace: colorSpace) }
        let runsNote = "\(microRuns) engine runs of \(framesPerRun) frames after a warm-up run, one sample per run"

        // YUV ↔ RGB conversions (a graph without filters: the source conversion and the pack), timed per pass.
        for (from, to) in [(PixelFormat.yuv420p, PixelFormat.rgba), (.rgba, .yuv420p), (.yuv420p, .yuv420p), (.yuv420p, .nv12)] {
            let frames = from == .yuv420p ? clipFrames
                : [Self.frame(Self.syntheticPlanes(format: from, size: size), format: from, size: size, colorSpace: colorSpace)]
            let (values, last) = try engineSamples(frames, graph: identity, sink: DiscardSink(format: to),
                                                   timing: .perPass(preferQueries: false)) { [$0.stages.millisecondsPerFrame(.filter)] }
            var row = BenchRow(id: "convert.\(from.rawValue)-\(to.rawValue)", stage: "convert",
                               label: "convert \(from.rawValue) → \(to.rawValue)",
                               prism: try figure(values.map { $0[0] }, "convert"), comparison: "")
            row.note = "\(last.passLabels.count) pass(es): \(last.passLabels.joined(separator: ", ")); \(last.filterTiming) (--stats); \(runsNote)"
            result.rows.append(row)
        }

        // The graph, as the engine runs it for an h264 output (yuv420p in, packed as libx264 takes it), its
        // passes timed by the engine's PassTimer (timer queries where the driver has them, else fenced).
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

        // Readback: the engine's readback stage with each strategy, nothing else timed.
        let preferred = ReadbackStrategy.preferred(for: context.info)
        let bytes = PackedFrameLayout(format: sinkFormat, size: size)?.byteCount ?? 0
        for strategy in [ReadbackStrategy.sync, .pbo] {
            let (values, last) = try engineSamples(clipFrames, graph: graph, sink: DiscardSink(format: sinkFormat), readback: strategy) {
                [$0.stages.millisecondsPerFrame(.readback)]
            }
            _ = last
            var row = BenchRow(id: "readback.\(strategy.rawValue)", stage: "readback",
                               label: strategy == .sync ? "readback sync (glReadPixels)" : "readback PBO ring (3)",
                               prism: try figure(values.map { $0[0] }, "readback"), comparison: "")
            row.note = String(format: "%.2f MB packed %@; the engine's readback stage per frame (", Double(bytes) / 1e6, sinkFormat.rawValue)
                + (strategy == .sync ? "glReadPixels waits for the frame's passes" : "a PBO read starts, an earlier one is mapped")
                + "); \(runsNote)" + (strategy == preferred ? "; the engine's choice here" : "")
            result.rows.append(row)
        }

        // The GPU thread's whole cost per frame, as `prism run` spends it: upload + passes + readback from
        // the run's report, the engine's readback choice, no fence (frames overlap as they do in a run).
        let (frameValues, frameRun) = try engineSamples(clipFrames, graph: graph, sink: DiscardSink(format: sinkFormat)) { report in
            [report.stages.millisecondsPerFrame(.upload) + report.stages.millisecondsPerFrame(.filter)
                + report.stages.millisecondsPerFrame(.readback)]
        }
        var row = BenchRow(id: "gpu.frame", stage: "filter",
                           label: "GPU per frame: upload + \(frameRun.passLabels.count) passes + readback",
                           prism: try figure(frameValues.map { $0[0] }, "GPU frame"), comparison: "")
        row.note = "the engine's GPU thread per frame (upload + filter + readback stages of the run's report, \(preferred.rawValue) readback, no glFinish); \(runsNote)"
        result.rows.append(row)

        // Checks: the clip's frames through the graph, read back both ways by the engine, against the CPU reference.
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
            let output = sync[offset], pboOutput = pbo[offset]
            result.expectedOutputs[check.index] = output
            let checksum = benchChecksum(output)
            let what = "graph on clip frame \(check.index)"
            if output != pboOutput {
                result.verifications.append(BenchVerification(
                    what: what, against: "PBO readback", comparison: BenchComparison(output, pboOutput, size: size),
                    checksum: checksum, passed: false, detail: "sync and PBO readbacks of the same frame differ"))
                continue
            }
            switch reference {
            case .success(let reference):
                let expected = reference.apply(yuv420p: check.bytes, size: size, colorSpace: colorSpace,
                                               keepsYUV: staysInYUV, regions: Self.stageContext(check.index).regions)
                let comparison = BenchComparison(output, expected, size: size)
                let passed = comparison.lumaPSNR >= 40 && comparison.chromaPSNR >= 40
                result.verifications.append(BenchVerification(
                    what: what, against: "CPU reference of the graph", comparison: comparison, checksum: checksum,
                    passed: passed, detail: comparison.summary + "; sync = PBO"
                        + (passed ? "" : " — below 40 dB: the GPU output is not the graph's")))
            case .failure(let why):
                // No CPU reference: at least the graph must change the frame, deterministically.
                let unchanged = BenchComparison(output, check.bytes, size: size)
                let passed = again[offset] == output && (graph.nodes.isEmpty || unchanged.lumaPSNR < 60 || unchanged.chromaPSNR < 60)
                result.verifications.append(BenchVerification(
                    what: what, against: "input (\(why.message))", comparison: unchanged, checksum: checksum,
                    passed: passed, detail: passed ? "deterministic, sync = PBO, differs from the input (no CPU reference)"
                        : "output unchanged or not deterministic"))
            }
            // The conversions alone: yuv420p → RGB → yuv420p must give the frame back.
            let roundTrip = roundTrips[offset]
            let expected = BenchReference.identity.apply(yuv420p: check.bytes, size: size, colorSpace: colorSpace,
                                                           keepsYUV: identityStaysInYUV)
            let comparison = BenchComparison(roundTrip, expected, size: size)
            let passed = comparison.lumaPSNR >= 50 && comparison.chromaPSNR >= 50
            result.verifications.append(BenchVerification(
                what: identityStaysInYUV ? "yuv420p → yuv420p round trip (Y'CbCr kept), frame \(check.index)"
                    : "yuv420p → RGB → yuv420p round trip, frame \(check.index)",
                against: identityStaysInYUV ? "the input planes"
                    : "CPU reference of the conversions (chroma up- then down-sampled)",
                comparison: comparison, checksum: benchChecksum(roundTrip), passed: passed, detail: comparison.summary))
        }
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

    // MARK: Encoders

    private struct EncoderCase {
        var settings: VideoEncoderSettings
        var container: String
        var label: String { settings.codec == .h264 || settings.codec == .hevc
            ? "encode \(settings.encoderName) \(settings.preset) (\(settings.pixelFormat.rawValue))"
            : "encode \(settings.encoderName) (\(settings.pixelFormat.rawValue))" }
        var id: String { "encode.\(settings.codec.rawValue)" + (settings.codec == .h264 || settings.codec == .hevc ? ".\(settings.preset)" : "") }
    }

    private func encoderCases() -> [EncoderCase] {
        var cases = [EncoderCase(settings: VideoEncoderSettings(codec: .h264, preset: "ultrafast"), container: "mp4")]
        if !options.quick {
            cases.append(EncoderCase(settings: VideoEncoderSettings(codec: .h264, preset: "veryfast"), container: "mp4"))
            cases.append(EncoderCase(settings: VideoEncoderSettings(codec: .h264, preset: "medium"), container: "mp4"))
            cases.append(EncoderCase(settings: VideoEncoderSettings(codec: .hevc, preset: "ultrafast"), container: "mp4"))
        }
        cases.append(EncoderCase(settings: VideoEncoderSettings(codec: .ffv1), container: "mkv"))
        if !options.quick {
            cases.append(EncoderCase(settings: VideoEncoderSettings(codec: .prores), container: "mov"))
        }
        return cases.filter(\.settings.isAvailable)
    }

    /// Each encoder on moving pattern frames packed by the GPU into its pixel format; only
    /// `MovieWriter.writeVideo` is timed, in batches (frame-threaded encoders return unevenly per frame).
    private func measureEncoders(size: Size, clip: Clip) throws -> [BenchRow] {
        var rows: [BenchRow] = []
        let runs = options.quick ? 2 : max(3, min(options.samples / 5, 5))
        // Long enough runs that the frame threads' ramp-up and the final flush weigh little.
        let framesPerRun = options.quick ? 6 : (size.pixelCount > 4_000_000 ? 12 : (size.pixelCount > 1_000_000 ? 24 : 32))
        let distinct = size.pixelCount > 4_000_000 ? 4 : 6
        for encoder in encoderCases() {
            let format = encoder.settings.pixelFormat
            guard let layout = PackedFrameLayout(format: format, size: size) else { continue }
            // Distinct frames in the encoder's format, converted on the GPU from the pattern.
            let pattern = try TestPatternSource(size: size, frameRate: Rational(30, 1))
            let sources = (0..<distinct).map { _ in pattern.nextFrame()! }
            let converted = try packed(sources, graph: try PrismGraphs.binder().bind(""), format: format, readback: .sync)
            let path = directory + "/encode-\(size).\(encoder.container)"
            let pool = FrameBufferPool(layout: layout, capacity: 24)
            var frameIndex = 0
            // One run: open a writer (not timed), write `count` frames and finish (timed: encoders with
            // lookahead or frame threads hold frames back, and finish() is where those get encoded).
            func run(_ count: Int) throws -> Double {
                let writer = try MovieWriter(path: path, video: VideoStreamConfig(source: pattern.info, size: size),
                                             settings: encoder.settings)
                var spent = 0.0
                for index in 0..<count {
                    let buffer = try pool.acquire(timeout: 60)
                    converted[frameIndex % distinct].withUnsafeBytes { buffer.data.copyMemory(from: $0.baseAddress!, byteCount: layout.byteCount) }
                    frameIndex += 1
                    let t0 = benchNow()
                    _ = try writer.writeVideo(buffer, pts: MediaTime(value: Int64(index), timeBase: pattern.info.timeBase),
                                              duration: MediaTime(value: 1, timeBase: pattern.info.timeBase))
                    spent += benchMilliseconds(since: t0)
                }
                let t0 = benchNow()
                try writer.finish()
                spent += benchMilliseconds(since: t0)
                guard writer.videoFramesWritten == count else {
                    throw BenchError("\(encoder.label): wrote \(writer.videoFramesWritten) of \(count) frames")
                }
                try? FileManager.default.removeItem(atPath: path)
                return spent / Double(count)
            }
            _ = try run(max(2, framesPerRun / 2))
            var samples: [Double] = []
            for _ in 0..<runs { samples.append(try run(framesPerRun)) }
            var row = BenchRow(id: encoder.id, stage: "encode", label: encoder.label,
                               prism: try figure(samples, encoder.label), comparison: "")
            row.note = "MovieWriter → .\(encoder.container): \(runs) runs of \(framesPerRun) frames, writeVideo + finish per run"
            rows.append(row)
        }
        return rows
    }

    // MARK: End to end

    private func runPipeline(clip: Clip, output: OutputSpec) throws -> RunReport {
        try runJob(clip: clip, output: output).report
    }

    /// What the GPU-stage timings and checks give the graph: one stand-in face in the middle, so graphs that
    /// draw faces do their masked work (the end-to-end runs use the detector on the clip).
    static func stageContext(_ index: Int = 0) -> FrameContext {
        FrameContext(frameIndex: index, regions: [.init(center: SIMD2(0.5, 0.45), radius: 0.12)])
    }

    /// The one stand-in face of `stageContext` as the engine's face side input (GPU-stage rows and checks).
    final class StandInFace: SideInput {
        var suppliesFaceRegions: Bool { true }
        func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
            context.regions = BenchRunner.stageContext(index).regions
        }
    }

    /// One end-to-end run through the engine, and the face detector's figures when the graph draws faces.
    private func runJob(clip: Clip, output: OutputSpec) throws -> (report: RunReport, faces: FaceDetectorStatistics?) {
        try runJob(input: clip.path, output: output, encoder: VideoEncoderSettings(codec: .h264, preset: "ultrafast"))
    }

    /// `prism run INPUT` with the bench's graph, quiet, on the bench's GPU context.
    private func runJob(input: String, output: OutputSpec,
                        encoder: VideoEncoderSettings) throws -> (report: RunReport, faces: FaceDetectorStatistics?) {
        var options = RunOptions()
        options.input = .movie(input)
        options.output = output
        options.filter = self.options.filter
        options.session.fuse = self.options.fuse
        options.session.yuvRoute = self.options.yuvRoute
        options.session.encoder = encoder
        options.quiet = true
        options.progress = false
        let job = try RunJob(options: options, graph: try PrismGraphs.binder().bind(self.options.filter), gpu: context)
        return (try job.run(), job.faceStatistics)
    }

    private func measureEndToEnd(size: Size, clip: Clip, expected: [Int: [UInt8]]) throws -> (rows: [BenchRow], verifications: [BenchVerification]) {
        var rows: [BenchRow] = []
        var verifications: [BenchVerification] = []
        let moviePath = directory + "/e2e-\(size).mp4"
        var fps: [Double] = []
        var frames = 0
        var faces: [FaceDetectorStatistics] = []
        for _ in 0..<options.endToEndRuns {
            let (report, detector) = try runJob(clip: clip, output: .movie(moviePath))
            fps.append(report.fps)
            frames = report.framesOut
            if let detector { faces.append(detector) }
        }
        // The encoded output must hold every frame, and the frames the graph makes.
        let inspected = try MediaInspector.inspect(moviePath)
        var passed = inspected.videoFrameCount == clip.frames && frames == clip.frames
        var details: [String] = ["\(inspected.videoFrameCount)/\(clip.frames) frames in the file"]
        var worst: BenchComparison?
        for check in clip.checkFrames {
            guard let want = expected[check.index] else { continue }
            let got = try MediaInspector.framePlanes(moviePath, index: check.index)
            let comparison = BenchComparison(got.planes.flatMap { $0 }, want, size: size)
            if worst == nil || comparison.lumaPSNR < worst!.lumaPSNR { worst = comparison }
            if comparison.lumaPSNR < 30 || comparison.chromaPSNR < 30 { passed = false }
        }
        if let worst { details.append("worst decoded frame against the verified GPU output: " + worst.summary) }
        verifications.append(BenchVerification(
            what: "end to end, h264 output", against: "the verified GPU output of the same frames", comparison: worst,
            checksum: (try? Data(contentsOf: URL(fileURLWithPath: moviePath))).map { benchChecksum(Array($0.prefix(1 << 20))) } ?? "",
            passed: passed, detail: details.joined(separator: "; ") + (passed ? "" : " — FAILED (needs 30 dB and every frame)")))
        try? FileManager.default.removeItem(atPath: moviePath)
        var row = BenchRow(id: "e2e.h264.ultrafast", stage: "end-to-end", label: "end to end → libx264 ultrafast .mp4",
                           prism: try figure(fps.map { 1000 / $0 }, "end to end"), comparison: "", check: passed ? "verified" : "FAILED")
        row.note = "Pipeline: decode → upload → graph → readback → encode + mux, \(clip.frames) frames, \(options.endToEndRuns) run(s)"
        rows.append(row)
        // A graph that draws faces: what the detector costs per detection, on what, and how old its regions are.
        if let last = faces.last, last.detections > 0 {
            var detector = BenchRow(id: "faces.detector", stage: "faces", label: "face detector (OpenCV cascade) per detection",
                                    prism: try figure(faces.map(\.meanDetectMilliseconds), "face detector"), comparison: "")
            detector.note = last.summary + "; files wait for it (deterministic), cameras never do"
            rows.append(detector)
        }

        var discardFPS: [Double] = []
        var discardFrames = 0
        for _ in 0..<options.endToEndRuns {
            let report = try runPipeline(clip: clip, output: .discard(.yuv420p))
            discardFPS.append(report.fps)
            discardFrames = report.framesOut
        }
        let counted = discardFrames == clip.frames
        var discard = BenchRow(id: "e2e.discard", stage: "end-to-end", label: "end to end → raw yuv420p, discarded",
                               prism: try figure(discardFPS.map { 1000 / $0 }, "end to end (discard)"), comparison: "",
                               check: counted ? "counted" : "FAILED")
        discard.note = "Pipeline with every frame read back and dropped; \(discardFrames)/\(clip.frames) frames"
        if !counted { failures.append("\(size) discard run wrote \(discardFrames) of \(clip.frames) frames") }
        rows.append(discard)
        return (rows, verifications)
    }

    // MARK: The user's own job

    /// `prism bench CLIP`: the user's input, graph and encoder settings, end to end as `prism run` does it, each
    /// run's output decoded again to check it holds every frame of the input.
    private func measureUserJob(_ path: String) throws -> BenchSizeResult {
        let input = try MediaInspector.inspect(path)
        guard input.videoFrameCount > 0 else { throw BenchError("\(path): no video frames to time") }
        var encoder = VideoEncoderSettings()
        options.userEncoder.apply(to: &encoder)
        let container = encoder.codec.defaultContainer
        let moviePath = directory + "/your-clip." + container
        log("bench: your clip \(path) (\(input.size), \(input.videoFrameCount) frames), \(options.endToEndRuns) run(s)…")
        var fps: [Double] = []
        var passed = true
        var details: [String] = []
        for run in 1...options.endToEndRuns {
            try? FileManager.default.removeItem(atPath: moviePath)
            let report = try runJob(input: path, output: .movie(moviePath), encoder: encoder).report
            fps.append(report.fps)
            let written = try MediaInspector.inspect(moviePath).videoFrameCount
            if written != input.videoFrameCount || report.framesOut != input.videoFrameCount {
                passed = false
                details.append("run \(run): \(written) frames in the file, \(report.framesOut) reported, of \(input.videoFrameCount)")
            }
        }
        try? FileManager.default.removeItem(atPath: moviePath)
        if details.isEmpty { details.append("\(input.videoFrameCount)/\(input.videoFrameCount) frames in the file, every run") }
        if !passed { failures.append("your clip: " + details.joined(separator: "; ")) }
        let settings = encoder.codec.rawValue + ([.h264, .hevc].contains(encoder.codec) ? " \(encoder.preset)" : "")
            + (encoder.crf.map { " crf \($0)" } ?? "") + (encoder.bitrate.map { " \($0) b/s" } ?? "")
        var row = BenchRow(id: "e2e.clip", stage: "end-to-end", label: "your clip → \(settings) .\(container)",
                           prism: try figure(fps.map { 1000 / $0 }, "your clip end to end"), comparison: "",
                           check: passed ? "counted" : "FAILED")
        row.note = "`prism run` of \(path): decode → upload → graph → readback → encode + mux, "
            + "\(input.videoFrameCount) frames, \(options.endToEndRuns) run(s)"
        return BenchSizeResult(
            name: "your clip", width: input.size.width, height: input.size.height, clipFrames: input.videoFrameCount,
            clip: path, passes: [], timerMethod: "wall clock", timerNote: "the whole run, as `prism run` reports its fps",
            rows: [row],
            verifications: [BenchVerification(what: "your clip end to end", against: "the input's decoded frame count",
                                              comparison: nil, checksum: "", passed: passed,
                                              detail: details.joined(separator: "; "))])
    }

    // MARK: FFmpeg

    private func compare(_ rows: inout [BenchRow], ffmpeg: BenchFFmpeg, size: Size, clip: Clip) throws {
        let runs = options.endToEndRuns
        func perFrame(_ arguments: [String]) throws -> (figure: BenchFigure, frames: Int?) {
            var values: [Double] = []
            var frames: Int?
            for _ in 0..<runs {
                let timing = try ffmpeg.time(arguments)
                frames = timing.frames
                values.append(timing.seconds * 1000 / Double(clip.frames))
            }
            return (try figure(values, "ffmpeg"), frames)
        }
        let output = directory + "/ffmpeg-\(size).mp4"
        let input = ["-i", clip.path, "-map", "0:v"]
        let decode = try perFrame(input + ["-f", "null", "-"])
        var results: [String: (BenchFigure, String)] = [
            "decode": (decode.figure, "ffmpeg -i clip.mkv -f null - (its rtime includes opening the file and decoder)"),
        ]
        if let chain = ffmpegInfo.filterChain {
            let filtered = try perFrame(input + ["-vf", chain, "-f", "null", "-"])
            results["e2e.discard"] = (filtered.figure, "ffmpeg -i clip.mkv -vf '\(chain)' -f null -")
            let encoded = try perFrame(input + ["-vf", chain, "-c:v", "libx264", "-preset", "ultrafast", output])
            results["e2e.h264.ultrafast"] = (encoded.figure, "ffmpeg -i clip.mkv -vf '\(chain)' -c:v libx264 -preset ultrafast out.mp4")
            // The filter chain alone: with the chain minus without it (same decode, same null output). The
            // two runs alternate a few times and the fastest of each counts, so a busy moment on the machine
            // cannot make the difference vanish (at small sizes the chain costs less than one load spike).
            var withChain: [Double] = [filtered.figure.medianMs], without: [Double] = [decode.figure.medianMs]
            for _ in 0..<max(0, 3 - runs) {
                without.append(try ffmpeg.time(input + ["-f", "null", "-"]).seconds * 1000 / Double(clip.frames))
                withChain.append(try ffmpeg.time(input + ["-vf", chain, "-f", "null", "-"]).seconds * 1000 / Double(clip.frames))
            }
            let difference = withChain.min()! - without.min()!
            if difference > 0.001, let chainFigure = BenchFigure(milliseconds: [difference]) {
                results["gpu.frame"] = (chainFigure, "FFmpeg chain '\(chain)': (decode + chain) − decode, fastest of \(withChain.count) alternating runs each")
            }
        }
        let raw = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(size.width)x\(size.height)", "-r", "30", "-i", clip.rawPath]
        for index in rows.indices where rows[index].id.hasPrefix("encode.h264") || rows[index].id.hasPrefix("encode.hevc") {
            let parts = rows[index].id.split(separator: ".")
            let encoder = parts[1] == "h264" ? "libx264" : "libx265"
            let preset = String(parts[2])
            var arguments = raw + ["-c:v", encoder, "-preset", preset]
            if encoder == "libx265" { arguments += ["-x265-params", "log-level=error"] }
            let encoded = try perFrame(arguments + [output])
            results[rows[index].id] = (encoded.figure, "ffmpeg -f rawvideo … -c:v \(encoder) -preset \(preset) out.mp4 (raw frames in)")
        }
        try? FileManager.default.removeItem(atPath: output)
        for index in rows.indices {
            if let (figure, what) = results[rows[index].id] {
                rows[index].ffmpeg = figure
                rows[index].speedup = figure.medianMs / rows[index].prism.medianMs
                rows[index].comparison = what
            } else {
                switch rows[index].stage {
                case "upload", "convert", "readback": rows[index].comparison = "no FFmpeg equivalent (GPU transfer; FFmpeg's chain stays on the CPU)"
                case "filter": rows[index].comparison = ffmpegInfo.filterChain == nil ? ffmpegInfo.message
                    : "compared as a whole in the 'GPU per frame' row"
                case "encode": rows[index].comparison = "not compared (FFmpeg would convert the pixel format first)"
                default: rows[index].comparison = ffmpegInfo.message
                }
            }
        }
    }

    // MARK: The suite

    /// `--suite`: per clip (the user's, then one made by Prism per size), one row per built-in filter against its
    /// FFmpeg equivalent, whole runs of both commands (`BenchSuiteRunner`); no stage rows, no soak.
    private func runSuite() throws -> BenchResult {
        let prism = try Self.prismExecutable(options.prismPath)
        let rows = try options.suiteRows.map(BenchSuite.select) ?? BenchSuite.rowIDs
        var prismOptions: [String] = []
        if let gpu = options.gpu.deviceIndex { prismOptions += ["--gpu", "\(gpu)"] }
        if !options.fuse { prismOptions.append("--no-fuse") }
        if !options.yuvRoute { prismOptions.append("--rgb-route") }
        let runner = BenchSuiteRunner(prism: prism, ffmpeg: ffmpeg?.path, runs: options.endToEndRuns, directory: directory,
                                      prismOptions: prismOptions, log: log)
        ffmpegInfo.filterChain = nil
        ffmpegInfo.message = ffmpeg != nil
            ? "FFmpeg's CPU filters, one per suite row (each row's command: --json)"
            : ffmpegInfo.message + "; the suite prints Prism's times only, and no row is compared or verified"
        var clips: [BenchSuiteClip] = []
        if let clip = options.userClip {
            clips.append(try runner.run(clip: clip, name: "your clip", description: clip, rows: rows))
        }
        for size in options.sizes {
            let name = BenchOptions.sizeName(size)
            let frames = options.clipFrames(for: size)
            log("bench: suite \(name): generating a \(frames)-frame clip with Prism…")
            let clip = try makeClip(size: size, frames: frames, raw: false)
            defer { try? FileManager.default.removeItem(atPath: clip.path) }
            clips.append(try runner.run(clip: clip.path, name: name,
                                        description: "h264 (libx264 ultrafast, crf 12) 4:2:0 in .mkv, made by Prism's test pattern",
                                        rows: rows))
        }
        // The suite's checks are FFmpeg's pictures: without it Prism's times are printed, and nothing is verified.
        if ffmpeg == nil { failures.append(ffmpegInfo.message) }
        for clip in clips {
            for row in clip.rows {
                if row.check == "FAIL" { failures.append("\(clip.name) \(row.id): \(row.detail)") }
                let times = row.prismSeconds + (row.ffmpegSeconds ?? [])
                if times.isEmpty || !times.allSatisfy({ $0.isFinite && $0 > 0 }) {
                    failures.append("\(clip.name) \(row.id): a time not positive and finite")
                }
            }
        }
        let header = BenchMachine.header(info: context.info, command: options.commandLine, loadAverage: loadAtStart,
                                         timerMethod: "wall clock of whole runs (subprocesses)",
                                         timerNote: "prism run and ffmpeg, each from launch to exit, standard output to /dev/null")
        return BenchResult(header: header, graph: rows.joined(separator: ", "), quick: options.quick,
                           warmup: 0, samples: options.endToEndRuns, ffmpeg: ffmpegInfo, sizes: [], memory: nil,
                           suite: clips, verified: failures.isEmpty, failures: failures)
    }

    /// The `prism` the suite runs: an explicit one (tests), else this process's own executable.
    static func prismExecutable(_ explicit: String?) throws -> String {
        let path = explicit ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError("the suite runs prism itself, and there is no prism executable at \(path)")
        }
        return path
    }

    // MARK: Memory

    /// A longer run of the real pipeline (pattern in, raw out discarded) while RSS is sampled.
    private func soak() throws -> BenchMemory {
        let size = options.sizes.first ?? Size(width: 640, height: 480)
        var runOptions = RunOptions()
        runOptions.input = .pattern
        runOptions.session.size = size
        runOptions.session.frameLimit = options.soakFrames
        runOptions.output = .discard(.yuv420p)
        runOptions.filter = options.filter
        runOptions.quiet = true
        let job = try RunJob(options: runOptions, graph: try PrismGraphs.binder().bind(options.filter), gpu: context)
        let sampler = BenchRSSSampler()
        let report = try job.run()
        let samples = sampler.stop()
        return BenchMemory.judge(samples: samples, size: BenchOptions.sizeName(size), frames: report.framesOut,
                                 seconds: report.wallSeconds)
    }
}

