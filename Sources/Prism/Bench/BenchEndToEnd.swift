import Foundation
import PrismCore
import PrismKit
import PrismMedia
import PrismPipeline
import PrismVision

/// The end-to-end rows: `prism run`'s own job on the bench's clip (h264 out, and raw frames discarded), and
/// `prism bench CLIP`'s run of the user's clip with their encoder settings.
extension BenchRunner {
    /// `endToEndRuns` runs of the bench's clip through the engine into `output`: each run's fps, the frames the
    /// last one wrote, and the face detector's figures of each run when the graph draws faces.
    private func runJobs(clip: Clip, output: OutputSpec) throws -> (fps: [Double], frames: Int, faces: [FaceDetectorStatistics]) {
        var runs: (fps: [Double], frames: Int, faces: [FaceDetectorStatistics]) = ([], 0, [])
        for _ in 0..<options.endToEndRuns {
            let (report, detector) = try runJob(input: clip.path, output: output,
                                                encoder: VideoEncoderSettings(codec: .h264, preset: "ultrafast"))
            runs.fps.append(report.fps)
            runs.frames = report.framesOut
            if let detector { runs.faces.append(detector) }
        }
        return runs
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

    func measureEndToEnd(size: Size, clip: Clip, expected: [Int: [UInt8]]) throws -> (rows: [BenchRow], verifications: [BenchVerification]) {
        var rows: [BenchRow] = []
        var verifications: [BenchVerification] = []
        let moviePath = directory + "/e2e-\(size).mp4"
        let (fps, frames, faces) = try runJobs(clip: clip, output: .movie(moviePath))
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
            checksum: (try? Data(contentsOf: URL(fileURLWithPath: moviePath))).map { fnv1aHex(Array($0.prefix(1 << 20))) } ?? "",
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

        let (discardFPS, discardFrames, _) = try runJobs(clip: clip, output: .discard(.yuv420p))
        let counted = discardFrames == clip.frames
        var discard = BenchRow(id: "e2e.discard", stage: "end-to-end", label: "end to end → raw yuv420p, discarded",
                               prism: try figure(discardFPS.map { 1000 / $0 }, "end to end (discard)"), comparison: "",
                               check: counted ? "counted" : "FAILED")
        discard.note = "Pipeline with every frame read back and dropped; \(discardFrames)/\(clip.frames) frames"
        if !counted { failures.append("\(size) discard run wrote \(discardFrames) of \(clip.frames) frames") }
        rows.append(discard)
        return (rows, verifications)
    }

    /// `prism bench CLIP`: the user's input, graph and encoder settings, end to end as `prism run` does it, each
    /// run's output decoded again to check it holds every frame of the input.
    func measureUserJob(_ path: String) throws -> BenchSizeResult {
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
}
