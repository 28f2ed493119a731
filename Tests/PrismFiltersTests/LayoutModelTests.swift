import Foundation
import PrismCore
import PrismGPU
@testable import PrismFilters
import PrismMedia
import TestFixtures
import XCTest

/// Models as exporters write them (`scripts/make-layout-models`: NHWC, channel shuffles, Gemm heads, Softmax
/// through a Transpose, Split, folded Shape arithmetic, group normalisation, placeholder batch and size,
/// several outputs, an extra scalar input) against onnxruntime on a crop of a photograph, every output read
/// back as floats; and crafted models (NaN scales, a 20,001-node chain, hostile scalar attributes) that must
/// be refused in one line or run, never crash the process.
final class LayoutModelTests: XCTestCase {
    struct Entry: Decodable {
        let file: String
        let what: String
        let inputs: String?
    }
    struct Described: Decodable {
        let name: String
        let shape: [Int]
    }

    static let script = NetworkReferenceTests.repository.appendingPathComponent("scripts/make-layout-models").path
    nonisolated(unsafe) static var written: String?

    static func directory() throws -> String {
        if let written { return written }
        let directory = NSTemporaryDirectory() + "prism-layout-models-\(getpid())"
        try NetworkReferenceTests.run(try TestFixtures.referencePython(), [script, directory])
        written = directory
        return directory
    }

    /// Renders `path` with every output computed; returns them as the kernel reads them back.
    static func render(_ path: String, parameters given: [String: ParameterValue], rgba: [UInt8], size: Size) throws -> [NetworkKernel.OutputTensor] {
        let values = try ParameterValues(specs: NetworkFilter.modelParameters, given: given)
        let kernel = try NetworkKernel(path: path, parameters: values, outputs: .all)
        let graph = FilterGraph()
        try graph.append("model", kernel: kernel, parameters: values)
        return try SharedGPU.get().perform {
            let uploader = FrameUploader(ringSize: 1)
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
            let uploaded = try rgba.withUnsafeBytes { bytes in
                try uploader.upload(CPUFramePlanes(format: .rgba, size: size, colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full),
                                                   planes: [(bytes.baseAddress!, size.width * 4)]))
            }
            try renderer.render(uploaded, context: FrameContext())
            return try kernel.readOutputs(from: renderer, node: 0)
        }
    }

    /// onnxruntime's outputs for the picture, each as [C, H, W] (its channel axis moved first, unit axes dropped).
    static func reference(_ path: String, rgba: [UInt8], size: Size, channelAxes: [String: Int?], extra: String?) throws -> [String: [Float]] {
        let work = NSTemporaryDirectory() + "prism-layout-ref-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        var rgb = [Float](repeating: 0, count: size.pixelCount * 3)
        for i in 0..<size.pixelCount { for c in 0..<3 { rgb[i * 3 + c] = Float(rgba[i * 4 + c]) / 255 } }
        try rgb.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: work + "/in.f32")) }
        setenv("PRISM_EXTRA_INPUTS", extra ?? "", 1)
        try NetworkReferenceTests.run(try TestFixtures.referencePython(), [script, "--reference", path, work + "/in.f32",
                                                                         "\(size.height)", "\(size.width)", work])
        let described = try JSONDecoder().decode([Described].self, from: Data(contentsOf: URL(fileURLWithPath: work + "/outputs.json")))
        var result: [String: [Float]] = [:]
        for (k, d) in described.enumerated() {
            let values = try Data(contentsOf: URL(fileURLWithPath: work + "/\(k).f32")).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            // Move the channel axis first: out[c][rest] = in[... c ...].
            guard let axis = channelAxes[d.name] ?? nil, axis < d.shape.count else { result[d.name] = values; continue }
            let channels = d.shape[axis], inner = d.shape.suffix(from: axis + 1).reduce(1, *)
            let rest = values.count / max(channels, 1)
            var moved = [Float](repeating: 0, count: values.count)
            for i in values.indices {
                let c = (i / inner) % channels, outer = i / (inner * channels), r = outer * inner + i % inner
                moved[c * rest + r] = values[i]
            }
            result[d.name] = moved
        }
        return result
    }

    func testExportedLayoutsMatchOnnxruntime() throws {
        let directory = try Self.directory()
        let entries = try JSONDecoder().decode([Entry].self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/manifest.json")))
        XCTAssertGreaterThanOrEqual(entries.count, 9)
        var report: [String] = []
        for entry in entries {
            let path = directory + "/" + entry.file
            let size = entry.file == "batch-heads.onnx" ? Size(width: 64, height: 48) : Size(width: 32, height: 24)
            let rgba = try NetworkReferenceTests.photo(size)
            var given: [String: ParameterValue] = [:]
            if entry.file == "batch-heads.onnx" { given["size"] = .text("frame") }
            if let inputs = entry.inputs { given["inputs"] = .text(inputs) }
            for (precision, tolerance) in [("float", Float(2e-3)), ("half", Float(2e-2))] {
                given["precision"] = .choice(precision)
                let outputs = try Self.render(path, parameters: given, rgba: rgba, size: size)
                let expected = try Self.reference(path, rgba: rgba, size: size,
                                                  channelAxes: Dictionary(uniqueKeysWithValues: outputs.map { ($0.name, $0.channelAxis) }),
                                                  extra: entry.inputs)
                XCTAssertEqual(Set(outputs.map(\.name)), Set(expected.keys), entry.file)
                for output in outputs {
                    guard let reference = expected[output.name], reference.count == output.values.count else {
                        XCTFail("\(entry.file) \(output.name): \(output.values.count) values, reference \(expected[output.name]?.count ?? 0)")
                        continue
                    }
                    let peak = reference.map(abs).max() ?? 0
                    let worst = zip(output.values, reference).map { abs($0 - $1) }.max() ?? 0
                    report.append("\(entry.file) \(output.name) \(precision): max error \(worst) (peak \(peak))")
                    XCTAssertLessThanOrEqual(worst, tolerance * max(1, peak), "\(entry.file) (\(entry.what)) \(output.name) \(precision)")
                }
            }
        }
        print(report.joined(separator: "\n"))
    }

    /// Crafted files: refused in one line or run; the process never traps, overflows its stack or hangs.
    func testCraftedModelsAreRefusedOrRunNeverCrash() throws {
        let directory = try Self.directory() + "/crafted"
        try NetworkReferenceTests.run(try TestFixtures.referencePython(), [Self.script, "--crafted", directory])
        let files = try JSONDecoder().decode([String].self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/crafted.json")))
        XCTAssertGreaterThan(files.count, 50)
        let rgba = try NetworkReferenceTests.photo(Size(width: 16, height: 16))
        var refused: [String: String] = [:]
        for file in files {
            do {
                _ = try Self.render(directory + "/" + file, parameters: [:], rgba: file.contains("relu-chain") ? try NetworkReferenceTests.photo(Size(width: 8, height: 8)) : rgba,
                                    size: file.contains("relu-chain") ? Size(width: 8, height: 8) : Size(width: 16, height: 16))
            } catch {
                let line = "\(error)"
                XCTAssertFalse(line.contains("\n"), "\(file): \(line)")
                refused[file] = line
            }
        }
        XCTAssertTrue(refused["crafted-resize-nan.onnx"]?.contains("finite") == true, refused["crafted-resize-nan.onnx"] ?? "ran")
        print(refused.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n"))
    }
}
