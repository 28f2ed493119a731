import Foundation
import PrismCore
import PrismKit
import PrismMedia

/// Runs the suite's rows on one clip.
struct BenchSuiteRunner {
    let prism: String
    let ffmpeg: String?
    let runs: Int
    let directory: String
    /// Options passed on to every `prism run` (--gpu, --no-fuse, --rgb-route).
    let prismOptions: [String]
    let log: (String) -> Void

    /// The rows `rows` on the clip at `path`; `name` and `description` head its section of the table.
    func run(clip path: String, name: String, description: String, rows: [String]) throws -> BenchSuiteClip {
        let plan = try BenchSuitePlan(clip: path, rows: rows, directory: directory)
        let input = plan.input, size = plan.size, space = input.colorSpace, matrix = plan.matrix
        var results: [BenchSuiteRow] = []
        for id in rows {
            guard let row = plan.rows[id] else { continue }
            log("bench: suite \(name): \(id)…")
            results.append(try measure(id: id, plan: row, clip: path, size: size, frames: input.videoFrameCount,
                                       bound: BenchSuite.bound(id, converted: plan.converted)))
        }
        // face-blur against invert: the masked filter's cost beside the cheapest filter's (the issue's target).
        if let invert = results.first(where: { $0.id == "invert" }) {
            for index in results.indices where results[index].id.hasPrefix("face-blur") {
                results[index].versusInvert = results[index].prismMedianSeconds / invert.prismMedianSeconds
                results[index].target = results[index].id == "face-blur-none" ? 1.2 : 2
            }
        }
        return BenchSuiteClip(name: name, width: size.width, height: size.height, frames: input.videoFrameCount, clip: description,
                              colorSpace: "\(matrix) \(space.range == .full ? "full" : "limited") range, \(input.pixelFormat)",
                              runs: runs, rows: results)
    }

    /// `prism run CLIP --filter F … -o - --output-format yuv420p -q`, as arguments.
    func prismArguments(_ plan: BenchSuitePlan.Row, clip: String) -> [String] {
        ["run", clip, "--filter", plan.prismFilter] + plan.prismExtra + ["-o", "-", "--output-format", "yuv420p", "-q"] + prismOptions
    }

    /// `ffmpeg -i CLIP … -f rawvideo -pix_fmt yuv420p -`, as arguments.
    func ffmpegArguments(_ plan: BenchSuitePlan.Row, clip: String) -> [String] {
        ["-hide_banner", "-nostdin", "-loglevel", "error", "-i", clip] + plan.ffmpegArguments + ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]
    }

    /// One untimed run of both commands of `plan` at once, their pictures compared (needs ffmpeg).
    func check(_ plan: BenchSuitePlan.Row, clip: String, size: Size, frames: Int) throws -> BenchStreamComparison {
        guard let ffmpeg else { throw BenchError("the suite's checks need ffmpeg") }
        return try compare((prism, prismArguments(plan, clip: clip)), (ffmpeg, ffmpegArguments(plan, clip: clip)),
                           size: size, expected: frames, region: plan.region)
    }

    private func measure(id: String, plan: BenchSuitePlan.Row, clip: String, size: Size, frames: Int,
                         bound: BenchPSNRBound) throws -> BenchSuiteRow {
        let prismArguments = prismArguments(plan, clip: clip)
        let ffmpegArguments = ffmpegArguments(plan, clip: clip)
        var comparison: BenchStreamComparison?
        var check = "unchecked", detail = "ffmpeg not found: nothing compared"
        if ffmpeg != nil {
            // The check comes first: an untimed run of both at once, which also warms the file cache and
            // the drivers for the timed runs.
            let compared = try self.check(plan, clip: clip, size: size, frames: frames)
            let verdict = BenchSuite.verdict(compared, bound: bound)
            comparison = compared
            check = verdict.passed ? "verified" : "FAIL"
            detail = verdict.detail
        }
        var prismSeconds: [Double] = [], ffmpegSeconds: [Double] = []
        for _ in 0..<runs {
            // Alternating, so drifting load on the machine falls on both sides alike.
            prismSeconds.append(try timed(prism, prismArguments))
            if let ffmpeg, plan.ffmpegTimed { ffmpegSeconds.append(try timed(ffmpeg, ffmpegArguments)) }
        }
        let prismMedian = BenchFigure.median(prismSeconds.sorted())
        let ffmpegMedian = ffmpegSeconds.isEmpty ? nil : BenchFigure.median(ffmpegSeconds.sorted())
        let quotedPrism = (["prism"] + prismArguments).map(SlurmScript.quote).joined(separator: " ")
        let quotedFFmpeg = (["ffmpeg"] + ffmpegArguments).map(SlurmScript.quote).joined(separator: " ")
        return BenchSuiteRow(
            id: id, label: plan.label, prismCommand: quotedPrism, ffmpegFilter: plan.ffmpegFilter,
            ffmpegCommand: quotedFFmpeg, ffmpegTimed: plan.ffmpegTimed,
            prismSeconds: prismSeconds, ffmpegSeconds: ffmpegSeconds.isEmpty ? nil : ffmpegSeconds,
            prismMedianSeconds: prismMedian, ffmpegMedianSeconds: ffmpegMedian,
            speed: ffmpegMedian.map { $0 / prismMedian }, prismFPS: Double(frames) / prismMedian,
            ffmpegFPS: ffmpegMedian.map { Double(frames) / $0 }, comparison: comparison, bound: bound, check: check,
            detail: detail, versusInvert: nil, target: nil, note: plan.note)
    }

    // MARK: Processes

    /// Wall seconds of one run, standard output to /dev/null, from launch to exit (`waitpid`: Foundation's
    /// `Process.waitUntilExit` notices an exit only at its run loop's next 50 ms tick).
    private func timed(_ executable: String, _ arguments: [String]) throws -> Double {
        let start = benchNow()
        let child = try BenchChild(executable, arguments, directory: directory, stdoutToPipe: false)
        let status = child.wait()
        let seconds = benchMilliseconds(since: start) / 1000
        try child.check(status)
        return seconds
    }

    /// Runs both commands at once, each writing yuv420p frames of `size` to standard output, and compares the two
    /// streams frame by frame as they come (no frame is stored: a long clip costs no memory).
    private func compare(_ a: (String, [String]), _ b: (String, [String]), size: Size, expected: Int,
                         region: [Bool]?) throws -> BenchStreamComparison {
        var comparer = BenchStreamComparer(size: size, region: region)
        let frameBytes = comparer.frameBytes
        let childA = try BenchChild(a.0, a.1, directory: directory, stdoutToPipe: true)
        let childB = try BenchChild(b.0, b.1, directory: directory, stdoutToPipe: true)
        var bufferA = [UInt8](repeating: 0, count: frameBytes), bufferB = [UInt8](repeating: 0, count: frameBytes)
        var framesA = 0, framesB = 0
        var openA = true, openB = true
        // Alternating whole frames: a side that runs ahead blocks on its full pipe until the other catches up.
        while openA || openB {
            let gotA = openA && Self.readFrame(childA.output, into: &bufferA)
            let gotB = openB && Self.readFrame(childB.output, into: &bufferB)
            if gotA { framesA += 1 } else { openA = false }
            if gotB { framesB += 1 } else { openB = false }
            if gotA && gotB { comparer.add(bufferA, bufferB) }
        }
        let statusA = childA.wait(), statusB = childB.wait()
        try childA.check(statusA)
        try childB.check(statusB)
        return comparer.result(prismFrames: framesA, ffmpegFrames: framesB, expectedFrames: expected)
    }

    /// Reads one whole frame; false at the end of the stream (a partial last frame counts as none).
    private static func readFrame(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
        var filled = 0
        let count = buffer.count
        return buffer.withUnsafeMutableBytes { bytes in
            while filled < count {
                let n = read(fd, bytes.baseAddress! + filled, count - filled)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                filled += n
            }
            return true
        }
    }
}

extension BenchRunner {
    /// `--suite`: per clip (the user's, then one made by Prism per size), one row per built-in filter against its
    /// FFmpeg equivalent, whole runs of both commands (`BenchSuiteRunner`); no stage rows, no soak.
    func runSuite() throws -> BenchResult {
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
}
