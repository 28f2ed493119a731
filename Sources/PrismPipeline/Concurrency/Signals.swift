import Synchronization

/// The first error any engine thread met; later ones are consequences of it.
final class FirstError: Sendable {
    private let first = Mutex<(any Error)?>(nil)
    func record(_ error: any Error) { first.withLock { if $0 == nil { $0 = error } } }
    var error: (any Error)? { first.withLock { $0 } }
    var hasError: Bool { error != nil }
}

/// A `Mutex` that several threads' closures can share (a `Mutex` itself cannot be copied into them).
/// Only `withLock`: no get-then-set races.
package final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    package init(_ value: Value) { mutex = Mutex(value) }
    package func withLock<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { try body(&$0) }
    }
    /// The value, leaving `replacement` in its place.
    package func take(replacingWith replacement: Value) -> Value {
        mutex.withLock { value in
            defer { value = replacement }
            return value
        }
    }
}
