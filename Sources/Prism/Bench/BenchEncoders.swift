import Foundation
import PrismCore
import PrismMedia
import PrismPipeline

/// The encoder rows: each encoder Prism has, on frames the GPU packed into its pixel format.
extension BenchRunner {
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
    func measureEncoders(size: Size, clip: Clip) throws -> [BenchRow] {
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
}
