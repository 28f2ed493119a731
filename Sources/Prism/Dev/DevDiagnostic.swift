import Foundation
import PrismCore

/// A reload failure as the author needs it: `file:line:column: message`, read from the diagnostics the
/// error carries (shader loaders and compilers, `.cube` parsers), never from its text.
struct DevDiagnostic: Sendable, Equatable {
    var file: String
    var line: Int?
    var column: Int?
    var message: String

    var text: String {
        var s = file
        if let line { s += ":\(line)" }
        if let column, line != nil { s += ":\(column)" }
        return s + ": " + message
    }

    /// The error's first error diagnostic (", and N more" when it has others); an error without any
    /// (a graph's own text, a missing file) is the whole one-line message against `fallbackFile`.
    static func from(_ error: any Error, fallbackFile: String) -> DevDiagnostic {
        let diagnostics = error.prismDiagnostics
        let errors = diagnostics.filter { $0.severity == .error }
        guard let first = errors.first ?? diagnostics.first else { return from(text: "\(error)", fallbackFile: fallbackFile) }
        var message = first.message
        if errors.count > 1 { message += " (and \(errors.count - 1) more error\(errors.count > 2 ? "s" : ""))" }
        return DevDiagnostic(file: first.file, line: first.line, column: first.line == nil ? nil : first.column,
                             message: message.replacingOccurrences(of: "\n", with: " "))
    }

    /// A failure that reached the page as text only (the engine's fallback event): no place in a file.
    static func from(text: String, fallbackFile: String) -> DevDiagnostic {
        DevDiagnostic(file: fallbackFile, line: nil, column: nil, message: text.replacingOccurrences(of: "\n", with: " "))
    }
}
