import Foundation
import PrismCore

/// A blocking FIFO of fixed capacity between two engine threads.
///
/// `push` waits while the queue is full (files never drop frames) unless the queue drops the oldest
/// element instead (live sources: a late frame is worth less than the next one; drops are counted) — the
/// oldest that may be dropped, when some may not (a sink's sound packets, which a stream cannot lose: a full
/// queue of them grows, up to `growthLimit` times its capacity, rather than drop one).
/// `close` lets the consumer drain what is left; `cancel` wakes everyone and discards the rest.
package final class BoundedQueue<Element>: Sendable {
    package enum Overflow: Sendable { case block, dropOldest }

    private struct State {
        // A ring of slots (it grows only for elements that may not be dropped); a popped slot is cleared at
        // once so the queue never keeps a frame (or a pooled buffer) alive after the consumer took it.
        var slots: [Element?]
        var head = 0
        var count = 0
        var closed = false
        var cancelled = false
        var dropped = 0
        var droppedOthers = 0

        func element(at offset: Int) -> Element { slots[(head + offset) % slots.count]! }

        /// Removes the element `offset` places after the oldest; the older ones move up a slot, in order.
        mutating func remove(at offset: Int) {
            for index in stride(from: offset, to: 0, by: -1) {
                slots[(head + index) % slots.count] = slots[(head + index - 1) % slots.count]
            }
            slots[head] = nil
            head = (head + 1) % slots.count
            count -= 1
        }

        /// Twice the slots, the elements kept in order.
        mutating func grow() {
            let ordered = (0..<count).map { element(at: $0) as Element? }
            slots = ordered + Array(repeating: nil, count: slots.count * 2 - count)
            head = 0
        }
    }
    private let state: Monitor<State>
    private let capacity: Int
    private let overflow: Overflow
    private let droppable: (@Sendable (Element) -> Bool)?
    /// How many times its capacity a `.dropOldest` queue grows to when it holds nothing it may drop.
    static var growthLimit: Int { 16 }

    /// `droppable`: the elements `.dropOldest` may drop to make room (nil: any). A full queue holding none of
    /// them grows instead, and past `growthLimit` drops its oldest all the same (counted in `droppedOthers`):
    /// the producer never waits.
    package init(capacity: Int, overflow: Overflow = .block, droppable: (@Sendable (Element) -> Bool)? = nil) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.overflow = overflow
        self.droppable = droppable
        state = Monitor(State(slots: Array(repeating: nil, count: capacity)))
    }

    /// Droppable elements dropped to make room (`.dropOldest` only).
    package var dropped: Int { state.withLock { $0.dropped } }
    /// Other elements dropped because the queue held nothing droppable and could grow no more.
    package var droppedOthers: Int { state.withLock { $0.droppedOthers } }

    /// Adds `element`; returns false when the queue was cancelled or closed (the element is dropped): a
    /// producer that outlives the others (the audio capture) never blocks on a queue nobody pops.
    @discardableResult
    package func push(_ element: Element) -> Bool {
        let capacity = capacity, dropsOldest = overflow == .dropOldest, droppable = droppable
        return state.wait(until: { $0.count < capacity || $0.cancelled || $0.closed || dropsOldest }) { state, _ in
            guard !state.cancelled, !state.closed else { return false }
            if state.count >= capacity {
                if let droppable {
                    if let oldest = (0..<state.count).first(where: { droppable(state.element(at: $0)) }) {
                        state.remove(at: oldest)
                        state.dropped += 1
                    } else if state.count < state.slots.count {
                        // Grown already: room for it.
                    } else if state.slots.count < capacity * Self.growthLimit {
                        state.grow()
                    } else {
                        state.remove(at: 0)
                        state.droppedOthers += 1
                    }
                } else {
                    state.remove(at: 0)
                    state.dropped += 1
                }
            }
            state.slots[(state.head + state.count) % state.slots.count] = element
            state.count += 1
            return true
        }
    }

    /// The oldest element; nil once the queue is closed and empty, or cancelled.
    package func pop() -> Element? {
        state.wait(until: { $0.count > 0 || $0.closed || $0.cancelled }) { state, _ in
            guard !state.cancelled, state.count > 0 else { return nil }
            let element = state.element(at: 0)
            state.slots[state.head] = nil
            state.head = (state.head + 1) % state.slots.count
            state.count -= 1
            return element
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
