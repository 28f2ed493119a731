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
/// same clip, and the checks that the frames are right; then a soak run that watches memory. Each bench
/// is an extension in a file of its own (BenchGPUStages, BenchEncoders, BenchEndToEnd,
/// BenchFFmpegComparison, BenchSoak; `--suite` in BenchSuiteRunner).
final class BenchRunner {
    let options: BenchOptions
    let log: (String) -> Void
    let context: GPUContext
    let directory: String
    var failures: [String] = []
    private(set) var ffmpeg: BenchFFmpeg?
    var ffmpegInfo: BenchFFmpegInfo
    let loadAtStart = BenchMachine.loadAverage()

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
        let header = BenchMachine.header(info: context.info, command: options.commandLine, loadAverage: loadAtStart,
                                         timerMethod: methods.joined(separator: " / "),
                                         timerNote: sizes.map { "\($0.name): \($0.timerNote)" }.joined(separator: "; "))
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
    func makeClip(size: Size, frames: Int, raw wantsRaw: Bool = true) throws -> Clip {
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

    func figure(_ samples: [Double], _ what: String) throws -> BenchFigure {
        guard let figure = BenchFigure(milliseconds: samples), figure.isPlausible else {
            throw BenchError("\(what): no plausible samples (\(samples.count) taken)")
        }
        return figure
    }
}
