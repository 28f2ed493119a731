import Foundation
import XCTest
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
@testable import PrismPipeline

/// The engine end to end on llvmpipe: real sources, the GPU path, sinks on their own threads.
final class FrameEngineTests: XCTestCase {
    static let size = Size(width: 64, height: 48)
    private var gpu: GPUContext!

    override func setUpWithError() throws { gpu = try GPUContext() }
    override func tearDown() { gpu = nil }

    /// The moving pattern at `size`, 30 fps, `frames` long.
    static func pattern(frames: Int) -> SourceSpec {
        SourceSpec(input: .pattern, size: size, frameRate: Rational(30, 1), patternFrames: frames)
    }

    /// Collects what a sink receives, and how it ended.
    final class Recorder: FrameSink {
        let point: SinkPoint
        let delivery: SinkDelivery
        let bufferCount: Int
        let gate: DispatchSemaphore?
        private(set) var frames: [(index: Int, pts: MediaTime, pixels: [UInt8])] = []
        private(set) var finished = 0
        private(set) var aborted = 0
        private(set) var opened: SinkStream?
        var failAt: Int?

        init(point: SinkPoint = .output, delivery: SinkDelivery = .everyFrame, bufferCount: Int = 4,
             gate: DispatchSemaphore? = nil) {
            self.point = point
            self.delivery = delivery
            self.bufferCount = bufferCount
            self.gate = gate
        }
        var pixelFormat: PixelFormat { .rgba }
        func open(_ stream: SinkStream) throws { opened = stream }
        func write(_ frame: ProcessedFrame) throws -> Bool {
            gate?.wait()
            if let failAt, frame.index == failAt { throw InvalidRequest("sink failed on purpose at \(failAt)") }
            frames.append((frame.index, frame.pts, frame.buffer.rgbaImage().pixels))
            return true
        }
        func finish() throws { finished += 1 }
        func abort() { aborted += 1 }
    }

    func testEveryFrameReachesEverySinkInOrderAndTheOutputIsTheFilteredInput() throws {
        let input = Recorder(point: .input)
        let output = Recorder()
        let engine = try FrameEngine(source: Self.pattern(frames: 12), graph: GraphBinder().bind("invert"),
                                     sinks: [output, input], gpu: gpu)
        XCTAssertEqual(output.opened?.layout.size, Self.size)
        let report = try engine.run()
        XCTAssertEqual(report.framesIn, 12)
        XCTAssertEqual(report.framesOut, 12)
        XCTAssertEqual(output.frames.map(\.index), Array(0..<12))
        XCTAssertEqual(input.frames.map(\.index), Array(0..<12))
        XCTAssertEqual(output.frames.map(\.pts), output.frames.map(\.pts).sorted())
        XCTAssertEqual([output.finished, input.finished, output.aborted], [1, 1, 0])
        // invert, checked against the unfiltered frame the input sink got: 255 − v on R, G and B.
        for (filtered, plain) in zip(output.frames, input.frames) {
            var worst = 0
            for i in stride(from: 0, to: plain.pixels.count, by: 4) {
                for c in 0..<3 { worst = max(worst, abs(255 - Int(plain.pixels[i + c]) - Int(filtered.pixels[i + c]))) }
            }
            XCTAssertLessThanOrEqual(worst, 1, "frame \(filtered.index)")
        }
        XCTAssertNotEqual(output.frames[0].pixels, output.frames[11].pixels, "the pattern moves")
    }

    func testSideInputsReachTheFrameContextAndTapsSeeEveryFrame() throws {
        final class Regions: SideInput {
            func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
                XCTAssertEqual(uploaded.size, FrameEngineTests.size)
                context.regions = [FrameContext.Region(center: SIMD2(Double(index) / 10, 0.5), radius: 0.1)]
            }
        }
        final class Seen: FrameTap {
            var regions: [Double] = []
            var finished = false
            func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
                XCTAssertEqual(frame.uploaded.size, FrameEngineTests.size)
                regions.append(frame.context.regions.first?.center.x ?? -1)
            }
            func finish() throws { finished = true }
        }
        let tap = Seen()
        let engine = try FrameEngine(source: try Self.pattern(frames: 5).open(), graph: FilterGraph(), sinks: [Recorder()],
                                     gpu: gpu, taps: [tap], sideInputs: [Regions()])
        _ = try engine.run()
        XCTAssertEqual(tap.regions, [0, 0.1, 0.2, 0.3, 0.4])
        XCTAssertTrue(tap.finished)
    }

    func testAGraphSwappedBetweenFramesAppliesFromOneFrameOn() throws {
        let input = Recorder(point: .input)
        let output = Recorder()
        let engine = try FrameEngine(source: Self.pattern(frames: 20), graph: GraphBinder().bind("invert"),
                                     sinks: [output, input], gpu: gpu)
        final class SwapAtFive: FrameTap {
            func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
                if frame.index == 4 { try control.setGraph(FilterGraph()) }
            }
        }
        let tapped = try FrameEngine(source: Self.pattern(frames: 20), graph: GraphBinder().bind("invert"),
                                     sinks: [Recorder()], gpu: gpu, taps: [SwapAtFive()])
        _ = try tapped.run()
        // Through `schedule`, from another thread, as the preview server does.
        engine.schedule { control in try control.setGraph(FilterGraph()) }
        _ = try engine.run()
        // The scheduled swap ran before the first frame: nothing is inverted.
        XCTAssertEqual(output.frames.count, 20)
        for (a, b) in zip(output.frames, input.frames) { XCTAssertEqual(a.pixels, b.pixels, "frame \(a.index)") }
    }

    func testSinksAttachedAndDetachedWhileRunningGetAContiguousRunAndAreFinished() throws {
        let late = Recorder()
        final class Attacher: FrameTap {
            let sink: Recorder
            init(_ sink: Recorder) { self.sink = sink }
            func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
                if frame.index == 3 { try control.attach(sink) }
                if frame.index == 9 { try control.detach(sink) }
            }
        }
        let main = Recorder()
        let engine = try FrameEngine(source: Self.pattern(frames: 15), graph: GraphBinder().bind("mono"), sinks: [main],
                                     gpu: gpu, taps: [Attacher(late)])
        _ = try engine.run()
        XCTAssertEqual(main.frames.count, 15)
        // Attached after frame 3 rendered: frames 4…9 (detached after frame 9 rendered, its frames delivered).
        XCTAssertEqual(late.frames.map(\.index), Array(4...9))
        XCTAssertEqual(late.finished, 1, "a detached sink is finished by its own thread")
        XCTAssertEqual(late.aborted, 0)
        for frame in late.frames {
            XCTAssertEqual(frame.pixels, main.frames[frame.index].pixels, "the same graph output")
        }
    }

    func testAFailingSinkFailsTheRunAndAbortsTheOthers() throws {
        let good = Recorder()
        let bad = Recorder()
        bad.failAt = 3
        let engine = try FrameEngine(source: Self.pattern(frames: 40), graph: FilterGraph(), sinks: [good, bad], gpu: gpu)
        XCTAssertThrowsError(try engine.run()) { error in
            XCTAssert("\(error)".contains("sink failed on purpose at 3"), "\(error)")
        }
        XCTAssertEqual(good.finished, 0)
        XCTAssertEqual(good.aborted, 1, "nothing is finished when the run failed")
        XCTAssertEqual(bad.finished, 0)
        XCTAssertEqual(bad.aborted, 1)
    }

    func testASlowNewestSinkNeverHoldsTheEngineBack() throws {
        // The preview-like sink is held until the file-like sink has every frame: the engine must have
        // skipped frames for it instead of waiting (it would deadlock otherwise).
        let gate = DispatchSemaphore(value: 0)
        let slow = Recorder(delivery: .newest, bufferCount: 2, gate: gate)
        let all = Recorder()
        final class OpenGate: FrameTap {
            let gate: DispatchSemaphore
            init(_ gate: DispatchSemaphore) { self.gate = gate }
            func rendered(_ frame: RenderedFrame, control: EngineControl) throws {}
            func finish() throws { for _ in 0..<64 { gate.signal() } }
        }
        let engine = try FrameEngine(source: Self.pattern(frames: 30), graph: FilterGraph(), sinks: [all, slow], gpu: gpu,
                                     taps: [OpenGate(gate)])
        _ = try engine.run()
        XCTAssertEqual(all.frames.count, 30)
        XCTAssertLessThanOrEqual(slow.frames.count, 6, "at most its buffers and queue were filled")
        XCTAssertEqual(slow.frames.map(\.index), slow.frames.map(\.index).sorted())
    }

    func testAnEngineRunsOnce() throws {
        let engine = try FrameEngine(source: Self.pattern(frames: 2), graph: FilterGraph(), sinks: [Recorder()], gpu: gpu)
        _ = try engine.run()
        XCTAssertThrowsError(try engine.run())
    }

    func testBadSinksFailBeforeTheFirstFrameAndLeaveNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good.mp4").path
        let sinks: [any FrameSink] = [MovieSink(path: good, settings: VideoEncoderSettings()),
                                      MovieSink(path: "/nonexistent-dir/x.mp4", settings: VideoEncoderSettings())]
        XCTAssertThrowsError(try FrameEngine(source: Self.pattern(frames: 2), graph: FilterGraph(), sinks: sinks, gpu: gpu))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [],
                       "the sink opened before the failing one left nothing")
    }
}
