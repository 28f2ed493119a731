import CFFmpeg
import Foundation
import Synchronization

/// The deadline on a network input's or output's blocking calls: libavformat asks its interrupt callback
/// (`AVIOInterruptCB`) while it connects, waits and reads, and gives up with AVERROR_EXIT when it says so.
/// Armed with a timeout before each open and read; it also fires when the run is stopped
/// (`cancellation`), so a stop never waits for a silent network. A stalled output (a server that stopped
/// reading) fails its write at the deadline instead of hanging the run.
package final class IOWatchdog: Sendable {
    private struct State {
        var deadline: UInt64?
        /// What `arm` was given: the deadline moves this far past each moment data came (see `watch`).
        var seconds = 0.0
        var expired = false
        var cancelled = false
        var cancellation: (@Sendable () -> Bool)?
        /// The watched input's address (`watch`), and the bytes it had read when last asked.
        var input: UInt?
        var bytesRead: Int64 = 0
    }
    private let state = Mutex(State())

    /// The callback for `AVFormatContext.interrupt_callback`; `self` must outlive every context given it.
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(callback: { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<IOWatchdog>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt() ? 1 : 0
        }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }

    /// Blocking calls from now on fail after `seconds`.
    func arm(seconds: Double) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        state.withLock {
            $0.deadline = deadline
            $0.seconds = max(0, seconds)
        }
    }

    /// The input whose blocking calls this watchdog bounds (nil: none, before its context is freed). While
    /// its reads make progress the deadline moves on with them: "no data for N s", as FFmpeg's read timeouts
    /// mean, so a sender that starts late is not cut off while it is being probed. Called on the thread that
    /// opens and reads it; the callback only looks at it from inside libavformat's calls on it.
    func watch(_ input: UnsafeMutablePointer<AVFormatContext>?) {
        state.withLock {
            $0.input = input.map { UInt(bitPattern: $0) }
            $0.bytesRead = 0
        }
    }

    /// A new connection: not expired. An expired deadline stays so until then, as the input it cut short
    /// keeps failing (libavformat's I/O errors are sticky), and a later call must still say why.
    func reset() { state.withLock { $0.expired = false } }

    /// No deadline (the stop still interrupts).
    func disarm() { state.withLock { $0.deadline = nil } }

    /// An armed deadline passed while a call was blocked, since the last `reset`.
    var expired: Bool { state.withLock { $0.expired } }
    /// The run was stopped.
    var isCancelled: Bool {
        let check = state.withLock { $0.cancelled ? nil : $0.cancellation }
        if let check, check() { state.withLock { $0.cancelled = true } }
        return state.withLock { $0.cancelled }
    }

    /// Asked from the thread that opens and reads: true once the run stops.
    func setCancellation(_ check: (@Sendable () -> Bool)?) { state.withLock { $0.cancellation = check } }

    private func shouldInterrupt() -> Bool {
        if isCancelled { return true }
        return state.withLock { state in
            guard var deadline = state.deadline else { return false }
            let now = DispatchTime.now().uptimeNanoseconds
            if let address = state.input, let input = UnsafeMutablePointer<AVFormatContext>(bitPattern: address),
               let bytes = input.pointee.pb?.pointee.bytes_read, bytes > state.bytesRead {
                state.bytesRead = bytes
                deadline = max(deadline, now + UInt64(state.seconds * 1e9))
                state.deadline = deadline
            }
            if now >= deadline { state.expired = true }
            return state.expired
        }
    }
}
