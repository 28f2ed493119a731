import Foundation

/// Bounds on what a shader's source may ask the GLSL compiler for, checked before it is compiled:
/// a typo like `float a[100000000]` made llvmpipe allocate 6.8 GB per draw. Arrays are bounded by
/// their element count (all dimensions multiplied); `PRISM_MAX_ARRAY_ELEMENTS` raises the limit.
enum GLSLLimits {
    static let defaultMaxArrayElements = 65_536
    static let arrayVariable = "PRISM_MAX_ARRAY_ELEMENTS"

    static func maxArrayElements(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        environment[arrayVariable].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? defaultMaxArrayElements
    }

    /// Throws for the first array size (a run of `[N]` with integer literals) over the limit.
    static func check(_ lines: [SourceLine], maxElements: Int = maxArrayElements()) throws(ShaderLoadError) {
        for line in lines {
            var text = Substring(line.text)
            if let comment = text.range(of: "//") { text = text[..<comment.lowerBound] }
            guard text.contains("[") else { continue }
            var index = text.startIndex
            while index < text.endIndex {
                guard text[index] == "[" else { index = text.index(after: index); continue }
                let start = index
                var product = 1
                var dimensions = 0
                // A run of `[N]` groups: `float a[1000][1000]` is a million elements.
                while index < text.endIndex, text[index] == "[",
                      let (value, end) = integerInBrackets(text, from: index) {
                    product = product.multipliedReportingOverflow(by: max(value, 1)).overflow ? .max : product * max(value, 1)
                    dimensions += 1
                    index = end
                    while index < text.endIndex, text[index] == " " || text[index] == "\t" { index = text.index(after: index) }
                }
                if dimensions > 0 && product > maxElements {
                    let column = text.distance(from: text.startIndex, to: start) + 1
                    let size = product == .max ? "too many" : "\(product)"
                    throw ShaderLoadError(file: line.file, line: line.line, column: column,
                                          message: "an array of \(size) elements is over the limit of \(maxElements) "
                                          + "(set \(arrayVariable) to allow more)")
                }
                if dimensions == 0 { index = text.index(after: index) }
            }
        }
    }

    /// `[ 123 ]`, `[0x10]`, `[12u]` at `open`: the value and the index after `]`; nil for anything else.
    private static func integerInBrackets(_ text: Substring, from open: Substring.Index) -> (Int, Substring.Index)? {
        var index = text.index(after: open)
        func skipSpace() { while index < text.endIndex, text[index] == " " || text[index] == "\t" { index = text.index(after: index) } }
        skipSpace()
        let digitsStart = index
        while index < text.endIndex, text[index].isASCII, text[index].isHexDigit || text[index] == "x" || text[index] == "X" {
            index = text.index(after: index)
        }
        var literal = String(text[digitsStart..<index])
        if index < text.endIndex, text[index] == "u" || text[index] == "U" { index = text.index(after: index) }
        skipSpace()
        guard !literal.isEmpty, index < text.endIndex, text[index] == "]" else { return nil }
        let radix: Int
        if literal.lowercased().hasPrefix("0x") { literal = String(literal.dropFirst(2)); radix = 16 }
        else if literal.count > 1, literal.hasPrefix("0") { radix = 8 }
        else { radix = 10 }
        let valid = literal.allSatisfy { $0.isASCII && ($0.hexDigitValue.map { $0 < radix } ?? false) }
        guard valid, !literal.isEmpty else { return nil }  // a name like `a[b]`, or an expression
        // A literal too long for Int is over any limit.
        return (Int(literal, radix: radix) ?? .max, text.index(after: index))
    }
}
