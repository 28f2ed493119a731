import Foundation
import PrismCore
import PrismGPU

/// `prism bench [CLIP [--codec …]] [--sizes 480p,720p,1080p,2160p] [--filter SPEC] [--json] [--chart FILE.svg] [--compare ffmpeg] [--quick]`,
/// or `prism bench [CLIP] --suite [--rows ROW,…] [--sizes …] [--runs N]`: every built-in filter against FFmpeg.
struct BenchCommand: PrismCommand {
    var options = BenchOptions()
    /// `--model`: time these networks, GPU passes against OpenCV DNN, instead of the pipeline.
    var models: [String] = []
    /// `--model`'s sizes: nil is `native` (the model's own).
    var modelSizes: [Size?] = []

    static let spec = CommandSpec(
        name: "bench", arguments: "[CLIP]",
        summary: "Measures each stage (upload, each filter pass, readback, encode) and the whole pipeline per size.",
        options: [
            Key.sizes.spec, Key.filter.spec, Key.noFuse.spec, Key.rgbRoute.spec, Key.json.spec, Key.chart.spec, Key.compare.spec,
            Key.suite.spec, Key.rows.spec, Key.ffmpeg.spec, Key.quick.spec, Key.samples.spec, Key.warmup.spec, Key.runs.spec,
            Key.soakFrames.spec, Key.gpu.spec, Key.model.spec,
        ] + EncoderChoice.options.map { option in
            var option = option
            option.help += " — for CLIP's row"
            return option
        })

    /// `bench`'s own options, declared once: the table above and the parser read them.
    enum Key {
        static let sizes = OptionKey<String>("--sizes", value: "480p,720p,1080p,2160p", help: "the sizes to measure, comma-separated (720p or WxH)")
        static let filter = OptionKey<String>("--filter", "-f", value: "SPEC", help: "the filter graph to measure")
        static let noFuse = FlagKey("--no-fuse", help: "one GPU pass per filter (to measure fusing)")
        static let rgbRoute = FlagKey("--rgb-route", help: "every graph through R'G'B', none kept in Y'CbCr (to measure the Y'CbCr route)")
        static let json = FlagKey("--json", help: "the results as JSON on stdout instead of a table")
        static let chart = OptionKey<String>("--chart", value: "FILE.svg", help: "also write the results as an SVG chart")
        static let compare = OptionKey<String>("--compare", value: "ffmpeg", help: "run FFmpeg's CPU chain on the same work, side by side")
        static let suite = FlagKey("--suite", help: "each built-in filter against FFmpeg's: whole runs, PSNR-checked (720p,1080p or CLIP)")
        static let rows = OptionKey<String>("--rows", value: "ROW,…", help: "the suite's rows, by id or prefix (invert, blur, lut, face-blur, …)")
        static let ffmpeg = OptionKey<String>("--ffmpeg", value: "PATH", help: "the ffmpeg to compare with (implies --compare ffmpeg)")
        static let quick = FlagKey("--quick", help: "one small size, few samples (a smoke test, not figures)")
        static let samples = OptionKey<Int>("--samples", value: "N", in: 1...10_000, help: "timed samples per stage, 1-10000")
        static let warmup = OptionKey<Int>("--warmup", value: "N", in: 0...1000, help: "untimed runs before the samples, 0-1000")
        static let runs = OptionKey<Int>("--runs", value: "N", in: 1...100, help: "end-to-end runs per size (--suite: per row), 1-100")
        static let soakFrames = OptionKey<Int>("--soak-frames", value: "N", in: 10...1_000_000, help: "frames of the end-to-end runs, 10-1000000")
        static let gpu = OptionKey<Int>.gpu
        static let model = OptionKey<String>("--model", value: "NET.onnx[,…]", help: "time networks as GPU passes (half, float) against OpenCV DNN on the CPU, per size "
                   + "(--sizes may name native: each model's own); with their render targets' memory")
    }

    init(arguments: [String]) throws {
        var scanner = try ArgumentScanner(arguments, command: Self.spec)
        guard scanner.positionals.count <= 1 else {
            throw UsageError("bench takes at most one CLIP to time, got: \(scanner.positionals.joined(separator: " "))")
        }
        if let clip = scanner.positionals.first {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: clip, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw UsageError("bench: no such clip '\(clip)'")
            }
            options.userClip = clip
        }
        options.userEncoder = try EncoderChoice(from: &scanner)
        if options.userClip == nil, options.userEncoder != EncoderChoice() {
            throw UsageError("bench: --codec, --preset, --crf, --bitrate and --threads set up the CLIP row; give a CLIP to time")
        }
        if scanner.flag(Key.quick) {
            options.makeQuick()
            options.sizes = [Size(width: 320, height: 180)]
        }
        let sizeList = try scanner.value(Key.sizes)
        if let list = sizeList {
            var sizes: [Size] = []
            for item in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
                if item == "native" {
                    modelSizes.append(nil)
                    continue
                }
                guard let size = Size(parsing: item) else {
                    throw UsageError("--sizes takes 480p, 720p, 1080p, 2160p or WxH, comma-separated; not '\(item)'")
                }
                guard size.width >= 16, size.height >= 16, size.width % 2 == 0, size.height % 2 == 0 else {
                    throw UsageError("--sizes: \(size) must be even and at least 16x16")
                }
                sizes.append(size)
                modelSizes.append(size)
            }
            guard !modelSizes.isEmpty else { throw UsageError("--sizes needs at least one size") }
            options.sizes = sizes
            options.sizesGiven = true
        }
        if let filter = try scanner.value(Key.filter) { options.filter = filter }
        options.fuse = !scanner.flag(Key.noFuse)
        options.yuvRoute = !scanner.flag(Key.rgbRoute)
        options.json = scanner.flag(Key.json)
        if let chart = try scanner.value(Key.chart) {
            guard chart.lowercased().hasSuffix(".svg") else { throw UsageError("--chart writes an SVG file: FILE.svg, not '\(chart)'") }
            options.chartPath = chart
        }
        if let compare = try scanner.value(Key.compare) {
            guard compare.lowercased() == "ffmpeg" else { throw UsageError("--compare takes ffmpeg, not '\(compare)'") }
            options.compareFFmpeg = true
        }
        if let path = try scanner.value(Key.ffmpeg) {
            options.ffmpegPath = path
            options.compareFFmpeg = true
        }
        options.samples = try scanner.value(Key.samples) ?? options.samples
        options.warmup = try scanner.value(Key.warmup) ?? options.warmup
        options.endToEndRuns = try scanner.value(Key.runs) ?? options.endToEndRuns
        options.soakFrames = try scanner.value(Key.soakFrames) ?? options.soakFrames
        options.gpu.deviceIndex = try scanner.value(Key.gpu)
        if let list = try scanner.value(Key.model) {
            models = list.split(separator: ",").map { String($0) }
            for model in models where !FileManager.default.isReadableFile(atPath: model) {
                throw UsageError("bench --model: no such file '\(model)'")
            }
            guard options.userClip == nil, options.filter == BenchOptions().filter else {
                throw UsageError("bench --model times networks on their own: drop CLIP and --filter")
            }
        }
        if models.isEmpty, modelSizes.contains(where: { $0 == nil }) {
            throw UsageError("--sizes native is a model's own size: it goes with --model")
        }
        if scanner.flag(Key.suite) {
            try setUpSuite(&scanner)
        } else if scanner.isGiven(Key.rows.spec) {
            throw UsageError("--rows chooses rows of --suite")
        }
        options.commandLine = (["prism", "bench"] + arguments).map(SlurmScript.quote).joined(separator: " ")
        try scanner.checkAllUsed()
    }

    /// `--suite`: its rows, its sizes (720p and 1080p unless asked, 320x180 with --quick, none beside a CLIP), and
    /// the options that mean nothing to it refused.
    private mutating func setUpSuite(_ scanner: inout ArgumentScanner) throws {
        options.suite = true
        options.compareFFmpeg = true
        if let rows = try scanner.value(Key.rows) { options.suiteRows = try BenchSuite.select(rows.split(separator: ",").map(String.init)) }
        guard models.isEmpty else { throw UsageError("bench: --suite and --model are separate benches; give one") }
        guard options.filter == BenchOptions.defaultFilter else {
            throw UsageError("bench --suite times its own rows (--rows chooses them), not --filter")
        }
        guard options.userEncoder == EncoderChoice() else {
            throw UsageError("bench --suite writes raw yuv420p; --codec, --preset, --crf, --bitrate and --threads do not apply")
        }
        for option in [Key.samples.spec, Key.warmup.spec, Key.soakFrames.spec] where scanner.isGiven(option) {
            throw UsageError("bench --suite times whole runs (--runs N); \(option.name) does not apply")
        }
        if !options.sizesGiven {
            options.sizes = options.userClip != nil ? [] : (options.quick ? [Size(width: 320, height: 180)]
                : ["720p", "1080p"].compactMap { Size(parsing: $0) })
        }
    }

    func execute() throws -> Int32 {
        if !models.isEmpty {
            // Networks take seconds a frame on llvmpipe: 3 samples unless asked, at 256², 720p and 1080p unless asked.
            let defaults = BenchOptions()
            let sizes = options.sizesGiven ? modelSizes : [nil] + ["720p", "1080p"].map { Size(parsing: $0) }
            let bench = ModelBench(paths: models, sizes: sizes, samples: options.samples == defaults.samples ? 3 : options.samples,
                                   gpu: options.gpu)
            let rows = try bench.run { PrismCommandLine.info($0) }
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                FileHandle.standardOutput.write(try encoder.encode(rows))
                FileHandle.standardOutput.write(Data("\n".utf8))
            } else {
                print(ModelBench.table(rows))
            }
            return 0
        }
        _ = try PrismGraphs.bind(options.filter)  // a bad graph fails here, with its caret on a terminal
        let runner = try BenchRunner(options: options) { PrismCommandLine.info($0) }
        let result = try runner.run()
        if options.json {
            FileHandle.standardOutput.write(try result.jsonData())
            FileHandle.standardOutput.write(Data("\n".utf8))
        } else {
            print(BenchTable.render(result))
        }
        if let chart = options.chartPath {
            try BenchChart.svg(result.suite == nil ? result : result.suiteAsStages()).write(toFile: chart, atomically: true, encoding: .utf8)
            PrismCommandLine.info("bench: chart written to \(chart)")
        }
        guard result.verified else {
            throw BenchError("NOT VERIFIED — the figures above must not be trusted: " + result.failures.joined(separator: "; "))
        }
        return 0
    }
}
