import Foundation
import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// Where Prism disagreed with the reference renderers on published ISF filters and Prism was the one wrong,
/// each case on a small shader of `ISFCorpus/` (or written here) against CPU maths.
final class ISFReferenceTests: XCTestCase {
    let image = TestImage.varied(width: 48, height: 30)

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ISFCorpus")

    func corpusPath(_ name: String) -> String { Self.corpus.appendingPathComponent(name).path }

    // MARK: Parameters

    func testALongLabelledWithNumbersOrSizesTakesTheLabelAsWritten() throws {
        // `cols=10` reaches the parser as a number and `grid=4x4` as a size; the choices' words are "10" and
        // "4x4", their values 10 and 4.
        for (cols, colsValue, grid, gridValue) in [("10", 10.0, "4x4", 4.0), ("5", 5.0, "2x2", 2.0), ("'1'", 1.0, "'4x4'", 4.0)] {
            let text = "\"\(corpusPath("numbered-choices.fs"))\"(cols=\(cols), grid=\(grid))"
            let out = try render(GraphBinder().bind(text), image)
            let expected = TestImage.from(size: image.size) { x, y in SIMD4(colsValue / 10, gridValue / 10, self.image.pixel(x, y).y, 1) }
            assertClose(out, expected, tolerance: 1, "cols=\(cols), grid=\(grid)")
        }
        XCTAssertThrowsError(try GraphBinder().bind("\"\(corpusPath("numbered-choices.fs"))\"(cols=3)")) { error in
            XCTAssertTrue("\(error)".contains("cols"), "\(error)")
        }
    }

    // MARK: Pass sizes

    func testAPassOfFractionalSizeSeesItsSizeUnrounded() throws {
        // WIDTH "$WIDTH / 3.0" of 50 is 16.67: the texture is 16 pixels wide, but RENDERSIZE and IMG_SIZE
        // carry the fraction, as in both reference renderers.
        let picture = TestImage.varied(width: 50, height: 31)
        let kernel = try UserShaderKernel(shader: UserShader.load(path: corpusPath("fractional-target.fs")))
        let graph = FilterGraph()
        try graph.append("user", kernel: kernel, parameters: kernel.parameters)
        let out = try render(graph, picture)
        let w = 50.0 / 3, h = 31.0 / 3
        let expected = TestImage.from(size: picture.size) { _, _ in
            SIMD4(w - w.rounded(.down), h - h.rounded(.down), w - w.rounded(.down), 1)
        }
        assertClose(out, expected, tolerance: 1, "RENDERSIZE and IMG_SIZE of a third-size pass")
    }
}

