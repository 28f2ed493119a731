/// Every error Prism reports conforms to this, so the command line can print one line naming the
/// problem. Each domain (EGL, GL, AV, V4L2, ALSA, errno, usage) has its own error type in its module.
public protocol PrismError: Error, CustomStringConvertible, Sendable {}

/// A problem with what the user asked for: flags, filter text, file names.
public struct UsageError: PrismError {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A failing POSIX call, with the call and the system's own message.
public struct SystemError: PrismError {
    public let call: String
    public let code: Int32
    public let context: String

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
