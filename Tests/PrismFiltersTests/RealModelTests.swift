import Foundation
import PrismCore
import PrismGPU
@testable import PrismFilters
import PrismMedia
import TestFixtures
import XCTest

/// The models `scripts/install-models` installs, on real photographs, every output read back as floats and
/// compared with onnxruntime on the same input tensor; and networks of 191 and 300 passes. Tests that need
/// the installed models or onnxruntime fail naming the command that installs them.
final class RealModelTests: XCTestCase {
    /// The middle `size` of a photograph, as RGBA bytes and as the [H, W, 3] tensor `(rgb · scale − mean) / std`.
    static func picture(_ name: String, _ size: Size, scale: Float = 1, mean: SIMD3<Float> = .zero, std: SIMD3<Float> = .one)
        throws -> (rgba: [UInt8], tensor: [Float]) {
        let rgba = try NetworkReferenceTests.photo(size, name: name)
        var tensor = [Float](repeating: 0, count: size.pixelCount * 3)
        for i in 0..<size.pixelCount {
            for c in 0..<3 { tensor[i * 3 + c] = (Float(rgba[i * 4 + c]) / 255 * scale - mean[c]) / std[c] }
        }
        return (rgba, tensor)
    }

    /// Every output Prism computes for `path` on the picture, with onnxruntime's for the same tensor.
    static func compare(_ path: String, parameters: [String: ParameterValue], picture: (rgba: [UInt8], tensor: [Float]), size: Size)
        throws -> [(name: String, ours: [Float], theirs: [Float])] {
        let outputs = try LayoutModelTests.render(path, parameters: parameters, rgba: picture.rgba, size: size)
        let expected = try LayoutModelTests.reference(path, rgb: picture.tensor, size: size,
                                                      channelAxes: Dictionary(uniqueKeysWithValues: outputs.map { ($0.name, $0.channelAxis) }),
                                                      extra: nil)
        return try outputs.map { output in
            let reference = try XCTUnwrap(expected[output.name], "onnxruntime gave no '\(output.name)'")
            XCTAssertEqual(reference.count, output.values.count, output.name)
            return (output.name, output.values, reference)
        }
    }

    /// The PSNR of `ours` against `theirs` once both are mapped to 8 bits by the one affine map that takes the
    /// reference's minimum and maximum to 0 and 255 (so the output's whole range counts, as `scripts/real-models-check`
    /// measures it); infinity when they quantise the same.
    static func psnr8(_ ours: [Float], _ theirs: [Float]) -> Double {
        let low = theirs.min() ?? 0, high = theirs.max() ?? 1
        let scale = 255 / Double(max(high - low, 1e-12))
        func quantised(_ v: Float) -> Double { min(255, max(0, ((Double(v) - Double(low)) * scale).rounded())) }
        var sum = 0.0
        for (a, b) in zip(ours, theirs) { let d = quantised(a) - quantised(b); sum += d * d }
        let mse = sum / Double(max(theirs.count, 1))
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// The bound every real model's outputs meet against onnxruntime, float and half: 35 dB on 8-bit output.
    static let minimumPSNR = 35.0

    /// u2netp, the default segmenter, on a photograph of a person at its own 320×320, ImageNet-normalised as rembg
    /// feeds it: all seven outputs against onnxruntime's at ≥ 35 dB (8-bit), float and half, the main one closer still.
    func testU2NetPAgreesWithOnnxruntime() throws {
        let model = try TestFixtures.model("u2netp.onnx")
        let size = Size(width: 320, height: 320)
        let mean = SIMD3<Float>(0.485, 0.456, 0.406), std = SIMD3<Float>(0.229, 0.224, 0.225)
        let picture = try Self.picture("astronaut.png", size, mean: mean, std: std)
        for precision in ["float", "half"] {
            let outputs = try Self.compare(model, parameters: ["mean": .text("0.485,0.456,0.406"), "std": .text("0.229,0.224,0.225"),
                                                               "precision": .choice(precision)], picture: picture, size: size)
            XCTAssertEqual(outputs.count, 7, "the main mask and six side outputs")
            for output in outputs {
                let psnr = Self.psnr8(output.ours, output.theirs)
                let worst = zip(output.ours, output.theirs).map { abs($0 - $1) }.max() ?? .infinity
                print("u2netp \(precision) \(output.name): \(String(format: "%.1f", psnr)) dB, max error \(worst)")
                XCTAssertGreaterThanOrEqual(psnr, Self.minimumPSNR, "\(precision) \(output.name)")
            }
            // The main mask (0...1) within 1e-3 in float and 2e-2 in half (about 0.012 measured: 3 of 255 levels).
            let main = outputs[0]
            XCTAssertLessThanOrEqual(zip(main.ours, main.theirs).map { abs($0 - $1) }.max() ?? .infinity,
                                     precision == "float" ? 1e-3 : 2e-2, precision)
        }
    }

    /// CenterFace (its file declares a batch of 10 at 32×32, placeholders) at the frame's size, its four heads
    /// against onnxruntime's: 2e-3 of the head's peak in float, 2e-2 in half.
    func testCenterFaceAtFrameSizeAgreesWithOnnxruntime() throws {
        let model = try TestFixtures.model("centerface.onnx")
        let size = Size(width: 320, height: 256)   // messi5.jpg's middle: a face, a crowd, grass
        let picture = try Self.picture("opencv/messi5.jpg", size, scale: 255)
        for (precision, tolerance) in [("float", Float(2e-3)), ("half", Float(2e-2))] {
            let heads = try Self.compare(model, parameters: ["size": .text("frame"), "scale": .text("255"), "precision": .choice(precision)],
                                         picture: picture, size: size)
            XCTAssertEqual(heads.count, 4, "heatmap, scale, offset, landmarks")
            for head in heads {
                let peak = head.theirs.map(abs).max() ?? 0
                let worst = zip(head.ours, head.theirs).map { abs($0 - $1) }.max() ?? .infinity
                let psnr = Self.psnr8(head.ours, head.theirs)
                print("centerface \(precision) \(head.name): \(String(format: "%.1f", psnr)) dB, max error \(worst) (peak \(peak), \(head.ours.count) values)")
                XCTAssertLessThanOrEqual(worst, tolerance * max(1, peak), "\(precision) \(head.name)")
                XCTAssertGreaterThanOrEqual(psnr, Self.minimumPSNR, "\(precision) \(head.name)")
            }
            // The heatmap is the detector's answer: its strongest response is at the same place.
            let heat = heads[0]
            XCTAssertEqual(heat.ours.indices.max { heat.ours[$0] < heat.ours[$1] }, heat.theirs.indices.max { heat.theirs[$0] < heat.theirs[$1] })
        }
    }

    /// The PP-OCRv4 text detector against onnxruntime: ≥ 35 dB (8-bit) in float and half; in float within 1e-2
    /// everywhere (one photograph); in half, on two, its probability map within 0.2 everywhere, within 0.02 at all
    /// but 0.1 % of the pixels, and thresholded at 0.3 (as its post-processing does) different at ≤ 0.1 % of them
    /// (docs/models.md states these bounds).
    func testTextDetectorWithinTheStatedBounds() throws {
        let model = try TestFixtures.model("ppocr-v4-det.onnx")
        let mean = SIMD3<Float>(0.485, 0.456, 0.406), std = SIMD3<Float>(0.229, 0.224, 0.225)
        for (photo, precisions) in [("astronaut.png", ["float", "half"]), ("opencv/messi5.jpg", ["half"])] {
            let crop = photo.hasPrefix("opencv") ? Size(width: 512, height: 320) : Size(width: 512, height: 480)
            let picture = try Self.picture(photo, crop, mean: mean, std: std)
            for precision in precisions {
                let maps = try Self.compare(model, parameters: ["mean": .text("0.485,0.456,0.406"), "std": .text("0.229,0.224,0.225"),
                                                                "precision": .choice(precision)], picture: picture, size: crop)
                let map = try XCTUnwrap(maps.first)
                let errors = zip(map.ours, map.theirs).map { abs($0 - $1) }
                let worst = errors.max() ?? .infinity
                let count = Double(max(errors.count, 1))
                let beyond = Double(errors.filter { $0 > 0.02 }.count) / count
                let flipped = Double(zip(map.ours, map.theirs).filter { ($0 > 0.3) != ($1 > 0.3) }.count) / count
                let psnr = Self.psnr8(map.ours, map.theirs)
                print("ppocr \(precision) on \(photo): \(String(format: "%.1f", psnr)) dB, max error \(worst), "
                      + "\(String(format: "%.3f", beyond * 100)) % of pixels beyond 0.02, \(String(format: "%.3f", flipped * 100)) % flipped at 0.3")
                XCTAssertGreaterThanOrEqual(psnr, Self.minimumPSNR, "\(precision) \(photo)")
                if precision == "float" {
                    XCTAssertLessThanOrEqual(worst, 1e-2, photo)
                } else {
                    XCTAssertLessThanOrEqual(worst, 0.2, photo)
                    XCTAssertLessThanOrEqual(beyond, 0.001, photo)
                    XCTAssertLessThanOrEqual(flipped, 0.001, photo)
                }
            }
        }
    }

    /// Networks of 191 passes (which once failed with a GL error on llvmpipe) render and agree with onnxruntime;
    /// one of 300 is refused before any work with the limit's message, and renders with the limit raised.
    func testLongNetworksRenderOrAreRefusedBeforeAnyWork() throws {
        let directory = NSTemporaryDirectory() + "prism-chains-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let size = Size(width: 48, height: 32)
        let picture = try Self.picture("chelsea.png", size)
        func check(_ passes: Int) throws {
            let path = directory + "/chain-\(passes).onnx"
            try NetworkReferenceTests.run(try TestFixtures.referencePython(), [LayoutModelTests.script, "--chain", "\(passes)", path])
            for precision in ["float", "half"] {
                let outputs = try Self.compare(path, parameters: ["precision": .choice(precision)], picture: picture, size: size)
                let worst = zip(outputs[0].ours, outputs[0].theirs).map { abs($0 - $1) }.max() ?? .infinity
                print("chain of \(passes) passes, \(precision): max error \(worst)")
                XCTAssertLessThanOrEqual(worst, precision == "float" ? 2e-3 : 2e-2, "\(passes) passes, \(precision)")
            }
        }
        try check(191)
        // 300 passes: past the default limit (256), refused when the graph is planned: nothing drawn, no target made.
        let path = directory + "/chain-300.onnx"
        try NetworkReferenceTests.run(try TestFixtures.referencePython(), [LayoutModelTests.script, "--chain", "300", path])
        let values = try ParameterValues(specs: NetworkFilter.modelParameters, given: [:])
        let graph = FilterGraph()
        try graph.append("model", kernel: try NetworkKernel(path: path, parameters: values), parameters: values)
        let created = try SharedGPU.get().perform { TexturePool.current.createdCount }
        XCTAssertThrowsError(try SharedGPU.get().perform {
            _ = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
        }) { error in
            XCTAssertTrue("\(error)".contains("more than 256 passes"), "\(error)")
            XCTAssertFalse("\(error)".contains("\n"))
        }
        XCTAssertEqual(try SharedGPU.get().perform { TexturePool.current.createdCount }, created, "no target was made")
        setenv(GraphLimits.passesVariable, "320", 1)
        defer { unsetenv(GraphLimits.passesVariable) }
        try check(300)
    }
}
