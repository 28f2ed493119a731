/// One line of a GLSL compiler's info log, read: the source line, column, severity and message.
/// Recognised formats:
///
/// - Mesa: `0:12(5): error: message` (source string, line, 1-based column)
/// - NVIDIA: `0(12) : error C1008: message` (source string, line)
/// - glslang / ANGLE / many mobile drivers: `ERROR: 0:12: message`, `WARNING: 0:12: message`
///
/// Lines refer to the source the driver was given; PrismFilters maps them to the author's files.
package struct CompilerLogLine: Equatable, Sendable {
    package var line: Int
    package var column: Int?
    package var severity: Diagnostic.Severity
    package var message: String

    package init(line: Int, column: Int?, severity: Diagnostic.Severity, message: String) {
        self.line = line
        self.column = column
        self.severity = severity
        self.message = message
    }

    package init?(parsing text: String) {
        guard let parsed = Self.parse(text) else { return nil }
        self = parsed
    }

    private static func parse(_ text: String) -> CompilerLogLine? {
        var scanner = LogScanner(text)
        // glslang: "ERROR: 0:12: message"
        let save = scanner.position
        if let word = scanner.word(), scanner.consume(":"), let severity = severity(word.lowercased()) {
            scanner.skipSpaces()
            if scanner.integer() != nil, scanner.consume(":"), let line = scanner.integer(), scanner.consume(":") {
                return CompilerLogLine(line: line, column: nil, severity: severity, message: scanner.rest())
            }
            return nil
        }
        scanner.position = save
        guard scanner.integer() != nil else { return nil }
        if scanner.consume(":") {
            // Mesa: "0:12(5): error: message"
            guard let line = scanner.integer() else { return nil }
            var column: Int?
            if scanner.consume("(") {
                column = scanner.integer()
                guard scanner.consume(")") else { return nil }
            }
            guard scanner.consume(":") else { return nil }
            scanner.skipSpaces()
            guard let word = scanner.word(), let severity = severity(word.lowercased()), scanner.consume(":") else { return nil }
            return CompilerLogLine(line: line, column: column, severity: severity, message: scanner.rest())
        }
        if scanner.consume("(") {
            // NVIDIA: "0(12) : error C1008: message"
            guard let line = scanner.integer(), scanner.consume(")") else { return nil }
            scanner.skipSpaces()
            guard scanner.consume(":") else { return nil }
            scanner.skipSpaces()
            guard let word = scanner.word(), let severity = severity(word.lowercased()) else { return nil }
            scanner.skipSpaces()
            var code = ""
            if let c = scanner.peek, c == "C" { code = scanner.word() ?? "" }
            guard scanner.consume(":") else { return nil }
            let message = scanner.rest()
            return CompilerLogLine(line: line, column: nil, severity: severity, message: code.isEmpty ? message : "\(code): \(message)")
        }
        return nil
    }

    private static func severity(_ word: String) -> Diagnostic.Severity? {
        switch word {
        case "error", "fatal": return .error
        case "warning": return .warning
        case "info", "note": return .note
        default: return nil
        }
    }

    /// `ERROR: 2 compilation errors.  No code generated.` and the like: no message of its own.
    package static func isSummary(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.contains("compilation errors") || lower.contains("no code generated")
            || lower.hasPrefix("compilation terminated")
    }
}

/// A tiny cursor over one log line.
private struct LogScanner {
    let chars: [Character]
    var position = 0

    init(_ text: String) { chars = Array(text) }

    var peek: Character? { position < chars.count ? chars[position] : nil }

    mutating func skipSpaces() {
        while let c = peek, c == " " || c == "\t" { position += 1 }
    }

    mutating func consume(_ c: Character) -> Bool {
        guard peek == c else { return false }
        position += 1
        return true
    }

    mutating func integer() -> Int? {
        let start = position
        while let c = peek, c.isASCII, c.isNumber { position += 1 }
        return start == position ? nil : Int(String(chars[start..<position]))
    }

    mutating func word() -> String? {
        let start = position
        while let c = peek, c.isASCII, c.isLetter || c.isNumber { position += 1 }
        return start == position ? nil : String(chars[start..<position])
    }

    mutating func rest() -> String {
        String(String(chars[position...]).drop { $0.isWhitespace })
    }
}
