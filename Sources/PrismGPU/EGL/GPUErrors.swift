import CEGL
import Foundation
import CGLES
import PrismCore

/// A failing EGL call, with EGL's error code.
public struct EGLError: PrismError {
    /// The EGL function that failed, e.g. "eglInitialize".
    public let call: String
    /// EGL's error code (eglGetError), named in the description when known.
    public let code: EGLint
    /// More about what was being done; may be empty.
    public let detail: String

    /// The failure of `call`; `code` defaults to eglGetError(), so make the error right after the call.
    public init(_ call: String, code: EGLint = eglGetError(), detail: String = "") {
        self.call = call
        self.code = code
        self.detail = detail
    }

    public var description: String {
        let name = EGLError.names[code] ?? "0x" + String(code, radix: 16)
        return detail.isEmpty ? "EGL: \(call) failed (\(name))" : "EGL: \(call) failed (\(name)): \(detail)"
    }

    private static let names: [EGLint: String] = [
        0x3001: "EGL_NOT_INITIALIZED", 0x3002: "EGL_BAD_ACCESS", 0x3003: "EGL_BAD_ALLOC",
        0x3004: "EGL_BAD_ATTRIBUTE", 0x3005: "EGL_BAD_CONFIG", 0x3006: "EGL_BAD_CONTEXT",
        0x3008: "EGL_BAD_DISPLAY", 0x3009: "EGL_BAD_MATCH", 0x300C: "EGL_BAD_PARAMETER",
        0x3000: "EGL_SUCCESS",
    ]
}

/// A GL error or an unsupported capability, with the call that failed.
public struct GLError: PrismError {
    /// The GL call or capability that failed.
    public let call: String
    /// The GL error (glGetError); 0 when the failure was not a GL error (a missing capability).
    public let code: GLenum
    /// More about what was being done; may be empty.
    public let detail: String

    /// The failure of `call` with GL error `code` (0: none recorded).
    public init(_ call: String, code: GLenum = 0, detail: String = "") {
        self.call = call
        self.code = code
        self.detail = detail
    }

    public var description: String {
        let codeText = code == 0 ? "" : " (GL error 0x" + String(code, radix: 16) + ")"
        return "GL: \(call) failed\(codeText)" + (detail.isEmpty ? "" : ": \(detail)")
    }

    /// Throws if GL recorded an error since the last check. Call after operations that can fail on
    /// bad input (allocation, framebuffer setup), not after every draw.
    static func check(_ call: String) throws {
        let code = glGetError()
        if code != GLenum(GL_NO_ERROR) { throw GLError(call, code: code) }
    }
}

/// A shader that failed to compile or link. A value, never a crash: the caller decides whether to keep
/// the last good program running.
public struct ShaderCompileError: PrismError {
    /// Which step failed: compiling the vertex, fragment or compute shader, or linking the program.
    public enum Stage: String, Sendable { case vertex, fragment, compute, link }
    /// The step that failed.
    public let stage: Stage
    /// The program's name (a kernel or the shader file), used in the description and as the log's file.
    public let name: String
    /// The driver's info log as it came (user shaders map it to their author's lines:
    /// `UserShaderCompileError` in PrismFilters).
    public let log: String

    /// A failure at `stage` of program `name`, with the driver's `log`.
    public init(stage: Stage, name: String, log: String) {
        self.stage = stage
        self.name = name
        self.log = log
    }

    public var description: String {
        // The first error, not the warnings a driver may print before it.
        let lines = log.split(separator: "\n").map(String.init)
        let firstLine = lines.first { $0.lowercased().contains("error") } ?? lines.first ?? "no log"
        return "\(name): \(stage.rawValue) shader failed: \(firstLine)"
    }

    /// The log's messages at their lines of the source the driver was given (named `name`); lines the
    /// driver wrote in no known format are kept without a line.
    public var diagnostics: [Diagnostic] {
        log.split(separator: "\n").compactMap { raw -> Diagnostic? in
            let text = raw.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty, !CompilerLogLine.isSummary(text) else { return nil }
            guard let line = CompilerLogLine(parsing: text) else { return Diagnostic(file: name, line: nil, message: text) }
            return Diagnostic(file: name, line: line.line, column: line.column, severity: line.severity, message: line.message)
        }
    }
}
