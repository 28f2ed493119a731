import Synchronization

/// A request to stop a run early (Ctrl-C, SIGTERM, the preview's stop button). The engine finishes the
/// frames already read and closes its sinks properly.
public final class StopSignal: Sendable {
    private let stopped = Atomic<Bool>(false)
    public init() {}
    public func stop() { stopped.store(true, ordering: .releasing) }
    public var isStopped: Bool { stopped.load(ordering: .acquiring) }
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
