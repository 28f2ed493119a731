import Foundation
import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// Prints what blur costs at 1280x720 (fenced CPU timing: glFinish around each pass). A measurement,
/// not a test: it asserts nothing about time and runs only with PRISM_BENCH=1.
final class BlurTiming: XCTestCase {
    func testPrintBlurCostAt720p() throws {
        guard ProcessInfo.processInfo.environment["PRISM_BENCH"] == "1" else { throw XCTSkip("set PRISM_BENCH=1") }
        let size = Size(width: 1280, height: 720)
        let image = TestImage.noise(width: size.width, height: size.height)
        let context = try SharedGPU.get()
        print("renderer: \(context.info.renderer)")
        // (radius, forced reduction, forced tap style): nil is what the filter chooses by itself.
        var cases: [(Double, Int?, Bool?)] = [(0, nil, nil)]
        for radius in [4.0, 16, 64] { cases += [(radius, nil, nil), (radius, 1, true), (radius, 1, false)] }
        cases += [(8, nil, nil), (11, nil, nil), (11, nil, true), (12, nil, nil), (16, 4, nil), (24, nil, nil),
                  (64, nil, true), (128, nil, nil), (200, nil, nil)]
        for (radius, forced, merged) in cases {
            let definition = try XCTUnwrap(BuiltinFilters.named("blur"))
            let (kernel, values) = try definition.instantiate(["radius": .float(radius)])
            (kernel as? BlurKernel)?.reductionOverride = forced
            (kernel as? BlurKernel)?.mergeTapsOverride = merged
            let graph = FilterGraph()
            try graph.append("blur", kernel: kernel, parameters: values)
            let line = try context.perform { () -> String in
                let uploader = FrameUploader(ringSize: 1)
                let frame = try image.rgba.withUnsafeBytes { bytes in
                    try uploader.upload(CPUFramePlanes(format: .rgba, size: size,
                                                       colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full),
                                                       planes: [(bytes.baseAddress!, size.width * 4)]))
                }
                let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
                renderer.timer = PassTimer(passCount: renderer.passCount, preferQueries: false, extensions: context.info.extensions)
                for _ in 0..<15 { try renderer.render(frame, context: FrameContext()) }
                let medians = renderer.timer!.medianMilliseconds()
                let passes = zip(renderer.passLabels, medians).map { "\($0) \(String(format: "%.2f", $1))" }
                let blur = kernel as? BlurKernel
                return String(format: "radius %3.0f f=%2d %@ total %6.2f ms | ", radius, blur?.reduction ?? 1,
                              blur?.mergeTaps == true ? "merged" : "texel ", medians.reduce(0, +))
                    + passes.joined(separator: ", ")
            }
            print("BLUR720", line)
        }
    }
}
