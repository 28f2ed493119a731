import Foundation

/// A blocking FIFO of fixed capacity between two engine threads.
///
/// `push` waits while the queue is full (files never drop frames) unless the queue drops the oldest
/// element instead (live sources: a late frame is worth less than the next one; drops are counted).
/// `close` lets the consumer drain what is left; `cancel` wakes everyone and discards the rest.
///
/// `@unchecked Sendable`: every field is guarded by `condition`, the one blocking primitive of the engine
/// (`Mutex` cannot wait for a condition).
public final class BoundedQueue<Element>: @unchecked Sendable {
    public enum Overflow: Sendable { case block, dropOldest }

    private let condition = NSCondition()
    // A ring of slots; a popped slot is cleared at once so the queue never keeps a frame (or a pooled
    // buffer) alive after the consumer took it.
    private var slots: [Element?]
    private var head = 0
    private var count = 0
    private let capacity: Int
    private let overflow: Overflow
    private var closed = false
    private var cancelled = false
    private var droppedCount = 0

    public init(capacity: Int, overflow: Overflow = .block) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.overflow = overflow
        slots = Array(repeating: nil, count: capacity)
    }

    /// Elements dropped to make room (`.dropOldest` only).
    public var dropped: Int { condition.withLock { droppedCount } }

    /// Adds `element`; returns false when the queue was cancelled or closed (the element is dropped): a
    /// producer that outlives the others (the audio capture) never blocks on a queue nobody pops.
    @discardableResult
    public func push(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while count >= capacity && !cancelled && !closed {
            if overflow == .dropOldest {
                slots[head] = nil
                head = (head + 1) % capacity
                count -= 1
                droppedCount += 1
                break
            }
            condition.wait()
        }
        guard !cancelled, !closed else { return false }
        slots[(head + count) % capacity] = element
        count += 1
        condition.broadcast()
        return true
    }

    /// The oldest element; nil once the queue is closed and empty, or cancelled.
    public func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while count == 0 && !closed && !cancelled { condition.wait() }
        guard !cancelled, count > 0 else { return nil }
        let element = slots[head]
        slots[head] = nil
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
        return element!
    }

    /// No more pushes: the consumer gets what is left, then nil.
    public func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }

    /// Stops both sides now.
    public func cancel() {
        condition.withLock {
            cancelled = true
            slots = Array(repeating: nil, count: capacity)
            head = 0
            count = 0
            condition.broadcast()
        }
    }
}
