import CFFmpeg
import CMediaShims
import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// A failing FFmpeg (libavformat / libavcodec / libavutil / libswscale / libswresample) call, or a media
/// problem found while using one, with FFmpeg's own message and what was being worked on (usually a path).
///
/// `description` is always one line: `"<context>: <message> (<call>)"`.
public struct AVError: PrismError {
    /// The C function that failed, e.g. `"avformat_open_input"`; empty for problems that are not one call's.
    public let call: String
    /// FFmpeg's return code (a negative AVERROR value), or nil when the problem is not a return code.
    public let code: Int32?
    /// FFmpeg's message for `code` (`av_strerror`), or a description of the problem.
    public let message: String
    /// What was being worked on: a file path or URL, a stream, a codec.
    public let context: String

    /// An error from a return code; the message is FFmpeg's (`av_strerror`), optionally prefixed by `what`.
    public init(call: String, code: Int32, context: String = "", what: String = "") {
        self.call = call
        self.code = code
        let text = AVError.message(for: code)
        self.message = what.isEmpty ? text : "\(what): \(text)"
        self.context = context
    }

    /// An error that is not a return code (no video stream, a short raw frame, …).
    public init(_ message: String, context: String = "", call: String = "") {
        self.call = call
        self.code = nil
        self.message = message
        self.context = context
    }

    public var description: String {
        var line = context.isEmpty ? message : "\(context): \(message)"
        if !call.isEmpty { line += " (\(call))" }
        return AVError.oneLine(line)
    }

    /// FFmpeg's text for an error code (`av_strerror`).
    public static func message(for code: Int32) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            prism_av_strerror(code, buffer.baseAddress!, 256)
            return String(cString: buffer.baseAddress!)
        }
    }

    static func oneLine(_ text: String) -> String {
        var line = String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
        while line.last == " " { line.removeLast() }
        return line
    }
}

/// Turns an FFmpeg return code into a thrown `AVError` when it is negative; returns it otherwise.
/// This is the one place PrismMedia converts return codes:
/// `try check(avformat_open_input(&ctx, path, nil, nil), "avformat_open_input", path)`.
@discardableResult
func check(_ code: Int32, _ call: String, _ context: @autoclosure () -> String = "",
           what: @autoclosure () -> String = "") throws(AVError) -> Int32 {
    if code < 0 { throw AVError(call: call, code: code, context: context(), what: what()) }
    return code
}

/// `AVERROR(EAGAIN)` (a C macro Swift cannot import).
var averrorEAGAIN: Int32 { prism_averror(EAGAIN) }
/// `AVERROR(ENOMEM)`.
var averrorENOMEM: Int32 { prism_averror(ENOMEM) }
/// `AVERROR_EOF`.
var averrorEOF: Int32 { prism_averror_eof() }
/// `AV_NOPTS_VALUE`.
var noPTS: Int64 { prism_av_nopts_value() }

/// FFmpeg's global log level (`av_log_set_level`). FFmpeg logs to stderr; the command line and tests
/// may quieten it. This is process-wide state owned by libavutil.
public enum FFmpegLog {
    /// FFmpeg's log levels (`AV_LOG_QUIET` … `AV_LOG_DEBUG`); each shows its own messages and the more severe ones.
    public enum Level: Int32, Sendable {
        /// `AV_LOG_QUIET` (nothing) through `AV_LOG_DEBUG` (everything), with FFmpeg's values.
        case quiet = -8, panic = 0, fatal = 8, error = 16, warning = 24, info = 32, verbose = 40, debug = 48
    }
    /// Wraps `av_log_set_level`.
    public static func setLevel(_ level: Level) { av_log_set_level(level.rawValue) }
}

extension Rational {
    init(_ r: AVRational) { self.init(r.num, r.den) }
    var av: AVRational { AVRational(num: num, den: den) }
}

/// Reads the C string an FFmpeg call returns, "?" for NULL.
func cString(_ pointer: UnsafePointer<CChar>?) -> String {
    pointer.map { String(cString: $0) } ?? "?"
}
