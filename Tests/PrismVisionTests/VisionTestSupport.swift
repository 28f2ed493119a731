import Foundation
import PrismCore
import PrismMedia
import PrismVision
import TestFixtures

enum VisionFixtures {
    static func image(_ name: String) throws -> RGBAImage { try ImageFile.read(path: TestFixtures.path(name)) }

    /// The picture tiled `columns`×`rows` times (several faces in one frame).
    static func tiled(_ image: RGBAImage, columns: Int, rows: Int) -> RGBAImage {
        let w = image.size.width, h = image.size.height
        var pixels = [UInt8](repeating: 0, count: w * columns * h * rows * 4)
        for y in 0..<(h * rows) { for x in 0..<(w * columns) {
            let from = ((y % h) * w + (x % w)) * 4, to = (y * w * columns + x) * 4
            pixels[to..<(to + 4)] = image.pixels[from..<(from + 4)]
        } }
        return RGBAImage(size: Size(width: w * columns, height: h * rows), pixels: pixels)
    }

    /// A CPU luma thumbnail (block means of BT.601 luma), standing in for the GPU's.
    static func luma(_ image: RGBAImage, maxWidth: Int = 320) -> LumaImage {
        let size = LumaImage.thumbnailSize(for: image.size, maxWidth: maxWidth)
        var pixels = [UInt8](repeating: 0, count: size.pixelCount)
        for ty in 0..<size.height { for tx in 0..<size.width {
            let x0 = tx * image.size.width / size.width, x1 = max(x0 + 1, (tx + 1) * image.size.width / size.width)
            let y0 = ty * image.size.height / size.height, y1 = max(y0 + 1, (ty + 1) * image.size.height / size.height)
            var sum = 0.0
            for y in y0..<y1 { for x in x0..<x1 {
                let i = (y * image.size.width + x) * 4
                sum += 0.299 * Double(image.pixels[i]) + 0.587 * Double(image.pixels[i + 1]) + 0.114 * Double(image.pixels[i + 2])
            } }
            pixels[ty * size.width + tx] = UInt8((sum / Double((x1 - x0) * (y1 - y0))).rounded())
        } }
        return LumaImage(size: size, pixels: pixels, frameSize: image.size)
    }
}

/// A detector that answers from a script, optionally waiting for the test to let it go. Reads grey pictures
/// (any size a multiple of 4).
final class ScriptedDetector: FaceDetecting {
    let answer: (DetectionImage) throws -> [FaceDetection]
    let gate: DispatchSemaphore?
    init(gate: DispatchSemaphore? = nil, answer: @escaping (DetectionImage) throws -> [FaceDetection]) {
        self.gate = gate
        self.answer = answer
    }
    var input: DetectorInput { DetectorInput(name: "scripted", channels: .luma, smallestFace: 24, sizeMultiple: 4) }
    func detect(_ image: DetectionImage) throws -> [FaceDetection] {
        gate?.wait()
        return try answer(image)
    }
}

/// A tiny grey picture whose first pixel carries a frame number, so a scripted detector knows which frame it
/// sees; `request` (a closer look) gives its area and track.
func markedImage(_ frame: Int, _ request: DetectionRequest? = nil) -> DetectionImage {
    var pixels = [UInt8](repeating: 0, count: 16)
    pixels[0] = UInt8(frame % 256)
    return DetectionImage(size: Size(width: 4, height: 4), channels: .luma, pixels: pixels, frameSize: Size(width: 640, height: 360),
                          area: request?.area, track: request?.track)
}
