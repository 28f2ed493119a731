import CShims
import Foundation

/// A dedicated thread that runs submitted jobs in order: the one thread that owns a GL context.
///
/// GL contexts are bound to one thread at a time, and every GL object must be created and destroyed
/// where its context is current. Prism gives each context its own `GPUThread`; work reaches it only
/// through `sync`, which blocks the caller until the job has run (like `DispatchQueue.sync`), so the job
/// may use the caller's non-Sendable state safely.
///
/// It is a joinable POSIX thread: `stop` waits until the thread has really ended, including the
/// thread-exit cleanup the GL driver does, so a process never exits while a driver thread is still
/// tearing down (which crashed at exit when the driver was unloaded underneath it).
public final class GPUThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var stopping = false
    private var joined = false
    private var thread = pthread_t()
    private let name: String

    public init(name: String) {
        self.name = name
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, 8 << 20)
        // The thread holds its GPUThread until the loop ends.
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, &attributes, { context in
            let gpuThread = Unmanaged<GPUThread>.fromOpaque(context!).takeRetainedValue()
            gpuThread.runLoop()
            return nil
        }, context)
        pthread_attr_destroy(&attributes)
        precondition(created == 0, "pthread_create failed (\(created))")
    }

    /// Runs the queued jobs, then ends the thread and waits for it. Further `sync` calls are a
    /// programming error.
    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        let mustJoin = !joined && !isCurrent
        if mustJoin { joined = true }
        condition.unlock()
        if mustJoin { pthread_join(thread, nil) }
    }

    /// True when called on this thread.
    public var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Runs `body` on the GPU thread and returns its result; re-entrant calls from the thread itself run inline.
    public func sync<T>(_ body: () throws -> T) throws -> T {
        if isCurrent { return try body() }
        return try withoutActuallyEscaping(body) { escapable in
            let box = ResultBox<T>()
            let job = Job(UncheckedJob { box.result = Result { try escapable() } })
            enqueue(job)
            job.waitUntilFinished()
            return try box.result!.get()
        }
    }

    /// The non-throwing form of `sync`.
    public func sync<T>(_ body: () -> T) -> T {
        // The closure cannot throw, so neither can this.
        try! sync { () throws -> T in body() }
    }

    private func enqueue(_ job: Job) {
        condition.lock()
        precondition(!stopping, "\(name): job submitted after stop()")
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func runLoop() {
        prism_set_current_thread_name(name)
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty && stopping {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.run()
        }
    }
}

/// One submitted closure. It drops the closure before signalling completion, so a caller using
/// `withoutActuallyEscaping` never sees it outlive the call.
private final class Job: @unchecked Sendable {
    private var work: UncheckedJob?
    private var finished = false
    private let condition = NSCondition()

    init(_ work: UncheckedJob) { self.work = work }

    func run() {
        work?.run()
        work = nil
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    func waitUntilFinished() {
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}

/// Carries a closure to the GPU thread while its submitter waits; safe because the submitter is blocked
/// until the job has finished, so nothing it captured is used concurrently.
private struct UncheckedJob: @unchecked Sendable {
    let run: () -> Void
}
