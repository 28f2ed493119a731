import CFFmpeg
import CMediaShims
import Foundation
import PrismCore

/// Why `FrameBufferPool.acquire` gave up.
public struct PoolError: PrismError {
    /// `timedOut`: no buffer came back within the timeout; `cancelled`: the pool was cancelled.
    public enum Reason: Sendable { case timedOut, cancelled }
    /// Why the wait ended.
    public let reason: Reason
    /// The pool's capacity, all of it in use when the wait timed out.
    public let capacity: Int
    public var description: String {
        switch reason {
        case .timedOut: return "frame buffer pool: no buffer came back in time (all \(capacity) in use; is the consumer stuck?)"
        case .cancelled: return "frame buffer pool: cancelled while waiting for a free buffer"
        }
    }
}

/// A fixed number of equally sized, 64-byte-aligned buffers, each holding one frame laid out per a
/// `PackedFrameLayout` (what the GPU reads back into and the encoder reads from).
///
/// Buffers are allocated lazily up to `capacity`, never more, and reused. `acquire` blocks while all are
/// in use. A buffer goes back to the pool when its last user lets go of its `PooledFrameBuffer`, including
/// when an `AVBufferRef` that wraps it (`avBufferRef()`) is freed by an encoder. Thread-safe.
public final class FrameBufferPool: Sendable {
    /// How each buffer holds a frame; fixed for the pool's life.
    public let layout: PackedFrameLayout
    /// The most buffers the pool ever allocates.
    public let capacity: Int
    /// Usable bytes per buffer: `layout.byteCount`.
    public var byteCount: Int { layout.byteCount }
    /// Bytes actually allocated per buffer: `byteCount` rounded up to 64, plus 64 bytes of padding that
    /// SIMD readers (`AV_INPUT_BUFFER_PADDING_SIZE`) may touch.
    let allocationBytes: Int

    private struct State {
        var free: [UnsafeMutableRawPointer] = []
        var allocated = 0
        var cancelled = false
    }
    private let state: Monitor<State>

    /// A pool of at most `capacity` (positive, else a precondition failure) buffers of `layout`; none allocated yet.
    public init(layout: PackedFrameLayout, capacity: Int) {
        precondition(capacity > 0, "a frame buffer pool needs a positive capacity")
        self.layout = layout
        self.capacity = capacity
        allocationBytes = (layout.byteCount + 63) / 64 * 64 + 64
        var initial = State()
        initial.free.reserveCapacity(capacity)
        state = Monitor(initial)
    }

    /// Convenience: the pool for `format` frames of `size` (nil when the GPU cannot pack that format).
    public convenience init?(format: PixelFormat, size: Size, capacity: Int) {
        guard let layout = PackedFrameLayout(format: format, size: size) else { return nil }
        self.init(layout: layout, capacity: capacity)
    }

    deinit {
        // Outstanding buffers keep the pool alive, so every buffer is free here.
        state.withLock { state in for pointer in state.free { pointer.deallocate() } }
    }

    /// Buffers allocated so far (at most `capacity`).
    public var allocatedCount: Int { state.withLock { $0.allocated } }
    /// Buffers currently handed out and not yet returned.
    public var outstandingCount: Int { state.withLock { $0.allocated - $0.free.count } }

    /// A free buffer, waiting up to `timeout` seconds (forever when nil) for one to come back.
    /// Throws `PoolError` on timeout or after `cancel()`.
    public func acquire(timeout: Double? = nil) throws(PoolError) -> PooledFrameBuffer {
        let capacity = capacity
        let pointer: UnsafeMutableRawPointer? = state.wait(
            until: { $0.cancelled || !$0.free.isEmpty || $0.allocated < capacity },
            deadline: timeout.map { Date(timeIntervalSinceNow: $0) }) { state, ready in
            guard ready, !state.cancelled else { return nil }
            return state.free.popLast() ?? allocateBuffer(&state)
        }
        guard let pointer else {
            throw PoolError(reason: state.withLock { $0.cancelled } ? .cancelled : .timedOut, capacity: capacity)
        }
        return PooledFrameBuffer(pool: self, data: pointer)
    }

    /// A free buffer if one is available now, else nil.
    public func tryAcquire() -> PooledFrameBuffer? {
        let pointer: UnsafeMutableRawPointer? = state.withLock { state in
            if state.cancelled { return nil }
            if let pointer = state.free.popLast() { return pointer }
            return state.allocated < capacity ? allocateBuffer(&state) : nil
        }
        return pointer.map { PooledFrameBuffer(pool: self, data: $0) }
    }

    /// Wakes every waiting `acquire` with `PoolError.cancelled`, and makes later ones fail too, until `reset()`.
    public func cancel() { state.withLock { $0.cancelled = true } }

    /// Undoes `cancel()`.
    public func reset() { state.withLock { $0.cancelled = false } }

    /// Called with the lock held.
    private func allocateBuffer(_ state: inout State) -> UnsafeMutableRawPointer {
        state.allocated += 1
        return UnsafeMutableRawPointer.allocate(byteCount: allocationBytes, alignment: 64)
    }

    fileprivate func giveBack(_ pointer: UnsafeMutableRawPointer) {
        state.withLock { $0.free.append(pointer) }
    }
}

/// One buffer lent by a `FrameBufferPool`. It returns to the pool when the last reference to this object
/// goes away, so whoever still needs the bytes (a sink, an encoder through `avBufferRef()`) keeps it alive.
public final class PooledFrameBuffer: @unchecked Sendable {  // one owner at a time; returns itself to its pool in deinit
    /// The pool the buffer goes back to; kept alive by every buffer it lent.
    public let pool: FrameBufferPool
    /// First byte of the frame; `layout.byteCount` bytes are usable.
    public let data: UnsafeMutableRawPointer
    /// How the frame lies in the buffer (the pool's layout).
    public var layout: PackedFrameLayout { pool.layout }

    fileprivate init(pool: FrameBufferPool, data: UnsafeMutableRawPointer) {
        self.pool = pool
        self.data = data
    }

    deinit { pool.giveBack(data) }

    /// Plane `index` of the layout: its first byte and row pitch.
    public func plane(_ index: Int) -> (base: UnsafeMutableRawPointer, rowBytes: Int) {
        let plane = layout.planes[index]
        return (data + plane.offset, plane.rowBytes)
    }

    /// A new `AVBufferRef` over this buffer's memory (`av_buffer_create` through `prism_av_buffer_wrap`)
    /// that keeps this buffer out of the pool until FFmpeg drops the last reference. Nil if FFmpeg
    /// could not allocate the reference.
    func avBufferRef() -> UnsafeMutablePointer<AVBufferRef>? {
        let retained = Unmanaged.passRetained(self)
        let ref = prism_av_buffer_wrap(data.assumingMemoryBound(to: UInt8.self), layout.byteCount, { opaque, _ in
            Unmanaged<PooledFrameBuffer>.fromOpaque(opaque!).release()
        }, retained.toOpaque())
        if ref == nil { retained.release() }
        return ref.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: AVBufferRef.self) }
    }
}
