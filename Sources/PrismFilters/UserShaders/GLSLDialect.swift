/// Translates desktop-GLSL habits that GLSL ES 3.00 rejects but desktop ISF hosts accept, keeping every
/// line where it was (so compile errors still point at the author's lines):
/// - **built-in overloads**: a function named like a built-in (`float sign(vec2, vec2, vec2)`) is renamed
///   `isf_NAME`, with the calls that pass as many arguments as it takes (the built-in keeps the others);
/// - **non-constant global initialisers** (`float d = 1.0 / uniformValue;`): the declaration stays, the
///   assignment moves to the start of `main` (desktop GLSL runs them there too);
/// - **int literals where a float is meant**: `floatVariable > 0` and `float x = 0;` get `0.0`;
/// - **implicit conversions** of int expressions to float or uint, by type (`GLSLImplicitConversions`);
/// - **int/uint mixing**: an int literal beside a uint operand (a uint variable, a swizzle of a uvec, a call
///   of a function returning uint) gets `u`; `uintVariable = intExpression;` becomes `= uint(…);`.
enum GLSLDialect {
    /// `lines` translated; lines that changed are marked edited.
    /// `floats`: names declared float outside the text (ISF float inputs); `declared`: every name declared
    /// outside the text with its GLSL type (the ISF preamble), for `GLSLImplicitConversions`.
    static func translate(_ lines: [SourceLine], floats: Set<String> = [], declared: [String: String] = [:]) -> [SourceLine] {
        let text = lines.map(\.text).joined(separator: "\n")
        let output = translate(text, floats: floats, declared: declared)
        guard output != text else { return lines }
        let outLines = splitLines(output)
        guard outLines.count == lines.count else { return lines }  // never move lines
        return zip(lines, outLines).map { line, newText in
            var line = line
            if line.text != newText { line.text = newText; line.edited = true }
            return line
        }
    }

    static func translate(_ text: String, floats: Set<String> = [], declared: [String: String] = [:]) -> String {
        var prefixer = GLSLPrefixer(prefix: "")
        var pieces = prefixer.pieces(text)
        renameBuiltinOverloads(&pieces)
        floatLiterals(&pieces, floats: floats)
        unsignedOperands(&pieces)
        moveGlobalInitialisers(&pieces)
        // Implicit int → float/uint conversions: a type pass over the text the steps above produced.
        return GLSLImplicitConversions.apply(pieces.map(\.output).joined(), globals: declared)
    }

    // MARK: Tokens

    private static func word(_ piece: GLSLPrefixer.Piece) -> String? {
        if case .identifier(let original, _) = piece { return original }
        return nil
    }

    private static func symbol(_ piece: GLSLPrefixer.Piece) -> Character? {
        if case .symbol(let c) = piece { return c }
        return nil
    }

    /// Whitespace, newlines and comments.
    private static func isBlank(_ piece: GLSLPrefixer.Piece) -> Bool {
        guard case .text(let s) = piece else { return false }
        return s.allSatisfy(\.isWhitespace) || s.hasPrefix("//") || s.hasPrefix("/*")
    }

    private static func next(_ pieces: [GLSLPrefixer.Piece], after i: Int) -> Int? {
        var j = i + 1
        while j < pieces.count, isBlank(pieces[j]) { j += 1 }
        return j < pieces.count ? j : nil
    }

    private static func previous(_ pieces: [GLSLPrefixer.Piece], before i: Int) -> Int? {
        var j = i - 1
        while j >= 0, isBlank(pieces[j]) { j -= 1 }
        return j >= 0 ? j : nil
    }

    /// The index of the `)` matching the `(` at `open`, and the number of arguments between them.
    private static func arguments(_ pieces: [GLSLPrefixer.Piece], open: Int) -> (close: Int, count: Int)? {
        var depth = 0, commas = 0, empty = true
        var j = open
        while j < pieces.count {
            let piece = pieces[j]
            if let c = symbol(piece) {
                if c == "(" || c == "[" || c == "{" { depth += 1 }
                else if c == ")" || c == "]" || c == "}" {
                    depth -= 1
                    if depth == 0 { return (j, empty ? 0 : commas + 1) }
                } else if c == ",", depth == 1 { commas += 1 }
                if j != open, !(depth == 0) { empty = false }
            } else if j != open, !isBlank(piece), !(word(piece) == "void" && depth == 1) {
                empty = false
            }
            j += 1
        }
        return nil
    }

    // MARK: Built-in overloads

    static let builtinFunctions: Set<String> = [
        "radians", "degrees", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
        "atanh", "pow", "exp", "log", "exp2", "log2", "sqrt", "inversesqrt", "abs", "sign", "floor", "trunc", "round",
        "roundEven", "ceil", "fract", "mod", "modf", "min", "max", "clamp", "mix", "step", "smoothstep", "isnan", "isinf",
        "length", "distance", "dot", "cross", "normalize", "faceforward", "reflect", "refract", "matrixCompMult",
        "outerProduct", "transpose", "determinant", "inverse", "lessThan", "lessThanEqual", "greaterThan",
        "greaterThanEqual", "equal", "notEqual", "any", "all", "not", "texture",
    ]

    /// Argument counts of the built-ins above that take other than one.
    static let builtinArities: [String: Set<Int>] = [
        "atan": [1, 2], "pow": [2], "mod": [2], "modf": [2], "min": [2], "max": [2], "clamp": [3], "mix": [3], "step": [2],
        "smoothstep": [3], "distance": [2], "dot": [2], "cross": [2], "faceforward": [3], "reflect": [2], "refract": [3],
        "matrixCompMult": [2], "outerProduct": [2], "lessThan": [2], "lessThanEqual": [2], "greaterThan": [2],
        "greaterThanEqual": [2], "equal": [2], "notEqual": [2], "texture": [2, 3],
    ]

    static let types: Set<String> = [
        "void", "bool", "int", "uint", "float", "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "uvec2", "uvec3", "uvec4",
        "bvec2", "bvec3", "bvec4", "mat2", "mat3", "mat4", "mat2x2", "mat2x3", "mat2x4", "mat3x2", "mat3x3", "mat3x4",
        "mat4x2", "mat4x3", "mat4x4",
    ]

    private static func renameBuiltinOverloads(_ pieces: inout [GLSLPrefixer.Piece]) {
        // Definitions and prototypes at the top level: TYPE NAME ( … ).
        var arities: [String: Set<Int>] = [:]
        var depth = 0, conditionals = 0
        for i in pieces.indices {
            if let c = symbol(pieces[i]) { depth += c == "{" ? 1 : c == "}" ? -1 : 0 }
            if case .text(let s) = pieces[i], s.hasPrefix("#") {
                let directive = String(s.dropFirst()).trimmingLeadingWhitespace()
                if directive.hasPrefix("if") { conditionals += 1 } else if directive.hasPrefix("endif") { conditionals -= 1 }
            }
            guard depth == 0, let name = word(pieces[i]), builtinFunctions.contains(name),
                  let before = previous(pieces, before: i), let type = word(pieces[before]), types.contains(type),
                  let open = next(pieces, after: i), symbol(pieces[open]) == "(",
                  let (_, count) = arguments(pieces, open: open) else { continue }
            // The built-in's own arity inside `#if…`: a copy for hosts that lack it (`#ifndef GL_ES`), left alone.
            if conditionals > 0, (builtinArities[name] ?? [1]).contains(count) { continue }
            arities[name, default: []].insert(count)
        }
        guard !arities.isEmpty else { return }
        for i in pieces.indices {
            guard let name = word(pieces[i]), let counts = arities[name],
                  previous(pieces, before: i).map({ symbol(pieces[$0]) != "." }) ?? true,
                  let open = next(pieces, after: i), symbol(pieces[open]) == "(",
                  let (_, count) = arguments(pieces, open: open), counts.contains(count) else { continue }
            pieces[i] = .identifier(original: name, renamed: "isf_" + name)
        }
    }

    // MARK: Int literals meant as floats

    private static func isIntLiteral(_ piece: GLSLPrefixer.Piece) -> Bool {
        guard case .text(let s) = piece, let first = s.first, first.isNumber else { return false }
        return s.allSatisfy(\.isNumber) && !(s.count > 1 && first == "0")
    }

    private static func floatLiterals(_ pieces: inout [GLSLPrefixer.Piece], floats declared: Set<String>) {
        // Names declared float, and names declared otherwise anywhere (then left alone).
        var floats = declared, others = Set<String>()
        for i in pieces.indices {
            guard let type = word(pieces[i]), types.contains(type) || type == "struct",
                  let n = next(pieces, after: i), let name = word(pieces[n]), !types.contains(name) else { continue }
            if type == "float" { floats.insert(name) } else { others.insert(name) }
        }
        let floatNames = floats.subtracting(others)
        let delimiters: Set<Character> = [")", ";", ",", "&", "|", "?", ":"]
        for i in pieces.indices where isIntLiteral(pieces[i]) {
            guard let before = previous(pieces, before: i), let after = next(pieces, after: i),
                  let c = symbol(pieces[after]), delimiters.contains(c),
                  let op = symbol(pieces[before]) else { continue }
            // `NAME <op> 0`, `NAME <op>= 0`, `[float] NAME = 0`, `NAME += 0` (and -=, *=, /=).
            var left = previous(pieces, before: before)
            guard "<>=".contains(op) else { continue }
            if op == "=", let l = left, let c = symbol(pieces[l]) {
                guard "<>=!+-*/".contains(c) else { continue }
                left = previous(pieces, before: l)
                if c == "<" || c == ">", let l2 = left, symbol(pieces[l2]) == c { continue }  // <<=, >>=
            } else if op == "<" || op == ">", let l = left, symbol(pieces[l]) == op {
                continue  // a shift
            }
            guard let l = left, let name = word(pieces[l]), floatNames.contains(name),
                  previous(pieces, before: l).map({ symbol(pieces[$0]) != "." }) ?? true else { continue }
            if case .text(let s) = pieces[i] { pieces[i] = .text(s + ".0") }
        }
        // `return 0;` in a function returning float.
        var depth = 0, returnType: String?
        for i in pieces.indices {
            if let c = symbol(pieces[i]) {
                if c == "{" {
                    if depth == 0 { returnType = functionReturnType(pieces, brace: i) }
                    depth += 1
                } else if c == "}" { depth -= 1 }
                continue
            }
            guard returnType == "float", word(pieces[i]) == "return", let literal = next(pieces, after: i),
                  isIntLiteral(pieces[literal]), let end = next(pieces, after: literal), symbol(pieces[end]) == ";",
                  case .text(let s) = pieces[literal] else { continue }
            pieces[literal] = .text(s + ".0")
        }
    }

    /// The index of `NAME` in `NAME(…) {` for the `{` at `brace`; nil when it does not open a function.
    private static func functionName(_ pieces: [GLSLPrefixer.Piece], brace: Int) -> Int? {
        guard let close = previous(pieces, before: brace), symbol(pieces[close]) == ")" else { return nil }
        var j = close, level = 0
        while j >= 0 {
            if let c = symbol(pieces[j]) { level += c == ")" ? 1 : c == "(" ? -1 : 0 }
            if level == 0 { break }
            j -= 1
        }
        guard let name = previous(pieces, before: j), word(pieces[name]) != nil else { return nil }
        return name
    }

    /// `TYPE` of `TYPE NAME(…) {` for the `{` at `brace`; nil when it does not open a function.
    private static func functionReturnType(_ pieces: [GLSLPrefixer.Piece], brace: Int) -> String? {
        guard let name = functionName(pieces, brace: brace), let type = previous(pieces, before: name) else { return nil }
        return word(pieces[type])
    }

    // MARK: int/uint mixing

    private static func isIntegerLiteral(_ piece: GLSLPrefixer.Piece) -> Bool {
        guard case .text(let s) = piece, let first = s.first, first.isNumber else { return false }
        if s.hasPrefix("0x") || s.hasPrefix("0X") { return s.dropFirst(2).allSatisfy(\.isHexDigit) && s.count > 2 }
        return s.allSatisfy(\.isNumber)
    }

    private static func unsignedOperands(_ pieces: inout [GLSLPrefixer.Piece]) {
        var unsigned = Set<String>(), vectors = Set<String>(), functions = Set<String>()
        var signed = Set<String>(), others = Set<String>()
        var depth = 0
        for i in pieces.indices {
            if let c = symbol(pieces[i]) { depth += c == "{" ? 1 : c == "}" ? -1 : 0 }
            guard let type = word(pieces[i]), types.contains(type),
                  previous(pieces, before: i).map({ symbol(pieces[$0]) != "." }) ?? true,
                  let n = next(pieces, after: i), let name = word(pieces[n]), !types.contains(name) else { continue }
            let call = next(pieces, after: n).map { symbol(pieces[$0]) == "(" } ?? false
            if call {
                if depth == 0, type == "uint" { functions.insert(name) }
                continue
            }
            switch type {
            case "uint": unsigned.insert(name)
            case "uvec2", "uvec3", "uvec4": vectors.insert(name)
            case "int", "ivec2", "ivec3", "ivec4": signed.insert(name)
            default: others.insert(name)
            }
        }
        let scalars = unsigned.subtracting(signed).subtracting(others)
        let uvecs = vectors.subtracting(signed).subtracting(others)
        let ints = signed.subtracting(unsigned).subtracting(vectors)
        guard !scalars.isEmpty || !uvecs.isEmpty || !functions.isEmpty else { return }

        /// The operand ending at `j` (left of an operator) is unsigned.
        func unsignedEndingAt(_ j: Int) -> Bool {
            if case .text(let literal) = pieces[j], literal.hasSuffix("u"), literal.first?.isNumber == true { return true }
            if let name = word(pieces[j]) {
                if let dot = previous(pieces, before: j), symbol(pieces[dot]) == "." {
                    return previous(pieces, before: dot).flatMap { word(pieces[$0]) }.map(uvecs.contains) ?? false
                }
                return scalars.contains(name)
            }
            if symbol(pieces[j]) == ")" {
                var k = j, level = 0
                while k >= 0 {
                    if let c = symbol(pieces[k]) { level += c == ")" ? 1 : c == "(" ? -1 : 0 }
                    if level == 0 { break }
                    k -= 1
                }
                return previous(pieces, before: k).flatMap { word(pieces[$0]) }.map(functions.contains) ?? false
            }
            return false
        }
        /// The operand starting at `j` (right of an operator) is unsigned.
        func unsignedStartingAt(_ j: Int) -> Bool {
            guard let name = word(pieces[j]) else { return false }
            let after = next(pieces, after: j).flatMap { symbol(pieces[$0]) }
            if after == "." { return uvecs.contains(name) }
            if after == "(" { return functions.contains(name) }
            return after != "[" && scalars.contains(name)
        }
        let operators: Set<Character> = ["=", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "!"]
        for i in pieces.indices where isIntegerLiteral(pieces[i]) {
            var unsignedNeighbour = false
            // OPERAND op LITERAL (op of one or two characters).
            if var op = previous(pieces, before: i), let c = symbol(pieces[op]), operators.contains(c) {
                if let op2 = previous(pieces, before: op), let c2 = symbol(pieces[op2]), operators.contains(c2) { op = op2 }
                if let operand = previous(pieces, before: op), unsignedEndingAt(operand) { unsignedNeighbour = true }
            }
            // LITERAL op OPERAND.
            if !unsignedNeighbour, var op = next(pieces, after: i), let c = symbol(pieces[op]), operators.contains(c), c != "!" {
                if let op2 = next(pieces, after: op), let c2 = symbol(pieces[op2]), operators.contains(c2) { op = op2 }
                if let operand = next(pieces, after: op), unsignedStartingAt(operand) { unsignedNeighbour = true }
            }
            if unsignedNeighbour, case .text(let s) = pieces[i] { pieces[i] = .text(s + "u") }
        }
        // uintVariable = intExpression;
        for i in pieces.indices where symbol(pieces[i]) == "=" {
            guard let left = previous(pieces, before: i), let name = word(pieces[left]), scalars.contains(name),
                  previous(pieces, before: left).map({ symbol(pieces[$0]) != "." }) ?? true,
                  let right = next(pieces, after: i), let first = word(pieces[right]), ints.contains(first),
                  !(next(pieces, after: i).map { symbol(pieces[$0]) == "=" } ?? false) else { continue }
            var k = right, level = 0
            while k < pieces.count {
                if let c = symbol(pieces[k]) {
                    level += "([".contains(c) ? 1 : ")]".contains(c) ? -1 : 0
                    if level < 0 || (level == 0 && (c == ";" || c == ",")) { break }
                }
                k += 1
            }
            guard k < pieces.count else { continue }
            pieces[right] = .text("uint(" + pieces[right].output)
            pieces[k] = .text(")" + pieces[k].output)
        }
    }

    // MARK: Global initialisers

    private static func moveGlobalInitialisers(_ pieces: inout [GLSLPrefixer.Piece]) {
        var constants = Set<String>()
        var moved: [String] = []
        var depth = 0, parens = 0
        var statementStart = 0
        var i = 0
        var mainBrace: Int?
        while i < pieces.count {
            let piece = pieces[i]
            if case .text(let s) = piece, s.hasPrefix("#") {
                // A directive: `#define NAME` names a constant; its line ends a statement.
                if s == "#define" || s.hasSuffix("define"), let n = next(pieces, after: i), let name = word(pieces[n]) { constants.insert(name) }
                while i < pieces.count, pieces[i] != .text("\n") { i += 1 }
                statementStart = i + 1
                continue
            }
            if let c = symbol(piece) {
                switch c {
                case "(": parens += 1
                case ")": parens -= 1
                case "{":
                    if depth == 0, mainBrace == nil, isMainBody(pieces, brace: i) { mainBrace = i }
                    depth += 1
                case "}":
                    depth -= 1
                    if depth == 0 { statementStart = i + 1 }
                case ";" where depth == 0 && parens == 0:
                    if let assignment = moveInitialiser(&pieces, from: statementStart, to: i, constants: &constants) {
                        moved.append(assignment)
                    }
                    statementStart = i + 1
                default: break
                }
            }
            i += 1
        }
        guard !moved.isEmpty, let mainBrace else { return }
        pieces[mainBrace] = .text("{ " + moved.joined(separator: " "))
    }

    private static func isMainBody(_ pieces: [GLSLPrefixer.Piece], brace: Int) -> Bool {
        functionName(pieces, brace: brace).map { word(pieces[$0]) == "main" } ?? false
    }

    /// For `TYPE NAME[…] = EXPR` between `start` and `end` (the `;`) whose EXPR is not constant: removes
    /// `= EXPR` (keeping its newlines) and returns `NAME = EXPR;`. Records `const` declarations.
    private static func moveInitialiser(_ pieces: inout [GLSLPrefixer.Piece], from start: Int, to end: Int,
                                        constants: inout Set<String>) -> String? {
        let significant = (start..<end).filter { !isBlank(pieces[$0]) }
        guard significant.count >= 4, let first = word(pieces[significant[0]]) else { return nil }
        if first == "const", significant.count > 2, let name = word(pieces[significant[2]]) {
            constants.insert(name)
            return nil
        }
        var k = 0
        if ["highp", "mediump", "lowp"].contains(first) { k = 1 }
        guard let type = word(pieces[significant[k]]), types.contains(type), type != "void",
              k + 2 < significant.count, let name = word(pieces[significant[k + 1]]) else { return nil }
        var e = k + 2
        if symbol(pieces[significant[e]]) == "[" {
            while e < significant.count, symbol(pieces[significant[e]]) != "]" { e += 1 }
            e += 1
        }
        guard e < significant.count, symbol(pieces[significant[e]]) == "=" else { return nil }
        let expression = significant[e + 1]..<end
        var depth = 0, constant = true
        for j in expression {
            if let c = symbol(pieces[j]) {
                depth += "([".contains(c) ? 1 : ")]".contains(c) ? -1 : 0
                if c == ",", depth == 0 { return nil }  // several declarators: left as written
            }
            if let w = word(pieces[j]), !types.contains(w), !builtinFunctions.contains(w), !constants.contains(w),
               !["true", "false"].contains(w), previous(pieces, before: j).map({ symbol(pieces[$0]) != "." }) ?? true {
                constant = false
            }
        }
        guard !constant else { return nil }
        let text = expression.map { pieces[$0].output }.joined().split(whereSeparator: \.isNewline).joined(separator: " ")
        for j in (significant[e - 1] + 1)..<end {
            pieces[j] = .text(pieces[j].output.filter { $0 == "\n" })
        }
        return "\(name) = \(text);"
    }
}
