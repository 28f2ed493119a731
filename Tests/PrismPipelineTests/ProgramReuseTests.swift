import Foundation
import XCTest
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
@testable import PrismPipeline

/// What a running engine compiles again reuses what the context already has: programs by source
/// (`GPUContext.programLinks` counts every link) and render targets by shape (`madeObjects` counts every
/// texture made). On llvmpipe, through the real engine.
final class ProgramReuseTests: XCTestCase {
    static let size = Size(width: 64, height: 48)
    private var gpu: GPUContext!
    private var dir: URL!

    override func setUpWithError() throws {
        gpu = try GPUContext()
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("prism-reuse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        gpu = nil
        if let dir { try? FileManager.default.removeItem(at: dir) }
    }

    /// Runs `body` after frame `index` rendered, on the GPU thread, as `prism dev` and `prism record` do
    /// their attaches and detaches; records the context's link count after each frame.
    final class Script: FrameTap {
        let gpu: GPUContext
        var steps: [Int: (EngineControl) throws -> Void] = [:]
        private(set) var linksAfter: [Int] = []
        private(set) var texturesAfter: [Int] = []
        init(gpu: GPUContext) { self.gpu = gpu }
        func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
            try steps[frame.index]?(control)
            linksAfter.append(gpu.programLinks)
            texturesAfter.append(gpu.madeObjects.textures)
        }
    }

    func testASecondTakeLinksNoProgram() throws {
        // The preview runs throughout (as in `prism dev`/`prism record`); take 1 records frames 2…5, take 2
        // (the same format) starts at frame 8: everything it needs was linked for take 1.
        let preview = FrameEngineTests.Recorder()
        let take1 = DiscardSink(format: .yuv420p), take2 = DiscardSink(format: .yuv420p)
        let script = Script(gpu: gpu)
        script.steps = [1: { try $0.attach(take1) }, 5: { try $0.detach(take1) }, 7: { try $0.attach(take2) },
                        10: { try $0.detach(take2) }]
        let before = gpu.programLinks
        let engine = try FrameEngine(source: FrameEngineTests.pattern(frames: 12), graph: GraphBinder().bind("invert, mono"),
                                     sinks: [preview], gpu: gpu, taps: [script])
        let cold = gpu.programLinks - before
        _ = try engine.run()
        let links = script.linksAfter
        XCTAssertGreaterThan(cold, 0, "the first compile links its passes")
        XCTAssertGreaterThan(links[1], links[0], "take 1 adds its packing pass the first time")
        XCTAssertEqual(links[5], links[1], "stopping take 1 goes back to the preview's programs: nothing linked")
        XCTAssertEqual(links[7], links[5], "take 2 starts without linking")
        XCTAssertEqual(links[10], links[5], "and stops without linking")
        XCTAssertEqual(preview.frames.count, 12)
    }

    func testAPhotoDuringARecordingLinksNoProgram() throws {
        // A movie records; a one-frame still is attached at frame 2 and detached after it got its frame (as
        // `prism record` takes a photo), then again at frame 6. The second photo, and the return to the
        // movie alone after each, link nothing.
        let movie = MovieSink(path: dir.appendingPathComponent("take.mkv").path,
                              settings: VideoEncoderSettings(codec: .ffv1))
        let photo1 = try StillImageSink(path: dir.appendingPathComponent("one.png").path)
        let photo2 = try StillImageSink(path: dir.appendingPathComponent("two.png").path)
        let script = Script(gpu: gpu)
        script.steps = [2: { try $0.attach(photo1) }, 3: { try $0.detach(photo1) },
                        6: { try $0.attach(photo2) }, 7: { try $0.detach(photo2) }]
        let engine = try FrameEngine(source: FrameEngineTests.pattern(frames: 10), graph: GraphBinder().bind("invert, mono"),
                                     sinks: [movie], gpu: gpu, taps: [script])
        let report = try engine.run()
        XCTAssertEqual(report.framesOut, 10)
        let links = script.linksAfter
        XCTAssertEqual(links[3], links[2], "the movie alone again: its programs were kept")
        XCTAssertEqual(links[6], links[3], "the second photo links nothing")
        XCTAssertEqual(links[7], links[3], "nor does its detach")
        for name in ["one.png", "two.png"] {
            let image = try ImageFile.read(path: dir.appendingPathComponent(name).path)
            XCTAssertEqual(image.size, Self.size, name)
        }
    }

    func testADevRecordingStartsWithoutLinking() throws {
        // `prism dev`: a preview that takes the newest frames, a recording started (a movie attached), stopped,
        // and started again: the second start links nothing.
        let preview = FrameEngineTests.Recorder(delivery: .newest)
        let first = MovieSink(path: dir.appendingPathComponent("a.mkv").path, settings: VideoEncoderSettings(codec: .ffv1))
        let second = MovieSink(path: dir.appendingPathComponent("b.mkv").path, settings: VideoEncoderSettings(codec: .ffv1))
        let script = Script(gpu: gpu)
        script.steps = [1: { try $0.attach(first) }, 4: { try $0.detach(first) }, 6: { try $0.attach(second) }]
        let engine = try FrameEngine(source: FrameEngineTests.pattern(frames: 9), graph: GraphBinder().bind("noir, pixellate(4)"),
                                     sinks: [preview], gpu: gpu, taps: [script])
        _ = try engine.run()
        let links = script.linksAfter
        XCTAssertGreaterThan(links[1], links[0])
        XCTAssertEqual(links[6], links[4], "the second recording starts without linking")
        XCTAssertEqual(links[8], links[4])
        XCTAssertEqual(try MediaInspector.videoPacketCount(second.path), 2, "frames 7 and 8")
    }

    /// Frames of the sizes given, in order, each an RGBA gradient that depends on its size and on the
    /// frame's index modulo 4 only (so frames 1 and 9 of the same size are the same picture).
    final class SizeSwitchingSource: MediaSource {
        let sizes: [Size]
        private var index = 0
        let info: SourceInfo
        init(sizes: [Size]) {
            self.sizes = sizes
            info = SourceInfo(size: sizes[0], pixelFormat: .rgba, frameRate: Rational(30, 1), timeBase: Rational(1, 30),
                              duration: nil, estimatedFrameCount: sizes.count, isLive: false,
                              colorSpace: YUVColorSpace(matrix: .bt709, range: .full), summary: "sizes")
        }
        func next() throws -> SourceEvent? {
            guard index < sizes.count else { return nil }
            defer { index += 1 }
            let size = sizes[index]
            let frame = VideoFrame(format: .rgba, size: size, colorSpace: info.colorSpace,
                                   pts: MediaTime(value: Int64(index), timeBase: Rational(1, 30)),
                                   duration: MediaTime(value: 1, timeBase: Rational(1, 30)))
            let pixels = UnsafeMutableRawPointer(mutating: frame.planes[0].base).assumingMemoryBound(to: UInt8.self)
            let rowBytes = frame.planes[0].rowBytes
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let p = pixels + y * rowBytes + x * 4
                    p[0] = UInt8((x * 255 / size.width + index % 4 * 40) % 256)
                    p[1] = UInt8(y * 255 / size.height)
                    p[2] = UInt8((x + y) % 256)
                    p[3] = 255
                }
            }
            return .video(frame)
        }
    }

    func testASizeChangeReusesTheTargetsThatFit() throws {
        // A camera switched to another size and back (the output follows its input): coming back, the
        // renderer takes the targets it had at that size from the context's pool and its programs from the
        // cache; only the frame upload is new. The pictures are the same as before the switch.
        let small = Self.size, large = Size(width: 96, height: 64)
        let sizes = Array(repeating: small, count: 4) + Array(repeating: large, count: 4) + Array(repeating: small, count: 4)
        let sink = FrameEngineTests.Recorder()
        let script = Script(gpu: gpu)
        var configuration = EngineConfiguration()
        configuration.sizeChange = .followInput
        let before = gpu.madeObjects.textures
        let engine = try FrameEngine(source: SizeSwitchingSource(sizes: sizes), graph: GraphBinder().bind("blur(2), mono"),
                                     sinks: [sink], configuration: configuration, gpu: gpu, taps: [script])
        _ = try engine.run()
        let textures = script.texturesAfter, links = script.linksAfter
        let coldStart = textures[0] - before
        let switchBack = textures[8] - textures[7]
        XCTAssertLessThan(switchBack, coldStart, "switching back made \(switchBack) textures; the cold start \(coldStart)")
        XCTAssertEqual(links[8], links[7], "the programs for this size were kept")
        XCTAssertEqual(sink.frames.count, 12)
        XCTAssertEqual(sink.frames[9].pixels, sink.frames[1].pixels, "reused targets give the same picture")
    }
}
