import Synchronization

/// Why a run ended.
public enum StopReason: String, Sendable, Codable {
    case endOfInput = "end of input"
    case frameLimit = "frame limit"
    case durationLimit = "duration limit"
    /// `--max-size`: the movie reached its size limit.
    case sizeLimit = "size limit"
    /// `--min-free`: the disk's free space fell to its limit.
    case freeSpaceLimit = "free-space limit"
    /// A signal or a request (Ctrl-C, SIGTERM, SIGHUP, the page's stop).
    case interrupted
    /// The reader of the output went away (a closed pipe).
    case outputClosed = "output closed"
}

/// A request to stop a run early (Ctrl-C, SIGTERM, a limit, the preview's stop button). The engine
/// finishes the frames already read and closes its sinks properly. The first reason given is kept.
public final class StopSignal: Sendable {
    private let reason = Mutex<StopReason?>(nil)
    public init() {}
    public func stop(_ why: StopReason = .interrupted) { reason.withLock { if $0 == nil { $0 = why } } }
    public var isStopped: Bool { reason.withLock { $0 != nil } }
    /// Why the run was stopped; nil while it was not.
    public var stopReason: StopReason? { reason.withLock { $0 } }
}

/// The first error any engine thread met; later ones are consequences of it.
final class FirstError: Sendable {
    private let first = Mutex<(any Error)?>(nil)
    func record(_ error: any Error) { first.withLock { if $0 == nil { $0 = error } } }
    var error: (any Error)? { first.withLock { $0 } }
    var hasError: Bool { error != nil }
}

/// A `Mutex` that several threads' closures can share (a `Mutex` itself cannot be copied into them).
/// Only `withLock`: no get-then-set races.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    public init(_ value: Value) { mutex = Mutex(value) }
    public func withLock<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { try body(&$0) }
    }
    /// The value, leaving `replacement` in its place.
    public func take(replacingWith replacement: Value) -> Value {
        mutex.withLock { value in
            defer { value = replacement }
            return value
        }
    }
}
