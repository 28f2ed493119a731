import Foundation
import XCTest
@testable import PrismPipeline

final class BoundedQueueTests: XCTestCase {
    func testBlockingQueueHoldsTheProducerUntilTheConsumerTakes() {
        let queue = BoundedQueue<Int>(capacity: 2)
        XCTAssertTrue(queue.push(1))
        XCTAssertTrue(queue.push(2))
        let pushed = DispatchSemaphore(value: 0)
        let third = Locked(false)
        Thread.detachNewThread {
            queue.push(3)
            third.withLock { $0 = true }
            pushed.signal()
        }
        // The producer is held while the queue is full…
        XCTAssertEqual(pushed.wait(timeout: .now() + 0.2), .timedOut)
        XCTAssertFalse(third.withLock { $0 })
        // …and let through by one pop, in order.
        XCTAssertEqual(queue.pop(), 1)
        XCTAssertEqual(pushed.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(queue.pop(), 2)
        XCTAssertEqual(queue.pop(), 3)
        XCTAssertEqual(queue.dropped, 0)
    }

    func testDropOldestKeepsTheNewestAndCountsDrops() {
        let queue = BoundedQueue<Int>(capacity: 3, overflow: .dropOldest)
        for value in 1...10 { XCTAssertTrue(queue.push(value)) }
        XCTAssertEqual(queue.dropped, 7)
        queue.close()
        var rest: [Int] = []
        while let value = queue.pop() { rest.append(value) }
        XCTAssertEqual(rest, [8, 9, 10])
    }

    /// A sink's queue drops frames (even numbers here) to make room, never its sound (odd ones), in order;
    /// a queue holding no frame grows for the sound, and only past its growth limit drops the oldest.
    func testDropOldestDropsOnlyWhatMayBeDropped() {
        let queue = BoundedQueue<Int>(capacity: 4, overflow: .dropOldest, droppable: { $0 % 2 == 0 })
        for value in [1, 2, 3, 4, 5, 6, 7] { XCTAssertTrue(queue.push(value)) }
        XCTAssertEqual(queue.dropped, 3, "the frames 2, 4 and 6 made room")
        let sound = Array(stride(from: 9, to: 9 + 2 * 60, by: 2))  // 60 more odd numbers: 64 held, the limit
        for value in sound { XCTAssertTrue(queue.push(value)) }
        XCTAssertEqual(queue.droppedOthers, 0, "the queue grew for them")
        XCTAssertTrue(queue.push(1001))
        XCTAssertEqual(queue.droppedOthers, 1, "past 16 times its capacity the oldest, 1, went")
        queue.close()
        var rest: [Int] = []
        while let value = queue.pop() { rest.append(value) }
        XCTAssertEqual(rest, [3, 5, 7] + sound + [1001])
    }

    func testCloseDrainsThenEndsAndRefusesPushes() {
        let queue = BoundedQueue<String>(capacity: 4)
        queue.push("a")
        queue.push("b")
        queue.close()
        XCTAssertFalse(queue.push("c"), "a closed queue takes nothing more")
        XCTAssertEqual(queue.pop(), "a")
        XCTAssertEqual(queue.pop(), "b")
        XCTAssertNil(queue.pop())
    }

    func testCancelWakesABlockedProducerAndConsumer() {
        let full = BoundedQueue<Int>(capacity: 1)
        full.push(0)
        let empty = BoundedQueue<Int>(capacity: 1)
        let woke = DispatchSemaphore(value: 0)
        let results = Locked<[String]>([])
        Thread.detachNewThread {
            let accepted = full.push(1)
            results.withLock { $0.append("push \(accepted)") }
            woke.signal()
        }
        Thread.detachNewThread {
            let value = empty.pop()
            results.withLock { $0.append("pop \(value.map(String.init) ?? "nil")") }
            woke.signal()
        }
        XCTAssertEqual(woke.wait(timeout: .now() + 0.2), .timedOut, "both wait")
        full.cancel()
        empty.cancel()
        XCTAssertEqual(woke.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(woke.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(Set(results.withLock { $0 }), ["push false", "pop nil"])
        XCTAssertNil(full.pop(), "a cancelled queue gives nothing, even what it held")
    }

    func testPoppedElementsAreNotKeptAlive() {
        final class Token {}
        let queue = BoundedQueue<Token>(capacity: 2)
        weak var weakToken: Token?
        do {
            let token = Token()
            weakToken = token
            queue.push(token)
            _ = queue.pop()
        }
        XCTAssertNil(weakToken, "the queue let go of the element once it was taken")
    }
}
