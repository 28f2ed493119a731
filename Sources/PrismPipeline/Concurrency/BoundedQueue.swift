import Foundation
import PrismCore

/// A blocking FIFO of fixed capacity between two engine threads.
///
/// `push` waits while the queue is full (files never drop frames) unless the queue drops the oldest
/// element instead (live sources: a late frame is worth less than the next one; drops are counted).
/// `close` lets the consumer drain what is left; `cancel` wakes everyone and discards the rest.
package final class BoundedQueue<Element>: Sendable {
    package enum Overflow: Sendable { case block, dropOldest }

    private struct State {
        // A ring of slots; a popped slot is cleared at once so the queue never keeps a frame (or a pooled
        // buffer) alive after the consumer took it.
        var slots: [Element?]
        var head = 0
        var count = 0
        var closed = false
        var cancelled = false
        var dropped = 0
    }
    private let state: Monitor<State>
    private let capacity: Int
    private let overflow: Overflow

    package init(capacity: Int, overflow: Overflow = .block) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.overflow = overflow
        state = Monitor(State(slots: Array(repeating: nil, count: capacity)))
    }

    /// Elements dropped to make room (`.dropOldest` only).
    package var dropped: Int { state.withLock { $0.dropped } }

    /// Adds `element`; returns false when the queue was cancelled or closed (the element is dropped): a
    /// producer that outlives the others (the audio capture) never blocks on a queue nobody pops.
    @discardableResult
    package func push(_ element: Element) -> Bool {
        let capacity = capacity, dropsOldest = overflow == .dropOldest
        return state.wait(until: { $0.count < capacity || $0.cancelled || $0.closed || dropsOldest }) { state, _ in
            guard !state.cancelled, !state.closed else { return false }
            if state.count >= capacity {
                state.slots[state.head] = nil
                state.head = (state.head + 1) % capacity
                state.count -= 1
                state.dropped += 1
            }
            state.slots[(state.head + state.count) % capacity] = element
            state.count += 1
            return true
        }
    }

    /// The oldest element; nil once the queue is closed and empty, or cancelled.
    package func pop() -> Element? {
        let capacity = capacity
        return state.wait(until: { $0.count > 0 || $0.closed || $0.cancelled }) { state, _ in
            guard !state.cancelled, state.count > 0 else { return nil }
            let element = state.slots[state.head]
            state.slots[state.head] = nil
            state.head = (state.head + 1) % capacity
            state.count -= 1
            return element!
        }
    }

    /// No more pushes: the consumer gets what is left, then nil.
    package func close() { state.withLock { $0.closed = true } }

    /// Stops both sides now.
    package func cancel() {
        let capacity = capacity
        state.withLock { state in
            state.cancelled = true
            state.slots = Array(repeating: nil, count: capacity)
            state.head = 0
            state.count = 0
        }
    }
}
