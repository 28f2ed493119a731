import Foundation
import PrismCore
import PrismGPU
@testable import PrismFilters
import PrismMedia
import PrismPipeline
import PrismVision
import TestFixtures
import XCTest

/// `model(file=…)` against an independent implementation: every test model of `scripts/make-test-models` (one
/// per operator case, and whole networks) is run on a crop of a real photograph as GPU passes, the output
/// feature read back as floats, and compared with OpenCV DNN's CPU inference of the same file (or, where OpenCV
/// 4.6 cannot import the model, the script's numpy reference): max abs error ≤ 2e-3 with RGBA32F, ≤ 2e-2 with
/// RGBA16F.
final class NetworkReferenceTests: XCTestCase {
    struct Model: Decodable {
        let file: String
        let kind: String
        let input: [Int?]
        let scale: Int
        let out_channels: Int
        let multiple: Int
        let reference: String
        var name: String { (file as NSString).deletingPathExtension }
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The models, written once per test process into a temporary directory (the script is deterministic).
    nonisolated(unsafe) static var written: (directory: String, models: [Model])?

    static func models() throws -> (directory: String, models: [Model]) {
        if let written { return written }
        let directory = NSTemporaryDirectory() + "prism-models-\(getpid())"
        try run("/usr/bin/python3", [repository.appendingPathComponent("scripts/make-test-models").path, directory])
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/manifest.json"))
        let models = try JSONDecoder().decode([Model].self, from: data)
        written = (directory, models)
        return (directory, models)
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both pipes drained at once: a tool that fills stderr while we wait on stdout would block forever.
        nonisolated(unsafe) var errors = Data()
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errors = err.fileHandleForReading.readDataToEndOfFile()
            drained.signal()
        }
        let output = out.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "NetworkReferenceTests", code: Int(process.terminationStatus), userInfo: [
                NSLocalizedDescriptionKey: "\(tool) \(arguments.joined(separator: " ")): \(String(decoding: errors, as: UTF8.self))"])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// A `size` crop from the middle of a photograph (real texture, edges and flat areas), RGBA bytes.
    static func photo(_ size: Size, name: String = "chelsea.png") throws -> [UInt8] {
        let image = try ImageFile.read(path: try TestFixtures.path(name))
        precondition(image.size.width >= size.width && image.size.height >= size.height)
        let x0 = (image.size.width - size.width) / 2, y0 = (image.size.height - size.height) / 2
        var rgba = [UInt8](repeating: 0, count: size.pixelCount * 4)
        for y in 0..<size.height {
            let from = ((y0 + y) * image.size.width + x0) * 4
            rgba[(y * size.width * 4)..<((y + 1) * size.width * 4)] = image.pixels[from..<(from + size.width * 4)]
        }
        return rgba
    }

    /// The model's input tensor for the frame, as the input pass makes it with the default normalisation
    /// (RGB in 0–1; one channel: Rec. 601 luma).
    static func tensor(_ rgba: [UInt8], size: Size, channels: Int) -> [Float] {
        var x = [Float](repeating: 0, count: channels * size.pixelCount)
        for i in 0..<size.pixelCount {
            let r = Float(rgba[i * 4]) / 255, g = Float(rgba[i * 4 + 1]) / 255, b = Float(rgba[i * 4 + 2]) / 255
            if channels == 1 {
                x[i] = 0.299 * r + 0.587 * g + 0.114 * b
            } else {
                x[i] = r; x[size.pixelCount + i] = g; x[2 * size.pixelCount + i] = b
            }
        }
        return x
    }

    /// Prism's output feature for the frame, [C,H,W] floats unpacked from its atlas.
    static func gpuOutput(model path: String, precision: String, rgba: [UInt8], size: Size) throws -> DNNNetwork.Tensor {
        let graph = try GraphBinder().bind("model(file=\(path), precision=\(precision))")
        return try SharedGPU.get().perform {
            let uploader = FrameUploader(ringSize: 1)
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
            let uploaded = try rgba.withUnsafeBytes { bytes in
                try uploader.upload(CPUFramePlanes(format: .rgba, size: size,
                                                   colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full),
                                                   planes: [(bytes.baseAddress!, size.width * 4)]))
            }
            try renderer.render(uploaded, context: FrameContext())
            let kernel = try XCTUnwrap(graph.nodes[0].kernel as? NetworkKernel)
            let passes = try XCTUnwrap(kernel.currentPasses)
            let f = kernel.program.outputFeature
            let layout = passes.layouts[f], channels = kernel.program.features[f].channels
            let target = try XCTUnwrap(renderer.prepassTarget(node: 0, index: kernel.program.features[f].producer))
            XCTAssertEqual(target.size, layout.atlas)
            let texels = target.readRGBAFloats()
            let s = layout.size, atlasWidth = layout.atlas.width
            var values = [Float](repeating: 0, count: channels * s.pixelCount)
            for c in 0..<channels {
                let g = c / 4, lane = c % 4
                let tx = (g % layout.columns) * s.width, ty = (g / layout.columns) * s.height
                for y in 0..<s.height {
                    for x in 0..<s.width {
                        values[(c * s.height + y) * s.width + x] = texels[((ty + y) * atlasWidth + tx + x) * 4 + lane]
                    }
                }
            }
            return DNNNetwork.Tensor(values: values, shape: [1, channels, s.height, s.width])
        }
    }

    /// The reference output: OpenCV DNN, or the script's numpy reference for what OpenCV 4.6 cannot import.
    static func referenceOutput(_ model: Model, directory: String, input: [Float], channels: Int, size: Size) throws -> DNNNetwork.Tensor {
        let capacity = 64 * input.count * model.scale * model.scale
        if model.reference == "opencv" {
            return try DNNNetwork(path: directory + "/" + model.file).forward(input, channels: channels, size: size, capacity: capacity)
        }
        let inPath = directory + "/\(model.name).in.f32", outPath = directory + "/\(model.name).out.f32"
        try input.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: inPath)) }
        let shape = try run("/usr/bin/python3", [repository.appendingPathComponent("scripts/make-test-models").path, "--reference",
                                                 model.name, inPath, "\(channels)", "\(size.height)", "\(size.width)", outPath])
        let dims = shape.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "x").compactMap { Int($0) }
        let data = try Data(contentsOf: URL(fileURLWithPath: outPath))
        let values = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return DNNNetwork.Tensor(values: values, shape: dims)
    }

    /// The frame size a model is tested at: its fixed input, or a 64×48 crop (every model's multiple divides
    /// it; 32×24 on a slow rasteriser).
    static func frameSize(_ model: Model, slow: Bool) -> Size {
        if let h = model.input[2], let w = model.input[3] { return Size(width: w, height: h) }
        return slow ? Size(width: 32, height: 24) : Size(width: 64, height: 48)
    }

    struct Comparison {
        var worst: Float = 0
        var at = ""
        var peak: Float = 0
    }

    static func compare(_ actual: DNNNetwork.Tensor, _ expected: DNNNetwork.Tensor) -> Comparison? {
        guard actual.shape == expected.shape, actual.values.count == expected.values.count else { return nil }
        var result = Comparison()
        let s = actual.size
        for i in actual.values.indices {
            result.peak = max(result.peak, abs(expected.values[i]))
            let d = abs(actual.values[i] - expected.values[i])
            if !(d <= result.worst) {
                result.worst = d.isNaN ? .infinity : d
                let c = i / s.pixelCount, p = i % s.pixelCount
                result.at = "channel \(c) (\(p % s.width), \(p / s.width)): \(actual.values[i]) vs \(expected.values[i])"
            }
        }
        return result
    }

    /// A dynamic model whose skips need sides divisible by 8 (the U-Net) on a 61x45 frame: run padded to 64x48
    /// (the last column and row repeated), the output cropped back. Against OpenCV on the padded tensor.
    func testDynamicModelsPadFramesTheyCannotTake() throws {
        let (directory, models) = try Self.models()
        let model = try XCTUnwrap(models.first { $0.name == "net-unet-seg" })
        XCTAssertEqual(model.multiple, 8)
        let frame = Size(width: 61, height: 45), padded = Size(width: 64, height: 48)
        let rgba = try Self.photo(frame)
        var paddedRGBA = [UInt8](repeating: 0, count: padded.pixelCount * 4)
        for y in 0..<padded.height {
            for x in 0..<padded.width {
                let from = (min(y, frame.height - 1) * frame.width + min(x, frame.width - 1)) * 4
                for c in 0..<4 { paddedRGBA[(y * padded.width + x) * 4 + c] = rgba[from + c] }
            }
        }
        let expected = try Self.referenceOutput(model, directory: directory, input: Self.tensor(paddedRGBA, size: padded, channels: 3),
                                                channels: 3, size: padded)
        let actual = try Self.gpuOutput(model: directory + "/" + model.file, precision: "float", rgba: rgba, size: frame)
        XCTAssertEqual(actual.shape, [1, 1, 48, 64], "the network runs at the padded size")
        guard actual.shape == expected.shape else { return }
        var worst: Float = 0
        for y in 0..<frame.height { for x in 0..<frame.width {
            worst = max(worst, abs(actual.values[y * 64 + x] - expected.values[y * 64 + x]))
        } }
        XCTAssertLessThanOrEqual(worst, 2e-3)
        // And the tool's output is the frame's size.
        let image = try renderStill(try GraphBinder().bind("model(file=\(directory)/\(model.file))"), rgba: rgba, size: frame)
        XCTAssertEqual(image.size, frame)
    }

    /// Every model, both precisions, in one test (the models are written once): the failures name the model,
    /// the precision, the worst element and both values.
    func testEveryModelMatchesTheReference() throws {
        let (directory, models) = try Self.models()
        XCTAssertGreaterThanOrEqual(models.count, 70)
        // CI's second driver, softpipe, rasterises about 20 times slower than llvmpipe: there every operator case
        // and the dynamic-size networks run at 32x24, and the three fixed-size networks (128² and 256², 1.5 of
        // the 2 GMAC here) only on llvmpipe.
        let slow = try SharedGPU.get().info.renderer.lowercased().contains("softpipe")
        var report: [String] = []
        for model in models {
            if slow, model.kind == "network", model.input[2] != nil {
                report.append("\(model.name): not on softpipe (fixed-size network; llvmpipe runs it)")
                continue
            }
            let size = Self.frameSize(model, slow: slow)
            let channels = model.input[1] ?? 3
            let rgba = try Self.photo(size)
            let input = Self.tensor(rgba, size: size, channels: channels)
            let expected = try Self.referenceOutput(model, directory: directory, input: input, channels: channels, size: size)
            XCTAssertEqual(expected.shape, [1, model.out_channels, size.height * model.scale, size.width * model.scale], model.file)
            for (precision, tolerance) in [("float", Float(2e-3)), ("half", Float(2e-2))] {
                let actual = try Self.gpuOutput(model: directory + "/" + model.file, precision: precision, rgba: rgba, size: size)
                guard let c = Self.compare(actual, expected) else {
                    XCTFail("\(model.file) \(precision): shape \(actual.shape), reference \(expected.shape)")
                    continue
                }
                // RGBA32F: absolute. RGBA16F: absolute for outputs within ±1 (images), relative to the peak beyond:
                // a half float holds 11 bits, so a random net's ±10 outputs are only good to its step there, 0.008.
                let allowed = precision == "float" ? tolerance : tolerance * max(1, c.peak)
                report.append("\(model.name) \(precision): max error \(c.worst) (peak |y| \(c.peak), allowed \(allowed))")
                XCTAssertLessThanOrEqual(c.worst, allowed, "\(model.file) \(precision): max error \(c.worst) at \(c.at)")
            }
        }
        print(report.joined(separator: "\n"))
    }
}
