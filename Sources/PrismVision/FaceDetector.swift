import CFaceDetect
import Foundation
import PrismCore

/// A face's bounding box in the pixels of the frame (origin top left).
public struct FaceBox: Hashable, Sendable {
    /// Left and top edges, width and height, in frame pixels (y down).
    public var x, y, width, height: Double

    /// A box at (`x`, `y`) of `width` × `height` frame pixels.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The box's centre in frame pixels.
    public var center: SIMD2<Double> { SIMD2(x + width / 2, y + height / 2) }

    /// Intersection over union, 0...1.
    public func iou(_ other: FaceBox) -> Double {
        let w = min(x + width, other.x + other.width) - max(x, other.x)
        let h = min(y + height, other.y + other.height) - max(y, other.y)
        guard w > 0, h > 0 else { return 0 }
        let intersection = w * h
        return intersection / (width * height + other.width * other.height - intersection)
    }

    /// The box in another frame size (a sidecar written at one size, used at another).
    public func scaled(from: Size, to: Size) -> FaceBox {
        let sx = Double(to.width) / Double(from.width), sy = Double(to.height) / Double(from.height)
        return FaceBox(x: x * sx, y: y * sy, width: width * sx, height: height * sy)
    }
}

/// One face a detector found in one image.
public struct FaceDetection: Hashable, Sendable {
    /// Where the face is, in the pixels of the frame the thumbnail was reduced from.
    public var box: FaceBox
    /// The detector's confidence (for cascades: how many raw detections were merged into this one).
    public var score: Double

    /// A face at `box` found with confidence `score`.
    public init(box: FaceBox, score: Double) {
        self.box = box
        self.score = score
    }
}

/// Finds faces in a luma thumbnail; boxes come back in the pixels of the frame it was reduced from.
/// Used from one thread at a time (the provider's detector thread).
public protocol FaceDetecting: AnyObject {
    /// The faces in `image`, boxes in the pixels of `image.frameSize`; throws on a failed detection.
    func detect(_ image: LumaImage) throws -> [FaceDetection]
}

/// Problems with the detector: its model file, or a failed detection.
public struct FaceDetectorError: PrismError {
    /// The whole one-line description (model path and reason, or the detector's message).
    public let message: String
    /// An error with `message` as its description.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// OpenCV's cascade classifier (Haar or LBP, from an XML file; Debian's opencv-data has both) behind
/// CFaceDetect's C API. Owns the native detector and frees it.
public final class CascadeFaceDetector: FaceDetecting {
    /// The cascades Debian's opencv-data installs, by the short names `--face-model` accepts. Haar is
    /// the "alt" frontal cascade: `_default` also fired on a shoulder in the astronaut photograph; the
    /// plain LBP cascade finds faces down to 24 px, where `_improved` needs about twice that.
    public static let bundledModels: [String: String] = [
        "haar": "/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt.xml",
        "lbp": "/usr/share/opencv4/lbpcascades/lbpcascade_frontalface.xml",
    ]
    /// The model used when none is named: the Haar frontal cascade.
    public static let defaultModel = "haar"

    /// The cascade file loaded (a short name resolved to its path).
    public let path: String
    /// Each step of the image pyramid shrinks it by this factor (smaller: slower, finds more sizes). 1.15
    /// costs about a quarter less than OpenCV's 1.1 and still finds 30-px faces that 1.2 missed.
    public var scaleFactor = 1.15
    /// Raw detections that must agree before a face is reported (higher: fewer false faces). Haar: 4; on the
    /// un-equalised, larger detection image 3 let a suit fold through as a face now and then, and 4 still found
    /// 92–100% of 49-px faces (face-bench --recall). LBP and other cascades: 3, OpenCV's default (LBP at 4
    /// lost most small faces).
    public var minNeighbours: Int32 = 3
    /// Smallest face, in thumbnail pixels (0: the cascade's own window, 24 px).
    public var minSize: Int32 = 0
    private let native: OpaquePointer

    /// Loads the cascade at `model`: a path, or `haar` / `lbp` for Debian's frontal face cascades.
    public init(model: String = CascadeFaceDetector.defaultModel) throws {
        let path = Self.bundledModels[model.lowercased()] ?? model
        self.path = path
        var message = [CChar](repeating: 0, count: 512)
        guard let detector = prism_face_detector_open(path, &message, message.count) else {
            let reason = String(cMessage: message)
            let hint = Self.bundledModels[model.lowercased()] != nil ? " (install Debian's opencv-data)" : ""
            throw FaceDetectorError("face model \(path): \(reason)\(hint)")
        }
        native = detector
        if path == Self.bundledModels["haar"] { minNeighbours = 4 }
    }

    deinit { prism_face_detector_close(native) }

    /// The faces in `image`, boxes in frame pixels; throws `FaceDetectorError` when OpenCV fails. One thread at a time.
    public func detect(_ image: LumaImage) throws -> [FaceDetection] {
        try Self.run(native, image, scaleFactor: scaleFactor, minNeighbours: minNeighbours, minSize: minSize)
    }

    /// One detection through the C API, boxes scaled back to the frame's pixels.
    static func run(_ native: OpaquePointer, _ image: LumaImage, scaleFactor: Double, minNeighbours: Int32, minSize: Int32) throws -> [FaceDetection] {
        let capacity = 64
        var boxes = [prism_face_box](repeating: prism_face_box(), count: capacity)
        var message = [CChar](repeating: 0, count: 512)
        let count = image.pixels.withUnsafeBufferPointer { pixels in
            prism_face_detector_detect(native, pixels.baseAddress, Int32(image.size.width), Int32(image.size.height),
                                       Int32(image.size.width), scaleFactor, minNeighbours, minSize,
                                       &boxes, Int32(capacity), &message, message.count)
        }
        guard count >= 0 else {
            throw FaceDetectorError(String(cMessage: message))
        }
        let sx = Double(image.frameSize.width) / Double(image.size.width)
        let sy = Double(image.frameSize.height) / Double(image.size.height)
        return boxes.prefix(Int(min(count, Int32(capacity)))).map { box in
            FaceDetection(box: FaceBox(x: Double(box.x) * sx, y: Double(box.y) * sy,
                                       width: Double(box.width) * sx, height: Double(box.height) * sy),
                          score: Double(box.neighbours))
        }
    }
}

/// OpenCV's FaceDetectorYN (YuNet, a small CNN; `--face-model FILE.onnx`, the user's file: none ships with
/// Debian) behind the same C API. The file is checked when opened: not an ONNX model, or a model of another
/// kind, is one error before any frame.
public final class YuNetFaceDetector: FaceDetecting {
    /// The ONNX model file loaded.
    public let path: String
    private let native: OpaquePointer

    /// Loads the YuNet model at `path`; throws `FaceDetectorError` when it is missing or not a YuNet ONNX model.
    public init(path: String) throws {
        self.path = path
        // OpenCV opens the path itself: a FIFO or a device would block it or be read without end.
        do { try RegularFile.check(path, what: "an ONNX model") } catch { throw FaceDetectorError("face model \(error)") }
        var message = [CChar](repeating: 0, count: 512)
        guard let detector = prism_face_detector_open_yunet(path, &message, message.count) else {
            throw FaceDetectorError("face model \(path): " + String(cMessage: message))
        }
        native = detector
    }

    deinit { prism_face_detector_close(native) }

    /// Whether `--face-model` names a YuNet model (by its extension) rather than a cascade.
    public static func isModel(_ model: String) -> Bool { model.lowercased().hasSuffix(".onnx") }

    /// The faces in `image`, boxes in frame pixels; throws `FaceDetectorError` when OpenCV fails. One thread at a time.
    public func detect(_ image: LumaImage) throws -> [FaceDetection] {
        try CascadeFaceDetector.run(native, image, scaleFactor: 1, minNeighbours: 0, minSize: 0)
    }
}

/// The resolution faces are detected at, chosen from the smallest face wanted: the luma image is made wide
/// enough that a face `minFaceSize` pixels wide in the frame is `detectorFace` pixels wide in it (never wider
/// than the frame itself: faces smaller than `detectorFace` frame pixels are not found at all).
package struct FaceDetectionScale: Sendable, Equatable {
    /// `--face-min-size`: the smallest face to find, in the frame's own pixels.
    package var minFaceSize: Double
    /// The smallest face the cascades find reliably, in pixels of the image they run on (their windows are
    /// 20 and 24 px; BENCHMARKS.md has the recall figures behind this value).
    package var detectorFace: Double
    package static let defaultMinFaceSize = 40.0
    package static let defaultDetectorFace = 24.0

    package init(minFaceSize: Double = FaceDetectionScale.defaultMinFaceSize, detectorFace: Double = FaceDetectionScale.defaultDetectorFace) {
        self.minFaceSize = minFaceSize
        self.detectorFace = detectorFace
    }

    /// The luma image's width for a frame (a multiple of 4, at least 160, at most the frame's width).
    package func lumaWidth(for frame: Size) -> Int {
        let wanted = (Double(frame.width) * detectorFace / max(minFaceSize, 1)).rounded(.up)
        return min(frame.width, max(160, Int(wanted) + 3)) / 4 * 4
    }
}
