import XCTest
import PrismCore
@testable import PrismFilters

/// The run's inputs in graph text: `[0]` (and `[in]`) the first, `[1]`… and names the others.
final class GraphInputLabelTests: XCTestCase {
    private func topology(_ text: String, inputs: [String?]) throws -> GraphTopology {
        try GraphChecker.check(try GraphParser.parse(text), inputs: inputs)
    }

    func testIndicesAndNamesResolveToTheRunsInputs() throws {
        let two = try topology("[0][1]over", inputs: [nil, nil])
        XCTAssertEqual(two.inputs[GraphElementID(chain: 0, index: 0)], [.graphInput, .input(1)])
        let named = try topology("[cam]scale(size=64x48)[c]; [main][c]over", inputs: ["main", "cam"])
        XCTAssertEqual(named.inputs[GraphElementID(chain: 0, index: 0)], [.input(1)])
        XCTAssertEqual(named.inputs[GraphElementID(chain: 1, index: 0)], [.graphInput, .element(GraphElementID(chain: 0, index: 0))])
        // [in] stays the first input, and an unlabelled chain still reads it.
        XCTAssertEqual(try topology("[in][2]over", inputs: [nil, nil, nil]).inputs[GraphElementID(chain: 0, index: 0)],
                       [.graphInput, .input(2)])
        XCTAssertEqual(try topology("invert", inputs: [nil, nil]).inputs[GraphElementID(chain: 0, index: 0)], [.graphInput])
    }

    func testAnInputTheRunLacksIsAnErrorAtItsLabel() throws {
        let ast = try GraphParser.parse("[0][3]over")
        let errors = GraphChecker.diagnose(ast, inputs: [nil, nil])
        XCTAssertEqual(errors.map(\.column), [4])
        XCTAssertEqual(errors.first?.message, "input [3] does not exist: the run has 2 inputs ([0]…[1])")
        // One input (the default): [1] names nothing.
        XCTAssertEqual(GraphChecker.diagnose(try GraphParser.parse("[0][1]over")).first?.message,
                       "input [1] does not exist: the run has 1 input ([0])")
        // An input cannot be written.
        XCTAssertEqual(GraphChecker.diagnose(try GraphParser.parse("invert[1]; [1]mono"), inputs: [nil, nil]).first?.message,
                       "[1] names an input of the run; an element cannot write it")
    }

    func testTheBinderMakesOneNodePerInputItReads() throws {
        var binder = GraphBinder()
        binder.inputs = [nil, "b"]
        let graph = try binder.bind("[b]invert[x]; [b]mono[y]; [x][y]over")
        XCTAssertEqual(graph.inputSlots.map(\.index), [1])
        XCTAssertEqual(graph.nodes.filter { $0.kernel is GraphInputKernel }.count, 1)
        XCTAssertEqual(graph.highestInputIndex, 1)
        XCTAssertThrowsError(try graph.setInputSizes([:]))
        try graph.setInputSizes([1: Size(width: 32, height: 16)])
        XCTAssertEqual(graph.inputSlots.first?.size, Size(width: 32, height: 16))
    }
}
