/// A value that may only be used on one GPU context's thread (GL objects, and the objects that own
/// them), checked on every access rather than promised in a comment — what swift-nio's `NIOLoopBound`
/// does for event loops.
///
/// The wrapper itself can be stored in Sendable types and passed between threads; only `value` is
/// confined. Make it on the GPU thread (inside `GPUContext.perform`) and read it there.
public struct GPUBound<Value>: @unchecked Sendable {  // the value is only reachable on its thread (checked)
    private let wrapped: Value
    public let context: GPUContext

    public init(_ value: Value, on context: GPUContext) {
        precondition(context.isCurrentThread, "GPUBound made off its GPU thread")
        wrapped = value
        self.context = context
    }

    /// The value; traps when read on any thread but the context's.
    public var value: Value {
        precondition(context.isCurrentThread, "a GPU-bound value was touched off its GPU thread")
        return wrapped
    }
}
