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
}
