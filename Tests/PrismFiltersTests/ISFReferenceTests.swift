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

    func testALongLabelledWithNumbersTakesTheNumberInTheGraph() throws {
        // `cols=10` reaches the parser as a number; the choice's word is "10", its value 10.
        for (given, value) in [("10", 10.0), ("5", 5.0), ("'1'", 1.0)] {
            let out = try render(GraphBinder().bind("\"\(corpusPath("numbered-choices.fs"))\"(cols=\(given))"), image)
            let expected = TestImage.from(size: image.size) { x, y in SIMD4(value / 10, self.image.pixel(x, y).y, 0, 1) }
            assertClose(out, expected, tolerance: 1, "cols=\(given)")
        }
        XCTAssertThrowsError(try GraphBinder().bind("\"\(corpusPath("numbered-choices.fs"))\"(cols=3)")) { error in
            XCTAssertTrue("\(error)".contains("cols"), "\(error)")
        }
    }
}
