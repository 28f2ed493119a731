// face-bench --recall PHOTO.png: how many faces of each size the detector finds at each detection
// resolution, and what a detection costs there (printed figures for BENCHMARKS.md and the default of
// --face-min-size).
//
// For each frame size (720p, 1080p) and face width (frame pixels), the photo is scaled so that its face
// (found by the detector on the photo itself, at full size) has that width and placed at 12 positions
// (a grid, fractional offsets) on a grey frame; each frame goes through the GPU's luma image at the
// resolution under test and the cascade, as in a run. A face counts as found when a detection's centre
// lies within 0.3 face widths of the true centre; any other detection is a false one.
import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline
import PrismVision

enum RecallBench {
    /// The photo scaled by `k` (bilinear) onto a grey `frame` with its top left at `origin` (may be fractional).
    static func composite(_ photo: RGBAImage, k: Double, origin: SIMD2<Double>, frame: Size) -> [UInt8] {
        var pixels = [UInt8](repeating: 128, count: frame.pixelCount * 4)
        let w = Double(photo.size.width) * k, h = Double(photo.size.height) * k
        let x0 = max(0, Int(origin.x)), x1 = min(frame.width, Int((origin.x + w).rounded(.up)))
        let y0 = max(0, Int(origin.y)), y1 = min(frame.height, Int((origin.y + h).rounded(.up)))
        photo.pixels.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                for y in y0..<max(y0, y1) {
                    let sy = min(max((Double(y) + 0.5 - origin.y) / k - 0.5, 0), Double(photo.size.height - 1))
                    let iy = min(Int(sy), photo.size.height - 2), fy = sy - Double(iy)
                    for x in x0..<max(x0, x1) {
                        let sx = min(max((Double(x) + 0.5 - origin.x) / k - 0.5, 0), Double(photo.size.width - 1))
                        let ix = min(Int(sx), photo.size.width - 2), fx = sx - Double(ix)
                        let o = (y * frame.width + x) * 4
                        for c in 0..<3 {
                            func at(_ px: Int, _ py: Int) -> Double { Double(src[(py * photo.size.width + px) * 4 + c]) }
                            let top = at(ix, iy) * (1 - fx) + at(ix + 1, iy) * fx
                            let bottom = at(ix, iy + 1) * (1 - fx) + at(ix + 1, iy + 1) * fx
                            dst[o + c] = UInt8(max(0, min(255, (top * (1 - fy) + bottom * fy).rounded())))
                        }
                        dst[o + 3] = 255
                    }
                }
            }
        }
        return pixels
    }

    /// The detector's luma image of a still, as a run makes it: an engine run of the one-frame image whose
    /// side input draws the thumbnail from the uploaded frame (what `prism render --filter face-pixellate` does).
    static func detectionImage(_ image: RGBAImage, width: Int, on context: GPUContext) throws -> LumaImage {
        final class Thumbnail: SideInput {
            let thumbnailer: LumaThumbnailer
            var luma: LumaImage?
            init(width: Int) { thumbnailer = LumaThumbnailer(maxWidth: width) }
            var suppliesFaceRegions: Bool { true }
            func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
                luma = try thumbnailer.render(uploaded)
            }
        }
        let thumbnail = Thumbnail(width: width)
        _ = try FrameEngine.renderStill(FilterGraph(), image: image, gpu: context, sideInputs: [thumbnail])
        guard let luma = try context.perform({ thumbnail.luma }) else { throw FaceDetectorError("no detection image was drawn") }
        return luma
    }

    static func run(photoPath: String, faceWidths: [Double]) throws {
        let photo = try ImageFile.read(path: photoPath)
        let context = try GPUContext()
        // The photo's own face, found at full size (the truth every placement is scaled from).
        let full = try detectionImage(photo, width: photo.size.width, on: context)
        guard let face = try CascadeFaceDetector().detect(full).first?.box else { throw FaceDetectorError("\(photoPath): no face in the photo") }
        print("face-bench --recall: the photo's face is \(Int(face.width)) px wide at \(photo.size); on \(context.info.renderer)")
        // Detection images: the old fixed 320 px, and widths giving the minimum face 20, 24 and 30 px in it.
        struct Mode { var label: String; var model: String; var width: (Size) -> Int }
        var modes: [Mode] = [Mode(label: "320-px thumbnail (before)", model: "haar", width: { LumaImage.thumbnailSize(for: $0).width })]
        for model in ["haar", "lbp"] {
            for detectorFace in [20.0, 24.0, 30.0] {
                let scale = FaceDetectionScale(minFaceSize: 40, detectorFace: detectorFace)
                modes.append(Mode(label: "min 40 px → \(Int(detectorFace)) px", model: model, width: { scale.lumaWidth(for: $0) }))
            }
        }
        print("frame      detector  detection image               " + faceWidths.map { String(format: "%5.0f px", $0) }.joined(separator: " ")
              + "   false  ms/detection")
        // FACE_BENCH_FRAMES=720 and FACE_BENCH_MODES=2,5 (indices) narrow the table.
        let environment = ProcessInfo.processInfo.environment
        let heights = environment["FACE_BENCH_FRAMES"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? [720, 1080]
        let chosen = environment["FACE_BENCH_MODES"].map { $0.split(separator: ",").compactMap { Int($0) }.map { modes[$0] } } ?? modes
        for frame in heights.map({ Size(width: $0 * 16 / 9, height: $0) }) {
            for mode in chosen {
                let detector = try CascadeFaceDetector(model: mode.model)
                let width = mode.width(frame)
                var cells: [String] = [], falses = 0, seconds = 0.0, runs = 0
                for faceWidth in faceWidths {
                    let k = faceWidth / face.width
                    var found = 0, placements = 0
                    for gy in 0..<3 { for gx in 0..<4 {
                        // Face centres spread over the frame, kept inside it; a third of a pixel apart in phase.
                        let cx = Double(frame.width) * (0.15 + 0.7 * Double(gx) / 3) + Double(gx) / 3
                        let cy = Double(frame.height) * (0.2 + 0.6 * Double(gy) / 2) + Double(gy) / 3
                        let truth = SIMD2(cx, cy)
                        let origin = truth - face.center * k
                        let rgba = composite(photo, k: k, origin: origin, frame: frame)
                        let luma = try detectionImage(RGBAImage(size: frame, pixels: rgba), width: width, on: context)
                        if let dump = ProcessInfo.processInfo.environment["FACE_BENCH_DUMP"] {
                            let header = Array("P5 \(luma.size.width) \(luma.size.height) 255\n".utf8)
                            FileManager.default.createFile(atPath: "\(dump)/\(frame.width)-\(mode.model)-\(width)-\(Int(faceWidth))-\(gx)\(gy).pgm",
                                                           contents: Data(header + luma.pixels))
                        }
                        let start = DispatchTime.now().uptimeNanoseconds
                        let detections = try detector.detect(luma)
                        seconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                        runs += 1
                        placements += 1
                        var hit = false
                        for detection in detections {
                            let d = detection.box.center - truth
                            if !hit, (d * d).sum().squareRoot() <= 0.3 * faceWidth { hit = true } else { falses += 1 }
                        }
                        if hit { found += 1 }
                        if ProcessInfo.processInfo.environment["FACE_BENCH_VERBOSE"] != nil {
                            print("  \(mode.model) \(width) face \(faceWidth) at \(truth): \(detections.map { "\(Int($0.box.width))px score \(Int($0.score))" })")
                        }
                    } }
                    cells.append(String(format: "%6.0f%%", 100 * Double(found) / Double(placements)) + " ")
                }
                let image = LumaImage.thumbnailSize(for: frame, maxWidth: width)
                print("\(frame)".padding(toLength: 11, withPad: " ", startingAt: 0) + mode.model.padding(toLength: 10, withPad: " ", startingAt: 0)
                      + "\(image) (\(mode.label))".padding(toLength: 30, withPad: " ", startingAt: 0) + cells.joined()
                      + String(format: "%7d  %8.1f", falses, seconds * 1000 / Double(runs)))
            }
        }
    }
}
