import Foundation
import PrismCore
import PrismGPU
@testable import PrismFilters
import PrismMedia
import TestFixtures
import XCTest

/// Per-layer precision (`precision=half`: RGBA16F only where the calibration run's peak allows it) and
/// liveness reuse of intermediate textures (`TargetSharing`).
final class NetworkPrecisionTests: XCTestCase {
    /// Features beyond half's range (1e5) and near 3000 (where half's step is 2, and the output is their small
    /// differences) are stored in float; the rest in half; the outputs agree with onnxruntime to half's bound.
    func testHalfOnlyWhereTheCalibrationRunAllowsIt() throws {
        let path = try LayoutModelTests.directory() + "/large-range.onnx"
        let size = Size(width: 32, height: 24)
        let rgba = try NetworkReferenceTests.photo(size)
        let values = try ParameterValues(specs: NetworkFilter.modelParameters, given: ["precision": .choice("half")])
        let kernel = try NetworkKernel(path: path, parameters: values, outputs: .all)
        let graph = FilterGraph()
        try graph.append("model", kernel: kernel, parameters: values)
        let outputs = try SharedGPU.get().perform { () -> [NetworkKernel.OutputTensor] in
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
            try renderer.render(try Self.upload(rgba, size: size), context: FrameContext())
            return try kernel.readOutputs(from: renderer, node: 0)
        }
        let calibration = try XCTUnwrap(kernel.calibration)
        let formats = kernel.prepasses.map(\.format)
        var floats: [String] = [], halves: [String] = []
        let layers = kernel.program.layers
        for (index, layer) in layers.enumerated() {
            let peak = calibration.peaks[layer.output]
            if formats[index] == .rgba32f { floats.append(layer.node) } else { halves.append(layer.node) }
            // The rule as stated: half where the peak is within the limit and every layer reading it writes values
            // within the limit too (no sums in this model).
            let readers = layers.filter { $0.inputs.contains(layer.output) }
            let allowed = peak <= NetworkCalibration.halfLimit && readers.allSatisfy { calibration.peaks[$0.output] <= NetworkCalibration.halfLimit }
            XCTAssertEqual(formats[index] == .rgba16f, allowed, "\(layer.node): peak \(peak)")
        }
        XCTAssertFalse(halves.isEmpty, "the input and small features stay half")
        XCTAssertGreaterThanOrEqual(floats.count, 2, "the 3000-offset and 1e5 features are float: \(floats)")
        XCTAssertGreaterThan(calibration.peaks.max() ?? 0, 65504, "a feature beyond half's range")
        let expected = try LayoutModelTests.reference(path, rgba: rgba, size: size,
                                                      channelAxes: Dictionary(uniqueKeysWithValues: outputs.map { ($0.name, $0.channelAxis) }),
                                                      extra: nil)
        XCTAssertEqual(outputs.count, 2)
        for output in outputs {
            let reference = try XCTUnwrap(expected[output.name])
            XCTAssertEqual(reference.count, output.values.count)
            let peak = reference.map(abs).max() ?? 0
            let worst = zip(output.values, reference).map { abs($0 - $1) }.max() ?? .infinity
            print("large-range \(output.name) half: max error \(worst) (peak \(peak))")
            XCTAssertLessThanOrEqual(worst, 2e-2 * max(1, peak), output.name)
        }
        XCTAssertTrue(kernel.summary.contains("float (peak"), kernel.summary)
    }

    /// With liveness reuse the network's outputs are bit-identical and its textures take less memory: a U-Net
    /// (skips keep early features alive across the net) and a residual SR net.
    func testSharedTexturesGiveTheSameOutputsWithLessMemory() throws {
        let (directory, _) = try NetworkReferenceTests.models()
        let size = Size(width: 64, height: 48)
        let rgba = try NetworkReferenceTests.photo(size)
        for file in ["net-unet-seg.onnx", "net-sr-resnet-x2.onnx"] {
            var results: [(bytes: Int, outputs: [[Float]])] = []
            for shares in [false, true] {
                let values = try ParameterValues(specs: NetworkFilter.modelParameters, given: ["precision": .choice("float")])
                let kernel = try NetworkKernel(path: directory + "/" + file, parameters: values, outputs: .all)
                let graph = FilterGraph()
                try graph.append("model", kernel: kernel, parameters: values)
                var options = CompileOptions()
                options.sharesTargets = shares
                results.append(try SharedGPU.get().perform {
                    let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba], options: options)
                    try renderer.render(try Self.upload(rgba, size: size), context: FrameContext())
                    return (renderer.targetBytes, try kernel.readOutputs(from: renderer, node: 0).map(\.values))
                })
            }
            print("\(file): \(results[0].bytes) bytes of targets without sharing, \(results[1].bytes) with")
            XCTAssertEqual(results[0].outputs, results[1].outputs, file)
            // The U-Net's features come in four sizes and its skips live long; the SR net's are one size.
            XCTAssertLessThan(results[1].bytes * (file.contains("sr") ? 2 : 1), results[0].bytes, file)
        }
    }

    /// The plan itself: a chain reuses two textures; a skip keeps its texture until its reader; an output
    /// (not transient) and what the expression reads are never drawn over; sizes and formats must match.
    func testSharingPlanFollowsTheReaders() {
        func prepass(_ reads: [Int], transient: Bool = true) -> KernelPrepass {
            var p = KernelPrepass(main: "void main() { " + reads.map { "texelFetch($pass\($0), ivec2(0), 0);" }.joined() + " }",
                                  format: .rgba16f, size: { _ in Size(width: 8, height: 8) })
            p.transient = transient
            return p
        }
        let size = Size(width: 8, height: 8)
        func plan(_ prepasses: [KernelPrepass], expression: String = "", sizes: [Size]? = nil) -> [Int?] {
            TargetSharing.plan(prepasses, library: "", expression: expression, sizes: sizes ?? prepasses.map { _ in size },
                               formats: prepasses.map { _ in .rgba16f })
        }
        // 0 → 1 → 2 → 3 → 4: 2 takes 0's texture, 3 takes 1's, 4 takes 0's again.
        XCTAssertEqual(plan([prepass([]), prepass([0]), prepass([1]), prepass([2]), prepass([3])]), [nil, nil, 0, 1, 0])
        // 0 is read by 3 (a skip): 2 cannot take it; 3 takes 1's, 4 takes 2's.
        XCTAssertEqual(plan([prepass([]), prepass([0]), prepass([1]), prepass([2, 0]), prepass([3])]), [nil, nil, nil, 1, 2])
        // 1 is not transient (an output): nothing takes its texture.
        XCTAssertEqual(plan([prepass([]), prepass([0], transient: false), prepass([1]), prepass([2]), prepass([3])]), [nil, nil, 0, nil, 0])
        // The expression reads 1: the same.
        XCTAssertEqual(plan([prepass([]), prepass([0]), prepass([1]), prepass([2])], expression: "$pass1"), [nil, nil, 0, nil])
        // Another size never shares.
        XCTAssertEqual(plan([prepass([]), prepass([0]), prepass([1])], sizes: [size, size, Size(width: 4, height: 4)]), [nil, nil, nil])
        // $pass1 is not $pass12.
        XCTAssertEqual(TargetSharing.passesNamed(in: "$pass12 + $pass3"), [12, 3])
    }

    static func upload(_ rgba: [UInt8], size: Size) throws -> UploadedFrame {
        let uploader = FrameUploader(ringSize: 1)
        return try rgba.withUnsafeBytes { bytes in
            try uploader.upload(CPUFramePlanes(format: .rgba, size: size, colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full),
                                               planes: [(bytes.baseAddress!, size.width * 4)]))
        }
    }
}
