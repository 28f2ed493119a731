import Glibc

/// A thread that runs one closure and is joined. The closure, and so everything it captured, is released
/// on the thread before its function returns, and `join` returns only after that: a detached Foundation
/// thread releases its closure a moment after its work, where it could drop the last reference to a GPU
/// context or a camera after the run had ended (a context torn down there raced the process's exit).
final class WorkerThread: Sendable {
    private final class Body {
        var run: (@Sendable () -> Void)?
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private let thread: pthread_t

    init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run?()
            body.run = nil
            return nil
        }, context)
        precondition(created == 0, "pthread_create failed (\(created))")
        self.thread = thread
    }

    /// Waits until the thread has ended; call once.
    func join() { pthread_join(thread, nil) }
}
