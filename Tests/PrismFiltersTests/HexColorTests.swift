import XCTest
@testable import PrismFilters

final class HexColorTests: XCTestCase {
    func testParse() {
        XCTAssertEqual(HexColor.parse("#ff8000"), SIMD4(1, 128.0 / 255, 0, 1))
        XCTAssertEqual(HexColor.parse("#FF800040"), SIMD4(1, 128.0 / 255, 0, 64.0 / 255))
        for bad in ["ff8000", "#ff800", "#ff80001", "#gg8000", "#ff8000 ", "", "#", "#ｆｆ8000"] {
            XCTAssertNil(HexColor.parse(bad), bad)
        }
    }

    func testFormatRoundTrips() {
        XCTAssertEqual(HexColor.format(SIMD4(1, 0.5, 0, 1)), "#ff8000")
        XCTAssertEqual(HexColor.format(SIMD4(1, 0.5, 0, 1), alpha: .always), "#ff8000ff")
        XCTAssertEqual(HexColor.format(SIMD4(2, -1, 0.25, 0.5)), "#ff004080")
        for text in ["#000000", "#0a1b2c", "#ffffff", "#12345678"] {
            XCTAssertEqual(HexColor.parse(text).map { HexColor.format($0) }, text)
        }
    }

    func testGraphTextAndParametersShareIt() throws {
        // The parser, the binder and a parameter's text form agree on one colour.
        let graph = try GraphBinder().bind("radial-gradient(color0=#3366cc80)")
        let value = try XCTUnwrap(graph.nodes.first?.parameters?["color0"])
        XCTAssertEqual(value, ParameterValue.color(HexColor.parse("#3366cc80")!))
        XCTAssertEqual(value.description, "#3366cc80")
    }
}
