import Foundation
import PrismCore
import PrismGPU

/// A user shader that does not compile, with the compiler's messages in the author's own files.
public struct UserShaderCompileError: PrismError {
    /// The shader's main file.
    public var file: String
    /// Every message of the log, mapped to the author's file, line and column where it can be.
    public var diagnostics: [ShaderDiagnostic]
    /// The driver's log as it came (lines refer to the generated source).
    public var log: String

    /// An error for `file` with the mapped `diagnostics` and the raw `log`.
    public init(file: String, diagnostics: [ShaderDiagnostic], log: String) {
        self.file = file
        self.diagnostics = diagnostics
        self.log = log
    }

    /// The errors only.
    public var errors: [ShaderDiagnostic] { diagnostics.filter { $0.severity == .error } }

    /// `file:line:column: message` of the first error (", and N more" when there are others).
    public var description: String {
        let errors = self.errors
        guard let first = errors.first ?? diagnostics.first else { return "\(file): the shader does not compile" }
        var s = first.file
        if let line = first.line {
            s += ":\(line)"
            if let column = first.column { s += ":\(column)" }
        }
        s += ": " + first.message
        if errors.count > 1 { s += " (and \(errors.count - 1) more error\(errors.count > 2 ? "s" : ""))" }
        return s
    }
}
