/// A non-Sendable value handed from the thread that made it to the one thread that uses it from then on:
/// a decoder or a movie writer to its engine thread, a GL object's deletion to its GPU thread.
///
/// `@unchecked Sendable`: whoever wraps a value gives up using it where it was (the engine gives each
/// source and sink one owning thread at a time; `GPUThread.runOrDefer`'s caller keeps no reference), so
/// it is never used from two threads at once.
package struct ThreadOwned<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}
