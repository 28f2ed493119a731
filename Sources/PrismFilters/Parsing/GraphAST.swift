import PrismCore

// The syntax tree of the one-line filter graph language (see `GraphParser`). It knows nothing about
// which filters exist or what their parameters are: the binder checks names and types later and uses
// the column ranges kept here to point at the offending text.

/// A half-open range of 1-based columns in the graph text: `start` is the first column, `end` the
/// column just past the last character.
package struct GraphColumnRange: Hashable, Sendable, CustomStringConvertible {
    package var start: Int
    package var end: Int

    package var description: String { "\(start)..<\(end)" }
}

/// A value written in a filter's argument list.
package enum GraphValue: Hashable, Sendable, CustomStringConvertible {
    /// `2`, `-1.5`, `1e-3`.
    case number(Double)
    /// `0.5:0.5` or `(0.5, 0.5)`: two or more numbers.
    case tuple([Double])
    /// `#rrggbb` or `#rrggbbaa`, components in 0...1 (alpha 1 when not written).
    case color(red: Double, green: Double, blue: Double, alpha: Double)
    /// `1280x720`.
    case size(width: Int, height: Int)
    /// A bare word: `fit`, `true`, `linear`.
    case word(String)
    /// A quoted string, escapes resolved: `"my file.cube"`, `'x'`.
    case string(String)

    package var description: String {
        switch self {
        case .number(let v): return formatGraphNumber(v)
        case .tuple(let vs): return vs.map(formatGraphNumber).joined(separator: ":")
        case .color(let r, let g, let b, let a):
            return HexColor.format(SIMD4(r, g, b, a), alpha: .always)
        case .size(let w, let h): return "\(w)x\(h)"
        case .word(let w): return w
        case .string(let s): return "\"" + s + "\""
        }
    }

    /// A bare word or a quoted string, as text.
    package var textValue: String? {
        switch self {
        case .word(let w): return w
        case .string(let s): return s
        default: return nil
        }
    }
}

private func formatGraphNumber(_ v: Double) -> String {
    if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
    return String(v)
}

/// One argument: `key=value` or a positional `value`.
package struct GraphArgument: Hashable, Sendable {
    /// The key, or nil for a positional argument.
    package var key: String?
    package var value: GraphValue
    /// The whole argument, key included.
    package var range: GraphColumnRange
    /// Just the value.
    package var valueRange: GraphColumnRange
}

/// A stream label written in brackets: `[in]`, `[mask]`.
package struct GraphLabel: Hashable, Sendable {
    package var name: String
    /// The label including its brackets.
    package var range: GraphColumnRange

    /// The graph's input stream.
    package static let inputName = "in"
    /// The graph's output stream (optional: the last chain's unlabelled output is the output too).
    package static let outputName = "out"
}

/// What an element without input labels reads, besides nothing.
package enum GraphImplicitInput: Hashable, Sendable {
    /// The element names its inputs with labels (or is a generator: the binder decides).
    case none
    /// The first element of a chain that names no inputs: it reads the graph input if it takes one.
    case graphInput
    /// An element after the first in a chain: its first input is the previous element's output,
    /// followed by any labelled inputs.
    case previousElement
}

/// One filter application: `[a][b]name(args)[out]`.
package struct GraphElement: Hashable, Sendable {
    package enum Kind: Hashable, Sendable {
        /// A built-in or registered filter name: letters, digits, `-`, `_`.
        case filter
        /// A shader or LUT file path (contains `/`, or ends in .fs, .frag, .glsl, .isf, .cube).
        case file
    }

    /// The filter name, or the file path with its quotes removed.
    package var name: String
    package var kind: Kind
    package var arguments: [GraphArgument]
    /// Labels written before the element.
    package var inputLabels: [GraphLabel]
    /// The label written after the element, if any.
    package var outputLabel: GraphLabel?
    package var implicitInput: GraphImplicitInput
    /// The whole element: labels, name and arguments.
    package var range: GraphColumnRange
    /// The name or path alone.
    package var nameRange: GraphColumnRange

    package init(name: String, kind: Kind, arguments: [GraphArgument], inputLabels: [GraphLabel],
                outputLabel: GraphLabel?, implicitInput: GraphImplicitInput,
                range: GraphColumnRange, nameRange: GraphColumnRange) {
        self.name = name
        self.kind = kind
        self.arguments = arguments
        self.inputLabels = inputLabels
        self.outputLabel = outputLabel
        self.implicitInput = implicitInput
        self.range = range
        self.nameRange = nameRange
    }

    /// The argument with this key, if written.
    package func argument(_ key: String) -> GraphArgument? {
        arguments.first { $0.key == key }
    }
}

/// Elements separated by `,`: each one reads the previous one's output.
package struct GraphChain: Hashable, Sendable {
    package var elements: [GraphElement]
    package var range: GraphColumnRange
}

/// Identifies an element: its chain and its position in the chain.
package struct GraphElementID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var chain: Int
    package var index: Int

    package static func < (lhs: GraphElementID, rhs: GraphElementID) -> Bool {
        (lhs.chain, lhs.index) < (rhs.chain, rhs.index)
    }

    package var description: String { "\(chain).\(index)" }
}

/// A parsed filter graph: chains separated by `;`.
package struct GraphAST: Hashable, Sendable {
    /// The text it was parsed from, for error rendering.
    package var source: String
    package var chains: [GraphChain]

    package subscript(id: GraphElementID) -> GraphElement {
        chains[id.chain].elements[id.index]
    }

    /// Every element with its id, in text order.
    package var elements: [(id: GraphElementID, element: GraphElement)] {
        chains.enumerated().flatMap { c, chain in
            chain.elements.enumerated().map { (GraphElementID(chain: c, index: $0.offset), $0.element) }
        }
    }
}

// MARK: - Errors

/// An error in filter graph text, at a 1-based column.
public protocol GraphTextError: PrismError {
    /// What is wrong, without the column.
    var message: String { get }
    /// 1-based column of the graph text the error points at.
    var column: Int { get }
}

extension GraphTextError {
    public var description: String { "filter graph, column \(column): \(message)" }

    /// Two lines for a terminal: the graph text, then a caret under the column.
    public func caretDiagnostic(for text: String) -> String {
        renderCaret(text: text, column: column)
    }
}

/// Renders `text` and, on the next line, a caret under `column` (1-based). Tabs in the text are kept
/// in the caret line's prefix so the caret lines up in a terminal.
package func renderCaret(text: String, column: Int) -> String {
    let characters = Array(text)
    let prefixCount = max(0, min(column - 1, characters.count))
    let pad = characters[0..<prefixCount].map { $0 == "\t" ? "\t" : " " }.joined()
    return text + "\n" + pad + "^"
}

/// The text does not follow the grammar.
public struct GraphSyntaxError: GraphTextError, Equatable {
    /// What is wrong, without the column.
    public let message: String
    /// 1-based column of the graph text the error points at.
    public let column: Int

    /// A syntax error at `column` (1-based).
    public init(_ message: String, column: Int) {
        self.message = message
        self.column = column
    }
}

/// The text parses but its streams do not form a graph (unknown label, cycle, no output…).
public struct GraphSemanticError: GraphTextError, Equatable {
    /// What is wrong, without the column.
    public let message: String
    /// 1-based column of the graph text the error points at.
    public let column: Int
    /// The element at fault.
    package let element: GraphElementID?

    /// An error at `column` (1-based) about `element`, when one element is at fault.
    package init(_ message: String, column: Int, element: GraphElementID?) {
        self.message = message
        self.column = column
        self.element = element
    }
}
