/// Every error Prism reports conforms to this, so the command line can print one line naming the
/// problem (`description`) and a tool (the dev page, an editor) can point at the places it concerns
/// (`diagnostics`) without reading them back out of the line. Each domain (EGL, GL, AV, V4L2, ALSA,
/// errno, requests) has its own error type in its module; an error that wraps another keeps its diagnostics.
public protocol PrismError: Error, CustomStringConvertible, Sendable {
    /// Where in which files the problem is, the one to show first first; empty when it concerns no file
    /// (a flag, a device, the system).
    var diagnostics: [Diagnostic] { get }
}

extension PrismError {
    /// No diagnostics by default: the error concerns no place in a file.
    public var diagnostics: [Diagnostic] { [] }
}

extension Error {
    /// The diagnostics of a `PrismError`; none for any other error.
    public var prismDiagnostics: [Diagnostic] { (self as? any PrismError)?.diagnostics ?? [] }
}

/// One message about a place in a file: a shader compiler's, a loader's or a parser's.
public struct Diagnostic: Hashable, Sendable, Codable, CustomStringConvertible {
    /// How serious a message is, as compilers print it.
    public enum Severity: String, Hashable, Sendable, Codable {
        /// An error stops the work; a warning does not; a note adds to the message before it.
        case error, warning, note
    }

    /// The file the message is about, as the user named it (or a generated name).
    public var file: String
    /// 1-based; nil when the message concerns the whole file (or generated code).
    public var line: Int?
    /// 1-based, when known.
    public var column: Int?
    /// Error, warning or note.
    public var severity: Severity
    /// The message alone, without the place.
    public var message: String

    /// A message about `file`, at `line` and `column` (1-based) when known.
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

/// A request the library cannot carry out as it is asked: a setting's value, a filter text, a file name,
/// or an input that does not suit the rest of the request. The caller's mistake, not a failure of the
/// machine: the command line reports it as a usage error (exit status 2), the C library as
/// `PRISM_ERROR_USAGE`. Settings are named in it by `Setting`, so each front end spells them its own way.
public struct InvalidRequest: PrismError {
    /// What is wrong, in a form the command line prints as it is.
    public let message: String
    /// An error carrying `message` as its whole description.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A failing POSIX call, with the call and the system's own message.
public struct SystemError: PrismError {
    /// The POSIX call that failed, e.g. "open".
    public let call: String
    /// The errno value it failed with.
    public let code: Int32
    /// What was being done (a path, a device), put before the call in the description; may be empty.
    public let context: String

    /// The failure of `call` with errno `code`, while doing `context`.
    public init(_ call: String, code: Int32, context: String = "") {
        self.call = call
        self.code = code
        self.context = context
    }

    public var description: String {
        let message = String(cString: strerrorCString(code))
        return context.isEmpty ? "\(call): \(message)" : "\(context): \(call): \(message)"
    }
}

#if canImport(Glibc)
import Glibc
private func strerrorCString(_ code: Int32) -> UnsafeMutablePointer<CChar> { strerror(code) }
#elseif canImport(Musl)
import Musl
private func strerrorCString(_ code: Int32) -> UnsafeMutablePointer<CChar> { strerror(code) }
#endif
