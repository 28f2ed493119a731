// face-bench: what face detection finds and costs on real footage, against CenterFace's own detections
// (printed figures for BENCHMARKS.md, "Faces").
//
//   .venv/bin/python scripts/face-reference .models/centerface.onnx CLIP REF.jsonl
//   swift run -c release face-bench CLIP REF.jsonl [--frames N]
//
// The reference is CenterFace at the clip's full resolution through onnxruntime (scripts/face-reference):
// its faces at least 24 px wide are what must be found. For each detector (CenterFace, OpenCV's Haar and LBP
// cascades) and detection resolution (the picture made for a smallest face of 24, 40 or 64 frame pixels), two
// modes run on the same decoded frames:
// - "detector": the whole-frame picture of every frame, detected alone. Recall: reference faces with a
//   detection whose centre is within 0.3 face widths of theirs.
// - "tracked": what `prism run` does (the provider: tracking, prediction, closer looks at missed faces),
//   detecting every frame or every third. Recall: reference faces whose oval (inscribed in the box) lies inside
//   the opaque part of a mask drawn for that frame (face-mask's defaults), as the tests check coverage.
// ms per detection is the detector's wall time per frame detected (closer looks included), on this machine.
import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismMedia
import PrismPipeline
import PrismVision

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("face-bench: \(message)\n".utf8))
    exit(1)
}

/// The reference's faces per frame: boxes in frame pixels.
func readReference(_ path: String) throws -> [Int: [FaceBox]] {
    var faces: [Int: [FaceBox]] = [:]
    for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let frame = object["frame"] as? Int, let list = object["faces"] as? [[Double]] else { continue }
        faces[frame] = list.map { FaceBox(x: $0[0], y: $0[1], width: $0[2], height: $0[3]) }
    }
    return faces
}

/// Records each frame's served faces and detection pictures' cost, around `FaceRegions`.
final class Recorder: SideInput {
    let regions: FaceRegions
    var served: [Int: [TrackedFace]] = [:]
    init(_ faces: FaceSideInput) { regions = FaceRegions(faces) }
    var supplies: SideData { .faceRegions }
    /// The frames read ahead for the detector, as in a run: without them a file's provider waits for ever.
    var lookAheadInput: (any LookAheadInput)? { regions.lookAheadInput }
    func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
        let found = try regions.faces.faces(frameIndex: index, pts: frame.pts, frameSize: uploaded.size) { request in
            try self.regions.render(request, from: uploaded)
        }
        served[index] = found.faces
        context.regions = found.regions
    }
}

/// Whether the face in `box` (the oval inscribed in it, hairline to chin) lies wholly inside the opaque part of
/// face-mask's ellipse for `face` (its defaults): what the privacy filters promise and the tests check.
func covers(_ face: TrackedFace, _ box: FaceBox) -> Bool {
    let inner = 1.5 * (1 - 0.15)
    let a = inner * face.box.width / 2, b = inner * face.box.height / 2
    let c = face.box.center, centre = box.center
    return (0..<32).allSatisfy { step in
        let angle = Double(step) * Double.pi / 16
        let dx = (centre.x + cos(angle) * box.width / 2 - c.x) / a, dy = (centre.y + sin(angle) * box.height / 2 - c.y) / b
        return dx * dx + dy * dy <= 1
    }
}

enum FaceBench {
    static func run(_ arguments: [String]) throws {
        var arguments = arguments
        var frameLimit = Int.max
        if let index = arguments.firstIndex(of: "--frames"), index + 1 < arguments.count, let n = Int(arguments[index + 1]) {
            frameLimit = n
            arguments.removeSubrange(index...(index + 1))
        }
        guard arguments.count == 2 else { fail("usage: face-bench CLIP REFERENCE.jsonl [--frames N]") }
        FFmpegLog.setLevel(.quiet)
        let reference = try readReference(arguments[1])
        let source = try MovieSource(url: arguments[0])
        var frames: [VideoFrame] = []
        while frames.count < frameLimit, let event = try source.next() {
            if case .video(let frame) = event { frames.append(frame) }
        }
        guard let first = frames.first else { fail("\(arguments[0]): no video frames") }
        let wanted = frames.indices.flatMap { n in (reference[n] ?? []).filter { $0.width >= 24 }.map { (n, $0) } }
        let context = try GPUContext()
        print("face-bench: \(frames.count) frames of \(first.size) on \(context.info.renderer); "
              + "\(wanted.count) reference faces of 24 px or more (CenterFace at full resolution)")
        print("detector                 mode            picture      recall   false   ms/detection")
        // FACE_BENCH_MODELS=centerface, FACE_BENCH_SIZES=24,40 and FACE_BENCH_MODES=detector narrow the table.
        let environment = ProcessInfo.processInfo.environment
        func list(_ name: String, _ all: [String]) -> [String] { environment[name].map { $0.split(separator: ",").map(String.init) } ?? all }
        for model in list("FACE_BENCH_MODELS", ["centerface", "haar", "lbp"]) {
            for minFace in list("FACE_BENCH_SIZES", ["24", "40", "64"]).compactMap({ Int($0) }) {
                for mode in list("FACE_BENCH_MODES", ["detector", "tracked 1", "tracked 3"]) {
                    var settings = FaceSettings()
                    settings.model = model
                    settings.minSize = minFace
                    settings.every = mode == "tracked 3" ? 3 : 1
                    let (provider, _) = try settings.makeProvider(live: false)
                    guard let detecting = provider as? DetectingFaceProvider else { fail("no detector for \(model)") }
                    let picture = detecting.pictureSize(for: first.size)
                    var found = 0, falses = 0
                    let seconds: Double, runs: Int
                    if mode == "detector" {
                        let (detections, cost) = try detectAlone(frames, detecting: detecting, model: model, context: context)
                        seconds = cost
                        runs = frames.count
                        for (n, box) in wanted where detections[n]?.contains(where: { near($0.box, box) }) == true { found += 1 }
                        for (n, list) in detections {
                            falses += list.filter { detection in !(reference[n] ?? []).contains { near(detection.box, $0) } }.count
                        }
                    } else {
                        let recorder = Recorder(FaceSideInput(provider: provider, writer: nil))
                        let engine = try FrameEngine(source: try FrameListSource(frames: frames, frameRate: Rational(24, 1)),
                                                     graph: try GraphBinder().bind("face-mask"), sinks: [DiscardSink(format: .nv12)],
                                                     gpu: context, sideInputs: [recorder])
                        _ = try engine.run()
                        let statistics = provider.statistics
                        seconds = statistics.detectSeconds
                        runs = statistics.detections
                        let served = try context.perform { recorder.served }
                        for (n, box) in wanted where served[n]?.contains(where: { covers($0, box) }) == true { found += 1 }
                        for (n, list) in served {
                            falses += list.filter { face in !(reference[n] ?? []).contains { near(face.box, $0) } }.count
                        }
                    }
                    let name = model == "centerface" ? "CenterFace" : model == "haar" ? "Haar cascade" : "LBP cascade"
                    print("\(name) (min \(minFace) px)".padding(toLength: 25, withPad: " ", startingAt: 0)
                          + mode.padding(toLength: 16, withPad: " ", startingAt: 0)
                          + "\(picture)".padding(toLength: 11, withPad: " ", startingAt: 0)
                          + String(format: "%6.1f%%  %6d  %8.1f", 100 * Double(found) / Double(max(wanted.count, 1)), falses,
                                   seconds * 1000 / Double(max(runs, 1))))
                }
            }
        }
    }

    /// Two boxes of the same face: centres within 0.3 widths of the larger.
    static func near(_ a: FaceBox, _ b: FaceBox) -> Bool {
        let d = a.center - b.center
        return (d * d).sum().squareRoot() <= 0.3 * max(a.width, b.width)
    }

    /// Every frame's whole picture detected alone (no tracking): detections per frame and the seconds spent.
    static func detectAlone(_ frames: [VideoFrame], detecting: DetectingFaceProvider, model: String,
                            context: GPUContext) throws -> ([Int: [FaceDetection]], Double) {
        /// Draws each frame's picture and detects it at once (on the GPU thread: a bench, not a run).
        final class Alone: SideInput {
            let regions: FaceRegions
            let detector: any FaceDetecting
            let size: (Size) -> Size
            var detections: [Int: [FaceDetection]] = [:]
            var seconds = 0.0
            init(detector: any FaceDetecting, size: @escaping (Size) -> Size, faces: FaceSideInput) {
                self.detector = detector
                self.size = size
                regions = FaceRegions(faces)
            }
            var supplies: SideData { .faceRegions }
            func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
                let image = try regions.render(DetectionRequest(channels: detector.input.channels, size: size(uploaded.size)), from: uploaded)
                let start = DispatchTime.now().uptimeNanoseconds
                detections[index] = try detector.detect(image)
                seconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            }
        }
        let (detector, _) = try FaceSettings.detector(for: model)
        if let threshold = ProcessInfo.processInfo.environment["FACE_BENCH_THRESHOLD"].flatMap(Double.init) {
            (detector as? CenterFaceDetector)?.threshold = threshold
        }
        let alone = Alone(detector: detector, size: { detecting.pictureSize(for: $0) }, faces: FaceSideInput(provider: detecting, writer: nil))
        let engine = try FrameEngine(source: try FrameListSource(frames: frames, frameRate: Rational(24, 1)), graph: FilterGraph(),
                                     sinks: [DiscardSink(format: .nv12)], gpu: context, sideInputs: [alone])
        _ = try engine.run()
        return try context.perform { (alone.detections, alone.seconds) }
    }
}

do {
    try FaceBench.run(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error)")
}
