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

/// A non-Sendable value (a decoder, a movie writer) handed from the thread that made it to the one thread
/// that uses it from then on.
///
/// `@unchecked Sendable`: the engine gives each such value one owning thread at a time (the source to
/// the source thread, a sink to its output thread) and never touches it from two threads at once.
struct ThreadOwned<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
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

/// References lent to a thread for the length of its work. A thread's closure outlives its work by a
/// moment (Foundation releases it after the thread function returns), and must never be what drops the
/// last reference to what it used: a GPU context torn down there raced the process's exit in the driver.
/// The lender ends the lease once the thread has said it is done.
final class Lease<Value: Sendable>: Sendable {
    private let lent: Locked<Value?>
    init(_ value: Value) { lent = Locked(value) }
    /// The value, while the lease lasts.
    func borrow() -> Value? { lent.withLock { $0 } }
    func end() { lent.withLock { $0 = nil } }
}
