import Foundation

/// A `//!WIDTH`, `//!HEIGHT` or `//!WHEN` expression of an mpv hook file: reverse Polish notation over
/// numbers, texture sizes (`NAME.w`, `NAME.width`, `NAME.h`, `NAME.height`), parameters by name and the
/// operators `+ - * / % > < = !` (libplacebo's reading: `=` is equality within a relative 1e-6, `!` is
/// logical not, comparisons give 1 or 0, `%` is fmod).
package struct HookExpression: Hashable, Sendable, CustomStringConvertible {
    package enum Token: Hashable, Sendable {
        case number(Double)
        case width(String), height(String)
        case variable(String)
        case unary(Character)
        case binary(Character)
    }

    package let tokens: [Token]
    /// The text as written, for messages and `prism filters`.
    package let text: String

    package var description: String { text }

    /// Parses `text`; nil when a word is neither a number, a size, an operator nor a name.
    package init?(_ text: String) {
        var tokens: [Token] = []
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) {
            if let name = Self.strip(word, [".w", ".width"]) { tokens.append(.width(name)); continue }
            if let name = Self.strip(word, [".h", ".height"]) { tokens.append(.height(name)); continue }
            let first = word.first!
            if "+-*/%><=".contains(first) {
                // libplacebo reads an operator from the first character; a negative number is written `0 1 -`.
                tokens.append(.binary(first))
                continue
            }
            if first == "!" { tokens.append(.unary(first)); continue }
            if first.isNumber {
                guard let value = Double(word) else { return nil }
                tokens.append(.number(value))
                continue
            }
            tokens.append(.variable(word))
        }
        self.tokens = tokens
        self.text = text.trimmingCharacters(in: .whitespaces)
    }

    /// A constant expression.
    package init(constant: Double) {
        tokens = [.number(constant)]
        text = constant == constant.rounded() ? String(Int(constant)) : String(constant)
    }

    /// `NAME.w` / `NAME.h` alone (the default WIDTH and HEIGHT: HOOKED's).
    package init(widthOf name: String) { tokens = [.width(name)]; text = "\(name).w" }
    package init(heightOf name: String) { tokens = [.height(name)]; text = "\(name).h" }

    private static func strip(_ word: String, _ suffixes: [String]) -> String? {
        for suffix in suffixes where word.hasSuffix(suffix) && word.count > suffix.count {
            return String(word.dropLast(suffix.count))
        }
        return nil
    }

    /// The texture names whose sizes the expression reads.
    package var textureNames: Set<String> {
        Set(tokens.compactMap { token in
            switch token {
            case .width(let name), .height(let name): return name
            default: return nil
            }
        })
    }

    package enum EvaluationError: Error, Equatable, CustomStringConvertible {
        case underflow(String)
        case unknownTexture(String)
        case unknownVariable(String)
        case notFinite(String)
        case beyondFloat(String, Double)
        case malformed(String, left: Int)

        package var description: String {
            switch self {
            case .underflow(let text): return "stack underflow in the expression '\(text)'"
            case .unknownTexture(let name): return "no texture named '\(name)' for its size"
            case .unknownVariable(let name): return "no parameter named '\(name)'"
            case .notFinite(let text): return "the expression '\(text)' is not finite (a division by zero?)"
            case .beyondFloat(let text, let value):
                return "\(String(format: "%g", value)) in '\(text)' is beyond single precision (hook expressions are evaluated in float)"
            case .malformed(let text, let left): return "the expression '\(text)' leaves \(left) values, not one"
            }
        }
    }

    /// The value, with texture sizes from `size` (nil: no such texture) and variables from `variable`.
    /// Arithmetic is in single precision, as libplacebo's.
    package func evaluate(size: (String) -> (width: Double, height: Double)?,
                          variable: (String) -> Double?) throws(EvaluationError) -> Double {
        var stack: [Float] = []
        for token in tokens {
            switch token {
            case .number(let value): stack.append(try Self.single(value, text))
            case .width(let name), .height(let name):
                guard let s = size(name) else { throw .unknownTexture(name) }
                if case .width = token { stack.append(Float(s.width)) } else { stack.append(Float(s.height)) }
            case .variable(let name):
                guard let value = variable(name) else { throw .unknownVariable(name) }
                stack.append(try Self.single(value, text))
            case .unary:
                guard let top = stack.popLast() else { throw .underflow(text) }
                stack.append(top == 0 ? 1 : 0)
            case .binary(let op):
                guard stack.count >= 2 else { throw .underflow(text) }
                let b = stack.removeLast(), a = stack.removeLast()
                let result: Float
                switch op {
                case "+": result = a + b
                case "-": result = a - b
                case "*": result = a * b
                case "/": result = a / b
                case "%": result = fmodf(a, b)
                case ">": result = a > b ? 1 : 0
                case "<": result = a < b ? 1 : 0
                default: result = abs(a - b) <= 1e-6 * max(a, b) ? 1 : 0
                }
                guard result.isFinite else { throw .notFinite(text) }
                stack.append(result)
            }
        }
        guard stack.count == 1 else {
            if stack.isEmpty { throw .underflow(text) }
            throw .malformed(text, left: stack.count)
        }
        return Double(stack[0])
    }

    /// `value` in single precision; a number that does not fit (1e39, 1e400, a parameter set to 1e39) is an
    /// error, not an infinity that reaches a size.
    private static func single(_ value: Double, _ text: String) throws(EvaluationError) -> Float {
        let single = Float(value)
        guard single.isFinite else { throw .beyondFloat(text, value) }
        return single
    }

    /// Checks the expression's shape without sizes: every operator has its operands and one value is left.
    package func checkShape() throws(EvaluationError) {
        var depth = 0
        for token in tokens {
            switch token {
            case .number, .width, .height, .variable: depth += 1
            case .unary: if depth < 1 { throw .underflow(text) }
            case .binary:
                if depth < 2 { throw .underflow(text) }
                depth -= 1
            }
        }
        if depth == 0 { throw .underflow(text) }
        if depth != 1 { throw .malformed(text, left: depth) }
    }
}
