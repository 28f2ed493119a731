import XCTest
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
@testable import Prism
import PrismPipeline

/// `prism run` end to end, in process: real decode, GPU passes on llvmpipe, encode, then decode again.
final class PipelineTests: XCTestCase {
    let dir = ScratchDirectory()

    private func run(_ options: RunOptions, filter: String = "",
                     progress: (@Sendable (RunProgress) -> Void)? = nil) throws -> (RunReport, RunJob) {
        let pipeline = try RunJob(options: options, graph: GraphBinder().bind(filter))
        let report = try pipeline.run(progress: progress)
        return (report, pipeline)
    }

    func testVariableFrameRateMovieWithAudioKeepsTimingThroughTheGPU() throws {
        // 2 s of 25 fps video in which every fifth frame is 10 ms late (VFR), with a sine track that
        // starts 120 ms after the video.
        let input = dir.path("vfr.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25:duration=2",
                          "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                          "-filter_complex", "[0:v]settb=1/1000,setpts='PTS+if(eq(mod(N,5),4),10,0)'[v];[1:a]adelay=120:all=1[a]",
                          "-map", "[v]", "-map", "[a]", "-fps_mode", "passthrough", "-enc_time_base", "1/1000",
                          "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", input])
        let before = try MediaInspector.inspect(input)
        for (container, filter) in [("mp4", "invert"), ("mkv", "invert, mono"), ("mov", "")] {
            var options = RunOptions()
            options.input = .movie(input)
            options.output = .movie(dir.path("out.\(container)"))
            options.session.encoder = VideoEncoderSettings(codec: .h264, preset: "ultrafast")
            let (report, _) = try run(options, filter: filter)
            XCTAssertEqual(report.framesOut, before.videoFrameCount)
            let after = try MediaInspector.inspect(dir.path("out.\(container)"))
            XCTAssertEqual(after.videoStreamCount, 1, container)
            XCTAssertEqual(after.audioStreamCount, 1, "\(container): audio carried along")
            XCTAssertEqual(after.videoFrameCount, before.videoFrameCount, container)
            // Per-frame timestamps: the input's, rebased so the output starts at 0.
            let start = before.videoPTS.first!
            XCTAssertEqual(after.videoPTS.count, before.videoPTS.count)
            for (got, want) in zip(after.videoPTS, before.videoPTS) {
                XCTAssertEqual(got.seconds, (want - start).seconds, accuracy: 0.0006, "\(container) pts")
            }
            XCTAssertEqual(after.videoPTS.first?.seconds, 0)
            // Irregular spacing survived (the VFR pattern), not resampled to a constant rate.
            let gaps = zip(after.videoPTS.dropFirst(), after.videoPTS).map { ($0 - $1).seconds }
            XCTAssertGreaterThan(gaps.max()! - gaps.min()!, 0.015, "\(container): frame timing was flattened")
            // Duration and audio offset within one video frame (40 ms) of the input's.
            XCTAssertEqual(after.duration?.seconds ?? 0, before.duration?.seconds ?? 0, accuracy: 0.05, container)
            let inputOffset = before.firstAudioPTS!.seconds - start.seconds
            let outputOffset = after.firstAudioPTS!.seconds - after.videoPTS[0].seconds
            XCTAssertEqual(outputOffset, inputOffset, accuracy: 0.040, "\(container): A/V offset")
            XCTAssertGreaterThan(after.audioSampleCount, 48000 * 3 / 2, container)
        }
    }

    func testInvertThroughTheWholePipelineMatchesTheCPU() throws {
        // The pattern (yuv420p) through invert into H.264 at crf 0 (lossless) in NV12: decoding the
        // output and inverting it again must give back the pattern's own RGB, within the rounding of
        // two conversions.
        var options = RunOptions()
        options.input = .pattern
        options.session.size = Size(width: 128, height: 72)
        options.session.frameLimit = 5
        options.output = .movie(dir.path("inv.mkv"))
        options.session.encoder = VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 0)
        _ = try run(options, filter: "invert")
        options.output = .movie(dir.path("plain.mkv"))
        _ = try run(options)
        for index in [0, 4] {
            let inverted = try MediaInspector.frameRGBA(dir.path("inv.mkv"), index: index)
            let plain = try MediaInspector.frameRGBA(dir.path("plain.mkv"), index: index)
            var worst = 0
            for i in stride(from: 0, to: plain.pixels.count, by: 4) {
                for c in 0..<3 { worst = max(worst, abs(255 - Int(inverted.pixels[i + c]) - Int(plain.pixels[i + c]))) }
            }
            // Each side went RGB → Y'CbCr 4:2:0 → RGB once; chroma subsampling costs a few codes at the
            // pattern's hard colour edges.
            XCTAssertLessThanOrEqual(worst, 40, "frame \(index)")
            let mean = zip(inverted.pixels, plain.pixels).enumerated().filter { $0.offset % 4 != 3 }
                .map { abs(255 - Int($0.element.0) - Int($0.element.1)) }.reduce(0, +) / (plain.pixels.count * 3 / 4)
            XCTAssertLessThanOrEqual(mean, 2, "frame \(index) mean error")
        }
    }

    func testBufferPoolAndTexturesStayFlatOver300Frames() throws {
        // The engine as `run` builds it (pattern → graph → H.264 movie), sampled on every frame by a tap:
        // live GL objects on the context and the output's buffer pool.
        final class Sampler: FrameTap {
            let gpu: GPUContext
            var engine: FrameEngine?
            var samples: [(frame: Int, objects: GPUObjectCounts, allocated: Int)] = []
            init(gpu: GPUContext) { self.gpu = gpu }
            func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
                samples.append((frame.index, gpu.liveObjects, engine?.bufferPool.allocated ?? -1))
            }
        }
        let gpu = try GPUContext()
        let before = gpu.liveObjects
        let sampler = Sampler(gpu: gpu)
        let sink = MovieSink(path: dir.path("flat.mkv"), settings: VideoEncoderSettings(codec: .h264, preset: "ultrafast"))
        var engine: FrameEngine? = try FrameEngine(
            source: SourceSpec(input: .pattern, size: Size(width: 96, height: 64), frameRate: Rational(300, 1), patternFrames: 300),
            graph: GraphBinder().bind("invert, pixellate(4), mono"), sinks: [sink], gpu: gpu, taps: [sampler])
        sampler.engine = engine
        let report = try XCTUnwrap(engine).run()
        XCTAssertEqual(report.framesOut, 300)
        XCTAssertEqual(sampler.samples.map(\.frame), Array(0..<300), "every frame was sampled")
        // GL objects: whatever the first frames created is all there is; nothing is made per frame.
        let warm = sampler.samples[10].objects
        for sample in sampler.samples[10...] {
            XCTAssertEqual(sample.objects, warm, "GL objects changed at frame \(sample.frame)")
        }
        // Buffers: bounded by the pool's capacity after warm-up (a pool may grow to its working depth under
        // load), and every one came back when the run ended.
        let capacity = report.poolCapacity
        XCTAssertGreaterThan(capacity, 0)
        XCTAssert(sampler.samples.allSatisfy { $0.allocated >= 1 && $0.allocated <= capacity }, "\(sampler.samples.map(\.allocated))")
        XCTAssertEqual(try XCTUnwrap(engine).bufferPool.outstanding, 0, "every buffer went back to the pool")
        // And the engine gives every GL object back when it goes.
        sampler.engine = nil
        engine = nil
        // Deferred deletions run on the GPU thread before this returns; the context's cache (programs, free
        // targets, kept for the next compile) is emptied so that only what the engine leaked would remain.
        try gpu.perform { gpu.releaseResources() }
        XCTAssertEqual(gpu.liveObjects, before)
    }

    func testProResAndFFV1Outputs() throws {
        for (codec, file) in [(VideoEncoderSettings.Codec.prores, "p.mov"), (.ffv1, "f.mkv")] {
            var options = RunOptions()
            options.input = .pattern
            options.session.size = Size(width: 64, height: 48)
            options.session.frameLimit = 4
            options.output = .movie(dir.path(file))
            options.session.encoder = VideoEncoderSettings(codec: codec)
            _ = try run(options, filter: "mono")
            let report = try MediaInspector.inspect(dir.path(file))
            XCTAssertEqual(report.videoFrameCount, 4, file)
            // mono: R = G = B after decoding.
            let frame = try MediaInspector.frameRGBA(dir.path(file), index: 1)
            var worst = 0
            for i in stride(from: 0, to: frame.pixels.count, by: 4) {
                worst = max(worst, abs(Int(frame.pixels[i]) - Int(frame.pixels[i + 1])), abs(Int(frame.pixels[i + 1]) - Int(frame.pixels[i + 2])))
            }
            XCTAssertLessThanOrEqual(worst, codec == .ffv1 ? 0 : 3, file)
        }
    }

    func testFrameRateConversionDropsAndRepeatsOntoAConstantRate() throws {
        // A 30 fps movie (1 s) to 15 fps and to 60 fps.
        let input = dir.path("thirty.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=30:duration=1", "-c:v", "ffv1", input])
        for (rate, frames) in [(Rational(15, 1), 15), (Rational(60, 1), 60)] {
            var options = RunOptions()
            options.input = .movie(input)
            options.session.frameRate = rate
            options.output = .movie(dir.path("rate.mkv"))
            options.session.encoder = VideoEncoderSettings(codec: .ffv1)
            let (report, _) = try run(options)
            XCTAssertEqual(report.framesOut, frames, "\(rate)")
            let after = try MediaInspector.inspect(dir.path("rate.mkv"))
            XCTAssertEqual(after.videoFrameCount, frames)
            for (index, pts) in after.videoPTS.enumerated() {
                XCTAssertEqual(pts.seconds, Double(index) / rate.doubleValue, accuracy: 0.0011, "\(rate) frame \(index)")
            }
            // Each output frame is the latest input frame at or before its time, input frame
            // floor(k * 30 / rate): of the input frames around it, that one is the closest picture.
            // (The container stores milliseconds, so "at or before" uses the input's stored times.)
            func distance(_ a: [UInt8], _ b: [UInt8]) -> Int { zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } }
            let inputTimes = try MediaInspector.inspect(input).videoPTS
            for index in [1, 7, frames - 2] {
                let output = try MediaInspector.frameRGBA(dir.path("rate.mkv"), index: index).pixels
                let time = MediaTime(value: Int64(index) * Int64(rate.den), timescale: rate.num)
                let expected = inputTimes.lastIndex { $0 <= time }!
                let candidates = [expected - 1, expected, expected + 1].filter { (0..<30).contains($0) }
                let distances = try candidates.map { distance(output, try MediaInspector.frameRGBA(input, index: $0).pixels) }
                let best = candidates[distances.firstIndex(of: distances.min()!)!]
                XCTAssertEqual(best, expected, "\(rate): output frame \(index), distances \(distances) to \(candidates)")
            }
        }
    }

    func testReadbackStrategiesGiveTheSameFrames() throws {
        var outputs: [[UInt8]] = []
        for strategy in ReadbackStrategy.allCases {
            var options = RunOptions()
            options.input = .pattern
            options.session.size = Size(width: 64, height: 48)
            options.session.frameLimit = 6
            options.session.readback = strategy
            options.output = .movie(dir.path("\(strategy).mkv"))
            options.session.encoder = VideoEncoderSettings(codec: .ffv1)
            let (report, _) = try run(options, filter: "invert")
            XCTAssertEqual(report.framesOut, 6)
            outputs.append(try MediaInspector.frameRGBA(dir.path("\(strategy).mkv"), index: 5).pixels)
        }
        XCTAssertEqual(outputs[0], outputs[1])
    }
}

extension MediaReport {
    var videoStreamCount: Int { streams.filter { $0.type == "video" }.count }
    var audioStreamCount: Int { streams.filter { $0.type == "audio" }.count }
}
