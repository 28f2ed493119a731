/// Desktop GLSL's implicit conversions (GLSL 1.20+: int → uint → float, ivecN/uvecN → vecN), which GLSL ES
/// lacks, made explicit by a small type pass: it knows the declared types of uniforms, globals, locals,
/// parameters and user functions (with their overloads), infers the type of each expression, and wraps
/// an integer operand in `float(…)`/`vecN(…)` (or `uint(…)`) where desktop GLSL would convert it:
/// - an argument passed to a user function's float (or uint) parameter, `charsFor4Digit(int(year), false)`;
/// - the integer side of an arithmetic or comparison operator whose other side is float (`bars - 1`,
///   `RENDERSIZE / glyphSize` with a uvec2, `int(x) == floatInput`), or uint beside int;
/// - an integer argument of a float built-in (`mod(uv, glyphSize)`, `sin(n)`), the integer right side of an
///   assignment or initialiser to a float (or uint) variable, and `return` of an integer from a float function.
///
/// Only text is added, inside lines: line numbers stay the author's. Where a type is not known (struct
/// fields, macros, matrices), nothing is inserted, so a shader that compiles is never touched.
enum GLSLImplicitConversions {
    /// `text` with the conversions made explicit. `globals`: names declared outside the text (uniforms of
    /// the ISF preamble), name → GLSL type.
    static func apply(_ text: String, globals: [String: String] = [:]) -> String {
        var prefixer = GLSLPrefixer(prefix: "")
        let pieces = prefixer.pieces(text)
        var pass = Pass(pieces: pieces, globals: globals)
        pass.run()
        // Nesting beyond what the parser follows (hostile input): left as written, for the compiler to judge.
        return pass.abandoned ? text : pass.output()
    }

    /// How deep statements and expressions may nest before the pass gives up (each level is a few stack
    /// frames; loading may run on a thread with a small stack: 100 fits a 512 KiB one in a debug build with
    /// half of it to spare, 200 did not).
    static let maximumNesting = 100

    /// A scalar or vector type; matrices, samplers, structs and arrays of them are "unknown" (nil).
    struct ValueType: Equatable {
        enum Base { case float, int, uint, bool }
        var base: Base
        var count: Int

        init(_ base: Base, _ count: Int) {
            self.base = base
            self.count = count
        }

        init?(name: String) {
            switch name {
            case "float": self.init(.float, 1)
            case "int": self.init(.int, 1)
            case "uint": self.init(.uint, 1)
            case "bool": self.init(.bool, 1)
            default:
                guard name.count == 4 || name.count == 5, let n = name.last?.wholeNumberValue, (2...4).contains(n) else { return nil }
                switch name.dropLast() {
                case "vec": self.init(.float, n)
                case "ivec": self.init(.int, n)
                case "uvec": self.init(.uint, n)
                case "bvec": self.init(.bool, n)
                default: return nil
                }
            }
        }

        var isInteger: Bool { base == .int || base == .uint }
        var isNumeric: Bool { base != .bool }

        /// The constructor that converts a value of this shape to `base`.
        func constructor(_ base: Base) -> String {
            if count == 1 {
                switch base { case .float: return "float"; case .int: return "int"; case .uint: return "uint"; case .bool: return "bool" }
            }
            switch base { case .float: return "vec\(count)"; case .int: return "ivec\(count)"; case .uint: return "uvec\(count)"; case .bool: return "bvec\(count)" }
        }
    }

    struct Token {
        enum Kind { case word, number, op }
        var kind: Kind
        var text: String
        /// Piece indices the token spans.
        var first: Int
        var last: Int
    }

    /// An expression parsed: its type (nil when unknown) and the tokens it spans.
    struct Operand {
        var type: ValueType?
        var first: Int
        var last: Int
        var isIntLiteral = false
    }

    struct Signature {
        var parameters: [(type: ValueType?, writes: Bool)]
        var result: ValueType?
    }

    struct Symbol {
        var type: ValueType?
        var isArray: Bool
    }

    static let qualifiers: Set<String> = ["const", "uniform", "in", "out", "inout", "highp", "mediump", "lowp", "flat",
                                          "smooth", "varying", "attribute", "centroid", "invariant", "precise", "noperspective"]
    static let otherTypes: Set<String> = ["void", "mat2", "mat3", "mat4", "mat2x2", "mat2x3", "mat2x4", "mat3x2", "mat3x3",
                                          "mat3x4", "mat4x2", "mat4x3", "mat4x4", "sampler2D", "sampler3D", "samplerCube",
                                          "isampler2D", "usampler2D", "sampler2DArray", "sampler2DShadow"]
    /// Built-ins whose arguments are floats (genType); the ones in `integerToo` also take ints.
    static let floatBuiltins: Set<String> = [
        "radians", "degrees", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
        "pow", "exp", "log", "exp2", "log2", "sqrt", "inversesqrt", "floor", "trunc", "round", "roundEven", "ceil", "fract",
        "mod", "min", "max", "clamp", "mix", "step", "smoothstep", "length", "distance", "dot", "cross", "normalize",
        "faceforward", "reflect", "refract", "abs", "sign",
    ]
    static let integerToo: Set<String> = ["abs", "sign", "min", "max", "clamp"]
    static let assignments: Set<String> = ["=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="]
    static let operators = ["<<=", ">>=", "++", "--", "<=", ">=", "==", "!=", "&&", "||", "^^", "+=", "-=", "*=", "/=", "%=",
                            "&=", "|=", "^=", "<<", ">>"]

    static func precedence(_ op: String) -> Int? {
        switch op {
        case "*", "/", "%": 12
        case "+", "-": 11
        case "<<", ">>": 10
        case "<", ">", "<=", ">=": 9
        case "==", "!=": 8
        case "&": 7
        case "^": 6
        case "|": 5
        case "&&": 4
        case "^^": 3
        case "||": 2
        case "?": 1
        default: assignments.contains(op) ? 0 : nil
        }
    }

    struct Pass {
        let pieces: [GLSLPrefixer.Piece]
        var tokens: [Token] = []
        var position = 0
        var before: [Int: String] = [:]
        var after: [Int: String] = [:]
        var scopes: [[String: Symbol]]
        var functions: [String: [Signature]] = [:]
        var structs: Set<String> = []
        var returnType: ValueType?
        /// Nesting of statements and expressions now, and whether it ever went past `maximumNesting`.
        var nesting = 0
        var abandoned = false

        init(pieces: [GLSLPrefixer.Piece], globals: [String: String]) {
            self.pieces = pieces
            scopes = [globals.mapValues { Symbol(type: ValueType(name: $0), isArray: false) }]
            for name in ["gl_FragCoord", "gl_FragColor", "gl_Position"] { scopes[0][name] = Symbol(type: ValueType(.float, 4), isArray: false) }
            scopes[0]["gl_PointCoord"] = Symbol(type: ValueType(.float, 2), isArray: false)
            scopes[0]["gl_VertexID"] = Symbol(type: ValueType(.int, 1), isArray: false)
            tokens = Self.tokenise(pieces)
        }

        /// Significant tokens: comments, blanks and preprocessor lines dropped, operators of 2–3 characters joined.
        static func tokenise(_ pieces: [GLSLPrefixer.Piece]) -> [Token] {
            var tokens: [Token] = []
            var i = 0
            while i < pieces.count {
                switch pieces[i] {
                case .text(let s):
                    if s.hasPrefix("#") {
                        // The directive's line, with `\` continuations.
                        var continued = false
                        while i < pieces.count {
                            if pieces[i] == .text("\n") { if !continued { break } }
                            if case .symbol(let c) = pieces[i] { continued = c == "\\" } else if case .text(let t) = pieces[i], !t.allSatisfy(\.isWhitespace) { continued = false }
                            i += 1
                        }
                        continue
                    }
                    if let first = s.first, first.isNumber || (first == "." && s.count > 1) {
                        tokens.append(Token(kind: .number, text: s, first: i, last: i))
                    }
                case .identifier(let original, _):
                    tokens.append(Token(kind: .word, text: original, first: i, last: i))
                case .symbol(let c):
                    var text = String(c), last = i
                    // Join adjacent symbols into the longest operator.
                    for length in [3, 2] {
                        var j = i, candidate = ""
                        while j < pieces.count, candidate.count < length, case .symbol(let d) = pieces[j] { candidate.append(d); j += 1 }
                        if candidate.count == length, GLSLImplicitConversions.operators.contains(candidate) { text = candidate; last = j - 1; break }
                    }
                    tokens.append(Token(kind: .op, text: text, first: i, last: last))
                    i = last
                }
                i += 1
            }
            return tokens
        }

        func output() -> String {
            var out = ""
            for (index, piece) in pieces.enumerated() {
                if let text = before[index] { out += text }
                out += piece.output
                if let text = after[index] { out += text }
            }
            return out
        }

        // MARK: Tokens

        /// Nil at the end, and everywhere once abandoned (so every loop ends).
        func peek(_ offset: Int = 0) -> Token? {
            !abandoned && position + offset < tokens.count ? tokens[position + offset] : nil
        }

        /// Enters a nested statement or expression; false (and the pass abandoned) when too deep.
        mutating func enter() -> Bool {
            nesting += 1
            if nesting > GLSLImplicitConversions.maximumNesting { abandoned = true }
            return !abandoned
        }

        func at(_ text: String, _ offset: Int = 0) -> Bool { peek(offset)?.text == text && peek(offset)?.kind != .number }

        mutating func expect(_ text: String) {
            if at(text) { position += 1 }
        }

        /// Skips to just after the next `stop` at this nesting level (or to a closing bracket of an outer one).
        mutating func skip(past stop: String) {
            var depth = 0
            while let t = peek() {
                if t.kind == .op {
                    if ["(", "[", "{"].contains(t.text) {
                        depth += 1
                    } else if [")", "]", "}"].contains(t.text) {
                        if depth == 0 {
                            if t.text == stop { position += 1 }
                            return
                        }
                        depth -= 1
                        if depth == 0, t.text == stop { position += 1; return }
                    } else if depth == 0, t.text == stop {
                        position += 1
                        return
                    }
                }
                position += 1
            }
        }

        // MARK: Symbols

        func lookup(_ name: String) -> Symbol? {
            for scope in scopes.reversed() { if let symbol = scope[name] { return symbol } }
            return nil
        }

        mutating func declare(_ name: String, _ symbol: Symbol) { scopes[scopes.count - 1][name] = symbol }

        func isTypeName(_ word: String) -> Bool {
            ValueType(name: word) != nil || GLSLImplicitConversions.otherTypes.contains(word) || structs.contains(word)
        }

        // MARK: Edits

        /// Wraps the operand in a conversion to `base`.
        mutating func convert(_ operand: Operand, from type: ValueType, to base: ValueType.Base) {
            if operand.isIntLiteral, base == .uint, type.base == .int {
                after[tokens[operand.last].last, default: ""] += "u"
            } else if operand.isIntLiteral, base == .float {
                after[tokens[operand.last].last, default: ""] += ".0"
            } else {
                before[tokens[operand.first].first] = type.constructor(base) + "(" + (before[tokens[operand.first].first] ?? "")
                after[tokens[operand.last].last, default: ""] += ")"
            }
        }

        /// Converts `operand` to the base of `target` where desktop GLSL would do so implicitly.
        mutating func convert(_ operand: Operand, toMatch target: ValueType?) {
            guard let type = operand.type, let target, type.base != target.base, type.isInteger,
                  target.base == .float || (target.base == .uint && type.base == .int) else { return }
            convert(operand, from: type, to: target.base)
        }

        // MARK: Statements

        mutating func run() {
            while !abandoned, position < tokens.count {
                let start = position
                if !functionDefinition() { statement() }
                if position == start { position += 1 }
            }
        }

        /// `TYPE NAME ( PARAMETERS ) { … }` or `… ;` at the top level.
        mutating func functionDefinition() -> Bool {
            var offset = 0
            while let t = peek(offset), t.kind == .word, GLSLImplicitConversions.qualifiers.contains(t.text) { offset += 1 }
            guard let type = peek(offset), type.kind == .word, isTypeName(type.text),
                  let name = peek(offset + 1), name.kind == .word, at("(", offset + 2) else { return false }
            position += offset + 3
            var parameters: [(type: ValueType?, writes: Bool)] = []
            var names: [(String, Symbol)] = []
            while let t = peek(), !(t.kind == .op && t.text == ")") {
                let start = position
                var writes = false, parameterType: ValueType?, typeName: String?
                while let q = peek(), q.kind == .word, GLSLImplicitConversions.qualifiers.contains(q.text) {
                    if q.text == "out" || q.text == "inout" { writes = true }
                    position += 1
                }
                if let p = peek(), p.kind == .word, isTypeName(p.text) {
                    parameterType = ValueType(name: p.text)
                    typeName = p.text
                    position += 1
                }
                var isArray = false
                if let n = peek(), n.kind == .word {
                    position += 1
                    if at("[") { isArray = true; skip(past: "]") }
                    names.append((n.text, Symbol(type: parameterType, isArray: isArray)))
                }
                // `f(void)` declares no parameter.
                if let typeName, !(typeName == "void" && parameters.isEmpty && at(")")) {
                    parameters.append((isArray ? nil : parameterType, writes))
                }
                if at(",") { position += 1 } else if !at(")") { skip(past: ",") }
                if position == start { position += 1 }
            }
            expect(")")
            functions[name.text, default: []].append(Signature(parameters: parameters, result: ValueType(name: type.text)))
            if at("{") {
                let outer = returnType
                returnType = ValueType(name: type.text)
                scopes.append(Dictionary(names, uniquingKeysWith: { $1 }))
                block()
                scopes.removeLast()
                returnType = outer
            } else {
                expect(";")
            }
            return true
        }

        mutating func block() {
            defer { nesting -= 1 }
            guard enter() else { return }
            expect("{")
            scopes.append([:])
            while let t = peek(), !(t.kind == .op && t.text == "}") {
                let start = position
                statement()
                if position == start { position += 1 }
            }
            expect("}")
            scopes.removeLast()
        }

        mutating func statement() {
            defer { nesting -= 1 }
            guard enter(), let t = peek() else { return }
            if t.kind == .op {
                switch t.text {
                case "{": block()
                case ";": position += 1
                default:
                    _ = expression()
                    expect(";")
                }
                return
            }
            switch t.text {
            case "if", "while":
                position += 1
                parenthesised()
                statement()
                if t.text == "if", at("else") { position += 1; statement() }
            case "do":
                position += 1
                statement()
                expect("while")
                parenthesised()
                expect(";")
            case "for":
                position += 1
                expect("(")
                scopes.append([:])
                if isDeclaration() { declaration() } else { _ = expression(); expect(";") }
                if !at(";") { _ = expression() }
                expect(";")
                while peek() != nil, !at(")") {
                    let start = position
                    _ = expression()
                    if at(",") { position += 1 } else if position == start { position += 1 }
                }
                expect(")")
                statement()
                scopes.removeLast()
            case "return":
                position += 1
                if !at(";") {
                    let value = expression()
                    convert(value, toMatch: returnType)
                }
                expect(";")
            case "switch":
                position += 1
                parenthesised()
                expect("{")
                scopes.append([:])
                while let s = peek(), !(s.kind == .op && s.text == "}") {
                    let start = position
                    if s.text == "case" || s.text == "default" { skip(past: ":") } else { statement() }
                    if position == start { position += 1 }
                }
                expect("}")
                scopes.removeLast()
            case "break", "continue", "discard", "precision":
                skip(past: ";")
            case "struct":
                position += 1
                if let name = peek(), name.kind == .word { structs.insert(name.text); position += 1 }
                if at("{") { position += 1; skip(past: "}") }
                while let n = peek(), n.kind == .word { declare(n.text, Symbol(type: nil, isArray: false)); position += 1; if at(",") { position += 1 } }
                expect(";")
            default:
                if isDeclaration() {
                    declaration()
                } else {
                    _ = expression()
                    while at(",") { position += 1; _ = expression() }
                    if !at(";") { skip(past: ";") } else { position += 1 }
                }
            }
        }

        mutating func parenthesised() {
            expect("(")
            if !at(")") { _ = expression() }
            if !at(")") { skip(past: ")") } else { position += 1 }
        }

        /// Qualifiers, then a type name (maybe with `[N]`), then a name.
        func isDeclaration() -> Bool {
            var offset = 0
            while let t = peek(offset), t.kind == .word, GLSLImplicitConversions.qualifiers.contains(t.text) || t.text == "layout" {
                if t.text == "layout" { return true }
                offset += 1
            }
            guard let type = peek(offset), type.kind == .word, isTypeName(type.text) else { return false }
            if let next = peek(offset + 1) { return next.kind == .word || next.text == "[" }
            return false
        }

        mutating func declaration() {
            if at("layout") { position += 1; skip(past: ")") }
            while let t = peek(), t.kind == .word, GLSLImplicitConversions.qualifiers.contains(t.text) { position += 1 }
            guard let typeToken = peek() else { return }
            position += 1
            let type = ValueType(name: typeToken.text)
            var arrayType = false
            if at("[") { arrayType = true; skip(past: "]") }
            while let name = peek(), name.kind == .word {
                position += 1
                var isArray = arrayType
                if at("[") { isArray = true; skip(past: "]") }
                if at("=") {
                    position += 1
                    let value = expression()
                    if !isArray { convert(value, toMatch: type) }
                }
                declare(name.text, Symbol(type: type, isArray: isArray))
                guard at(",") else { break }
                position += 1
            }
            if !at(";") { skip(past: ";") } else { position += 1 }
        }
    }
}
