/// A value confined to one GPU thread: the box is `Sendable` and can be stored anywhere (a pipeline, a
/// session, a closure sent to another thread), but its `value` can only be read or changed on the
/// thread it belongs to — checked on every access, as swift-nio's `NIOLoopBound` checks its event loop.
///
/// Use it for state made of GL objects (a renderer, an uploader, a readback ring):
///
/// ```swift
/// let state = try context.perform { GPUBound(GPUState(), on: context) }   // made on the GPU thread
/// try context.perform { state.value.renderer = try GraphRenderer(...) }  // used there
/// try state.withValue { $0.renderer = nil }                                // from anywhere: hops there
/// ```
///
/// When the last reference to the box goes on another thread, the value is handed to its GPU thread and
/// released there, so the GL objects inside it are deleted where their context is current.
package final class GPUBound<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `storage` is only touched on `thread` (checked in every accessor), or, in
    // deinit, handed over whole to that thread.
    package let thread: GPUThread
    private var storage: Value?

    /// Binds `value` to the GPU thread the caller is on; stops when called elsewhere.
    package init(_ value: Value, file: StaticString = #fileID, line: UInt = #line) {
        guard let thread = GPUThread.current else {
            preconditionFailure("GPUBound made off a GPU thread; make it inside GPUContext.perform", file: file, line: line)
        }
        self.thread = thread
        storage = value
    }

    /// Binds `value` to `context`'s thread; the caller must be on it.
    package convenience init(_ value: Value, on context: GPUContext, file: StaticString = #fileID, line: UInt = #line) {
        context.thread.checkCurrent("GPUBound(on:)", file: file, line: line)
        self.init(value, file: file, line: line)
    }

    /// The value; only on its GPU thread.
    package var value: Value {
        get {
            thread.checkCurrent("GPUBound<\(Value.self)>.value")
            return storage!
        }
        set {
            thread.checkCurrent("GPUBound<\(Value.self)>.value")
            storage = newValue
        }
    }

    /// Runs `body` with the value on its GPU thread (inline when already there) and returns its result.
    package func withValue<T>(_ body: (inout Value) throws -> T) throws -> T {
        try thread.sync {
            var value = storage!
            defer { storage = value }
            return try body(&value)
        }
    }

    deinit {
        // The value moves straight into `release` (no local copy that could be the last reference here).
        thread.release(storage.take())
    }
}
