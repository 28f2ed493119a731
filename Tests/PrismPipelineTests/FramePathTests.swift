import Foundation
import XCTest
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
@testable import PrismPipeline

/// Stills as engine runs, and the side inputs a graph needs.
final class FramePathTests: XCTestCase {
    private var gpu: GPUContext!
    override func setUpWithError() throws { gpu = try GPUContext() }
    override func tearDown() { gpu = nil }

    /// A picture with a different red and green in every pixel.
    static func image(_ size: Size) -> RGBAImage {
        var pixels = [UInt8](repeating: 255, count: size.pixelCount * 4)
        for i in 0..<size.pixelCount { pixels[4 * i] = UInt8(i % 251); pixels[4 * i + 1] = UInt8((i * 7) % 253) }
        return RGBAImage(size: size, pixels: pixels)
    }

    /// A face graph with nothing to find faces is refused before any frame, with one line naming the
    /// filter, as an audio graph is on an input without sound.
    func testAFaceGraphWithoutAFaceSideInputIsRefused() throws {
        let graph = try GraphBinder().bind("face-pixellate")
        let source = try FrameListSource(image: Self.image(Size(width: 32, height: 24)))
        XCTAssertThrowsError(try FrameEngine(source: source, graph: graph, sinks: [DiscardSink(format: .rgba)], gpu: gpu)) { error in
            XCTAssertEqual("\(error)", "face-mask needs faces: this run has no face side input (a detector or a \(Setting.facesIn) sidecar)")
        }
        // Replacing the graph while running is refused the same way (the current graph keeps running).
        let plain = try FrameEngine(source: try FrameListSource(image: Self.image(Size(width: 32, height: 24))),
                                    graph: FilterGraph(), sinks: [DiscardSink(format: .rgba)], gpu: gpu)
        let refused = Locked<String?>(nil)
        plain.schedule { control in
            do { try control.setGraph(try GraphBinder().bind("face-pixellate")) } catch { refused.withLock { $0 = "\(error)" } }
        }
        _ = try plain.run()
        XCTAssertEqual(refused.withLock { $0 }, "face-mask needs faces: this run has no face side input (a detector or a \(Setting.facesIn) sidecar)")
    }

    /// With a side input that supplies regions, the same graph runs and pixellates where the face is.
    func testAFaceSideInputLetsTheFaceGraphRun() throws {
        final class OneFace: SideInput {
            var supplies: SideData { .faceRegions }
            func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
                context.regions = [.init(center: SIMD2(0.5, 0.5), radius: 0.3)]
            }
        }
        let image = Self.image(Size(width: 64, height: 48))
        let out = try FrameEngine.renderStill(try GraphBinder().bind("face-pixellate"), image: image, gpu: gpu, sideInputs: [OneFace()])
        XCTAssertEqual(out.size, image.size)
        XCTAssertNotEqual(out.pixels, image.pixels, "the face region is pixellated")
        let none = try FrameEngine.renderStill(try GraphBinder().bind("face-pixellate"), image: image, gpu: gpu,
                                               frame: FrameContext(regions: []))
        XCTAssertEqual(none.pixels, image.pixels, "no face: the photo is unchanged")
    }

    /// A still is one frame of the engine: an empty graph gives the photo back exactly, odd sizes too.
    func testAStillThroughTheEngineIsExact() throws {
        let image = Self.image(Size(width: 33, height: 17))
        let out = try FrameEngine.renderStill(FilterGraph(), image: image, gpu: gpu)
        XCTAssertEqual(out, image)
        let inverted = try FrameEngine.renderStill(try GraphBinder().bind("invert"), image: image, gpu: gpu)
        XCTAssertEqual(inverted.pixels[0], 255 - image.pixels[0])
        XCTAssertEqual(inverted.pixels[3], image.pixels[3], "alpha kept")
    }

    /// A sink with a buffer for every frame of the run, so the engine never waits for one inside a frame's
    /// job (a frame that must be read back holds the GPU thread until a buffer is free).
    final class PooledSink: FrameSink {
        let body: (ProcessedFrame) -> Bool
        init(_ body: @escaping (ProcessedFrame) -> Bool) { self.body = body }
        var pixelFormat: PixelFormat { .rgba }
        var bufferCount: Int { 64 }
        func write(_ frame: ProcessedFrame) throws -> Bool { body(frame) }
    }

    /// The engine holds the GPU thread one frame at a time: other work for the thread (a preview's
    /// snapshot, a dev reload) runs between two frames while the run goes on, not after it.
    func testOtherGPUWorkRunsBetweenFramesWhileTheEngineRuns() throws {
        let gpu = self.gpu!
        let ranDuringRun = Locked<Bool?>(nil)
        let workers = Locked<[WorkerThread]>([])
        let sink = PooledSink { frame in
            guard frame.index == 3 else { return true }
            let done = DispatchSemaphore(value: 0)
            // A joined thread: a detached one's closure, released at some later moment, could hold the
            // context past the process's exit.
            let worker = WorkerThread {
                try? gpu.perform {}
                done.signal()
            }
            ranDuringRun.withLock { $0 = done.wait(timeout: .now() + 10) == .success }
            workers.withLock { $0.append(worker) }
            return true
        }
        let engine = try FrameEngine(source: SourceSpec(input: .pattern, size: Size(width: 32, height: 24),
                                                        frameRate: Rational(30, 1), patternFrames: 40),
                                     graph: try GraphBinder().bind("invert"), sinks: [sink], gpu: gpu)
        let report = try engine.run()
        for worker in workers.withLock({ $0 }) { worker.join() }
        XCTAssertEqual(report.framesOut, 40)
        XCTAssertEqual(ranDuringRun.withLock { $0 }, true, "a job for the GPU thread waited for the whole run")
    }
}
