import Foundation
import XCTest
import PrismCore
import PrismMedia
@testable import PrismVision
import TestFixtures

/// CenterFace, Prism's default detector: its decoding against the publishers' formulas written out here, and
/// the whole detector (OpenCV DNN + decoding) against the model run by onnxruntime with the reference script.
final class CenterFaceTests: XCTestCase {
    /// Maps for a 64x48 picture (16x12 cells): two faces, one overlapping a weaker duplicate, one at the edge.
    func testDecodingFollowsThePublishedFormulas() throws {
        let cells = Size(width: 16, height: 12), n = cells.pixelCount
        var heat = [Float](repeating: 0.1, count: n), scale = [Float](repeating: 0, count: 2 * n)
        var offset = [Float](repeating: 0, count: 2 * n), landmarks = [Float](repeating: 0.5, count: 10 * n)
        func set(row: Int, column: Int, score: Float, height: Float, width: Float, dy: Float, dx: Float) {
            let i = row * cells.width + column
            heat[i] = score
            scale[i] = log(height / 4)
            scale[n + i] = log(width / 4)
            offset[i] = dy
            offset[n + i] = dx
        }
        set(row: 5, column: 6, score: 0.9, height: 20, width: 16, dy: 0.25, dx: -0.5)   // centre (24, 23)
        set(row: 5, column: 7, score: 0.6, height: 20, width: 16, dy: 0.25, dx: -0.5)   // centre (28, 23): overlaps it
        set(row: 0, column: 15, score: 0.7, height: 12, width: 12, dy: 0, dx: 0)        // centre (62, 2): clipped
        set(row: 9, column: 2, score: 0.3, height: 12, width: 12, dy: 0, dx: 0)         // under the threshold
        // Landmark 0 of the first face: (y, x) = (0.2, 0.8) of the box from its top left.
        landmarks[0 * n + 5 * cells.width + 6] = 0.2
        landmarks[1 * n + 5 * cells.width + 6] = 0.8
        func tensor(_ values: [Float], _ channels: Int) -> DNNNetwork.Tensor {
            DNNNetwork.Tensor(values: values, shape: [1, channels, cells.height, cells.width])
        }
        let faces = try CenterFaceDecoder.decode(heatmap: tensor(heat, 1), scale: tensor(scale, 2), offset: tensor(offset, 2),
                                                 landmarks: tensor(landmarks, 10), inputSize: Size(width: 64, height: 48), threshold: 0.5)
        XCTAssertEqual(faces.count, 2, "\(faces)")
        guard faces.count == 2 else { return }
        XCTAssertEqual(faces[0].score, 0.9, accuracy: 1e-6)
        XCTAssertEqual(faces[0].box.x, 24 - 8, accuracy: 1e-4)
        XCTAssertEqual(faces[0].box.y, 23 - 10, accuracy: 1e-4)
        XCTAssertEqual(faces[0].box.width, 16, accuracy: 1e-4)
        XCTAssertEqual(faces[0].box.height, 20, accuracy: 1e-4)
        XCTAssertEqual(faces[0].landmarks.count, 5)
        XCTAssertEqual(faces[0].landmarks[0].x, 16 + 0.8 * 16, accuracy: 1e-4)
        XCTAssertEqual(faces[0].landmarks[0].y, 13 + 0.2 * 20, accuracy: 1e-4)
        // The edge face: its box clipped to the picture (left 56, top 0, right 64).
        XCTAssertEqual(faces[1].box.x, 56, accuracy: 1e-4)
        XCTAssertEqual(faces[1].box.y, 0, accuracy: 1e-4)
        XCTAssertEqual(faces[1].box.width, 8, accuracy: 1e-4)
        XCTAssertEqual(faces[1].box.height, 12, accuracy: 1e-4)
        // Maps of the wrong shape: one error.
        XCTAssertThrowsError(try CenterFaceDecoder.decode(heatmap: tensor(heat, 1), scale: tensor(scale, 2), offset: tensor(offset, 2),
                                                          landmarks: tensor(Array(landmarks.prefix(2 * n)), 2),
                                                          inputSize: Size(width: 64, height: 48), threshold: 0.5))
    }

    /// The installed model on OpenCV's messi5.jpg (a face about 31 px wide) and on frames of Megamind.avi at
    /// full resolution: Prism's detector (OpenCV DNN, its own decoding) finds what the model run by onnxruntime
    /// and decoded by scripts/face-reference finds, boxes within 2 px, scores within 0.02.
    func testTheDetectorAgreesWithTheModelRunByOnnxruntime() throws {
        let model = try TestFixtures.model("centerface.onnx")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("prism-centerface-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // Four frames of Megamind (one face, two, a close-up) as PNG stills, and messi5.jpg.
        let megamind = try TestFixtures.opencv("Megamind.avi")
        var stills = [try TestFixtures.opencv("messi5.jpg")]
        for frame in [5, 60, 155, 200] {
            let still = scratch.appendingPathComponent("megamind-\(frame).png").path
            try run("/usr/bin/ffmpeg", ["-v", "error", "-i", megamind, "-vf", "select=eq(n\\,\(frame))", "-fps_mode", "passthrough",
                                        "-frames:v", "1", still])
            stills.append(still)
        }
        let detector = try CenterFaceDetector(path: model)
        detector.threshold = 0.5
        var compared = 0
        for still in stills {
            let reference = scratch.appendingPathComponent("reference.jsonl").path
            try run(try TestFixtures.referencePython(), [TestFixtures.checkout.appendingPathComponent("scripts/face-reference").path,
                                                         model, still, reference])
            let line = try XCTUnwrap(try String(contentsOfFile: reference, encoding: .utf8).split(separator: "\n").first)
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let expected = try XCTUnwrap(object["faces"] as? [[Double]])
            // The picture as the publishers make it: the frame stretched to multiples of 32 (bilinear, OpenCV's centres).
            let image = try ImageFile.read(path: still)
            let size = Size(width: (image.size.width + 31) / 32 * 32, height: (image.size.height + 31) / 32 * 32)
            let found = try detector.detect(DetectionImage(size: size, channels: .rgba, pixels: Self.resized(image, to: size),
                                                           frameSize: image.size))
            XCTAssertEqual(found.count, expected.count, "\(still): \(found.map(\.box)) against \(expected)")
            for (face, truth) in zip(found.sorted { $0.score > $1.score }, expected.sorted { $0[4] > $1[4] }) {
                XCTAssertEqual(face.box.x, truth[0], accuracy: 2, still)
                XCTAssertEqual(face.box.y, truth[1], accuracy: 2, still)
                XCTAssertEqual(face.box.width, truth[2], accuracy: 2, still)
                XCTAssertEqual(face.box.height, truth[3], accuracy: 2, still)
                XCTAssertEqual(face.score, truth[4], accuracy: 0.02, still)
                compared += 1
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 5, "faces compared")
    }

    /// --face-model given something that is not a face model: one line naming the file and what it is not.
    func testFilesThatAreNotCenterFaceAreOneLine() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("prism-notface-\(UUID().uuidString).onnx").path
        try Data("not a model\n".utf8).write(to: URL(fileURLWithPath: scratch))
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let segmenter = try TestFixtures.model("u2netp.onnx")
        for (path, reason) in [("/nonexistent/face.onnx", "no such file"), (scratch, "not an ONNX model"),
                               (segmenter, "not a CenterFace face detection model"), ("/tmp", "is a directory")] {
            XCTAssertThrowsError(try CenterFaceDetector(path: path), path) { error in
                let text = "\(error)"
                XCTAssertTrue(error is FaceDetectorError, text)
                XCTAssertTrue(text.hasPrefix("face model \(path): \(reason)"), text)
                XCTAssertFalse(text.contains("\n"), text)
            }
        }
    }

    /// Bilinear resize with OpenCV's pixel centres (source = (destination + ½)·scale − ½), as the reference does.
    static func resized(_ image: RGBAImage, to size: Size) -> [UInt8] {
        let w = image.size.width, h = image.size.height
        func axis(_ out: Int, _ count: Int) -> [(Int, Int, Double)] {
            (0..<out).map { i in
                let p = min(max((Double(i) + 0.5) * Double(count) / Double(out) - 0.5, 0), Double(count - 1))
                let low = Int(p)
                return (low, min(low + 1, count - 1), p - Double(low))
            }
        }
        let xs = axis(size.width, w), ys = axis(size.height, h)
        var out = [UInt8](repeating: 255, count: size.pixelCount * 4)
        for (y, (y0, y1, fy)) in ys.enumerated() {
            for (x, (x0, x1, fx)) in xs.enumerated() {
                for c in 0..<3 {
                    func at(_ px: Int, _ py: Int) -> Double { Double(image.pixels[(py * w + px) * 4 + c]) }
                    let top = at(x0, y0) * (1 - fx) + at(x1, y0) * fx, bottom = at(x0, y1) * (1 - fx) + at(x1, y1) * fx
                    out[(y * size.width + x) * 4 + c] = UInt8(min(max((top * (1 - fy) + bottom * fy).rounded(), 0), 255))
                }
            }
        }
        return out
    }

    @discardableResult
    private func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw FaceDetectorError("\(executable) failed: \(message)") }
        return message
    }
}
