import Foundation

/// State that threads share and wait on: one lock, and a condition to wait on until the state changes
/// (Swift's `Mutex` cannot wait). Every access holds the lock, and every `withLock` wakes the waiters, which
/// check what they wait for again. The project's one blocking primitive: the queues and pools built on it
/// are plain `Sendable` types.
package final class Monitor<State>: @unchecked Sendable {  // `state` is only touched with `condition` held
    private let condition = NSCondition()
    private var state: State

    package init(_ state: State) { self.state = state }

    /// Runs `body` with the lock held, then wakes every waiter.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&state)
    }

    /// Waits (releasing the lock meanwhile) until `ready` holds or `deadline` passes, then runs `body` with
    /// the lock held and wakes the other waiters. `body`'s second argument: `ready` held (false: timed out).
    package func wait<Result>(until ready: (State) -> Bool, deadline: Date? = nil,
                             _ body: (inout State, _ ready: Bool) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while !ready(state) {
            if let deadline {
                if !condition.wait(until: deadline) { return try body(&state, ready(state)) }
            } else {
                condition.wait()
            }
        }
        return try body(&state, true)
    }
}
