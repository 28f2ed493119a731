// face-bench: what face detection costs, measured on a clip (printed figures for BENCHMARKS.md).
//
//   swift run -c release face-bench CLIP.mp4 [--frames N] [--rounds N]
//   swift run -c release face-bench --recall PHOTO.png [WIDTH,WIDTH…]   (Recall.swift)
//
// Each configuration is an engine run (FrameEngine, as `prism run` does it) of the clip's frames, decoded
// once up front into memory, into a discarded NV12 output: upload → luma thumbnail (draw + readback) →
// detector (its own thread; files wait for it) → graph → NV12 packing → readback. Nothing is decoded or
// encoded during the run, so the fps is the GPU path plus detection. It reports the thumbnail's
// cost, the detector's (Haar and LBP) per frame, and frames per second without faces, with
// face-pixellate detecting every frame and every third frame, all in the same run on the same frames.
import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline
import PrismVision

func seconds(_ start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("face-bench: \(message)\n".utf8))
    exit(1)
}

/// One face in the middle of every frame: the GPU cost of face-pixellate without a detector.
final class FixedFace: FaceRegionProvider {
    func wantsLuma(frameIndex: Int) -> Bool { false }
    func submit(frameIndex: Int, pts: MediaTime, luma: LumaImage) {}
    func regions(frameIndex: Int, pts: MediaTime, frameSize: Size) throws -> FaceFrame {
        let side = Double(frameSize.height) / 4
        let box = FaceBox(x: Double(frameSize.width) / 2 - side / 2, y: Double(frameSize.height) / 2 - side / 2, width: side, height: side)
        return FaceFrame(frameIndex: frameIndex, pts: pts, frameSize: frameSize, faces: [TrackedFace(id: 1, box: box, score: 1)], age: 0)
    }
    var statistics: FaceDetectorStatistics { FaceDetectorStatistics() }
}

/// A face provider as the engine's side input, timing the luma thumbnail it draws (on the GPU thread).
final class TimedFaces: SideInput {
    let provider: any FaceRegionProvider
    let thumbnailer: LumaThumbnailer
    var thumbnailSeconds = 0.0, thumbnails = 0
    init(_ provider: any FaceRegionProvider, width: Int) {
        self.provider = provider
        thumbnailer = LumaThumbnailer(maxWidth: width)
    }
    var suppliesFaceRegions: Bool { true }
    func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
        if provider.wantsLuma(frameIndex: index) {
            let t = DispatchTime.now().uptimeNanoseconds
            provider.submit(frameIndex: index, pts: frame.pts, luma: try thumbnailer.render(uploaded))
            thumbnailSeconds += seconds(t)
            thumbnails += 1
        }
        context.regions = try provider.regions(frameIndex: index, pts: frame.pts, frameSize: uploaded.size).regions
    }
}

/// Not top-level code: that is main-actor isolated, and the measurements run on the GPU thread.
enum FaceBench {
static func run(_ commandLine: [String]) {
var arguments = commandLine
if arguments.first == "--recall" {
    guard arguments.count >= 2 else { fail("usage: face-bench --recall PHOTO.png [WIDTH,WIDTH…]") }
    let widths = arguments.count > 2 ? arguments[2].split(separator: ",").compactMap { Double($0) } : [30, 40, 49, 60, 80, 100]
    do { try RecallBench.run(photoPath: arguments[1], faceWidths: widths) } catch { fail("\(error)") }
    return
}
var frameLimit = 60, rounds = 3
for (flag, target) in [("--frames", 0), ("--rounds", 1)] {
    if let index = arguments.firstIndex(of: flag), index + 1 < arguments.count, let n = Int(arguments[index + 1]), n > 0 {
        if target == 0 { frameLimit = n } else { rounds = n }
        arguments.removeSubrange(index...(index + 1))
    }
}
guard arguments.count == 1 else { fail("usage: face-bench CLIP [--frames N] [--rounds N]") }

do {
    FFmpegLog.setLevel(.quiet)
    let source = try MovieSource(url: arguments[0])
    var frames: [VideoFrame] = []
    while frames.count < frameLimit, let event = try source.next() {
        if case .video(let frame) = event { frames.append(frame) }
    }
    guard let first = frames.first else { fail("\(arguments[0]): no video frames") }
    let context = try GPUContext()
    print("face-bench: \(frames.count) frames of \(first.size) \(first.format) on \(context.info.renderer)")

    struct Figures { var fps: Double; var thumbnailMs: Double?; var detectorMs: Double?; var detections = 0; var input: Size? }

    /// An engine run of every frame through `filter` into a discarded NV12 output (what `prism run`
    /// does, minus decoding and encoding); `faces` (when given) is the run's face side input.
    func measure(filter: String, faces: (any FaceRegionProvider)?) throws -> Figures {
        let graph = try GraphBinder().bind(filter)
        let side = faces.map { TimedFaces($0, width: $0.lumaWidth(for: first.size)) }
        let engine = try FrameEngine(source: try FrameListSource(frames: frames, frameRate: Rational(30, 1)), graph: graph,
                                     sinks: [DiscardSink(format: .nv12)], gpu: context, sideInputs: side.map { [$0] } ?? [])
        let report = try engine.run()
        guard report.framesOut == frames.count else { fail("the run wrote \(report.framesOut) of \(frames.count) frames") }
        var figures = Figures(fps: report.fps)
        if let faces, let side, faces.statistics.detections > 0 {
            let (seconds, count) = try context.perform { (side.thumbnailSeconds, side.thumbnails) }
            figures.thumbnailMs = seconds * 1000 / Double(max(count, 1))
            figures.detectorMs = faces.statistics.meanDetectMilliseconds
            figures.detections = faces.statistics.detections
            figures.input = faces.statistics.inputSize
        }
        return figures
    }

    // Configurations are interleaved and repeated (a shared machine's load moves); medians are printed.
    let allConfigurations: [(label: String, filter: String, faces: () throws -> (any FaceRegionProvider)?)] = [
        ("no filter", "", { nil }),
        ("pixellate(16) alone, no mask", "pixellate(16)", { nil }),
        ("face-pixellate, one fixed face, no detector", "face-pixellate(scale=16)", { FixedFace() }),
        ("the seed's graph with one radial-gradient", "[in]pixellate(scale=16)[px]; radial-gradient(radius0=70, radius1=90)[m]; [px][in][m]blend-mask", { nil }),
    ] + ["haar", "lbp"].flatMap { model in
        [1, 3].map { every in
            ("face-pixellate, \(model), detect every \(every)", "face-pixellate(scale=16)", {
                DetectingFaceProvider(detector: try CascadeFaceDetector(model: model), mode: .everyNth(every)) as (any FaceRegionProvider)?
            })
        }
    }
    let chosen = ProcessInfo.processInfo.environment["FACE_BENCH_ONLY"].map { $0.split(separator: ",").compactMap { Int($0) } }
    let configurations = chosen.map { indices in indices.map { allConfigurations[$0] } } ?? allConfigurations
    var results = [[Figures]](repeating: [], count: configurations.count)
    for _ in 0..<rounds {
        for (index, configuration) in configurations.enumerated() {
            results[index].append(try measure(filter: configuration.filter, faces: try configuration.faces()))
        }
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print("medians of \(rounds) rounds (range in brackets)")
    for (index, configuration) in configurations.enumerated() {
        let runs = results[index]
        let fps = runs.map(\.fps)
        var line = configuration.label.padding(toLength: 46, withPad: " ", startingAt: 0)
            + String(format: "%7.1f fps [%.1f–%.1f]", median(fps), fps.min()!, fps.max()!)
        let detector = runs.compactMap(\.detectorMs), thumbnail = runs.compactMap(\.thumbnailMs)
        if !detector.isEmpty {
            line += String(format: "   thumbnail %.2f ms, detector %.1f ms [%.1f–%.1f] on %@, %d runs per pass",
                           median(thumbnail), median(detector), detector.min()!, detector.max()!,
                           runs.last?.input.map { "\($0)" } ?? "-", runs.last?.detections ?? 0)
        }
        print(line)
    }
} catch {
    fail("\(error)")
}
}
}

FaceBench.run(Array(CommandLine.arguments.dropFirst()))
