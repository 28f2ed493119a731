import Foundation

/// A pass size expression from an ISF header, e.g. `"$WIDTH/4.0"` or `"max(floor($HEIGHT*$scale), 1.0)"`.
///
/// Grammar: numbers, `$WIDTH`, `$HEIGHT` (the render size in pixels), the names of float, long,
/// bool and event inputs (with or without `$`), `+ - * /`, unary minus, parentheses, and the
/// functions `max(a,b)`, `min(a,b)`, `pow(a,b)`, `floor`, `ceil`, `round`, `abs`, `sqrt`.
package indirect enum ISFSizeExpression: Hashable, Sendable, CustomStringConvertible {
    case number(Double)
    /// `WIDTH`, `HEIGHT` or an input name, without the `$`.
    case variable(String)
    case negate(ISFSizeExpression)
    case binary(Character, ISFSizeExpression, ISFSizeExpression)
    case call(String, [ISFSizeExpression])

    package static let functions: [String: Int] = ["max": 2, "min": 2, "pow": 2, "floor": 1, "ceil": 1,
                                                   "round": 1, "abs": 1, "sqrt": 1]

    package var description: String {
        switch self {
        case .number(let v): return String(v)
        case .variable(let name): return "$" + name
        case .negate(let e): return "-(\(e))"
        case .binary(let op, let a, let b): return "(\(a) \(op) \(b))"
        case .call(let f, let args): return f + "(" + args.map(\.description).joined(separator: ", ") + ")"
        }
    }

    /// The names the expression reads (WIDTH and HEIGHT included).
    package var variables: Set<String> {
        switch self {
        case .number: return []
        case .variable(let name): return [name]
        case .negate(let e): return e.variables
        case .binary(_, let a, let b): return a.variables.union(b.variables)
        case .call(_, let args): return args.reduce(into: Set<String>()) { $0.formUnion($1.variables) }
        }
    }

    /// Evaluates with `value(name)` for each variable (`"WIDTH"`, `"HEIGHT"`, input names).
    package func evaluate(_ value: (String) -> Double) -> Double {
        switch self {
        case .number(let v): return v
        case .variable(let name): return value(name)
        case .negate(let e): return -e.evaluate(value)
        case .binary(let op, let a, let b):
            let x = a.evaluate(value), y = b.evaluate(value)
            switch op {
            case "+": return x + y
            case "-": return x - y
            case "*": return x * y
            default: return x / y
            }
        case .call(let f, let args):
            let v = args.map { $0.evaluate(value) }
            switch f {
            case "max": return Swift.max(v[0], v[1])
            case "min": return Swift.min(v[0], v[1])
            case "pow": return Foundation.pow(v[0], v[1])
            case "floor": return v[0].rounded(.down)
            case "ceil": return v[0].rounded(.up)
            case "round": return v[0].rounded()
            case "abs": return Swift.abs(v[0])
            default: return v[0].squareRoot()
            }
        }
    }

    /// Evaluates against a render size and input values (missing inputs read as 0).
    package func evaluate(width: Int, height: Int, inputs: [String: Double] = [:]) -> Double {
        evaluate { name in
            switch name {
            case "WIDTH": return Double(width)
            case "HEIGHT": return Double(height)
            default: return inputs[name] ?? 0
            }
        }
    }

    /// The largest pixel count `pixels` answers: past any GPU's texture size limit, so the compiler's
    /// limit check (not this clamp) reports an oversized pass, yet small enough that sizes multiplied
    /// together stay far inside Int.
    package static let pixelCeiling = 1 << 20

    /// The size the expression describes before it becomes a texture: what both reference renderers give a
    /// pass as its `RENDERSIZE` and `IMG_SIZE` (a third of 320 is 106.67 there, the texture 106 pixels wide).
    /// `pixels` when the value is not finite, under 1 or past `pixelCeiling`.
    package func extent(width: Int, height: Int, inputs: [String: Double] = [:], fallback: Int) -> Double {
        let v = evaluate(width: width, height: height, inputs: inputs)
        guard v.isFinite, v >= 1, v <= Double(Self.pixelCeiling) else {
            return Double(pixels(width: width, height: height, inputs: inputs, fallback: fallback))
        }
        return v
    }

    /// A pixel count from the expression: rounded down, at least 1, at most `pixelCeiling`; non-finite
    /// results give `fallback`. Never traps, whatever the inputs (`$WIDTH*1e20`, `pow(2,1000)`).
    package func pixels(width: Int, height: Int, inputs: [String: Double] = [:], fallback: Int) -> Int {
        let v = evaluate(width: width, height: height, inputs: inputs)
        guard v.isFinite else { return fallback }
        // Clamped as a Double first: `Int(_:)` traps beyond 2⁶³.
        return Int(Swift.min(Double(Self.pixelCeiling), Swift.max(1, v.rounded(.down))))
    }

    /// Bounds on what `parse` accepts, so evaluating, printing or freeing a tree never recurses deeply
    /// (20,000 nested parentheses overflowed the stack). Real ISF size expressions are a few terms.
    package static let maximumLength = 1024
    package static let maximumNesting = 64
    package static let maximumOperations = 256

    package struct ParseError: Error, Equatable {
        package var message: String
        /// 0-based character offset in the expression text.
        package var offset: Int
    }

    /// Parses `text`; `isKnown` says whether a variable name (without `$`) may be read.
    package static func parse(_ text: String, isKnown: @escaping (String) -> Bool = { _ in true }) throws(ParseError) -> ISFSizeExpression {
        guard text.count <= maximumLength else {
            throw ParseError(message: "the size expression is longer than \(maximumLength) characters", offset: maximumLength)
        }
        var parser = ExpressionParser(chars: Array(text), isKnown: isKnown)
        let expression = try parser.parseSum()
        parser.skipSpace()
        if let c = parser.current {
            throw ParseError(message: "unexpected '\(c)' in the size expression", offset: parser.position)
        }
        return expression
    }

    private struct ExpressionParser {
        let chars: [Character]
        let isKnown: (String) -> Bool
        var position = 0
        /// Open parentheses, calls and unary signs around the current position.
        var nesting = 0
        /// Operators and calls built so far.
        var operations = 0

        var current: Character? { position < chars.count ? chars[position] : nil }

        mutating func skipSpace() { while let c = current, c.isWhitespace { position += 1 } }

        func fail(_ message: String, at offset: Int? = nil) -> ParseError {
            ParseError(message: message, offset: offset ?? position)
        }

        /// Counts one operator or call against `maximumOperations`.
        mutating func countOperation() throws(ParseError) {
            operations += 1
            guard operations <= ISFSizeExpression.maximumOperations else {
                throw fail("the size expression has more than \(ISFSizeExpression.maximumOperations) operations")
            }
        }

        /// Sums of products, or (`products`) products of unary terms, left-associative.
        mutating func parseSum(products: Bool = false) throws(ParseError) -> ISFSizeExpression {
            let operators: Set<Character> = products ? ["*", "/"] : ["+", "-"]
            var left = try products ? parseUnary() : parseSum(products: true)
            while true {
                skipSpace()
                guard let c = current, operators.contains(c) else { return left }
                position += 1
                try countOperation()
                left = .binary(c, left, try products ? parseUnary() : parseSum(products: true))
            }
        }

        /// Every nesting (parentheses, call arguments, unary signs) passes through here once.
        mutating func parseUnary() throws(ParseError) -> ISFSizeExpression {
            nesting += 1
            defer { nesting -= 1 }
            guard nesting <= ISFSizeExpression.maximumNesting else {
                throw fail("the size expression nests more than \(ISFSizeExpression.maximumNesting) levels deep")
            }
            skipSpace()
            if current == "-" { position += 1; try countOperation(); return .negate(try parseUnary()) }
            if current == "+" { position += 1; return try parseUnary() }
            return try parsePrimary()
        }

        mutating func parsePrimary() throws(ParseError) -> ISFSizeExpression {
            skipSpace()
            let start = position
            guard let c = current else { throw fail("the size expression ends too early") }
            if c == "(" {
                position += 1
                let inner = try parseSum()
                skipSpace()
                guard current == ")" else { throw fail("expected ')' in the size expression") }
                position += 1
                return inner
            }
            if c.isNumber || c == "." {
                while let d = current, d.isNumber || d == "." || d == "e" || d == "E" { position += 1 }
                let token = String(chars[start..<position])
                guard let v = GraphParser.number(from: token) else { throw fail("invalid number '\(token)'", at: start) }
                return .number(v)
            }
            let dollar = c == "$"
            if dollar { position += 1 }
            let nameStart = position
            while let d = current, d.isLetter || d.isNumber || d == "_" { position += 1 }
            let name = String(chars[nameStart..<position])
            guard !name.isEmpty else { throw fail("unexpected '\(c)' in the size expression") }
            skipSpace()
            if !dollar, current == "(" {
                guard let arity = ISFSizeExpression.functions[name] else {
                    throw fail("unknown function '\(name)' (known: max, min, pow, floor, ceil, round, abs, sqrt)", at: start)
                }
                position += 1
                try countOperation()
                var args: [ISFSizeExpression] = []
                skipSpace()
                if current != ")" {
                    while true {
                        args.append(try parseSum())
                        skipSpace()
                        if current == "," { position += 1; continue }
                        break
                    }
                }
                guard current == ")" else { throw fail("expected ')' after the arguments of \(name)") }
                position += 1
                guard args.count == arity else {
                    throw fail("\(name) takes \(arity) argument\(arity == 1 ? "" : "s"), found \(args.count)", at: start)
                }
                return .call(name, args)
            }
            guard isKnown(name) else {
                throw fail("unknown variable '\(dollar ? "$" : "")\(name)': use $WIDTH, $HEIGHT or a number input", at: start)
            }
            return .variable(name)
        }
    }
}
