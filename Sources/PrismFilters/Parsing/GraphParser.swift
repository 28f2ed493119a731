import PrismCore

/// Parses the one-line filter graph language.
///
/// ```
/// graph    := chain (';' chain)*
/// chain    := element (',' element)*
/// element  := label* target ('(' arguments? ')')? label?
/// label    := '[' name ']'
/// target   := name | path | quoted-path
/// argument := (key '=')? value
/// value    := number | number ':' number (':' number)* | '(' number (',' number)+ ')'
///           | '#rrggbb' | '#rrggbbaa' | W 'x' H | word | "string" | 'string'
/// word     := letters, digits and `_-./~:`, from a letter, `_`, `/`, `~`, `./` or `../` (paths, `buffer:a.frag`)
/// ```
///
/// - A plain chain (`invert, mono`): the first element reads the graph input, the last one writes
///   the graph output.
/// - Labels before an element name its inputs, a label after it names its output:
///   `[in]pixellate(scale=16)[px]; radial-gradient(center=0.5:0.5)[mask]; [px][in][mask]blend-mask`.
///   `in` is the graph input; the last chain's unlabelled output (or `[out]`) is the graph output.
/// - A name is letters, digits, `-` and `_`. A target containing `/` or ending in `.fs`, `.frag`,
///   `.glsl`, `.isf` or `.cube` is a file path; paths with spaces are quoted.
///
/// The parser checks syntax only; `GraphChecker` checks the streams, the binder checks names and types.
package struct GraphParser {
    /// File extensions that make an unquoted target a path.
    package static let fileExtensions = [".fs", ".frag", ".glsl", ".isf", ".cube"]

    /// Parses `text`, throwing `GraphSyntaxError` with the column of the first problem.
    package static func parse(_ text: String) throws(GraphSyntaxError) -> GraphAST {
        var parser = GraphParser(text)
        return try parser.parseGraph()
    }

    private let text: String
    private let chars: [Character]
    private var pos = 0

    private init(_ text: String) {
        self.text = text
        self.chars = Array(text)
    }

    // MARK: Helpers

    private var column: Int { pos + 1 }
    private var atEnd: Bool { pos >= chars.count }
    private var current: Character? { pos < chars.count ? chars[pos] : nil }

    private func peek(_ offset: Int = 0) -> Character? {
        let i = pos + offset
        return i < chars.count ? chars[i] : nil
    }

    private mutating func skipSpace() {
        while let c = current, c.isWhitespace { pos += 1 }
    }

    private func fail(_ message: String, at column: Int? = nil) -> GraphSyntaxError {
        GraphSyntaxError(message, column: column ?? self.column)
    }

    private func describeCurrent() -> String {
        guard let c = current else { return "end of text" }
        return "'\(c)'"
    }

    private static func isNameChar(_ c: Character) -> Bool {
        (c.isLetter || c.isNumber || c == "-" || c == "_") && c.isASCII
    }

    /// The unquoted word at the current position contains `/` or ends in a filter file's extension.
    private func nextWordLooksLikePath() -> Bool {
        var word = ""
        var i = pos
        while i < chars.count, !Self.isTargetDelimiter(chars[i]) { word.append(chars[i]); i += 1 }
        let lower = word.lowercased()
        return word.contains("/") || [".fs", ".frag", ".glsl", ".isf", ".cube"].contains { lower.hasSuffix($0) }
    }

    /// Characters that end an unquoted target.
    private static func isTargetDelimiter(_ c: Character) -> Bool {
        c.isWhitespace || ",;()[]=\"'".contains(c)
    }

    // MARK: Grammar

    private mutating func parseGraph() throws(GraphSyntaxError) -> GraphAST {
        skipSpace()
        if atEnd { throw fail("empty filter graph", at: 1) }
        var chains: [GraphChain] = []
        while true {
            skipSpace()
            if atEnd {
                throw fail("expected a filter after ';'")
            }
            if current == ";" { throw fail("empty chain: expected a filter before ';'") }
            chains.append(try parseChain())
            skipSpace()
            if atEnd { break }
            if current == ";" {
                pos += 1
                continue
            }
            // parseChain stops only at ';' or the end.
            throw fail("unexpected \(describeCurrent())")
        }
        return GraphAST(source: text, chains: chains)
    }

    private mutating func parseChain() throws(GraphSyntaxError) -> GraphChain {
        var elements: [GraphElement] = []
        while true {
            skipSpace()
            let implicit: GraphImplicitInput = elements.isEmpty ? .graphInput : .previousElement
            elements.append(try parseElement(implicit: implicit))
            skipSpace()
            guard let c = current else { break }
            if c == "," {
                pos += 1
                skipSpace()
                if atEnd || current == ";" || current == "," {
                    throw fail("expected a filter after ','")
                }
                continue
            }
            if c == ";" { break }
            if c == "[" {
                throw fail("an element has at most one output label; separate filters with ',' or ';'")
            }
            if c == ")" { throw fail("unexpected ')' without a matching '('") }
            if c == "]" { throw fail("unexpected ']'; labels are written [name]") }
            if Self.isNameChar(c) || c == "\"" || c == "'" || c == "/" || c == "." {
                // `my shaders/look.fs`: a path cut at a space.
                if elements.last?.kind == .file || nextWordLooksLikePath() {
                    throw fail("expected ',' or ';' between filters; quote file paths with spaces: \"my shaders/look.fs\"")
                }
                throw fail("expected ',' or ';' between filters")
            }
            throw fail("unexpected character '\(c)'")
        }
        let start = elements.first!.range.start
        let end = elements.last!.range.end
        return GraphChain(elements: elements, range: GraphColumnRange(start: start, end: end))
    }

    private mutating func parseElement(implicit: GraphImplicitInput) throws(GraphSyntaxError) -> GraphElement {
        let start = column
        var inputs: [GraphLabel] = []
        while current == "[" {
            inputs.append(try parseLabel())
            skipSpace()
        }
        let (name, kind, nameRange) = try parseTarget()
        var end = nameRange.end
        skipSpace()
        var arguments: [GraphArgument] = []
        if current == "(" {
            arguments = try parseArguments()
            end = column
            skipSpace()
        }
        var output: GraphLabel?
        if current == "[" {
            let label = try parseLabel()
            output = label
            end = label.range.end
        }
        return GraphElement(name: name, kind: kind, arguments: arguments, inputLabels: inputs,
                            outputLabel: output, implicitInput: inputs.isEmpty ? implicit : (implicit == .previousElement ? .previousElement : .none),
                            range: GraphColumnRange(start: start, end: end), nameRange: nameRange)
    }

    private mutating func parseLabel() throws(GraphSyntaxError) -> GraphLabel {
        let start = column
        pos += 1 // [
        skipSpace()
        let nameStart = pos
        while let c = current, Self.isNameChar(c) { pos += 1 }
        let name = String(chars[nameStart..<pos])
        skipSpace()
        if current == "]" {
            if name.isEmpty { throw fail("empty label", at: start) }
            pos += 1
            return GraphLabel(name: name, range: GraphColumnRange(start: start, end: column))
        }
        if name.isEmpty {
            if atEnd { throw fail("expected a label name after '['") }
            throw fail("unexpected character '\(current!)' in label")
        }
        if atEnd || Self.isTargetDelimiter(current!) || Self.isNameChar(current!) {
            throw fail("expected ']' after label '\(name)'")
        }
        throw fail("unexpected character '\(current!)' in label")
    }

    private mutating func parseTarget() throws(GraphSyntaxError) -> (String, GraphElement.Kind, GraphColumnRange) {
        let start = column
        guard let c = current else { throw fail("expected a filter name") }
        if c == "\"" || c == "'" {
            let path = try parseQuotedString()
            if path.isEmpty { throw fail("empty file path", at: start) }
            return (path, .file, GraphColumnRange(start: start, end: column))
        }
        if c == "," || c == ";" { throw fail("empty element: expected a filter name") }
        if c == "(" { throw fail("expected a filter name before '('") }
        if c == ")" { throw fail("unexpected ')' without a matching '('") }
        if c == "]" { throw fail("unexpected ']'; labels are written [name]") }
        if c == "=" { throw fail("unexpected '='") }
        let runStart = pos
        while let d = current, !Self.isTargetDelimiter(d) { pos += 1 }
        let run = String(chars[runStart..<pos])
        let range = GraphColumnRange(start: start, end: column)
        let lower = run.lowercased()
        if run.contains("/") || Self.fileExtensions.contains(where: { lower.hasSuffix($0) && lower.count > $0.count }) {
            return (run, .file, range)
        }
        for (offset, ch) in run.enumerated() where !Self.isNameChar(ch) {
            throw fail("unexpected character '\(ch)'", at: start + offset)
        }
        return (run, .filter, range)
    }

    private mutating func parseArguments() throws(GraphSyntaxError) -> [GraphArgument] {
        pos += 1 // (
        skipSpace()
        var arguments: [GraphArgument] = []
        if current == ")" {
            pos += 1
            return arguments
        }
        while true {
            skipSpace()
            if atEnd { throw fail("expected ')' after arguments") }
            if current == "," { throw fail("expected an argument before ','") }
            if current == ")" { throw fail("expected an argument after ','") }
            arguments.append(try parseArgument())
            skipSpace()
            guard let c = current else { throw fail("expected ')' after arguments") }
            if c == "," {
                pos += 1
                continue
            }
            if c == ")" {
                pos += 1
                return arguments
            }
            if c == ";" || c == "[" || c == "]" { throw fail("expected ')' after arguments") }
            throw fail("expected ',' or ')' after an argument, found '\(c)'")
        }
    }

    private mutating func parseArgument() throws(GraphSyntaxError) -> GraphArgument {
        let start = column
        var key: String?
        if let c = current, c.isLetter || c == "_" {
            let save = pos
            while let d = current, Self.isNameChar(d) { pos += 1 }
            let word = String(chars[save..<pos])
            skipSpace()
            if current == "=" {
                key = word
                pos += 1
                skipSpace()
                if atEnd || current == "," || current == ")" {
                    throw fail("expected a value after '\(word)='")
                }
            } else {
                pos = save
            }
        } else if current == "=" {
            throw fail("expected a key before '='")
        }
        let valueStart = column
        let value = try parseValue()
        let range = GraphColumnRange(start: start, end: column)
        return GraphArgument(key: key, value: value, range: range,
                             valueRange: GraphColumnRange(start: valueStart, end: column))
    }

    private mutating func parseValue() throws(GraphSyntaxError) -> GraphValue {
        guard let c = current else { throw fail("expected a value") }
        switch c {
        case "\"", "'":
            return .string(try parseQuotedString())
        case "#":
            return try parseColor()
        case "(":
            return try parseParenTuple()
        case "." where peek(1) == "/" || (peek(1) == "." && peek(2) == "/"):  // ./x.png, ../x.png: a path
            return try parseWord()
        case _ where c.isNumber || c == "-" || c == "+" || c == ".":
            return try parseNumericValue()
        case _ where c.isLetter || c == "_" || c == "/" || c == "~":
            return try parseWord()
        default:
            throw fail("unexpected character '\(c)'")
        }
    }

    /// A bare word or path; `:` may follow its first character (`buffer:bufA.frag`).
    private mutating func parseWord() throws(GraphSyntaxError) -> GraphValue {
        let start = pos
        while let d = current, d.isASCII, d.isLetter || d.isNumber || "_-./~".contains(d) || (d == ":" && pos > start) { pos += 1 }
        if let d = current, !Self.isValueEnd(d) {
            throw fail("unexpected character '\(d)' in value")
        }
        return .word(String(chars[start..<pos]))
    }

    private static func isValueEnd(_ c: Character) -> Bool {
        c.isWhitespace || c == "," || c == ")" || c == ";"
    }

    private mutating func parseQuotedString() throws(GraphSyntaxError) -> String {
        let start = column
        let quote = current!
        pos += 1
        var result = ""
        while true {
            guard let c = current else { throw fail("unterminated string", at: start) }
            pos += 1
            if c == quote { return result }
            if c == "\\" {
                guard let e = current else { throw fail("unterminated string", at: start) }
                pos += 1
                switch e {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "\\", "\"", "'": result.append(e)
                default: throw fail("unknown escape '\\\(e)' in string", at: column - 2)
                }
            } else {
                result.append(c)
            }
        }
    }

    private mutating func parseColor() throws(GraphSyntaxError) -> GraphValue {
        let start = column
        pos += 1
        let digitsStart = pos
        while let c = current, c.isHexDigit { pos += 1 }
        let hex = String(chars[digitsStart..<pos])
        if let c = current, !Self.isValueEnd(c) {
            throw fail("unexpected character '\(c)' in colour")
        }
        guard let color = HexColor.parse("#" + hex) else {
            throw fail("invalid colour '#\(hex)': expected #rrggbb or #rrggbbaa", at: start)
        }
        return .color(red: color.x, green: color.y, blue: color.z, alpha: color.w)
    }

    private mutating func parseParenTuple() throws(GraphSyntaxError) -> GraphValue {
        let open = column
        pos += 1
        var values: [Double] = []
        while true {
            skipSpace()
            guard let c = current else { throw fail("expected ')' to close the tuple opened at column \(open)") }
            if c == ")" {
                throw fail(values.isEmpty ? "empty tuple" : "expected a number after ','")
            }
            if c == "," { throw fail("expected a number before ','") }
            values.append(try parseNumber())
            skipSpace()
            guard let d = current else { throw fail("expected ')' to close the tuple opened at column \(open)") }
            if d == "," {
                pos += 1
                continue
            }
            if d == ")" {
                pos += 1
                break
            }
            throw fail("expected ',' or ')' in tuple, found '\(d)'")
        }
        if values.count < 2 { throw fail("a tuple needs at least two numbers", at: open) }
        return .tuple(values)
    }

    /// A number, a size (`1280x720`) or a `:`-separated tuple.
    private mutating func parseNumericValue() throws(GraphSyntaxError) -> GraphValue {
        let start = column
        let token = scanNumberToken()
        if let xIndex = token.firstIndex(where: { $0 == "x" || $0 == "X" }) {
            let w = token[token.startIndex..<xIndex], h = token[token.index(after: xIndex)...]
            if let width = Int(w), let height = Int(h), width > 0, height > 0, !w.hasPrefix("+"), !h.hasPrefix("+") {
                return .size(width: width, height: height)
            }
            throw fail("invalid size '\(token)': expected WIDTHxHEIGHT", at: start)
        }
        // A percentage (`75%`, placements of the compositing filters) stays a word: the filter reads it.
        if token.hasSuffix("%"), Self.number(from: String(token.dropLast())) != nil { return .word(token) }
        guard let first = Self.number(from: token) else {
            throw fail(Self.invalidNumber(token), at: start)
        }
        guard current == ":" else { return .number(first) }
        var values = [first]
        while current == ":" {
            pos += 1
            values.append(try parseNumber())
        }
        return .tuple(values)
    }

    private mutating func parseNumber() throws(GraphSyntaxError) -> Double {
        let start = column
        guard let c = current, c.isNumber || c == "-" || c == "+" || c == "." else {
            throw fail("expected a number")
        }
        let token = scanNumberToken()
        guard let value = Self.number(from: token) else { throw fail(Self.invalidNumber(token), at: start) }
        return value
    }

    /// Everything up to a delimiter, so that `1.2.3` and `12abc` are reported whole.
    private mutating func scanNumberToken() -> String {
        let start = pos
        while let c = current, !c.isWhitespace, !",;:()[]=\"'".contains(c) { pos += 1 }
        return String(chars[start..<pos])
    }

    /// Why `number(from:)` refused a token.
    static func invalidNumber(_ token: String) -> String {
        let digitsFirst = token.drop { $0 == "-" || $0 == "+" }.first.map { $0.isNumber || $0 == "." } ?? false
        return digitsFirst && Double(token)?.isInfinite == true ? "number '\(token)' is too large" : "invalid number '\(token)'"
    }

    /// Decimal numbers only: optional sign, digits with an optional fraction, optional exponent.
    /// (`Double(String)` would also take `inf`, `nan` and hex floats.)
    static func number(from token: String) -> Double? {
        var s = Substring(token)
        if s.first == "-" || s.first == "+" { s = s.dropFirst() }
        var mantissaDigits = 0
        var i = s.startIndex
        while i < s.endIndex, s[i].isASCII, s[i].isNumber { mantissaDigits += 1; i = s.index(after: i) }
        if i < s.endIndex, s[i] == "." {
            i = s.index(after: i)
            while i < s.endIndex, s[i].isASCII, s[i].isNumber { mantissaDigits += 1; i = s.index(after: i) }
        }
        guard mantissaDigits > 0 else { return nil }
        if i < s.endIndex, s[i] == "e" || s[i] == "E" {
            i = s.index(after: i)
            if i < s.endIndex, s[i] == "-" || s[i] == "+" { i = s.index(after: i) }
            var exponentDigits = 0
            while i < s.endIndex, s[i].isASCII, s[i].isNumber { exponentDigits += 1; i = s.index(after: i) }
            guard exponentDigits > 0 else { return nil }
        }
        guard i == s.endIndex else { return nil }
        // `Double` turns 1e309 into infinity; no parameter means that.
        guard let value = Double(token), value.isFinite else { return nil }
        return value
    }
}
