import Foundation
import XCTest
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
@testable import PrismPipeline

/// The segmentation mask as the graph sees it (`FrameContext.segmentation`), without a model: a fixed
/// mask given whole, and the refusal of a mask graph on a run that has none.
final class SegmentationGraphTests: XCTestCase {
    private var gpu: GPUContext!
    override func setUpWithError() throws { gpu = try GPUContext() }
    override func tearDown() { gpu = nil }

    func testABackgroundGraphWithoutASegmentationSideInputIsRefused() throws {
        for (text, name) in [("background-blur(radius=8)", "background-blur"), ("background-replace(color=#ff0000)", "background-replace"),
                             ("segment-mask", "segment-mask")] {
            let graph = try GraphBinder().bind(text)
            let source = try FrameListSource(image: FramePathTests.image(Size(width: 32, height: 24)))
            XCTAssertThrowsError(try FrameEngine(source: source, graph: graph, sinks: [DiscardSink(format: .rgba)], gpu: gpu)) { error in
                XCTAssertEqual("\(error)", "\(name) needs a segmentation model: give one with \(Setting.segmentModel) SEG.onnx (or model=SEG.onnx)")
            }
        }
    }

    /// A mask 1 on the left half and 0 on the right, at a quarter of the frame's resolution: background-replace
    /// keeps the input on the left and paints the colour on the right (the bilinear seam in between is skipped).
    func testBackgroundReplaceKeepsTheForegroundAndPaintsTheBackground() throws {
        let size = Size(width: 64, height: 32), maskSize = Size(width: 16, height: 8)
        let values = (0..<maskSize.pixelCount).map { i -> Float in i % maskSize.width < maskSize.width / 2 ? 1 : 0 }
        var context = FrameContext()
        context.segmentation = SegmentationMask(size: maskSize, values: values, generation: 1)
        let input = FramePathTests.image(size)
        let output = try FrameEngine.renderStill(try GraphBinder().bind("background-replace(color=#ff0000, feather=0)"),
                                                 image: input, gpu: gpu, frame: context)
        for y in 0..<size.height {
            for x in 0..<size.width where abs(x - size.width / 2) > 4 {
                let at = 4 * (y * size.width + x)
                let got = Array(output.pixels[at..<(at + 3)])
                let want = x < size.width / 2 ? Array(input.pixels[at..<(at + 3)]) : [255, 0, 0]
                for c in 0..<3 { XCTAssertLessThanOrEqual(abs(Int(got[c]) - Int(want[c])), 2, "pixel \(x),\(y) channel \(c)") }
            }
        }
        // No mask yet (a live run before the model's first answer): all background.
        let none = try FrameEngine.renderStill(try GraphBinder().bind("background-replace(color=#ff0000)"),
                                               image: input, gpu: gpu, frame: FrameContext())
        XCTAssertEqual(Array(none.pixels[0..<3]), [255, 0, 0])
    }
}
