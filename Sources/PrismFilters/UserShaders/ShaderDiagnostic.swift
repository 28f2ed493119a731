import PrismCore

/// One message from a GLSL compiler, in the author's file.
public struct ShaderDiagnostic: Hashable, Sendable, CustomStringConvertible {
    public enum Severity: String, Hashable, Sendable {
        case error, warning, note
    }

    public var file: String
    /// The author's line; nil when the compiler gave none or the line is generated code.
    public var line: Int?
    /// The author's column, when the compiler gave one and the line was not edited by translation.
    public var column: Int?
    public var severity: Severity
    /// The compiler's own words (NVIDIA's code such as `C1008` kept in front).
    public var message: String

    public init(file: String, line: Int?, column: Int? = nil, severity: Severity = .error, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.severity = severity
        self.message = message
    }

    /// `file:line:column: error: message` (line and column left out when unknown).
    public var description: String {
        var s = file
        if let line {
            s += ":\(line)"
            if let column { s += ":\(column)" }
        }
        return s + ": \(severity.rawValue): \(message)"
    }
}

/// Reads GLSL info logs. Recognised line formats:
///
/// - Mesa: `0:12(5): error: message` (source string, line, 1-based column)
/// - NVIDIA: `0(12) : error C1008: message` (source string, line)
/// - glslang / ANGLE / many mobile drivers: `ERROR: 0:12: message`, `WARNING: 0:12: message`
///
/// Other non-empty lines become diagnostics without a line (the message is kept as written).
/// Summary lines such as `ERROR: 2 compilation errors.  No code generated.` are dropped.
public enum ShaderCompilerLog {
    public static func parse(_ log: String, lineMap: ShaderLineMap, generatedFile: String) -> [ShaderDiagnostic] {
        var diagnostics: [ShaderDiagnostic] = []
        for raw in splitLines(log) {
            let text = raw.trimmingTrailingWhitespace()
            if text.isEmpty { continue }
            guard let parsed = parseLine(text) else {
                if isSummary(text) { continue }
                diagnostics.append(ShaderDiagnostic(file: generatedFile, line: nil, severity: .error, message: text))
                continue
            }
            if let location = lineMap.location(ofGeneratedLine: parsed.line, column: parsed.column) {
                diagnostics.append(ShaderDiagnostic(file: location.file, line: location.line, column: location.column,
                                                    severity: parsed.severity, message: parsed.message))
            } else {
                // A line of generated code (preamble or wrapper): say so rather than pointing at the author.
                let message = parsed.line > 0 ? "\(parsed.message) (in generated code, line \(parsed.line))" : parsed.message
                diagnostics.append(ShaderDiagnostic(file: generatedFile, line: nil, severity: parsed.severity, message: message))
            }
        }
        return diagnostics
    }

    struct ParsedLine: Equatable {
        var line: Int
        var column: Int?
        var severity: ShaderDiagnostic.Severity
        var message: String
    }

    static func parseLine(_ text: String) -> ParsedLine? {
        var scanner = LogScanner(text)
        // glslang: "ERROR: 0:12: message"
        let save = scanner.position
        if let word = scanner.word(), scanner.consume(":"), let severity = severity(word.lowercased()) {
            scanner.skipSpaces()
            if scanner.integer() != nil, scanner.consume(":"), let line = scanner.integer(), scanner.consume(":") {
                return ParsedLine(line: line, column: nil, severity: severity, message: scanner.rest())
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
            return ParsedLine(line: line, column: column, severity: severity, message: scanner.rest())
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
            return ParsedLine(line: line, column: nil, severity: severity, message: code.isEmpty ? message : "\(code): \(message)")
        }
        return nil
    }

    private static func severity(_ word: String) -> ShaderDiagnostic.Severity? {
        switch word {
        case "error", "fatal": return .error
        case "warning": return .warning
        case "info", "note": return .note
        default: return nil
        }
    }

    private static func isSummary(_ text: String) -> Bool {
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
        String(chars[position...]).trimmingLeadingWhitespace()
    }
}

extension String {
    func trimmingTrailingWhitespace() -> String {
        var s = Substring(self)
        while let last = s.last, last.isWhitespace { s = s.dropLast() }
        return String(s)
    }

    func trimmingLeadingWhitespace() -> String {
        String(drop { $0.isWhitespace })
    }
}
