import CSystemShims
import PrismCore
import Dispatch
import Glibc
import Synchronization

/// A dedicated thread that runs submitted jobs in order: the one thread that owns a GL context.
///
/// GL contexts are bound to one thread at a time, and every GL object must be created and destroyed
/// where its context is current. Prism gives each context its own `GPUThread`; work reaches it through
/// `sync`, which blocks the caller until the job has run (like `DispatchQueue.sync`), so the job may use
/// the caller's non-Sendable state safely.
///
/// The confinement is checked, not claimed: every GL object (`Texture`, `RenderTarget`, `ShaderProgram`,
/// …) remembers the thread it was made on (`GPUThread.current`), refuses to be used elsewhere, and when
/// its last reference goes on another thread its deletion is posted back here (`runOrDefer`). The thread
/// also counts the GL objects alive on it (`liveObjects`), so leaks show up in tests.
///
/// It is a joinable POSIX thread: `stop` waits until the thread has really ended, including the
/// thread-exit cleanup the GL driver does, so a process never exits while a driver thread is still
/// tearing down (which crashed at exit when the driver was unloaded underneath it).
package final class GPUThread: Sendable {
    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        var stopping = false
    }

    private struct Handle {
        var thread: pthread_t?
        var joined = false
    }

    package let name: String
    private let queue = Mutex(Queue())
    /// One signal per job and one for `stop`: the loop sleeps on it while the queue is empty.
    private let wakeup = DispatchSemaphore(value: 0)
    private let handle = Mutex(Handle())
    private let counts = Mutex(GPUObjectCounts())
    /// Every GL object ever made here (never goes down): what a cache hit saves.
    private let made = Mutex(GPUObjectCounts())
    private let links = Atomic<Int>(0)
    /// The context's program cache and target pool, made on first use and dropped by
    /// `releaseResources` (when the context closes). Only touched on this thread (checked in `resources`).
    nonisolated(unsafe) private var resourceSlot: GPUResources?
    /// The limits of this thread's context, read once when `GPUContext` made it (nil on a thread made otherwise).
    private let limitsSlot = Mutex<GPULimits?>(nil)

    package init(name: String) {
        self.name = name
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, 8 << 20)
        // The thread holds its GPUThread until the loop ends (so `GPUThread.current` stays valid there).
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { context in
            let gpuThread = Unmanaged<GPUThread>.fromOpaque(context!).takeRetainedValue()
            gpuThread.runLoop()
            return nil
        }, context)
        pthread_attr_destroy(&attributes)
        precondition(created == 0, "pthread_create failed (\(created))")
        handle.withLock { $0.thread = thread }
    }

    /// The GPU thread the caller is running on, nil on any other thread.
    package static var current: GPUThread? {
        pthread_getspecific(currentThreadKey).map { Unmanaged<GPUThread>.fromOpaque($0).takeUnretainedValue() }
    }

    /// True when called on this thread.
    package var isCurrent: Bool { pthread_getspecific(currentThreadKey) == Unmanaged.passUnretained(self).toOpaque() }

    /// Stops with a message naming `what` unless the caller is on this thread: the check GL objects and
    /// `GPUBound` make before anything touches GL.
    package func checkCurrent(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        precondition(isCurrent, "\(what()) used off its GPU thread (\(name)); GL work goes through GPUContext.perform",
                     file: file, line: line)
    }

    /// Runs the queued jobs, then ends the thread and waits for it. Further `sync` calls are a
    /// programming error; `runOrDefer` calls are dropped (the context and its objects are gone).
    package func stop() {
        queue.withLock { $0.stopping = true }
        wakeup.signal()
        guard !isCurrent else { return }
        let thread: pthread_t? = handle.withLock { handle in
            defer { handle.joined = true }
            return handle.joined ? nil : handle.thread
        }
        if let thread { pthread_join(thread, nil) }
    }

    /// Runs `body` on the GPU thread and returns its result; re-entrant calls from the thread itself run inline.
    package func sync<T>(_ body: () throws -> T) throws -> T {
        if isCurrent { return try body() }
        return try withoutActuallyEscaping(body) { escapable in
            let job = SyncJob(escapable)
            let done = DispatchSemaphore(value: 0)
            let accepted = enqueue {
                job.run()
                done.signal()
            }
            precondition(accepted, "\(name): job submitted after stop()")
            done.wait()
            return try job.takeResult()
        }
    }

    /// Queues `job` to run here after the jobs queued before it, without waiting (work for a thread
    /// that runs one job per frame: it runs between two frames). False, and the job dropped, once the
    /// thread is stopping.
    @discardableResult
    package func async(_ job: @escaping @Sendable () -> Void) -> Bool { enqueue(job) }

    /// The non-throwing form of `sync`.
    package func sync<T>(_ body: () -> T) -> T {
        // The closure cannot throw, so neither can this.
        try! sync { () throws -> T in body() }
    }

    /// Runs `cleanup` here: at once when called on this thread, otherwise queued without waiting (a GL
    /// object whose last reference went on another thread). Dropped when the thread has stopped: the
    /// context is destroyed by then, and with it every object in it.
    ///
    /// The caller hands over what `cleanup` captures: nothing else may use it afterwards. The work must
    /// be done by `cleanup` itself: the closure (and what it captured) may be freed on either thread.
    package func runOrDefer(_ cleanup: @escaping () -> Void) {
        if isCurrent { return cleanup() }
        let handedOver = ThreadOwned(cleanup)
        _ = enqueue { handedOver.value() }
    }

    /// Ends the caller's ownership of `value` on this thread: its last reference is dropped here (so
    /// deinits run here), at once when called on this thread, otherwise later without waiting. When the
    /// thread has stopped it is dropped where the caller is.
    package func release<Value>(_ value: consuming Value) {
        if isCurrent { return }
        let box = ReleaseBox(value)
        if !enqueue({ box.empty() }) { box.empty() }
    }

    /// GL objects alive on this thread's context, by kind.
    package var liveObjects: GPUObjectCounts { counts.withLock { $0 } }

    /// Programs linked on this thread's context so far (every glLinkProgram, failed ones too): what a
    /// cache hit saves, and what tests count.
    package var programLinks: Int { links.load(ordering: .relaxed) }

    func countLink() { links.add(1, ordering: .relaxed) }

    /// What lives as long as the context: linked programs by source and render targets by size and
    /// format, shared by every renderer on it. Only on this thread.
    package var resources: GPUResources {
        checkCurrent("GPUThread.resources")
        if let resourceSlot { return resourceSlot }
        let made = GPUResources()
        resourceSlot = made
        return made
    }

    /// Drops the cached programs and free targets (deleting what no renderer still holds). The context
    /// does it before it goes; tests do it to see every other object balanced.
    package func releaseResources() {
        checkCurrent("GPUThread.releaseResources()")
        resourceSlot?.removeAll()
        resourceSlot = nil
    }

    /// What this thread's context can allocate and run (see `GPULimits.query`); set once, by `GPUContext`.
    package internal(set) var limits: GPULimits? {
        get { limitsSlot.withLock { $0 } }
        set { limitsSlot.withLock { $0 = newValue } }
    }

    /// GL objects made on this thread's context so far, by kind (deleted ones included).
    package var madeObjects: GPUObjectCounts { made.withLock { $0 } }

    /// Bookkeeping for `liveObjects` and `madeObjects` (GL object lifetimes call it).
    func count(_ kind: GPUObjectKind, _ delta: Int) {
        counts.withLock { $0[kind] += delta }
        if delta > 0 { made.withLock { $0[kind] += delta } }
    }

    /// Appends a job; false when the thread is stopping.
    private func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = queue.withLock { queue -> Bool in
            guard !queue.stopping else { return false }
            queue.jobs.append(job)
            return true
        }
        if accepted { wakeup.signal() }
        return accepted
    }

    private func runLoop() {
        prism_set_current_thread_name(name)
        pthread_setspecific(currentThreadKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(currentThreadKey, nil) }
        while true {
            wakeup.wait()
            let next = queue.withLock { queue -> (job: (@Sendable () -> Void)?, stop: Bool) in
                if queue.jobs.isEmpty { return (nil, queue.stopping) }
                return (queue.jobs.removeFirst(), false)
            }
            if let job = next.job { job() } else if next.stop { return }
        }
    }
}

/// The thread-specific slot naming the GPU thread a thread is (set by the loop; empty elsewhere).
private let currentThreadKey: pthread_key_t = {
    var key = pthread_key_t()
    precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
    return key
}()

/// A `sync` job: the caller's closure and, once it has run, its result. The closure is dropped before
/// the caller is woken, so `withoutActuallyEscaping` never sees it outlive the call.
///
/// `@unchecked Sendable`: the submitter is blocked until `run` has finished, so the closure, what it
/// captured and the result are only ever used by one thread at a time.
private final class SyncJob<T>: @unchecked Sendable {
    private var body: (() throws -> T)?
    private var result: Result<T, Error>?

    init(_ body: @escaping () throws -> T) { self.body = body }

    func run() {
        result = Result { try body!() }
        body = nil
    }

    func takeResult() throws -> T { try result!.get() }
}

/// Holds a value on its way to the thread that drops it: the job empties it there, so the last reference
/// goes on that thread even while the sender's copy of the job is still alive. `@unchecked Sendable`: the
/// sender keeps no reference (see `GPUThread.release`), and only the receiving job empties it.
private final class ReleaseBox<Value>: @unchecked Sendable {
    private var value: Value?
    init(_ value: consuming Value) { self.value = value }
    func empty() { value = nil }
}

/// Kinds of GL objects Prism makes, for `GPUObjectCounts`.
package enum GPUObjectKind: CaseIterable, Sendable {
    case texture, framebuffer, program, vertexArray, buffer, query
}

/// How many GL objects of each kind are alive on one context (`GPUContext.liveObjects`).
package struct GPUObjectCounts: Hashable, Sendable, CustomStringConvertible {
    /// 2D and 3D textures.
    package var textures = 0
    package var framebuffers = 0
    package var programs = 0
    package var vertexArrays = 0
    /// Pixel-pack buffers.
    package var buffers = 0
    /// Timer queries.
    package var queries = 0

    package init() {}

    package subscript(kind: GPUObjectKind) -> Int {
        get {
            switch kind {
            case .texture: textures
            case .framebuffer: framebuffers
            case .program: programs
            case .vertexArray: vertexArrays
            case .buffer: buffers
            case .query: queries
            }
        }
        set {
            switch kind {
            case .texture: textures = newValue
            case .framebuffer: framebuffers = newValue
            case .program: programs = newValue
            case .vertexArray: vertexArrays = newValue
            case .buffer: buffers = newValue
            case .query: queries = newValue
            }
        }
    }

    package var total: Int { GPUObjectKind.allCases.reduce(0) { $0 + self[$1] } }

    package var description: String {
        "\(textures) textures, \(framebuffers) framebuffers, \(programs) programs, \(vertexArrays) vertex arrays, "
            + "\(buffers) buffers, \(queries) queries"
    }
}

/// Where a GL object lives: its GPU thread, which it checks before touching GL and where its deletion
/// runs. Every GL object type in PrismGPU holds one.
struct GLObjectHome: Sendable {
    let thread: GPUThread
    let kind: GPUObjectKind
    let count: Int

    /// Registers `count` objects of `kind` on the calling GPU thread; stops when called elsewhere.
    init(_ kind: GPUObjectKind, count: Int = 1, file: StaticString = #fileID, line: UInt = #line) {
        self.thread = Self.requireGPUThread(kind, file: file, line: line)
        self.kind = kind
        self.count = count
        thread.count(kind, count)
    }

    /// The caller's GPU thread; stops when the caller is on none (GL calls there would go nowhere).
    @discardableResult
    static func requireGPUThread(_ kind: GPUObjectKind, file: StaticString = #fileID, line: UInt = #line) -> GPUThread {
        guard let thread = GPUThread.current else {
            preconditionFailure("a GL \(kind) was created off a GPU thread; GL work goes through GPUContext.perform",
                                file: file, line: line)
        }
        return thread
    }

    /// Stops unless the caller is on the object's thread.
    func check(file: StaticString = #fileID, line: UInt = #line) {
        thread.checkCurrent("a GL \(kind)", file: file, line: line)
    }

    /// Deletes the object on its thread: now when there, posted there otherwise.
    func delete(_ glDelete: @escaping @Sendable () -> Void) {
        let thread = self.thread, kind = self.kind, count = self.count
        thread.runOrDefer {
            glDelete()
            thread.count(kind, -count)
        }
    }
}
