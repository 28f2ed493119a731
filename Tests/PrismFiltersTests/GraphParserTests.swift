import XCTest
@testable import PrismFilters

final class GraphParserTests: XCTestCase {
    private func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> GraphAST? {
        do { return try GraphParser.parse(text) } catch {
            XCTFail("unexpected error: \(error)", file: file, line: line)
            return nil
        }
    }

    private func syntaxError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> GraphSyntaxError? {
        do {
            let ast = try GraphParser.parse(text)
            XCTFail("expected a syntax error, got \(ast.chains.count) chain(s)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    private func assertSyntaxError(_ text: String, column: Int, contains fragment: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        guard let error = syntaxError(text, file: file, line: line) else { return }
        XCTAssertEqual(error.column, column, "\(text) → \(error)", file: file, line: line)
        XCTAssertTrue(error.message.contains(fragment), "\(text) → \(error)", file: file, line: line)
    }

    // MARK: Valid forms

    func testPlainChain() throws {
        let ast = try XCTUnwrap(parse("invert, mono"))
        XCTAssertEqual(ast.chains.count, 1)
        let elements = ast.chains[0].elements
        XCTAssertEqual(elements.map(\.name), ["invert", "mono"])
        XCTAssertEqual(elements.map(\.kind), [.filter, .filter])
        XCTAssertEqual(elements[0].implicitInput, .graphInput)
        XCTAssertEqual(elements[1].implicitInput, .previousElement)
        XCTAssertEqual(elements[0].range, GraphColumnRange(start: 1, end: 7))
        XCTAssertEqual(elements[1].range, GraphColumnRange(start: 9, end: 13))
        XCTAssertTrue(elements.allSatisfy { $0.inputLabels.isEmpty && $0.outputLabel == nil })
    }

    func testLabelledGraph() throws {
        let text = "[in]pixellate(scale=16)[px]; radial-gradient(center=0.5:0.5, radius0=80, radius1=120)[mask]; [px][in][mask]blend-mask"
        let ast = try XCTUnwrap(parse(text))
        XCTAssertEqual(ast.chains.count, 3)
        let pixellate = ast.chains[0].elements[0]
        XCTAssertEqual(pixellate.name, "pixellate")
        XCTAssertEqual(pixellate.inputLabels.map(\.name), ["in"])
        XCTAssertEqual(pixellate.outputLabel?.name, "px")
        XCTAssertEqual(pixellate.implicitInput, .none)
        XCTAssertEqual(pixellate.arguments.count, 1)
        XCTAssertEqual(pixellate.arguments[0].key, "scale")
        XCTAssertEqual(pixellate.arguments[0].value, .number(16))
        XCTAssertEqual(pixellate.arguments[0].range, GraphColumnRange(start: 15, end: 23))
        XCTAssertEqual(pixellate.arguments[0].valueRange, GraphColumnRange(start: 21, end: 23))
        XCTAssertEqual(pixellate.range, GraphColumnRange(start: 1, end: 28))
        XCTAssertEqual(pixellate.nameRange, GraphColumnRange(start: 5, end: 14))

        let gradient = ast.chains[1].elements[0]
        XCTAssertEqual(gradient.name, "radial-gradient")
        XCTAssertEqual(gradient.implicitInput, .graphInput)
        XCTAssertEqual(gradient.argument("center")?.value, .tuple([0.5, 0.5]))
        XCTAssertEqual(gradient.argument("radius0")?.value, .number(80))
        XCTAssertEqual(gradient.argument("radius1")?.value, .number(120))
        XCTAssertEqual(gradient.outputLabel?.name, "mask")
        XCTAssertEqual(gradient.range.start, 30)

        let blend = ast.chains[2].elements[0]
        XCTAssertEqual(blend.inputLabels.map(\.name), ["px", "in", "mask"])
        XCTAssertNil(blend.outputLabel)

        let topology = try GraphChecker.check(ast)
        XCTAssertEqual(topology.output, GraphElementID(chain: 2, index: 0))
        XCTAssertEqual(topology.inputs[GraphElementID(chain: 2, index: 0)],
                       [.element(GraphElementID(chain: 0, index: 0)), .graphInput, .element(GraphElementID(chain: 1, index: 0))])
        XCTAssertEqual(topology.inputs[GraphElementID(chain: 0, index: 0)], [.graphInput])
    }

    func testValues() throws {
        let ast = try XCTUnwrap(parse(
            #"f(-1.5, 2, 1e-3, +4, .5, 0.5:0.5, (0.25, 0.75), #ff8000, #ff800080, 1280x720, fit, true, "my file.cube", 'x', "a\"b\\c\n", mode = linear, p=1:2:3)"#))
        let values = ast.chains[0].elements[0].arguments.map(\.value)
        XCTAssertEqual(values, [
            .number(-1.5), .number(2), .number(0.001), .number(4), .number(0.5),
            .tuple([0.5, 0.5]), .tuple([0.25, 0.75]),
            .color(red: 1, green: 128.0 / 255, blue: 0, alpha: 1),
            .color(red: 1, green: 128.0 / 255, blue: 0, alpha: 128.0 / 255),
            .size(width: 1280, height: 720), .word("fit"), .word("true"),
            .string("my file.cube"), .string("x"), .string("a\"b\\c\n"),
            .word("linear"), .tuple([1, 2, 3]),
        ])
        let args = ast.chains[0].elements[0].arguments
        XCTAssertEqual(args[15].key, "mode")
        XCTAssertNil(args[0].key)
        XCTAssertEqual(args[0].range, GraphColumnRange(start: 3, end: 7))
    }

    func testWhitespaceEverywhere() throws {
        let ast = try XCTUnwrap(parse("  [ in ]  pixellate ( scale = 16 , 2 )  [ px ] ;  [px]  mono  "))
        XCTAssertEqual(ast.chains.count, 2)
        XCTAssertEqual(ast.chains[0].elements[0].inputLabels.first?.name, "in")
        XCTAssertEqual(ast.chains[0].elements[0].outputLabel?.name, "px")
        XCTAssertEqual(ast.chains[0].elements[0].arguments.count, 2)
        XCTAssertEqual(ast.chains[1].elements[0].name, "mono")
        XCTAssertNoThrow(try GraphChecker.check(ast))
    }

    func testFilePaths() throws {
        let ast = try XCTUnwrap(parse(#"shaders/wave.fs(amount=0.3), my.fs, "my dir/look one.cube", ~/luts/film.cube, grade.isf, x.frag, y.glsl"#))
        let elements = ast.chains[0].elements
        XCTAssertEqual(elements.map(\.name), ["shaders/wave.fs", "my.fs", "my dir/look one.cube", "~/luts/film.cube", "grade.isf", "x.frag", "y.glsl"])
        XCTAssertTrue(elements.allSatisfy { $0.kind == .file })
        XCTAssertEqual(elements[0].argument("amount")?.value, .number(0.3))
        XCTAssertEqual(elements[2].nameRange, GraphColumnRange(start: 37, end: 59))
    }

    func testEmptyArgumentsAndChainsInsideChains() throws {
        let ast = try XCTUnwrap(parse("[in]invert()[a]; [a]mono, [in]blend"))
        let blend = ast.chains[1].elements[1]
        XCTAssertEqual(blend.implicitInput, .previousElement)
        XCTAssertEqual(blend.inputLabels.map(\.name), ["in"])
        let topology = try GraphChecker.check(ast)
        XCTAssertEqual(topology.inputs[GraphElementID(chain: 1, index: 1)],
                       [.element(GraphElementID(chain: 1, index: 0)), .graphInput])
    }

    // MARK: Syntax errors

    func testSyntaxErrors() {
        assertSyntaxError("", column: 1, contains: "empty filter graph")
        assertSyntaxError("   ", column: 1, contains: "empty filter graph")
        assertSyntaxError("blur(radius=2", column: 14, contains: "expected ')' after arguments")
        assertSyntaxError("blur(radius=2; mono", column: 14, contains: "expected ')' after arguments")
        assertSyntaxError("invert, , mono", column: 9, contains: "expected a filter after ','")
        assertSyntaxError("invert,", column: 8, contains: "expected a filter after ','")
        assertSyntaxError(", invert", column: 1, contains: "empty element")
        assertSyntaxError("blur(radius=2,)", column: 15, contains: "expected an argument after ','")
        assertSyntaxError("blur(,radius=2)", column: 6, contains: "expected an argument before ','")
        assertSyntaxError("invert;; mono", column: 8, contains: "empty chain")
        assertSyntaxError("invert;", column: 8, contains: "expected a filter after ';'")
        assertSyntaxError("blur(radius=1.2.3)", column: 13, contains: "invalid number '1.2.3'")
        assertSyntaxError("blur(radius=12abc)", column: 13, contains: "invalid number '12abc'")
        assertSyntaxError("blur(radius=1e)", column: 13, contains: "invalid number '1e'")
        assertSyntaxError("blur(radius=-)", column: 13, contains: "invalid number '-'")
        assertSyntaxError("invert & mono", column: 8, contains: "unexpected character '&'")
        assertSyntaxError("inv%ert", column: 4, contains: "unexpected character '%'")
        assertSyntaxError("lut(file=\"a.cube)", column: 10, contains: "unterminated string")
        assertSyntaxError("'shader.fs", column: 1, contains: "unterminated string")
        assertSyntaxError("[in invert", column: 5, contains: "expected ']' after label 'in'")
        assertSyntaxError("in]invert", column: 3, contains: "unexpected ']'")
        assertSyntaxError("[]invert", column: 1, contains: "empty label")
        assertSyntaxError("invert mono", column: 8, contains: "expected ',' or ';' between filters")
        assertSyntaxError("invert[a][b]", column: 10, contains: "at most one output label")
        assertSyntaxError("tint(color=#12)", column: 12, contains: "invalid colour '#12'")
        assertSyntaxError("tint(color=#12345g)", column: 18, contains: "unexpected character 'g' in colour")
        assertSyntaxError("scale(size=1280x)", column: 12, contains: "invalid size")
        assertSyntaxError("blur(radius 2)", column: 13, contains: "expected ',' or ')' after an argument")
        assertSyntaxError("blur(radius=)", column: 13, contains: "expected a value after 'radius='")
        assertSyntaxError("blur(=2)", column: 6, contains: "expected a key before '='")
        assertSyntaxError("move(p=(0.5, 0.5)", column: 18, contains: "expected ')' after arguments")
        assertSyntaxError("move(p=(0.5 0.5))", column: 13, contains: "expected ',' or ')' in tuple")
        assertSyntaxError("move(p=(0.5))", column: 8, contains: "at least two numbers")
        assertSyntaxError("move(p=0.5:)", column: 12, contains: "expected a number")
        assertSyntaxError("invert)", column: 7, contains: "unexpected ')'")
        assertSyntaxError("(x=1)", column: 1, contains: "expected a filter name before '('")
        assertSyntaxError("f(s=\"a\\qb\")", column: 7, contains: "unknown escape")
        assertSyntaxError("f(x=@)", column: 5, contains: "unexpected character '@'")
    }

    func testErrorDescriptionAndCaret() {
        let text = "blur(radius=2"
        guard let error = syntaxError(text) else { return }
        XCTAssertEqual(error.description, "filter graph, column 14: expected ')' after arguments")
        XCTAssertEqual(error.caretDiagnostic(for: text), "blur(radius=2\n             ^")
        XCTAssertEqual(renderCaret(text: "\tab", column: 2), "\tab\n\t^")
    }

    // MARK: Semantic checks

    private func semanticErrors(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [GraphSemanticError] {
        guard let ast = parse(text, file: file, line: line) else { return [] }
        return GraphChecker.diagnose(ast)
    }

    private func assertSemantic(_ text: String, _ expected: [(Int, String)], file: StaticString = #filePath, line: UInt = #line) {
        let errors = semanticErrors(text, file: file, line: line)
        XCTAssertEqual(errors.count, expected.count, "\(text) → \(errors)", file: file, line: line)
        for (error, (column, fragment)) in zip(errors, expected) {
            XCTAssertEqual(error.column, column, "\(text) → \(error)", file: file, line: line)
            XCTAssertTrue(error.message.contains(fragment), "\(text) → \(error)", file: file, line: line)
        }
    }

    func testSoundGraphs() {
        assertSemantic("invert, mono", [])
        assertSemantic("[in]a[x]; [x]b[out]", [])
        // Fan-out: a label read twice needs no split.
        assertSemantic("[in]a[x]; [x]b[y]; [x][y]c", [])
        assertSemantic("[in]a[x]; [x][in]c[out]", [])
    }

    func testUnknownLabel() {
        assertSemantic("[in]a[x]; [y]b", [(6, "[x] is produced but never used"), (11, "[y] is not produced")])
    }

    func testLabelProducedTwice() {
        assertSemantic("[in]a[x]; [in]b[x]; [x]c", [(16, "[x] is already produced at column 1")])
    }

    func testCycle() {
        let errors = semanticErrors("[in][b]a[a]; [a]b[b]; [a]c")
        XCTAssertEqual(errors.count, 1, "\(errors)")
        XCTAssertEqual(errors.first?.column, 14)
        XCTAssertTrue(errors.first?.message.hasPrefix("cycle: ") ?? false, "\(errors)")
        assertSemantic("[in][x]a[x]", [(1, "cycle: a → a"), (9, "no output")])
    }

    func testUsedBeforeProduced() {
        assertSemantic("[x]b; [in]a[x]", [(1, "[x] is used before the filter that produces it (column 7)"),
                                          (1, "the output of 'b' is not used"), (12, "no output")])
    }

    func testOutputs() {
        assertSemantic("[in]a[x]; [x]b[y]", [(15, "no output")])
        assertSemantic("[in]a[out]; [in]b", [(13, "more than one output (another at column 1)")])
        assertSemantic("gradient; invert", [(1, "the output of 'gradient' is not used")])
        assertSemantic("[in]a[x]; [out]b", [(6, "[x] is produced but never used"), (11, "[out] is the graph output")])
        assertSemantic("[in]a[in]; b", [(6, "[in] is the graph input")])
        assertSemantic("invert[unused], mono", [(7, "[unused] is produced but never used")])
    }

    func testCheckThrowsFirstError() {
        XCTAssertThrowsError(try GraphChecker.check(GraphParser.parse("[in]a[x]; [q]b"))) { error in
            XCTAssertTrue(error is GraphSemanticError)
            XCTAssertEqual("\(error)", "filter graph, column 6: label [x] is produced but never used")
        }
        XCTAssertThrowsError(try GraphChecker.check(GraphParser.parse("a("))) { error in
            XCTAssertTrue(error is GraphSyntaxError)
        }
    }
}
