import Foundation
import PrismCore
import PrismPipeline
import Synchronization

/// The elements of a running session, in order: `Session.frames()` (CPU memory) or `Session.textures()` (GL
/// textures); iterate it once. The run's threads wait while the buffered elements wait for the consumer;
/// ending the iteration early (a `break`, a cancelled task) or dropping the sequence stops the run, and the
/// iteration ends with the run's error if it failed.
public final class RunSequence<Element: Sendable>: AsyncSequence, Sendable {
    let channel: RunChannel<Element>
    /// What lets an element go when the next one is asked for (a texture's hold).
    private let release: @Sendable (Element) -> Void
    /// The run's report, once the sequence has ended.
    public var report: RunReport? { channel.report }

    init(channel: RunChannel<Element>, engine: FrameEngine, release: @escaping @Sendable (Element) -> Void = { _ in }) {
        self.channel = channel
        self.release = release
        // The thread takes the only reference to the engine and lets it go before the sequence ends, so the
        // engine's teardown (its GPU context among it) is over when the consumer's loop is: a program that
        // exits right after its loop must not race the driver's teardown (heap corruption in exit handlers).
        runOnItsOwnThread(engine, named: "prism session", stop: channel.stop) { [channel] in channel.finish($0) }
    }

    deinit { channel.cancel() }

    public func makeAsyncIterator() -> Iterator { Iterator(iteration: Iteration(run: self)) }

    /// Stops the run (as a consumer that went away does); the iteration then ends.
    public func cancel() { channel.cancel() }

    /// The one iteration over the elements (the run lasts as long as it does); asking for the next element
    /// lets the current one go.
    public struct Iterator: AsyncIteratorProtocol {
        let iteration: Iteration
        var current: Element?
        public mutating func next() async throws -> Element? {
            current.map(iteration.run.release)
            current = try await iteration.next()
            return current
        }
    }

    /// Lives as long as the loop's iterator, and keeps the run: a loop left early (`break`, an error,
    /// a cancelled task) stops it, whether or not the sequence is still held.
    final class Iteration: Sendable {
        let run: RunSequence<Element>
        var channel: RunChannel<Element> { run.channel }
        init(run: RunSequence<Element>) { self.run = run }
        deinit { run.channel.cancel() }

        func next() async throws -> Element? {
            try await withTaskCancellationHandler {
                try await channel.receive()
            } onCancel: { [channel] in
                channel.cancel()
            }
        }
    }
}

/// The frames of a running session as CPU memory (`Session.frames()`).
public typealias FrameSequence = RunSequence<Frame>

/// Elements from the run's threads to the consumer: at most `slots` waiting; the sender blocks (its
/// own thread) when they are full, the receiver suspends (never blocks) when they are empty.
final class RunChannel<Element: Sendable>: Sendable {
    let stop = StopSignal()
    private struct State {
        var elements: [Element] = []
        var waiting: CheckedContinuation<Element?, any Error>?
        var end: Result<RunReport, any Error>?
        var cancelled = false
        var onCancel: [@Sendable () -> Void] = []
    }
    private let state = Mutex(State())
    private let slots: DispatchSemaphore

    init(slots: Int) { self.slots = DispatchSemaphore(value: slots) }

    var report: RunReport? { state.withLock { try? $0.end?.get() } }

    /// From a run thread; false once the consumer has gone (which stops the run).
    func send(_ element: Element) -> Bool {
        if state.withLock({ $0.cancelled }) { return false }
        slots.wait()
        let waiter: CheckedContinuation<Element?, any Error>? = state.withLock { state in
            if state.cancelled { return nil }
            if let waiter = state.waiting {
                state.waiting = nil
                return waiter
            }
            state.elements.append(element)
            return nil
        }
        if let waiter {
            slots.signal()
            waiter.resume(returning: element)
        }
        return !state.withLock { $0.cancelled }
    }

    /// Runs `handler` when the consumer goes (at once if it has): what a sender waits on must end then.
    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.onCancel.append(handler)
            return false
        }
        if now { handler() }
    }

    func finish(_ end: Result<RunReport, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, any Error>? in
            state.end = end
            defer { state.waiting = nil }
            return state.waiting
        }
        switch end {
        case .success: waiter?.resume(returning: nil)
        case .failure(let error): waiter?.resume(throwing: error)
        }
    }

    private enum Answer { case element(Element), end(Result<RunReport, any Error>), cancelled, wait }

    func receive() async throws -> Element? {
        try await withCheckedThrowingContinuation { continuation in
            let answer: Answer = state.withLock { state in
                if state.cancelled { return .cancelled }
                if !state.elements.isEmpty { return .element(state.elements.removeFirst()) }
                if let end = state.end { return .end(end) }
                state.waiting = continuation
                return .wait
            }
            switch answer {
            case .element(let element):
                slots.signal()
                continuation.resume(returning: element)
            case .end(.success), .cancelled: continuation.resume(returning: nil)
            case .end(.failure(let error)): continuation.resume(throwing: error)
            case .wait: break
            }
        }
    }

    /// The consumer went away: stop the run and wake a blocked sender and a suspended receiver.
    func cancel() {
        let (waiter, held, handlers) = state.withLock { state -> (CheckedContinuation<Element?, any Error>?, Int, [@Sendable () -> Void]) in
            guard !state.cancelled else { return (nil, -1, []) }
            state.cancelled = true
            let held = state.elements.count
            state.elements.removeAll()
            defer { state.waiting = nil; state.onCancel = [] }
            return (state.waiting, held, state.onCancel)
        }
        guard held >= 0 else { return }
        stop.stop(.outputClosed)
        // The slots the dropped elements held, and one for a sender blocked waiting for a slot.
        for _ in 0...held { slots.signal() }
        for handler in handlers { handler() }
        waiter?.resume(returning: nil)
    }
}

/// Runs `engine` on a thread named `name` that takes the only reference to it and lets it go (its GPU objects
/// with it) before handing the run's outcome to `finished`.
package func runOnItsOwnThread(_ engine: consuming FrameEngine, named name: String, stop: StopSignal,
                               finished: @escaping @Sendable (Result<RunReport, any Error>) -> Void) {
    let handover = Mutex<FrameEngine?>(engine)
    let thread = Thread {
        let outcome = runToEnd(handover.withLock { $0.take() }!, stop: stop)
        finished(outcome)
    }
    thread.name = name
    thread.start()
}

/// Runs `engine` and drops it (the caller hands over its last reference) before returning.
private func runToEnd(_ engine: consuming FrameEngine, stop: StopSignal) -> Result<RunReport, any Error> {
    let result = Result { try engine.run(stop: stop) }
    _ = consume engine
    return result
}

/// One frame of `Session.frames()`: packed as its layout says (RGBA: one plane of `layout.rowBytes` per row).
public struct Frame: Sendable {
    /// Its position in the run (0 for the first).
    public let index: Int
    /// Its presentation time on the output's time line.
    public let pts: MediaTime
    /// The pixel format, size and planes of `bytes`.
    public let layout: PackedFrameLayout
    /// `layout.byteCount` bytes: every plane at its `offset`, rows `rowBytes` apart.
    public let bytes: [UInt8]

    /// The picture's size in pixels.
    public var size: Size { layout.size }

    /// Plane `index`'s bytes (rows `rowBytes` apart, `usedRowBytes` of each in use).
    public func withPlane<Result>(_ index: Int, _ body: (UnsafeRawBufferPointer, _ rowBytes: Int) throws -> Result) rethrows -> Result {
        let plane = layout.planes[index]
        return try bytes.withUnsafeBytes { all in
            try body(UnsafeRawBufferPointer(rebasing: all[plane.offset..<(plane.offset + plane.rowBytes * plane.rows)]), plane.rowBytes)
        }
    }
}
