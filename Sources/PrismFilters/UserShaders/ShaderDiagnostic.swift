import PrismCore

/// One message from a GLSL compiler, in the author's file: a `Diagnostic`, as every error carries them.
public typealias ShaderDiagnostic = Diagnostic

/// Reads GLSL info logs. Recognised line formats:
///
/// - Mesa: `0:12(5): error: message` (source string, line, 1-based column)
/// - NVIDIA: `0(12) : error C1008: message` (source string, line)
/// - glslang / ANGLE / many mobile drivers: `ERROR: 0:12: message`, `WARNING: 0:12: message`
///
/// Other non-empty lines become diagnostics without a line (the message is kept as written).
/// Summary lines such as `ERROR: 2 compilation errors.  No code generated.` are dropped.
package enum ShaderCompilerLog {
    package static func parse(_ log: String, lineMap: ShaderLineMap, generatedFile: String) -> [ShaderDiagnostic] {
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

    typealias ParsedLine = CompilerLogLine

    static func parseLine(_ text: String) -> ParsedLine? { CompilerLogLine(parsing: text) }

    private static func isSummary(_ text: String) -> Bool { CompilerLogLine.isSummary(text) }
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
