import Synchronization

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
