import XCTest
@testable import PrismFilters

/// The two text tools user shaders go through before any GL: the positioned JSON reader of ISF headers
/// and the token rewriter that turns ISF / older GLSL into GLSL ES 3.00.
final class PositionedJSONTests: XCTestCase {
    private func parse(_ text: String) throws(PositionedJSON.SyntaxError) -> (PositionedJSON, Int) {
        let chars = Array(text)
        return try PositionedJSON.parse(chars, from: 0, end: chars.count)
    }

    private func syntaxError(_ text: String) -> (message: String, offset: Int)? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return (error.message, error.offset)
        }
    }

    func testValuesAndWhereEachStarts() throws {
        let text = #"{"a": 1.5, "b": [true, null, "x\u0041\n"], "c": {"d": -2e1,},}  rest"#
        let (json, end) = try parse(text)
        XCTAssertEqual(String(Array(text)[end...]), "rest", "parsing stops after the value and its trailing blanks")
        guard case .object(let members) = json.value else { return XCTFail("an object") }
        XCTAssertEqual(members.map(\.key), ["a", "b", "c"])
        XCTAssertEqual(members.map(\.keyOffset), [1, 11, 43])
        XCTAssertEqual(json["a"]?.offset, 6)
        guard case .number(let a)? = json["a"]?.value else { return XCTFail("a number") }
        XCTAssertEqual(a, 1.5)
        guard case .array(let items)? = json["b"]?.value else { return XCTFail("an array") }
        XCTAssertEqual(items.map(\.offset), [17, 23, 29])
        XCTAssertEqual(items.map(\.typeName), ["a boolean", "null", "a string"])
        guard case .string(let s) = items[2].value else { return XCTFail("a string") }
        XCTAssertEqual(s, "xA\n")
        guard case .number(let d)? = json["c"]?["d"]?.value else { return XCTFail("a nested number") }
        XCTAssertEqual(d, -20)
    }

    func testKeysCaseInsensitivelyAndTheLastDuplicateWins() throws {
        let (json, _) = try parse(#"{"Name": "first", "LABEL": 1, "Name": "second"}"#)
        guard case .string(let name)? = json.member("NAME")?.value else { return XCTFail("found without its case") }
        XCTAssertEqual(name, "second")
        XCTAssertNotNil(json["LABEL"])
        XCTAssertNil(json["label"], "the subscript is exact")
        XCTAssertNil(json.member("MISSING"))
    }

    func testSyntaxErrorsSayWhatAndWhere() {
        XCTAssertEqual(syntaxError(#"{"a" 1}"#)?.message, #"expected ':' after key "a", found '1'"#)
        XCTAssertEqual(syntaxError(#"{"a" 1}"#)?.offset, 5)
        XCTAssertEqual(syntaxError("[1,,2]")?.message, "two commas in a row")
        XCTAssertEqual(syntaxError("[1,,2]")?.offset, 3)
        XCTAssertEqual(syntaxError(#"{"a": tru}"#)?.message, "expected a value, found 'tru'")
        XCTAssertEqual(syntaxError(#"{"a": tru}"#)?.offset, 6)
        XCTAssertEqual(syntaxError("{\"a\": \"one\nline\"}")?.message, "unterminated string (strings cannot span lines)")
        XCTAssertEqual(syntaxError("{\"a\": \"one\nline\"}")?.offset, 6)
        XCTAssertEqual(syntaxError(#"["\q"]"#)?.message, #"unknown escape '\q' in string"#)
        XCTAssertEqual(syntaxError(#"["\q"]"#)?.offset, 2)
        XCTAssertEqual(syntaxError("+1")?.message, "expected a value, found '+'")
        XCTAssertEqual(syntaxError("[1.2.3]")?.message, "invalid number '1.2.3'")
        XCTAssertEqual(syntaxError(#"{"a": 1 "b": 2}"#)?.message, #"expected ',' or '}' after the value of "a", found '"'"#)
        XCTAssertEqual(syntaxError("{").map(\.message), "expected a quoted key or '}', found the end of the header")
        XCTAssertEqual(syntaxError(String(repeating: "[", count: 300)).map(\.message), "the header nests too deeply")
    }
}

final class GLSLRewriterTests: XCTestCase {
    private func lines(_ text: String) -> [SourceLine] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map {
            SourceLine(text: String($0.element), file: "look.fs", line: $0.offset + 1)
        }
    }

    private func rewrite(_ text: String, images: Set<String>? = ["inputImage", "noise"]) throws(ShaderLoadError) -> (text: String, edited: [Bool], used: Set<String>) {
        var rewriter = GLSLRewriter(identifiers: GLSLRewriter.isfIdentifiers, images: images)
        let out = try rewriter.rewrite(lines(text))
        return (out.map(\.text).joined(separator: "\n"), out.map(\.edited), rewriter.used)
    }

    private func loadError(_ text: String) -> ShaderLoadError? {
        do {
            _ = try rewrite(text)
            return nil
        } catch {
            return error
        }
    }

    func testWholeIdentifiersOutsideCommentsAreRenamed() throws {
        let source = """
            varying vec2 uv; // texture2D in a comment stays
            void main() { gl_FragColor = texture2D(tex, uv) + mytexture2D + texture2Dx * 1.0e5; }
            /* gl_FragColor
               texture2D */ float texture2D_ = 0x1Fu;
            """
        let result = try rewrite(source)
        XCTAssertEqual(result.text, """
            in vec2 uv; // texture2D in a comment stays
            void main() { isf_FragColor = texture(tex, uv) + mytexture2D + texture2Dx * 1.0e5; }
            /* gl_FragColor
               texture2D */ float texture2D_ = 0x1Fu;
            """)
        XCTAssertEqual(result.edited, [true, true, false, false], "only the lines that changed are marked")
        XCTAssertEqual(result.used, ["varying", "gl_FragColor", "texture2D"])
    }

    func testImageMacrosBecomeTextureCalls() throws {
        let source = """
            vec4 a = IMG_PIXEL(inputImage, gl_FragCoord.xy);
            vec4 b = IMG_NORM_PIXEL(noise, fract(vv_FragNormCoord * 2.0));
            vec4 c = IMG_THIS_PIXEL(inputImage) + IMG_THIS_NORM_PIXEL(noise);
            vec2 s = IMG_SIZE( inputImage );
            vec4 d = IMG_NORM_PIXEL(noise,
                                    vec2(0.5, 0.5));
            """
        let result = try rewrite(source)
        XCTAssertEqual(result.text, """
            vec4 a = texture(inputImage, ( gl_FragCoord.xy) / _inputImage_imgSize);
            vec4 b = texture(noise, ( fract(isf_FragNormCoord * 2.0)) * _noise_imgSize / _noise_imgSize);
            vec4 c = texture(inputImage, isf_FragNormCoord) + texture(noise, isf_FragNormCoord);
            vec2 s = _inputImage_imgSize;
            vec4 d = texture(noise, (
                                    vec2(0.5, 0.5)) * _noise_imgSize / _noise_imgSize);
            """)
        // At the normalised coordinate itself, the short form (the same texel; keeps the shader fusable).
        XCTAssertEqual(try rewrite("vec4 e = IMG_NORM_PIXEL(inputImage, isf_FragNormCoord);").text,
                       "vec4 e = texture(inputImage, isf_FragNormCoord);")
        XCTAssertEqual(result.text.split(separator: "\n", omittingEmptySubsequences: false).count, 6, "the line count is kept")
        XCTAssertTrue(result.used.isSuperset(of: ["IMG_PIXEL", "IMG_NORM_PIXEL", "IMG_THIS_PIXEL", "IMG_THIS_NORM_PIXEL", "IMG_SIZE",
                                                  "vv_FragNormCoord"]))
        // Without images (a plain GLSL shader) the macros are ordinary identifiers.
        XCTAssertEqual(try rewrite("IMG_SIZE(x)", images: nil).text, "IMG_SIZE(x)")
    }

    func testMacroMistakesAreReportedAtTheAuthorsLineAndColumn() {
        let unknown = loadError("void main() {\n  vec4 c = IMG_PIXEL(other, uv);\n}")
        XCTAssertEqual(unknown, ShaderLoadError(file: "look.fs", line: 2, column: 12,
                                                message: "IMG_PIXEL: 'other' is not an image of this shader (images: inputImage, noise)"))
        XCTAssertEqual(loadError("x = IMG_NORM_PIXEL(noise);")?.message, "IMG_NORM_PIXEL takes 2 arguments, found 1")
        XCTAssertEqual(loadError("x = IMG_SIZE;")?.message, "IMG_SIZE must be followed by '('")
        XCTAssertEqual(loadError("x = IMG_THIS_PIXEL(noise")?.message, "IMG_THIS_PIXEL( is never closed")
        XCTAssertEqual(loadError("x = IMG_THIS_PIXEL(noise")?.column, 5)
    }
}
